//! Folds arithmetic, comparisons and conversions whose operands are literals,
//! with Python semantics (`//` and `%` round toward negative infinity).
//! Nothing is folded that would overflow or divide by zero: those stay in
//! the code and behave as the target does.

use crate::ir::{BinOp, Block, Expr, ExprKind, Function, Place, Program, StmtKind, Type, UnOp};
use crate::types::ElemTy;

pub fn run(p: &mut Program) {
    fold_function(&mut p.host);
    for k in &mut p.kernels {
        fold_function(&mut k.func);
    }
    for h in &mut p.helpers {
        fold_function(h);
    }
}

fn fold_function(f: &mut Function) {
    fold_block(&mut f.body);
}

fn fold_block(b: &mut Block) {
    for s in b.iter_mut() {
        match &mut s.kind {
            StmtKind::Assign { dst, value } => {
                if let Place::Index { indices, .. } = dst {
                    indices.iter_mut().for_each(fold_expr);
                }
                fold_expr(value);
            }
            StmtKind::For(l) => {
                fold_expr(&mut l.lo);
                fold_expr(&mut l.hi);
                fold_block(&mut l.body);
            }
            StmtKind::While { cond, body } => {
                fold_expr(cond);
                fold_block(body);
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                fold_expr(cond);
                fold_block(then_body);
                fold_block(else_body);
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => fold_expr(e),
            StmtKind::OnDevice(body) => fold_block(body),
            StmtKind::Return(None) | StmtKind::Launch { .. } | StmtKind::Barrier => {}
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Lit {
    B(bool),
    I(i64),
    F(f64),
}

fn lit(e: &Expr) -> Option<Lit> {
    match e.kind {
        ExprKind::Bool(b) => Some(Lit::B(b)),
        ExprKind::Int(i) => Some(Lit::I(i)),
        ExprKind::Float(f) => Some(Lit::F(f)),
        _ => None,
    }
}

/// Rounds a value to what the element type can hold; `None` if it cannot.
fn to_kind(v: Lit, ty: &Type) -> Option<ExprKind> {
    let Type::Scalar(t) = ty else { return None };
    match v {
        Lit::B(b) if *t == ElemTy::Bool => Some(ExprKind::Bool(b)),
        Lit::I(i) if t.is_int() && fits(i, *t) => Some(ExprKind::Int(i)),
        Lit::F(f) if *t == ElemTy::F32 => Some(ExprKind::Float(f as f32 as f64)),
        Lit::F(f) if *t == ElemTy::F64 => Some(ExprKind::Float(f)),
        _ => None,
    }
}

fn fits(i: i64, t: ElemTy) -> bool {
    match t {
        ElemTy::I8 => i8::try_from(i).is_ok(),
        ElemTy::I16 => i16::try_from(i).is_ok(),
        ElemTy::I32 => i32::try_from(i).is_ok(),
        ElemTy::I64 => true,
        ElemTy::U8 => u8::try_from(i).is_ok(),
        ElemTy::U16 => u16::try_from(i).is_ok(),
        ElemTy::U32 => u32::try_from(i).is_ok(),
        ElemTy::U64 => i >= 0,
        _ => false,
    }
}

/// Python's integer floor division; `None` on division by zero or overflow.
pub fn py_floordiv(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q.checked_sub(1)
    } else {
        Some(q)
    }
}

/// Python's integer modulo (sign of the divisor).
pub fn py_mod(a: i64, b: i64) -> Option<i64> {
    let r = a.checked_rem(b)?;
    if r != 0 && ((r < 0) != (b < 0)) {
        Some(r + b)
    } else {
        Some(r)
    }
}

/// Python's float modulo.
pub fn py_fmod(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
        r + b
    } else if r == 0.0 {
        0.0f64.copysign(b)
    } else {
        r
    }
}

/// Python's float floor division (CPython's algorithm).
pub fn py_ffloordiv(a: f64, b: f64) -> f64 {
    let m = a % b;
    let mut div = (a - m) / b;
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    if div == 0.0 {
        return 0.0f64.copysign(a / b);
    }
    let fl = div.floor();
    if div - fl > 0.5 {
        fl + 1.0
    } else {
        fl
    }
}

fn fold_binary(op: BinOp, a: Lit, b: Lit) -> Option<Lit> {
    use Lit::*;
    Some(match (a, b) {
        (I(x), I(y)) => match op {
            BinOp::Add => I(x.checked_add(y)?),
            BinOp::Sub => I(x.checked_sub(y)?),
            BinOp::Mul => I(x.checked_mul(y)?),
            BinOp::FloorDiv => I(py_floordiv(x, y)?),
            BinOp::Mod => I(py_mod(x, y)?),
            BinOp::Pow => I(x.checked_pow(u32::try_from(y).ok()?)?),
            BinOp::BitAnd => I(x & y),
            BinOp::BitOr => I(x | y),
            BinOp::BitXor => I(x ^ y),
            BinOp::Shl if (0..63).contains(&y) => I(x.checked_shl(y as u32)?),
            BinOp::Shr if (0..64).contains(&y) => I(x >> y),
            BinOp::Eq => B(x == y),
            BinOp::Ne => B(x != y),
            BinOp::Lt => B(x < y),
            BinOp::Le => B(x <= y),
            BinOp::Gt => B(x > y),
            BinOp::Ge => B(x >= y),
            BinOp::Max => I(x.max(y)),
            BinOp::Min => I(x.min(y)),
            _ => return None,
        },
        (F(x), F(y)) => match op {
            BinOp::Add => F(x + y),
            BinOp::Sub => F(x - y),
            BinOp::Mul => F(x * y),
            BinOp::Div if y != 0.0 => F(x / y),
            BinOp::FloorDiv if y != 0.0 => F(py_ffloordiv(x, y)),
            BinOp::Mod if y != 0.0 => F(py_fmod(x, y)),
            BinOp::Eq => B(x == y),
            BinOp::Ne => B(x != y),
            BinOp::Lt => B(x < y),
            BinOp::Le => B(x <= y),
            BinOp::Gt => B(x > y),
            BinOp::Ge => B(x >= y),
            BinOp::Max if !x.is_nan() && !y.is_nan() => F(if y > x { y } else { x }),
            BinOp::Min if !x.is_nan() && !y.is_nan() => F(if y < x { y } else { x }),
            _ => return None,
        },
        (B(x), B(y)) => match op {
            BinOp::And => B(x && y),
            BinOp::Or => B(x || y),
            BinOp::Eq => B(x == y),
            BinOp::Ne => B(x != y),
            BinOp::BitAnd => B(x & y),
            BinOp::BitOr => B(x | y),
            BinOp::BitXor => B(x ^ y),
            _ => return None,
        },
        _ => return None,
    })
}

fn convert(v: Lit, to: &Type) -> Option<Lit> {
    let Type::Scalar(t) = to else { return None };
    Some(match (v, *t) {
        (Lit::B(b), ElemTy::Bool) => Lit::B(b),
        (Lit::I(i), ElemTy::Bool) => Lit::B(i != 0),
        (Lit::F(f), ElemTy::Bool) => Lit::B(f != 0.0),
        (Lit::B(b), t) if t.is_int() => Lit::I(b as i64),
        (Lit::I(i), t) if t.is_int() => Lit::I(i),
        (Lit::F(f), t) if t.is_int() && f.is_finite() && f.abs() < 9.0e18 => {
            Lit::I(f.trunc() as i64)
        }
        (Lit::B(b), t) if t.is_float() => Lit::F(b as i64 as f64),
        (Lit::I(i), t) if t.is_float() => Lit::F(i as f64),
        (Lit::F(f), t) if t.is_float() => Lit::F(f),
        _ => return None,
    })
}

pub fn fold_expr(e: &mut Expr) {
    let new_kind = match &mut e.kind {
        ExprKind::Bool(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Var(_)
        | ExprKind::GpuIndex(_) => None,
        ExprKind::Index { indices, .. } => {
            indices.iter_mut().for_each(fold_expr);
            None
        }
        ExprKind::Unary { op, arg } => {
            fold_expr(arg);
            match (op, lit(arg)) {
                (UnOp::Neg, Some(Lit::I(i))) => {
                    i.checked_neg().and_then(|v| to_kind(Lit::I(v), &e.ty))
                }
                (UnOp::Neg, Some(Lit::F(f))) => to_kind(Lit::F(-f), &e.ty),
                (UnOp::Not, Some(Lit::B(b))) => to_kind(Lit::B(!b), &e.ty),
                (UnOp::BitNot, Some(Lit::I(i))) => to_kind(Lit::I(!i), &e.ty),
                _ => None,
            }
        }
        ExprKind::Binary { op, lhs, rhs } => {
            fold_expr(lhs);
            fold_expr(rhs);
            match (lit(lhs), lit(rhs)) {
                (Some(a), Some(b)) => fold_binary(*op, a, b).and_then(|v| to_kind(v, &e.ty)),
                _ => None,
            }
        }
        ExprKind::Select { cond, then, else_ } => {
            fold_expr(cond);
            fold_expr(then);
            fold_expr(else_);
            match lit(cond) {
                Some(Lit::B(true)) => Some(then.kind.clone()),
                Some(Lit::B(false)) => Some(else_.kind.clone()),
                _ => None,
            }
        }
        ExprKind::Convert { arg } => {
            fold_expr(arg);
            lit(arg)
                .and_then(|v| convert(v, &e.ty))
                .and_then(|v| to_kind(v, &e.ty))
        }
        ExprKind::WarpReduce { arg, .. } => {
            fold_expr(arg);
            None
        }
        ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => {
            args.iter_mut().for_each(fold_expr);
            None
        }
    };
    if let Some(k) = new_kind {
        e.kind = k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::*;

    fn fold(mut e: Expr) -> ExprKind {
        fold_expr(&mut e);
        e.kind
    }

    #[test]
    fn python_int_division() {
        assert_eq!(
            fold(bin(BinOp::FloorDiv, int(-7), int(2))),
            ExprKind::Int(-4)
        );
        assert_eq!(fold(bin(BinOp::Mod, int(-7), int(2))), ExprKind::Int(1));
        assert_eq!(fold(bin(BinOp::Mod, int(7), int(-2))), ExprKind::Int(-1));
        assert_eq!(
            fold(bin(BinOp::FloorDiv, int(7), int(-2))),
            ExprKind::Int(-4)
        );
        // Division by zero is left alone.
        assert!(matches!(
            fold(bin(BinOp::FloorDiv, int(1), int(0))),
            ExprKind::Binary { .. }
        ));
    }

    #[test]
    fn python_float_division() {
        let f = |v| float(v, ElemTy::F64);
        assert_eq!(fold(bin(BinOp::Mod, f(-7.5), f(2.0))), ExprKind::Float(0.5));
        assert_eq!(
            fold(bin(BinOp::FloorDiv, f(-7.5), f(2.0))),
            ExprKind::Float(-4.0)
        );
    }

    #[test]
    fn nested_and_comparisons() {
        let e = bin(BinOp::Mul, bin(BinOp::Add, int(2), int(3)), int(4));
        assert_eq!(fold(e), ExprKind::Int(20));
        assert_eq!(fold(bin(BinOp::Lt, int(2), int(3))), ExprKind::Bool(true));
    }

    #[test]
    fn f32_results_are_rounded() {
        let e = bin(BinOp::Div, float(1.0, ElemTy::F32), float(3.0, ElemTy::F32));
        assert_eq!(fold(e), ExprKind::Float((1.0f32 / 3.0f32) as f64));
    }

    #[test]
    fn overflow_is_not_folded() {
        let e = bin(BinOp::Add, int(i64::MAX), int(1));
        assert!(matches!(fold(e), ExprKind::Binary { .. }));
    }
}
