//! `np.array_equal(a1, a2, equal_nan=False)` and `np.array_equiv(a1, a2)`
//! as NumPy's Python code answers them, a Python bool: arrays of shapes
//! known when compiling that differ (for `array_equiv`: that do not
//! broadcast) are not equal, `False` without reading them; otherwise
//! `#np.all(a1 == a2)`, with `equal_nan=True` of two float arrays
//! `#np.all((a1 == a2) | (#np.isnan(a1) & #np.isnan(a2)))` (NumPy's NaNs at
//! the same places, the other elements equal; an integer or bool array
//! holds no NaN, its plain comparison).

use crate::diag::Span;
use crate::ops::BinOp;
use crate::syntax::ast::{self, Expr, ExprKind};

use super::{Lowerer, TExpr};

/// Whether NumPy broadcasts arrays of the shapes `a` and `b` together.
fn broadcast(a: &[i64], b: &[i64]) -> bool {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .all(|(&x, &y)| x == y || x == 1 || y == 1)
}

impl Lowerer<'_, '_> {
    /// `np.array_equal` (`equiv` false) or `np.array_equiv` (see the
    /// module doc); `args` as `keywords` binds them.
    pub(super) fn array_equal(
        &mut self,
        equiv: bool,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Option<TExpr> {
        let (a, b, equal_nan) = match (equiv, args) {
            (_, [a, b]) => (a, b, false),
            (false, [a, b, n]) => (a, b, self.known_flag(n, "equal_nan", name)?),
            _ => {
                let want = if equiv {
                    "2 arguments"
                } else {
                    "2 or 3 arguments"
                };
                self.arity_error(name, want, args.len(), span);
                return None;
            }
        };
        let (sa, ea) = self.array_shape_of(a)?;
        let (sb, eb) = self.array_shape_of(b)?;
        // (a shape not known when compiling: the comparison's own check)
        let known = |s: Option<Vec<i64>>, e: &Expr| match s {
            Some(s) => Some(s),
            None if self.rank(e) == 0 => Some(vec![]),
            None => None,
        };
        if let (Some(sa), Some(sb)) = (known(sa, a), known(sb, b)) {
            let fits = match equiv {
                false => sa == sb,
                true => broadcast(&sa, &sb),
            };
            if !fits {
                let no = Expr {
                    kind: ExprKind::Bool(false),
                    span,
                };
                return self.lower_expr(&no);
            }
        }
        let bin = |op, l: &Expr, r: &Expr| ast::Expr::binary(op, l.clone(), r.clone(), span);
        let mut same = ast::Expr::compare(BinOp::Eq, a.clone(), b.clone(), span);
        if equal_nan && ea.is_float() && eb.is_float() {
            let nan = |e: &Expr| Self::numpy_call("isnan", vec![e.clone()], span);
            let both = bin(BinOp::BitAnd, &nan(a), &nan(b));
            same = bin(BinOp::BitOr, &same, &both);
        }
        let all = Self::numpy_call("all", vec![same], span);
        let t = self.lower_expr(&all)?;
        Some(TExpr { e: t.e, weak: true })
    }
}
