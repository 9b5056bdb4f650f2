//! `np.trapezoid(y, x=None, dx=1.0, axis=-1)` (and `np.trapz`, its name
//! before NumPy 2.0): the trapezoidal rule as NumPy's Python code writes
//! it, `(d * (y[1:] + y[:-1]) / 2.0).sum(axis)` along `axis`, with `d`
//! the spacing `dx` or the differences of the sample points `x` (`x[1:] -
//! x[:-1]`, which is `np.diff(x)`). The expression is built as that
//! source and lowered as the user's own would be, so its types, its
//! order of operations and its sum (NumPy's pairwise order) are NumPy's.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ReduceOp};
use crate::syntax::ast;

use super::slices::Axes;
use super::{Lowerer, TExpr};

/// `e[:, ..., :, lo:hi]`, the slice along `axis` (of `rank` dimensions).
pub(super) fn along(
    e: &ast::Expr,
    axis: usize,
    lo: Option<i64>,
    hi: Option<i64>,
    span: Span,
) -> ast::Expr {
    let bound = |v: Option<i64>| v.map(|v| Box::new(ast::Expr::int(v, span)));
    let full = ast::Expr::full_slice(span);
    let mut indices = vec![full; axis];
    indices.push(ast::Expr {
        kind: ast::ExprKind::Slice {
            lo: bound(lo),
            hi: bound(hi),
            step: None,
        },
        span,
    });
    ast::Expr {
        kind: ast::ExprKind::Subscript {
            value: Box::new(e.clone()),
            indices,
        },
        span,
    }
}

impl Lowerer<'_, '_> {
    /// `np.trapezoid(y, x, dx, axis)` (see the module doc); `args` in
    /// that order, as `keywords` binds them.
    pub(super) fn trapezoid(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let given = |k| super::keywords::given(args, k);
        let Some(y) = args.first().filter(|_| args.len() <= 4) else {
            self.arity_error(name, "1 to 4 arguments (y, x, dx, axis)", args.len(), span);
            return None;
        };
        // (NumPy slices `y`: a computed array cannot be sliced here)
        let sliceable = |e: &ast::Expr| {
            matches!(
                e.kind,
                ast::ExprKind::Name(_) | ast::ExprKind::Subscript { .. }
            )
        };
        if let Some(e) = [Some(y), given(1)]
            .into_iter()
            .flatten()
            .find(|e| !sliceable(e))
        {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` integrates an array or a subscript of one"
                ))
                .at(e.span, "a computed array")
                .help("scale the result instead (`2.0 * np.trapezoid(y[i, :])` for `np.trapezoid(2.0 * y[i, :])`)"),
            );
            return None;
        }
        let rank = self.rank(y);
        if rank == 0 {
            self.error(
                Diagnostic::error(format!("`{name}` integrates an array"))
                    .at(y.span, "not an array")
                    .help(format!("pass a slice of samples (`{name}(y[i, :])`)")),
            );
            return None;
        }
        let axis = match given(3) {
            None => rank - 1,
            Some(a) => self.one_axis(a, rank, name)?,
        };
        let bin = |op, l, r| ast::Expr::binary(op, l, r, span);
        let d = match (given(1), given(2)) {
            (Some(x), _) => {
                let xr = self.rank(x);
                // a 1-D `x` along the last axis broadcasts as it is; NumPy
                // reshapes it for another axis
                if xr != rank && !(xr == 1 && axis == rank - 1) {
                    self.error(
                        Diagnostic::error(format!(
                            "`{name}` takes sample points `x` of `y`'s dimensions, or 1-D along the last axis"
                        ))
                        .at(x.span, format!("{xr} dimension(s) for {rank}"))
                        .help("integrate along the last axis, or pass `x` of `y`'s shape"),
                    );
                    return None;
                }
                let a = if xr == 1 { 0 } else { axis };
                bin(
                    BinOp::Sub,
                    along(x, a, Some(1), None, span),
                    along(x, a, None, Some(-1), span),
                )
            }
            (None, Some(dx)) => dx.clone(),
            (None, None) => ast::Expr::float(1.0, span),
        };
        // d * (y[1:] + y[:-1]) / 2.0
        let pairs = bin(
            BinOp::Add,
            along(y, axis, Some(1), None, span),
            along(y, axis, None, Some(-1), span),
        );
        let areas = bin(
            BinOp::Div,
            bin(BinOp::Mul, d, pairs),
            ast::Expr::float(2.0, span),
        );
        self.axis = Some(Axes {
            axes: vec![axis as i64],
            keepdims: false,
            span,
        });
        self.reduction(ReduceOp::Sum, &areas, span)
    }
}
