//! What Metal cannot do, reported as user diagnostics before any text is
//! written: 64-bit floats on the device (Metal has no `double`), math
//! functions its standard library lacks, and CUDA-only options. (Parallel
//! reductions over every other type are written: the SIMD-group functions'
//! types by `simd_*`, 64-bit and 8-bit integers and bools by shuffles of
//! 32- or 16-bit values, see the dialect's `warp_reduce_helper`.)
//!
//! The checks only read the final IR (backends never change it).

use std::collections::BTreeSet;

use crate::diag::{Diagnostic, Span};
use crate::ir::visit::walk_exprs;
use crate::ir::{Expr, ExprKind, Function, MathFn, Program, Type};
use crate::options::Options;
use crate::signature::ArgType;
use crate::syntax::FunctionDef;
use crate::types::ElemTy;

/// At most this many float64 values are pointed at; the rest are counted.
const MAX_VALUE_ERRORS: usize = 4;

/// All the reasons `p` cannot be written as Metal, or an empty list.
pub fn check(p: &Program, options: &Options) -> Vec<Diagnostic> {
    let mut out = options_errors(options);
    let params = f64_params(p);
    let any_param = !params.is_empty();
    out.extend(params);
    // Values computed in float64 on the device. When an argument is already
    // reported, the values derived from it are not reported again.
    if !any_param {
        out.extend(f64_values(p));
    }
    out.extend(missing_math(p));
    out
}

/// Math functions the Metal standard library does not have.
pub(super) fn lacks(f: MathFn) -> bool {
    use MathFn::*;
    matches!(
        f,
        Erf | Erfc | Expm1 | Log1p | Hypot | Cbrt | NextAfter | Remainder
    )
}

/// Uses of math functions that Metal lacks, once per function.
fn missing_math(p: &Program) -> Vec<Diagnostic> {
    let mut out = vec![];
    let mut seen = BTreeSet::new();
    let device = p.kernels.iter().map(|k| &k.func).chain(p.helpers.iter());
    for f in device {
        walk_exprs(&f.body, &mut |e| {
            if let ExprKind::Math { func, .. } = &e.kind {
                if lacks(*func) && seen.insert(func.name()) {
                    out.push(
                        Diagnostic::error(format!(
                            "`{}` is not in the Metal standard library",
                            func.name()
                        ))
                        .at(e.span, "not available on Metal")
                        .help("use the Cpu or Cuda backend for this function"),
                    );
                }
            }
            true
        });
    }
    out
}

fn options_errors(o: &Options) -> Vec<Diagnostic> {
    let mut out = vec![];
    if o.use_cuda_thread_block_clusters {
        out.push(
            Diagnostic::error(
                "`use_cuda_thread_block_clusters` asks for CUDA thread block clusters, \
                 which have no Metal counterpart",
            )
            .help("set `use_cuda_thread_block_clusters = False` for the Metal backend"),
        );
    }
    if o.use_cuda_graphs {
        out.push(
            Diagnostic::error("`use_cuda_graphs` asks for CUDA graphs, which have no Metal counterpart")
                .help("set `use_cuda_graphs = False` for the Metal backend (Metal encodes the dispatches of a call in one command buffer)"),
        );
    }
    out
}

/// The float64 arguments of a call, checked before the front end types the
/// body (so the user sees this rather than a consequence of it). A Python
/// float is float64 only when `force_float_size` is 64.
pub fn check_args(def: &FunctionDef, args: &[ArgType], options: &Options) -> Vec<Diagnostic> {
    let mut out = vec![];
    let leaves = def
        .params
        .iter()
        .zip(args)
        .flat_map(|(p, a)| a.leaves(&p.name).into_iter().map(move |l| (p.span, l)));
    for (span, (name, a)) in leaves {
        match a {
            ArgType::Array {
                elem: ElemTy::F64, ..
            } => out.push(f64_array(&name, span)),
            ArgType::Scalar {
                elem: ElemTy::F64, ..
            } if options.float_type == ElemTy::F64 => out.push(f64_scalar(&name, span)),
            _ => {}
        }
    }
    out
}

fn f64_array(name: &str, span: Span) -> Diagnostic {
    Diagnostic::error(format!(
        "Metal does not support double-precision floating-point numbers (float64), but argument `{name}` is a float64 array"
    ))
    .at(span, "a float64 array")
    .type_error()
    .help(format!(
        "pass a float32 array instead (for example `{name}.astype(numpy.float32)`)"
    ))
}

fn f64_scalar(name: &str, span: Span) -> Diagnostic {
    Diagnostic::error(format!(
        "Metal does not support double-precision floating-point numbers (float64), but argument `{name}` is a float64 scalar"
    ))
    .at(span, "a float64 scalar")
    .type_error()
    .help("leave `force_float_size` unset or set it to 32 (Python floats are float32 on Metal)")
}

/// Every float64 parameter of the final program: arrays live in Metal
/// buffers and scalars are passed to kernels, and neither can hold a 64-bit
/// float.
fn f64_params(p: &Program) -> Vec<Diagnostic> {
    let mut out = vec![];
    for &v in &p.host.params {
        let var = p.host.var(v);
        match &var.ty {
            Type::Array {
                elem: ElemTy::F64, ..
            } => out.push(f64_array(&var.name, var.span)),
            Type::Scalar(ElemTy::F64) => out.push(f64_scalar(&var.name, var.span)),
            _ => {}
        }
    }
    out
}

/// Float64 values in kernels and device helpers: the outermost float64
/// expression of each statement, once per source location.
fn f64_values(p: &Program) -> Vec<Diagnostic> {
    let mut spans: Vec<Span> = vec![];
    let mut seen = BTreeSet::new();
    let device = p.kernels.iter().map(|k| &k.func).chain(p.helpers.iter());
    for f in device {
        let mut found = vec![];
        walk_exprs(&f.body, &mut |e| outermost_f64(e, &mut found));
        f64_vars(f, &mut found);
        for s in found {
            if seen.insert((s.file.0, s.lo, s.hi)) {
                spans.push(s);
            }
        }
    }
    spans.sort_by_key(|s| (s.file.0, s.lo, s.hi));
    let total = spans.len();
    spans
        .into_iter()
        .take(MAX_VALUE_ERRORS)
        .enumerate()
        .map(|(i, s)| {
            let d = Diagnostic::error("Metal does not support double-precision floating-point numbers (float64), but this value is a float64")
                .at(s, "computed as float64 on the device")
                .type_error()
                .help(
                    "compute in float32 (`parpy.types.F32`); Python floats are float32 on \
                     Metal unless `force_float_size` is 64",
                );
            if i + 1 == MAX_VALUE_ERRORS && total > MAX_VALUE_ERRORS {
                d.note(format!(
                    "{} more float64 values are not shown",
                    total - MAX_VALUE_ERRORS
                ))
            } else {
                d
            }
        })
        .collect()
}

/// Locals and parameters of a device function declared float64 but never
/// reached by an expression above (for example a variable only assigned).
fn f64_vars(f: &Function, found: &mut Vec<Span>) {
    if !found.is_empty() {
        return;
    }
    for v in &f.vars {
        if v.ty.elem() == Some(ElemTy::F64) {
            found.push(v.span);
            return;
        }
    }
}

fn outermost_f64(e: &Expr, found: &mut Vec<Span>) -> bool {
    if e.ty.elem() == Some(ElemTy::F64) {
        found.push(e.span);
        return false;
    }
    true
}
