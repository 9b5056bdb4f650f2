//! `np.digitize(x, bins, right=False)` of a number `x`, or elementwise of
//! a slice or array `x`: NumPy's `_monotonicity` check of the bins (the
//! direction of the first bin that differs from the first; NaN differs),
//! its ValueError where they are neither increasing nor decreasing, then
//! `np.searchsorted(bins, x, side)` of increasing bins and `len(bins) -
//! np.searchsorted(bins[::-1], x, side)` of decreasing ones, `side`
//! 'right' unless `right=True`. The bins are a 1-D array or slice of a
//! length known when compiling (the check runs where the call does, once
//! a call as NumPy's: it reads no element of `x`, so it stays before the
//! loop over an array `x`'s elements) or a list of number literals
//! (checked when compiling).

use crate::diag::{Diagnostic, Span};
use crate::ops::{BinOp, UnOp};
use crate::syntax::ast;

use super::{Lowerer, TExpr};

const NOT_MONOTONIC: &str = "bins must be monotonically increasing or decreasing";

/// NumPy's `check_array_monotonic` of numbers: 1 increasing (or all the
/// same), -1 decreasing, 0 neither.
fn monotonicity(a: &[f64]) -> i32 {
    let Some((&first, rest)) = a.split_first() else {
        return 1;
    };
    let Some(k) = rest.iter().position(|&v| v != first) else {
        return 1;
    };
    let up = first < rest[k];
    let pairs = || a[k..].windows(2);
    match up {
        true if pairs().any(|w| w[0] > w[1]) => 0,
        true => 1,
        false if pairs().any(|w| w[0] < w[1]) => 0,
        false => -1,
    }
}

impl Lowerer<'_, '_> {
    /// `np.digitize(x, bins, right)` (see the module doc); `None` after an
    /// error.
    pub(super) fn digitize(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let (x, bins, right) = match args {
            [x, b] => (x, b, false),
            [x, b, r] => match r.kind {
                ast::ExprKind::Bool(r) => (x, b, r),
                _ => {
                    self.error(
                        Diagnostic::error(format!(
                            "the `right` of `{name}` is True or False, written out"
                        ))
                        .at(r.span, "not a bool literal"),
                    );
                    return None;
                }
            },
            _ => {
                self.arity_error(name, "2 or 3 arguments (x, bins, right)", args.len(), span);
                return None;
            }
        };
        let side = ast::Expr {
            kind: ast::ExprKind::Str(if right { "left" } else { "right" }.to_string()),
            span,
        };
        let np = |f: &str, args: Vec<ast::Expr>| Self::numpy_call(f, args, span);
        let if_exp = |cond: ast::Expr, then: ast::Expr, else_: ast::Expr| ast::Expr {
            kind: ast::ExprKind::IfExp {
                cond: Box::new(cond),
                then: Box::new(then),
                else_: Box::new(else_),
            },
            span,
        };
        let search = |b: ast::Expr| np("searchsorted", vec![b, x.clone(), side.clone()]);
        // a list of number literals: its direction when compiling
        if let Some(items) = bins.list_items() {
            let values: Option<Vec<f64>> = items.iter().map(number_of).collect();
            if let Some(values) = values {
                let expr = match monotonicity(&values) {
                    0 => {
                        self.error(
                            Diagnostic::error(NOT_MONOTONIC)
                                .at(bins.span, "bins out of order")
                                .raises("ValueError"),
                        );
                        return None;
                    }
                    1 => search(bins.clone()),
                    _ => {
                        let reversed = items.iter().rev().cloned().collect();
                        let n = ast::Expr::int(items.len() as i64, span);
                        ast::Expr::binary(
                            BinOp::Sub,
                            n,
                            search(ast::Expr::list(reversed, span)),
                            span,
                        )
                    }
                };
                return self.lower_expr(&expr);
            }
            // (the check reads a list's items at known places only)
            if let (true, Some(item)) = (
                items.len() > 1,
                items.iter().find(|i| number_of(i).is_none()),
            ) {
                self.error(
                    Diagnostic::error(format!(
                        "parpy takes the bins of `{name}` as a list of number literals"
                    ))
                    .at(item.span, "not a number written out")
                    .help("pass the bins as a 1-D array argument, or write the numbers out"),
                );
                return None;
            }
        }
        let n = match self.array_shape(bins) {
            Some(Some(shape)) if shape.len() == 1 => shape[0],
            _ => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` takes its bins as a 1-D array or slice or a list of numbers"
                    ))
                    .at(bins.span, "not a 1-D array of a known length")
                    .type_error(),
                );
                return None;
            }
        };
        if n <= 1 {
            return self.lower_expr(&search(bins.clone()));
        }
        // the check, in NumPy's steps: all the same; else the direction of
        // the first that differs, and no step the other way
        let int = |k| ast::Expr::int(k, span);
        let sub = |lo: Option<i64>, hi: Option<i64>, step: Option<i64>| ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(bins.clone()),
                indices: vec![ast::Expr {
                    kind: ast::ExprKind::Slice {
                        lo: lo.map(|v| Box::new(int(v))),
                        hi: hi.map(|v| Box::new(int(v))),
                        step: step.map(|v| Box::new(int(v))),
                    },
                    span,
                }],
            },
            span,
        };
        let at = |k: ast::Expr| ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(bins.clone()),
                indices: vec![k],
            },
            span,
        };
        let (rest, init) = (sub(Some(1), None, None), sub(None, Some(-1), None));
        let same = np(
            "all",
            vec![ast::Expr::compare(
                BinOp::Eq,
                rest.clone(),
                at(int(0)),
                span,
            )],
        );
        // (the first that differs is greater: the first greater is the
        // first that differs; no subscript at a run-time index)
        let differs = ast::Expr::compare(BinOp::Ne, rest.clone(), at(int(0)), span);
        let greater = ast::Expr::compare(BinOp::Gt, rest.clone(), at(int(0)), span);
        let first_of = |c: &ast::Expr| np("argmax", vec![c.clone()]);
        let up = ast::Expr {
            kind: ast::ExprKind::BoolOp {
                op: BinOp::And,
                values: vec![
                    np("any", vec![greater.clone()]),
                    ast::Expr::compare(BinOp::Eq, first_of(&greater), first_of(&differs), span),
                ],
            },
            span,
        };
        let no_step = |op| {
            let step = ast::Expr::compare(op, init.clone(), rest.clone(), span);
            let arg = Box::new(np("any", vec![step]));
            ast::Expr {
                kind: ast::ExprKind::Unary { op: UnOp::Not, arg },
                span,
            }
        };
        let increasing = ast::Expr {
            kind: ast::ExprKind::BoolOp {
                op: BinOp::Or,
                values: vec![same, up],
            },
            span,
        };
        // the direction once, in a hidden local: the check, the bins
        // searched and the result read it, not a search per direction (of
        // each element of an array `x`, the statements that read no
        // element stay before its loop)
        let increasing = self.lower_expr(&increasing)?;
        let increasing = self.truthy(increasing)?;
        let inc = self.stash_named("increasing", increasing, span);
        let inc = || ast::Expr::name(&inc, span);
        let ordered = if_exp(inc(), no_step(BinOp::Gt), no_step(BinOp::Lt));
        let ordered = self.lower_expr(&ordered)?;
        let ordered = self.truthy(ordered)?;
        self.raise_unless(vec![(ordered, NOT_MONOTONIC, "ValueError")], span);
        // NumPy's `searchsorted(bins, x)`, or `len(bins) -
        // searchsorted(bins[::-1], x)`: one search of the bins in the
        // order the direction picks
        let ordered_bins = np(
            "where",
            vec![inc(), bins.clone(), sub(None, None, Some(-1))],
        );
        let found = self.lower_expr(&search(ordered_bins))?;
        let found = self.stash_value("found", found, span);
        let found = ast::Expr::name(&found, span);
        let down = ast::Expr::binary(BinOp::Sub, int(n), found.clone(), span);
        self.lower_expr(&if_exp(inc(), found, down))
    }
}

/// The value of a number literal (`-2.5`, `3`, `True`), or None.
fn number_of(e: &ast::Expr) -> Option<f64> {
    match &e.kind {
        ast::ExprKind::Int(v) => Some(*v as f64),
        ast::ExprKind::Float(v) => Some(*v),
        ast::ExprKind::Bool(b) => Some(f64::from(u8::from(*b))),
        ast::ExprKind::Unary { op: UnOp::Neg, arg } => number_of(arg).map(|v| -v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::monotonicity;

    #[test]
    fn monotonicity_is_numpys() {
        assert_eq!(monotonicity(&[]), 1);
        assert_eq!(monotonicity(&[2.0, 2.0, 2.0]), 1);
        assert_eq!(monotonicity(&[1.0, 1.0, 2.0, 2.0, 5.0]), 1);
        assert_eq!(monotonicity(&[5.0, 5.0, 2.0, 2.0, -1.0]), -1);
        assert_eq!(monotonicity(&[1.0, 3.0, 2.0]), 0);
        assert_eq!(monotonicity(&[3.0, 1.0, 2.0]), 0);
        // NaN differs from the first; a step to or from it is neither way
        assert_eq!(monotonicity(&[1.0, f64::NAN, 3.0]), -1);
        assert_eq!(monotonicity(&[f64::NAN, f64::NAN]), -1);
    }
}
