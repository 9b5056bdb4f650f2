//! `np.median(s)` of a slice (all its elements, no `axis`): NumPy's value,
//! the middle element of the sorted elements, or the mean of the two
//! middle ones (as `np.mean` computes it: in float64 for integers and
//! bools, float32 for float16); NaN when any element is NaN.
//!
//! Jit code does not sort: the elements go into a local array
//! (`Lowerer::materialize`), and the element of rank `m` is the one with
//! fewer than `m + 1` elements below it and more than `m` at or below it,
//! counted (n² comparisons: at most [`MEDIAN_MAX`] elements). Any order of
//! the search gives the same value.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, ExprKind, ForLoop, Stmt, StmtKind, Type, VarKind};
use crate::syntax::ast;

use super::types::convert;
use super::{Lowerer, TExpr};

/// The most elements `np.median` counts through (16 M comparisons).
const MEDIAN_MAX: i64 = 4096;

impl Lowerer<'_, '_> {
    pub(super) fn median(&mut self, name: &str, arg: &ast::Expr, span: Span) -> Option<TExpr> {
        self.sequential_only(name)?;
        let from = self.pre.len();
        let (elem, ctx) = self.lower_reduced(arg);
        let (ctx, elem) = (ctx?, elem?);
        let et = self.scalar_elem(&elem)?;
        let Some(extents) = ctx.extents().map(<[i64]>::to_vec) else {
            self.error(
                Diagnostic::error(format!("`{name}` of a number"))
                    .at(arg.span, "not an array")
                    .help("take the median of a slice (`np.median(x[i, :])`)"),
            );
            return None;
        };
        let n: i64 = extents.iter().product();
        if n > MEDIAN_MAX {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of {n} elements is not supported (at most {MEDIAN_MAX})"
                ))
                .at(arg.span, format!("{n} elements"))
                .note("jit code finds a median by counting, n² comparisons, in a local copy")
                .help("sort the data outside the kernel, or take medians of smaller windows"),
            );
            return None;
        }
        // NumPy's result: the float type, float64 for integers and bools
        let rt = if et.is_float() { et } else { ElemTy::F64 };
        let int_ty = self.opts.int_type;
        if n == 0 {
            // (NumPy: the mean of an empty slice, NaN with a warning)
            return Some(TExpr {
                e: Expr::new(ExprKind::Float(f64::NAN), Type::Scalar(rt), span),
                weak: false,
            });
        }
        let mut inner = self.sink_dependent(from, ctx.vars());
        let mut e = elem.e;
        let j = self.materialize((ctx.vars(), &extents), &mut inner, &mut e, et, span);
        let ExprKind::Index { array: tmp, .. } = e.kind else {
            return None;
        };
        let (et_ty, it, bt) = (
            Type::Scalar(et),
            Type::Scalar(int_ty),
            Type::Scalar(ElemTy::Bool),
        );
        let local =
            |l: &mut Self, name: &str, ty: &Type| l.new_var(name, ty.clone(), VarKind::Local, span);
        let (lo_v, hi_v, nan) = (
            local(self, "median_lo", &et_ty),
            local(self, "median_hi", &et_ty),
            local(self, "has_nan", &bt),
        );
        let (v, less, same) = (
            local(self, "v", &et_ty),
            local(self, "below", &it),
            local(self, "same", &it),
        );
        let k = self.new_var("k", it.clone(), VarKind::LoopIndex, span);
        let read = |at| {
            Expr::new(
                ExprKind::Index {
                    array: tmp,
                    indices: vec![Expr::var(at, it.clone(), span)],
                },
                et_ty.clone(),
                span,
            )
        };
        let assign = |dst, value| Stmt::assign_var(dst, value, span);
        let var = |id, ty: &Type| Expr::var(id, ty.clone(), span);
        let bin = |op, l, r, ty: &Type| Expr::binary(op, l, r, ty.clone(), span);
        let int = |c| Expr::int(c, int_ty, span);
        // below += w < v; same += w == v, over every element w
        let count = |op, c| {
            let hit = bin(op, read(j), var(v, &et_ty), &bt);
            assign(c, bin(BinOp::Add, var(c, &it), convert(hit, int_ty), &it))
        };
        let counting = ForLoop::sequential(
            j,
            int(0),
            int(n),
            vec![count(BinOp::Lt, less), count(BinOp::Eq, same)],
        );
        // `v` has rank `m` when below <= m < below + same
        let ranked = |m| {
            let at_least = bin(BinOp::Le, var(less, &it), int(m), &bt);
            let upto = bin(BinOp::Add, var(less, &it), var(same, &it), &it);
            bin(BinOp::And, at_least, bin(BinOp::Lt, int(m), upto, &bt), &bt)
        };
        let pick = |m, dst| {
            Stmt::new(
                StmtKind::If {
                    cond: ranked(m),
                    then_body: vec![assign(dst, var(v, &et_ty))],
                    else_body: vec![],
                },
                span,
            )
        };
        let mut body = vec![
            assign(v, read(k)),
            assign(less, int(0)),
            assign(same, int(0)),
            Stmt::new(StmtKind::For(Box::new(counting)), span),
            pick((n - 1) / 2, lo_v),
            pick(n / 2, hi_v),
        ];
        if et.is_float() {
            let is_nan = bin(BinOp::Ne, var(v, &et_ty), var(v, &et_ty), &bt);
            body.insert(1, assign(nan, bin(BinOp::Or, var(nan, &bt), is_nan, &bt)));
        }
        let zero = match et {
            ElemTy::Bool => Expr::new(ExprKind::Bool(false), bt.clone(), span),
            t if t.is_float() => Expr::new(ExprKind::Float(0.0), et_ty.clone(), span),
            t => Expr::int(0, t, span),
        };
        self.pre.extend([
            assign(lo_v, zero.clone()),
            assign(hi_v, zero),
            assign(nan, Expr::new(ExprKind::Bool(false), bt.clone(), span)),
            Stmt::new(
                StmtKind::For(Box::new(ForLoop::sequential(k, int(0), int(n), body))),
                span,
            ),
        ]);
        // the mean of the middle one or two, as `np.mean` adds them
        let mean = if n % 2 == 1 {
            convert(var(lo_v, &et_ty), rt)
        } else {
            let acc = match et {
                ElemTy::F16 => ElemTy::F32,
                t if t.is_float() => t,
                _ => ElemTy::F64,
            };
            let at = Type::Scalar(acc);
            let sum = bin(
                BinOp::Add,
                convert(var(lo_v, &et_ty), acc),
                convert(var(hi_v, &et_ty), acc),
                &at,
            );
            let two = Expr::new(ExprKind::Float(2.0), at.clone(), span);
            convert(bin(BinOp::Div, sum, two, &at), rt)
        };
        let e = if et.is_float() {
            Expr::new(
                ExprKind::Select {
                    cond: Box::new(var(nan, &bt)),
                    then: Box::new(Expr::new(ExprKind::Float(f64::NAN), Type::Scalar(rt), span)),
                    else_: Box::new(mean),
                },
                Type::Scalar(rt),
                span,
            )
        } else {
            mean
        };
        Some(TExpr { e, weak: false })
    }
}
