//! Order statistics of a slice (all its elements, no `axis`), NumPy's
//! values:
//! - `np.median(s)`: the middle element of the sorted elements, or the
//!   mean of the two middle ones (as `np.mean` computes it: in float64 for
//!   integers and bools, float32 for float16);
//! - `np.percentile(s, q)` / `np.quantile(s, q)` (a constant `q`, the
//!   default `method='linear'`): the two elements around the virtual index
//!   `(n - 1) * q`, interpolated by NumPy's `_lerp` with the weight a
//!   Python float (so in the elements' type; in float64 for integers).
//!
//! NaN when any element is NaN.
//!
//! Jit code does not sort: the elements go into a local array
//! (`Lowerer::materialize`), and the element of rank `m` is the one with
//! fewer than `m + 1` elements below it and more than `m` at or below it,
//! counted (n² comparisons: at most [`COUNTING_MAX`] elements). Any order of
//! the search gives the same value.

use crate::diag::{Diagnostic, Span};
use crate::ir::{
    BinOp, ElemTy, Expr, ExprKind, ForLoop, ScalarValue, Stmt, StmtKind, Type, VarId, VarKind,
};
use crate::syntax::ast;

use super::types::convert;
use super::{Lowerer, TExpr};

/// The most elements jit code ranks by counting (16 M comparisons): the
/// order statistics here, `np.sort` and `np.argsort` (`sema::sort`).
pub(super) const COUNTING_MAX: i64 = 4096;

/// The elements of given ranks of a slice, in locals set by the
/// statements added to `Lowerer::pre`.
struct Ranked {
    /// The number of elements (none: no statements, no values).
    n: i64,
    /// Their type.
    et: ElemTy,
    /// The element of each rank asked for.
    values: Vec<VarId>,
    /// Whether some element is NaN (floats).
    nan: VarId,
}

impl Lowerer<'_, '_> {
    /// The elements of `arg` (a slice) of the ranks `ranks(n)` gives.
    fn ranked(
        &mut self,
        name: &str,
        arg: &ast::Expr,
        ranks: &dyn Fn(i64) -> Vec<i64>,
        span: Span,
    ) -> Option<Ranked> {
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
        self.countable(name, n, arg.span, "finds ranks by counting")?;
        let int_ty = self.opts.int_type;
        let bt = Type::Scalar(ElemTy::Bool);
        let nan = self.new_var("has_nan", bt.clone(), VarKind::Local, span);
        if n == 0 {
            return Some(Ranked {
                n,
                et,
                values: vec![],
                nan,
            });
        }
        let mut inner = self.sink_dependent(from, ctx.vars());
        let mut e = elem.e;
        let j = self.materialize((ctx.vars(), &extents), &mut inner, &mut e, et, span);
        let ExprKind::Index { array: tmp, .. } = e.kind else {
            return None;
        };
        let (et_ty, it) = (Type::Scalar(et), Type::Scalar(int_ty));
        let local =
            |l: &mut Self, name: &str, ty: &Type| l.new_var(name, ty.clone(), VarKind::Local, span);
        let values: Vec<VarId> = ranks(n)
            .iter()
            .map(|_| local(self, "ranked", &et_ty))
            .collect();
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
        ];
        body.extend(
            ranks(n)
                .into_iter()
                .zip(&values)
                .map(|(m, &dst)| pick(m, dst)),
        );
        if et.is_float() {
            let is_nan = bin(BinOp::Ne, var(v, &et_ty), var(v, &et_ty), &bt);
            body.insert(1, assign(nan, bin(BinOp::Or, var(nan, &bt), is_nan, &bt)));
        }
        let zero = match et {
            ElemTy::Bool => Expr::new(ExprKind::Bool(false), bt.clone(), span),
            t if t.is_float() => Expr::new(ExprKind::Float(0.0), et_ty.clone(), span),
            t => Expr::int(0, t, span),
        };
        self.pre
            .extend(values.iter().map(|&v| assign(v, zero.clone())));
        self.pre.extend([
            assign(nan, Expr::new(ExprKind::Bool(false), bt.clone(), span)),
            Stmt::new(
                StmtKind::For(Box::new(ForLoop::sequential(k, int(0), int(n), body))),
                span,
            ),
        ]);
        Some(Ranked { n, et, values, nan })
    }

    /// `None` (and an error) when `n` elements are too many to rank by
    /// counting; `how` says what `name` counts.
    pub(super) fn countable(&mut self, name: &str, n: i64, at: Span, how: &str) -> Option<()> {
        if n <= COUNTING_MAX {
            return Some(());
        }
        self.error(
            Diagnostic::error(format!(
                "`{name}` of {n} elements is not supported (at most {COUNTING_MAX})"
            ))
            .at(at, format!("{n} elements"))
            .note(format!("jit code {how}, n² comparisons, in a local copy"))
            .help("sort the data outside the kernel, or work on smaller windows"),
        );
        None
    }

    /// `value`, or NaN where an element of `r` is NaN.
    fn nan_aware(r: &Ranked, value: Expr, span: Span) -> TExpr {
        let ty = value.ty.clone();
        let e = match r.et.is_float() {
            true => Expr::select_as(
                Expr::var(r.nan, Type::Scalar(ElemTy::Bool), span),
                Expr::new(ExprKind::Float(f64::NAN), ty.clone(), span),
                value,
                ty,
                span,
            ),
            false => value,
        };
        TExpr { e, weak: false }
    }

    pub(super) fn median(&mut self, name: &str, arg: &ast::Expr, span: Span) -> Option<TExpr> {
        let r = self.ranked(name, arg, &|n| vec![(n - 1) / 2, n / 2], span)?;
        let (n, et) = (r.n, r.et);
        // NumPy's result: the float type, float64 for integers and bools
        let rt = if et.is_float() { et } else { ElemTy::F64 };
        if n == 0 {
            // (NumPy: the mean of an empty slice, NaN with a warning)
            return Some(TExpr {
                e: Expr::new(ExprKind::Float(f64::NAN), Type::Scalar(rt), span),
                weak: false,
            });
        }
        let et_ty = Type::Scalar(et);
        let var = |id, ty: &Type| Expr::var(id, ty.clone(), span);
        let bin = |op, l, r, ty: &Type| Expr::binary(op, l, r, ty.clone(), span);
        let (lo_v, hi_v) = (r.values[0], r.values[1]);
        // the mean of the middle one or two, as `np.mean` adds them: from
        // 0.0 (a -0.0 alone, or -0.0 and -0.0, give 0.0: NumPy's median is
        // never -0.0), in float32 for float16
        let acc = match et {
            ElemTy::F16 => ElemTy::F32,
            t if t.is_float() => t,
            _ => ElemTy::F64,
        };
        let at = Type::Scalar(acc);
        let lo = convert(var(lo_v, &et_ty), acc);
        let first = match et.is_float() {
            true => bin(
                BinOp::Add,
                Expr::new(ExprKind::Float(0.0), at.clone(), span),
                lo,
                &at,
            ),
            false => lo,
        };
        let mean = if n % 2 == 1 {
            convert(first, rt)
        } else {
            let sum = bin(BinOp::Add, first, convert(var(hi_v, &et_ty), acc), &at);
            let two = Expr::new(ExprKind::Float(2.0), at.clone(), span);
            convert(bin(BinOp::Div, sum, two, &at), rt)
        };
        Some(Self::nan_aware(&r, mean, span))
    }
}

/// NumPy's `_get_indexes` and `_get_gamma` for `method='linear'` of `n`
/// elements at the quantile `q`: the ranks of the two neighbours of the
/// virtual index `(n - 1) * q` (both the last element from `n - 1` on,
/// where NumPy's previous index is -1) and the weight of the second, the
/// virtual index minus that previous index.
fn linear_neighbours(n: i64, q: f64) -> ([i64; 2], f64) {
    let virtual_index = (n - 1) as f64 * q;
    if virtual_index >= (n - 1) as f64 {
        return ([n - 1, n - 1], virtual_index + 1.0);
    }
    let previous = virtual_index.floor();
    (
        [previous as i64, previous as i64 + 1],
        virtual_index - previous,
    )
}

impl Lowerer<'_, '_> {
    /// `np.percentile(arg, q)` (`percent`) or `np.quantile(arg, q)`: NumPy's
    /// `method='linear'` for a Python number `q` known when compiling.
    pub(super) fn quantile(
        &mut self,
        name: &str,
        arg: &ast::Expr,
        q: &ast::Expr,
        percent: bool,
        span: Span,
    ) -> Option<TExpr> {
        let t = self.lower_expr(q)?;
        let value = match super::types::const_scalar(&t.e).filter(|_| t.weak) {
            Some(ScalarValue::Float(v)) => Some(v),
            Some(ScalarValue::Int(v)) => Some(v as f64),
            _ => None,
        };
        let Some(q_value) = value else {
            self.error(
                Diagnostic::error(format!("the `q` of `{name}` must be a Python number known when compiling"))
                    .at(q.span, "not a constant Python number")
                    .note("parpy computes where the quantile falls when compiling; NumPy interpolates in other types for a NumPy number or an array of them")
                    .help("write the number (`np.percentile(s, 90)`), or pass it as a scalar argument"),
            );
            return None;
        };
        // np.true_divide(q, 100) for percentiles, in float64
        let qq = if percent { q_value / 100.0 } else { q_value };
        if !(0.0..=1.0).contains(&qq) {
            let msg = match percent {
                true => "Percentiles must be in the range [0, 100]",
                false => "Quantiles must be in the range [0, 1]",
            };
            self.error(
                Diagnostic::error(format!("`q` is {q_value}: {msg}"))
                    .at(q.span, "out of range")
                    .note("NumPy raises a ValueError"),
            );
            return None;
        }
        let ranks = move |n: i64| linear_neighbours(n, qq).0.to_vec();
        let r = self.ranked(name, arg, &ranks, span)?;
        let (n, et) = (r.n, r.et);
        if n == 0 {
            self.error(
                Diagnostic::error(format!("`{name}` of an empty slice"))
                    .at(arg.span, "no elements")
                    .note("NumPy raises an IndexError"),
            );
            return None;
        }
        if et == ElemTy::Bool {
            self.error(
                Diagnostic::error(format!("`{name}` of booleans is not supported"))
                    .at(arg.span, "booleans")
                    .note("NumPy raises a TypeError: it subtracts the two neighbours")
                    .help("convert the elements to a number type first (`s.astype(np.int64)`)"),
            );
            return None;
        }
        let gamma = linear_neighbours(n, qq).1;
        // _lerp(a, b, gamma) with gamma a Python float: in the elements'
        // float type, in float64 for integers (whose difference wraps)
        let rt = if et.is_float() { et } else { ElemTy::F64 };
        let (et_ty, rt_ty) = (Type::Scalar(et), Type::Scalar(rt));
        let var = |id| Expr::var(id, et_ty.clone(), span);
        let weak = |v: f64| {
            convert(
                Expr::new(ExprKind::Float(v), Type::Scalar(ElemTy::F64), span),
                rt,
            )
        };
        let bin = |op, l, r| Expr::binary(op, l, r, rt_ty.clone(), span);
        let (a, b) = (var(r.values[0]), var(r.values[1]));
        let diff = convert(
            Expr::binary(BinOp::Sub, b.clone(), a.clone(), et_ty.clone(), span),
            rt,
        );
        let value = match gamma >= 0.5 {
            false => bin(
                BinOp::Add,
                convert(a, rt),
                bin(BinOp::Mul, diff, weak(gamma)),
            ),
            true => bin(
                BinOp::Sub,
                convert(b, rt),
                bin(BinOp::Mul, diff, weak(1.0 - gamma)),
            ),
        };
        Some(Self::nan_aware(&r, value, span))
    }
}
