//! `np.linspace(start, stop, num)` as an operand of an array expression
//! (`y[i, :] = np.linspace(0.0, x[i, 0], 8)`, `t = np.linspace(a, b, 5)`):
//! NumPy would allocate the array; parpy computes its elements where the
//! expression reads them, as NumPy's `linspace` does. `num` is known when
//! compiling; `start` and `stop` are numbers, maybe known only at run time.
//!
//! NumPy's steps, in the type of `start` and `stop` made inexact (`dt`):
//! `div = num - 1` with the end point, else `num`; `delta = stop - start`;
//! `step = delta / div`; element `k` is `k * step + start`, or `(k / div) *
//! delta + start` where `step` is zero (a `delta` too small to divide);
//! `k * delta + start` when `div` is 0; the last element is `stop` itself
//! with the end point. An integer `dtype` takes the floor, then the type.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, ExprKind, MathFn, Type};
use crate::syntax::ast;

use super::slices::IndexSlot;
use super::types::{convert, promote};
use super::{Lowerer, TExpr};

/// NumPy's parameters of `linspace`, in its order.
const PARAMS: [&str; 7] = [
    "start", "stop", "num", "endpoint", "retstep", "dtype", "axis",
];

impl Lowerer<'_, '_> {
    /// `np.linspace(args)` read inside an array expression (see the module
    /// doc); `None` after an error.
    pub(super) fn linspace(
        &mut self,
        (args, keywords): (&[ast::Expr], &[ast::Keyword]),
        span: Span,
    ) -> Option<TExpr> {
        let given = self.bound_params("np.linspace", &PARAMS, (args, keywords), span)?;
        let (Some(start), Some(stop)) = (given[0], given[1]) else {
            self.error(
                Diagnostic::error("`np.linspace` needs its `start` and `stop` arguments")
                    .at(span, "missing"),
            );
            return None;
        };
        let num = match given[2] {
            Some(n) => self.known_count(n)?,
            None => 50,
        };
        let endpoint = match given[3] {
            Some(e) => self.known_flag(e, "endpoint", "np.linspace")?,
            None => true,
        };
        if let Some(r) = given[4] {
            if self.known_flag(r, "retstep", "np.linspace")? {
                self.error(
                    Diagnostic::error("`np.linspace(..., retstep=True)` returns a pair")
                        .at(r.span, "retstep=True")
                        .help("compute the step yourself: `(stop - start) / (num - 1)`"),
                );
                return None;
            }
        }
        if let Some(a) = given[6] {
            let axis = self.lower_expr(a)?;
            if !matches!(self.known_int(&axis.e), Some(0 | -1)) {
                self.error(
                    Diagnostic::error("`np.linspace` of numbers has one axis")
                        .at(a.span, "another axis")
                        .note("`start` and `stop` are numbers here: the array is 1-D"),
                );
                return None;
            }
        }
        let dtype = match given[5] {
            Some(d) => Some(self.allocation_dtype(d)?),
            None => None,
        };
        let start = self.linspace_bound(start)?;
        let stop = self.linspace_bound(stop)?;
        // NumPy's result type of the bounds, made inexact
        let (dt, _) = promote(
            (start.e.ty.elem()?, start.weak),
            (stop.e.ty.elem()?, stop.weak),
            self.opts,
        );
        let dt = if dt.is_float() {
            dt
        } else {
            self.opts.float_type
        };
        let slot = IndexSlot::Slice {
            lo: Expr::int(0, self.opts.int_type, span),
            extent: num,
            step: 1,
            rot: 0,
        };
        let k = self.map_slices(vec![slot], false, span)?.pop()?;
        let ty = Type::Scalar(dt);
        let bin = |op, a: Expr, b: Expr| Expr::binary(op, a, b, ty.clone(), span);
        let float = |v: f64| {
            convert(
                Expr::new(ExprKind::Float(v), Type::Scalar(ElemTy::F64), span),
                dt,
            )
        };
        let (start, stop) = (convert(start.e, dt), convert(stop.e, dt));
        let div = if endpoint { num - 1 } else { num };
        let kf = convert(k.clone(), dt);
        let delta = bin(BinOp::Sub, stop.clone(), start.clone());
        let scaled = if div > 0 {
            let step = bin(BinOp::Div, delta.clone(), float(div as f64));
            let zero = Expr::compare(BinOp::Eq, step.clone(), float(0.0), span);
            let small = bin(
                BinOp::Mul,
                bin(BinOp::Div, kf.clone(), float(div as f64)),
                delta,
            );
            Expr::select(zero, small, bin(BinOp::Mul, kf, step))
        } else {
            bin(BinOp::Mul, kf, delta)
        };
        let mut e = bin(BinOp::Add, scaled, start);
        if endpoint && num > 1 {
            let last = Expr::compare(
                BinOp::Eq,
                k,
                Expr::int(num - 1, self.opts.int_type, span),
                span,
            );
            e = Expr::select(last, stop, e);
        }
        let e = match dtype {
            Some(t) if t.is_int() => convert(Expr::math(MathFn::Floor, vec![e], dt, span), t),
            Some(t) => convert(e, t),
            None => e,
        };
        Some(TExpr { e, weak: false })
    }

    /// A bound of `np.linspace`: a number (not an array).
    fn linspace_bound(&mut self, a: &ast::Expr) -> Option<TExpr> {
        let (t, ctx) = self.lower_reduced(a);
        let was_array = ctx.is_some_and(|c| c.extents().is_some());
        let t = t?;
        if was_array || !matches!(t.e.ty, Type::Scalar(_)) {
            self.error(
                Diagnostic::error(
                    "`np.linspace` takes numbers as `start` and `stop` in parpy functions",
                )
                .at(a.span, "not a number")
                .help("write the ramp out: `start + (stop - start) * np.arange(n) / (n - 1)`"),
            );
            return None;
        }
        Some(t)
    }

    /// `num` of `np.linspace`: a count known when compiling.
    fn known_count(&mut self, n: &ast::Expr) -> Option<i64> {
        let t = self.lower_expr(n)?;
        match self.known_int(&t.e) {
            Some(v) if v >= 0 && t.e.ty.elem().is_some_and(|e| e.is_int()) => Some(v),
            Some(v) if t.e.ty.elem().is_some_and(|e| e.is_int()) => {
                self.error(
                    Diagnostic::error(format!("`num` of `np.linspace` is negative ({v})"))
                        .at(n.span, "negative")
                        .note("NumPy raises ValueError for it"),
                );
                None
            }
            _ => {
                self.error(
                    Diagnostic::error(
                        "`num` of `np.linspace` must be an integer known when compiling",
                    )
                    .at(n.span, "not a known integer")
                    .note("the length of every array must be known when compiling"),
                );
                None
            }
        }
    }

    /// A flag of `call` (`np.linspace`'s `endpoint`, `retstep`,
    /// `np.array_equal`'s `equal_nan`): a bool known when compiling.
    pub(super) fn known_flag(&mut self, e: &ast::Expr, what: &str, call: &str) -> Option<bool> {
        let t = self.lower_expr(e)?;
        match t.e.kind {
            ExprKind::Bool(b) => Some(b),
            _ => {
                self.error(
                    Diagnostic::error(format!("`{what}` of `{call}` must be True or False"))
                        .at(e.span, "not a known bool"),
                );
                None
            }
        }
    }
}
