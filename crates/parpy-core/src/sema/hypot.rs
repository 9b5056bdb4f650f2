//! Python's `math.hypot(*coordinates)` (any number of them since Python
//! 3.8): CPython's `vector_norm` in float64, so the result is Python's to
//! the last bit. The absolute values are scaled by the power of two that
//! puts the largest in [0.5, 1) (`frexp`'s exponent, found from `log2`
//! and corrected by comparison), squared exactly (Dekker's split gives the
//! bits of CPython's `fma`), added to 1.0 with their rounding errors
//! kept, and the square root gets CPython's differential correction. An
//! infinity gives inf (a NaN too), else a NaN NaN; no argument is 0.0 and
//! one its absolute value. Inputs below 2**-1000 are scaled up by 2**600
//! first and the result down (CPython divides by `DBL_MIN`: the same
//! values, rounded once). Where Python floats are float32 (Metal), the
//! fold of C's two-argument `hypot`. `math.dist(p, q)` is the same norm
//! of the float64 differences `p[k] - q[k]`, as CPython computes it.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, ExprKind, MathFn, Type};
use crate::syntax::ast;

use super::types::convert;
use super::{Lowerer, TExpr};

impl Lowerer<'_, '_> {
    /// `math.hypot(args)` (see the module doc); `None` after an error.
    pub(super) fn python_hypot(&mut self, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let t = self.opts.float_type;
        let mut vals = vec![];
        let mut ok = true;
        for a in args {
            if self.rank(a) > 0 {
                self.error(
                    Diagnostic::error("`math.hypot` takes numbers")
                        .at(a.span, "an array")
                        .note("Python's `math.hypot` raises TypeError for an array of more than one element")
                        .help("use `np.hypot` for elementwise values, or `np.linalg.norm` for the length of a vector")
                        .type_error(),
                );
                ok = false;
                continue;
            }
            match self.lower_expr(a) {
                Some(v) if self.scalar_elem(&v).is_some() => {
                    let e = Expr::math(MathFn::Abs, vec![convert(v.e, t)], t, a.span);
                    vals.push(self.stash(e, span));
                }
                _ => ok = false,
            }
        }
        if !ok {
            return None;
        }
        self.vector_norm(vals, span)
    }

    /// `math.dist(p, q)` of two tuple or list literals of one length (see
    /// the module doc); `None` after an error.
    pub(super) fn math_dist(&mut self, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let points: Vec<Option<&[ast::Expr]>> = args
            .iter()
            .map(|a| match &a.kind {
                ast::ExprKind::Tuple(items) => Some(items.as_slice()),
                _ => a.list_items(),
            })
            .collect();
        let (p, q) = match (&points[..], args) {
            ([Some(p), Some(q)], _) => (*p, *q),
            (_, [a, b]) => {
                let at = if points[0].is_none() { a } else { b };
                self.error(
                    Diagnostic::error("`math.dist` takes two tuple or list literals here")
                        .at(at.span, "not a tuple or list of numbers")
                        .help("for the distance of two array rows use `np.linalg.norm(a[i, :] - b[j, :])`"),
                );
                return None;
            }
            _ => {
                self.arity_error("math.dist", "2 arguments", args.len(), span);
                return None;
            }
        };
        if p.len() != q.len() {
            self.error(
                Diagnostic::error("both points must have the same number of dimensions")
                    .at(args[0].span, format!("{} coordinates", p.len()))
                    .at(args[1].span, format!("{} coordinates", q.len()))
                    .raises("ValueError"),
            );
            return None;
        }
        let t = self.opts.float_type;
        let mut vals = vec![];
        for (a, b) in p.iter().zip(q) {
            if let Some(arr) = [a, b].into_iter().find(|e| self.rank(e) > 0) {
                self.error(
                    Diagnostic::error("`math.dist` takes points of numbers")
                        .at(arr.span, "an array")
                        .note("Python's `math.dist` raises TypeError for an array coordinate")
                        .type_error(),
                );
                return None;
            }
            let (Some(a), Some(b)) = (self.lower_expr(a), self.lower_expr(b)) else {
                return None;
            };
            let ty = Type::Scalar(t);
            let d = Expr::binary(BinOp::Sub, convert(a.e, t), convert(b.e, t), ty, span);
            let d = Expr::math(MathFn::Abs, vec![d], t, span);
            vals.push(self.stash(d, span));
        }
        self.vector_norm(vals, span)
    }

    /// CPython's `vector_norm` of the absolute values `vals` (see the
    /// module doc).
    fn vector_norm(&mut self, mut vals: Vec<Expr>, span: Span) -> Option<TExpr> {
        let t = self.opts.float_type;
        let ty = Type::Scalar(t);
        let num = |v: f64| Expr::new(ExprKind::Float(v), ty.clone(), span);
        let bin = |op: BinOp, a: Expr, b: Expr| Expr::binary(op, a, b, ty.clone(), span);
        let weak = |e: Expr| Some(TExpr { e, weak: true });
        match vals.len() {
            0 => return weak(num(0.0)),
            1 => return weak(vals.remove(0)),
            _ => {}
        }
        if t != ElemTy::F64 {
            let e = vals
                .into_iter()
                .reduce(|a, b| Expr::math(MathFn::Hypot, vec![a, b], t, span))?;
            return weak(e);
        }
        let cmp = |op: BinOp, a: Expr, b: Expr| Expr::compare(op, a, b, span);
        let sel = |c: Expr, a: Expr, b: Expr| Expr::select_as(c, a, b, ty.clone(), span);
        let any = |es: Vec<Expr>| {
            es.into_iter()
                .reduce(|a, b| super::expr::bool_binary(BinOp::Or, a, b, span))
        };
        let pred = |f: MathFn, e: &Expr| super::calls::predicate(f, e.clone(), t, span);
        // the largest (a NaN never is: `if (x > max) max = x`)
        let mut max = num(0.0);
        for v in &vals {
            max = sel(cmp(BinOp::Gt, v.clone(), max.clone()), v.clone(), max);
        }
        let max = self.stash(max, span);
        let inf = any(vals.iter().map(|v| pred(MathFn::IsInf, v)).collect())?;
        let nan = any(vals.iter().map(|v| pred(MathFn::IsNan, v)).collect())?;
        // (subnormal sizes: scaled up first, exactly)
        let tiny = cmp(BinOp::Lt, max.clone(), num(2f64.powi(-1000)));
        let pre = self.stash(sel(tiny.clone(), num(2f64.powi(600)), num(1.0)), span);
        let post = sel(tiny, num(2f64.powi(-600)), num(1.0));
        let top = self.stash(bin(BinOp::Mul, max.clone(), pre.clone()), span);
        // 2**-e with `top` = m * 2**e, 0.5 <= m < 1 (`frexp`)
        let log = Expr::math(MathFn::Log2, vec![top.clone()], t, span);
        let e = bin(
            BinOp::Add,
            Expr::math(MathFn::Floor, vec![log], t, span),
            num(1.0),
        );
        let s0 = Expr::math(MathFn::Exp2, vec![bin(BinOp::Sub, num(0.0), e)], t, span);
        let s0 = self.stash(s0, span);
        let high = cmp(
            BinOp::Ge,
            bin(BinOp::Mul, top.clone(), s0.clone()),
            num(1.0),
        );
        let s1 = self.stash(sel(high, bin(BinOp::Mul, s0.clone(), num(0.5)), s0), span);
        let low = cmp(BinOp::Lt, bin(BinOp::Mul, top, s1.clone()), num(0.5));
        let scale = self.stash(sel(low, bin(BinOp::Mul, s1.clone(), num(2.0)), s1), span);
        // the exact square of `x`: (x * x, its rounding error)
        let square = |l: &mut Self, x: Expr, neg: bool| -> (Expr, Expr) {
            let c = l.stash(bin(BinOp::Mul, num(134217729.0), x.clone()), span);
            let hi = bin(BinOp::Sub, c.clone(), bin(BinOp::Sub, c, x.clone()));
            let hi = l.stash(hi, span);
            let lo = l.stash(bin(BinOp::Sub, x.clone(), hi.clone()), span);
            let (a, b) = match neg {
                true => (bin(BinOp::Sub, num(0.0), x.clone()), x),
                false => (x.clone(), x),
            };
            let p = l.stash(bin(BinOp::Mul, a, b), span);
            // (Dekker: every step exact; `-h * h`'s error is `-(h * h)`'s)
            let hh = bin(BinOp::Mul, hi.clone(), hi.clone());
            let hl = || bin(BinOp::Mul, hi.clone(), lo.clone());
            let ll = bin(BinOp::Mul, lo.clone(), lo.clone());
            let err = match neg {
                false => {
                    let r = bin(BinOp::Sub, hh, p.clone());
                    let r = bin(BinOp::Add, bin(BinOp::Add, r, hl()), hl());
                    bin(BinOp::Add, r, ll)
                }
                true => {
                    let r = bin(BinOp::Sub, bin(BinOp::Sub, num(0.0), hh), p.clone());
                    let r = bin(BinOp::Sub, bin(BinOp::Sub, r, hl()), hl());
                    bin(BinOp::Sub, r, ll)
                }
            };
            (p, l.stash(err, span))
        };
        // (csum, frac1, frac2): csum += p, lossless (csum >= 1 > p), the
        // errors kept
        let mut sums = [num(1.0), num(0.0), num(0.0)];
        let add = |l: &mut Self, p: Expr, err: Expr, sums: &mut [Expr; 3]| {
            let [csum, frac1, frac2] = sums.clone();
            let hi = l.stash(bin(BinOp::Add, csum.clone(), p.clone()), span);
            let lo = bin(BinOp::Add, bin(BinOp::Sub, csum, hi.clone()), p);
            let frac1 = l.stash(bin(BinOp::Add, frac1, err), span);
            let frac2 = l.stash(bin(BinOp::Add, frac2, lo), span);
            *sums = [hi, frac1, frac2];
        };
        for v in vals {
            let x = bin(BinOp::Mul, bin(BinOp::Mul, v, pre.clone()), scale.clone());
            let x = self.stash(x, span);
            let (p, err) = square(self, x, false);
            add(self, p, err, &mut sums);
        }
        // csum - 1.0 + (frac1 + frac2)
        let rest = |[csum, frac1, frac2]: &[Expr; 3]| {
            let f = bin(BinOp::Add, frac1.clone(), frac2.clone());
            bin(BinOp::Add, bin(BinOp::Sub, csum.clone(), num(1.0)), f)
        };
        let h = Expr::math(MathFn::Sqrt, vec![rest(&sums)], t, span);
        let h = self.stash(h, span);
        let (p, err) = square(self, h.clone(), true);
        add(self, p, err, &mut sums);
        let x = rest(&sums);
        let h = bin(
            BinOp::Add,
            h.clone(),
            bin(BinOp::Div, x, bin(BinOp::Mul, num(2.0), h)),
        );
        let norm = bin(BinOp::Mul, bin(BinOp::Div, h, scale), post);
        let zero = cmp(BinOp::Eq, max.clone(), num(0.0));
        let value = sel(
            inf,
            num(f64::INFINITY),
            sel(nan, num(f64::NAN), sel(zero, max, norm)),
        );
        weak(value)
    }
}
