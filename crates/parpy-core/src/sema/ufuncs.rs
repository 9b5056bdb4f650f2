//! NumPy ufuncs that are expressions parpy already has ([`Ufunc`]):
//! `np.add(a, b)` is `a + b`, `np.logical_and(a, b)` is `(a != 0) & (b !=
//! 0)`, `np.deg2rad(x)` is `x * (pi / 180)` in `x`'s float type. Each is
//! lowered through the rule of the expression it stands for
//! (`Lowerer::binary`, `Lowerer::unary`, the float type of a math
//! function), so the arithmetic has one implementation. What is the ufunc's
//! own is how it treats Python numbers: when every operand is one, they
//! become NumPy values first (`np.invert(True)` is `False` where `~True` is
//! -2), and the result is a NumPy value (strong), never a Python number.
//!
//! A ufunc applies to each element of its array operands; in a slice
//! statement its operands are elements already (`alias::elementwise`).

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, ExprKind, MathFn, Type, UnOp};
use crate::resolve::Ufunc;
use crate::syntax::ast;

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
            | Ufunc::LogAddExp
            | Ufunc::LogAddExp2 => 2,
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

fn math(func: MathFn, args: Vec<Expr>, ty: ElemTy, span: Span) -> Expr {
    Expr::new(ExprKind::Math { func, args }, Type::Scalar(ty), span)
}

fn select(cond: Expr, then: Expr, else_: Expr) -> Expr {
    let (ty, span) = (then.ty.clone(), then.span);
    Expr::new(
        ExprKind::Select {
            cond: Box::new(cond),
            then: Box::new(then),
            else_: Box::new(else_),
        },
        ty,
        span,
    )
}

fn weak(e: Expr) -> TExpr {
    TExpr { e, weak: true }
}

impl Lowerer<'_, '_> {
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
            (Ufunc::Operator(op), Some(b)) => self.binary(op, a, b, span)?,
            (Ufunc::Unary(op), None) => self.unary(op, a, span)?,
            (Ufunc::Positive, None) => {
                if self.scalar_elem(&a)? == ElemTy::Bool {
                    self.error(
                        Diagnostic::error(format!("`{name}` of a bool is not defined in NumPy"))
                            .at(a.e.span, "this is a bool")
                            .type_error(),
                    );
                    return None;
                }
                a
            }
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
                weak(math(f, vec![x.e], ty, span))
            }
            (Ufunc::Reciprocal, None) => {
                let ty = self.scalar_elem(&a)?;
                if !ty.is_float() {
                    self.error(
                        Diagnostic::error(format!("`{name}` of an integer is not supported"))
                            .at(a.e.span, format!("this has type `{ty}`"))
                            .note("NumPy's integer reciprocal is 0 for every value but 1 and -1, and undefined for 0")
                            .help("for a float result write `1 / x`")
                            .type_error(),
                    );
                    return None;
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
                let to_rad = u == Ufunc::Deg2Rad;
                let k = match (work, to_rad) {
                    (ElemTy::F64, true) => std::f64::consts::PI / 180.0,
                    (ElemTy::F64, false) => 180.0 / std::f64::consts::PI,
                    (_, true) => (std::f32::consts::PI / 180.0) as f64,
                    (_, false) => (180.0 / std::f32::consts::PI) as f64,
                };
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
                    weak(math(MathFn::Copysign, vec![one, a.e], ty, span))
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
                        weak(math(MathFn::Fmod, args, ty, span))
                    }
                    _ => self.int_fmod(x, y, ty, span)?,
                }
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
        Some(TExpr {
            e: r.e,
            weak: false,
        })
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
        Some(weak(select(fix, less.e, r.e)))
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
        let bin = |op: BinOp, a: Expr, b: Expr| {
            let rty = if op.is_comparison() { ElemTy::Bool } else { ty };
            Expr::new(
                ExprKind::Binary {
                    op,
                    lhs: Box::new(a),
                    rhs: Box::new(b),
                },
                Type::Scalar(rty),
                span,
            )
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
            let l = math(MathFn::Log1p, vec![math(exp, vec![d], ty, span)], ty, span);
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
        let nan_or_y = select(bin(BinOp::Le, tmp.clone(), c(0.0)), y_larger, tmp.clone());
        let unequal = select(bin(BinOp::Gt, tmp, c(0.0)), x_larger, nan_or_y);
        Some(select(bin(BinOp::Eq, x, y), equal, unequal))
    }
}
