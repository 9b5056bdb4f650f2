//! `np.arange(stop)` / `np.arange(start, stop[, step])` as an operand of an
//! array expression (`y[i, :] = x[i, :] * np.arange(8)`,
//! `np.sum(np.arange(n) * x[i, :])`): NumPy would allocate the array;
//! parpy computes its elements where the expression reads them. The bounds
//! are numbers known when compiling; the length is NumPy's, `ceil((stop -
//! start) / step)`, and the elements are NumPy's fill: `start`, `start +
//! step`, then `start + i * delta` with `delta = (start + step) - start`,
//! in the type NumPy gives (an integer of the default type; with a float
//! bound, a float).

use crate::diag::{Diagnostic, Span};
use crate::ir::eval::round_float;
use crate::ir::{BinOp, Expr, ExprKind, Type};
use crate::syntax::ast;

use super::slices::IndexSlot;
use super::types::convert;
use super::{Lowerer, TExpr};

impl Lowerer<'_, '_> {
    /// `np.arange(args)` read inside an array expression (see the module
    /// doc); `None` after an error.
    pub(super) fn arange(&mut self, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let mut bounds = vec![];
        for a in args {
            let t = self.lower_expr(a)?;
            let value = match (&t.e.kind, self.known_int(&t.e)) {
                (_, Some(v)) => (v as f64, false),
                (ExprKind::Float(v), _) => (*v, true),
                _ => {
                    self.error(
                        Diagnostic::error(
                            "a bound of `np.arange` must be a number known when compiling",
                        )
                        .at(a.span, "not a constant")
                        .note("the length of every array must be known when compiling"),
                    );
                    return None;
                }
            };
            bounds.push(value);
        }
        let (start, stop, step) = match bounds.as_slice() {
            [stop] => ((0.0, false), *stop, (1.0, false)),
            [start, stop] => (*start, *stop, (1.0, false)),
            [start, stop, step] => (*start, *stop, *step),
            _ => {
                self.arity_error("np.arange", "1 to 3 numbers", args.len(), span);
                return None;
            }
        };
        if step.0 == 0.0 {
            self.error(
                Diagnostic::error("the step of `np.arange` is zero")
                    .at(args.get(2).map_or(span, |a| a.span), "zero")
                    .note("NumPy raises ZeroDivisionError: division by zero"),
            );
            return None;
        }
        let float = start.1 || stop.1 || step.1;
        let ty = if float {
            self.opts.float_type
        } else {
            self.opts.int_type
        };
        let n = ((stop.0 - start.0) / step.0).ceil().max(0.0) as i64;
        let slot = IndexSlot::Slice {
            lo: Expr::int(0, self.opts.int_type, span),
            extent: n,
            step: 1,
            rot: 0,
        };
        let k = self.map_slices(vec![slot], false, span)?.pop()?;
        let it = self.opts.int_type;
        let konst = |v: f64| match ty.is_float() {
            true => Expr::new(ExprKind::Float(v), Type::Scalar(ty), span),
            false => Expr::int(v as i64, ty, span),
        };
        // NumPy's fill, in the result type: the first two elements as
        // given, then `start + i * delta`
        let first = round_float(start.0, ty);
        let second = round_float(start.0 + step.0, ty);
        let delta = konst(second - first);
        let i = convert(k.clone(), ty);
        let rest = Expr::binary(
            BinOp::Add,
            konst(first),
            Expr::binary(BinOp::Mul, i, delta, Type::Scalar(ty), span),
            Type::Scalar(ty),
            span,
        );
        let e = match float {
            false => rest,
            true => {
                let at = |c: i64| Expr::compare(BinOp::Eq, k.clone(), Expr::int(c, it, span), span);
                Expr::select(
                    at(0),
                    konst(first),
                    Expr::select(at(1), konst(second), rest),
                )
            }
        };
        Some(TExpr {
            e: convert(e, ty),
            weak: false,
        })
    }
}
