//! NumPy's reductions that skip NaN, and `np.ptp`, as NumPy computes them:
//!
//! * `np.nansum` / `np.nanprod`: `np.sum` / `np.prod` of the slice with each
//!   NaN replaced by 0 / 1 (NumPy's `_replace_nan`, then the same sum: the
//!   same order and accumulator type, so the same bits);
//! * `np.nanmax` / `np.nanmin`: the extreme of the numbers that are not NaN
//!   (NaN replaced by -inf / +inf), NaN when every element is NaN (a second
//!   reduction: whether any element is a number);
//! * `np.nanmean`: the `np.nansum` divided by the count of numbers, in
//!   float64 (float32 on Metal), rounded to the elements' float type (NumPy's
//!   `_divide_by_count`); NaN when there is none;
//! * `np.nanvar` / `np.nanstd`: that mean kept in the elements' type, then
//!   the sum of the numbers' squared deviations from it (a NaN counts 0)
//!   over `count - ddof`, divided in float64 and rounded likewise; NaN
//!   where `count - ddof` is not positive; `nanstd` its square root;
//! * `np.ptp`: `max - min` in the elements' type.
//!
//! Of integers and bools (no NaN) each is its plain reduction (`np.mean` for
//! `np.nanmean`). Every reduction of one call reduces the same axes.

use crate::diag::Span;
use crate::ir::VarKind;
use crate::ir::{BinOp, ElemTy, Expr, ExprKind, MathFn, Place, ReduceOp, Stmt, StmtKind, Type};
use crate::syntax::ast;

use super::calls::math_of;
use super::slices::AccRule;
use super::types::convert;
use super::{Lowerer, TExpr};

/// Whether `e` is a number (not NaN), as a bool.
fn is_number(e: &Expr) -> Expr {
    Expr::compare(BinOp::Eq, e.clone(), e.clone(), e.span)
}

/// `e` where it is not NaN, `other` (of `e`'s type) where it is; `e` itself
/// when its type has no NaN.
fn unless_nan(e: TExpr, ty: ElemTy, other: f64) -> TExpr {
    if !ty.is_float() {
        return e;
    }
    let other = Expr::new(ExprKind::Float(other), Type::Scalar(ty), e.e.span);
    TExpr {
        e: Expr::select(is_number(&e.e), e.e, other),
        weak: e.weak,
    }
}

impl Lowerer<'_, '_> {
    /// The element type of the slice expression `arg` reduces over (its
    /// lowering is repeated by the reduction; this one is dropped).
    pub(super) fn reduced_elem(&mut self, arg: &ast::Expr) -> Option<ElemTy> {
        let (from, axis) = (self.pre.len(), self.axis.clone());
        let labels = self.red_labels.clone();
        let (elem, ctx) = self.lower_reduced(arg);
        self.pre.truncate(from);
        (self.axis, self.red_labels) = (axis, labels);
        // (an error stops here: the reduction does not repeat it)
        ctx?;
        let elem = elem?;
        self.scalar_elem(&elem)
    }

    /// `np.nansum(s)`, `np.nanprod(s)`, `np.nanmax(s)`, `np.nanmin(s)`
    /// (`op`), with the call's `axis` and `keepdims`.
    pub(super) fn nan_reduction(
        &mut self,
        op: ReduceOp,
        arg: &ast::Expr,
        span: Span,
    ) -> Option<TExpr> {
        let et = self.reduced_elem(arg)?;
        let replace = match op {
            ReduceOp::Sum => 0.0,
            ReduceOp::Prod => 1.0,
            ReduceOp::Max => f64::NEG_INFINITY,
            ReduceOp::Min => f64::INFINITY,
        };
        let axes = self.axis.clone();
        let (r, _, _) = self.reduction_mapped(op, arg, span, AccRule::NumPy, &|_, e| {
            Some(unless_nan(e, et, replace))
        })?;
        if !et.is_float() || matches!(op, ReduceOp::Sum | ReduceOp::Prod) {
            return Some(r);
        }
        // every element NaN: NaN (`np.fmax.reduce`)
        self.axis = axes;
        let any = self.of_numbers(ReduceOp::Max, arg, span)?;
        let nan = Expr::new(ExprKind::Float(f64::NAN), r.e.ty.clone(), span);
        Some(TExpr {
            e: Expr::select(any.e, r.e, nan),
            weak: false,
        })
    }

    /// `np.nanmean(s)`: the sum of the numbers over their count, divided in
    /// float64 and rounded to the elements' type; `np.mean` of integers.
    pub(super) fn nan_mean(&mut self, arg: &ast::Expr, span: Span) -> Option<TExpr> {
        let et = self.reduced_elem(arg)?;
        if !et.is_float() {
            return self.mean(arg, span);
        }
        let (tot, cnt) = self.sum_and_count(arg, et, span)?;
        Some(self.divide_by_count(tot, cnt, et, span))
    }

    /// NumPy's `_divide_by_count`: `a / count` in float64 (float32 on
    /// Metal, which has no float64), rounded to `et`.
    fn divide_by_count(&self, a: Expr, count: Expr, et: ElemTy, span: Span) -> TExpr {
        let wide = match self.opts.backend {
            crate::options::Backend::Metal => ElemTy::F32,
            _ => ElemTy::F64,
        };
        let q = Expr::binary(
            BinOp::Div,
            convert(a, wide),
            convert(count, wide),
            Type::Scalar(wide),
            span,
        );
        TExpr {
            e: convert(q, et),
            weak: false,
        }
    }

    /// `np.nanvar(s)` / `np.nanstd(s)` (`std`) with `ddof`; `np.var` /
    /// `np.std` of integers and bools.
    pub(super) fn nan_variance(
        &mut self,
        arg: &ast::Expr,
        ddof: Option<&ast::Expr>,
        std: bool,
        span: Span,
    ) -> Option<TExpr> {
        let et = self.reduced_elem(arg)?;
        if !et.is_float() {
            return self.variance(arg, ddof, std, span);
        }
        let ddof = self.ddof(ddof)?;
        // the three reductions reduce the same axes
        let axes = self.axis.clone();
        let (tot, cnt) = self.sum_and_count(arg, et, span)?;
        let keep = |this: &mut Self, name: &str, e: Expr| {
            let v = this.new_var(name, e.ty.clone(), VarKind::Local, span);
            let ty = e.ty.clone();
            this.pre.push(Stmt::new(
                StmtKind::Assign {
                    dst: Place::Var(v),
                    value: e,
                },
                span,
            ));
            Expr::var(v, ty, span)
        };
        let cnt = keep(self, "count", cnt);
        let avg = self.divide_by_count(tot, cnt.clone(), et, span).e;
        let avg = keep(self, "mean", avg);
        self.axis = axes;
        let (sq, _, _) =
            self.reduction_mapped(ReduceOp::Sum, arg, span, AccRule::NumPy, &|this, e| {
                let number = is_number(&e.e);
                let strong = |e| TExpr { e, weak: false };
                let d = this.binary(BinOp::Sub, strong(e.e), strong(avg.clone()), span)?;
                let sq = this.binary(BinOp::Mul, d.clone(), d, span)?;
                let zero = Expr::new(ExprKind::Float(0.0), sq.e.ty.clone(), span);
                Some(strong(Expr::select(number, sq.e, zero)))
            })?;
        // NumPy divides by `count - ddof`, NaN where that is not positive
        let dof = Expr::binary(
            BinOp::Sub,
            convert(cnt, ElemTy::F64),
            Expr::new(ExprKind::Float(ddof), Type::Scalar(ElemTy::F64), span),
            Type::Scalar(ElemTy::F64),
            span,
        );
        let var = self.divide_by_count(sq.e, dof.clone(), et, span);
        let positive = Expr::compare(
            BinOp::Gt,
            dof,
            Expr::new(ExprKind::Float(0.0), Type::Scalar(ElemTy::F64), span),
            span,
        );
        let nan = Expr::new(ExprKind::Float(f64::NAN), Type::Scalar(et), span);
        let var = TExpr {
            e: Expr::select(positive, var.e, nan),
            weak: false,
        };
        Some(if std {
            math_of(MathFn::Sqrt, var, span)
        } else {
            var
        })
    }

    /// The sum of the numbers of the float slice expression `arg` (NaN
    /// replaced by 0, as `np.nansum`) and their count, reducing the call's
    /// axes.
    fn sum_and_count(&mut self, arg: &ast::Expr, et: ElemTy, span: Span) -> Option<(Expr, Expr)> {
        let axes = self.axis.clone();
        let (tot, _, _) =
            self.reduction_mapped(ReduceOp::Sum, arg, span, AccRule::NumPy, &|_, e| {
                Some(unless_nan(e, et, 0.0))
            })?;
        self.axis = axes;
        let cnt = self.of_numbers(ReduceOp::Sum, arg, span)?;
        Some((tot.e, cnt.e))
    }

    /// The `op` reduction of whether each element of `arg` is a number:
    /// whether any is (`Max`), how many are (`Sum`).
    fn of_numbers(&mut self, op: ReduceOp, arg: &ast::Expr, span: Span) -> Option<TExpr> {
        let (r, _, _) = self.reduction_mapped(op, arg, span, AccRule::NumPy, &|_, e| {
            Some(TExpr {
                e: is_number(&e.e),
                weak: false,
            })
        })?;
        Some(r)
    }

    /// `np.ptp(s)`: `np.max(s) - np.min(s)` in the elements' type (integers
    /// wrap, as NumPy's).
    pub(super) fn ptp(&mut self, arg: &ast::Expr, span: Span) -> Option<TExpr> {
        let axes = self.axis.clone();
        let hi = self.reduction(ReduceOp::Max, arg, span)?;
        self.axis = axes;
        let lo = self.reduction(ReduceOp::Min, arg, span)?;
        // (NumPy: `-` of bools is an error)
        let strong = |t: TExpr| TExpr {
            e: t.e,
            weak: false,
        };
        self.binary(BinOp::Sub, strong(hi), strong(lo), span)
    }
}
