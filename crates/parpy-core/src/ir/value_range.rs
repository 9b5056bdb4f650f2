//! Bounds of integer expressions, from literals, unsigned types and the
//! bounds of loop counters (which the caller supplies). Sema uses them to
//! skip the wrap of negative indices (`x[k]` with `k < 0` reads `x[k + n]`,
//! as in Python) where an index cannot be negative.

use super::{BinOp, Expr, ExprKind, VarId};

/// The smallest and the largest value `e` can take, where known.
pub type Bounds = (Option<i64>, Option<i64>);

/// The bounds of `e`; `var_bounds` gives them for variables (loop counters).
pub fn bounds(e: &Expr, var_bounds: &dyn Fn(VarId) -> Bounds) -> Bounds {
    let Some(ty) = e.ty.elem() else {
        return (None, None);
    };
    let exact = |v: i64| (Some(v), Some(v));
    let (lo, hi) = match &e.kind {
        ExprKind::Int(v) => exact(*v),
        ExprKind::Bool(b) => exact(i64::from(*b)),
        ExprKind::Var(v) => var_bounds(*v),
        ExprKind::GpuIndex(_) => (Some(0), None),
        ExprKind::Convert { arg } => match arg.ty.elem() {
            // a conversion that cannot wrap keeps the bounds
            Some(from) if ty.is_int() && !from.is_float() && ty.size() >= from.size() => {
                bounds(arg, var_bounds)
            }
            _ => (None, None),
        },
        ExprKind::Select { then, else_, .. } => {
            let (a, b) = (bounds(then, var_bounds), bounds(else_, var_bounds));
            (
                a.0.zip(b.0).map(|(x, y)| x.min(y)),
                a.1.zip(b.1).map(|(x, y)| x.max(y)),
            )
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (l, r) = (bounds(lhs, var_bounds), bounds(rhs, var_bounds));
            let both = |x: Option<i64>, y: Option<i64>, f: fn(i64, i64) -> Option<i64>| {
                x.zip(y).and_then(|(x, y)| f(x, y))
            };
            let nonneg = |b: Bounds| b.0.is_some_and(|v| v >= 0);
            let pos_const = match (r.0, r.1) {
                (Some(a), Some(b)) if a == b && a > 0 => Some(a),
                _ => None,
            };
            match op {
                BinOp::Add => (
                    both(l.0, r.0, i64::checked_add),
                    both(l.1, r.1, i64::checked_add),
                ),
                BinOp::Sub => (
                    both(l.0, r.1, i64::checked_sub),
                    both(l.1, r.0, i64::checked_sub),
                ),
                BinOp::Mul if nonneg(l) && nonneg(r) => (
                    both(l.0, r.0, i64::checked_mul),
                    both(l.1, r.1, i64::checked_mul),
                ),
                BinOp::FloorDiv if nonneg(l) && pos_const.is_some() => {
                    let c = pos_const.unwrap_or(1);
                    (l.0.map(|v| v / c), l.1.map(|v| v / c))
                }
                BinOp::Mod => match pos_const {
                    Some(c) => (Some(0), Some(c - 1)),
                    None => (None, None),
                },
                BinOp::Max => (
                    match (l.0, r.0) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    },
                    both(l.1, r.1, |a, b| Some(a.max(b))),
                ),
                BinOp::Min => (
                    both(l.0, r.0, |a, b| Some(a.min(b))),
                    match (l.1, r.1) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    },
                ),
                BinOp::BitAnd if nonneg(l) || nonneg(r) => (Some(0), None),
                BinOp::Shr if nonneg(l) => (Some(0), l.1),
                _ => (None, None),
            }
        }
        _ => (None, None),
    };
    if ty.is_unsigned_int() {
        return (Some(lo.unwrap_or(0).max(0)), hi);
    }
    (lo, hi)
}
