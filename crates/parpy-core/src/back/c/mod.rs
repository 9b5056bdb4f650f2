//! The C11 + OpenMP dialect of the C-family writer (the CPU backend).
//!
//! Parallel mapping on the CPU: the outermost parallel level of a kernel is a
//! `#pragma omp parallel for schedule(static)` (with `reduction(op:acc)` for a
//! reduction loop); inner parallel levels and every other reduction loop are
//! `#pragma omp simd` (with the reduction clause), which vectorizes row sums
//! and dot products at -O3. The thread counts of the spec are a GPU notion:
//! on the CPU the iterations are spread over OpenMP's threads
//! (`ExprKind::CpuThreads` is `omp_get_max_threads()`: the chunks of
//! `passes::cpu_skew_fuse` are one per thread). Kernels,
//! helpers and the host function are `static`: the entry trampoline is the
//! library's only exported symbol.

use super::c_writer::{self, Dialect, EntryParam, FnRole, LoopCtx, LoopIntro};
use super::EmitOutput;
use crate::back::error::EmitError;
use crate::error::CompileError;
use crate::ir::{LaunchInfo, MathFn, Program, ReduceOp};
use crate::options::Options;
use crate::types::ElemTy;

pub struct CDialect;

/// Outer trip counts below this are collapsed with a perfectly nested
/// parallel child loop.
pub const COLLAPSE_BELOW: i64 = 64;

pub fn emit(p: &Program, options: &Options) -> Result<EmitOutput, CompileError> {
    c_writer::write_program(&CDialect, p, options)
}

/// The reduction identifier of a `reduction(...)` clause. OpenMP's own
/// `max` and `min` drop NaNs (or not, by the order lanes and threads
/// combine), so float max and min reductions are declared reductions
/// combining with the prelude's helper, which propagates them as NumPy does.
fn omp_op(op: ReduceOp, e: ElemTy) -> String {
    match op {
        ReduceOp::Sum => "+".into(),
        ReduceOp::Prod => "*".into(),
        ReduceOp::Max | ReduceOp::Min if e.is_float() => declared_reduction(op == ReduceOp::Max, e),
        ReduceOp::Max => "max".into(),
        ReduceOp::Min => "min".into(),
    }
}

fn declared_reduction(max: bool, e: ElemTy) -> String {
    format!(
        "parpy_r{}_{}",
        if max { "max" } else { "min" },
        e.short_name()
    )
}

impl Dialect for CDialect {
    fn target_name(&self) -> &'static str {
        "C with OpenMP"
    }

    fn heap_array(&self, ty: &str, name: &str, len: i64) -> Option<(String, String)> {
        Some((
            format!("{ty} *{name} = ({ty} *)malloc((size_t){len} * sizeof({ty}));"),
            format!("free({name});"),
        ))
    }

    fn heap_prelude(&self) -> &'static str {
        "#include <stdlib.h>\n"
    }

    /// GCC 12.2 at -O3 -march=native (AVX-512) vectorizes straight-line
    /// code (a short loop unrolled) with a conversion to a narrower float
    /// and back as two vector conversions of the same width, then folds
    /// the pair away: `(double)(float)x == x` is always true and
    /// `(float)(_Float16)x` is `x` (tests/test_c_compiler_bugs.py). Loops
    /// the loop vectorizer handles are right. Without the straight-line
    /// (SLP) vectorizer in the functions of such a program, the rounding
    /// stays; other programs keep it (a naive matmul is 2.4x slower
    /// without it). Clang has no such bug and no such pragma.
    fn narrowed_floats_prelude(&self) -> &'static str {
        "#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC optimize(\"no-tree-slp-vectorize\")\n#endif\n"
    }

    /// GCC 12.2 at -O3 -march=native vectorizes the stores into two large
    /// local arrays of an OpenMP thread's function with 32-byte aligned
    /// moves, but places the second one 16 bytes off that alignment: a
    /// crash (tests/test_c_compiler_bugs.py). The alignment spelled out
    /// makes it align the frame. (Arrays shorter than a vector register
    /// keep the alignment of their type.)
    fn stack_array_suffix(&self, bytes: i64) -> &'static str {
        if bytes >= 32 {
            " __attribute__((aligned(64)))"
        } else {
            ""
        }
    }

    fn cpu_threads(&self) -> Result<(&'static str, &'static str), EmitError> {
        Ok(("(int64_t)omp_get_max_threads()", "#include <omp.h>\n"))
    }

    fn includes(&self) -> String {
        "#include <stdint.h>\n#include <stdbool.h>\n#include <math.h>\n".into()
    }

    fn scalar_type(&self, e: ElemTy) -> Result<&'static str, EmitError> {
        // float16: C23's `_Float16` (GCC >= 12 and clang >= 15 on x86-64 and
        // arm64)
        Ok(c_writer::stdint_type(e).unwrap_or("_Float16"))
    }

    fn math_name(&self, f: MathFn, e: ElemTy) -> Result<String, EmitError> {
        if e == ElemTy::F16 && !f.is_predicate() {
            // computed in float and rounded once, as NumPy does for float16
            if let Some(n) = c_writer::libm_name(f, ElemTy::F32) {
                return Ok(format!("(_Float16){n}"));
            }
        }
        c_writer::libm_name(f, e).ok_or_else(|| {
            EmitError::Unsupported(format!(
                "`{}` on {} is not supported by the C backend",
                f.name(),
                e.short_name()
            ))
        })
    }

    fn prelude_qualifier(&self) -> &'static str {
        "static inline"
    }

    /// Every function's innermost sequential loops (not vector ones): a
    /// CSR row loop with a check of `x[cols[k]]` ran 12% faster (C7:
    /// 9.0 ms with a branch per check, 7.9 ms deferred; 8.4 ms unchecked).
    fn defers_loop_checks(&self, _role: FnRole) -> bool {
        true
    }

    fn signature(
        &self,
        _role: FnRole,
        ret: &str,
        name: &str,
        params: &[String],
        _launch: Option<&LaunchInfo>,
    ) -> String {
        let params = if params.is_empty() {
            "void".to_string()
        } else {
            params.join(", ")
        };
        // only the entry is exported: a host named `free` or `y0` must not
        // be bound to (or interpose) the C library's
        format!("static {ret} {name}({params})")
    }

    fn loop_intro(&self, ctx: &LoopCtx) -> LoopIntro {
        let red = ctx
            .reduction
            .map(|(op, acc, e)| format!(" reduction({}:{acc})", omp_op(op, e)))
            .unwrap_or_default();
        let none = LoopIntro::none();
        // one worker asked for: a plain loop (a parallel region would still
        // wake the OpenMP team, ~2 us per call)
        let one_worker = ctx.par.is_some_and(|p| p.threads == 1) && ctx.reduction.is_none();
        if ctx.absorbed || one_worker {
            none
        } else if ctx.outermost_parallel && !ctx.inside_vector {
            // Two perfectly nested parallel levels with independent bounds
            // are spread over the threads together when the outer level alone
            // may be too short to keep the cores busy; otherwise the inner
            // level stays a `simd` loop, which vectorizes better.
            let collapse_it =
                ctx.perfect_par_child && ctx.trip_count.is_none_or(|n| n < COLLAPSE_BELOW);
            let collapse = if collapse_it { " collapse(2)" } else { "" };
            LoopIntro {
                lines: vec![format!(
                    "#pragma omp parallel for schedule(static){collapse}{red}"
                )],
                vector: false,
                absorbs_child: collapse_it,
            }
        } else if (ctx.par.is_some() || ctx.reduction.is_some())
            && !ctx.inside_vector
            && ctx.lanes_independent
        {
            LoopIntro {
                lines: vec![format!("#pragma omp simd{red}")],
                vector: true,
                absorbs_child: false,
            }
        } else {
            none
        }
    }

    fn reduction_declaration(&self, max: bool, e: ElemTy) -> Result<Option<String>, EmitError> {
        if !e.is_float() {
            return Ok(None);
        }
        let ty = self.scalar_type(e)?;
        let (helper, identity) = if max {
            ("max", "-INFINITY")
        } else {
            ("min", "INFINITY")
        };
        Ok(Some(format!(
            "#pragma omp declare reduction({} : {ty} : omp_out = parpy_{helper}_{}(omp_out, omp_in)) initializer(omp_priv = {identity})",
            declared_reduction(max, e),
            e.short_name()
        )))
    }

    fn launch(&self, kernel: &str, args: &[String], _launch: &LaunchInfo) -> String {
        format!("{kernel}({});", args.join(", "))
    }

    fn entry(&self, symbol: &str, host: &str, params: &[EntryParam]) -> String {
        let (args, unused) = c_writer::entry_call_args(params);
        format!("int32_t {symbol}(void **args) {{\n{unused}  {host}({args});\n  return 0;\n}}\n")
    }
}

#[cfg(test)]
mod tests;
