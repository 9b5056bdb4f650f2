//! `np.gradient(f, h, axis=, edge_order=)` of uniform spacing: NumPy's
//! array of three runs, `concatenate.rs`' `Join::Gradient`, each run the
//! expression NumPy's Python code stores into `out` (written here as that
//! source and lowered as the user's own would be, so its types and its
//! order of operations are NumPy's): the interior `(f[2:] - f[:-2]) /
//! (2. * h)`, and at each end `(f[1] - f[0]) / h` (`edge_order=1`) or the
//! three-point formula `a * f[0] + b * f[1] + c * f[2]`, `a = -1.5 / h`,
//! `b = 2. / h`, `c = -0.5 / h` (at the end `0.5`, `-2.`, `1.5` of
//! `f[-3]`, `f[-2]`, `f[-1]`), each end a slice of one element along the
//! axis. An integer `f` is made float64 first, each run is stored as
//! `f`'s (inexact) type, `out`'s. The spacing is a number (`h`, 1.0 when
//! left out); along axis 0 only (a 1-D `f`, or `axis=0`).

use crate::diag::Diagnostic;
use crate::ir::ElemTy;
use crate::ops::BinOp;
use crate::syntax::ast::{self, Expr, ExprKind};

use super::local_arrays::astype_to;
use super::trapezoid::along;
use super::Lowerer;

/// The bounds `lo:hi` of a run along the axis.
type Run = (Option<i64>, Option<i64>);

impl Lowerer<'_, '_> {
    /// The three runs of `np.gradient`'s array (see the module doc), of
    /// the call `call`; `None` after an error.
    pub(super) fn gradient_parts(&mut self, call: &Expr) -> Option<Vec<Expr>> {
        let ExprKind::Call { args, keywords, .. } = &call.kind else {
            return None;
        };
        let (name, span) = ("np.gradient", call.span);
        let Some((f, varargs)) = args.split_first() else {
            self.arity_error(name, "an array and its spacing", 0, span);
            return None;
        };
        let given = self.bound_params(
            name,
            &["f", "axis", "edge_order"],
            (&args[..1], keywords),
            span,
        )?;
        let order = match given[2] {
            None => 1,
            Some(e) => self.known_count_of(name, "`edge_order`", e, 1)?,
        };
        if order > 2 {
            self.error(
                Diagnostic::error("'edge_order' greater than 2 not supported")
                    .at(given[2]?.span, format!("edge order {order}"))
                    .note("NumPy raises ValueError")
                    .raises("ValueError"),
            );
            return None;
        }
        let rank = self.rank(f);
        let axis = match given[1] {
            _ if rank == 0 => {
                self.error(
                    Diagnostic::error("`np.gradient` takes an array")
                        .at(f.span, "not an array")
                        .help("pass a slice of samples (`np.gradient(x[i, :])`)"),
                );
                return None;
            }
            Some(a) => self.one_axis(a, rank, name)?,
            None if rank == 1 => 0,
            None => {
                self.error(
                    Diagnostic::error(format!(
                        "`np.gradient` of an array of {rank} dimensions gives a tuple of arrays, one per axis"
                    ))
                    .at(f.span, format!("{rank} dimensions"))
                    .help("take the gradient of a 1-D slice (`np.gradient(x[i, :])`), or pass `axis=0`"),
                );
                return None;
            }
        };
        if axis != 0 {
            self.error(
                Diagnostic::error("`np.gradient` works along axis 0 in parpy functions")
                    .at(given[1]?.span, format!("axis {axis}"))
                    .help("take the gradient of a 1-D slice along the axis (`g[i, :] = np.gradient(x[i, :])`)"),
            );
            return None;
        }
        let h = match varargs {
            [] => ast::Expr::float(1.0, span),
            [h] if self.rank(h) == 0 => h.clone(),
            [h] => {
                self.error(
                    Diagnostic::error("`np.gradient` takes a uniform spacing (a number) in parpy functions")
                        .at(h.span, "sample points")
                        .note("NumPy's formulas for sample points depend on whether their differences are all equal")
                        .help("pass the spacing `h` of uniformly spaced samples (`np.gradient(y, h)`), or write the differences out"),
                );
                return None;
            }
            [_, extra, ..] => {
                self.error(
                    Diagnostic::error("invalid number of arguments")
                        .at(extra.span, format!("{} spacings for 1 axis", varargs.len()))
                        .note("NumPy raises TypeError: one spacing, or one per axis")
                        .type_error(),
                );
                return None;
            }
        };
        let (shape, elem) = self.shape_of(f, name)?;
        if shape[axis] < order + 1 {
            self.error(
                Diagnostic::error(
                    "Shape of array too small to calculate a numerical gradient, at least (edge_order + 1) elements are required.",
                )
                .at(f.span, format!("{} element(s) along axis {axis}", shape[axis]))
                .note(format!("edge order {order} needs {} or more", order + 1))
                .note("NumPy raises ValueError")
                .raises("ValueError"),
            );
            return None;
        }
        let otype = match elem {
            ElemTy::Bool => {
                self.error(
                    Diagnostic::error("numpy boolean subtract, the `-` operator, is not supported")
                        .at(f.span, "an array of bools")
                        .note("NumPy raises TypeError: `np.gradient` subtracts samples")
                        .help("convert it first (`np.gradient(m.astype(np.float64))`)")
                        .type_error(),
                );
                return None;
            }
            e if e.is_float() => e,
            _ => ElemTy::F64,
        };
        // `f[lo:hi]` along the axis, made float64 where `f` is of integers
        let at = |(lo, hi): Run| {
            let s = along(f, axis, lo, hi, span);
            match otype == elem {
                true => s,
                false => astype_to(&s, otype, span),
            }
        };
        let bin = |op, l, r| ast::Expr::binary(op, l, r, span);
        let num = |v: f64| ast::Expr::float(v, span);
        let over_h = |v: f64| bin(BinOp::Div, num(v), h.clone());
        // a * f[i] + b * f[j] + c * f[k]
        let three = |coef: [f64; 3], runs: [Run; 3]| {
            let term = |k: usize| bin(BinOp::Mul, over_h(coef[k]), at(runs[k]));
            bin(BinOp::Add, bin(BinOp::Add, term(0), term(1)), term(2))
        };
        // (f[l] - f[r]) / h
        let two = |l: Run, r: Run| bin(BinOp::Div, bin(BinOp::Sub, at(l), at(r)), h.clone());
        let interior = bin(
            BinOp::Div,
            bin(BinOp::Sub, at((Some(2), None)), at((None, Some(-2)))),
            bin(BinOp::Mul, num(2.0), h.clone()),
        );
        let (first, last) = match order {
            1 => (
                two((Some(1), Some(2)), (Some(0), Some(1))),
                two((Some(-1), None), (Some(-2), Some(-1))),
            ),
            _ => (
                three(
                    [-1.5, 2.0, -0.5],
                    [(Some(0), Some(1)), (Some(1), Some(2)), (Some(2), Some(3))],
                ),
                three(
                    [0.5, -2.0, 1.5],
                    [(Some(-3), Some(-2)), (Some(-2), Some(-1)), (Some(-1), None)],
                ),
            ),
        };
        // each run stored into NumPy's `out` of type `otype`
        let mut parts = vec![];
        for p in [first, interior, last] {
            let (_, t) = self.shape_of(&p, name)?;
            parts.push(match t == otype {
                true => p,
                false => astype_to(&p, otype, span),
            });
        }
        Some(parts)
    }
}
