//! The launch plan: the host function of a compiled GPU program, run by the
//! runtime instead of compiled host code.
//!
//! After `passes::outline_kernels` (and the GPU lowering passes), the host
//! [`Function`] holds scalar arithmetic, loops, ifs and `Launch` statements;
//! its array parameters and local arrays (device temporaries) live on the
//! device. [`Plan::new`] checks once that the host code only does what the
//! plan can run and precomputes each kernel's launch (grid, block, shared
//! memory, how to pack each parameter); [`Plan::run`] interprets the host
//! body against a [`Device`].

use std::ffi::c_void;

use parpy_core::ir::eval::{self, wrap_int, Mode};
use parpy_core::ir::{
    BinOp, Block, CallArg, Callback, Expr, ExprKind, Function, MathFn, Place, Program, StmtKind,
    Type, VarId, VarKind,
};
use parpy_core::types::{f16_bits, f16_value};
use parpy_core::{ElemTy, ScalarValue};

use super::CudaError;

/// What the plan needs from a GPU (the driver's `Launcher`, or a mock).
pub trait Device {
    /// Launches kernel `kernel` (index into [`Plan::kernels`]); `params[i]`
    /// points at the value of parameter i.
    fn launch(
        &self,
        kernel: usize,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError>;
    fn alloc(&self, bytes: usize) -> Result<u64, CudaError>;
    fn free(&self, ptr: u64);
    /// Copies `data` to device address `dst` (host code setting an element
    /// of a device temporary); `data` may be reused when this returns.
    fn write(&self, dst: u64, data: &[u8]) -> Result<(), CudaError>;
    /// Copies `out.len()` bytes from device address `src` into `out`, after
    /// the work queued before it (host code reading a device temporary).
    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), CudaError>;
}

/// How one kernel parameter is passed.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum ParamKind {
    /// A device pointer (8 bytes).
    Ptr,
    /// A scalar of this type, in its C size.
    Scalar(ElemTy),
}

/// One kernel of the plan, ready to launch.
#[derive(Clone, PartialEq, Debug)]
pub struct KernelInfo {
    /// The `extern "C"` symbol in the device code.
    pub symbol: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Dynamic shared memory in bytes.
    pub shared: u32,
    pub params: Vec<ParamKind>,
    /// The thread block cluster dimensions, when its blocks form clusters
    /// (compiled into the kernel as `__cluster_dims__`: a plain launch
    /// forms them; the grid is a multiple).
    pub cluster: Option<[u32; 3]>,
}

/// The most blocks a thread block cluster has on every GPU that has
/// clusters; more (up to 16 on sm_90) is a non-portable size the kernel
/// must opt in to.
pub const PORTABLE_CLUSTER: u32 = 8;

impl KernelInfo {
    /// Blocks per cluster (1 without clusters).
    pub fn cluster_size(&self) -> u32 {
        self.cluster.map_or(1, |c| c.iter().product())
    }

    /// Its clusters are larger than every GPU allows: the kernel must opt
    /// in to a non-portable size before it is launched.
    pub fn non_portable_cluster(&self) -> bool {
        self.cluster_size() > PORTABLE_CLUSTER
    }
}

/// A host value while the plan runs.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Ptr(u64),
}

impl Value {
    fn as_i64(self) -> i64 {
        match self {
            Value::Int(v) => v,
            Value::Float(f) => f as i64,
            Value::Bool(b) => b as i64,
            Value::Ptr(p) => p as i64,
        }
    }
    fn as_f64(self) -> f64 {
        match self {
            Value::Int(v) => v as f64,
            Value::Float(f) => f,
            Value::Bool(b) => b as i64 as f64,
            Value::Ptr(p) => p as f64,
        }
    }
    fn truthy(self) -> bool {
        match self {
            Value::Int(v) => v != 0,
            Value::Float(f) => f != 0.0,
            Value::Bool(b) => b,
            Value::Ptr(p) => p != 0,
        }
    }
}

/// An argument of a callback call (`StmtKind::Callback`), as the plan
/// hands it to the caller's handler.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum CallbackValue {
    /// A view of a device array: its first element's address and its size.
    Array {
        ptr: u64,
        bytes: usize,
    },
    Scalar(Value),
}

/// Runs callback `site` with its arguments (the binding calls Python);
/// the plan has queued all work before it on the device.
pub type CallbackHandler<'a> = &'a dyn Fn(usize, &[CallbackValue]) -> Result<(), CudaError>;

/// A compiled function's host side.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The Python function's name (for messages).
    pub name: String,
    host: Function,
    kernels: Vec<KernelInfo>,
    /// Local arrays of the host function: device temporaries, with sizes.
    temporaries: Vec<(VarId, usize)>,
    /// The index checks: the record parameter (allocated, zeroed and read
    /// back by [`Plan::run`], not passed by the caller) and what each
    /// site says after `index N `.
    bounds: Option<Vec<String>>,
    /// Some kernel takes the record: it lives on the device for the call.
    /// (Checks in host code alone fail before any launch and need none.)
    device_record: bool,
    /// Why the host code is not a pure sequence of launches
    /// (`ir::visit::host_transfer`): it cannot be replayed as a CUDA graph.
    transfer: Option<&'static str>,
    /// The program's external functions: name, scalar parameter types and
    /// result type (those of `Target.Host` the host code calls).
    externals: Vec<(String, Vec<Option<ElemTy>>, Option<ElemTy>)>,
    /// Per external: its host wrapper (`parpy_host_ext_K(void **a)`: the
    /// arguments at `a[0..n]`, the result stored at `a[n]`), set by
    /// [`Plan::set_host_externals`] from the library nvcc built.
    host_fns: Vec<Option<crate::LoadedEntry>>,
}

fn unsupported(what: &str, f: &Function) -> CudaError {
    CudaError::Plan(format!(
        "the host code of `{}` {what}, which the CUDA launch plan cannot run \
         (host code may only compute scalars, loop, branch and launch kernels)",
        f.name
    ))
}

fn dim(v: i64, what: &str, k: &str) -> Result<u32, CudaError> {
    if v <= 0 || v > u32::MAX as i64 {
        return Err(CudaError::Plan(format!(
            "kernel `{k}` has an invalid {what} size {v}"
        )));
    }
    Ok(v as u32)
}

impl Plan {
    /// Builds the plan of `program`; `symbols[i]` is the device symbol of
    /// `program.kernels[i]`, `dyn_shared[i]` its dynamic shared memory (0
    /// when the kernel declares its shared arrays statically).
    pub fn new(
        program: &Program,
        symbols: &[String],
        dyn_shared: &[u32],
    ) -> Result<Plan, CudaError> {
        let host = &program.host;
        if symbols.len() != program.kernels.len() {
            return Err(CudaError::Plan(format!(
                "`{}` has {} kernels but the device code names {}",
                host.name,
                program.kernels.len(),
                symbols.len()
            )));
        }
        let mut kernels = Vec::with_capacity(program.kernels.len());
        for (i, k) in program.kernels.iter().enumerate() {
            let sym = &symbols[i];
            let l = &k.launch;
            let grid = [
                dim(l.blocks[0], "grid", sym)?,
                dim(l.blocks[1], "grid", sym)?,
                dim(l.blocks[2], "grid", sym)?,
            ];
            let block = [
                dim(l.threads[0], "block", sym)?,
                dim(l.threads[1], "block", sym)?,
                dim(l.threads[2], "block", sym)?,
            ];
            let params = k
                .func
                .params
                .iter()
                .map(|&p| match &k.func.var(p).ty {
                    Type::Array { .. } => Ok(ParamKind::Ptr),
                    Type::Scalar(e) => Ok(ParamKind::Scalar(*e)),
                    Type::Void => Err(CudaError::Plan(format!(
                        "kernel `{sym}` has a parameter of type void"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let cluster = match l.cluster_dims() {
                Some([x, y, z]) => Some([
                    dim(x, "cluster", sym)?,
                    dim(y, "cluster", sym)?,
                    dim(z, "cluster", sym)?,
                ]),
                None => None,
            };
            kernels.push(KernelInfo {
                symbol: sym.clone(),
                grid,
                block,
                shared: dyn_shared.get(i).copied().unwrap_or(0),
                params,
                cluster,
            });
        }
        check_block(&host.body, host, program)?;
        let temporaries = host
            .local_arrays()
            .filter_map(|v| match &host.var(v).ty {
                Type::Array { elem, shape } => Some((
                    v,
                    elem.size() * shape.iter().map(|&d| d.max(0) as usize).product::<usize>(),
                )),
                _ => None,
            })
            .collect();
        let bounds = program
            .bounds
            .as_ref()
            .map(|b| b.sites.iter().map(|s| s.describe()).collect::<Vec<_>>());
        let device_record = program.bounds.as_ref().is_some_and(|b| {
            let mut launched = false;
            parpy_core::ir::visit::walk_stmts(&host.body, &mut |s| {
                if let StmtKind::Launch { args, .. } = &s.kind {
                    launched |= args.contains(&b.record);
                }
            });
            launched
        });
        Ok(Plan {
            name: host.name.clone(),
            host: host.clone(),
            kernels,
            temporaries,
            bounds,
            device_record,
            transfer: parpy_core::ir::visit::host_transfer(&host.body).map(|(_, why)| why),
            externals: program
                .externals
                .iter()
                .map(|d| {
                    let params = d
                        .params
                        .iter()
                        .map(|(_, p)| match p {
                            parpy_core::signature::ExtParam::Scalar(e) => Some(*e),
                            parpy_core::signature::ExtParam::Array { .. } => None,
                        })
                        .collect();
                    (d.name.clone(), params, d.ret)
                })
                .collect(),
            host_fns: vec![],
        })
    }

    /// The externals the host code calls (their indices in the program's
    /// externals): each needs its wrapper ([`Plan::set_host_externals`]).
    pub fn host_externals(&self) -> Vec<u32> {
        let mut used = vec![];
        parpy_core::ir::visit::walk_exprs(&self.host.body, &mut |e| {
            if let ExprKind::External { ext, .. } = &e.kind {
                if !used.contains(ext) {
                    used.push(*ext);
                }
            }
            true
        });
        used.sort();
        used
    }

    /// The wrappers of the host externals, indexed as the program's
    /// externals (`None` for those the host code does not call).
    pub fn set_host_externals(&mut self, fns: Vec<Option<crate::LoadedEntry>>) {
        self.host_fns = fns;
    }

    pub fn kernels(&self) -> &[KernelInfo] {
        &self.kernels
    }

    /// Why the launches of a call cannot be replayed as a CUDA graph, or
    /// `None` when they can (the host code only computes scalars, loops,
    /// branches and launches).
    pub fn graph_blocker(&self) -> Option<&'static str> {
        self.transfer
    }

    /// Whether a device of compute capability `arch` (`major * 10 +
    /// minor`), CUDA device `ordinal`, can run the kernels: thread block
    /// clusters need 9.0 or newer. (A clear error, not a silent fallback:
    /// the user asked for clusters; `use_cuda_thread_block_clusters=False`
    /// compiles the two-kernel form.)
    pub fn check_device(&self, arch: u32, ordinal: i64) -> Result<(), CudaError> {
        match self.kernels.iter().find(|k| k.cluster.is_some()) {
            Some(k) if arch < 90 => Err(CudaError::Plan(format!(
                "`{}` uses thread block clusters (`use_cuda_thread_block_clusters=True`, kernel \
                 `{}`), which need a GPU of compute capability 9.0 or newer; cuda:{ordinal} is \
                 {}.{}: set `use_cuda_thread_block_clusters = False` for this GPU",
                self.name,
                k.symbol,
                arch / 10,
                arch % 10
            ))),
            _ => Ok(()),
        }
    }

    /// Runs the host code. `args[i]` is, for host parameter i, the device
    /// pointer of an array or the 8-byte slot of a scalar (entry ABI:
    /// `int64_t` for ints and bools, `double` for floats); the bounds
    /// record, when there are index checks, is the plan's own.
    pub fn run(&self, dev: &dyn Device, args: &[u64]) -> Result<(), CudaError> {
        self.run_calling(dev, args, &|_, _| {
            Err(CudaError::Plan(
                "this call cannot run Python callbacks".into(),
            ))
        })
    }

    /// [`Plan::run`], calling `callbacks` for the callback calls of the
    /// host code.
    pub fn run_calling(
        &self,
        dev: &dyn Device,
        args: &[u64],
        callbacks: CallbackHandler<'_>,
    ) -> Result<(), CudaError> {
        self.with_record(dev, args, &mut |all| self.run_with(dev, all, callbacks))
    }

    /// Runs the host code (with no [`Plan::graph_blocker`]) against `rec`,
    /// a device that records its launches instead of doing them (a CUDA
    /// graph's launch sequence), then calls `flush` to run them, before the
    /// bounds record is read back.
    pub fn run_recorded(
        &self,
        rec: &dyn Device,
        args: &[u64],
        flush: &mut dyn FnMut() -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        self.with_record(rec, args, &mut |all| {
            self.run_with(rec, all, &|_, _| {
                Err(CudaError::Plan(
                    "a CUDA graph cannot run Python callbacks".into(),
                ))
            })?;
            flush()
        })
    }

    /// Calls `body` with the arguments and, when there are index checks,
    /// the bounds record: allocated on `dev` and zeroed before, read back
    /// after (a failure is an `IndexOutOfBounds`), freed.
    fn with_record(
        &self,
        dev: &dyn Device,
        args: &[u64],
        body: &mut dyn FnMut(&[u64]) -> Result<(), CudaError>,
    ) -> Result<(), CudaError> {
        let Some(sites) = &self.bounds else {
            return body(args);
        };
        let mut all = args.to_vec();
        if !self.device_record {
            all.push(0);
            return body(&all);
        }
        const BYTES: usize = 8 * parpy_core::ir::RECORD_LEN;
        let rec = dev.alloc(BYTES)?;
        all.push(rec);
        let mut result = dev.write(rec, &[0u8; BYTES]).and_then(|()| body(&all));
        let mut bytes = [0u8; BYTES];
        if result.is_ok() {
            result = dev.read(rec, &mut bytes);
        }
        dev.free(rec);
        result?;
        let record: Vec<i64> = bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        match crate::bounds_error(&self.name, sites, &record) {
            Some(f) => Err(f.into()),
            None => Ok(()),
        }
    }

    fn run_with(
        &self,
        dev: &dyn Device,
        args: &[u64],
        callbacks: CallbackHandler<'_>,
    ) -> Result<(), CudaError> {
        let h = &self.host;
        if args.len() != h.params.len() {
            return Err(CudaError::Plan(format!(
                "`{}` takes {} arguments, the plan got {}",
                self.name,
                h.params.len() - self.bounds.is_some() as usize,
                args.len() - self.bounds.is_some() as usize
            )));
        }
        let mut vals = vec![Value::Int(0); h.vars.len()];
        for (&p, &a) in h.params.iter().zip(args) {
            let var = h.var(p);
            vals[p.0 as usize] = match (&var.ty, var.value) {
                (Type::Array { .. }, _) => Value::Ptr(a),
                (_, Some(v)) => scalar(v),
                (Type::Scalar(e), None) if e.is_float() => Value::Float(f64::from_bits(a)),
                (Type::Scalar(ElemTy::Bool), None) => Value::Bool(a != 0),
                (Type::Scalar(e), None) => Value::Int(wrap_int(a as i64, *e)),
                (Type::Void, None) => Value::Int(0),
            };
        }
        let mut allocated = Vec::with_capacity(self.temporaries.len());
        let mut result = Ok(());
        for &(v, bytes) in &self.temporaries {
            match dev.alloc(bytes) {
                Ok(p) => {
                    vals[v.0 as usize] = Value::Ptr(p);
                    allocated.push(p);
                }
                Err(e) => {
                    result = Err(CudaError::Plan(format!(
                        "could not allocate a device temporary of {bytes} bytes for `{}`: {e}",
                        self.name
                    )));
                    break;
                }
            }
        }
        if result.is_ok() {
            let mut ex = Exec {
                plan: self,
                dev,
                vals,
                callbacks,
            };
            result = ex.block(&h.body).map(|_| ());
        }
        for p in allocated {
            dev.free(p);
        }
        result
    }
}

fn scalar(v: ScalarValue) -> Value {
    match v {
        ScalarValue::Bool(b) => Value::Bool(b),
        ScalarValue::Int(i) => Value::Int(i),
        ScalarValue::Float(f) => Value::Float(f),
    }
}

/// Packs `v` as a kernel parameter of kind `k` into an 8-byte slot
/// (little-endian: the parameter's bytes come first).
pub fn pack(v: Value, k: ParamKind) -> u64 {
    match k {
        ParamKind::Ptr => match v {
            Value::Ptr(p) => p,
            other => other.as_i64() as u64,
        },
        ParamKind::Scalar(e) => match e {
            ElemTy::Bool => v.truthy() as u64,
            ElemTy::F64 => v.as_f64().to_bits(),
            ElemTy::F32 => (v.as_f64() as f32).to_bits() as u64,
            ElemTy::F16 => f16_bits(v.as_f64()) as u64,
            e => {
                let w = wrap_int(v.as_i64(), e) as u64;
                match e.size() {
                    1 => w & 0xff,
                    2 => w & 0xffff,
                    4 => w & 0xffff_ffff,
                    _ => w,
                }
            }
        },
    }
}

/// The value of an element of type `e` from its little-endian bytes.
pub fn unpack(bits: u64, e: ElemTy) -> Value {
    match e {
        ElemTy::Bool => Value::Bool(bits & 0xff != 0),
        ElemTy::F64 => Value::Float(f64::from_bits(bits)),
        ElemTy::F32 => Value::Float(f32::from_bits(bits as u32) as f64),
        ElemTy::F16 => Value::Float(f16_value(bits as u16)),
        ElemTy::I8 => Value::Int(bits as u8 as i8 as i64),
        ElemTy::I16 => Value::Int(bits as u16 as i16 as i64),
        ElemTy::I32 => Value::Int(bits as u32 as i32 as i64),
        ElemTy::U8 => Value::Int(bits as u8 as i64),
        ElemTy::U16 => Value::Int(bits as u16 as i64),
        ElemTy::U32 => Value::Int(bits as u32 as i64),
        _ => Value::Int(bits as i64),
    }
}

fn check_block(b: &Block, f: &Function, p: &Program) -> Result<(), CudaError> {
    for s in b {
        match &s.kind {
            StmtKind::Assign { dst, value } => {
                match dst {
                    Place::Var(v) if !f.var(*v).ty.is_array() => {}
                    Place::Var(_) => return Err(unsupported("assigns an array", f)),
                    // an element of a device temporary: one small copy
                    Place::Index { array, indices } if f.var(*array).kind == VarKind::Local => {
                        indices.iter().try_for_each(|i| check_expr(i, f))?;
                    }
                    Place::Index { array, .. } => {
                        return Err(unsupported(
                            &format!("writes to the device array `{}`", f.var(*array).name),
                            f,
                        ))
                    }
                }
                check_expr(value, f)?;
            }
            StmtKind::For(l) => {
                check_expr(&l.lo, f)?;
                check_expr(&l.hi, f)?;
                if l.par.is_some() || l.reduction.is_some() {
                    return Err(unsupported("has a parallel loop left outside a kernel", f));
                }
                check_block(&l.body, f, p)?;
            }
            StmtKind::While { cond, body } => {
                check_expr(cond, f)?;
                check_block(body, f, p)?;
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                check_expr(cond, f)?;
                check_block(then_body, f, p)?;
                check_block(else_body, f, p)?;
            }
            StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue => {}
            StmtKind::Return(Some(_)) => return Err(unsupported("returns a value", f)),
            // an `assert` (`passes::check_bounds`)
            StmtKind::Expr(
                e @ Expr {
                    kind: ExprKind::CheckIndex { .. },
                    ..
                },
            ) => check_expr(e, f)?,
            StmtKind::Expr(_) => return Err(unsupported("calls a helper function", f)),
            StmtKind::OnDevice(_) => {
                return Err(unsupported(
                    "has a `with parpy.gpu` block left outside a kernel",
                    f,
                ))
            }
            StmtKind::Barrier => return Err(unsupported("has a barrier", f)),
            StmtKind::Callback(c) => c.exprs().into_iter().try_for_each(|e| check_expr(e, f))?,
            StmtKind::Launch { kernel, args } => {
                let Some(k) = p.kernels.get(kernel.0 as usize) else {
                    return Err(unsupported("launches a kernel that does not exist", f));
                };
                if args.len() != k.func.params.len() {
                    return Err(unsupported(
                        "launches a kernel with the wrong number of arguments",
                        f,
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check_expr(e: &Expr, f: &Function) -> Result<(), CudaError> {
    match &e.kind {
        ExprKind::Bool(_) | ExprKind::Int(_) | ExprKind::Float(_) => Ok(()),
        ExprKind::Var(v) => {
            if f.var(*v).ty.is_array() {
                Err(unsupported("uses an array as a value", f))
            } else {
                Ok(())
            }
        }
        ExprKind::Index { array, indices } if f.var(*array).kind == VarKind::Local => {
            indices.iter().try_for_each(|i| check_expr(i, f))
        }
        ExprKind::Index { array, .. } => Err(unsupported(
            &format!("reads the device array `{}`", f.var(*array).name),
            f,
        )),
        ExprKind::Unary { arg, .. } | ExprKind::Convert { arg } => check_expr(arg, f),
        ExprKind::Binary { lhs, rhs, .. } => {
            check_expr(lhs, f)?;
            check_expr(rhs, f)
        }
        ExprKind::Select { cond, then, else_ } => {
            check_expr(cond, f)?;
            check_expr(then, f)?;
            check_expr(else_, f)
        }
        ExprKind::Math { args, .. } => args.iter().try_for_each(|a| check_expr(a, f)),
        ExprKind::Call { .. } => Err(unsupported("calls a helper function", f)),
        // a `Target.Host` external with scalar arguments (the core checks)
        ExprKind::External { args, .. } => parpy_core::ir::call_arg_exprs(args)
            .into_iter()
            .try_for_each(|a| check_expr(a, f)),
        ExprKind::Atomic { .. } => Err(unsupported("updates an element atomically", f)),
        ExprKind::GpuIndex(_) | ExprKind::WarpReduce { .. } | ExprKind::ClusterReduce { .. } => {
            Err(unsupported("uses a GPU thread index", f))
        }
        ExprKind::CpuThreads => Err(unsupported("uses the CPU's thread count", f)),
        ExprKind::Assert { .. } => Err(unsupported("has an `assert` left unchecked", f)),
        // a check hoisted in front of a loop nest, or an `assert` (the
        // record is not read: a failure stops the call there)
        ExprKind::CheckIndex { arg, .. } => check_expr(arg, f),
        ExprKind::Note { values, .. } => values.iter().try_for_each(|v| check_expr(v, f)),
    }
}

/// How a block of host code ended.
enum Flow {
    Next,
    Return,
    /// A `break` / `continue` of the innermost loop around the block.
    Break,
    Continue,
}

struct Exec<'a> {
    plan: &'a Plan,
    dev: &'a dyn Device,
    vals: Vec<Value>,
    callbacks: CallbackHandler<'a>,
}

fn err(plan: &Plan, msg: &str) -> CudaError {
    CudaError::Plan(format!("in the host code of `{}`: {msg}", plan.name))
}

impl Exec<'_> {
    fn block(&mut self, b: &Block) -> Result<Flow, CudaError> {
        for s in b {
            match &s.kind {
                StmtKind::Assign { dst, value } => {
                    let v = self.eval(value)?;
                    match dst {
                        Place::Var(id) => self.vals[id.0 as usize] = v,
                        Place::Index { array, indices } => self.store(*array, indices, v)?,
                    }
                }
                StmtKind::For(l) => {
                    let lo = self.eval(&l.lo)?.as_i64();
                    let hi = self.eval(&l.hi)?.as_i64();
                    let mut i = lo;
                    while (l.step > 0 && i < hi) || (l.step < 0 && i > hi) {
                        self.vals[l.var.0 as usize] = Value::Int(i);
                        match self.block(&l.body)? {
                            Flow::Return => return Ok(Flow::Return),
                            Flow::Break => break,
                            Flow::Next | Flow::Continue => {}
                        }
                        i = match i.checked_add(l.step) {
                            Some(n) => n,
                            None => break,
                        };
                    }
                }
                StmtKind::While { cond, body } => {
                    while self.eval(cond)?.truthy() {
                        match self.block(body)? {
                            Flow::Return => return Ok(Flow::Return),
                            Flow::Break => break,
                            Flow::Next | Flow::Continue => {}
                        }
                    }
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    let body = if self.eval(cond)?.truthy() {
                        then_body
                    } else {
                        else_body
                    };
                    match self.block(body)? {
                        Flow::Next => {}
                        jump => return Ok(jump),
                    }
                }
                StmtKind::Return(_) => return Ok(Flow::Return),
                StmtKind::Break => return Ok(Flow::Break),
                StmtKind::Continue => return Ok(Flow::Continue),
                StmtKind::Launch { kernel, args } => self.launch(kernel.0 as usize, args)?,
                StmtKind::Callback(c) => self.callback(c)?,
                StmtKind::Expr(
                    e @ Expr {
                        kind: ExprKind::CheckIndex { .. },
                        ..
                    },
                ) => {
                    self.eval(e)?;
                }
                StmtKind::Expr(_) | StmtKind::OnDevice(_) | StmtKind::Barrier => {
                    return Err(err(self.plan, "unsupported statement"))
                }
            }
        }
        Ok(Flow::Next)
    }

    /// The device address and element type of `array[indices]` (a device
    /// temporary).
    fn element(&self, array: VarId, indices: &[Expr]) -> Result<(u64, ElemTy), CudaError> {
        let var = self.plan.host.var(array);
        let Type::Array { elem, shape } = &var.ty else {
            return Err(err(self.plan, "indexing a scalar"));
        };
        let mut flat: i64 = 0;
        for (i, d) in indices.iter().zip(shape) {
            let i = self.eval(i)?.as_i64();
            let i = if i < 0 { i + d } else { i };
            if i < 0 || i >= *d {
                return Err(err(
                    self.plan,
                    &format!("index out of bounds for the temporary `{}`", var.name),
                ));
            }
            flat = flat * d + i;
        }
        let Value::Ptr(base) = self.vals[array.0 as usize] else {
            return Err(err(self.plan, "a temporary without device memory"));
        };
        Ok((base + flat as u64 * elem.size() as u64, *elem))
    }

    /// `array[indices] = v` for a device temporary.
    fn store(&mut self, array: VarId, indices: &[Expr], v: Value) -> Result<(), CudaError> {
        let (addr, elem) = self.element(array, indices)?;
        let bytes = pack(v, ParamKind::Scalar(elem)).to_le_bytes();
        self.dev.write(addr, &bytes[..elem.size()])
    }

    /// `array[indices]` of a device temporary, read back to the host.
    fn load(&self, array: VarId, indices: &[Expr]) -> Result<Value, CudaError> {
        let (addr, elem) = self.element(array, indices)?;
        let mut b = [0u8; 8];
        self.dev.read(addr, &mut b[..elem.size()])?;
        Ok(unpack(u64::from_le_bytes(b), elem))
    }

    /// A callback call: each array argument as the address and size of its
    /// view, each scalar evaluated.
    /// A call of the `Target.Host` external `ext` from host code: its
    /// wrapper gets each argument as its C type and stores the result.
    fn host_external(&self, ext: usize, args: &[CallArg]) -> Result<Value, CudaError> {
        let (name, params, ret) = &self.plan.externals[ext];
        let Some(Some(f)) = self.plan.host_fns.get(ext) else {
            return Err(CudaError::Plan(format!(
                "the host external function `{name}` of `{}` was not loaded",
                self.plan.name
            )));
        };
        let mut slots = Vec::with_capacity(params.len() + 1);
        for (a, p) in args.iter().zip(params) {
            let (CallArg::Scalar(e), Some(t)) = (a, p) else {
                return Err(CudaError::Plan(format!(
                    "the host external function `{name}` takes an array on the Cuda backend"
                )));
            };
            // (little-endian: the C value's bytes first)
            slots.push(pack(convert(self.eval(e)?, *t), ParamKind::Scalar(*t)));
        }
        slots.push(0u64);
        let mut ptrs: Vec<*mut std::ffi::c_void> =
            slots.iter_mut().map(|s| (s as *mut u64).cast()).collect();
        f.call(&mut ptrs)
            .map_err(|e| CudaError::Plan(format!("the host external function `{name}`: {e}")))?;
        Ok(match ret {
            Some(t) => unpack(slots[params.len()], *t),
            None => Value::Int(0),
        })
    }

    fn callback(&mut self, c: &Callback) -> Result<(), CudaError> {
        let mut vals = Vec::with_capacity(c.args.len());
        for a in &c.args {
            vals.push(match a {
                CallArg::Array { array, prefix } => {
                    let var = self.plan.host.var(*array);
                    let Type::Array { elem, shape } = &var.ty else {
                        return Err(err(self.plan, "a callback view of a scalar"));
                    };
                    let Value::Ptr(base) = self.vals[array.0 as usize] else {
                        return Err(err(self.plan, "a callback array without device memory"));
                    };
                    let mut flat: i64 = 0;
                    for (i, d) in prefix.iter().zip(shape) {
                        let i = self.eval(i)?.as_i64();
                        if i < 0 || i >= *d {
                            return Err(CudaError::IndexOutOfBounds(format!(
                                "index {i} is out of bounds for axis of size {d} of `{}` \
                                 passed to the callback `{}`",
                                var.name, c.name
                            )));
                        }
                        flat = flat * d + i;
                    }
                    let rest: i64 = shape[prefix.len()..].iter().product();
                    let size = elem.size() as u64;
                    CallbackValue::Array {
                        ptr: base + flat as u64 * rest as u64 * size,
                        bytes: (rest as u64 * size) as usize,
                    }
                }
                CallArg::Scalar(e) => CallbackValue::Scalar(self.eval(e)?),
            });
        }
        (self.callbacks)(c.site, &vals)
    }

    fn launch(&mut self, k: usize, args: &[VarId]) -> Result<(), CudaError> {
        let info = &self.plan.kernels[k];
        let mut slots = [0u64; 32];
        let mut heap_slots;
        let slots: &mut [u64] = if args.len() <= slots.len() {
            &mut slots[..args.len()]
        } else {
            heap_slots = vec![0u64; args.len()];
            &mut heap_slots
        };
        for ((slot, a), kind) in slots.iter_mut().zip(args).zip(&info.params) {
            *slot = pack(self.vals[a.0 as usize], *kind);
        }
        let mut ptrs: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| s as *mut u64 as *mut c_void)
            .collect();
        self.dev
            .launch(k, info.grid, info.block, info.shared, &mut ptrs)
            .map_err(|e| {
                CudaError::Plan(format!(
                    "launching kernel `{}` of `{}` failed: {e}",
                    info.symbol, self.plan.name
                ))
            })
    }

    fn eval(&self, e: &Expr) -> Result<Value, CudaError> {
        let elem = e.ty.elem().unwrap_or(ElemTy::I64);
        Ok(match &e.kind {
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Int(i) => Value::Int(*i),
            ExprKind::Float(f) => Value::Float(*f),
            ExprKind::Var(v) => {
                let var = self.plan.host.var(*v);
                match var.value {
                    Some(c) => scalar(c),
                    None => self.vals[v.0 as usize],
                }
            }
            ExprKind::Unary { op, arg } => {
                let a = of_kind(self.eval(arg)?, elem);
                let r = eval::unary(*op, a, Mode::Target)
                    .map_err(|e| err(self.plan, &e.to_string()))?;
                convert(scalar(r), elem)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                if *op == BinOp::And {
                    return Ok(Value::Bool(
                        self.eval(lhs)?.truthy() && self.eval(rhs)?.truthy(),
                    ));
                }
                if *op == BinOp::Or {
                    return Ok(Value::Bool(
                        self.eval(lhs)?.truthy() || self.eval(rhs)?.truthy(),
                    ));
                }
                let a = self.eval(lhs)?;
                let b = self.eval(rhs)?;
                self.binary(*op, a, b, lhs.ty.elem().unwrap_or(elem), elem)?
            }
            ExprKind::Index { array, indices } => self.load(*array, indices)?,
            ExprKind::Select { cond, then, else_ } => {
                if self.eval(cond)?.truthy() {
                    self.eval(then)?
                } else {
                    self.eval(else_)?
                }
            }
            ExprKind::Convert { arg } => convert(self.eval(arg)?, elem),
            ExprKind::External { ext, args } => self.host_external(*ext as usize, args)?,
            // an assertion failed in host code: stop, naming its values
            ExprKind::Note { site, values, .. } => {
                let mut record = vec![*site as i64 + 1, 1];
                for v in values {
                    let x = self.eval(v)?;
                    record.push(match v.elem().is_float() {
                        true => x.as_f64().to_bits() as i64,
                        false => x.as_i64(),
                    });
                }
                let sites = self.plan.bounds.as_deref().unwrap_or_default();
                return Err(crate::bounds_error(&self.plan.name, sites, &record)
                    .map_or(CudaError::IndexOutOfBounds(String::new()), CudaError::from));
            }
            ExprKind::CheckIndex {
                arg,
                size,
                site,
                record,
                wrap,
            } => {
                let i = self.eval(arg)?.as_i64();
                let w = if *wrap && i < 0 { i + size } else { i };
                if (0..*size).contains(&w) || record.is_none() {
                    Value::Int(w)
                } else {
                    // on the host: stop before launching anything more
                    let sites = self.plan.bounds.as_deref().unwrap_or_default();
                    return Err(crate::bounds_error(
                        &self.plan.name,
                        sites,
                        &[*site as i64 + 1, i],
                    )
                    .map_or(CudaError::IndexOutOfBounds(String::new()), CudaError::from));
                }
            }
            ExprKind::Math { func, args } => {
                let a = self.eval(&args[0])?;
                if *func == MathFn::Abs && !elem.is_float() {
                    return Ok(Value::Int(wrap_int(a.as_i64().wrapping_abs(), elem)));
                }
                if matches!(func, MathFn::Gcd | MathFn::Lcm) {
                    let b = self.eval(&args[1])?.as_i64();
                    let r = eval::gcd_lcm(*func == MathFn::Lcm, a.as_i64(), b, elem);
                    return Ok(Value::Int(r));
                }
                let x = a.as_f64();
                let y = match args.get(1) {
                    Some(b) => self.eval(b)?.as_f64(),
                    None => 0.0,
                };
                if func.is_predicate() {
                    let b = match func {
                        MathFn::IsNan => x.is_nan(),
                        MathFn::IsInf => x.is_infinite(),
                        _ => x.is_finite(),
                    };
                    return Ok(Value::Bool(b));
                }
                let r = match func {
                    MathFn::Sqrt => x.sqrt(),
                    MathFn::Exp => x.exp(),
                    MathFn::Log => x.ln(),
                    MathFn::Sin => x.sin(),
                    MathFn::Cos => x.cos(),
                    MathFn::Tan => x.tan(),
                    MathFn::Tanh => x.tanh(),
                    MathFn::Abs => x.abs(),
                    MathFn::Atan2 => x.atan2(y),
                    MathFn::Floor => x.floor(),
                    MathFn::Ceil => x.ceil(),
                    MathFn::Pow => x.powf(y),
                    MathFn::Expm1 => x.exp_m1(),
                    MathFn::Log1p => x.ln_1p(),
                    MathFn::Hypot => x.hypot(y),
                    MathFn::Copysign => x.copysign(y),
                    MathFn::Fmod => x % y,
                    MathFn::Cbrt => x.cbrt(),
                    MathFn::Round => x.round_ties_even(),
                    MathFn::Log10 => x.log10(),
                    MathFn::Log2 => x.log2(),
                    MathFn::Exp2 => x.exp2(),
                    MathFn::Asin => x.asin(),
                    MathFn::Acos => x.acos(),
                    MathFn::Atan => x.atan(),
                    MathFn::Sinh => x.sinh(),
                    MathFn::Cosh => x.cosh(),
                    MathFn::Asinh => x.asinh(),
                    MathFn::Acosh => x.acosh(),
                    MathFn::Atanh => x.atanh(),
                    MathFn::Trunc => x.trunc(),
                    // NumPy's: +0 for a zero of either sign, NaN stays NaN
                    MathFn::Sign if x > 0.0 => 1.0,
                    MathFn::Sign if x < 0.0 => -1.0,
                    MathFn::Sign if x == 0.0 => 0.0,
                    MathFn::Sign => x,
                    MathFn::Erf
                    | MathFn::Erfc
                    | MathFn::IsNan
                    | MathFn::IsInf
                    | MathFn::IsFinite => return Err(err(self.plan, "`erf`/`erfc` in host code")),
                    MathFn::Ldexp => eval::ldexp(x, y as i64),
                    MathFn::NextAfter => eval::next_after(x, y, elem),
                    MathFn::Remainder => eval::ieee_remainder(x, y),
                    // (of integers, above)
                    MathFn::Gcd | MathFn::Lcm => {
                        return Err(err(self.plan, "`gcd`/`lcm` of floats"))
                    }
                };
                convert(Value::Float(r), elem)
            }
            _ => return Err(err(self.plan, "unsupported expression")),
        })
    }

    /// `a op b` on operands of type `operand` giving an `elem`: the values
    /// take the kind the types say (floats where either is a float or for
    /// `/`, bools for a bool result, else integers) and `ir::eval` computes
    /// what the generated code would.
    fn binary(
        &self,
        op: BinOp,
        a: Value,
        b: Value,
        operand: ElemTy,
        elem: ElemTy,
    ) -> Result<Value, CudaError> {
        let float =
            operand.is_float() || matches!(a, Value::Float(_)) || matches!(b, Value::Float(_));
        let kind = if op.is_comparison() {
            if float {
                ElemTy::F64
            } else {
                ElemTy::I64
            }
        } else if elem == ElemTy::Bool {
            ElemTy::Bool
        } else if elem.is_float() || op == BinOp::Div {
            ElemTy::F64
        } else {
            ElemTy::I64
        };
        let r = eval::binary(op, of_kind(a, kind), of_kind(b, kind), Mode::Target)
            .map_err(|e| err(self.plan, &e.to_string()))?;
        Ok(if op.is_comparison() {
            scalar(r)
        } else {
            convert(scalar(r), elem)
        })
    }
}

/// `v` as a scalar of the kind of `e` (bool, integer or float).
fn of_kind(v: Value, e: ElemTy) -> ScalarValue {
    if e == ElemTy::Bool {
        ScalarValue::Bool(v.truthy())
    } else if e.is_float() {
        ScalarValue::Float(v.as_f64())
    } else {
        ScalarValue::Int(v.as_i64())
    }
}

/// `v` converted to `e` as a C cast does (wrapped, rounded).
fn convert(v: Value, e: ElemTy) -> Value {
    let v = match v {
        Value::Ptr(p) => ScalarValue::Int(p as i64),
        Value::Bool(b) => ScalarValue::Bool(b),
        Value::Int(i) => ScalarValue::Int(i),
        Value::Float(f) => ScalarValue::Float(f),
    };
    // a cast to the target's type never fails
    scalar(eval::convert(v, e, Mode::Target).unwrap_or(v))
}

#[cfg(test)]
mod tests;
