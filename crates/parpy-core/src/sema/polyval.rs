//! `np.polyval(p, x)`: NumPy's Horner loop `y = zeros_like(x); for pv in
//! p: y = y * x + pv`, unrolled over the coefficients (a 1-D array or
//! slice of a length known when compiling, or a list of numbers, NumPy's
//! array of it). In NumPy's types: `x` becomes a NumPy value (a Python
//! number of its default type), `y` starts at zero of that type, and each
//! step promotes as NumPy's 0-d arrays do. `x` may be an array read by an
//! array expression (`y[i, :] = np.polyval(c, x[i, :])`): each element is
//! its own Horner loop.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr};
use crate::syntax::ast;

use super::types::convert;
use super::{Lowerer, TExpr};

impl Lowerer<'_, '_> {
    /// `np.polyval(p, x)` (see the module doc); `None` after an error.
    pub(super) fn polyval(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let [p, x] = args else {
            self.arity_error(name, "2 arguments (p, x)", args.len(), span);
            return None;
        };
        let coefficients = match p.list_items() {
            Some(items) => {
                let (values, ty) = self.list_values(items)?;
                values
                    .into_iter()
                    .map(|e| TExpr {
                        e: convert(e, ty),
                        weak: false,
                    })
                    .collect::<Vec<_>>()
            }
            None => {
                let shape = match self.array_shape(p) {
                    Some(shape) => shape?,
                    None => vec![],
                };
                let [n] = shape[..] else {
                    self.error(
                        Diagnostic::error(format!(
                            "`{name}` takes its coefficients as a 1-D array or a list of numbers"
                        ))
                        .at(p.span, format!("{} dimension(s)", shape.len()))
                        .type_error(),
                    );
                    return None;
                };
                let mut out = vec![];
                for k in 0..n {
                    let pv = ast::Expr {
                        kind: ast::ExprKind::Subscript {
                            value: Box::new(p.clone()),
                            indices: vec![ast::Expr::int(k, p.span)],
                        },
                        span: p.span,
                    };
                    out.push(self.lower_expr(&pv)?);
                }
                out
            }
        };
        // NumPy's `asanyarray(x)`: a NumPy value; `zeros_like` of it
        let x = TExpr {
            weak: false,
            ..self.lower_expr(x)?
        };
        let zero = convert(Expr::int(0, ElemTy::I64, span), self.scalar_elem(&x)?);
        let mut y = TExpr {
            e: zero,
            weak: false,
        };
        for pv in coefficients {
            let yx = self.binary(BinOp::Mul, y, x.clone(), span)?;
            y = self.binary(BinOp::Add, yx, pv, span)?;
        }
        Some(y)
    }
}
