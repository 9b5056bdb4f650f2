//! `np.average(a, weights=w)` as NumPy's Python code computes it: both
//! in the result type (`result_type(a, w)`, with float64 for an integer or
//! bool `a`), `scl = w.sum()`, a `ZeroDivisionError` when `scl == 0`, then
//! `(a * w).sum() / scl`: each sum NumPy's (pairwise on the Cpu).

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, ExprKind, Stmt, StmtKind, Type};
use crate::syntax::ast;

use super::local_arrays::{astype_to, shape_text};
use super::types::{convert, promote_strong};
use super::{Lowerer, TExpr};

impl Lowerer<'_, '_> {
    /// `np.average(a, weights=w)` of a whole array or slice (no `axis`);
    /// `None` after an error.
    pub(super) fn weighted_average(
        &mut self,
        a: &ast::Expr,
        w: &ast::Expr,
        span: Span,
    ) -> Option<TExpr> {
        if self.axis.is_some() {
            self.error(
                Diagnostic::error("`np.average` with `weights` takes no `axis` in parpy functions")
                    .at(span, "weights and an axis")
                    .help(
                        "average a slice of one dimension (`np.average(x[i, :], weights=w[i, :])`)",
                    ),
            );
            return None;
        }
        let (a_shape, a_elem) = self.shape_of(a, "np.average")?;
        let (w_shape, w_elem) = self.shape_of(w, "np.average")?;
        if a_shape != w_shape {
            self.error(
                Diagnostic::error(format!(
                    "the weights of `np.average` have shape {}, its array {}",
                    shape_text(&w_shape),
                    shape_text(&a_shape)
                ))
                .at(w.span, "weights of another shape")
                .also(a.span, "the array")
                .note("NumPy raises TypeError: without an axis, the shapes must be the same")
                .type_error(),
            );
            return None;
        }
        let mut ty = promote_strong(a_elem, w_elem);
        if !a_elem.is_float() {
            ty = promote_strong(ty, ElemTy::F64);
        }
        let sum = |e: ast::Expr| Self::numpy_call("sum", vec![e], span);
        let weights = astype_to(w, ty, span);
        let product = ast::Expr {
            kind: ast::ExprKind::Binary {
                op: crate::ops::BinOp::Mul,
                lhs: Box::new(astype_to(a, ty, span)),
                rhs: Box::new(weights.clone()),
            },
            span,
        };
        let scl = self.lower_expr(&sum(weights))?;
        let zero = convert(
            Expr::new(ExprKind::Float(0.0), Type::Scalar(ElemTy::F64), span),
            ty,
        );
        let nonzero = Expr::compare(BinOp::Ne, scl.e.clone(), zero, span);
        let check = Expr::assert(
            nonzero,
            Some("Weights sum to zero, can't be normalized".to_string()),
            "ZeroDivisionError",
            span,
        );
        self.pre.push(Stmt::new(StmtKind::Expr(check), span));
        let total = self.lower_expr(&sum(product))?;
        self.binary(BinOp::Div, total, scl, span)
    }
}
