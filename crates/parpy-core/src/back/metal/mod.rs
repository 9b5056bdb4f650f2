//! The Metal Shading Language dialect of the C-family writer (code
//! generation only: execution on macOS is not part of parpy yet).
//!
//! The printed file has two parts:
//!
//! - **Device code** (MSL, what the Metal compiler would build): one
//!   `[[kernel]]` function per kernel of the final IR. Array parameters are
//!   buffers bound by index (`device float *y [[buffer(1)]]`, `const device`
//!   when the kernel only reads them); the scalar parameters of a kernel are
//!   fields of one struct passed in a `constant` buffer after the arrays
//!   (`constant parpy_params_K &parpy_params [[buffer(n)]]`) and copied into
//!   locals of the same names at the start of the body. Grid positions come
//!   from attributed parameters (`[[threadgroup_position_in_grid]]`,
//!   `[[thread_position_in_threadgroup]]`, ...), declared only when used.
//!   SIMD-group reductions are `simd_sum`/`simd_product`/`simd_max`/
//!   `simd_min`, block-shared arrays are `threadgroup` arrays, barriers are
//!   `threadgroup_barrier(mem_flags::mem_threadgroup)`, math is `metal::`.
//! - **Host side** (between `#if 0` and `#endif`, never compiled): the host
//!   function as Objective-C++ pseudo-code over the Metal API, showing for
//!   each dispatch the grid and threadgroup sizes and the buffer order, with
//!   the host loops and conditions around the dispatches. The launch plan
//!   itself is the final `ir::Program`, the same structure CUDA uses;
//!   [`plan`] adds what is Metal's own: the buffer index of each array and
//!   the layout of each kernel's parameter struct (also asserted with a
//!   `static_assert` in the device code).
//!
//! `CompileOutput::device_code` is the device part alone (the Metal library
//! source). Python ints and floats are 32-bit on Metal unless
//! `force_int_size` / `force_float_size` say otherwise.
//!
//! Metal has no 64-bit floats; [`check`] rejects them (and CUDA-only
//! features) with diagnostics before anything is written.

pub mod check;
pub mod plan;

use std::collections::BTreeSet;
use std::fmt::Write;

use super::c_writer::{self, Dialect, EntryParam, FnRole};
use super::EmitOutput;
use crate::back::error::EmitError;
use crate::error::CompileError;
use crate::ir::visit::walk_exprs;
use crate::ir::{
    AtomicOp, ExprKind, Function, GpuIndex, Kernel, LaunchInfo, MathFn, Program, ReduceOp,
};
use crate::options::Options;
use crate::types::ElemTy;

pub struct MetalDialect;

pub fn emit(p: &Program, options: &Options) -> Result<EmitOutput, CompileError> {
    let errors = check::check(p, options);
    if !errors.is_empty() {
        return Err(CompileError::User(errors));
    }
    // The device unit alone is the Metal library source a runtime would
    // compile (MTLDevice newLibraryWithSource:); the file adds the header
    // lines and the host part.
    Ok(c_writer::write_parts(&MetalDialect, p, options)?.into_output(true))
}

/// The attributed kernel parameter that gives a grid position.
fn grid_param(g: GpuIndex) -> (&'static str, &'static str, &'static str) {
    // (type, name, attribute)
    match g {
        GpuIndex::Thread(_) => ("uint3", "parpy_thread", "thread_position_in_threadgroup"),
        GpuIndex::Block(_) => ("uint3", "parpy_block", "threadgroup_position_in_grid"),
        GpuIndex::BlockDim(_) => ("uint3", "parpy_block_dim", "threads_per_threadgroup"),
        GpuIndex::GridDim(_) => ("uint3", "parpy_grid_dim", "threadgroups_per_grid"),
        GpuIndex::Lane => ("uint", "parpy_lane", "thread_index_in_simdgroup"),
        GpuIndex::Warp => ("uint", "parpy_simd_group", "simdgroup_index_in_threadgroup"),
    }
}

/// Order of the attributed parameters in a signature.
fn grid_param_rank(g: GpuIndex) -> u8 {
    match g {
        GpuIndex::Block(_) => 0,
        GpuIndex::Thread(_) => 1,
        GpuIndex::BlockDim(_) => 2,
        GpuIndex::GridDim(_) => 3,
        GpuIndex::Lane => 4,
        GpuIndex::Warp => 5,
    }
}

/// The name of the struct holding a kernel's scalar parameters.
pub fn params_struct(kernel: &str) -> String {
    format!("parpy_params_{kernel}")
}

/// How one kernel parameter is passed.
#[derive(Clone, Debug, PartialEq)]
pub enum Binding {
    /// `[[buffer(index)]]`.
    Buffer { index: usize, written: bool },
    /// A field of the constant parameter struct.
    Field,
}

/// The bindings of a kernel's parameters, in parameter order, and the
/// buffer index of the parameter struct (when there are scalars).
pub fn bindings(f: &Function, written: &BTreeSet<usize>) -> (Vec<Binding>, Option<usize>) {
    let mut next = 0;
    let mut out = vec![];
    for (i, &v) in f.params.iter().enumerate() {
        if f.var(v).ty.is_array() {
            out.push(Binding::Buffer {
                index: next,
                written: written.contains(&i),
            });
            next += 1;
        } else {
            out.push(Binding::Field);
        }
    }
    let has_fields = out.contains(&Binding::Field);
    (out, has_fields.then_some(next))
}

/// The grid positions a kernel reads, in signature order.
fn grid_uses(f: &Function) -> Vec<GpuIndex> {
    let mut found: BTreeSet<(u8, &'static str)> = BTreeSet::new();
    let mut reps: Vec<GpuIndex> = vec![];
    let mut all = vec![];
    walk_exprs(&f.body, &mut |e| {
        if let ExprKind::GpuIndex(g) = e.kind {
            all.push(g);
        }
        true
    });
    for g in all {
        if found.insert((grid_param_rank(g), grid_param(g).1)) {
            reps.push(g);
        }
    }
    reps.sort_by_key(|g| grid_param_rank(*g));
    reps
}

fn size3(v: [i64; 3]) -> String {
    format!("MTLSizeMake({}, {}, {})", v[0], v[1], v[2])
}

impl Dialect for MetalDialect {
    fn target_name(&self) -> &'static str {
        "Metal Shading Language"
    }

    fn includes(&self) -> String {
        "#include <metal_stdlib>\nusing namespace metal;\n".into()
    }

    /// Metal's atomic types: `atomic_fetch_{add,max,min}_explicit` on
    /// `int` and `uint`, `atomic_fetch_add_explicit` on `float` (MSL 3);
    /// float `max`/`min` as a compare-exchange loop on the bits.
    fn atomic_update(
        &self,
        op: AtomicOp,
        e: ElemTy,
        ty: &str,
        place: &str,
        v: &str,
    ) -> Result<String, EmitError> {
        let atomic = match e {
            ElemTy::I32 => "atomic_int",
            ElemTy::U32 => "atomic_uint",
            ElemTy::F32 => "atomic_float",
            _ => {
                return Err(c_writer::atomic_unsupported(op, e, "Metal"));
            }
        };
        if op == AtomicOp::Add || !e.is_float() {
            return Ok(format!(
                "atomic_fetch_{}_explicit((device {atomic} *)&{place}, {v}, memory_order_relaxed);",
                op.name()
            ));
        }
        let new = c_writer::atomic_combine(op, e, ty, "parpy_a", "parpy_v");
        Ok(format!(
            "{{\n  device atomic_uint *parpy_p = (device atomic_uint *)&{place};\n  {ty} parpy_v = {v};\n  uint32_t parpy_old = atomic_load_explicit(parpy_p, memory_order_relaxed);\n  {ty} parpy_a;\n  do {{\n    parpy_a = as_type<{ty}>(parpy_old);\n  }} while (!atomic_compare_exchange_weak_explicit(parpy_p, &parpy_old, as_type<uint32_t>({new}), memory_order_relaxed, memory_order_relaxed));\n}}"
        ))
    }

    /// The fixed-width names (`int32_t`, `uint8_t`: MSL has them, and the C
    /// and CUDA output uses them too), `half` and `float`; `double` is only
    /// ever reached by the host pseudo-code (`check` rejects float64 on the
    /// device before writing).
    fn scalar_type(&self, e: ElemTy) -> Result<&'static str, EmitError> {
        Ok(c_writer::stdint_type(e).unwrap_or("half"))
    }

    fn math_name(&self, f: MathFn, e: ElemTy) -> Result<String, EmitError> {
        if check::lacks(f) {
            // `check::check` reports these as user errors first.
            return Err(EmitError::Unsupported(format!(
                "`{}` is not in the Metal standard library",
                f.name()
            )));
        }
        let base = match f {
            MathFn::Round => "rint",
            _ => f.name(),
        };
        match e {
            ElemTy::F32 | ElemTy::F16 => Ok(format!("metal::{base}")),
            // Host pseudo-code only (see `scalar_type`).
            ElemTy::F64 => Ok(base.to_string()),
            other => Err(EmitError::Unsupported(format!(
                "`{base}` on {} is not supported by the Metal backend",
                other.short_name()
            ))),
        }
    }

    fn prelude_qualifier(&self) -> &'static str {
        "static inline"
    }

    fn signed_overflow_wraps(&self) -> bool {
        false
    }

    /// (Metal's functions are inlined: its compiler has no calls to keep)
    fn cold_qualifier(&self) -> &'static str {
        "static inline"
    }

    fn has_double(&self) -> bool {
        false
    }

    fn param(&self, role: FnRole, ty: &str, name: &str, array: bool, written: bool) -> String {
        match (role, array) {
            (_, false) => format!("{ty} {name}"),
            (FnRole::Host, true) => format!("id<MTLBuffer> {name}"),
            (_, true) if written => format!("device {ty} *{name}"),
            (_, true) => format!("const device {ty} *{name}"),
        }
    }

    fn signature(
        &self,
        role: FnRole,
        ret: &str,
        name: &str,
        params: &[String],
        _launch: Option<&LaunchInfo>,
    ) -> String {
        let list = params.join(", ");
        match role {
            FnRole::Kernel => format!("[[kernel]] void {name}({list})"),
            FnRole::Helper => format!("static {ret} {name}({list})"),
            FnRole::Host => format!("{}{ret} {name}({list})", host_intro()),
        }
    }

    fn launch(&self, kernel: &str, args: &[String], launch: &LaunchInfo) -> String {
        // Only reached without the kernel's IR; `launch_kernel` is the path
        // the writer takes.
        format!(
            "// dispatch {kernel}({}): {} threadgroups of {} threads",
            args.join(", "),
            size3(launch.blocks),
            size3(launch.threads)
        )
    }

    fn entry(&self, symbol: &str, host: &str, _params: &[EntryParam]) -> String {
        format!(
            "// The uniform entry point `{symbol}` would unpack its arguments and call \
             `{host}`;\n// it exists only where a Metal runtime runs the code (not yet).\n\
             #endif // host side\n"
        )
    }

    fn int_literal(&self, v: i64, ty: ElemTy) -> String {
        // Metal has no INT64_C / INT32_MIN macros: plain C++ literals.
        match ty {
            ElemTy::I64 if v == i64::MIN => "(-9223372036854775807L - 1)".into(),
            ElemTy::I64 if i32::try_from(v).is_err() => format!("{v}L"),
            ElemTy::I32 if v == i32::MIN as i64 => "(-2147483647 - 1)".into(),
            ElemTy::U64 => format!("{}UL", v as u64),
            ElemTy::U32 => format!("{}u", v as u32),
            _ => v.to_string(),
        }
    }

    fn gpu_index(&self, g: GpuIndex) -> Result<String, EmitError> {
        let (_, name, _) = grid_param(g);
        Ok(match g {
            GpuIndex::Thread(a)
            | GpuIndex::Block(a)
            | GpuIndex::BlockDim(a)
            | GpuIndex::GridDim(a) => format!("(int64_t){name}.{}", a.name()),
            GpuIndex::Lane | GpuIndex::Warp => format!("(int64_t){name}"),
        })
    }

    fn gpu_index_as(&self, g: GpuIndex, to: ElemTy) -> Result<Option<String>, EmitError> {
        if !to.is_int() {
            return Ok(None);
        }
        let ty = self.scalar_type(to)?;
        let (_, name, _) = grid_param(g);
        Ok(Some(match g {
            GpuIndex::Thread(a)
            | GpuIndex::Block(a)
            | GpuIndex::BlockDim(a)
            | GpuIndex::GridDim(a) => format!("({ty}){name}.{}", a.name()),
            GpuIndex::Lane | GpuIndex::Warp => format!("({ty}){name}"),
        }))
    }

    fn barrier(&self) -> Result<String, EmitError> {
        Ok("threadgroup_barrier(mem_flags::mem_threadgroup);".into())
    }

    /// `simd_sum` & co. on the types they take (16- and 32-bit numbers);
    /// float max and min, and the other types (64-bit and 8-bit integers,
    /// bools), through a butterfly helper ([`Self::warp_reduce_helper`]).
    fn warp_reduce(&self, op: ReduceOp, e: ElemTy, arg: &str) -> Result<String, EmitError> {
        if e == ElemTy::F64 {
            return Err("a SIMD-group reduction over f64 (rejected by the Metal checks)".into());
        }
        let f = match op {
            _ if !simd_native(e) => {
                return Ok(format!("{}({arg})", c_writer::warp_helper_name(op, e)))
            }
            ReduceOp::Sum => "simd_sum",
            ReduceOp::Prod => "simd_product",
            // Metal does not say what `simd_max` makes of a NaN: float
            // max and min shuffle with NumPy's rule (the helper below)
            ReduceOp::Max | ReduceOp::Min if e.is_float() => {
                return Ok(format!("{}({arg})", c_writer::warp_helper_name(op, e)))
            }
            ReduceOp::Max => "simd_max",
            ReduceOp::Min => "simd_min",
        };
        Ok(format!("{f}({arg})"))
    }

    /// A butterfly of `simd_shuffle_xor` exchanges where `simd_*` does not
    /// serve: float max and min (NumPy's NaN rule), and the types the
    /// SIMD-group functions do not take, exchanged as 16- or 32-bit values:
    /// a 64-bit integer as its two 32-bit halves (int64 sums and products
    /// wrap as NumPy's, through `uint64_t`), an 8-bit integer or a bool
    /// widened to 16 bits.
    fn warp_reduce_helper(&self, op: ReduceOp, e: ElemTy) -> Result<Option<String>, EmitError> {
        let float_max_min = e.is_float() && matches!(op, ReduceOp::Max | ReduceOp::Min);
        if simd_native(e) && !float_max_min {
            return Ok(None);
        }
        let ty = self.scalar_type(e)?;
        let shuffle = match e {
            ElemTy::I64 | ElemTy::U64 => format!(
                "({ty})(((uint64_t)simd_shuffle_xor((uint)((uint64_t)v >> 32), k) << 32) | (uint64_t)simd_shuffle_xor((uint)v, k))"
            ),
            ElemTy::I8 => format!("({ty})simd_shuffle_xor((short)v, k)"),
            ElemTy::U8 => format!("({ty})simd_shuffle_xor((ushort)v, k)"),
            ElemTy::Bool => "simd_shuffle_xor((ushort)v, k) != 0".to_string(),
            _ => "simd_shuffle_xor(v, k)".to_string(),
        };
        let wrap = c_writer::wrapping_twin(self, e)
            .map(|u| self.scalar_type(u))
            .transpose()?;
        Ok(Some(c_writer::butterfly_helper(
            "static inline",
            ty,
            op,
            e,
            "ushort",
            &shuffle,
            wrap,
        )))
    }

    fn shared_decl(&self, ty: &str, name: &str, len: i64) -> Result<String, EmitError> {
        Ok(format!("threadgroup {ty} {name}[{len}];"))
    }

    fn device_temps(&self) -> bool {
        true
    }

    fn host_alloc(&self, ty: &str, name: &str, len: i64, _cleanup: &[String]) -> Vec<String> {
        vec![format!(
            "id<MTLBuffer> {name} = [parpy_device newBufferWithLength:{len} * sizeof({ty}) options:MTLResourceStorageModeShared];"
        )]
    }

    fn host_free(&self, name: &str) -> Vec<String> {
        vec![format!("{name} = nil;")]
    }

    fn host_store(
        &self,
        ty: &str,
        temp: &str,
        at: &str,
        value: &str,
        _cleanup: &[String],
    ) -> Vec<String> {
        vec![format!("(({ty} *)[{temp} contents])[{at}] = {value};")]
    }

    fn host_load(
        &self,
        ty: &str,
        dst: &str,
        temp: &str,
        at: &str,
        _cleanup: &[String],
    ) -> Vec<String> {
        vec![format!("{dst} = (({ty} *)[{temp} contents])[{at}];")]
    }

    fn kernel_header(
        &self,
        name: &str,
        f: &Function,
        names: &[String],
        written: &BTreeSet<usize>,
        _launch: &LaunchInfo,
    ) -> Option<Result<(String, Vec<String>), EmitError>> {
        Some(self.kernel_header_impl(name, f, names, written))
    }

    fn launch_kernel(
        &self,
        kernel: &str,
        k: &Kernel,
        args: &[String],
        _cleanup: &[String],
    ) -> String {
        let d = match plan::dispatch(k, kernel) {
            Ok(d) => d,
            // Reported as a comment: the host part is never compiled, and
            // the device code (checked) is already written.
            Err(e) => return format!("// cannot describe the dispatch of {kernel}: {e}"),
        };
        let (g, t) = (d.threadgroups, d.threads);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "// {kernel}: {} x {} x {} threadgroups of {} x {} x {} threads",
            g[0], g[1], g[2], t[0], t[1], t[2]
        );
        out.push_str("{\n");
        out.push_str("  id<MTLCommandBuffer> parpy_cmd = [parpy_queue commandBuffer];\n");
        out.push_str(
            "  id<MTLComputeCommandEncoder> parpy_enc = [parpy_cmd computeCommandEncoder];\n",
        );
        let _ = writeln!(
            out,
            "  [parpy_enc setComputePipelineState:parpy_pipeline_{kernel}];"
        );
        let arg = |i: usize| args.get(i).map(|s| s.as_str()).unwrap_or("?");
        for &(param, index) in &d.buffers {
            let _ = writeln!(
                out,
                "  [parpy_enc setBuffer:{} offset:0 atIndex:{index}];",
                arg(param)
            );
        }
        if let Some(at) = d.params_index {
            let fields: Vec<&str> = d.fields.iter().map(|f| arg(f.param)).collect();
            let _ = writeln!(
                out,
                "  {} parpy_params = {{{}}}; // {} bytes",
                params_struct(kernel),
                fields.join(", "),
                d.params_size
            );
            let _ = writeln!(
                out,
                "  [parpy_enc setBytes:&parpy_params length:sizeof(parpy_params) atIndex:{at}];"
            );
        }
        let _ = writeln!(
            out,
            "  [parpy_enc dispatchThreadgroups:{} threadsPerThreadgroup:{}];",
            size3(g),
            size3(t)
        );
        out.push_str("  [parpy_enc endEncoding];\n");
        out.push_str("  [parpy_cmd commit];\n");
        out.push_str("  [parpy_cmd waitUntilCompleted];\n");
        out.push('}');
        out
    }
}

/// The types Metal's SIMD-group functions (`simd_sum`, `simd_shuffle_xor`,
/// ...) take: 16- and 32-bit numbers.
fn simd_native(e: ElemTy) -> bool {
    matches!(
        e,
        ElemTy::F32 | ElemTy::F16 | ElemTy::I32 | ElemTy::U32 | ElemTy::I16 | ElemTy::U16
    )
}

/// The opening of the host part (printed before the host function).
fn host_intro() -> String {
    "\
#if 0 // host side
// How parpy dispatches the kernels above: Objective-C++ over the Metal API,
// for reading only (not compiled; Metal execution is not part of parpy yet).
// `parpy_device` is the MTLDevice, `parpy_queue` its command queue and
// `parpy_pipeline_K` the compute pipeline state of kernel K. Arrays are
// MTLBuffers in shared storage; the scalars of a kernel are passed by value
// in its constant parameter struct. Each dispatch waits for the previous.
// The library is the device part above, built with newLibraryWithSource:
// and MTLCompileOptions.mathMode = MTLMathModeSafe (IEEE math, as on the
// CPU). The kernels assume 32-thread SIMD groups (Apple GPUs).
"
    .to_string()
}

impl MetalDialect {
    fn kernel_header_impl(
        &self,
        name: &str,
        f: &Function,
        names: &[String],
        written: &BTreeSet<usize>,
    ) -> Result<(String, Vec<String>), EmitError> {
        let var_name = |v: crate::ir::VarId| -> Result<String, EmitError> {
            names
                .get(v.0 as usize)
                .cloned()
                .ok_or_else(|| EmitError::Invariant(format!("no name for variable {}", v.0)))
        };
        let (binds, params_at) = bindings(f, written);
        let mut sig_params = vec![];
        let mut fields = vec![];
        let mut prologue = vec![];
        for (i, (&v, b)) in f.params.iter().zip(&binds).enumerate() {
            let var = f.var(v);
            let elem = var
                .ty
                .elem()
                .ok_or_else(|| format!("kernel parameter `{}` has no type", var.name))?;
            let ty = self.scalar_type(elem)?;
            let n = var_name(v)?;
            match b {
                Binding::Buffer { index, .. } => {
                    let decl = self.param(FnRole::Kernel, ty, &n, true, written.contains(&i));
                    sig_params.push(format!("{decl} [[buffer({index})]]"));
                }
                Binding::Field => {
                    fields.push(format!("  {ty} {n};"));
                    prologue.push(format!("{ty} {n} = parpy_params.{n};"));
                }
            }
        }
        let mut sig = String::new();
        if let Some(at) = params_at {
            let s = params_struct(name);
            let (_, size) = plan::param_struct(f)?;
            let _ = writeln!(
                sig,
                "struct {s} {{\n{}\n}};\nstatic_assert(sizeof({s}) == {size}, \"the host packs {size} bytes\");\n",
                fields.join("\n")
            );
            sig_params.push(format!("constant {s} &parpy_params [[buffer({at})]]"));
        }
        for g in grid_uses(f) {
            let (ty, n, attr) = grid_param(g);
            sig_params.push(format!("{ty} {n} [[{attr}]]"));
        }
        if sig_params.is_empty() {
            let _ = write!(sig, "[[kernel]] void {name}()");
        } else {
            let _ = write!(
                sig,
                "[[kernel]] void {name}(\n    {})",
                sig_params.join(",\n    ")
            );
        }
        Ok((sig, prologue))
    }
}

#[cfg(test)]
mod tests;
