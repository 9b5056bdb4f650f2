//! Integer ranges of expressions (interval analysis): the one analysis of
//! what values an index can take. Sema uses it to skip the wrap of negative
//! indices (`x[k]` with `k < 0` reads `x[k + n]`) where an index cannot be
//! negative; `passes::check_bounds` to prove indices in range.
//!
//! Shapes and specialized scalars are constants, so most index expressions
//! are affine in loop counters whose ranges follow from the loop bounds.
//! Every result is sound: a value the expression can take at run time lies
//! in the interval (an operation that may wrap around gives its type's whole
//! range).

use std::collections::HashMap;

use crate::ir::{BinOp, Expr, ExprKind, ForLoop, Function, ScalarValue, Type, UnOp, VarId};
use crate::types::ElemTy;

/// The integers `lo..=hi`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Interval {
    pub lo: i128,
    pub hi: i128,
}

impl Interval {
    pub fn new(lo: i128, hi: i128) -> Interval {
        Interval { lo, hi }
    }
    pub fn point(v: i128) -> Interval {
        Interval { lo: v, hi: v }
    }
    /// Every value of an integer or bool type; `None` for the others.
    pub fn of_type(t: ElemTy) -> Option<Interval> {
        Some(match t {
            ElemTy::Bool => Interval::new(0, 1),
            ElemTy::I8 => Interval::new(i8::MIN as i128, i8::MAX as i128),
            ElemTy::I16 => Interval::new(i16::MIN as i128, i16::MAX as i128),
            ElemTy::I32 => Interval::new(i32::MIN as i128, i32::MAX as i128),
            ElemTy::I64 => Interval::new(i64::MIN as i128, i64::MAX as i128),
            ElemTy::U8 => Interval::new(0, u8::MAX as i128),
            ElemTy::U16 => Interval::new(0, u16::MAX as i128),
            ElemTy::U32 => Interval::new(0, u32::MAX as i128),
            ElemTy::U64 => Interval::new(0, u64::MAX as i128),
            _ => return None,
        })
    }
    /// Every value lies in `lo..=hi`.
    pub fn within(self, lo: i128, hi: i128) -> bool {
        self.lo >= lo && self.hi <= hi
    }
    fn union(self, o: Interval) -> Interval {
        Interval::new(self.lo.min(o.lo), self.hi.max(o.hi))
    }
    /// `self` when it fits `t`, else all of `t` (the operation wraps).
    fn fit(self, t: ElemTy) -> Option<Interval> {
        let all = Interval::of_type(t)?;
        Some(if self.within(all.lo, all.hi) {
            self
        } else {
            all
        })
    }
}

/// What is known about variables at one point of a function: the ranges of
/// loop counters, of locals assigned once, and those implied by the
/// conditions of the enclosing `if`s.
#[derive(Clone, Default, Debug)]
pub struct Ranges {
    vars: HashMap<VarId, Interval>,
}

fn is_int(e: &Expr) -> bool {
    scalar_elem(e).is_some_and(|t| t.is_int())
}

fn scalar_elem(e: &Expr) -> Option<ElemTy> {
    match &e.ty {
        Type::Scalar(t) => Some(*t),
        _ => None,
    }
}

impl Ranges {
    pub fn set(&mut self, v: VarId, r: Interval) {
        self.vars.insert(v, r);
    }

    /// The values `e` (of function `f`) can take; `None` when it is not an
    /// integer or bool.
    pub fn expr(&self, f: &Function, e: &Expr) -> Option<Interval> {
        let t = scalar_elem(e)?;
        let all = Interval::of_type(t)?;
        let r = match &e.kind {
            ExprKind::Int(v) => Interval::point(*v as i128),
            ExprKind::Bool(b) => Interval::point(*b as i128),
            ExprKind::Var(v) => match f.var(*v).value {
                Some(ScalarValue::Int(c)) => Interval::point(c as i128),
                Some(ScalarValue::Bool(b)) => Interval::point(b as i128),
                _ => self.vars.get(v).copied().unwrap_or(all),
            },
            ExprKind::Convert { arg } => match scalar_elem(arg) {
                Some(a) if !a.is_float() => self.expr(f, arg).unwrap_or(all),
                _ => all,
            },
            ExprKind::Unary { op: UnOp::Neg, arg } => {
                let a = self.expr(f, arg)?;
                Interval::new(-a.hi, -a.lo)
            }
            ExprKind::Select { cond, then, else_ } => match wrap_of(cond, then, else_) {
                // `a < 0 ? a + c : a` (sema's negative index): each side
                // only where it is taken
                Some((a, c)) => {
                    let r = self.expr(f, a)?;
                    let neg = (r.lo < 0).then(|| Interval::new(r.lo + c, r.hi.min(-1) + c));
                    let pos = (r.hi >= 0).then(|| Interval::new(r.lo.max(0), r.hi));
                    match (neg, pos) {
                        (Some(n), Some(p)) => n.union(p),
                        (Some(n), None) => n,
                        (None, Some(p)) => p,
                        (None, None) => all,
                    }
                }
                None => self.expr(f, then)?.union(self.expr(f, else_)?),
            },
            ExprKind::CheckIndex { size, .. } => Interval::new(0, (*size - 1).max(0) as i128),
            ExprKind::GpuIndex(_) => Interval::new(0, all.hi),
            ExprKind::CpuThreads => Interval::new(1, all.hi),
            ExprKind::Binary { op, lhs, rhs } if !op.is_comparison() => {
                match (self.expr(f, lhs), self.expr(f, rhs)) {
                    (Some(a), Some(b)) => binary(*op, a, b).unwrap_or(all),
                    _ => all,
                }
            }
            _ => all,
        };
        r.fit(t)
    }

    /// The values the counter of `l` takes inside its body (sound when the
    /// body does not assign the counter; the caller checks that).
    pub fn loop_counter(&self, f: &Function, l: &ForLoop) -> Option<Interval> {
        Some(counter(self.expr(f, &l.lo)?, self.expr(f, &l.hi)?, l.step))
    }

    /// Narrows the ranges to what holds where `cond` is true (`v < e`,
    /// `v + c >= e`, ... joined by `and`).
    pub fn assume(&mut self, f: &Function, cond: &Expr) {
        if let ExprKind::Unary {
            op: crate::ir::UnOp::Not,
            arg,
        } = &cond.kind
        {
            return self.assume_not(f, arg);
        }
        let ExprKind::Binary { op, lhs, rhs } = &cond.kind else {
            return;
        };
        match op {
            BinOp::And => {
                self.assume(f, lhs);
                self.assume(f, rhs);
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                self.narrow(f, *op, lhs, rhs);
                let flipped = match op {
                    BinOp::Lt => BinOp::Gt,
                    BinOp::Le => BinOp::Ge,
                    BinOp::Gt => BinOp::Lt,
                    _ => BinOp::Le,
                };
                self.narrow(f, flipped, rhs, lhs);
            }
            _ => {}
        }
    }

    /// Narrows the ranges to what holds where `cond` is false (an `else`
    /// branch, the code after `if cond: continue`): `not (v < e)` is
    /// `v >= e` (integer comparisons), `not (a or b)` is `not a and not b`.
    pub fn assume_not(&mut self, f: &Function, cond: &Expr) {
        match &cond.kind {
            ExprKind::Unary {
                op: crate::ir::UnOp::Not,
                arg,
            } => self.assume(f, arg),
            ExprKind::Binary {
                op: BinOp::Or,
                lhs,
                rhs,
            } => {
                self.assume_not(f, lhs);
                self.assume_not(f, rhs);
            }
            ExprKind::Binary { op, lhs, rhs } if is_int(lhs) && is_int(rhs) => {
                let negated = match op {
                    BinOp::Lt => BinOp::Ge,
                    BinOp::Le => BinOp::Gt,
                    BinOp::Gt => BinOp::Le,
                    BinOp::Ge => BinOp::Lt,
                    _ => return,
                };
                let c = Expr::new(
                    ExprKind::Binary {
                        op: negated,
                        lhs: lhs.clone(),
                        rhs: rhs.clone(),
                    },
                    cond.ty.clone(),
                    cond.span,
                );
                self.assume(f, &c);
            }
            _ => {}
        }
    }

    /// `a op b` holds: narrow the variable of `a = v + c` (a comparison
    /// is done in a type both sides fit, so it holds of the values). Only
    /// variables given a range with [`Ranges::set`] are narrowed: the
    /// caller sets only those that keep their value.
    fn narrow(&mut self, f: &Function, op: BinOp, a: &Expr, b: &Expr) {
        let Some((v, c)) = var_plus_const(a) else {
            return;
        };
        let Some(b) = self.expr(f, b) else { return };
        let Some(&cur) = self.vars.get(&v) else {
            return;
        };
        // `v + c` must not wrap around
        match scalar_elem(a).and_then(Interval::of_type) {
            Some(t) if Interval::new(cur.lo + c, cur.hi + c).within(t.lo, t.hi) => {}
            _ => return,
        }
        let n = match op {
            BinOp::Lt => Interval::new(cur.lo, cur.hi.min(b.hi - 1 - c)),
            BinOp::Le => Interval::new(cur.lo, cur.hi.min(b.hi - c)),
            BinOp::Gt => Interval::new(cur.lo.max(b.lo + 1 - c), cur.hi),
            _ => Interval::new(cur.lo.max(b.lo - c), cur.hi),
        };
        self.vars.insert(v, n);
    }
}

/// The values of the counter of `range(lo, hi, step)` (lo..=hi-1 going up,
/// hi+1..=lo going down) from the ranges of its bounds.
pub fn counter(lo: Interval, hi: Interval, step: i64) -> Interval {
    if step > 0 {
        Interval::new(lo.lo, hi.hi - 1)
    } else {
        Interval::new(hi.lo + 1, lo.hi)
    }
}

/// `i < 0 ? i + dim : i`: Python's negative index `i` into a dimension of
/// size `dim` (the form [`wrap_of`] recognizes; sema builds it, and
/// `passes::check_bounds` folds it into an index check).
pub fn negative_wrap(i: Expr, dim: i64) -> Expr {
    let (ty, span) = (i.ty.clone(), i.span);
    let int_ty = i.elem();
    let bin = |op, l: Expr, r: Expr, t: Type| {
        Expr::new(
            ExprKind::Binary {
                op,
                lhs: Box::new(l),
                rhs: Box::new(r),
            },
            t,
            span,
        )
    };
    let neg = bin(
        BinOp::Lt,
        i.clone(),
        Expr::int(0, int_ty, span),
        Type::Scalar(ElemTy::Bool),
    );
    let wrapped = bin(
        BinOp::Add,
        i.clone(),
        Expr::int(dim, int_ty, span),
        ty.clone(),
    );
    Expr::select_as(neg, wrapped, i, ty, span)
}

/// The index inside sema's negative-index wrap of a dimension of size
/// `dim` (`a < 0 ? a + dim : a` -> `a`), or None when `ix` is not one.
pub fn unwrapped(ix: &Expr, dim: i64) -> Option<&Expr> {
    match &ix.kind {
        ExprKind::Select { cond, then, else_ } => wrap_of(cond, then, else_)
            .filter(|(_, c)| *c == dim as i128)
            .map(|(a, _)| a),
        _ => None,
    }
}

/// `a < 0 ? a + c : a` as `(a, c)`.
pub fn wrap_of<'e>(cond: &'e Expr, then: &'e Expr, else_: &'e Expr) -> Option<(&'e Expr, i128)> {
    let ExprKind::Binary {
        op: BinOp::Lt,
        lhs,
        rhs,
    } = &cond.kind
    else {
        return None;
    };
    let ExprKind::Binary {
        op: BinOp::Add,
        lhs: a,
        rhs: c,
    } = &then.kind
    else {
        return None;
    };
    match (&rhs.kind, &c.kind) {
        (ExprKind::Int(0), ExprKind::Int(c)) if **lhs == *else_ && **a == *else_ && *c > 0 => {
            Some((else_, *c as i128))
        }
        _ => None,
    }
}

/// The first dimension of an access `indices` that loop counter `var`
/// indexes as `var + c`, as `(dimension, c)`. A run-time checked index
/// counts (a failed check raises whatever the loop did), and so does one
/// that would count from the end if it were negative, when it never is:
/// `lowest` is the counter's least value, when known.
pub fn counter_dim(indices: &[Expr], var: VarId, lowest: Option<i128>) -> Option<(usize, i128)> {
    indices.iter().enumerate().find_map(|(d, ix)| {
        let (ix, wraps) = match &ix.kind {
            ExprKind::CheckIndex { arg, wrap, .. } => (&**arg, *wrap),
            _ => (ix, false),
        };
        var_plus_const(ix)
            .filter(|&(v, c)| v == var && (!wraps || lowest.is_some_and(|lo| lo + c >= 0)))
            .map(|(_, c)| (d, c))
    })
}

/// `v`, `v + c`, `v - c`, `c + v` (sema's slices index `lo + j`) as
/// `(v, c)`.
pub fn var_plus_const(e: &Expr) -> Option<(VarId, i128)> {
    match &e.kind {
        ExprKind::Var(v) => Some((*v, 0)),
        ExprKind::Binary {
            op: BinOp::Add,
            lhs,
            rhs,
        } if matches!(lhs.kind, ExprKind::Int(_)) => {
            let ExprKind::Int(c) = lhs.kind else {
                return None;
            };
            let (v, k) = var_plus_const(rhs)?;
            Some((v, k + c as i128))
        }
        ExprKind::Binary {
            op: op @ (BinOp::Add | BinOp::Sub),
            lhs,
            rhs,
        } => {
            let ExprKind::Int(c) = rhs.kind else {
                return None;
            };
            let (v, k) = var_plus_const(lhs)?;
            let c = c as i128;
            Some((v, if *op == BinOp::Add { k + c } else { k - c }))
        }
        _ => None,
    }
}

impl Ranges {
    /// `e` is `v` (a counter whose range `self` holds) through operations
    /// that keep order, with integer literals as the other operands: `v +
    /// c`, `v - c`, `c * v` with `c >= 0`, `v // c` with `c > 0`, `v >> c`
    /// of a non-negative `v`, nested; no step of it overflows its type over
    /// the counter's range. Its values for the counter's values then lie
    /// between its values at the first and at the last of them.
    pub fn nondecreasing_in(&self, e: &Expr, v: VarId) -> bool {
        self.raw_monotone(e, v).is_some()
    }

    /// The values of `e` when it is nondecreasing in `v` (see
    /// [`Ranges::nondecreasing_in`]), computed without wrapping.
    fn raw_monotone(&self, e: &Expr, v: VarId) -> Option<Interval> {
        let t = scalar_elem(e)?;
        let all = Interval::of_type(t)?;
        let lit = |x: &Expr| match x.kind {
            ExprKind::Int(c) => Some(c as i128),
            _ => None,
        };
        let r = match &e.kind {
            ExprKind::Var(w) if *w == v => *self.vars.get(w)?,
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, c) = match (lit(lhs), lit(rhs)) {
                    (None, Some(c)) => (self.raw_monotone(lhs, v)?, c),
                    (Some(c), None) if matches!(op, BinOp::Add | BinOp::Mul) => {
                        (self.raw_monotone(rhs, v)?, c)
                    }
                    _ => return None,
                };
                match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul if *op != BinOp::Mul || c >= 0 => {
                        binary(*op, a, Interval::point(c))?
                    }
                    BinOp::FloorDiv if c > 0 => binary(*op, a, Interval::point(c))?,
                    BinOp::Shr if a.lo >= 0 && (0..64).contains(&c) => {
                        binary(*op, a, Interval::point(c))?
                    }
                    _ => return None,
                }
            }
            _ => return None,
        };
        r.within(all.lo, all.hi).then_some(r)
    }
}

fn binary(op: BinOp, a: Interval, b: Interval) -> Option<Interval> {
    let corners = |f: &dyn Fn(i128, i128) -> Option<i128>| -> Option<Interval> {
        let v = [
            f(a.lo, b.lo)?,
            f(a.lo, b.hi)?,
            f(a.hi, b.lo)?,
            f(a.hi, b.hi)?,
        ];
        Some(Interval::new(*v.iter().min()?, *v.iter().max()?))
    };
    match op {
        BinOp::Add => Some(Interval::new(a.lo + b.lo, a.hi + b.hi)),
        BinOp::Sub => Some(Interval::new(a.lo - b.hi, a.hi - b.lo)),
        BinOp::Mul => corners(&|x, y| x.checked_mul(y)),
        BinOp::Max | BinOp::FMax => Some(Interval::new(a.lo.max(b.lo), a.hi.max(b.hi))),
        BinOp::Min | BinOp::FMin => Some(Interval::new(a.lo.min(b.lo), a.hi.min(b.hi))),
        // Python floor division and modulo by a positive divisor
        BinOp::FloorDiv if b.lo > 0 => corners(&|x, y| Some(x.div_euclid(y))),
        BinOp::Mod if b.lo > 0 => Some(Interval::new(0, b.hi - 1)),
        // `x & -2**k` rounds `x` down to a multiple of 2**k
        BinOp::BitAnd if round_down_mask(b).is_some() || round_down_mask(a).is_some() => {
            let (x, m) = match round_down_mask(b) {
                Some(m) => (a, m),
                None => (b, round_down_mask(a)?),
            };
            Some(Interval::new(x.lo & m, x.hi & m))
        }
        BinOp::BitAnd if a.lo >= 0 || b.lo >= 0 => {
            let hi = match (a.lo >= 0, b.lo >= 0) {
                (true, true) => a.hi.min(b.hi),
                (true, false) => a.hi,
                _ => b.hi,
            };
            Some(Interval::new(0, hi))
        }
        BinOp::Shr if a.lo >= 0 && b.lo >= 0 && b.hi < 64 => {
            Some(Interval::new(a.lo >> b.hi, a.hi >> b.lo))
        }
        _ => None,
    }
}

/// The mask `-2**k` (k < 63) that `r` holds, if it is one.
fn round_down_mask(r: Interval) -> Option<i128> {
    let m = r.lo;
    (r.hi == m && m < 0 && (-m as u128).is_power_of_two() && m > i64::MIN as i128).then_some(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::*;

    #[test]
    fn affine_in_a_counter() {
        let mut b = FnBuilder::new("f");
        let i = b.index_var("i");
        let mut r = Ranges::default();
        r.set(i, Interval::new(0, 9));
        let f = &b.f;
        let e = bin(BinOp::Add, bin(BinOp::Mul, var_e(f, i), int(2)), int(5));
        assert_eq!(r.expr(f, &e), Some(Interval::new(5, 23)));
        let m = bin(BinOp::Mod, var_e(f, i), int(4));
        assert_eq!(r.expr(f, &m), Some(Interval::new(0, 3)));
        let d = bin(
            BinOp::FloorDiv,
            bin(BinOp::Sub, var_e(f, i), int(3)),
            int(2),
        );
        assert_eq!(r.expr(f, &d), Some(Interval::new(-2, 3)));
    }

    #[test]
    fn conditions_narrow() {
        let mut b = FnBuilder::new("f");
        let i = b.index_var("i");
        let mut r = Ranges::default();
        r.set(i, Interval::new(0, 99));
        let f = &b.f;
        let c = bin(
            BinOp::And,
            bin(BinOp::Gt, var_e(f, i), int(0)),
            bin(BinOp::Lt, bin(BinOp::Add, var_e(f, i), int(1)), int(100)),
        );
        r.assume(f, &c);
        let e = bin(BinOp::Sub, var_e(f, i), int(1));
        assert_eq!(r.expr(f, &e), Some(Interval::new(0, 97)));
    }

    #[test]
    fn false_conditions_narrow() {
        let mut b = FnBuilder::new("f");
        let i = b.index_var("i");
        let f = &b.f;
        let at = |c: &Expr| {
            let mut r = Ranges::default();
            r.set(i, Interval::new(0, 99));
            r.assume_not(f, c);
            r.expr(f, &var_e(f, i))
        };
        // after `if i >= 32: continue`
        assert_eq!(
            at(&bin(BinOp::Ge, var_e(f, i), int(32))),
            Some(Interval::new(0, 31))
        );
        // `not (i < 5 or i > 90)`
        let c = bin(
            BinOp::Or,
            bin(BinOp::Lt, var_e(f, i), int(5)),
            bin(BinOp::Gt, var_e(f, i), int(90)),
        );
        assert_eq!(at(&c), Some(Interval::new(5, 90)));
        // `not (a and b)` says nothing about either
        let c = bin(
            BinOp::And,
            bin(BinOp::Lt, var_e(f, i), int(5)),
            bin(BinOp::Gt, var_e(f, i), int(1)),
        );
        assert_eq!(at(&c), Some(Interval::new(0, 99)));
    }

    #[test]
    fn loop_counters_up_and_down() {
        let p = Interval::point;
        // range(0, 10), range(9, -1, -1), range(2, n) with n in 5..=7
        assert_eq!(counter(p(0), p(10), 1), Interval::new(0, 9));
        assert_eq!(counter(p(9), p(-1), -1), Interval::new(0, 9));
        assert_eq!(counter(p(2), Interval::new(5, 7), 3), Interval::new(2, 6));
    }

    #[test]
    fn wrapping_gives_the_whole_type() {
        let mut b = FnBuilder::new("f");
        let i = b.index_var("i");
        let mut r = Ranges::default();
        r.set(i, Interval::new(0, i64::MAX as i128));
        let f = &b.f;
        let e = bin(BinOp::Add, var_e(f, i), int(1));
        assert_eq!(r.expr(f, &e), Interval::of_type(ElemTy::I64));
    }
}
