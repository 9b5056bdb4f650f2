//! THE typed IR. Produced by `sema` from the syntax tree, rewritten by the
//! passes in `passes/`, printed by the backends in `back/`.
//!
//! Shape of the IR:
//! - A [`Program`] is one host [`Function`] plus the kernels outlined from it
//!   (one per top-level parallel loop nest) and device helper functions.
//! - Variables are indices ([`VarId`]) into the per-function table
//!   [`Function::vars`]; names are only given at emission time.
//! - Expressions are scalar-typed except a bare array variable (as a call
//!   argument). Array shapes are static (specialized on the arguments), and
//!   arrays are row-major and contiguous.
//! - Shared fields (type, span) live outside the kind enums.
//!
//! Invariant: after every pass, [`verify::verify_program`] accepts the IR.

pub mod affine;
pub mod eval;
pub mod print;
pub mod range;
pub mod unbound;
pub mod verify;
pub mod visit;

use crate::diag::Span;
pub use crate::ops::{AtomicOp, BinOp, MathFn, ReduceOp, UnOp};
pub use crate::types::{ElemTy, ScalarValue};

/// The type of a variable or expression.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Type {
    Scalar(ElemTy),
    /// A contiguous row-major array with a static shape.
    Array {
        elem: ElemTy,
        shape: Vec<i64>,
    },
    /// The type of a call to a helper that returns nothing.
    Void,
}

impl Type {
    pub fn elem(&self) -> Option<ElemTy> {
        match self {
            Type::Scalar(e) | Type::Array { elem: e, .. } => Some(*e),
            Type::Void => None,
        }
    }
    pub fn is_array(&self) -> bool {
        matches!(self, Type::Array { .. })
    }
}

/// Index of a variable in [`Function::vars`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct VarId(pub u32);

/// Index of a kernel in [`Program::kernels`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct KernelId(pub u32);

/// Index of a helper in [`Program::helpers`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct FuncId(pub u32);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum VarKind {
    /// A parameter of the function (position in `Function::params`).
    Param,
    /// A local variable (declared at its first assignment by the writer).
    Local,
    /// The index variable of a `For` loop.
    LoopIndex,
    /// A kernel-local array in block-shared memory (CUDA `__shared__`, Metal
    /// `threadgroup`): one instance per block, visible to all its threads.
    /// Only in kernels, only arrays; produced by the GPU lowering passes.
    Shared,
    /// A kernel-local array private to each thread (kept in registers when
    /// every index is a constant after unrolling). Only in kernels, only
    /// arrays; produced by `passes::gpu_register_rows`.
    Register,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Var {
    /// The Python name, or a descriptive name for compiler temporaries
    /// (`acc`, `t`). Not necessarily unique; the Namer makes it so.
    pub name: String,
    pub ty: Type,
    pub kind: VarKind,
    /// For a parameter whose scalar value was specialized: its value. The
    /// parameter stays in the signature, but uses read this constant.
    pub value: Option<ScalarValue>,
    pub span: Span,
}

/// One function: the host entry, a kernel, or a device helper.
#[derive(Clone, PartialEq, Debug)]
pub struct Function {
    pub name: String,
    pub params: Vec<VarId>,
    pub vars: Vec<Var>,
    pub body: Block,
    /// `Type::Void` when the function returns nothing.
    pub ret: Type,
    pub span: Span,
}

impl Function {
    pub fn var(&self, id: VarId) -> &Var {
        &self.vars[id.0 as usize]
    }
    pub fn add_var(&mut self, var: Var) -> VarId {
        self.vars.push(var);
        VarId(self.vars.len() as u32 - 1)
    }
    /// The local arrays the function's body uses (a temporary that went
    /// into a kernel stays in the list of variables, unused). In the host
    /// function of a GPU program these are the device temporaries
    /// (allocated on entry, freed on exit, touched by the host one element
    /// at a time).
    pub fn local_arrays(&self) -> impl Iterator<Item = VarId> + '_ {
        let mut used = std::collections::BTreeSet::new();
        for s in &self.body {
            visit::stmt_uses(s, &mut used, &mut std::collections::BTreeSet::new());
        }
        used.into_iter().filter(|v| {
            let var = self.var(*v);
            var.kind == VarKind::Local && var.ty.is_array()
        })
    }
}

/// What a kernel needs to be launched. Filled by the outlining pass from the
/// parallel loop nest; the GPU grid-mapping passes refine it.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct LaunchInfo {
    /// Threads requested at each parallel level, outermost first.
    pub levels: Vec<i64>,
    /// Threads per block of the innermost level (GPU backends).
    pub tpb: i64,
    /// Grid size in blocks, `[x, y, z]` (GPU backends; 1s on the CPU).
    pub blocks: [i64; 3],
    /// Block size in threads, `[x, y, z]` (GPU backends; 1s on the CPU).
    pub threads: [i64; 3],
    /// Cuda thread block clusters: the parallel level whose blocks form
    /// one cluster (set by `passes::gpu_two_stage` with
    /// `use_cuda_thread_block_clusters`; the kernel then holds
    /// [`ExprKind::ClusterReduce`]).
    pub cluster_level: Option<usize>,
    /// The cluster's size in blocks per grid axis, `[x, y, z]`, filled by
    /// `passes::gpu_grid` from `cluster_level` (the grid is a multiple of
    /// it); all 0 without clusters.
    pub cluster: [i64; 3],
}

impl LaunchInfo {
    /// The cluster dimensions, when the kernel's blocks form clusters.
    pub fn cluster_dims(&self) -> Option<[i64; 3]> {
        (self.cluster.iter().product::<i64>() > 0).then_some(self.cluster)
    }
}

#[derive(Clone, PartialEq, Debug)]
pub struct Kernel {
    pub func: Function,
    pub launch: LaunchInfo,
}

impl Kernel {
    /// Bytes of block-shared memory the kernel declares (its
    /// [`VarKind::Shared`] arrays), for the launch.
    pub fn shared_bytes(&self) -> i64 {
        self.func
            .vars
            .iter()
            .filter(|v| v.kind == VarKind::Shared)
            .map(|v| match &v.ty {
                Type::Array { elem, shape } => elem.size() as i64 * shape.iter().product::<i64>(),
                _ => 0,
            })
            .sum()
    }
}

/// A whole compiled program.
#[derive(Clone, PartialEq, Debug)]
pub struct Program {
    /// The entry point, named after the Python function. Before outlining it
    /// holds all the code; after, it holds host code and `Launch` statements.
    pub host: Function,
    pub kernels: Vec<Kernel>,
    /// Device/host helper functions (jit functions called from the entry),
    /// specialized per argument types.
    pub helpers: Vec<Function>,
    /// The run-time index checks left after `passes::check_bounds` (none
    /// when every index is proven in range or checks are off).
    pub bounds: Option<Bounds>,
    /// The external functions called (`ExprKind::External { ext }` indexes
    /// this).
    pub externals: Vec<crate::signature::ExtDecl>,
}

/// Run-time index checks: the record they write and what each one checks.
#[derive(Clone, PartialEq, Debug)]
pub struct Bounds {
    /// The host parameter (the last one, `i64[RECORD_LEN]`, not a user
    /// argument) pointing at the record: `[site + 1, index]` of the first
    /// failed check (then the values an assertion's message names, see
    /// [`ExprKind::Note`]), zeros when none failed. The caller zeroes it
    /// before the call and reads it after.
    pub record: VarId,
    /// `sites[k]` describes the checks with `site == k`.
    pub sites: Vec<BoundsSite>,
}

/// What one run-time check guards, for the error message.
#[derive(Clone, PartialEq, Debug)]
pub struct BoundsSite {
    pub kind: SiteKind,
    /// The index expression (the `assert` statement) in the source.
    pub span: Span,
}

/// What a run-time check checks.
#[derive(Clone, PartialEq, Debug)]
pub enum SiteKind {
    /// An index into dimension `axis` of the array `array` (its Python
    /// name) of shape `shape`: a failure is an `IndexError`.
    Index {
        array: String,
        axis: usize,
        shape: Vec<i64>,
    },
    /// `assert cond, message`: a failure is an `AssertionError`; the
    /// `raise E(message)` of a jit function is one whose `exception` is
    /// `E` (one of [`crate::ops::RAISABLE`]). With `values` (the type of
    /// each value recorded, see [`ExprKind::Note`], as the undecorated
    /// function has it: [`noted_type`]) the message is a template for
    /// Python's `str.format` (for Python's `%` operator when `printf`).
    Assert {
        message: Option<String>,
        exception: String,
        values: Vec<String>,
        printf: bool,
    },
}

/// How [`BoundsSite::describe`] starts for an assertion (the run time
/// raises `AssertionError` for such a site, `IndexError` for an index).
pub const ASSERT_SITE: &str = "assertion: ";

/// The type a value of type `ty` has in the undecorated function, as the
/// message of a failed assertion names it: `int`, `float` or `bool` for a
/// Python scalar (`python`: sema's weak value), else NumPy's name of
/// `ty` (`int64`, `float32`, `bool_`; the record holds integers and bools as int64,
/// floats as float64).
pub fn noted_type(ty: ElemTy, python: bool) -> String {
    match (python, ty) {
        (true, ElemTy::Bool) => "bool".into(),
        (true, t) if t.is_float() => "float".into(),
        (true, _) => "int".into(),
        (false, ElemTy::Bool) => "bool_".into(),
        (false, t) => t.numpy_name().into(),
    }
}

/// How [`BoundsSite::describe`] starts for an assertion or a `raise`
/// whose message names values: then the exception, a space, the types
/// of the values ([`noted_type`]) joined by commas, `: ` and the template
/// of the message for Python's `str.format` (the source line after it too).
pub const FORMAT_SITE: &str = "format ";

/// [`FORMAT_SITE`] for a message formatted by Python's `%` operator
/// (`"n is %d" % n`): the values are taken in order.
pub const PRINTF_SITE: &str = "printf ";

/// How [`BoundsSite::describe`] starts for a `raise E(message)`: then `E`,
/// `: ` and the message (the run time raises `E`).
pub const RAISE_SITE: &str = "raise ";

impl BoundsSite {
    /// The text of the error: for an index, what follows `index N `: the
    /// axis, the array, its shape; for an assertion, [`ASSERT_SITE`] and the
    /// message, as Python has it (line ends too: the `// parpy-bounds:`
    /// line of generated code escapes them, `back::comment_escape`). Then
    /// the source line.
    pub fn describe(&self) -> String {
        let mut s = match &self.kind {
            SiteKind::Index { array, axis, shape } => {
                let shape = shape_text(shape);
                format!("is out of bounds for axis {axis} of `{array}` with shape {shape}")
            }
            SiteKind::Assert {
                message,
                exception,
                values,
                printf,
            } if !values.is_empty() => {
                format!(
                    "{}{exception} {}: {}",
                    if *printf { PRINTF_SITE } else { FORMAT_SITE },
                    values.join(","),
                    message.as_deref().unwrap_or_default()
                )
            }
            SiteKind::Assert {
                message, exception, ..
            } if exception == "AssertionError" => format!(
                "{ASSERT_SITE}{}",
                message.as_deref().unwrap_or("assertion failed")
            ),
            SiteKind::Assert {
                message, exception, ..
            } => format!(
                "{RAISE_SITE}{exception}: {}",
                message.as_deref().unwrap_or(exception)
            ),
        };
        if let Some(f) = crate::diag::source(self.span.file) {
            let (line, _) = f.line_col(self.span.lo);
            let text = f.text.lines().nth(line as usize - 1).unwrap_or("").trim();
            let at = format!(" (at {}:{line}: {text})", f.path);
            // (a template's text after the fields)
            match &self.kind {
                SiteKind::Assert { values, printf, .. } if !values.is_empty() => {
                    s.push_str(&template_text(&at, *printf))
                }
                _ => s.push_str(&at),
            }
        }
        s
    }
}

pub use crate::ops::template_text;

/// A shape as Python prints a tuple: `(3,)`, `(2, 3)`.
pub fn shape_text(shape: &[i64]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    }
}

pub type Block = Vec<Stmt>;

#[derive(Clone, PartialEq, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// Where a value is stored.
#[derive(Clone, PartialEq, Debug)]
pub enum Place {
    Var(VarId),
    /// `array[i0, i1, ...]`: one index per dimension.
    Index {
        array: VarId,
        indices: Vec<Expr>,
    },
}

#[derive(Clone, PartialEq, Debug)]
pub enum StmtKind {
    /// `place = value`. The first assignment to a local declares it.
    Assign {
        dst: Place,
        value: Expr,
    },
    For(Box<ForLoop>),
    While {
        cond: Expr,
        body: Block,
    },
    If {
        cond: Expr,
        then_body: Block,
        else_body: Block,
    },
    Return(Option<Expr>),
    /// An expression evaluated for its effect (a call to a helper).
    Expr(Expr),
    /// `with parpy.gpu:` — a sequential block that runs on the device.
    OnDevice(Block),
    /// A call of an outlined kernel (produced by `passes::outline_kernels`):
    /// `args` are host variables passed in the order of the kernel params.
    Launch {
        kernel: KernelId,
        args: Vec<VarId>,
    },
    /// GPU: a barrier across the threads of one block (CUDA
    /// `__syncthreads()`, Metal `threadgroup_barrier(mem_threadgroup)`), also
    /// ordering block-shared memory. Every thread of the block must reach it.
    /// Only in kernels.
    Barrier,
    /// A call of a `parpy.callback` Python function from host code (never
    /// inside a parallel loop, a kernel or `with parpy.gpu:`).
    Callback(Box<Callback>),
    /// Python's `break`: leaves the innermost enclosing `For` / `While`.
    /// Only inside a loop of the same function and `OnDevice` block, and
    /// never directly (outside nested loops) in a parallel or reduction
    /// loop, whose iterations cannot stop each other (the verifier checks).
    Break,
    /// Python's `continue`: the rest of the innermost enclosing loop's
    /// iteration is skipped (a parallel loop's worker goes on with its next
    /// index). Only inside a loop of the same function and `OnDevice` block.
    Continue,
}

/// A call of a Python callback (see [`StmtKind::Callback`]).
#[derive(Clone, PartialEq, Debug)]
pub struct Callback {
    /// The call's number among the program's callback calls, in the order
    /// of the host body (set by sema; the generated code and the runtime
    /// name a call by it).
    pub site: usize,
    /// The binding's identifier of the Python function.
    pub id: u64,
    /// The function's name (messages, printing).
    pub name: String,
    pub args: Vec<CallArg>,
}

/// One argument of a [`Callback`] or an external call.
#[derive(Clone, PartialEq, Debug)]
pub enum CallArg {
    /// The array `array` with its first `prefix.len()` dimensions fixed at
    /// `prefix` (empty: the whole array): a view of the other dimensions.
    Array { array: VarId, prefix: Vec<Expr> },
    /// A scalar value.
    Scalar(Expr),
}

/// The operands [`Expr::children`] yields, in evaluation order, without a
/// heap allocation for the common kinds (the walkers of every pass visit
/// each node through it).
pub enum Children<'a> {
    /// Up to three operands (`None` ends them).
    Few([Option<&'a Expr>; 3], usize),
    Slice(std::slice::Iter<'a, Expr>),
    Many(std::vec::IntoIter<&'a Expr>),
}

impl<'a> Children<'a> {
    fn few(items: [Option<&'a Expr>; 3]) -> Children<'a> {
        Children::Few(items, 0)
    }
}

impl<'a> Iterator for Children<'a> {
    type Item = &'a Expr;

    fn next(&mut self) -> Option<&'a Expr> {
        match self {
            Children::Few(items, k) => {
                let item = items.get(*k).copied().flatten();
                *k += 1;
                item
            }
            Children::Slice(it) => it.next(),
            Children::Many(it) => it.next(),
        }
    }
}

/// Every expression of call arguments (scalar values and view indices).
pub fn call_arg_exprs(args: &[CallArg]) -> Vec<&Expr> {
    args.iter()
        .flat_map(|a| match a {
            CallArg::Array { prefix, .. } => prefix.iter().collect::<Vec<_>>(),
            CallArg::Scalar(e) => vec![e],
        })
        .collect()
}

/// [`call_arg_exprs`], mutably.
pub fn call_arg_exprs_mut(args: &mut [CallArg]) -> Vec<&mut Expr> {
    args.iter_mut()
        .flat_map(|a| match a {
            CallArg::Array { prefix, .. } => prefix.iter_mut().collect::<Vec<_>>(),
            CallArg::Scalar(e) => vec![e],
        })
        .collect()
}

/// The arrays call arguments pass (the callee may read and write them).
pub fn call_arg_arrays(args: &[CallArg]) -> impl Iterator<Item = VarId> + '_ {
    args.iter().filter_map(|a| match a {
        CallArg::Array { array, .. } => Some(*array),
        CallArg::Scalar(_) => None,
    })
}

impl Callback {
    /// Every expression of the call (scalar values and view indices).
    pub fn exprs(&self) -> Vec<&Expr> {
        call_arg_exprs(&self.args)
    }
    /// [`Callback::exprs`], mutably.
    pub fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        call_arg_exprs_mut(&mut self.args)
    }
    /// The arrays it passes (the callback may read and write them).
    pub fn arrays(&self) -> impl Iterator<Item = VarId> + '_ {
        call_arg_arrays(&self.args)
    }
}

/// How a loop's iterations are executed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LoopPar {
    /// Number of workers the iterations are spread over.
    pub threads: i64,
    /// Threads per block (GPU backends).
    pub tpb: i64,
}

/// A parallel reduction: every iteration combines into `acc` with `op`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Reduction {
    pub op: ReduceOp,
    /// A local scalar variable holding the partial/total result.
    pub acc: VarId,
    /// NumPy's order of a float sum (sema sets it on a 1-D sum with no
    /// label, `np.sum` and `np.mean` alike): `Some(run)` adds the elements
    /// of each run of `run` of them by NumPy's pairwise summation and the
    /// runs' sums in order (`run` is 8192 for NumPy's buffered float16
    /// mean, [`i64::MAX`] otherwise: one run). The Cpu backend keeps it
    /// while the loop runs sequentially (`passes::pairwise_sums`);
    /// elsewhere the loop adds in any order.
    pub pairwise: Option<i64>,
    /// A float16 / float32 sum that sema accumulates in float64 for its
    /// accuracy (no `pairwise` order to keep), which
    /// `passes::cpu_blocked_sums` may add in float32 blocks. A user's own
    /// float64 sum of converted elements (`x.astype(np.float64)`) is not.
    pub widened: bool,
}

impl Reduction {
    /// A reduction in any order.
    pub fn new(op: ReduceOp, acc: VarId) -> Reduction {
        Reduction {
            op,
            acc,
            pairwise: None,
            widened: false,
        }
    }
}

/// `for var in range(lo, hi, step)`.
#[derive(Clone, PartialEq, Debug)]
pub struct ForLoop {
    pub var: VarId,
    pub lo: Expr,
    pub hi: Expr,
    /// A non-zero compile-time constant.
    pub step: i64,
    pub body: Block,
    /// Labels attached by `parpy.label(...)` in the source.
    pub labels: Vec<String>,
    /// Set by `schedule::apply` when a label is mapped in the spec.
    pub par: Option<LoopPar>,
    /// Set for reduction loops (from `operators.sum(...)` etc. or a
    /// `par_reduction()` loop after `passes::lower_reductions`).
    pub reduction: Option<Reduction>,
    /// The loop was marked with `par_reduction()`: `passes::lower_reductions`
    /// must turn its body into a reduction into a scalar accumulator.
    pub wants_reduction: bool,
    /// Unroll completely (GPU: `#pragma unroll`); set by GPU passes on loops
    /// with a small constant trip count whose body indexes a
    /// [`VarKind::Register`] array with the loop variable.
    pub unroll: bool,
}

impl ForLoop {
    /// `for var in range(lo, hi)`: sequential, unlabelled, no reduction.
    pub fn sequential(var: VarId, lo: Expr, hi: Expr, body: Block) -> ForLoop {
        ForLoop {
            var,
            lo,
            hi,
            step: 1,
            body,
            labels: vec![],
            par: None,
            reduction: None,
            wants_reduction: false,
            unroll: false,
        }
    }
}

/// An atomic update's value, if `value` is one (`dst = atomic op(v)`).
pub fn atomic_of(value: &Expr) -> Option<(AtomicOp, &Expr)> {
    match &value.kind {
        ExprKind::Atomic { op, value } => Some((*op, value)),
        _ => None,
    }
}

#[derive(Clone, PartialEq, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
    pub span: Span,
}

#[derive(Clone, PartialEq, Debug)]
pub enum ExprKind {
    Bool(bool),
    Int(i64),
    /// Also used for `inf` / `-inf`.
    Float(f64),
    Var(VarId),
    /// Read `array[i0, i1, ...]`, one index per dimension.
    Index {
        array: VarId,
        indices: Vec<Expr>,
    },
    Unary {
        op: UnOp,
        arg: Box<Expr>,
    },
    /// Operands already have the operation's type (sema inserts `Convert`),
    /// except comparisons (bool result) and shifts.
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `then if cond else else_`.
    Select {
        cond: Box<Expr>,
        then: Box<Expr>,
        else_: Box<Expr>,
    },
    /// Convert `arg` to `self.ty`.
    Convert {
        arg: Box<Expr>,
    },
    Math {
        func: MathFn,
        args: Vec<Expr>,
    },
    Call {
        func: FuncId,
        args: Vec<Expr>,
    },
    /// A call of external function `ext` (index into
    /// [`Program::externals`]); arrays are passed as pointers to the first
    /// element of their view. Its type is the declared return type (or
    /// `Void`).
    External {
        ext: u32,
        args: Vec<CallArg>,
    },
    /// The value of an atomic update: only as the whole value of an
    /// `Assign` to an array element (the verifier checks), meaning
    /// `dst = op(dst, value)` done atomically (`parpy.atomic.add/max/min`);
    /// `value` has the element's type, and so has this expression.
    Atomic {
        op: AtomicOp,
        value: Box<Expr>,
    },
    /// GPU: a position of the executing thread in the launch grid (type
    /// `i64`). Only in kernels; produced by `passes::gpu_grid`.
    GpuIndex(GpuIndex),
    /// Cpu: the number of threads a parallel loop runs on (OpenMP's
    /// `omp_get_max_threads()`, at least 1), type `i64`. Produced by
    /// `passes::cpu_skew_fuse`, which gives each thread one chunk of the
    /// iterations of two fused loops.
    CpuThreads,
    /// GPU: `op` applied to `arg` across the [`WARP_SIZE`] threads of the
    /// warp / SIMD group; every thread of the group gets the result (CUDA
    /// `__shfl_xor_sync` butterfly, Metal `simd_sum`...). All threads of the
    /// group must evaluate it. Its type is `arg`'s.
    WarpReduce {
        op: ReduceOp,
        arg: Box<Expr>,
    },
    /// GPU (Cuda thread block clusters): `op` applied to `arg`, which every
    /// thread of a block holds with the same value, across the blocks of
    /// the kernel's cluster ([`LaunchInfo::cluster_dims`]), through
    /// distributed shared memory; every thread of every block gets the
    /// result, combined in block rank order (the same bits everywhere).
    /// It synchronizes the whole cluster: every thread of every block of
    /// the cluster must evaluate it (`gpu_two_stage` puts it where they
    /// all do). Its type is `arg`'s.
    ClusterReduce {
        op: ReduceOp,
        arg: Box<Expr>,
    },
    /// An array index checked at run time (`passes::check_bounds`; its type
    /// is `arg`'s; sema has already made a negative index count from the
    /// end): an `arg` outside `[0, size)` stores `[site + 1, arg]` into the
    /// `record` (the function's bounds-record array) unless an earlier
    /// failure is there, and yields 0, so memory is never touched out of
    /// bounds. Without a record nothing is checked (bounds checks off, or
    /// the index proven in range after its wrap). With `wrap`, a
    /// negative `arg` counts from the end first (Python's negative index:
    /// `passes::check_bounds` folds sema's `arg < 0 ? arg + size : arg`
    /// into the check, so `arg` is evaluated once and a failure records the
    /// index as the program computed it).
    CheckIndex {
        arg: Box<Expr>,
        size: i64,
        site: u32,
        record: Option<Box<Expr>>,
        wrap: bool,
    },
    /// Python's `assert cond, message` (the value of an expression
    /// statement; its type is `cond`'s, bool): `passes::check_bounds` makes
    /// it a [`ExprKind::CheckIndex`] of `cond ? 0 : 1` against size 1 whose
    /// site says it is an assertion, so a false `cond` records the site
    /// and the call raises `AssertionError` (or `exception`, the class
    /// of a `raise`). None are left after that pass.
    ///
    /// With `index`, `cond` is sema's `0 <= i < n` of an index `i` into
    /// axis `axis` of an array that is no IR array (a reshaped view): the
    /// check is that of an index (`SiteKind::Index`, the failing index
    /// recorded), `message` the text should `cond` have lost that form.
    ///
    /// With `values` (scalars, at most [`MAX_NOTED`]; evaluated only when
    /// `cond` is false), `message` is a template for Python's
    /// `str.format` whose field `k` is `values[k]` (an f-string message),
    /// of the type `types[k]` in the undecorated function ([`noted_type`]);
    /// when `printf`, a text for Python's `%` operator taking `values` in
    /// order (`"n is %d" % n`).
    Assert {
        cond: Box<Expr>,
        message: Option<String>,
        exception: String,
        index: Option<Box<IndexOf>>,
        values: Vec<Expr>,
        types: Vec<String>,
        printf: bool,
    },
    /// The failure of the assertion at `site` (`passes::check_bounds`
    /// puts it in the failing arm of the check's `cond ? 0 : ...`):
    /// records `[site + 1, 1, values...]` (each value's bits as an int64,
    /// floats as float64) into `record` unless an earlier failure is there,
    /// and yields 1 (an int64). The values are the fields of the message.
    Note {
        site: u32,
        record: Box<Expr>,
        values: Vec<Expr>,
    },
}

pub use crate::ops::MAX_NOTED;

/// The length of the bounds record (int64s): see [`Bounds`].
pub const RECORD_LEN: usize = 2 + MAX_NOTED;

/// The type of the bounds record: `[site + 1, index]` and the values an
/// assertion's message names ([`Bounds`]).
pub fn record_type() -> Type {
    Type::Array {
        elem: ElemTy::I64,
        shape: vec![RECORD_LEN as i64],
    }
}

/// What an index that [`ExprKind::Assert`] checks indexes: the array (as
/// its error names it), the axis and the shape.
#[derive(Clone, PartialEq, Debug)]
pub struct IndexOf {
    pub array: String,
    pub axis: usize,
    pub shape: Vec<i64>,
}

/// The threads of a warp (CUDA) / SIMD group (Metal on Apple GPUs) that a
/// [`ExprKind::WarpReduce`] spans.
pub const WARP_SIZE: i64 = 32;

/// A grid axis.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    pub const ALL: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];
    pub fn name(self) -> &'static str {
        match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        }
    }
    pub fn index(self) -> usize {
        match self {
            Axis::X => 0,
            Axis::Y => 1,
            Axis::Z => 2,
        }
    }
}

/// Positions and sizes in the launch grid (values fixed for a launch).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum GpuIndex {
    /// Index of the thread in its block (CUDA `threadIdx`, Metal
    /// `thread_position_in_threadgroup`).
    Thread(Axis),
    /// Index of the block in the grid (`blockIdx`,
    /// `threadgroup_position_in_grid`).
    Block(Axis),
    /// Threads per block (`blockDim`, `threads_per_threadgroup`).
    BlockDim(Axis),
    /// Blocks in the grid (`gridDim`, `threadgroups_per_grid`).
    GridDim(Axis),
    /// `Thread(X) % WARP_SIZE` (`thread_index_in_simdgroup`).
    Lane,
    /// `Thread(X) / WARP_SIZE` (`simdgroup_index_in_threadgroup`).
    Warp,
}

impl GpuIndex {
    /// The IR printer's name: `thread.x`, `block.y`, `lane`.
    pub fn name(self) -> String {
        match self {
            GpuIndex::Thread(a) => format!("thread.{}", a.name()),
            GpuIndex::Block(a) => format!("block.{}", a.name()),
            GpuIndex::BlockDim(a) => format!("block_dim.{}", a.name()),
            GpuIndex::GridDim(a) => format!("grid_dim.{}", a.name()),
            GpuIndex::Lane => "lane".into(),
            GpuIndex::Warp => "warp".into(),
        }
    }
}

impl Expr {
    pub fn new(kind: ExprKind, ty: Type, span: Span) -> Expr {
        Expr { kind, ty, span }
    }

    /// The value a reduction `op` over `ty` starts from (the whole range
    /// of the type: `min` of uint64 starts at 2**64 - 1, stored as its bit
    /// pattern -1, which literals of unsigned types print as unsigned).
    pub fn reduce_identity(op: ReduceOp, ty: ElemTy, span: Span) -> Expr {
        let t = Type::Scalar(ty);
        if ty.is_float() {
            let v = match op {
                ReduceOp::Sum => 0.0,
                ReduceOp::Prod => 1.0,
                ReduceOp::Max => f64::NEG_INFINITY,
                ReduceOp::Min => f64::INFINITY,
            };
            return Expr::new(ExprKind::Float(v), t, span);
        }
        let (min, max) = ty.int_bounds().unwrap_or((0, 0));
        let v = match op {
            ReduceOp::Sum => 0,
            ReduceOp::Prod => 1,
            ReduceOp::Max => min,
            ReduceOp::Min => max,
        };
        if ty == ElemTy::Bool {
            return Expr::new(ExprKind::Bool(v != 0), t, span);
        }
        Expr::new(ExprKind::Int(v as i64), t, span)
    }

    /// The direct operands, in evaluation order: the one place that knows
    /// which kinds hold sub-expressions (the passes' walkers recurse
    /// through it).
    pub fn children(&self) -> Children<'_> {
        match &self.kind {
            ExprKind::Index { indices: args, .. }
            | ExprKind::Math { args, .. }
            | ExprKind::Call { args, .. } => Children::Slice(args.iter()),
            ExprKind::Unary { arg, .. }
            | ExprKind::Convert { arg }
            | ExprKind::WarpReduce { arg, .. }
            | ExprKind::ClusterReduce { arg, .. }
            | ExprKind::Atomic { value: arg, .. } => Children::few([Some(arg), None, None]),
            ExprKind::Assert { cond, values, .. } if values.is_empty() => {
                Children::few([Some(cond), None, None])
            }
            ExprKind::Assert { cond, values, .. } => Children::Many(
                std::iter::once(&**cond)
                    .chain(values)
                    .collect::<Vec<_>>()
                    .into_iter(),
            ),
            ExprKind::Note { record, values, .. } => Children::Many(
                values
                    .iter()
                    .chain([&**record])
                    .collect::<Vec<_>>()
                    .into_iter(),
            ),
            ExprKind::Binary { lhs, rhs, .. } => Children::few([Some(lhs), Some(rhs), None]),
            ExprKind::Select { cond, then, else_ } => {
                Children::few([Some(cond), Some(then), Some(else_)])
            }
            ExprKind::External { args, .. } => Children::Many(call_arg_exprs(args).into_iter()),
            ExprKind::CheckIndex { arg, record, .. } => {
                Children::few([Some(arg), record.as_deref(), None])
            }
            ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Var(_)
            | ExprKind::GpuIndex(_)
            | ExprKind::CpuThreads => Children::few([None, None, None]),
        }
    }

    /// [`Expr::children`], mutable.
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match &mut self.kind {
            ExprKind::Index { indices, .. } => indices.iter_mut().collect(),
            ExprKind::Unary { arg, .. }
            | ExprKind::Convert { arg }
            | ExprKind::WarpReduce { arg, .. }
            | ExprKind::ClusterReduce { arg, .. }
            | ExprKind::Atomic { value: arg, .. } => vec![arg],
            ExprKind::Assert { cond, values, .. } => {
                std::iter::once(&mut **cond).chain(values).collect()
            }
            ExprKind::Note { record, values, .. } => {
                values.iter_mut().chain([&mut **record]).collect()
            }
            ExprKind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
            ExprKind::Select { cond, then, else_ } => vec![cond, then, else_],
            ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => args.iter_mut().collect(),
            ExprKind::External { args, .. } => call_arg_exprs_mut(args),
            ExprKind::CheckIndex { arg, record, .. } => {
                let mut v: Vec<&mut Expr> = vec![arg];
                v.extend(record.as_deref_mut());
                v
            }
            ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Var(_)
            | ExprKind::GpuIndex(_)
            | ExprKind::CpuThreads => vec![],
        }
    }
    pub fn int(v: i64, ty: ElemTy, span: Span) -> Expr {
        Expr::new(ExprKind::Int(v), Type::Scalar(ty), span)
    }
    /// The value of a literal as Python sees it: a uint64 literal holds
    /// its 64 bits, so one of 2**63 .. 2**64 - 1 (a negative `i64`, as
    /// `-np.uint64(3)` makes) has no value here (`None`, like any other
    /// expression): the evaluators' ints are `i64`s.
    pub fn literal_value(&self) -> Option<ScalarValue> {
        match self.kind {
            ExprKind::Int(v) if v < 0 && self.ty == Type::Scalar(ElemTy::U64) => None,
            ExprKind::Int(v) => Some(ScalarValue::Int(v)),
            ExprKind::Float(f) => Some(ScalarValue::Float(f)),
            ExprKind::Bool(b) => Some(ScalarValue::Bool(b)),
            _ => None,
        }
    }
    /// `lhs op rhs` of type `ty`.
    pub fn binary(op: BinOp, lhs: Expr, rhs: Expr, ty: Type, span: Span) -> Expr {
        Expr::new(
            ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            ty,
            span,
        )
    }
    /// The check `assert cond, message` that raises `exception` (one of
    /// `ops::RAISABLE`) when `cond` is false, an expression statement's
    /// value.
    pub fn assert(cond: Expr, message: Option<String>, exception: &str, span: Span) -> Expr {
        Expr::assert_noting(cond, message, vec![], exception, false, span)
    }
    /// [`Expr::assert`] whose message is a template for Python's
    /// `str.format` naming `values` (none: a plain message), each a
    /// Python scalar or not (`python`, see [`noted_type`]); a text for
    /// Python's `%` operator instead when `printf`.
    pub fn assert_noting(
        cond: Expr,
        message: Option<String>,
        values: Vec<(Expr, bool)>,
        exception: &str,
        printf: bool,
        span: Span,
    ) -> Expr {
        let types = values
            .iter()
            .map(|(v, python)| noted_type(v.elem(), *python))
            .collect();
        let values = values.into_iter().map(|(v, _)| v).collect();
        let ty = cond.ty.clone();
        Expr::new(
            ExprKind::Assert {
                cond: Box::new(cond),
                message,
                exception: exception.to_string(),
                index: None,
                values,
                types,
                printf,
            },
            ty,
            span,
        )
    }
    /// The check `0 <= i < shape[axis]` (`cond`) of an index `i` into
    /// `axis` of `array` (no IR array: a reshaped view): a failure is the
    /// `IndexError` of an index, naming the index, the axis and the array.
    pub fn assert_index(cond: Expr, of: IndexOf, span: Span) -> Expr {
        let message = format!(
            "index out of bounds for axis {} of `{}` with shape {}",
            of.axis,
            of.array,
            shape_text(&of.shape)
        );
        let mut e = Expr::assert(cond, Some(message), "IndexError", span);
        if let ExprKind::Assert { index, .. } = &mut e.kind {
            *index = Some(Box::new(of));
        }
        e
    }
    /// The bool `lhs op rhs` of a comparison `op`.
    pub fn compare(op: BinOp, lhs: Expr, rhs: Expr, span: Span) -> Expr {
        Expr::binary(op, lhs, rhs, Type::Scalar(ElemTy::Bool), span)
    }
    /// `cond ? then : else_`, of `then`'s type.
    pub fn select(cond: Expr, then: Expr, else_: Expr) -> Expr {
        let (ty, span) = (then.ty.clone(), then.span);
        Expr::select_as(cond, then, else_, ty, span)
    }
    /// `then if cond else else_` of type `ty` at `span` (the sides
    /// already of that type).
    pub fn select_as(cond: Expr, then: Expr, else_: Expr, ty: Type, span: Span) -> Expr {
        let (cond, then, else_) = (Box::new(cond), Box::new(then), Box::new(else_));
        Expr::new(ExprKind::Select { cond, then, else_ }, ty, span)
    }
    /// `func(args)` of scalar type `ty`.
    pub fn math(func: MathFn, args: Vec<Expr>, ty: ElemTy, span: Span) -> Expr {
        Expr::new(ExprKind::Math { func, args }, Type::Scalar(ty), span)
    }
    pub fn var(id: VarId, ty: Type, span: Span) -> Expr {
        Expr::new(ExprKind::Var(id), ty, span)
    }
    /// The bool `not e`.
    pub fn not(e: Expr, span: Span) -> Expr {
        let arg = Box::new(e);
        Expr::new(
            ExprKind::Unary { op: UnOp::Not, arg },
            Type::Scalar(ElemTy::Bool),
            span,
        )
    }
    /// The scalar element type (panics on arrays/void: callers know better).
    pub fn elem(&self) -> ElemTy {
        self.ty.elem().expect("scalar expression")
    }
}

impl ForLoop {
    /// The number of iterations when both bounds are literals (any
    /// non-zero step; `None` for a zero step or a count beyond `i64`).
    pub fn trip_count(&self) -> Option<i64> {
        let (ExprKind::Int(lo), ExprKind::Int(hi)) = (&self.lo.kind, &self.hi.kind) else {
            return None;
        };
        let (lo, hi, step) = (*lo as i128, *hi as i128, self.step as i128);
        let n = if step > 0 {
            (hi - lo + step - 1).div_euclid(step)
        } else if step < 0 {
            (lo - hi - step - 1).div_euclid(-step)
        } else {
            return None;
        };
        i64::try_from(n.max(0)).ok()
    }
}

impl Stmt {
    pub fn new(kind: StmtKind, span: Span) -> Stmt {
        Stmt { kind, span }
    }

    /// `v = value`.
    pub fn assign_var(v: VarId, value: Expr, span: Span) -> Stmt {
        Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(v),
                value,
            },
            span,
        )
    }
}
