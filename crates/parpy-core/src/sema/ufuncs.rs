//! NumPy ufuncs that are expressions parpy already has ([`Ufunc`]):
//! `np.add(a, b)` is `a + b`, `np.logical_and(a, b)` is `(a != 0) & (b !=
//! 0)`, `np.deg2rad(x)` is `x * (pi / 180)` in `x`'s float type. Each is
//! lowered through the rule of the expression it stands for
//! (`Lowerer::binary`, `Lowerer::unary`, the float type of a math
//! function), so the arithmetic has one implementation. What is the ufunc's
//! own is how it treats Python numbers: when every operand is one, they
//! become NumPy values first (`np.invert(True)` is `False` where `~True` is
//! -2); the result is a NumPy value, as every NumPy function's
//! (`calls.rs` `numpy_value`).
//!
//! A ufunc applies to each element of its array operands; in a slice
//! statement its operands are elements already (`alias::elementwise`).

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, ExprKind, MathFn, Type, UnOp};
use crate::resolve::Ufunc;
use crate::syntax::ast;

use super::calls::predicate;
use super::expr::bool_binary;
use super::types::convert;
use super::{Lowerer, TExpr};

impl Ufunc {
    /// The number of operands.
    pub(super) fn arity(self) -> usize {
        match self {
            Ufunc::Operator(_)
            | Ufunc::Logical(_)
            | Ufunc::Fmod
            | Ufunc::Heaviside
            | Ufunc::FloatPower
            | Ufunc::LogAddExp
            | Ufunc::LogAddExp2
            | Ufunc::Gcd
            | Ufunc::Lcm
            | Ufunc::Ldexp
            | Ufunc::NextAfter => 2,
            _ => 1,
        }
    }
}

/// A constant of float type `ty` (or of any type, for an integer `v`).
fn constant(v: f64, ty: ElemTy, span: Span) -> Expr {
    if ty.is_float() {
        Expr::new(ExprKind::Float(v), Type::Scalar(ty), span)
    } else {
        Expr::int(v as i64, ty, span)
    }
}

/// The type NumPy computes a function of a `ty` float in (float32 for
/// float16, rounded once at the end).
fn compute_type(ty: ElemTy) -> ElemTy {
    match ty {
        ElemTy::F16 => ElemTy::F32,
        t => t,
    }
}

/// The factor that turns degrees into radians (`to_rad`) or back, in
/// float type `work`: `pi / 180` as NumPy's `deg2rad` and Python's
/// `math.radians` multiply by it.
fn angle_factor(to_rad: bool, work: ElemTy) -> f64 {
    match (work, to_rad) {
        (ElemTy::F64, true) => std::f64::consts::PI / 180.0,
        (ElemTy::F64, false) => 180.0 / std::f64::consts::PI,
        (_, true) => (std::f32::consts::PI / 180.0) as f64,
        (_, false) => (180.0 / std::f32::consts::PI) as f64,
    }
}

fn weak(e: Expr) -> TExpr {
    TExpr { e, weak: true }
}

impl Lowerer<'_, '_> {
    /// NumPy's power with one exponent for all elements (`np.power(a, s)`,
    /// `arr ** s`, `s` not an array): where the float32/float64 exponent
    /// is 0.5 it is `np.sqrt(a)`, where it is -1 `1 / a` (NumPy's loop
    /// takes these shortcuts; `sqrt(-inf)` is NaN where `pow` gives inf,
    /// `sqrt(-0.0)` is -0.0, and float32's `sqrt` is exact where `powf`
    /// may not be). `f16`: a float16 `arr ** 0.5` of a Python number takes
    /// the sqrt too (ndarray's `**`). `r` is the plain power of `base` and
    /// `exp`; a base that is not pure keeps it.
    pub(super) fn numpy_power(
        &mut self,
        r: TExpr,
        base: Expr,
        exp: Expr,
        f16: bool,
        span: Span,
    ) -> TExpr {
        let Some(ty) = r.e.ty.elem() else {
            return r;
        };
        let shortcuts: &[f64] = match ty {
            ElemTy::F32 | ElemTy::F64 => &[0.5, -1.0],
            ElemTy::F16 if f16 => &[0.5],
            _ => &[],
        };
        if shortcuts.is_empty() || !crate::ir::visit::is_pure(&base) {
            return r;
        }
        let exp = match crate::ir::visit::is_pure(&exp) {
            true => convert(exp, ty),
            false => return r,
        };
        let base = convert(base, ty);
        let value = |c: f64| match c == 0.5 {
            true => Expr::math(MathFn::Sqrt, vec![base.clone()], ty, span),
            false => Expr::binary(
                BinOp::Div,
                constant(1.0, ty, span),
                base.clone(),
                Type::Scalar(ty),
                span,
            ),
        };
        let known = match &exp.kind {
            ExprKind::Float(c) => Some(*c),
            ExprKind::Int(c) => Some(*c as f64),
            _ => None,
        };
        let e = match known {
            Some(c) if shortcuts.contains(&c) => value(c),
            Some(_) => return r,
            None => shortcuts.iter().rev().fold(r.e, |rest, &c| {
                let at = Expr::compare(BinOp::Eq, exp.clone(), constant(c, ty, span), span);
                Expr::select_as(at, value(c), rest, Type::Scalar(ty), span)
            }),
        };
        TExpr { e, weak: r.weak }
    }

    /// `np.<name>(args)` for ufunc `u`.
    pub(super) fn ufunc_call(
        &mut self,
        u: Ufunc,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let mut vals = self.operands(name, u.arity(), args, span)?;
        for v in &vals {
            self.scalar_elem(v)?;
        }
        // Python numbers alone become NumPy values
        if vals.iter().all(|v| v.weak) {
            vals.iter_mut().for_each(|v| v.weak = false);
        }
        let mut vals = vals.into_iter();
        let a = vals.next()?;
        let b = vals.next();
        let r = match (u, b) {
            (Ufunc::Operator(BinOp::Pow), Some(b)) if self.rank(&args[1]) == 0 => {
                let (base, exp) = (a.e.clone(), b.e.clone());
                let r = self.binary(BinOp::Pow, a, b, span)?;
                self.numpy_power(r, base, exp, false, span)
            }
            (Ufunc::Operator(op), Some(b)) => self.binary(op, a, b, span)?,
            (Ufunc::Unary(op), None) => self.unary(op, a, span)?,
            (Ufunc::Positive, None) => self.unary(UnOp::Pos, a, span)?,
            (Ufunc::Logical(op), Some(b)) => {
                let (a, b) = (self.truthy(a)?, self.truthy(b)?);
                weak(bool_binary(op, a, b, span))
            }
            (Ufunc::LogicalNot, None) => {
                let a = self.truthy(a)?;
                let e = Expr::new(
                    ExprKind::Unary {
                        op: UnOp::Not,
                        arg: Box::new(a),
                    },
                    Type::Scalar(ElemTy::Bool),
                    span,
                );
                weak(e)
            }
            (Ufunc::Square, None) => {
                // (NumPy squares a bool as an int8)
                let a = match self.scalar_elem(&a)? {
                    ElemTy::Bool => TExpr {
                        e: convert(a.e, ElemTy::I8),
                        weak: false,
                    },
                    _ => a,
                };
                let two = weak(constant(2.0, self.opts.int_type, span));
                self.binary(BinOp::Pow, a, two, span)?
            }
            (Ufunc::Rint | Ufunc::Fabs, None) => {
                let (x, ty) = self.as_float(a)?;
                let f = match u {
                    Ufunc::Rint => MathFn::Round,
                    _ => MathFn::Abs,
                };
                weak(Expr::math(f, vec![x.e], ty, span))
            }
            (Ufunc::Reciprocal, None) => {
                let ty = self.scalar_elem(&a)?;
                if !ty.is_float() {
                    // NumPy's integer loop: `(T) (1.0 / x)`, the C cast
                    // NumPy's `astype` makes (1 and -1 stay, others are 0;
                    // 0 gives `astype`'s integer of an infinity: the least
                    // int32 / int64, 0 for narrower and unsigned types); a
                    // bool's loop is int8's
                    let out = match ty {
                        ElemTy::Bool => ElemTy::I8,
                        t => t,
                    };
                    let x = convert(a.e, ElemTy::F64);
                    let one = constant(1.0, ElemTy::F64, span);
                    let q = Expr::binary(BinOp::Div, one, x, Type::Scalar(ElemTy::F64), span);
                    return Some(TExpr {
                        e: convert(q, out),
                        weak: false,
                    });
                }
                let one = weak(constant(1.0, ty, span));
                self.binary(BinOp::Div, one, a, span)?
            }
            (Ufunc::Deg2Rad | Ufunc::Rad2Deg, None) => {
                // NumPy: `x * (pi / 180)` (`x * (180 / pi)`), the constant
                // computed in the type (float32 for float16: NumPy computes
                // a float16 in float32)
                let (x, ty) = self.as_float(a)?;
                let work = compute_type(ty);
                let k = angle_factor(u == Ufunc::Deg2Rad, work);
                let x = TExpr {
                    e: convert(x.e, work),
                    weak: false,
                };
                let r = self.binary(BinOp::Mul, x, weak(constant(k, work, span)), span)?;
                weak(convert(r.e, ty))
            }
            (Ufunc::SignBit, None) => {
                let ty = self.scalar_elem(&a)?;
                let zero = weak(constant(0.0, ty, span));
                let signed = if ty.is_float() {
                    // the sign of `copysign(1, x)` is `x`'s sign bit (of
                    // -0.0 and -nan too)
                    let one = constant(1.0, ty, span);
                    weak(Expr::math(MathFn::Copysign, vec![one, a.e], ty, span))
                } else {
                    a
                };
                self.binary(BinOp::Lt, signed, zero, span)?
            }
            (Ufunc::Fmod, Some(b)) => {
                let (x, y, ty, _) = self.unify(a.clone(), b.clone())?;
                match ty {
                    // (NumPy's fmod of bools is of int8s)
                    ElemTy::Bool => {
                        let (x, y) = (convert(x, ElemTy::I8), convert(y, ElemTy::I8));
                        self.int_fmod(x, y, ElemTy::I8, span)?
                    }
                    t if t.is_float() => {
                        let ty = self.float_loop_type(&[a, b])?;
                        let args = vec![convert(x, ty), convert(y, ty)];
                        weak(Expr::math(MathFn::Fmod, args, ty, span))
                    }
                    _ => self.int_fmod(x, y, ty, span)?,
                }
            }
            // `a == inf`: False of an integer, a bool, a NaN
            (Ufunc::IsSignedInf(negative), None) => {
                let ty = self.scalar_elem(&a)?;
                if !ty.is_float() {
                    return Some(weak(Expr::new(
                        ExprKind::Bool(false),
                        Type::Scalar(ElemTy::Bool),
                        span,
                    )));
                }
                let inf = if negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                };
                weak(Expr::compare(BinOp::Eq, a.e, constant(inf, ty, span), span))
            }
            // of a real number, itself (NumPy's loop of a bool is int8's)
            (Ufunc::Conjugate, None) => match self.scalar_elem(&a)? {
                ElemTy::Bool => weak(convert(a.e, ElemTy::I8)),
                _ => a,
            },
            (Ufunc::Ldexp, Some(b)) => {
                let ty = self.float_loop_type(std::slice::from_ref(&a))?;
                let e = self.ldexp_exponent(b, name, span)?;
                weak(Expr::math(
                    MathFn::Ldexp,
                    vec![convert(a.e, ty), e],
                    ty,
                    span,
                ))
            }
            (Ufunc::NextAfter, Some(b)) => {
                let ty = self.float_loop_type(&[a.clone(), b.clone()])?;
                self.no_float16_steps(ty, name, span)?;
                let args = vec![convert(a.e, ty), convert(b.e, ty)];
                weak(Expr::math(MathFn::NextAfter, args, ty, span))
            }
            // NumPy's `npy_spacing`: NaN of an infinity, else the step away
            // from zero (of -0.0: up, as of 0.0)
            (Ufunc::Spacing, None) => {
                let ty = self.float_loop_type(std::slice::from_ref(&a))?;
                self.no_float16_steps(ty, name, span)?;
                let x = self.reusable(convert(a.e, ty), span);
                let c = |v: f64| constant(v, ty, span);
                let negative = Expr::compare(BinOp::Lt, x.clone(), c(0.0), span);
                let away = Expr::select(negative, c(f64::NEG_INFINITY), c(f64::INFINITY));
                let next = Expr::math(MathFn::NextAfter, vec![x.clone(), away], ty, span);
                let step = Expr::binary(BinOp::Sub, next, x.clone(), Type::Scalar(ty), span);
                let inf = predicate(MathFn::IsInf, x, ty, span);
                weak(Expr::select(inf, c(f64::NAN), step))
            }
            (Ufunc::BitwiseCount, None) => self.bitwise_count(a, name, span)?,
            (Ufunc::Gcd | Ufunc::Lcm, Some(b)) => {
                let f = if u == Ufunc::Gcd {
                    MathFn::Gcd
                } else {
                    MathFn::Lcm
                };
                let (x, y, ty, weak) = self.unify(a, b)?;
                if !ty.is_int() {
                    self.error(
                        Diagnostic::error(format!(
                            "`{name}` of {} values: NumPy has no such loop (a TypeError)",
                            ty.numpy_name()
                        ))
                        .at(span, "NumPy's gcd and lcm take integers only")
                        .help("convert the operands to an integer type first, e.g. `int(v)` or `np.int64(v)`")
                        .type_error(),
                    );
                    return None;
                }
                TExpr {
                    e: Expr::math(f, vec![x, y], ty, span),
                    weak,
                }
            }
            (Ufunc::Heaviside, Some(b)) => {
                // NumPy's `npy_heaviside`: NaN, `h0` at 0, else 0 or 1
                let ty = self.float_loop_type(&[a.clone(), b.clone()])?;
                let (x, h0) = (convert(a.e, ty), convert(b.e, ty));
                let cmp = |op, l, r| Expr::compare(op, l, r, span);
                let c = |v: f64| constant(v, ty, span);
                let sign = Expr::select(cmp(BinOp::Lt, x.clone(), c(0.0)), c(0.0), c(1.0));
                let at_zero = Expr::select(cmp(BinOp::Eq, x.clone(), c(0.0)), h0, sign);
                weak(Expr::select(
                    cmp(BinOp::Ne, x.clone(), x),
                    c(f64::NAN),
                    at_zero,
                ))
            }
            (Ufunc::FloatPower, Some(b)) => {
                let args = vec![convert(a.e, ElemTy::F64), convert(b.e, ElemTy::F64)];
                weak(Expr::math(MathFn::Pow, args, ElemTy::F64, span))
            }
            (Ufunc::Sinc, None) => {
                // NumPy's Python code: `x = pi * x`, `y = where(x, x, eps)`
                // (the type's machine epsilon), `sin(y) / y`, in the type of
                // `pi * x` (an integer's: float64)
                let ty = self.scalar_elem(&a)?;
                let ty = if ty.is_float() { ty } else { ElemTy::F64 };
                let pi = weak(constant(std::f64::consts::PI, ty, span));
                let x = TExpr {
                    e: convert(a.e, ty),
                    weak: false,
                };
                let px = self.binary(BinOp::Mul, pi, x, span)?.e;
                let eps = match ty {
                    ElemTy::F16 => 2f64.powi(-10),
                    ElemTy::F32 => f32::EPSILON as f64,
                    _ => f64::EPSILON,
                };
                let nonzero = Expr::compare(BinOp::Ne, px.clone(), constant(0.0, ty, span), span);
                let y = Expr::select(nonzero, px, constant(eps, ty, span));
                let sin = TExpr {
                    e: Expr::math(MathFn::Sin, vec![y.clone()], ty, span),
                    weak: false,
                };
                self.binary(BinOp::Div, sin, TExpr { e: y, weak: false }, span)?
            }
            (Ufunc::LogAddExp | Ufunc::LogAddExp2, Some(b)) => {
                let ty = self.float_loop_type(&[a.clone(), b.clone()])?;
                let (x, y) = (convert(a.e, ty), convert(b.e, ty));
                let work = compute_type(ty);
                let (x, y) = (convert(x, work), convert(y, work));
                let r = self.log_add_exp(u == Ufunc::LogAddExp2, x, y, work, span)?;
                weak(convert(r, ty))
            }
            _ => return None,
        };
        Some(r)
    }

    /// `np.nan_to_num(x, nan, posinf, neginf)` (after `compact`): of a
    /// float, NaN as `nan`, the infinities as `posinf` / `neginf` (by
    /// default the type's largest and smallest finite numbers), each
    /// converted to `x`'s type as NumPy's assignment does; an integer or a
    /// bool as it is.
    pub(super) fn nan_to_num(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        // (`compact` leaves out the trailing defaults)
        let none = ast::Expr {
            kind: ast::ExprKind::None,
            span,
        };
        let zero = ast::Expr::float(0.0, span);
        let (x, nan, posinf, neginf) = match args {
            [x] => (x, &zero, &none, &none),
            [x, n] => (x, n, &none, &none),
            [x, n, p] => (x, n, p, &none),
            [x, n, p, m] => (x, n, p, m),
            _ => {
                self.arity_error(name, "1 argument", args.len(), span);
                return None;
            }
        };
        let x = self.lower_expr(x)?;
        let ty = self.scalar_elem(&x)?;
        if !ty.is_float() {
            return Some(TExpr {
                e: x.e,
                weak: false,
            });
        }
        let largest = ty.max_finite();
        let value = |this: &mut Self, e: &ast::Expr, default: f64| -> Option<Expr> {
            if matches!(e.kind, ast::ExprKind::None) {
                return Some(constant(default, ty, span));
            }
            let v = this.lower_expr(e)?;
            this.scalar_elem(&v)?;
            Some(convert(v.e, ty))
        };
        let nan = value(self, nan, 0.0)?;
        let posinf = value(self, posinf, largest)?;
        let neginf = value(self, neginf, -largest)?;
        let cmp =
            |op: BinOp, l: Expr, r: Expr| Expr::binary(op, l, r, Type::Scalar(ElemTy::Bool), span);
        let inf = || constant(f64::INFINITY, ty, span);
        let minf = || constant(f64::NEG_INFINITY, ty, span);
        let x = x.e;
        let finite = Expr::select(cmp(BinOp::Eq, x.clone(), minf()), neginf, x.clone());
        let finite = Expr::select(cmp(BinOp::Eq, x.clone(), inf()), posinf, finite);
        Some(TExpr {
            e: Expr::select(cmp(BinOp::Ne, x.clone(), x), nan, finite),
            weak: false,
        })
    }

    /// `np.isclose(a, b, rtol, atol, equal_nan)` (after `compact`) as
    /// NumPy's Python code computes it: `b` made a float (`result_type(b,
    /// 1.0)`), then `abs(a - b) <= atol + rtol * abs(b) & isfinite(b) | (a
    /// == b)`, or'ed with `isnan(a) & isnan(b)` when `equal_nan`.
    pub(super) fn isclose(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        // (`compact` leaves out the trailing defaults)
        let defaults = [
            ast::Expr::float(1e-5, span),
            ast::Expr::float(1e-8, span),
            ast::Expr {
                kind: ast::ExprKind::Bool(false),
                span,
            },
        ];
        if !(2..=5).contains(&args.len()) {
            self.arity_error(name, "2 arguments", args.len(), span);
            return None;
        }
        let arg = |k: usize| args.get(k).unwrap_or(&defaults[k - 2]);
        let (a, b, rtol, atol, equal_nan) = (&args[0], &args[1], arg(2), arg(3), arg(4));
        let Some(equal_nan) = self
            .lower_expr(equal_nan)
            .and_then(|t| self.known_int(&t.e))
        else {
            self.error(
                Diagnostic::error(format!(
                    "`equal_nan` of `{name}` must be True or False, known when compiling"
                ))
                .at(equal_nan.span, "not a constant")
                .type_error(),
            );
            return None;
        };
        let vals = self.operands(
            name,
            4,
            &[a.clone(), b.clone(), rtol.clone(), atol.clone()],
            span,
        )?;
        for v in &vals {
            self.scalar_elem(v)?;
        }
        let [x, y, rtol, atol]: [TExpr; 4] = vals.try_into().ok()?;
        // `y` as a float: its own float type, float64 for an integer (a
        // Python int becomes a Python float)
        let yt = self.scalar_elem(&y)?;
        let ft = if yt.is_float() {
            yt
        } else {
            self.opts.float_type
        };
        let y = TExpr {
            e: convert(y.e, ft),
            weak: y.weak,
        };
        let abs = |t: TExpr| TExpr {
            weak: t.weak,
            e: Expr::math(MathFn::Abs, vec![t.e.clone()], t.e.elem(), span),
        };
        let diff = self.binary(BinOp::Sub, x.clone(), y.clone(), span)?;
        let scaled = self.binary(BinOp::Mul, rtol, abs(y.clone()), span)?;
        let bound = self.binary(BinOp::Add, atol, scaled, span)?;
        let le = self.binary(BinOp::Le, abs(diff), bound, span)?;
        let finite = super::calls::predicate(MathFn::IsFinite, y.e.clone(), ft, span);
        let eq = self.binary(BinOp::Eq, x.clone(), y.clone(), span)?;
        let close = bool_binary(BinOp::BitAnd, le.e, finite, span);
        let mut r = bool_binary(BinOp::BitOr, close, eq.e, span);
        if equal_nan != 0 {
            let nan = |t: &TExpr| {
                Expr::binary(
                    BinOp::Ne,
                    t.e.clone(),
                    t.e.clone(),
                    Type::Scalar(ElemTy::Bool),
                    span,
                )
            };
            r = bool_binary(
                BinOp::BitOr,
                r,
                bool_binary(BinOp::BitAnd, nan(&x), nan(&y), span),
                span,
            );
        }
        Some(TExpr { e: r, weak: false })
    }

    /// `math.isclose(a, b, rel_tol=1e-09, abs_tol=0.0)` (after `compact`)
    /// as CPython computes it, in float64: `a == b`, else false for an
    /// infinity, else `|b - a|` at most `|rel_tol * b|`, `|rel_tol * a|` or
    /// `abs_tol`. A negative tolerance raises `ValueError` where the call
    /// runs. A Python bool.
    /// The exponent `e` of `ldexp` as the C `int` the functions take: an
    /// integer (a float, or a uint64 that no int64 holds, is NumPy's
    /// TypeError; a Python int must fit an int32, as NumPy's loop takes
    /// it), clamped to +-100000, past which every result is 0 or inf.
    pub(super) fn ldexp_exponent(&mut self, e: TExpr, name: &str, span: Span) -> Option<Expr> {
        let t = self.scalar_elem(&e)?;
        if t.is_float() || t == ElemTy::U64 {
            self.error(
                Diagnostic::error(format!(
                    "the exponent of `{name}` is a {}: it takes an integer",
                    t.numpy_name()
                ))
                .at(e.e.span, "not an integer that an int64 holds")
                .help("convert it: `int(e)`")
                .type_error(),
            );
            return None;
        }
        if e.weak {
            self.python_int_fits(&e, ElemTy::I32)?;
        }
        let wide = convert(e.e, ElemTy::I64);
        let c = |v: i64| Expr::int(v, ElemTy::I64, span);
        let low = Expr::compare(BinOp::Lt, wide.clone(), c(-100_000), span);
        let high = Expr::compare(BinOp::Gt, wide.clone(), c(100_000), span);
        let clamped = Expr::select(low, c(-100_000), Expr::select(high, c(100_000), wide));
        Some(convert(clamped, ElemTy::I32))
    }

    /// Refuses `nextafter` / `spacing` of float16, which NumPy steps on
    /// the half's bits (parpy computes float16 in float32).
    fn no_float16_steps(&mut self, ty: ElemTy, name: &str, span: Span) -> Option<()> {
        if ty != ElemTy::F16 {
            return Some(());
        }
        self.error(
            Diagnostic::error(format!(
                "`{name}` of float16 values is not supported by parpy"
            ))
            .at(span, "a step between float16 values")
            .help("compute it in float32: `np.float32(x)`"),
        );
        None
    }

    /// `e` where an expression uses it more than once: itself when pure,
    /// else its value in a local (`stash`).
    /// `np.bitwise_count(x)`: the 1-bits of `|x|` (NumPy's; as a uint64,
    /// so the least int64 has its one bit), counted by halves (a popcount
    /// the C compilers recognize), a uint8.
    fn bitwise_count(&mut self, a: TExpr, name: &str, span: Span) -> Option<TExpr> {
        let ty = self.scalar_elem(&a)?;
        if ty.is_float() {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of {} values: NumPy has no such loop (a TypeError)",
                    ty.numpy_name()
                ))
                .at(span, "NumPy's bitwise_count takes integers and bools only")
                .help(
                    "convert the operand to an integer type first, e.g. `int(v)` or `np.int64(v)`",
                )
                .type_error(),
            );
            return None;
        }
        let u = ElemTy::U64;
        let x = self.reusable(a.e, span);
        let k = |v: i64| Expr::int(v, u, span);
        let op = |op, l, r| Expr::binary(op, l, r, Type::Scalar(u), span);
        let wide = convert(x.clone(), u);
        let v = match ty.is_signed_int() {
            // (negated in 64 bits: wraps to the magnitude, 2**63 included)
            true => {
                let negative = Expr::compare(BinOp::Lt, x, Expr::int(0, ty, span), span);
                let magnitude = op(BinOp::Sub, k(0), wide.clone());
                Expr::select(negative, magnitude, wide)
            }
            false => wide,
        };
        let v = self.reusable(v, span);
        let v = op(
            BinOp::Sub,
            v.clone(),
            op(
                BinOp::BitAnd,
                op(BinOp::Shr, v, k(1)),
                k(0x5555_5555_5555_5555),
            ),
        );
        let v = self.reusable(v, span);
        let m = k(0x3333_3333_3333_3333);
        let v = op(
            BinOp::Add,
            op(BinOp::BitAnd, v.clone(), m.clone()),
            op(BinOp::BitAnd, op(BinOp::Shr, v, k(2)), m),
        );
        let v = self.reusable(v, span);
        let v = op(
            BinOp::BitAnd,
            op(BinOp::Add, v.clone(), op(BinOp::Shr, v, k(4))),
            k(0x0f0f_0f0f_0f0f_0f0f),
        );
        let n = op(
            BinOp::Shr,
            op(BinOp::Mul, v, k(0x0101_0101_0101_0101)),
            k(56),
        );
        Some(TExpr {
            e: convert(n, ElemTy::U8),
            weak: false,
        })
    }

    fn reusable(&mut self, e: Expr, span: Span) -> Expr {
        if crate::ir::visit::pure(&e) {
            e
        } else {
            self.stash(e, span)
        }
    }

    /// Python's `math.ulp(x)` (CPython's): of `|x|` the step to the next
    /// float up (down from the largest float); NaN and inf themselves.
    pub(super) fn math_ulp(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let v = self.operands(name, 1, args, span)?.pop()?;
        self.scalar_elem(&v)?;
        let f = ElemTy::F64;
        let x = self.reusable(convert(v.e, f), span);
        let c = |v: f64| constant(v, f, span);
        let m = Expr::math(MathFn::Abs, vec![x.clone()], f, span);
        let step = |to: f64, up: bool| {
            let n = Expr::math(MathFn::NextAfter, vec![m.clone(), c(to)], f, span);
            let (a, b) = if up { (n, m.clone()) } else { (m.clone(), n) };
            Expr::binary(BinOp::Sub, a, b, Type::Scalar(f), span)
        };
        let at_max = Expr::compare(BinOp::Eq, m.clone(), c(f64::MAX), span);
        let finite = Expr::select(
            at_max,
            step(f64::NEG_INFINITY, false),
            step(f64::INFINITY, true),
        );
        let inf = predicate(MathFn::IsInf, x.clone(), f, span);
        let nan = predicate(MathFn::IsNan, x.clone(), f, span);
        let r = Expr::select(nan, x, Expr::select(inf, m, finite));
        Some(weak(r))
    }

    /// Python's `math.radians(x)` (`to_rad`) / `math.degrees(x)`: `x` as
    /// a Python float times CPython's factor, a Python float.
    pub(super) fn math_angle(
        &mut self,
        to_rad: bool,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let v = self.operands(name, 1, args, span)?.pop()?;
        self.scalar_elem(&v)?;
        let x = TExpr {
            e: convert(v.e, ElemTy::F64),
            weak: false,
        };
        let k = weak(constant(
            angle_factor(to_rad, ElemTy::F64),
            ElemTy::F64,
            span,
        ));
        let r = self.binary(BinOp::Mul, x, k, span)?;
        Some(weak(r.e))
    }

    /// `np.real(x)` of a number: `x.real`, itself (a Python bool's is
    /// the int).
    pub(super) fn real_part(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let v = self.operands(name, 1, args, span)?.pop()?;
        if self.scalar_elem(&v)? == ElemTy::Bool && v.weak {
            let int = self.opts.int_type;
            return Some(weak(convert(v.e, int)));
        }
        Some(v)
    }

    /// Python's `math.gcd(*ints)` / `math.lcm(*ints)` (`f`: `MathFn::Gcd`
    /// / `Lcm`): each operand a Python int (a Python bool, a NumPy integer:
    /// what has `__index__`), the result a Python int, folded from the left
    /// (`gcd()` is 0, `lcm()` 1, of one operand its magnitude).
    pub(super) fn math_gcd_lcm(
        &mut self,
        f: MathFn,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let int = self.opts.int_type;
        let identity = if f == MathFn::Gcd { 0 } else { 1 };
        let mut acc = Expr::int(identity, int, span);
        let mut ok = true;
        for a in args {
            // (a uint64 past 2**63 - 1 is a Python int, but no int64: an
            // OverflowError, as `int()` of it, not a wrapped operand)
            match self.python_int_operand(name, a) {
                Some(v) => {
                    let e = self.python_int_of(v, a, span);
                    acc = Expr::math(f, vec![acc, convert(e, int)], int, span);
                }
                None => ok = false,
            }
        }
        ok.then_some(TExpr { e: acc, weak: true })
    }

    /// An operand of one of Python's functions of ints (`math.gcd`,
    /// `math.comb`, ...): a Python int or bool, or a NumPy integer (what
    /// has `__index__`); a float or a NumPy bool is Python's `TypeError`.
    pub(super) fn python_int_operand(&mut self, name: &str, a: &ast::Expr) -> Option<TExpr> {
        let v = self.lower_expr(a)?;
        let t = self.scalar_elem(&v)?;
        if t.is_float() || (t == ElemTy::Bool && !v.weak) {
            let what = if t.is_float() && v.weak {
                "float".to_string()
            } else {
                format!("numpy.{}", t.numpy_name())
            };
            self.error(
                Diagnostic::error(format!(
                    "`{name}` takes integers: '{what}' object cannot be interpreted as an integer (a TypeError in Python)"
                ))
                .at(a.span, format!("a {what}"))
                .help("convert it first: `int(v)`")
                .type_error(),
            );
            return None;
        }
        Some(v)
    }

    pub(super) fn math_isclose(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        if !(2..=4).contains(&args.len()) {
            self.arity_error(name, "2 arguments", args.len(), span);
            return None;
        }
        let defaults = [ast::Expr::float(1e-9, span), ast::Expr::float(0.0, span)];
        let arg = |k: usize| args.get(k).unwrap_or_else(|| &defaults[k - 2]);
        let mut vals = vec![];
        for k in 0..4 {
            let t = self.lower_expr(arg(k))?;
            self.scalar_elem(&t)?;
            vals.push(convert(t.e, ElemTy::F64));
        }
        let [a, b, rel, abs_tol]: [Expr; 4] = vals.try_into().ok()?;
        let f64t = Type::Scalar(ElemTy::F64);
        let zero = || Expr::new(ExprKind::Float(0.0), f64t.clone(), span);
        let known = |e: &Expr| match e.kind {
            ExprKind::Float(v) => Some(v),
            _ => None,
        };
        match (known(&rel), known(&abs_tol)) {
            (Some(r), Some(a)) if r >= 0.0 && a >= 0.0 => {}
            // checked where it runs, as Python raises
            _ => {
                // (a NaN tolerance is no negative one)
                let negative = bool_binary(
                    BinOp::BitOr,
                    Expr::compare(BinOp::Lt, rel.clone(), zero(), span),
                    Expr::compare(BinOp::Lt, abs_tol.clone(), zero(), span),
                    span,
                );
                let ok = Expr::new(
                    ExprKind::Unary {
                        op: crate::ir::UnOp::Not,
                        arg: Box::new(negative),
                    },
                    Type::Scalar(ElemTy::Bool),
                    span,
                );
                let message = Some("tolerances must be non-negative".to_string());
                let check = Expr::assert(ok, message, "ValueError", span);
                self.pre
                    .push(crate::ir::Stmt::new(crate::ir::StmtKind::Expr(check), span));
            }
        }
        let bin = |op, l: Expr, r: Expr| Expr::binary(op, l, r, f64t.clone(), span);
        let fabs = |e: Expr| Expr::math(MathFn::Abs, vec![e], ElemTy::F64, span);
        let isinf = |e: Expr| super::calls::predicate(MathFn::IsInf, e, ElemTy::F64, span);
        let diff = fabs(bin(BinOp::Sub, b.clone(), a.clone()));
        let le = |bound: Expr| Expr::compare(BinOp::Le, diff.clone(), bound, span);
        let close = bool_binary(
            BinOp::BitOr,
            bool_binary(
                BinOp::BitOr,
                le(fabs(bin(BinOp::Mul, rel.clone(), b.clone()))),
                le(fabs(bin(BinOp::Mul, rel, a.clone()))),
                span,
            ),
            le(abs_tol),
            span,
        );
        let infinite = bool_binary(BinOp::BitOr, isinf(a.clone()), isinf(b.clone()), span);
        let e = Expr::select(
            Expr::compare(BinOp::Eq, a, b, span),
            Expr::new(ExprKind::Bool(true), Type::Scalar(ElemTy::Bool), span),
            Expr::select(
                infinite,
                Expr::new(ExprKind::Bool(false), Type::Scalar(ElemTy::Bool), span),
                close,
            ),
        );
        Some(TExpr { e, weak: true })
    }

    /// The pair `np.modf(x)` gives, or `np.frexp(x)` (`frexp`), in the
    /// float type NumPy computes `x` in; of Python's `math` (`python`):
    /// the Python numbers the function gives of `float(x)`. `x` is read
    /// once.
    pub(super) fn float_parts(
        &mut self,
        frexp: bool,
        python: bool,
        x: &ast::Expr,
        span: Span,
    ) -> Option<(TExpr, TExpr)> {
        let a = self.lower_expr(x)?;
        let (xf, ty) = match python {
            true => (convert(a.e, ElemTy::F64), ElemTy::F64),
            false => {
                let (t, ty) = self.as_float(a)?;
                (t.e, ty)
            }
        };
        let name = if frexp { "frexp_x" } else { "modf_x" };
        let v = self.new_var(name, Type::Scalar(ty), crate::ir::VarKind::Local, span);
        self.pre.push(crate::ir::Stmt::assign_var(v, xf, span));
        let xv = Expr::var(v, Type::Scalar(ty), span);
        let (p, q) = match frexp {
            true => {
                let exp_ty = if python { ElemTy::I64 } else { ElemTy::I32 };
                self.frexp_parts(xv, ty, exp_ty, span)
            }
            false => modf_parts(xv, ty, span),
        };
        let part = |e| TExpr { e, weak: python };
        Some((part(p), part(q)))
    }

    /// `frexp` of the variable `x` of float type `ty`: the mantissa `m`,
    /// `0.5 <= |m| < 1`, and the exponent `e` (of type `exp_ty`) with `x ==
    /// m * 2**e`; a zero, an infinity or a NaN is itself with exponent 0
    /// (C's, NumPy's and Python's values). The exponent is estimated from
    /// `log2|x|` and put right by one step either way, so the mantissa
    /// (`ldexp`, exact) is right whatever `log2` rounds to.
    fn frexp_parts(&mut self, x: Expr, ty: ElemTy, exp_ty: ElemTy, span: Span) -> (Expr, Expr) {
        // (float16 in float32, which holds each half and its mantissa)
        let ft = if ty == ElemTy::F16 { ElemTy::F32 } else { ty };
        let x = convert(x, ft);
        let f = |v: f64| constant(v, ft, span);
        let i = |v: i64| Expr::int(v, ElemTy::I32, span);
        let i32_op = |op, a, b| Expr::binary(op, a, b, Type::Scalar(ElemTy::I32), span);
        let finite = predicate(MathFn::IsFinite, x.clone(), ft, span);
        let nonzero = Expr::compare(BinOp::Ne, x.clone(), f(0.0), span);
        let regular = self.stash(bool_binary(BinOp::BitAnd, finite, nonzero, span), span);
        // (1 where the value has no exponent, so that no infinity or NaN
        // is converted to an int below)
        let safe = self.stash(Expr::select(regular.clone(), x.clone(), f(1.0)), span);
        let magnitude = Expr::math(MathFn::Abs, vec![safe.clone()], ft, span);
        let log = Expr::math(MathFn::Log2, vec![magnitude], ft, span);
        let floor = Expr::math(MathFn::Floor, vec![log], ft, span);
        let guess = self.stash(i32_op(BinOp::Add, convert(floor, ElemTy::I32), i(1)), span);
        let scaled = Expr::math(
            MathFn::Ldexp,
            vec![safe, i32_op(BinOp::Sub, i(0), guess.clone())],
            ft,
            span,
        );
        let m = self.stash(scaled, span);
        let size = Expr::math(MathFn::Abs, vec![m.clone()], ft, span);
        let high = Expr::compare(BinOp::Ge, size.clone(), f(1.0), span);
        let low = Expr::compare(BinOp::Lt, size, f(0.5), span);
        let times = |by: f64| Expr::binary(BinOp::Mul, m.clone(), f(by), Type::Scalar(ft), span);
        let mantissa = Expr::select(
            high.clone(),
            times(0.5),
            Expr::select(low.clone(), times(2.0), m.clone()),
        );
        let exponent = Expr::select(
            high,
            i32_op(BinOp::Add, guess.clone(), i(1)),
            Expr::select(low, i32_op(BinOp::Sub, guess.clone(), i(1)), guess),
        );
        (
            convert(Expr::select(regular.clone(), mantissa, x), ty),
            convert(Expr::select(regular, exponent, i(0)), exp_ty),
        )
    }

    /// `t` in the float type NumPy computes a math function of it in (an
    /// integer as the smallest float that holds its values).
    fn as_float(&mut self, t: TExpr) -> Option<(TExpr, ElemTy)> {
        let f = self.float_loop_type(std::slice::from_ref(&t))?;
        Some((
            TExpr {
                e: convert(t.e, f),
                weak: t.weak,
            },
            f,
        ))
    }

    /// `np.fmod` of integers of type `ty`: Python's `x % y` (the sign of
    /// `y`; 0 for a zero divisor and for the most negative value modulo
    /// -1), less `y` where its sign is not `x`'s, which is C's remainder.
    fn int_fmod(&mut self, x: Expr, y: Expr, ty: ElemTy, span: Span) -> Option<TExpr> {
        let strong = |e: Expr| TExpr { e, weak: false };
        let r = self.binary(BinOp::Mod, strong(x.clone()), strong(y.clone()), span)?;
        if !ty.is_signed_int() {
            return Some(r);
        }
        let zero = || weak(constant(0.0, ty, span));
        let nonzero = self.binary(BinOp::Ne, r.clone(), zero(), span)?;
        let r_neg = self.binary(BinOp::Lt, r.clone(), zero(), span)?;
        let x_neg = self.binary(BinOp::Lt, strong(x), zero(), span)?;
        let signs_differ = self.binary(BinOp::Ne, r_neg, x_neg, span)?;
        let fix = bool_binary(BinOp::BitAnd, nonzero.e, signs_differ.e, span);
        let less = self.binary(BinOp::Sub, r.clone(), strong(y), span)?;
        Some(weak(Expr::select(fix, less.e, r.e)))
    }

    /// NumPy's `npy_logaddexp` (`npy_logaddexp2` when `base2`), as it is
    /// written: equal operands give `x + log(2)` (`x + 1`), otherwise the
    /// larger plus `log1p(exp(-|x - y|))` (`log2(e) * log1p(exp2(...))`),
    /// and a NaN difference is the result.
    fn log_add_exp(
        &mut self,
        base2: bool,
        x: Expr,
        y: Expr,
        ty: ElemTy,
        span: Span,
    ) -> Option<Expr> {
        let c = |v: f64| constant(v, ty, span);
        let bin = |op: BinOp, a: Expr, b: Expr| match op.is_comparison() {
            true => Expr::compare(op, a, b, span),
            false => Expr::binary(op, a, b, Type::Scalar(ty), span),
        };
        let tmp = bin(BinOp::Sub, x.clone(), y.clone());
        let neg = Expr::new(
            ExprKind::Unary {
                op: UnOp::Neg,
                arg: Box::new(tmp.clone()),
            },
            Type::Scalar(ty),
            span,
        );
        // the larger operand plus the log of one plus the exponential of
        // minus the difference
        let term = |d: Expr| {
            let (exp, scale) = if base2 {
                (MathFn::Exp2, Some(std::f64::consts::LOG2_E))
            } else {
                (MathFn::Exp, None)
            };
            let l = Expr::math(
                MathFn::Log1p,
                vec![Expr::math(exp, vec![d], ty, span)],
                ty,
                span,
            );
            match scale {
                Some(k) => bin(BinOp::Mul, c(k), l),
                None => l,
            }
        };
        let equal = bin(
            BinOp::Add,
            x.clone(),
            c(if base2 { 1.0 } else { std::f64::consts::LN_2 }),
        );
        let x_larger = bin(BinOp::Add, x.clone(), term(neg));
        let y_larger = bin(BinOp::Add, y.clone(), term(tmp.clone()));
        let nan_or_y = Expr::select(bin(BinOp::Le, tmp.clone(), c(0.0)), y_larger, tmp.clone());
        let unequal = Expr::select(bin(BinOp::Gt, tmp, c(0.0)), x_larger, nan_or_y);
        Some(Expr::select(bin(BinOp::Eq, x, y), equal, unequal))
    }
}

/// `modf` of the variable `x` of float type `ty`: C's (NumPy's, Python's)
/// parts, the fractional part `x - trunc(x)` (exact) with the sign of `x`
/// (a signed `0.0` of an infinity), and the integral part `trunc(x)`.
fn modf_parts(x: Expr, ty: ElemTy, span: Span) -> (Expr, Expr) {
    let whole = Expr::math(MathFn::Trunc, vec![x.clone()], ty, span);
    let diff = Expr::binary(BinOp::Sub, x.clone(), whole.clone(), Type::Scalar(ty), span);
    let signed = |e| Expr::math(MathFn::Copysign, vec![e, x.clone()], ty, span);
    let infinite = predicate(MathFn::IsInf, x.clone(), ty, span);
    (
        Expr::select(infinite, signed(constant(0.0, ty, span)), signed(diff)),
        whole,
    )
}
