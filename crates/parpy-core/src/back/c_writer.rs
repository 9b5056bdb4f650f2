//! The shared C-family writer: the only place that prints C-family
//! statements and expressions (C with OpenMP today; CUDA and Metal reuse it
//! through their own [`Dialect`]).
//!
//! It handles precedence-aware parenthesization, typed literals,
//! multi-dimensional index flattening with the static shapes, the prelude of
//! helper functions (only those used), and the file layout with the
//! machine-readable `parpy-` header lines. Names come from
//! [`super::c_names`], declaration placement from [`super::c_decls`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::c_names::{identifier_chars, Namer};
use super::{param_infos, param_line, EmitOutput, Writes};
use crate::back::error::EmitError;
use crate::error::CompileError;
use crate::ir::{
    AtomicOp, BinOp, CallArg, Callback, Expr, ExprKind, ForLoop, Function, GpuIndex, Kernel,
    LaunchInfo, LoopPar, MathFn, Place, Program, ReduceOp, Stmt, StmtKind, Type, UnOp, VarId,
    VarKind, MAX_NOTED,
};
use crate::ops::NanRule;
use crate::options::Options;
use crate::types::ElemTy;

/// What kind of function is being written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FnRole {
    Host,
    Kernel,
    Helper,
}

/// What the writer knows about a loop when it asks the dialect how to
/// introduce it.
pub struct LoopCtx<'a> {
    pub par: Option<LoopPar>,
    /// The reduction operator, the (printed) accumulator name and its
    /// element type.
    pub reduction: Option<(ReduceOp, &'a str, ElemTy)>,
    /// The loop is parallel and not inside another parallel loop of this
    /// function.
    pub outermost_parallel: bool,
    /// The loop is inside a loop the dialect vectorized.
    pub inside_vector: bool,
    /// The body is exactly one parallel loop whose bounds do not depend on
    /// this loop's variable, and neither loop is a reduction (a candidate
    /// for collapsing the two levels).
    pub perfect_par_child: bool,
    /// The number of iterations when the bounds are literals.
    pub trip_count: Option<i64>,
    /// The loop's introduction was already given by its parent (see
    /// [`LoopIntro::absorbs_child`]).
    pub absorbed: bool,
    pub role: FnRole,
    /// The iterations only read the elements they write at the subscripts
    /// they write them ([`crate::ir::visit::lanes_independent`]): safe to
    /// run as SIMD lanes. Computed for parallel and reduction loops only.
    pub lanes_independent: bool,
}

/// How the dialect introduces a loop: lines printed before the `for` (for
/// example pragmas), and whether the body counts as a vector region.
pub struct LoopIntro {
    pub lines: Vec<String>,
    pub vector: bool,
    /// The introduction covers the single child loop too (OpenMP
    /// `collapse(2)`); the child is then introduced with `absorbed` set.
    pub absorbs_child: bool,
}

impl LoopIntro {
    /// No introduction: a plain loop.
    pub fn none() -> LoopIntro {
        LoopIntro {
            lines: vec![],
            vector: false,
            absorbs_child: false,
        }
    }
}

/// One entry parameter, for the dialect's entry trampoline.
pub struct EntryParam {
    pub name: String,
    pub ty: Type,
    /// The C-family type text of the parameter's element.
    pub elem_ty: String,
}

/// What differs between C-family targets.
pub trait Dialect {
    /// Shown in the header comment (`C with OpenMP`).
    fn target_name(&self) -> &'static str;
    /// `#include` lines and other fixed text at the top of the file.
    fn includes(&self) -> String;
    fn scalar_type(&self, e: ElemTy) -> Result<&'static str, EmitError>;
    /// The name of a float math function for an element type (`sqrtf`).
    fn math_name(&self, f: MathFn, e: ElemTy) -> Result<String, EmitError>;
    /// The qualifier of prelude helper functions (`static inline`).
    fn prelude_qualifier(&self) -> &'static str;
    /// Whether code may compute in `double` (Metal's may not).
    fn has_double(&self) -> bool {
        true
    }
    /// Whether signed integer overflow wraps in the compiled code (C: it
    /// is built with `-fwrapv`). Where it is undefined behaviour (CUDA,
    /// Metal: NVRTC has no `-fwrapv` and optimizes on it), the writer does
    /// 32- and 64-bit signed value arithmetic in the unsigned type of the
    /// same width ([`wrapping_infix`]), which is NumPy's wrapping result.
    fn signed_overflow_wraps(&self) -> bool {
        true
    }
    /// Whether the bounds checks of an innermost loop of a function in
    /// `role` record their failure after the loop (`parpy_check_index_d`:
    /// a select, no branch, so the GPU compiler still unrolls the loop and
    /// batches its loads, where a branch to the failure path inside kept it
    /// from doing so; on the CPU a CSR row loop ran 12% faster).
    fn defers_loop_checks(&self, _role: FnRole) -> bool {
        false
    }
    /// The qualifier of the out-of-line failure path of the bounds checks
    /// (`parpy_bounds_fail`); the default is C's, not inlined and cold.
    fn cold_qualifier(&self) -> &'static str {
        "static __attribute__((noinline, cold))"
    }
    /// The statements of `parpy_bounds_fail` / `parpy_bounds_note` that
    /// store `site + 1` into `rec[0]` and then `rest` (C expressions) into
    /// `rec[1..]`, unless an earlier failure is there (C11: GCC/Clang
    /// atomics, safe across OpenMP threads).
    fn bounds_record(&self, rest: &[String]) -> String {
        let writes = record_writes(rest);
        format!("  int64_t none = 0;\n  if (__atomic_compare_exchange_n(rec, &none, site + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {{\n{writes}  }}\n")
    }
    /// The body of `int64_t parpy_f64_bits(double x)`: the bits of `x`.
    fn f64_bits(&self) -> &'static str {
        "  union {\n    double d;\n    int64_t i;\n  } u;\n  u.d = x;\n  return u.i;\n"
    }
    /// The statement(s) of an atomic update `*p = op(*p, v)` of the element
    /// `place` (an lvalue of C type `ty`) by the value `v` (already of that
    /// type); lines separated by `\n`. The default is C's: GCC/Clang
    /// `__atomic` builtins, a fetch-add for integers and a compare-exchange
    /// loop otherwise (safe across OpenMP threads).
    fn atomic_update(
        &self,
        op: AtomicOp,
        e: ElemTy,
        ty: &str,
        place: &str,
        v: &str,
    ) -> Result<String, EmitError> {
        if op == AtomicOp::Add && !e.is_float() {
            return Ok(format!(
                "__atomic_fetch_add(&{place}, {v}, __ATOMIC_RELAXED);"
            ));
        }
        let new = atomic_combine(op, e, ty, "parpy_old", "parpy_v");
        Ok(format!(
            "{{
  {ty} *parpy_p = &{place};
  {ty} parpy_v = {v};
  {ty} parpy_old;
  __atomic_load(parpy_p, &parpy_old, __ATOMIC_RELAXED);
  {ty} parpy_new;
  do {{
    parpy_new = {new};
  }} while (!__atomic_compare_exchange(parpy_p, &parpy_old, &parpy_new, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}}"
        ))
    }
    /// A parameter declaration. Arrays are pointers to their elements
    /// (`const` in kernels and helpers that only read them); the default is
    /// plain C's.
    fn param(&self, role: FnRole, ty_text: &str, name: &str, array: bool, written: bool) -> String {
        if !array {
            format!("{ty_text} {name}")
        } else if written || role == FnRole::Host {
            format!("{ty_text} *{name}")
        } else {
            format!("const {ty_text} *{name}")
        }
    }
    /// A function's signature (without the body).
    fn signature(
        &self,
        role: FnRole,
        ret: &str,
        name: &str,
        params: &[String],
        launch: Option<&LaunchInfo>,
    ) -> String;
    /// What introduces a loop (pragmas); the default is nothing (GPU
    /// dialects map parallel loops onto the grid instead).
    fn loop_intro(&self, ctx: &LoopCtx) -> LoopIntro {
        let _ = ctx;
        LoopIntro::none()
    }
    /// The statement that launches a kernel from host code.
    fn launch(&self, kernel: &str, args: &[String], launch: &LaunchInfo) -> String;
    /// The uniform entry point `int32_t SYM(void **args)` calling `host`.
    fn entry(&self, symbol: &str, host: &str, params: &[EntryParam]) -> String;

    // ---- GPU hooks. The defaults say the target has no such notion; the IR
    // holds these nodes only after the GPU lowering passes.

    /// A grid position ([`GpuIndex`]) as an `int64_t`-compatible expression.
    fn gpu_index(&self, g: GpuIndex) -> Result<String, EmitError> {
        Err(format!("`{}` on a target without a grid", g.name()).into())
    }
    /// A grid position converted to `to` in one step (`(int)tid.x` rather
    /// than a conversion of [`Dialect::gpu_index`]); `None` (the default)
    /// converts the `gpu_index` text.
    fn gpu_index_as(&self, g: GpuIndex, to: ElemTy) -> Result<Option<String>, EmitError> {
        let _ = (g, to);
        Ok(None)
    }
    /// The block-level barrier statement (with its `;`).
    fn barrier(&self) -> Result<String, EmitError> {
        Err("a barrier on a target without blocks".into())
    }
    /// The expression reducing `arg` (already printed, of type `ty`) with `op`
    /// across a warp / SIMD group.
    fn warp_reduce(&self, op: ReduceOp, e: ElemTy, arg: &str) -> Result<String, EmitError> {
        let _ = (e, arg);
        Err(format!("warp reduction `{}` on a target without warps", op.name()).into())
    }
    /// Lines printed after the prelude's `max` (`max`) or `min` helper of
    /// element type `e` (C: the OpenMP reduction that combines with it).
    fn reduction_declaration(&self, max: bool, e: ElemTy) -> Result<Option<String>, EmitError> {
        let _ = (max, e);
        Ok(None)
    }
    /// The definition of a helper that [`Dialect::warp_reduce`] calls, printed
    /// once in the prelude when used (None when it needs none).
    fn warp_reduce_helper(&self, op: ReduceOp, e: ElemTy) -> Result<Option<String>, EmitError> {
        let _ = (op, e);
        Ok(None)
    }
    /// The expression reducing `arg` with `op` across the blocks of a
    /// thread block cluster ([`crate::ir::ExprKind::ClusterReduce`]).
    fn cluster_reduce(&self, op: ReduceOp, e: ElemTy, arg: &str) -> Result<String, EmitError> {
        let _ = (e, arg);
        Err(format!(
            "cluster reduction `{}` on a target without thread block clusters",
            op.name()
        )
        .into())
    }
    /// The definition of the helper that [`Dialect::cluster_reduce`] calls,
    /// printed once in the prelude when used.
    fn cluster_reduce_helper(&self, op: ReduceOp, e: ElemTy) -> Result<Option<String>, EmitError> {
        let _ = (op, e);
        Ok(None)
    }
    /// The declaration of a block-shared array of `len` elements.
    fn shared_decl(&self, ty: &str, name: &str, len: i64) -> Result<String, EmitError> {
        let _ = (ty, len);
        Err(format!("shared array `{name}` on a target without blocks").into())
    }
    /// A local array of `len` elements too large for the stack
    /// ([`HEAP_BYTES`]): the line declaring and allocating it and the line
    /// freeing it at the end of its block. `None` (the default) keeps it on
    /// the stack (GPU threads have no heap worth the name).
    fn heap_array(&self, ty: &str, name: &str, len: i64) -> Option<(String, String)> {
        let _ = (ty, name, len);
        None
    }
    /// The most bytes of local arrays one thread may have, where the target
    /// has such a limit (and no heap for them): a larger array is the
    /// user's error, not a failed launch.
    fn local_array_limit(&self) -> Option<(i64, &'static str)> {
        None
    }
    /// What follows the declaration of a local array of `bytes` bytes on
    /// the stack (before the `;`): an alignment, where the target needs
    /// one spelled out.
    fn stack_array_suffix(&self, bytes: i64) -> &'static str {
        let _ = bytes;
        ""
    }
    /// The number of threads of a parallel loop ([`ExprKind::CpuThreads`]),
    /// as an `int64_t` expression, and what it needs in front of the
    /// prelude (an include).
    fn cpu_threads(&self) -> Result<(&'static str, &'static str), EmitError> {
        Err("the CPU's thread count on a GPU target".into())
    }
    /// What [`Dialect::heap_array`]'s lines need in front of the prelude.
    fn heap_prelude(&self) -> &'static str {
        ""
    }
    /// What a program that converts a float to a narrower float type
    /// (`(float)x` of a double, `(_Float16)x` of a float) needs in front
    /// of its functions, to keep the compiler from dropping the rounding.
    fn narrowed_floats_prelude(&self) -> &'static str {
        ""
    }
    /// Whether local arrays of the host function are device temporaries
    /// (allocated by [`Dialect::host_alloc`], accessed through
    /// [`Dialect::host_store`] / [`Dialect::host_load`]).
    fn device_temps(&self) -> bool {
        false
    }
    /// Lines allocating the device temporary `name` of `len` elements;
    /// `cleanup` frees what was allocated before it.
    fn host_alloc(&self, ty: &str, name: &str, len: i64, cleanup: &[String]) -> Vec<String> {
        let _ = (ty, cleanup);
        vec![format!("{ty} {name}[{len}];")]
    }
    /// Lines freeing the device temporary `name`.
    fn host_free(&self, name: &str) -> Vec<String> {
        let _ = name;
        vec![]
    }
    /// Lines copying the host value `value` into element `at` (an offset
    /// expression) of the device temporary `temp`.
    fn host_store(
        &self,
        ty: &str,
        temp: &str,
        at: &str,
        value: &str,
        cleanup: &[String],
    ) -> Vec<String> {
        let _ = cleanup;
        let _ = ty;
        vec![format!("{temp}[{at}] = {value};")]
    }
    /// Lines copying element `at` of the device temporary `temp` into the
    /// host scalar `dst` (already declared).
    fn host_load(
        &self,
        ty: &str,
        dst: &str,
        temp: &str,
        at: &str,
        cleanup: &[String],
    ) -> Vec<String> {
        let _ = (ty, cleanup);
        vec![format!("{dst} = {temp}[{at}];")]
    }
    /// A kernel launch with the device-temporary `cleanup` to run when it
    /// fails (the default is [`Dialect::launch`]).
    fn launch_checked(
        &self,
        kernel: &str,
        args: &[String],
        launch: &LaunchInfo,
        shared_bytes: i64,
        cleanup: &[String],
    ) -> String {
        let _ = (shared_bytes, cleanup);
        self.launch(kernel, args, launch)
    }
    /// Lines that end the host function's body (after `cleanup` ran).
    fn host_end(&self, cleanup: &[String]) -> Vec<String> {
        cleanup.to_vec()
    }

    /// The global through which host code calls Python callbacks: the
    /// binding stores its trampoline `int32_t f(int64_t site, void **args)`
    /// in `parpy_callback` before a call (args as in the entry ABI: array
    /// data pointers, pointers to 8-byte scalar slots).
    fn callback_decl(&self) -> String {
        "typedef int32_t (*parpy_callback_t)(int64_t site, void **args);\n\
         parpy_callback_t parpy_callback = 0;\n"
            .into()
    }
    /// Lines calling callback `site` with the argument array `argv`; when
    /// it fails (or no trampoline was set) the host function stops after
    /// `cleanup` (the binding raises the callback's exception).
    fn callback_call(&self, site: usize, argv: &str, cleanup: &[String]) -> Vec<String> {
        let mut lines = vec![format!(
            "if (parpy_callback == 0 || parpy_callback({site}, {argv}) != 0) {{"
        )];
        lines.extend(cleanup.iter().map(|c| format!("  {c}")));
        lines.push("  return;".into());
        lines.push("}".into());
        lines
    }

    // ---- Whole-kernel hooks, for targets that bind kernel parameters by
    // kind rather than one declaration each (Metal: buffers by index,
    // scalars in one constant struct, grid positions as attributed params).

    /// A kernel's whole signature (without the `{`) and the first lines of
    /// its body. `names[v]` is the printed name of variable `v` (indexed by
    /// `VarId`), `written` the positions of the parameters the kernel may
    /// write. `None` (the default) means
    /// [`Dialect::param`] and [`Dialect::signature`] are used.
    fn kernel_header(
        &self,
        name: &str,
        f: &Function,
        names: &[String],
        written: &BTreeSet<usize>,
        launch: &LaunchInfo,
    ) -> Option<Result<(String, Vec<String>), EmitError>> {
        let _ = (name, f, names, written, launch);
        None
    }
    /// An integer literal of type `ty` (the default is [`int_literal`]:
    /// C's `INT64_C`/`INT32_MIN` macros, which not every target has).
    fn int_literal(&self, v: i64, ty: ElemTy) -> String {
        int_literal(v, ty)
    }
    /// The launch of kernel `k` (printed as `kernel`) from host code, with
    /// the kernel's IR at hand; the default is [`Dialect::launch_checked`].
    fn launch_kernel(
        &self,
        kernel: &str,
        k: &Kernel,
        args: &[String],
        cleanup: &[String],
    ) -> String {
        self.launch_checked(kernel, args, &k.launch, k.shared_bytes(), cleanup)
    }
}

/// `2048` -> "2 KiB", `8388600` -> "8.0 MiB".
fn human_bytes(b: i64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} bytes")
    }
}

/// Local arrays above this size go on the heap where the dialect can
/// ([`Dialect::heap_array`]): an OpenMP thread's stack may be 2 MiB.
pub const HEAP_BYTES: i64 = 64 * 1024;

/// A dialect's answer for an element type it has no atomics for (sema
/// reports these first, with the source line: `Backend::supports_atomic`).
pub(crate) fn atomic_unsupported(op: AtomicOp, e: ElemTy, target: &str) -> EmitError {
    EmitError::Unsupported(format!(
        "`parpy.atomic.{}` on {} is not supported by the {target} backend",
        op.name(),
        e.short_name()
    ))
}

/// `op(a, b)` in C of the type `ty` for a compare-exchange loop of an
/// atomic update: `max` and `min` as NumPy's `maximum` and `minimum`
/// ([`max_min`]).
pub(crate) fn atomic_combine(op: AtomicOp, e: ElemTy, ty: &str, a: &str, b: &str) -> String {
    match op {
        AtomicOp::Add => format!("({ty})({a} + {b})"),
        AtomicOp::Max => format!("({})", max_min(true, e, a, b)),
        AtomicOp::Min => format!("({})", max_min(false, e, a, b)),
    }
}

/// The name of the warp / SIMD-group reduction helper of `op` over `e`.
pub(crate) fn warp_helper_name(op: ReduceOp, e: ElemTy) -> String {
    format!("parpy_warp_{}_{}", op.name(), e.short_name())
}

/// The statement that combines a reduction's value `o` into `v` (bools:
/// `+` is or, `*` is and; max and min: [`max_min`]). `wrap`: the C type of
/// `e` and its unsigned twin, where sums and products of it must wrap
/// without relying on signed overflow ([`Dialect::signed_overflow_wraps`]).
pub(crate) fn combine_stmt(op: ReduceOp, e: ElemTy, wrap: Option<(&str, &str)>) -> String {
    match (op, e, wrap) {
        (ReduceOp::Sum, ElemTy::Bool, _) => "v = v || o;".to_string(),
        (ReduceOp::Prod, ElemTy::Bool, _) => "v = v && o;".to_string(),
        (ReduceOp::Sum, _, Some((ty, uty))) => {
            format!("v = {};", wrapping_infix("+", ty, uty, "v", "o"))
        }
        (ReduceOp::Prod, _, Some((ty, uty))) => {
            format!("v = {};", wrapping_infix("*", ty, uty, "v", "o"))
        }
        (ReduceOp::Sum, _, None) => "v = v + o;".to_string(),
        (ReduceOp::Prod, _, None) => "v = v * o;".to_string(),
        (ReduceOp::Max, _, _) => format!("v = {};", max_min(true, e, "v", "o")),
        (ReduceOp::Min, _, _) => format!("v = {};", max_min(false, e, "v", "o")),
    }
}

/// `l sym r` of signed operands of C type `ty` computed in its unsigned
/// twin `uty` (wrapping, as NumPy's arithmetic) and converted back.
pub(crate) fn wrapping_infix(sym: &str, ty: &str, uty: &str, l: &str, r: &str) -> String {
    format!("({ty})(({uty}){l} {sym} ({uty}){r})")
}

/// The unsigned type of the width of the 32/64-bit signed `e`, where its
/// overflow is undefined in the target's C ([`Dialect::signed_overflow_wraps`]).
pub(crate) fn wrapping_twin<D: Dialect + ?Sized>(d: &D, e: ElemTy) -> Option<ElemTy> {
    if d.signed_overflow_wraps() {
        return None;
    }
    match e {
        ElemTy::I32 => Some(ElemTy::U32),
        ElemTy::I64 => Some(ElemTy::U64),
        _ => None,
    }
}

/// A warp / SIMD-group reduction helper ([`warp_helper_name`]): a butterfly
/// of `WARP_SIZE / 2, ..., 1` lane exchanges; `shuffle` reads lane `v ^ k`'s
/// `v`, `counter` is the C type of `k`.
pub(crate) fn butterfly_helper(
    qualifier: &str,
    ty: &str,
    op: ReduceOp,
    e: ElemTy,
    counter: &str,
    shuffle: &str,
    wrap: Option<&str>,
) -> String {
    format!(
        "{qualifier} {ty} {}({ty} v) {{\n  for ({counter} k = {}; k > 0; k /= 2) {{\n    {ty} o = {shuffle};\n    {}\n  }}\n  return v;\n}}\n",
        warp_helper_name(op, e),
        crate::ir::WARP_SIZE / 2,
        combine_stmt(op, e, wrap.map(|u| (ty, u)))
    )
}

/// NumPy's `maximum` (`max`) or `minimum` of the C values `a` and `b` of
/// element type `e`, as NumPy computes it: `a` when it wins or is NaN, else
/// `b` (so a NaN operand gives NaN, and of a tie, `np.maximum(-0.0, 0.0)`,
/// the second). The one spelling of the rule for
/// the prelude helpers, the warp reductions and the atomics of every
/// dialect (`ir::eval` is the same rule for the constant folder and the
/// launch plan).
pub(crate) fn max_min(max: bool, e: ElemTy, a: &str, b: &str) -> String {
    max_min_rule(max, NanRule::NumPy, e, a, b)
}

/// [`max_min`] under a NaN rule (`ir::eval::max_min` computes the same).
pub(crate) fn max_min_rule(max: bool, rule: NanRule, e: ElemTy, a: &str, b: &str) -> String {
    // (`fmax` / `fmin` keep the first of a tie, as NumPy's float64 loops)
    let cmp = match (max, rule) {
        (true, NanRule::NumPy) => ">",
        (false, NanRule::NumPy) => "<",
        (true, NanRule::Ignore) => ">=",
        (false, NanRule::Ignore) => "<=",
    };
    if !e.is_float() {
        return format!("{a} {cmp} {b} ? {a} : {b}");
    }
    // the operand whose NaN wins
    let nan = match rule {
        NanRule::NumPy => a,
        NanRule::Ignore => b,
    };
    format!("({a} {cmp} {b} || {nan} != {nan}) ? {a} : {b}")
}

/// The helper name (`parpy_<name>_<type>`) of a max / min under a NaN rule.
fn rule_helper(max: bool, rule: NanRule) -> &'static str {
    match (rule, max) {
        (NanRule::NumPy, true) => "max",
        (NanRule::NumPy, false) => "min",
        (NanRule::Ignore, true) => "fmax",
        (NanRule::Ignore, false) => "fmin",
    }
}

/// The statements `rec[k] = rest[k - 1];` of a bounds record's winner
/// ([`Dialect::bounds_record`]), one a line.
pub(super) fn record_writes(rest: &[String]) -> String {
    rest.iter()
        .enumerate()
        .map(|(k, v)| format!("    rec[{}] = {v};\n", k + 1))
        .collect()
}

/// Prelude helpers, recorded when used and printed in a fixed order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum PreludeFn {
    /// What a conversion of a float to a narrower float type needs in
    /// front of the functions ([`Dialect::narrowed_floats_prelude`]).
    NarrowedFloats,
    /// What [`Dialect::heap_array`] needs (`<stdlib.h>`).
    Heap,
    /// What [`Dialect::cpu_threads`] needs (`<omp.h>`).
    CpuThreads,
    FloorDiv(ElemTy),
    Mod(ElemTy),
    Pow(ElemTy),
    /// `parpy_square_<float type>`: `x ** 2` as one correctly rounded
    /// product (NumPy's square; a GPU's `pow` is off by an ulp).
    Square(ElemTy),
    /// `parpy_<max|min|fmax|fmin>_<type>` ([`rule_helper`]): a max (`false`)
    /// or min (`true`) under a NaN rule; NumPy's rule also declares the
    /// dialect's reduction over it.
    MaxMin(NanRule, bool, ElemTy),
    Abs(ElemTy),
    Sign(ElemTy),
    /// `parpy_gcd_<type>` / `parpy_lcm_<type>` (`false` / `true`): of the
    /// magnitudes of two integers, in their unsigned type, as NumPy.
    GcdLcm(bool, ElemTy),
    /// Shifts by any count, as NumPy: counts at or above the width or
    /// negative give 0 (`>>` of a negative value: -1), never C's UB.
    Shl(ElemTy),
    Shr(ElemTy),
    /// A dialect's warp-reduction helper.
    Warp(ReduceOp, ElemTy),
    /// A dialect's cluster-reduction helper (Cuda).
    Cluster(ReduceOp, ElemTy),
    /// `parpy_bounds_fail`: the record of a failed check, out of line (see
    /// [`Dialect::cold_qualifier`]); before the checks that call it.
    BoundsFail,
    /// `parpy_bounds_note`: the record of a failed assertion and the
    /// values its message names ([`ExprKind::Note`]), out of line.
    BoundsNote,
    /// `parpy_f64_bits`: a double's bits as an int64 (a noted float).
    F64Bits,
    /// `parpy_check_index`: record an index out of bounds.
    CheckIndex,
    /// `parpy_check_wrap_index`: the same after a negative index counts
    /// from the end (the record keeps the index as computed).
    CheckWrapIndex,
    /// `parpy_check_index_d` / `parpy_check_wrap_index_d` (`true`: the
    /// wrapping one): the same checks in an innermost loop whose
    /// failures are recorded after it (see
    /// [`Dialect::defers_loop_checks`]): index 0 and the first failure
    /// kept in the loop's `parpy_bad` (`[site, index]`, site -1: none).
    CheckDeferred(bool),
    /// `parpy_wrap_<type>`: a negative index counts from the end, unchecked.
    WrapIndex(ElemTy),
    /// `parpy_to_<type>`: a float (as a double) converted to an integer
    /// type as NumPy converts it (`ir::eval::float_to_int`), never C's
    /// undefined behaviour for NaN, infinities and values out of range.
    FloatToInt(ElemTy),
}

// C precedence levels (higher binds tighter).
const P_ATOM: u8 = 16;
const P_POSTFIX: u8 = 15;
const P_UNARY: u8 = 14;
const P_MUL: u8 = 13;
const P_ADD: u8 = 12;
const P_SHIFT: u8 = 11;
const P_REL: u8 = 10;
const P_EQ: u8 = 9;
const P_BAND: u8 = 8;
const P_BXOR: u8 = 7;
const P_BOR: u8 = 6;
const P_LAND: u8 = 5;
const P_LOR: u8 = 4;
const P_COND: u8 = 3;

/// Whether the checks of a loop with body `b` can record their
/// failures after it ([`Dialect::defers_loop_checks`]): an innermost loop
/// (no loop inside, so no check of another loop runs between a failure and
/// the record), without `return` or calls of helpers (whose own checks
/// record at once), without `break` (such a loop leaves when the record
/// holds a failure: `passes::check_exits`), with at least one check that
/// records.
fn defers_checks(b: &[Stmt]) -> bool {
    let mut plain = true;
    crate::ir::visit::walk_stmts(b, &mut |s| {
        plain &= !matches!(
            s.kind,
            StmtKind::For(_) | StmtKind::While { .. } | StmtKind::Return(_) | StmtKind::Break
        )
    });
    let mut checks = false;
    crate::ir::visit::walk_exprs(b, &mut |e| {
        match &e.kind {
            ExprKind::Call { .. } => plain = false,
            ExprKind::CheckIndex {
                record: Some(_), ..
            } => checks = true,
            _ => {}
        }
        plain
    });
    plain && checks
}

/// Does `e` read a scalar parameter of `f` (a value the caller chooses)?
fn reads_param(f: &crate::ir::Function, e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Var(v) if f.var(*v).kind == crate::ir::VarKind::Param)
        || e.children().any(|c| reads_param(f, c))
}

fn paren(s: (String, u8), min: u8) -> String {
    if s.1 >= min {
        s.0
    } else {
        format!("({})", s.0)
    }
}

/// Writes the whole program with the given dialect: the header lines, the
/// includes, the prelude, the helpers and kernels, the host function and the
/// entry trampoline.
pub fn write_program<D: Dialect>(
    d: &D,
    p: &Program,
    options: &Options,
) -> Result<EmitOutput, CompileError> {
    Ok(write_parts(d, p, options)?.into_output(false))
}

/// The pieces of a generated file, for dialects that also need the device
/// code alone (the CUDA translation unit for NVRTC).
pub struct Parts {
    /// The `// Generated ...` and `// parpy-` lines.
    pub header: String,
    /// The dialect's includes and fixed text.
    pub includes: String,
    /// Prelude helpers (possibly empty).
    pub prelude: String,
    /// Helper functions and kernels.
    pub device: String,
    /// The host function and the entry trampoline.
    pub host: String,
    pub entry_symbol: String,
    pub params: Vec<crate::signature::ParamInfo>,
    /// The emitted name of each kernel, by `KernelId`.
    pub kernel_names: Vec<String>,
}

impl Parts {
    /// Includes, prelude, helpers and kernels: everything but the header and
    /// the host code.
    pub fn device_unit(&self) -> String {
        let mut out = self.includes.clone();
        out.push('\n');
        if !self.prelude.is_empty() {
            out.push_str(&self.prelude);
            out.push('\n');
        }
        out.push_str(&self.device);
        out
    }

    /// The whole file (header, device unit, host part) as the backend's
    /// output; `with_device_text` also keeps the device unit alone.
    pub fn into_output(self, with_device_text: bool) -> EmitOutput {
        let device = self.device_unit();
        let mut text = self.header;
        text.push_str(&device);
        text.push_str(&self.host);
        EmitOutput {
            text,
            entry_symbol: self.entry_symbol,
            params: self.params,
            device_text: with_device_text.then_some(device),
            kernel_names: self.kernel_names,
        }
    }
}

/// Writes the parts of a program (see [`write_program`]).
pub fn write_parts<D: Dialect>(
    d: &D,
    p: &Program,
    _options: &Options,
) -> Result<Parts, CompileError> {
    let writes = Writes::of(p);
    let params = param_infos(p, &writes);
    // Global names: the host keeps the Python name where possible.
    let mut globals = Namer::new();
    let host_name = globals.fresh(&p.host.name);
    // the Python name (no user name starts with `parpy_`, see `Namer`)
    let entry_symbol = format!("parpy_entry_{}", identifier_chars(&p.host.name));
    globals.reserve(&entry_symbol);
    let helper_names: Vec<String> = p.helpers.iter().map(|h| globals.fresh(&h.name)).collect();
    let kernel_names: Vec<String> = p
        .kernels
        .iter()
        .map(|k| globals.fresh(&k.func.name))
        .collect();
    let names = Globals {
        kernels: kernel_names,
        helpers: helper_names,
        base: globals,
    };

    let mut prelude: BTreeSet<PreludeFn> = BTreeSet::new();
    let mut body = String::new();
    // helpers nothing calls any more are left out (clang and gcc warn of
    // unused static functions)
    let called = crate::ir::visit::called_helpers(p);
    for (i, h) in p.helpers.iter().enumerate() {
        if !called[i] {
            continue;
        }
        let text = FnWriter::new(
            d,
            p,
            h,
            FnRole::Helper,
            &names,
            &writes.helpers[i],
            &mut prelude,
        )
        .write(&names.helpers[i], None)
        .map_err(CompileError::from)?;
        body.push_str(&text);
        body.push('\n');
    }
    for (i, k) in p.kernels.iter().enumerate() {
        let text = FnWriter::new(
            d,
            p,
            &k.func,
            FnRole::Kernel,
            &names,
            &writes.kernels[i],
            &mut prelude,
        )
        .write(&names.kernels[i], Some(&k.launch))
        .map_err(CompileError::from)?;
        body.push_str(&text);
        body.push('\n');
    }
    let device = std::mem::take(&mut body);
    if has_callbacks(&p.host) {
        body.push_str(&d.callback_decl());
        body.push('\n');
    }
    let text = FnWriter::new(
        d,
        p,
        &p.host,
        FnRole::Host,
        &names,
        &writes.host,
        &mut prelude,
    )
    .write(&host_name, None)
    .map_err(CompileError::from)?;
    body.push_str(&text);
    body.push('\n');

    let mut entry_params = vec![];
    for &v in &p.host.params {
        let var = p.host.var(v);
        let elem = var
            .ty
            .elem()
            .ok_or_else(|| CompileError::Internal("a void parameter".into()))?;
        entry_params.push(EntryParam {
            name: var.name.clone(),
            ty: var.ty.clone(),
            elem_ty: d.scalar_type(elem).map_err(CompileError::from)?.to_string(),
        });
    }
    body.push_str(&d.entry(&entry_symbol, &host_name, &entry_params));

    let mut out = String::new();
    let _ = writeln!(
        out,
        "// Generated by parpy {} from {} (backend: {}). Do not edit the parpy- lines.",
        crate::options::VERSION,
        p.host.name,
        d.target_name()
    );
    let _ = writeln!(out, "// parpy-entry: {entry_symbol}");
    for pi in &params {
        let _ = writeln!(out, "// parpy-param: {}", param_line(pi));
    }
    // the entry takes one more slot: the bounds record (see ir::Bounds)
    for site in p.bounds.iter().flat_map(|b| &b.sites) {
        let _ = writeln!(
            out,
            "// parpy-bounds: {}",
            super::comment_escape(&site.describe())
        );
    }
    let pre = write_prelude(d, &prelude).map_err(CompileError::from)?;
    let mut includes = d.includes();
    let mut seen = BTreeSet::new();
    for h in p.externals.iter().filter_map(|e| e.header.as_deref()) {
        let h = h.trim();
        let line = if h.starts_with('<') || h.starts_with('"') {
            format!("#include {h}\n")
        } else {
            format!("#include \"{h}\"\n")
        };
        if seen.insert(line.clone()) {
            includes.push_str(&line);
        }
    }
    Ok(Parts {
        header: out,
        includes,
        prelude: pre,
        device,
        host: body,
        entry_symbol,
        params,
        kernel_names: names.kernels.clone(),
    })
}

fn has_callbacks(f: &Function) -> bool {
    let mut found = false;
    crate::ir::visit::walk_stmts(&f.body, &mut |s| {
        found |= matches!(s.kind, StmtKind::Callback(_));
    });
    found
}

struct Globals {
    kernels: Vec<String>,
    helpers: Vec<String>,
    /// Every global name taken, for seeding per-function namers.
    base: Namer,
}

fn write_prelude<D: Dialect>(d: &D, used: &BTreeSet<PreludeFn>) -> Result<String, EmitError> {
    let q = d.prelude_qualifier();
    let mut out = String::new();
    for f in used {
        if *f == PreludeFn::Heap {
            out.push_str(d.heap_prelude());
            continue;
        }
        if *f == PreludeFn::NarrowedFloats {
            out.push_str(d.narrowed_floats_prelude());
            continue;
        }
        if *f == PreludeFn::CpuThreads {
            out.push_str(d.cpu_threads()?.1);
            continue;
        }
        if let PreludeFn::Warp(op, e) | PreludeFn::Cluster(op, e) = *f {
            let text = match *f {
                PreludeFn::Warp(..) => d.warp_reduce_helper(op, e)?,
                _ => d.cluster_reduce_helper(op, e)?,
            };
            if let Some(text) = text {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&text);
            }
            continue;
        }
        let (e, text) = match *f {
            // integer division never traps: by 0 it gives 0 and MIN // -1
            // wraps to MIN, as NumPy (which warns)
            PreludeFn::FloorDiv(e) if e.is_signed_int() => (e, format!(
                "{q} T parpy_floordiv_S(T a, T b) {{\n  if (b == 0) {{\n    return 0;\n  }}\n  if (b == -1) {{\n    return (T)(0 - (UW)a);\n  }}\n  T q = a / b;\n  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}}\n"
            )),
            // float16: computed in float and rounded once, as NumPy does
            // (and CUDA's `__half` has no mixed comparisons with int literals)
            PreludeFn::FloorDiv(ElemTy::F16) => (ElemTy::F16, format!(
                "{q} T parpy_floordiv_S(T a16, T b16) {{\n  float a = (float)a16, b = (float)b16;\n  if (b == 0) {{\n    return (T)(a / b);\n  }}\n  float m = FMOD(a, b);\n  float d = (a - m) / b;\n  if (m != 0 && ((b < 0) != (m < 0))) {{\n    d -= 1;\n  }}\n  if (d == 0) {{\n    return (T)COPYSIGN(0.0f, a / b);\n  }}\n  float f = FLOOR(d);\n  return (T)((d - f > 0.5f) ? f + 1 : f);\n}}\n"
            )),
            PreludeFn::Mod(ElemTy::F16) => (ElemTy::F16, format!(
                "{q} T parpy_mod_S(T a16, T b16) {{\n  float a = (float)a16, b = (float)b16;\n  float r = FMOD(a, b);\n  if (r != 0) {{\n    if ((r < 0) != (b < 0)) {{\n      r += b;\n    }}\n  }} else {{\n    r = COPYSIGN(0.0f, b);\n  }}\n  return (T)r;\n}}\n"
            )),
            PreludeFn::FloorDiv(e) if e.is_float() => (e, format!(
                "{q} T parpy_floordiv_S(T a, T b) {{\n  if (b == 0) {{\n    return a / b;\n  }}\n  T m = FMOD(a, b);\n  T d = (a - m) / b;\n  if (m != 0 && ((b < 0) != (m < 0))) {{\n    d -= 1;\n  }}\n  if (d == 0) {{\n    return COPYSIGN((T)0, a / b);\n  }}\n  T f = FLOOR(d);\n  return (d - f > (T)0.5) ? f + 1 : f;\n}}\n"
            )),
            PreludeFn::FloorDiv(e) => (e, format!("{q} T parpy_floordiv_S(T a, T b) {{\n  return b == 0 ? 0 : a / b;\n}}\n")),
            PreludeFn::Mod(e) if e.is_signed_int() => (e, format!(
                "{q} T parpy_mod_S(T a, T b) {{\n  if (b == 0 || b == -1) {{\n    return 0;\n  }}\n  T r = a % b;\n  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}}\n"
            )),
            PreludeFn::Mod(e) if e.is_float() => (e, format!(
                "{q} T parpy_mod_S(T a, T b) {{\n  T r = FMOD(a, b);\n  if (r != 0) {{\n    if ((r < 0) != (b < 0)) {{\n      r += b;\n    }}\n  }} else {{\n    r = COPYSIGN((T)0, b);\n  }}\n  return r;\n}}\n"
            )),
            PreludeFn::Mod(e) => (e, format!("{q} T parpy_mod_S(T a, T b) {{\n  return b == 0 ? 0 : a % b;\n}}\n")),
            PreludeFn::Shl(e) if e.is_signed_int() => (e, format!(
                "{q} T parpy_shl_S(T a, T b) {{\n  return (b < 0 || b >= BITS) ? 0 : (T)((UW)a << b);\n}}\n"
            )),
            PreludeFn::Shl(e) => (e, format!(
                "{q} T parpy_shl_S(T a, T b) {{\n  return b >= BITS ? 0 : (T)((UW)a << b);\n}}\n"
            )),
            PreludeFn::Shr(e) if e.is_signed_int() => (e, format!(
                "{q} T parpy_shr_S(T a, T b) {{\n  return (b < 0 || b >= BITS) ? (a < 0 ? -1 : 0) : a >> b;\n}}\n"
            )),
            PreludeFn::Shr(e) => (e, format!(
                "{q} T parpy_shr_S(T a, T b) {{\n  return b >= BITS ? 0 : a >> b;\n}}\n"
            )),
            // (an unsigned exponent is never negative: no comparison with
            // 0, which NVRTC warns is pointless, #186-D)
            PreludeFn::Pow(e) if e.is_unsigned_int() => (e, format!(
                "{q} T parpy_pow_S(T b, T e) {{\n  T r = 1;\n  while (e > 0) {{\n    if (e & 1) {{\n      r = (T)((UW)r * (UW)b);\n    }}\n    b = (T)((UW)b * (UW)b);\n    e >>= 1;\n  }}\n  return r;\n}}\n"
            )),
            PreludeFn::Pow(e) => (e, format!(
                "{q} T parpy_pow_S(T b, T e) {{\n  T r = 1;\n  if (e < 0) {{\n    return b == 1 ? 1 : 0;\n  }}\n  while (e > 0) {{\n    if (e & 1) {{\n      r = (T)((UW)r * (UW)b);\n    }}\n    b = (T)((UW)b * (UW)b);\n    e >>= 1;\n  }}\n  return r;\n}}\n"
            )),
            // of the magnitudes (`0 - (UW)a`: the most negative value's
            // too), Euclid's remainders in the unsigned type (no C `%` of
            // the least value by -1); NumPy's lcm is `|a| / gcd * |b|`,
            // wrapping in the type
            PreludeFn::GcdLcm(lcm, e) => {
                let mag = |v: &str| {
                    if e.is_signed_int() {
                        format!("{v} < 0 ? 0 - (UW){v} : (UW){v}")
                    } else {
                        format!("(UW){v}")
                    }
                };
                let (name, ret) = if lcm {
                    ("lcm", "g == 0 ? 0 : (T)(x / g * y)")
                } else {
                    ("gcd", "(T)g")
                };
                (e, format!(
                    "{q} T parpy_{name}_S(T a, T b) {{\n  UW x = {};\n  UW y = {};\n  UW g = y, r = x;\n  while (r != 0) {{\n    UW t = g % r;\n    g = r;\n    r = t;\n  }}\n  return {ret};\n}}\n",
                    mag("a"),
                    mag("b"),
                ))
            }
            // float16 in float: the product of two halves is exact there
            PreludeFn::Square(ElemTy::F16) => (ElemTy::F16, format!("{q} T parpy_square_S(T a) {{\n  return (T)((float)a * (float)a);\n}}\n")),
            PreludeFn::Square(e) => (e, format!("{q} T parpy_square_S(T a) {{\n  return a * a;\n}}\n")),
            PreludeFn::MaxMin(rule, min, e) => {
                let max = !min;
                let mut text = format!(
                    "{q} T parpy_{}_{}(T a, T b) {{\n  return {};\n}}\n",
                    rule_helper(max, rule),
                    e.short_name(),
                    max_min_rule(max, rule, e, "a", "b")
                );
                if rule == NanRule::NumPy {
                    if let Some(decl) = d.reduction_declaration(max, e)? {
                        text.push_str(&decl);
                        text.push('\n');
                    }
                }
                (e, text)
            }
            // (of the most negative value: itself, as NumPy, not C's overflow)
            PreludeFn::Abs(e) if e.is_signed_int() => (e, format!("{q} T parpy_abs_S(T a) {{\n  return a < 0 ? (T)(0 - (UW)a) : a;\n}}\n")),
            PreludeFn::Abs(e) if e.is_unsigned_int() => (e, format!("{q} T parpy_abs_S(T a) {{\n  return a;\n}}\n")),
            PreludeFn::Abs(e) => (e, format!("{q} T parpy_abs_S(T a) {{\n  return a < 0 ? -a : a;\n}}\n")),
            PreludeFn::Sign(e) if e.is_unsigned_int() => (e, format!(
                "{q} T parpy_sign_S(T a) {{\n  return a > 0 ? 1 : 0;\n}}\n"
            )),
            PreludeFn::Sign(e) => (e, format!(
                "{q} T parpy_sign_S(T a) {{\n  return a > (T)0 ? (T)1 : (a < (T)0 ? (T)-1 : (a == (T)0 ? (T)0 : a));\n}}\n"
            )),
            PreludeFn::Warp(..)
            | PreludeFn::Cluster(..)
            | PreludeFn::NarrowedFloats
            | PreludeFn::Heap
            | PreludeFn::CpuThreads => continue,
            // (used by host code alone, it is still in a GPU's device
            // code: `unused` keeps NVRTC quiet)
            // the failure out of line and cold, so the checks' fast path is
            // a comparison and a branch not taken. (Measured on an H200, this
            // did not lower the cost of checks on indices read from arrays:
            // CSR SpMV 0.061 -> 0.057 ms, 0.020 without checks; the loop
            // with checks is still not unrolled.)
            PreludeFn::BoundsFail => (ElemTy::I64, format!(
                "{} __attribute__((unused)) T parpy_bounds_fail(T i, T site, T *rec) {{\n{}  return 0;\n}}\n",
                d.cold_qualifier(),
                d.bounds_record(&["i".to_string()])
            )),
            PreludeFn::BoundsNote => {
                let values: Vec<String> = (0..MAX_NOTED).map(|k| format!("v{k}")).collect();
                let params: Vec<String> = values.iter().map(|v| format!("T {v}")).collect();
                let rest: Vec<String> = ["1".to_string()].into_iter().chain(values).collect();
                (ElemTy::I64, format!(
                    "{} __attribute__((unused)) T parpy_bounds_note(T site, T *rec, {}) {{\n{}  return 1;\n}}\n",
                    d.cold_qualifier(),
                    params.join(", "),
                    d.bounds_record(&rest)
                ))
            }
            PreludeFn::F64Bits => (ElemTy::I64, format!(
                "{q} __attribute__((unused)) T parpy_f64_bits(double x) {{\n{}}}\n",
                d.f64_bits()
            )),
            PreludeFn::CheckIndex => (ElemTy::I64, format!(
                "{q} __attribute__((unused)) T parpy_check_index(T i, T n, T site, T *rec) {{\n  if (__builtin_expect(i >= 0 && i < n, 1)) {{\n    return i;\n  }}\n  return parpy_bounds_fail(i, site, rec);\n}}\n"
            )),
            PreludeFn::FloatToInt(e) => {
                let (i64t, i32t, u64t) = (
                    d.scalar_type(ElemTy::I64)?,
                    d.scalar_type(ElemTy::I32)?,
                    d.scalar_type(ElemTy::U64)?,
                );
                let body = match e {
                    ElemTy::I64 | ElemTy::U32 => format!("  return (T)((x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? ({i64t})x : ({i64t})(-9223372036854775807LL - 1));\n"),
                    ElemTy::U64 => format!("  if (x >= 9223372036854775808.0) {{\n    double y = x - 9223372036854775808.0;\n    {i64t} v = y < 9223372036854775808.0 ? ({i64t})y : ({i64t})(-9223372036854775807LL - 1);\n    return (T)(({u64t})v ^ 0x8000000000000000ULL);\n  }}\n  return (T)({u64t})((x >= -9223372036854775808.0) ? ({i64t})x : ({i64t})(-9223372036854775807LL - 1));\n"),
                    _ => format!("  return (T)((x > -2147483649.0 && x < 2147483648.0) ? ({i32t})x : ({i32t})(-2147483647 - 1));\n"),
                };
                // x86-64 C: the processor's conversion (`cvttsd2si`) is
                // NumPy's, as fast as a cast (the portable selects made
                // GCC's loops scalar, 1.3-2x slower); spelled in assembly,
                // as GCC folds the intrinsic of a constant out of range
                // to another value than the processor gives
                let cvt = |w: &str, arg: &str| {
                    format!("  {w} r;\n  __asm__(\"cvttsd2si %1, %0\" : \"=r\"(r) : \"x\"({arg}));\n")
                };
                let x86 = match e {
                    ElemTy::I64 | ElemTy::U32 => format!("{}  return (T)r;\n", cvt(i64t, "x")),
                    ElemTy::U64 => format!(
                        "  uint64_t hi = x >= 9223372036854775808.0;\n  double s = x - (double)hi * 9223372036854775808.0;\n{}  return (T)((uint64_t)r ^ (hi << 63));\n",
                        cvt(i64t, "s")
                    ),
                    _ => format!("{}  return (T)r;\n", cvt(i32t, "x")),
                };
                (e, format!("#if defined(__x86_64__) && !defined(__CUDACC__)\n{q} T parpy_to_S(double x) {{\n{x86}}}\n#else\n{q} T parpy_to_S(double x) {{\n{body}}}\n#endif\n"))
            }
            PreludeFn::WrapIndex(e) => (e, format!(
                "{q} __attribute__((unused)) T parpy_wrap_S(T i, T n) {{\n  if (i < 0) {{\n    return i + n;\n  }}\n  return i;\n}}\n"
            )),
            PreludeFn::CheckDeferred(wrap) => (ElemTy::I64, format!(
                "{q} __attribute__((unused)) T parpy_check_{}index_d(T i, T n, T site, T *bad) {{\n  T j = {};\n  bool ok = (uint64_t)j < (uint64_t)n;\n  bool first = !ok && bad[0] < 0;\n  bad[0] = first ? site : bad[0];\n  bad[1] = first ? i : bad[1];\n  return ok ? j : 0;\n}}\n",
                if wrap { "wrap_" } else { "" },
                if wrap { "i < 0 ? i + n : i" } else { "i" }
            )),
            PreludeFn::CheckWrapIndex => (ElemTy::I64, format!(
                // the common case first: one unsigned comparison (a
                // select before it made CSR SpMV ~10% slower)
                "{q} __attribute__((unused)) T parpy_check_wrap_index(T i, T n, T site, T *rec) {{\n  if (__builtin_expect((uint64_t)i < (uint64_t)n, 1)) {{\n    return i;\n  }}\n  if (i < 0 && i >= -n) {{\n    return i + n;\n  }}\n  return parpy_bounds_fail(i, site, rec);\n}}\n"
            )),
        };
        let ty = d.scalar_type(e)?;
        let mut text = text
            .replace(
                "parpy_floordiv_S",
                &format!("parpy_floordiv_{}", e.short_name()),
            )
            .replace("parpy_mod_S", &format!("parpy_mod_{}", e.short_name()))
            .replace("parpy_pow_S", &format!("parpy_pow_{}", e.short_name()))
            .replace(
                "parpy_square_S",
                &format!("parpy_square_{}", e.short_name()),
            )
            .replace("parpy_abs_S", &format!("parpy_abs_{}", e.short_name()))
            .replace("parpy_wrap_S", &format!("parpy_wrap_{}", e.short_name()))
            .replace("parpy_to_S", &format!("parpy_to_{}", e.short_name()))
            .replace("parpy_sign_S", &format!("parpy_sign_{}", e.short_name()))
            .replace("parpy_shl_S", &format!("parpy_shl_{}", e.short_name()))
            .replace("parpy_shr_S", &format!("parpy_shr_{}", e.short_name()))
            .replace("parpy_gcd_S", &format!("parpy_gcd_{}", e.short_name()))
            .replace("parpy_lcm_S", &format!("parpy_lcm_{}", e.short_name()))
            .replace("BITS", &(8 * e.size()).to_string());
        if e.is_float() {
            // the float16 helpers compute in float
            let m = if e == ElemTy::F16 { ElemTy::F32 } else { e };
            text = text
                .replace("FMOD", &d.math_name_extra("fmod", m)?)
                .replace("COPYSIGN", &d.math_name_extra("copysign", m)?)
                .replace("FLOOR", &d.math_name(MathFn::Floor, m)?);
        }
        // Replace the type placeholders `T` and `UW` (an unsigned type at
        // least as wide, and not promoted to `int`) as whole words only.
        let uty = d.scalar_type(if e.size() <= 4 {
            ElemTy::U32
        } else {
            ElemTy::U64
        })?;
        let mut typed = String::new();
        let mut word = String::new();
        for c in text.chars().chain(std::iter::once('\n')) {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
                continue;
            }
            typed.push_str(match word.as_str() {
                "T" => ty,
                "UW" => uty,
                w => w,
            });
            word.clear();
            typed.push(c);
        }
        typed.pop();
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&typed);
    }
    Ok(out)
}

/// Extra math names the prelude needs (not in [`MathFn`]).
trait MathExtra {
    fn math_name_extra(&self, base: &str, e: ElemTy) -> Result<String, EmitError>;
}

impl<D: Dialect> MathExtra for D {
    fn math_name_extra(&self, base: &str, e: ElemTy) -> Result<String, EmitError> {
        // Derive the suffix convention from a known function.
        let sqrt = self.math_name(MathFn::Sqrt, e)?;
        Ok(format!(
            "{base}{}",
            &sqrt[sqrt.find("sqrt").map(|i| i + 4).unwrap_or(sqrt.len())..]
        ))
    }
}

struct FnWriter<'a, D: Dialect> {
    d: &'a D,
    p: &'a Program,
    f: &'a Function,
    role: FnRole,
    globals: &'a Globals,
    written: &'a BTreeSet<usize>,
    prelude: &'a mut BTreeSet<PreludeFn>,
    names: Vec<String>,
    /// (block id, statement index) -> locals to declare before it.
    decls: BTreeMap<(usize, usize), Vec<VarId>>,
    read: BTreeSet<VarId>,
    next_block: usize,
    out: String,
    in_parallel: bool,
    in_vector: bool,
    /// Printing an innermost loop whose checks record after it
    /// ([`Dialect::defers_loop_checks`]): the record they name.
    deferred: Option<Option<String>>,
    /// Printing an array index or loop bound: its arithmetic is not wrapped
    /// ([`Dialect::signed_overflow_wraps`]); an index that overflows is out
    /// of bounds anyway, and the target's compiler keeps its address
    /// arithmetic.
    in_index: bool,
    /// The loop variables of the function (see [`FnWriter::index_like`]).
    loop_vars: BTreeSet<VarId>,
    /// A local whose declaration is fused with the assignment being written.
    fuse: Option<VarId>,
    /// The next loop was covered by its parent's introduction.
    absorbed: bool,
    /// Host local arrays that are device temporaries (GPU dialects).
    temps: BTreeSet<VarId>,
    /// Lines freeing the device temporaries, run on every exit.
    cleanup: Vec<String>,
    /// Per open block: the lines freeing its heap arrays.
    frees: Vec<Vec<String>>,
    /// Per open loop: how many entries of `frees` were open around it (a
    /// `break` / `continue` frees the heap arrays of the blocks it leaves).
    loop_frees: Vec<usize>,
}

impl<'a, D: Dialect> FnWriter<'a, D> {
    fn new(
        d: &'a D,
        p: &'a Program,
        f: &'a Function,
        role: FnRole,
        globals: &'a Globals,
        written: &'a BTreeSet<usize>,
        prelude: &'a mut BTreeSet<PreludeFn>,
    ) -> Self {
        let mut namer = globals.base.clone();
        let names = f.vars.iter().map(|v| namer.fresh(&v.name)).collect();
        let mut loop_vars = BTreeSet::new();
        crate::ir::visit::walk_stmts(&f.body, &mut |s| {
            if let StmtKind::For(l) = &s.kind {
                loop_vars.insert(l.var);
            }
        });
        FnWriter {
            d,
            p,
            f,
            role,
            globals,
            written,
            prelude,
            names,
            decls: BTreeMap::new(),
            read: BTreeSet::new(),
            next_block: 0,
            out: String::new(),
            in_parallel: false,
            in_vector: false,
            deferred: None,
            in_index: false,
            loop_vars,
            fuse: None,
            absorbed: false,
            temps: BTreeSet::new(),
            cleanup: vec![],
            frees: vec![],
            loop_frees: vec![],
        }
    }

    fn name(&self, v: VarId) -> String {
        self.names
            .get(v.0 as usize)
            .cloned()
            .unwrap_or_else(|| format!("parpy_bad_var_{}", v.0))
    }

    fn ty_text(&self, t: &Type) -> Result<&'static str, EmitError> {
        match t {
            Type::Scalar(e) | Type::Array { elem: e, .. } => self.d.scalar_type(*e),
            Type::Void => Ok("void"),
        }
    }

    fn write(mut self, name: &str, launch: Option<&LaunchInfo>) -> Result<String, EmitError> {
        if self.role == FnRole::Host && self.d.device_temps() {
            self.temps = self.f.local_arrays().collect();
        }
        let plan = super::c_decls::plan(self.f, &self.temps);
        self.decls = plan.decls;
        self.read = plan.read;
        let mut params = vec![];
        for (i, &v) in self.f.params.iter().enumerate() {
            let var = self.f.var(v);
            let ty = self.ty_text(&var.ty)?;
            params.push(self.d.param(
                self.role,
                ty,
                &self.name(v),
                var.ty.is_array(),
                self.written.contains(&i),
            ));
        }
        let ret = self.ty_text(&self.f.ret)?;
        let header = match (self.role, launch) {
            (FnRole::Kernel, Some(l)) => {
                self.d
                    .kernel_header(name, self.f, &self.names, self.written, l)
            }
            _ => None,
        };
        match header {
            Some(h) => {
                let (sig, prologue) = h?;
                let _ = writeln!(self.out, "{sig} {{");
                for l in prologue {
                    self.line(1, &l);
                }
            }
            None => {
                let sig = self.d.signature(self.role, ret, name, &params, launch);
                let _ = writeln!(self.out, "{sig} {{");
            }
        }
        let mut used = BTreeSet::new();
        for s in &self.f.body {
            crate::ir::visit::stmt_uses(s, &mut used, &mut BTreeSet::new());
        }
        for &v in &self.f.params {
            if !used.contains(&v) {
                let _ = writeln!(self.out, "  (void){};", self.name(v));
            }
        }
        for (i, var) in self.f.vars.iter().enumerate() {
            if !matches!(var.kind, VarKind::Shared | VarKind::Register) {
                continue;
            }
            let Type::Array { elem, shape } = &var.ty else {
                return Err(format!("kernel-local variable `{}` is not an array", var.name).into());
            };
            let ty = self.d.scalar_type(*elem)?;
            let name = self.name(VarId(i as u32));
            let len = shape.iter().product::<i64>().max(1);
            let text = if var.kind == VarKind::Shared {
                self.d.shared_decl(ty, &name, len)?
            } else {
                // a thread's own array: the same declaration in every dialect
                format!("{ty} {name}[{len}];")
            };
            self.line(1, &text);
        }
        for v in self.temps.clone() {
            let var = self.f.var(v);
            let ty = self.ty_text(&var.ty)?;
            let n = match &var.ty {
                Type::Array { shape, .. } => shape.iter().product::<i64>().max(1),
                _ => 1,
            };
            let name = self.name(v);
            for l in self.d.host_alloc(ty, &name, n, &self.cleanup) {
                self.line(1, &l);
            }
            let mut free = self.d.host_free(&name);
            free.extend(std::mem::take(&mut self.cleanup));
            self.cleanup = free;
        }
        self.next_block = 0;
        let body = &self.f.body;
        self.block(body, 1)?;
        if self.role == FnRole::Host {
            for l in self.d.host_end(&self.cleanup) {
                self.line(1, &l);
            }
        }
        self.out.push_str("}\n");
        Ok(self.out)
    }

    // ---- statements -----------------------------------------------------

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    fn line(&mut self, depth: usize, text: &str) {
        self.indent(depth);
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn block(&mut self, b: &[Stmt], depth: usize) -> Result<(), EmitError> {
        self.frees.push(vec![]);
        self.block_stmts(b, depth)?;
        for l in self.frees.pop().unwrap_or_default() {
            self.line(depth, &l);
        }
        Ok(())
    }

    /// Frees the heap arrays of the open blocks from the `open`-th on,
    /// innermost first (on the way out of them: `return`, `break`,
    /// `continue`).
    fn free_from(&mut self, open: usize, depth: usize) {
        let lines: Vec<String> = self.frees[open..].iter().rev().flatten().cloned().collect();
        for l in lines {
            self.line(depth, &l);
        }
    }

    /// The body of a `for` / `while` loop: the block its `break` and
    /// `continue` statements leave.
    fn loop_body(&mut self, b: &[Stmt], depth: usize) -> Result<(), EmitError> {
        self.loop_frees.push(self.frees.len());
        let r = self.block(b, depth);
        self.loop_frees.pop();
        r
    }

    fn block_stmts(&mut self, b: &[Stmt], depth: usize) -> Result<(), EmitError> {
        let id = self.next_block;
        self.next_block += 1;
        for (i, s) in b.iter().enumerate() {
            if let Some(vars) = self.decls.get(&(id, i)).cloned() {
                for v in vars {
                    let fusable = matches!(&s.kind, StmtKind::Assign { dst: Place::Var(d), value }
                        if *d == v && !crate::ir::visit::uses_var(value, v));
                    if fusable {
                        self.fuse = Some(v);
                        continue;
                    }
                    let var = self.f.var(v);
                    let ty = self.ty_text(&var.ty)?;
                    let decl = match &var.ty {
                        Type::Array { shape, elem } => {
                            let n: i64 = shape.iter().product::<i64>().max(1);
                            let name = self.name(v);
                            let heap = if n.saturating_mul(elem.size() as i64) > HEAP_BYTES {
                                self.d.heap_array(ty, &name, n)
                            } else {
                                None
                            };
                            let bytes = n.saturating_mul(elem.size() as i64);
                            if let (None, Some((limit, what))) = (&heap, self.d.local_array_limit())
                            {
                                if bytes > limit {
                                    return Err(EmitError::Unsupported(format!(
                                        "the array `{}` takes {} per thread, more than {what} \
                                         ({}): allocate it outside the kernel and pass it in, or \
                                         work on shorter rows{}",
                                        var.name,
                                        human_bytes(bytes),
                                        human_bytes(limit),
                                        if var.name.ends_with("_rhs") {
                                            " (it holds the right-hand side of an overlapping \
                                             slice assignment: writing the result into another \
                                             array needs none)"
                                        } else {
                                            ""
                                        }
                                    )));
                                }
                            }
                            match heap {
                                Some((decl, free)) => {
                                    self.prelude.insert(PreludeFn::Heap);
                                    self.frees.last_mut().ok_or("no open block")?.push(free);
                                    decl
                                }
                                None => {
                                    format!("{ty} {name}[{n}]{};", self.d.stack_array_suffix(bytes))
                                }
                            }
                        }
                        _ => format!("{ty} {};", self.name(v)),
                    };
                    self.line(depth, &decl);
                    if !self.read.contains(&v) {
                        let t = format!("(void){};", self.name(v));
                        self.line(depth, &t);
                    }
                }
            }
            self.stmt(s, depth)?;
        }
        Ok(())
    }

    /// A host statement that moves one element to or from a device
    /// temporary (GPU dialects): `tmp[i] = e` or `v = tmp[i]`.
    fn temp_transfer(
        &mut self,
        dst: &Place,
        value: &Expr,
        depth: usize,
    ) -> Result<bool, EmitError> {
        if self.temps.is_empty() {
            return Ok(false);
        }
        if let Place::Index { array, indices } = dst {
            if self.temps.contains(array) {
                let ty = self.ty_text(&self.f.var(*array).ty)?;
                let at = self.flat_index(*array, indices)?;
                let v = self.expr(value)?.0;
                let name = self.name(*array);
                for l in self.d.host_store(ty, &name, &at, &v, &self.cleanup) {
                    self.line(depth, &l);
                }
                return Ok(true);
            }
        }
        if let (Place::Var(d), ExprKind::Index { array, indices }) = (dst, &value.kind) {
            if self.temps.contains(array) {
                let ty = self.ty_text(&self.f.var(*d).ty)?;
                if self.fuse == Some(*d) {
                    self.fuse = None;
                    let t = format!("{ty} {};", self.name(*d));
                    self.line(depth, &t);
                }
                let at = self.flat_index(*array, indices)?;
                let (dn, tn) = (self.name(*d), self.name(*array));
                for l in self.d.host_load(ty, &dn, &tn, &at, &self.cleanup) {
                    self.line(depth, &l);
                }
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) -> Result<(), EmitError> {
        match &s.kind {
            StmtKind::Assign { dst, value } if self.temp_transfer(dst, value, depth)? => {}
            StmtKind::Barrier => {
                let b = self.d.barrier()?;
                self.line(depth, &b);
            }
            StmtKind::Assign {
                dst: Place::Index { array, indices },
                value,
            } if crate::ir::atomic_of(value).is_some() => {
                let (op, v) = crate::ir::atomic_of(value).ok_or("no atomic")?;
                let e = v.ty.elem().ok_or("atomic update of a non-scalar")?;
                let v = self.expr(v)?.0;
                let place = self.index(*array, indices)?;
                let ty = self.d.scalar_type(e)?;
                let text = self.d.atomic_update(op, e, ty, &place, &v)?;
                for l in text.lines() {
                    self.line(depth, l);
                }
            }
            StmtKind::Assign { dst, value } => {
                let v = self.expr(value)?.0;
                match dst {
                    Place::Var(id) if self.fuse == Some(*id) => {
                        self.fuse = None;
                        let ty = self.ty_text(&self.f.var(*id).ty)?;
                        let t = format!("{ty} {} = {v};", self.name(*id));
                        self.line(depth, &t);
                        if !self.read.contains(id) {
                            let t = format!("(void){};", self.name(*id));
                            self.line(depth, &t);
                        }
                    }
                    Place::Var(id) => {
                        let t = format!("{} = {v};", self.name(*id));
                        self.line(depth, &t);
                    }
                    Place::Index { array, indices } => {
                        let d = self.index(*array, indices)?;
                        let t = format!("{d} = {v};");
                        self.line(depth, &t);
                    }
                }
            }
            StmtKind::For(l) => self.for_loop(l, depth)?,
            StmtKind::While { cond, body } => {
                let c = self.expr(cond)?.0;
                self.line(depth, &format!("while ({c}) {{"));
                self.loop_body(body, depth + 1)?;
                self.line(depth, "}");
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                let c = self.expr(cond)?.0;
                self.line(depth, &format!("if ({c}) {{"));
                self.block(then_body, depth + 1)?;
                let mut rest: &[Stmt] = else_body;
                loop {
                    if rest.is_empty() {
                        // Keep block numbering in step with the planner.
                        self.next_block += 1;
                        self.line(depth, "}");
                        break;
                    }
                    let else_id = self.next_block;
                    if let [Stmt {
                        kind:
                            StmtKind::If {
                                cond,
                                then_body,
                                else_body,
                            },
                        ..
                    }] = rest
                    {
                        if !self.decls.contains_key(&(else_id, 0)) {
                            // `else { if ... }` is written `else if ...`.
                            self.next_block += 1;
                            let c = self.expr(cond)?.0;
                            self.line(depth, &format!("}} else if ({c}) {{"));
                            self.block(then_body, depth + 1)?;
                            rest = else_body;
                            continue;
                        }
                    }
                    self.line(depth, "} else {");
                    self.block(rest, depth + 1)?;
                    self.line(depth, "}");
                    break;
                }
            }
            StmtKind::Return(e) => match e {
                // the host function's early return ends it as its end does:
                // the device temporaries freed, and the dialect's status
                // (CUDA's host function returns 0; a bare `return;` there
                // was an error for nvcc in compile_string)
                None if self.role == FnRole::Host => {
                    self.free_from(0, depth);
                    let end = self.d.host_end(&self.cleanup);
                    let returns = end.last().is_some_and(|l| l.starts_with("return"));
                    for l in end {
                        self.line(depth, &l);
                    }
                    if !returns {
                        self.line(depth, "return;");
                    }
                }
                // (a heap array is a statement's temporary: never read here)
                _ if self.frees.iter().any(|f| !f.is_empty()) => {
                    self.free_from(0, depth);
                    let e = match e {
                        Some(e) => format!(" {}", self.expr(e)?.0),
                        None => String::new(),
                    };
                    self.line(depth, &format!("return{e};"));
                }
                Some(e) => {
                    let e = self.expr(e)?.0;
                    self.line(depth, &format!("return {e};"));
                }
                None => self.line(depth, "return;"),
            },
            StmtKind::Expr(e) => {
                let e = self.expr(e)?.0;
                self.line(depth, &format!("{e};"));
            }
            StmtKind::Break | StmtKind::Continue => {
                let open = *self.loop_frees.last().ok_or("`break` outside a loop")?;
                self.free_from(open, depth);
                let word = if matches!(s.kind, StmtKind::Break) {
                    "break;"
                } else {
                    "continue;"
                };
                self.line(depth, word);
            }
            StmtKind::OnDevice(body) => {
                self.line(depth, "{");
                self.block(body, depth + 1)?;
                self.line(depth, "}");
            }
            StmtKind::Callback(c) => self.callback(c, depth)?,
            StmtKind::Launch { kernel, args } => {
                let k = self
                    .p
                    .kernels
                    .get(kernel.0 as usize)
                    .ok_or("launch of an unknown kernel")?;
                let name = self.globals.kernels[kernel.0 as usize].clone();
                let args: Vec<String> = args.iter().map(|a| self.name(*a)).collect();
                let t = self.d.launch_kernel(&name, k, &args, &self.cleanup);
                for l in t.lines() {
                    self.line(depth, l);
                }
            }
        }
        Ok(())
    }

    /// A callback call: its arguments in an array of pointers, as the entry
    /// ABI passes them (scalars in 8-byte slots).
    fn callback(&mut self, c: &Callback, depth: usize) -> Result<(), EmitError> {
        self.line(depth, "{");
        let argv = "parpy_cb_args";
        let n = c.args.len().max(1);
        self.line(depth + 1, &format!("void *{argv}[{n}];"));
        for (i, a) in c.args.iter().enumerate() {
            match a {
                CallArg::Array { array, prefix } => {
                    let at = if prefix.is_empty() {
                        "0".to_string()
                    } else {
                        self.flat_prefix(*array, prefix)?
                    };
                    let t = format!("{argv}[{i}] = (void *)&{}[{at}];", self.name(*array));
                    self.line(depth + 1, &t);
                }
                CallArg::Scalar(e) => {
                    let slot = match e.ty.elem() {
                        Some(t) if t.is_float() => "double",
                        _ => "int64_t",
                    };
                    let v = self.expr(e)?.0;
                    self.line(depth + 1, &format!("{slot} parpy_cb_{i} = ({slot})({v});"));
                    self.line(depth + 1, &format!("{argv}[{i}] = &parpy_cb_{i};"));
                }
            }
        }
        for l in self.d.callback_call(c.site, argv, &self.cleanup) {
            self.line(depth + 1, &l);
        }
        self.line(depth, "}");
        Ok(())
    }

    /// The flat offset of element `prefix + [0, ...]` of `array`.
    fn flat_prefix(&mut self, array: VarId, prefix: &[Expr]) -> Result<String, EmitError> {
        let Type::Array { shape, .. } = &self.f.var(array).ty else {
            return Err("a callback view of a scalar".into());
        };
        let mut full = prefix.to_vec();
        let span = prefix[0].span;
        full.extend((prefix.len()..shape.len()).map(|_| Expr::int(0, ElemTy::I64, span)));
        self.flat_index(array, &full)
    }

    fn for_loop(&mut self, l: &ForLoop, depth: usize) -> Result<(), EmitError> {
        use crate::ir::visit::uses_var;
        let acc_name = l.reduction.map(|r| self.name(r.acc));
        let perfect_par_child = l.reduction.is_none()
            && matches!(l.body.as_slice(), [Stmt { kind: StmtKind::For(c), .. }]
                if c.par.is_some()
                    && c.reduction.is_none()
                    && !uses_var(&c.lo, l.var)
                    && !uses_var(&c.hi, l.var));
        let absorbed = std::mem::take(&mut self.absorbed);
        // (a loop OpenMP would count wrongly is no canonical loop: its
        // nest is not collapsed)
        let perfect_par_child = perfect_par_child
            && !self.counts_overflow(l)
            && matches!(l.body.as_slice(), [Stmt { kind: StmtKind::For(c), .. }] if !self.counts_overflow(c));
        let ctx = LoopCtx {
            par: l.par,
            reduction: l.reduction.and_then(|r| {
                let e = self.f.var(r.acc).ty.elem()?;
                Some((r.op, acc_name.as_deref().unwrap_or(""), e))
            }),
            outermost_parallel: l.par.is_some() && !self.in_parallel,
            inside_vector: self.in_vector,
            perfect_par_child,
            trip_count: l.trip_count(),
            absorbed,
            role: self.role,
            lanes_independent: (l.par.is_some() || l.reduction.is_some())
                && crate::ir::visit::lanes_independent(&l.body),
        };
        // a float max/min reduction clause names the dialect's declared
        // reduction, printed with the helper it combines with (a dialect
        // without declared reductions wants no helper: an unused one is a
        // warning, an error under -Werror)
        if let Some((op @ (ReduceOp::Max | ReduceOp::Min), _, e)) = ctx.reduction {
            let min = op == ReduceOp::Min;
            if e.is_float() && self.d.reduction_declaration(!min, e)?.is_some() {
                self.prelude
                    .insert(PreludeFn::MaxMin(NanRule::NumPy, min, e));
            }
        }
        let intro = self.d.loop_intro(&ctx);
        // (not in a vector loop: its lanes would share the record)
        let defer = self.deferred.is_none()
            && self.d.defers_loop_checks(self.role)
            && l.par.is_none()
            && !intro.vector
            && !self.in_vector
            && defers_checks(&l.body);
        let depth = if defer {
            self.line(depth, "{");
            self.line(depth + 1, "int64_t parpy_bad[2] = {-1, 0};");
            self.deferred = Some(None);
            depth + 1
        } else {
            depth
        };
        self.absorbed = intro.absorbs_child;
        if l.unroll {
            // understood by nvcc/NVRTC and Metal's compiler (clang)
            self.line(depth, "#pragma unroll");
        }
        for line in &intro.lines {
            self.line(depth, line);
        }
        let v = self.name(l.var);
        let ty = self.ty_text(&self.f.var(l.var).ty)?;
        // loop bounds are index arithmetic (see `in_index`)
        let (lo, hi) =
            self.as_index(|w| -> Result<_, EmitError> { Ok((w.expr(&l.lo)?.0, w.expr(&l.hi)?)) })?;
        let hi = paren(hi, P_REL + 1);
        let by = l.step.unsigned_abs();
        // a step past a bound near the end of the counter's type would
        // overflow (and loop forever: `range(0, 2**63 - 1, 2**62)`): where
        // the bound is the program's argument and may lie there, the step
        // stops at the bound (`hi -/+ by` in unsigned arithmetic, which
        // wraps; where it wraps, the step cannot overflow). The bounds
        // parpy makes itself (from locals) come from array sizes.
        let user_bound = reads_param(self.f, &l.hi) || matches!(l.hi.kind, ExprKind::Int(_));
        // (a loop under a pragma keeps OpenMP's canonical `i += step`:
        // OpenMP counts its trips itself)
        let near_end = by > 1 && user_bound && intro.lines.is_empty() && {
            let last = crate::ir::range::Ranges::default()
                .expr(self.f, &l.hi)
                .map(|r| if l.step > 0 { r.hi } else { r.lo });
            let past = last.map(|h| h + (l.step - l.step.signum()) as i128);
            let ty_range = self
                .f
                .var(l.var)
                .ty
                .elem()
                .and_then(crate::ir::range::Interval::of_type);
            !matches!((past, ty_range), (Some(p), Some(t)) if t.lo <= p && p <= t.hi)
        };
        if !intro.lines.is_empty() && self.counts_overflow(l) {
            // OpenMP counts the trips of `i = lo; i < hi; i += by` in the
            // counter's type, where `hi - lo` (or the step past the end)
            // overflows (`range(2**62, -2**62 - 1, -2**61)` ran no
            // iteration): the trips counted in uint64, which holds every
            // difference, and `i` computed from the trip number
            let k = format!("parpy_trip_{v}");
            let (before, sign) = if l.step > 0 { ("<", "+") } else { (">", "-") };
            let (a, b) = if l.step > 0 { (&hi, &lo) } else { (&lo, &hi) };
            self.line(
                depth,
                &format!(
                    "for (uint64_t {k} = 0; {k} < ({lo} {before} {hi} ? ((uint64_t)({a}) - (uint64_t)({b}) - 1u) / {by}u + 1u : 0u); {k}++) {{"
                ),
            );
            self.line(
                depth + 1,
                &format!("{ty} {v} = ({ty})((uint64_t)({lo}) {sign} {k} * {by}u);"),
            );
        } else {
            let (cmp, step) = match (l.step > 0, near_end) {
                (true, false) => ("<", format!("{v} += {by}")),
                (false, false) => (">", format!("{v} -= {by}")),
                (true, true) => (
                    "<",
                    format!("{v} = {v} > ({ty})((uint64_t){hi} - {by}u) ? {hi} : {v} + {by}"),
                ),
                (false, true) => (
                    ">",
                    format!("{v} = {v} < ({ty})((uint64_t){hi} + {by}u) ? {hi} : {v} - {by}"),
                ),
            };
            self.line(
                depth,
                &format!("for ({ty} {v} = {lo}; {v} {cmp} {hi}; {step}) {{"),
            );
        }
        let (was_par, was_vec) = (self.in_parallel, self.in_vector);
        if l.par.is_some() {
            self.in_parallel = true;
        }
        if intro.vector {
            self.in_vector = true;
        }
        self.loop_body(&l.body, depth + 1)?;
        self.in_parallel = was_par;
        self.in_vector = was_vec;
        self.line(depth, "}");
        if defer {
            if let Some(Some(rec)) = self.deferred.take() {
                self.line(depth, "if (parpy_bad[0] >= 0) {");
                self.line(
                    depth + 1,
                    &format!("parpy_bounds_fail(parpy_bad[1], parpy_bad[0], {rec});"),
                );
                self.line(depth, "}");
            }
            self.line(depth - 1, "}");
        }
        Ok(())
    }

    /// Whether OpenMP's count of the trips of `l` written canonically
    /// (`i = lo; i < hi; i += by`) overflows the counter's type: it
    /// computes `hi - lo` plus or minus `by - 1` there, which must stay
    /// inside it for every value the bounds may take. (Bounds read at run
    /// time, sizes and counts, are taken to be far from the type's ends:
    /// the canonical loop is what the Cpu passes and OpenMP optimize.)
    fn counts_overflow(&self, l: &ForLoop) -> bool {
        use crate::ir::range::{Interval, Ranges};
        let Some(t) = self.f.var(l.var).ty.elem().and_then(Interval::of_type) else {
            return false;
        };
        let of = |e: &Expr| {
            let mut reads = false;
            crate::ir::visit::expr_vars(e, &mut |_| reads = true);
            (!reads)
                .then(|| Ranges::default().expr(self.f, e))
                .flatten()
        };
        let (Some(a), Some(b)) = (of(&l.lo), of(&l.hi)) else {
            return false;
        };
        let by = l.step.unsigned_abs() as i128;
        let (least, most) = (b.lo - a.hi - (by - 1), b.hi - a.lo + (by - 1));
        least < t.lo || most > t.hi
    }

    // ---- expressions ----------------------------------------------------

    fn index(&mut self, array: VarId, indices: &[Expr]) -> Result<String, EmitError> {
        let flat = self.flat_index(array, indices)?;
        if !self.temps.is_empty() && self.temps.contains(&array) {
            return Err(format!(
                "host code reads the device temporary `{}` inside an expression",
                self.f.var(array).name
            )
            .into());
        }
        Ok(format!("{}[{flat}]", self.name(array)))
    }

    /// The row-major offset of `array[indices]`.
    fn flat_index(&mut self, array: VarId, indices: &[Expr]) -> Result<String, EmitError> {
        self.as_index(|w| w.flat_index_of(array, indices))
    }

    /// `f` printing index arithmetic (see `in_index`).
    fn as_index<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let outer = std::mem::replace(&mut self.in_index, true);
        let r = f(self);
        self.in_index = outer;
        r
    }

    fn flat_index_of(&mut self, array: VarId, indices: &[Expr]) -> Result<String, EmitError> {
        let var = self.f.var(array);
        let shape = match &var.ty {
            Type::Array { shape, .. } => shape.clone(),
            _ => return Err(format!("`{}` is indexed but is not an array", var.name).into()),
        };
        if shape.len() != indices.len() {
            return Err(format!(
                "`{}` has {} dimensions but is indexed with {}",
                var.name,
                shape.len(),
                indices.len()
            )
            .into());
        }
        // Offsets of arrays past 2^31 elements need 64 bits: a literal index
        // is multiplied here, a narrower index is widened first.
        let wide = shape.iter().product::<i64>() > i32::MAX as i64;
        // Trailing indices that split one integer row-major add up to it.
        let run = crate::ir::affine::flattened_indices(indices, &shape);
        let mut flat: Option<(String, u8)> = None;
        for (k, ix) in indices.iter().enumerate() {
            let (ix, stride) = match run {
                Some((m, _)) if k > m => break,
                Some((m, a)) if k == m => (a, 1),
                _ => (ix, shape[k + 1..].iter().product()),
            };
            let e = match ix.kind {
                ExprKind::Int(c) if stride != 1 => {
                    let lit = self.d.int_literal(c.saturating_mul(stride), ElemTy::I64);
                    (lit, P_ATOM)
                }
                _ if wide && !matches!(ix.ty.elem(), Some(ElemTy::I64 | ElemTy::U64)) => {
                    let e = self.expr(ix)?;
                    let t = self.d.scalar_type(ElemTy::I64)?;
                    (format!("({t}){}", paren(e, P_UNARY)), P_UNARY)
                }
                _ => self.expr(ix)?,
            };
            let term = if stride == 1 || matches!(ix.kind, ExprKind::Int(_)) {
                e
            } else {
                (
                    format!(
                        "{} * {}",
                        paren(e, P_MUL),
                        self.d.int_literal(stride, ElemTy::I64)
                    ),
                    P_MUL,
                )
            };
            flat = Some(match flat {
                None => term,
                Some(acc) => (
                    format!("{} + {}", paren(acc, P_ADD), paren(term, P_ADD + 1)),
                    P_ADD,
                ),
            });
        }
        Ok(flat.map(|f| f.0).unwrap_or_else(|| "0".into()))
    }

    /// A float literal of type `ty`; a float16 one is cast, so it is rounded
    /// to float16 first as NumPy rounds a weak Python float.
    fn float_lit(&self, v: f64, ty: ElemTy) -> Result<(String, u8), EmitError> {
        let (text, p) = float_literal(v, ty);
        if ty == ElemTy::F16 {
            return Ok((format!("({}){text}", self.d.scalar_type(ty)?), P_UNARY));
        }
        Ok((text, p))
    }

    fn expr(&mut self, e: &Expr) -> Result<(String, u8), EmitError> {
        let elem = e.ty.elem();
        Ok(match &e.kind {
            ExprKind::Bool(b) => ((if *b { "true" } else { "false" }).into(), P_ATOM),
            ExprKind::Int(i) => {
                let ty = elem.unwrap_or(ElemTy::I64);
                if ty.is_float() {
                    self.float_lit(*i as f64, ty)?
                } else if ty == ElemTy::Bool {
                    ((if *i != 0 { "true" } else { "false" }).into(), P_ATOM)
                } else {
                    let s = self.d.int_literal(*i, ty);
                    let p = if s.starts_with('-') { P_UNARY } else { P_ATOM };
                    (s, p)
                }
            }
            ExprKind::Float(f) => self.float_lit(*f, elem.unwrap_or(ElemTy::F64))?,
            ExprKind::Var(v) => (self.name(*v), P_ATOM),
            ExprKind::Index { array, indices } => (self.index(*array, indices)?, P_POSTFIX),
            ExprKind::Assert { .. } => {
                return Err(EmitError::Invariant(
                    "an `assert` left after `passes::check_bounds`".into(),
                ))
            }
            ExprKind::Note {
                site,
                record,
                values,
            } => {
                self.prelude.insert(PreludeFn::BoundsNote);
                let mut args = vec![site.to_string(), self.expr(record)?.0];
                for v in values {
                    // an int64 (ints, bools) or its float64's bits
                    let float = v.elem().is_float();
                    let to = if float { ElemTy::F64 } else { ElemTy::I64 };
                    let wide = Expr::new(
                        ExprKind::Convert {
                            arg: Box::new(v.clone()),
                        },
                        Type::Scalar(to),
                        v.span,
                    );
                    let text = self.expr(&wide)?.0;
                    if float {
                        self.prelude.insert(PreludeFn::F64Bits);
                        args.push(format!("parpy_f64_bits({text})"));
                    } else {
                        args.push(text);
                    }
                }
                args.resize(2 + MAX_NOTED, "0".to_string());
                (format!("parpy_bounds_note({})", args.join(", ")), P_POSTFIX)
            }
            ExprKind::CheckIndex {
                arg,
                size,
                site,
                record,
                wrap,
            } => {
                // the index checked (hoisted before a loop, or in place) is
                // index arithmetic (see `in_index`)
                let a = self.as_index(|w| w.expr(arg))?.0;
                let n = self.d.int_literal(*size, ElemTy::I64);
                match record {
                    Some(r) if self.deferred.is_some() => {
                        self.prelude.insert(PreludeFn::CheckDeferred(*wrap));
                        self.prelude.insert(PreludeFn::BoundsFail);
                        let r = self.expr(r)?.0;
                        self.deferred = Some(Some(r));
                        let name = if *wrap {
                            "parpy_check_wrap_index_d"
                        } else {
                            "parpy_check_index_d"
                        };
                        (format!("{name}({a}, {n}, {site}, parpy_bad)"), P_POSTFIX)
                    }
                    Some(r) => {
                        let (f, name) = if *wrap {
                            (PreludeFn::CheckWrapIndex, "parpy_check_wrap_index")
                        } else {
                            (PreludeFn::CheckIndex, "parpy_check_index")
                        };
                        self.prelude.insert(f);
                        self.prelude.insert(PreludeFn::BoundsFail);
                        let r = self.expr(r)?.0;
                        (format!("{name}({a}, {n}, {site}, {r})"), P_POSTFIX)
                    }
                    None if *wrap => {
                        // in the index's own type (32-bit on GPUs by default)
                        let ty = arg.elem();
                        self.prelude.insert(PreludeFn::WrapIndex(ty));
                        let n = self.d.int_literal(*size, ty);
                        (
                            format!("parpy_wrap_{}({a}, {n})", ty.short_name()),
                            P_POSTFIX,
                        )
                    }
                    None => self.expr(arg)?,
                }
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg)?;
                let a = paren(a, P_UNARY);
                if let Some(u) = elem
                    .and_then(|t| self.wrapping(t))
                    .filter(|_| *op == UnOp::Neg)
                {
                    let (t, u) = (
                        self.d.scalar_type(elem.unwrap_or(u))?,
                        self.d.scalar_type(u)?,
                    );
                    return Ok((wrapping_infix("-", t, u, "0", &a), P_UNARY));
                }
                let wrap = *op != UnOp::Not && elem.is_some_and(wraps_narrow);
                let op = match op {
                    UnOp::Neg => "-",
                    UnOp::Not => "!",
                    UnOp::BitNot => "~",
                    // (sema leaves none: `UnOp::Pos`)
                    UnOp::Pos => "+",
                };
                let text = if a.starts_with(['-', '!', '~']) {
                    format!("{op}({a})")
                } else {
                    format!("{op}{a}")
                };
                match elem {
                    // -(-128) and ~ of an 8/16-bit value are ints in C
                    Some(t) if wrap => (format!("({})({text})", self.d.scalar_type(t)?), P_UNARY),
                    _ => (text, P_UNARY),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs)?,
            ExprKind::Select { cond, then, else_ } => {
                // a bitwise or arithmetic condition in parentheses
                // (clang: -Wbitwise-conditional-parentheses, -Wparentheses)
                let (c, p) = self.expr(cond)?;
                let quiet = (P_BOR..=P_BAND).contains(&p) || (P_SHIFT..P_UNARY).contains(&p);
                let c = paren((c, p), if quiet { P_UNARY } else { P_COND + 1 });
                let t = paren(self.expr(then)?, P_COND + 1);
                let f = paren(self.expr(else_)?, P_COND + 1);
                (format!("{c} ? {t} : {f}"), P_COND)
            }
            ExprKind::Convert { arg } => {
                let to = elem.ok_or("conversion to a non-scalar type")?;
                if arg.ty == e.ty {
                    return self.expr(arg);
                }
                if let ExprKind::GpuIndex(g) = &arg.kind {
                    if let Some(t) = self.d.gpu_index_as(*g, to)? {
                        return Ok((t, P_UNARY));
                    }
                }
                let a = self.expr(arg)?;
                let from = arg.ty.elem();
                if to == ElemTy::Bool {
                    // (a float16's zero of its own type: CUDA's `__half !=
                    // 0` is ambiguous)
                    let zero = match from {
                        Some(ElemTy::F16) => self.float_lit(0.0, ElemTy::F16)?.0,
                        _ => "0".to_string(),
                    };
                    (format!("{} != {zero}", paren(a, P_EQ + 1)), P_EQ)
                } else if !to.is_float()
                    && from.is_some_and(|f| f.is_float())
                    && self.d.has_double()
                {
                    // NumPy's conversion of a float, not C's undefined one
                    // for NaN and values out of range (a dialect without
                    // doubles, Metal, keeps its cast)
                    self.prelude.insert(PreludeFn::FloatToInt(to));
                    let a = match from {
                        Some(ElemTy::F16) => format!("(float){}", paren(a, P_UNARY)),
                        _ => a.0,
                    };
                    (format!("parpy_to_{}({a})", to.short_name()), P_POSTFIX)
                } else {
                    if to.is_float() && from.is_some_and(|f| f.is_float() && f.size() > to.size()) {
                        self.prelude.insert(PreludeFn::NarrowedFloats);
                    }
                    let ty = self.d.scalar_type(to)?;
                    (format!("({ty}){}", paren(a, P_UNARY)), P_UNARY)
                }
            }
            ExprKind::Math { func, args } => {
                let ty = args
                    .first()
                    .and_then(|a| a.ty.elem())
                    .unwrap_or(ElemTy::F64);
                let mut a = vec![];
                for x in args {
                    a.push(self.expr(x)?.0);
                }
                let name = if *func == MathFn::Sign {
                    // no library has NumPy's `sign` (NaN stays NaN)
                    self.prelude.insert(PreludeFn::Sign(ty));
                    format!("parpy_sign_{}", ty.short_name())
                } else if ty.is_float() {
                    self.d.math_name(*func, ty)?
                } else {
                    match func {
                        MathFn::Abs => {
                            self.prelude.insert(PreludeFn::Abs(ty));
                            format!("parpy_abs_{}", ty.short_name())
                        }
                        // Floor and ceil of an integer are the integer.
                        MathFn::Floor | MathFn::Ceil => match args.first() {
                            Some(x) => return self.expr(x),
                            None => return Err("floor/ceil without an argument".into()),
                        },
                        MathFn::Pow => {
                            self.prelude.insert(PreludeFn::Pow(ty));
                            format!("parpy_pow_{}", ty.short_name())
                        }
                        MathFn::Gcd | MathFn::Lcm => {
                            let lcm = *func == MathFn::Lcm;
                            self.prelude.insert(PreludeFn::GcdLcm(lcm, ty));
                            format!("parpy_{}_{}", func.name(), ty.short_name())
                        }
                        _ => return Err(format!("`{}` of an integer", func.name()).into()),
                    }
                };
                if func.is_predicate() {
                    // C's `isinf` is any nonzero int (glibc's is -1 for
                    // -inf): the IR's bool is 1
                    return Ok((format!("({name}({}) != 0)", a.join(", ")), P_POSTFIX));
                }
                (format!("{name}({})", a.join(", ")), P_POSTFIX)
            }
            ExprKind::GpuIndex(g) => (self.d.gpu_index(*g)?, P_UNARY),
            ExprKind::CpuThreads => {
                self.prelude.insert(PreludeFn::CpuThreads);
                (self.d.cpu_threads()?.0.into(), P_UNARY)
            }
            ExprKind::Atomic { .. } => {
                return Err("an atomic update other than as an element's new value".into())
            }
            ExprKind::WarpReduce { op, arg } => {
                let ty = arg.ty.elem().ok_or("a warp reduction of a non-scalar")?;
                self.prelude.insert(PreludeFn::Warp(*op, ty));
                let a = self.expr(arg)?.0;
                (self.d.warp_reduce(*op, ty, &a)?, P_POSTFIX)
            }
            ExprKind::ClusterReduce { op, arg } => {
                let ty = arg.ty.elem().ok_or("a cluster reduction of a non-scalar")?;
                self.prelude.insert(PreludeFn::Cluster(*op, ty));
                let a = self.expr(arg)?.0;
                (self.d.cluster_reduce(*op, ty, &a)?, P_POSTFIX)
            }
            ExprKind::Call { func, args } => {
                let name = self
                    .globals
                    .helpers
                    .get(func.0 as usize)
                    .cloned()
                    .ok_or("call of an unknown helper")?;
                let mut a = vec![];
                for x in args {
                    a.push(self.expr(x)?.0);
                }
                (format!("{name}({})", a.join(", ")), P_POSTFIX)
            }
            ExprKind::External { ext, args } => {
                let name = self
                    .p
                    .externals
                    .get(*ext as usize)
                    .ok_or("call of an unknown external")?
                    .name
                    .clone();
                let mut a = vec![];
                for x in args {
                    a.push(match x {
                        CallArg::Array { array, prefix } if prefix.is_empty() => self.name(*array),
                        CallArg::Array { array, prefix } => {
                            let at = self.flat_prefix(*array, prefix)?;
                            format!("&{}[{at}]", self.name(*array))
                        }
                        CallArg::Scalar(e) => self.expr(e)?.0,
                    });
                }
                (format!("{name}({})", a.join(", ")), P_POSTFIX)
            }
        })
    }

    /// The unsigned twin value arithmetic on `t` goes through here
    /// ([`wrapping_twin`]; none inside an index).
    fn wrapping(&self, t: ElemTy) -> Option<ElemTy> {
        if self.in_index {
            return None;
        }
        wrapping_twin(self.d, t)
    }

    /// Index arithmetic outside an index: sums and products of loop
    /// variables, grid positions and small literals (`threadIdx.x + k *
    /// 32`, `i * 2 + 1`), bounded by the loops' ranges. Not wrapped, so the
    /// target's compiler keeps reasoning about it as about indices.
    fn index_like(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var(v) => self.loop_vars.contains(v),
            ExprKind::GpuIndex(_) => true,
            ExprKind::Int(c) => c.unsigned_abs() <= 1 << 16,
            ExprKind::Convert { arg } => {
                arg.ty.elem().is_some_and(|t| t.is_int()) && self.index_like(arg)
            }
            ExprKind::Binary {
                op: BinOp::Add | BinOp::Sub | BinOp::Mul,
                lhs,
                rhs,
            } => self.index_like(lhs) && self.index_like(rhs),
            _ => false,
        }
    }

    fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Result<(String, u8), EmitError> {
        let ty = lhs.ty.elem().unwrap_or(ElemTy::F64);
        let helper = |w: &mut Self, f: PreludeFn, name: &str| -> Result<(String, u8), EmitError> {
            w.prelude.insert(f);
            let l = w.expr(lhs)?.0;
            let r = w.expr(rhs)?.0;
            Ok((
                format!("parpy_{name}_{}({l}, {r})", ty.short_name()),
                P_POSTFIX,
            ))
        };
        if let Some((max, rule)) = op.max_min() {
            // integers: every rule is NumPy's (one helper)
            let rule = if ty.is_float() { rule } else { NanRule::NumPy };
            let f = PreludeFn::MaxMin(rule, !max, ty);
            return helper(self, f, rule_helper(max, rule));
        }
        match op {
            BinOp::FloorDiv if ty.is_int() || ty.is_float() => {
                return helper(self, PreludeFn::FloorDiv(ty), "floordiv")
            }
            BinOp::Mod if ty.is_int() || ty.is_float() => {
                return helper(self, PreludeFn::Mod(ty), "mod")
            }
            // a negative value shifted left is undefined in C (clang warns
            // on a negative constant): signed shifts go through unsigned
            BinOp::Shl | BinOp::Shr
                if !shift_in_range(rhs, ty) || (op == BinOp::Shl && ty.is_signed_int()) =>
            {
                return if op == BinOp::Shl {
                    helper(self, PreludeFn::Shl(ty), "shl")
                } else {
                    helper(self, PreludeFn::Shr(ty), "shr")
                };
            }
            BinOp::Pow if ty.is_int() => return helper(self, PreludeFn::Pow(ty), "pow"),
            BinOp::Pow if matches!(rhs.kind, ExprKind::Float(c) if c == 2.0) => {
                self.prelude.insert(PreludeFn::Square(ty));
                let l = self.expr(lhs)?.0;
                return Ok((format!("parpy_square_{}({l})", ty.short_name()), P_POSTFIX));
            }
            BinOp::Pow => {
                let name = self.d.math_name(MathFn::Pow, ty)?;
                let l = self.expr(lhs)?.0;
                let r = self.expr(rhs)?.0;
                return Ok((format!("{name}({l}, {r})"), P_POSTFIX));
            }
            _ => {}
        }
        let (sym, prec, lmin, rmin) = match op {
            BinOp::Add => ("+", P_ADD, P_ADD, P_ADD + 1),
            BinOp::Sub => ("-", P_ADD, P_ADD, P_ADD + 1),
            BinOp::Mul => ("*", P_MUL, P_MUL, P_MUL + 1),
            BinOp::Div => ("/", P_MUL, P_MUL, P_MUL + 1),
            BinOp::FloorDiv => ("/", P_MUL, P_MUL, P_MUL + 1),
            BinOp::Mod => ("%", P_MUL, P_MUL, P_MUL + 1),
            // Bitwise operators and shifts: parenthesize any operator operand
            // (clearer, and keeps -Wparentheses quiet).
            BinOp::BitAnd => ("&", P_BAND, P_UNARY, P_UNARY),
            BinOp::BitOr => ("|", P_BOR, P_UNARY, P_UNARY),
            BinOp::BitXor => ("^", P_BXOR, P_UNARY, P_UNARY),
            BinOp::Shl => ("<<", P_SHIFT, P_UNARY, P_UNARY),
            BinOp::Shr => (">>", P_SHIFT, P_UNARY, P_UNARY),
            BinOp::Lt => ("<", P_REL, P_REL + 1, P_REL + 1),
            BinOp::Le => ("<=", P_REL, P_REL + 1, P_REL + 1),
            BinOp::Gt => (">", P_REL, P_REL + 1, P_REL + 1),
            BinOp::Ge => (">=", P_REL, P_REL + 1, P_REL + 1),
            BinOp::Eq => ("==", P_EQ, P_REL + 1, P_REL + 1),
            BinOp::Ne => ("!=", P_EQ, P_REL + 1, P_REL + 1),
            BinOp::And => ("&&", P_LAND, P_LAND, P_LAND + 1),
            BinOp::Or => ("||", P_LOR, P_LAND + 1, P_LAND + 1),
            BinOp::Pow | BinOp::Max | BinOp::Min | BinOp::FMax | BinOp::FMin | BinOp::MatMul => {
                unreachable_op(op)?
            }
        };
        if let Some(u) = self
            .wrapping(ty)
            .filter(|_| matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul))
            .filter(|_| !(self.index_like(lhs) && self.index_like(rhs)))
        {
            let l = paren(self.expr(lhs)?, P_UNARY);
            let r = paren(self.expr(rhs)?, P_UNARY);
            let (t, u) = (self.d.scalar_type(ty)?, self.d.scalar_type(u)?);
            return Ok((wrapping_infix(sym, t, u, &l, &r), P_UNARY));
        }
        let l = paren(self.expr(lhs)?, lmin);
        let r = paren(self.expr(rhs)?, rmin);
        if ty == ElemTy::Bool && matches!(op, BinOp::BitAnd | BinOp::BitOr) {
            // both sides evaluated, as NumPy does (a run-time index check
            // on the right must run), computed on ints: clang warns of `&`
            // and `|` on bools (-Wbitwise-instead-of-logical)
            let t = self.d.scalar_type(ty)?;
            return Ok((format!("({t})((int){l} {sym} (int){r})"), P_UNARY));
        }
        if rounds_to_type(ty, op) {
            let t = self.d.scalar_type(ty)?;
            return Ok((format!("({t})({l} {sym} {r})"), P_UNARY));
        }
        Ok((format!("{l} {sym} {r}"), prec))
    }
}

/// A literal shift count below the width of `ty`, which C's shifts
/// compute as NumPy does (others go through the prelude helpers).
fn shift_in_range(count: &Expr, ty: ElemTy) -> bool {
    matches!(count.kind, ExprKind::Int(c) if (0..8 * ty.size() as i64).contains(&c))
}

fn unreachable_op(op: BinOp) -> Result<(&'static str, u8, u8, u8), EmitError> {
    Err(format!("operator `{}` reached the infix printer", op.symbol()).into())
}

/// 8- and 16-bit integers, whose arithmetic C does in `int`.
fn wraps_narrow(t: ElemTy) -> bool {
    matches!(t, ElemTy::I8 | ElemTy::I16 | ElemTy::U8 | ElemTy::U16)
}

/// Whether `op` on `ty` operands needs a cast back to `ty`: C computes
/// 8/16-bit integer operands in `int` and float16 ones in float, while
/// NumPy wraps (rounds) every operation to the type.
fn rounds_to_type(ty: ElemTy, op: BinOp) -> bool {
    match op {
        BinOp::Add | BinOp::Sub | BinOp::Mul => wraps_narrow(ty) || ty == ElemTy::F16,
        BinOp::Shl => wraps_narrow(ty),
        BinOp::Div => ty == ElemTy::F16,
        _ => false,
    }
}

/// An integer literal of the given type.
pub fn int_literal(v: i64, ty: ElemTy) -> String {
    match ty {
        ElemTy::I64 => {
            if v == i64::MIN {
                "INT64_MIN".into()
            } else if i32::try_from(v).is_ok() {
                v.to_string()
            } else {
                format!("INT64_C({v})")
            }
        }
        ElemTy::I32 if v == i32::MIN as i64 => "INT32_MIN".into(),
        ElemTy::U64 => format!("UINT64_C({})", v as u64),
        ElemTy::U32 => format!("{}u", v as u32),
        _ => v.to_string(),
    }
}

/// A float literal of the given type (`1.0f` for f32, `1.0` for f64).
pub fn float_literal(v: f64, ty: ElemTy) -> (String, u8) {
    // float16 literals are floats: `_Float16 * float` computes in float
    // and the result is rounded to float16 (see `binary`), as in NumPy
    let suffix = if matches!(ty, ElemTy::F32 | ElemTy::F16) {
        "f"
    } else {
        ""
    };
    if v.is_nan() {
        return ("NAN".into(), P_ATOM);
    }
    // (`INFINITY` is a float: a float64 one is cast, so that CUDA's
    // overloads of two-argument functions, `nextafter(1.5, INFINITY)`,
    // find one match)
    if ty == ElemTy::F64 && v.is_infinite() {
        let sign = if v > 0.0 { "" } else { "-" };
        return (format!("{sign}(double)INFINITY"), P_UNARY);
    }
    if v.is_infinite() || (ty != ElemTy::F64 && (v as f32).is_infinite()) {
        return if v > 0.0 {
            ("INFINITY".into(), P_ATOM)
        } else {
            ("-INFINITY".into(), P_UNARY)
        };
    }
    let text = if ty != ElemTy::F64 {
        format!("{:?}", v as f32)
    } else {
        format!("{v:?}")
    };
    let text = if text.contains(['.', 'e', 'E']) {
        text
    } else {
        format!("{text}.0")
    };
    let p = if text.starts_with('-') {
        P_UNARY
    } else {
        P_ATOM
    };
    (format!("{text}{suffix}"), p)
}

/// The argument expression that reads entry parameter `i` from the uniform
/// `void **args` of the Entry ABI: an array's pointer (host or device,
/// depending on the backend), or the 8-byte slot of a scalar converted to
/// the parameter's type.
/// The arguments of the host call in an entry trampoline (`entry_arg` of
/// each parameter, joined) and the line that marks `args` used when there
/// are none.
pub fn entry_call_args(params: &[EntryParam]) -> (String, &'static str) {
    let args: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(i, p)| entry_arg(i, p))
        .collect();
    let unused = if params.is_empty() {
        "  (void)args;\n"
    } else {
        ""
    };
    (args.join(", "), unused)
}

/// The C type of an element type in the `<stdint.h>` family; `None` for
/// float16, whose type differs between C-family targets.
pub fn stdint_type(e: ElemTy) -> Option<&'static str> {
    Some(match e {
        ElemTy::Bool => "bool",
        ElemTy::I8 => "int8_t",
        ElemTy::I16 => "int16_t",
        ElemTy::I32 => "int32_t",
        ElemTy::I64 => "int64_t",
        ElemTy::U8 => "uint8_t",
        ElemTy::U16 => "uint16_t",
        ElemTy::U32 => "uint32_t",
        ElemTy::U64 => "uint64_t",
        ElemTy::F32 => "float",
        ElemTy::F64 => "double",
        ElemTy::F16 => return None,
    })
}

/// The `<math.h>` name of a math function for `float` (`sqrtf`) or
/// `double` (`sqrt`); `None` for other element types.
pub fn libm_name(f: MathFn, e: ElemTy) -> Option<String> {
    if f.is_predicate() {
        // `isnan`, `isinf`, `isfinite`: type-generic macros.
        return e.is_float().then(|| f.name().to_string());
    }
    let base = match f {
        MathFn::Abs => "fabs",
        // half to even in the default rounding mode, as `np.round`
        MathFn::Round => "rint",
        other => other.name(),
    };
    match e {
        ElemTy::F32 => Some(format!("{base}f")),
        ElemTy::F64 => Some(base.to_string()),
        _ => None,
    }
}

pub fn entry_arg(i: usize, p: &EntryParam) -> String {
    match &p.ty {
        Type::Array { .. } => format!("({} *)args[{i}]", p.elem_ty),
        Type::Scalar(ElemTy::Bool) => format!("*(int64_t *)args[{i}] != 0"),
        Type::Scalar(ElemTy::I64) => format!("*(int64_t *)args[{i}]"),
        Type::Scalar(ElemTy::F64) => format!("*(double *)args[{i}]"),
        Type::Scalar(e) if e.is_float() => format!("({})*(double *)args[{i}]", p.elem_ty),
        _ => format!("({})*(int64_t *)args[{i}]", p.elem_ty),
    }
}
