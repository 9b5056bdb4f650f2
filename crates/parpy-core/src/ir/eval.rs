//! The one evaluator of the IR's scalar operations, with Python's rules:
//! `//` and `%` round toward negative infinity (floats by CPython's
//! algorithm: `1.0 // 0.1 == 9.0`, `-0.0 % 1.0 == 0.0`), `max`/`min` keep
//! the first operand unless the second is strictly greater/smaller,
//! comparisons are IEEE's.
//!
//! Two modes. [`Mode::Python`] is what Python computes: an integer result
//! that does not fit in 64 bits, a division by zero, a negative shift
//! count or a complex power is an error (constant folding then leaves the
//! expression alone). [`Mode::Target`] is what the generated code computes
//! (the C-family prelude; the launch plan interprets host code with it):
//! integers wrap, NumPy's answers where Python raises (an integer divided
//! by zero is 0, a float floor-divided by zero is the IEEE quotient,
//! shifts beyond 64 bits shift every bit out).

use crate::ops::{BinOp, NanRule, UnOp};
use crate::types::{f16_bits, f16_value, ElemTy, ScalarValue};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Python,
    Target,
}

/// Why an operation has no value.
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
pub enum EvalError {
    #[error("division or modulo by zero")]
    DivisionByZero,
    #[error("the result does not fit in 64 bits")]
    Overflow,
    #[error("negative integer power")]
    NegativePower,
    #[error("negative shift count")]
    NegativeShift,
    #[error("`{0}` on these operands")]
    Unsupported(&'static str),
}

type R = Result<ScalarValue, EvalError>;

fn as_f64(v: ScalarValue) -> f64 {
    match v {
        ScalarValue::Bool(b) => b as i64 as f64,
        ScalarValue::Int(i) => i as f64,
        ScalarValue::Float(f) => f,
    }
}

fn as_i64(v: ScalarValue) -> i64 {
    match v {
        ScalarValue::Bool(b) => b as i64,
        ScalarValue::Int(i) => i,
        ScalarValue::Float(f) => f as i64,
    }
}

/// Python's truth value.
pub fn truthy(v: ScalarValue) -> bool {
    match v {
        ScalarValue::Bool(b) => b,
        ScalarValue::Int(i) => i != 0,
        ScalarValue::Float(f) => f != 0.0,
    }
}

/// `a op b`. Bools with ints compute as ints and anything with a float as
/// floats (Python's promotion), except in [`Mode::Target`], where two bools
/// follow NumPy's bool arithmetic (`+` is `or`, `*` is `and`).
pub fn binary(op: BinOp, a: ScalarValue, b: ScalarValue, mode: Mode) -> R {
    use ScalarValue::*;
    if matches!(op, BinOp::And | BinOp::Or) {
        let (x, y) = (truthy(a), truthy(b));
        return Ok(Bool(if op == BinOp::And { x && y } else { x || y }));
    }
    // Python divides and compares ints with floats exactly; converting an
    // int beyond 2**53 to a float is not exact
    let inexact = |v: ScalarValue| matches!(v, Int(i) if i.unsigned_abs() > 1 << 53);
    let has_float = matches!(a, Float(_)) || matches!(b, Float(_));
    if mode == Mode::Python
        && (inexact(a) || inexact(b))
        && (op == BinOp::Div || (has_float && op.is_comparison()))
    {
        return Err(EvalError::Unsupported(op.symbol()));
    }
    match (a, b) {
        (Bool(x), Bool(y)) if mode == Mode::Target || !is_arith(op) => bool_binary(op, x, y),
        _ if has_float || op == BinOp::Div => float_binary(op, as_f64(a), as_f64(b), mode),
        _ => int_binary(op, as_i64(a), as_i64(b), mode),
    }
}

/// Operators that turn Python bools into ints.
fn is_arith(op: BinOp) -> bool {
    use BinOp::*;
    matches!(op, Add | Sub | Mul | Div | FloorDiv | Mod | Pow | Shl | Shr)
}

/// `x op y` of a comparison `op` (`None` for other operators).
pub(crate) fn compare<T: PartialOrd>(op: BinOp, x: T, y: T) -> Option<bool> {
    Some(match op {
        BinOp::Eq => x == y,
        BinOp::Ne => x != y,
        BinOp::Lt => x < y,
        BinOp::Le => x <= y,
        BinOp::Gt => x > y,
        BinOp::Ge => x >= y,
        _ => return None,
    })
}

fn bool_binary(op: BinOp, x: bool, y: bool) -> R {
    use BinOp::*;
    if let Some(c) = compare(op, x, y) {
        return Ok(ScalarValue::Bool(c));
    }
    Ok(ScalarValue::Bool(match op {
        BitAnd | Min | FMin | Mul => x & y,
        BitOr | Max | FMax | Add => x | y,
        BitXor => x ^ y,
        _ => return Err(EvalError::Unsupported(op.symbol())),
    }))
}

/// Python's integer floor division (`None`: division by zero, or the one
/// overflow `i64::MIN // -1`).
pub fn int_floordiv(a: i64, b: i64) -> Option<i64> {
    i64::try_from(floordiv_i128(a as i128, b as i128)?).ok()
}

/// Python's integer modulo: the sign of the divisor (`None`: by zero).
pub fn int_mod(a: i64, b: i64) -> Option<i64> {
    // (the remainder's magnitude is below the divisor's: it fits)
    mod_i128(a as i128, b as i128).map(|r| r as i64)
}

fn floordiv_i128(a: i128, b: i128) -> Option<i128> {
    let q = a.checked_div(b)?;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q.checked_sub(1)
    } else {
        Some(q)
    }
}

fn mod_i128(a: i128, b: i128) -> Option<i128> {
    if b == 0 {
        return None;
    }
    let r = a.wrapping_rem(b);
    Some(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    })
}

/// A Python number while Python computes an expression of number literals
/// (`2 ** 62 * 4 // 8`): an int, exact up to 128 bits, or a float.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum PyNumber {
    Int(i128),
    Float(f64),
}

/// `a op b` as Python computes it, the ints exact (beyond 128 bits:
/// [`EvalError::Overflow`]). What Python computes otherwise than the
/// arithmetic and bitwise operators here has no value
/// ([`EvalError::Unsupported`]: comparisons, NumPy's `max`/`min`, an int
/// to a negative power, which is a float, and `/` of ints beyond 2**53,
/// which Python rounds once); the errors Python raises are [`binary`]'s.
pub fn python_binary(op: BinOp, a: PyNumber, b: PyNumber) -> Result<PyNumber, EvalError> {
    use BinOp::*;
    use PyNumber::{Float, Int};
    let python_op = matches!(
        op,
        Add | Sub | Mul | Div | FloorDiv | Mod | Pow | BitAnd | BitOr | BitXor | Shl | Shr
    );
    if !python_op {
        return Err(EvalError::Unsupported(op.symbol()));
    }
    let (x, y) = match (a, b) {
        (Int(x), Int(y)) if op != Div => (x, y),
        (Int(x), Int(y)) if x.unsigned_abs() > 1 << 53 || y.unsigned_abs() > 1 << 53 => {
            return Err(EvalError::Unsupported(op.symbol()))
        }
        _ => {
            // Python converts the int to the nearest float (as `as` does)
            let f = |v: PyNumber| match v {
                Int(i) => i as f64,
                Float(f) => f,
            };
            return match float_binary(op, f(a), f(b), Mode::Python)? {
                ScalarValue::Float(r) => Ok(Float(r)),
                _ => Err(EvalError::Unsupported(op.symbol())),
            };
        }
    };
    let fits = |v: Option<i128>| v.map(Int).ok_or(EvalError::Overflow);
    match op {
        Add => fits(x.checked_add(y)),
        Sub => fits(x.checked_sub(y)),
        Mul => fits(x.checked_mul(y)),
        FloorDiv | Mod if y == 0 => Err(EvalError::DivisionByZero),
        FloorDiv => fits(floordiv_i128(x, y)),
        Mod => fits(mod_i128(x, y)),
        Pow if x == 0 && y < 0 => Err(EvalError::DivisionByZero),
        Pow if y < 0 => Err(EvalError::Unsupported("** (a float result)")),
        Pow => match x {
            0 | 1 => Ok(Int(if y == 0 { 1 } else { x })),
            -1 => Ok(Int(if y % 2 == 0 { 1 } else { -1 })),
            _ => fits(u32::try_from(y).ok().and_then(|e| x.checked_pow(e))),
        },
        BitAnd => Ok(Int(x & y)),
        BitOr => Ok(Int(x | y)),
        BitXor => Ok(Int(x ^ y)),
        Shl | Shr if y < 0 => Err(EvalError::NegativeShift),
        Shl if x == 0 => Ok(Int(0)),
        Shl => {
            let r = (y < 128).then(|| x << y).filter(|r| r >> y == x);
            fits(r)
        }
        Shr => Ok(Int(if y < 128 { x >> y } else { x >> 127 })),
        _ => Err(EvalError::Unsupported(op.symbol())),
    }
}

/// `op a` as Python computes it (see [`python_binary`]).
pub fn python_unary(op: UnOp, a: PyNumber) -> Result<PyNumber, EvalError> {
    use PyNumber::{Float, Int};
    match (op, a) {
        (UnOp::Neg, Float(f)) => Ok(Float(-f)),
        (UnOp::Neg, Int(i)) => i.checked_neg().map(Int).ok_or(EvalError::Overflow),
        (UnOp::BitNot, Int(i)) => Ok(Int(!i)),
        _ => Err(EvalError::Unsupported("unary operator")),
    }
}

/// Python's float modulo (CPython's algorithm; the sign of the divisor,
/// a zero result takes the divisor's sign).
pub fn float_mod(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 {
        if (r < 0.0) != (b < 0.0) {
            r + b
        } else {
            r
        }
    } else {
        0.0f64.copysign(b)
    }
}

/// Python's float floor division (CPython's algorithm, which rounds the
/// exact quotient: `1.0 // 0.1 == 9.0` where `floor(1.0 / 0.1)` is 10).
pub fn float_floordiv(a: f64, b: f64) -> f64 {
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

fn int_binary(op: BinOp, x: i64, y: i64, mode: Mode) -> R {
    use BinOp::*;
    use ScalarValue::Int;
    let exact = mode == Mode::Python;
    let fit = |v: Option<i64>, wrapped: i64| match v {
        Some(v) => Ok(Int(v)),
        None if exact => Err(EvalError::Overflow),
        None => Ok(Int(wrapped)),
    };
    if let Some(c) = compare(op, x, y) {
        return Ok(ScalarValue::Bool(c));
    }
    match op {
        Add => fit(x.checked_add(y), x.wrapping_add(y)),
        Sub => fit(x.checked_sub(y), x.wrapping_sub(y)),
        Mul => fit(x.checked_mul(y), x.wrapping_mul(y)),
        FloorDiv | Mod if y == 0 && exact => Err(EvalError::DivisionByZero),
        // NumPy: an integer divided by zero is 0 (with a warning)
        FloorDiv | Mod if y == 0 => Ok(Int(0)),
        FloorDiv => fit(int_floordiv(x, y), x.wrapping_div(y)),
        Mod => Ok(Int(int_mod(x, y).unwrap_or(0))),
        Pow if exact && x == 0 && y < 0 => Err(EvalError::DivisionByZero),
        Pow if exact && y < 0 => Err(EvalError::NegativePower),
        // the generated code's answer for a negative power (NumPy refuses)
        Pow if y < 0 => Ok(Int((x == 1) as i64)),
        Pow => {
            let e = u32::try_from(y).unwrap_or(u32::MAX);
            let exact_pow = u32::try_from(y).ok().and_then(|e| x.checked_pow(e));
            let exact_pow = exact_pow.or(match x {
                0 | 1 => Some(x),
                -1 => Some(if y % 2 == 0 { 1 } else { -1 }),
                _ => None,
            });
            fit(exact_pow, x.wrapping_pow(e))
        }
        BitAnd => Ok(Int(x & y)),
        BitOr => Ok(Int(x | y)),
        BitXor => Ok(Int(x ^ y)),
        Shl | Shr if exact && y < 0 => Err(EvalError::NegativeShift),
        Shl if exact => {
            if x == 0 {
                return Ok(Int(0));
            }
            let r = if y < 64 { x << y } else { 0 };
            fit((y < 64 && r >> y == x).then_some(r), r)
        }
        Shr if exact => Ok(Int(if y < 64 { x >> y } else { x >> 63 })),
        // NumPy: counts beyond the width shift every bit out
        Shl => Ok(Int(if (0..64).contains(&y) { x << y } else { 0 })),
        Shr => Ok(Int(if (0..64).contains(&y) {
            x >> y
        } else {
            x >> 63
        })),
        Max | FMax => Ok(Int(if y > x { y } else { x })),
        Min | FMin => Ok(Int(if y < x { y } else { x })),
        _ => Err(EvalError::Unsupported(op.symbol())),
    }
}

fn float_binary(op: BinOp, x: f64, y: f64, mode: Mode) -> R {
    use BinOp::*;
    use ScalarValue::Float;
    let exact = mode == Mode::Python;
    if let Some(c) = compare(op, x, y) {
        return Ok(ScalarValue::Bool(c));
    }
    if exact && y == 0.0 && matches!(op, Div | FloorDiv | Mod) {
        return Err(EvalError::DivisionByZero);
    }
    Ok(Float(match op {
        Add => x + y,
        Sub => x - y,
        Mul => x * y,
        Div => x / y,
        // NumPy: a float floor-divided by zero is the quotient (inf or nan)
        FloorDiv if y == 0.0 => x / y,
        FloorDiv => float_floordiv(x, y),
        Mod => float_mod(x, y),
        Pow => {
            if exact {
                if x == 0.0 && y < 0.0 && y.is_finite() {
                    return Err(EvalError::DivisionByZero);
                }
                if x < 0.0 && x.is_finite() && y.is_finite() && y.fract() != 0.0 {
                    return Err(EvalError::Unsupported("** (a complex result)"));
                }
            }
            let r = x.powf(y);
            if exact && r.is_infinite() && x.is_finite() && y.is_finite() {
                return Err(EvalError::Overflow);
            }
            r
        }
        _ => match op.max_min() {
            Some((max, rule)) => max_min(max, rule, x, y),
            None => return Err(EvalError::Unsupported(op.symbol())),
        },
    }))
}

/// A float max / min under `rule`, the rule the back ends print
/// (`back::c_writer::max_min_rule`): NumPy's `maximum` gives `x` when it
/// wins or is NaN (`y` of a tie); `fmax` gives `x` when it wins, ties or
/// `y` is NaN.
pub fn max_min(max: bool, rule: NanRule, x: f64, y: f64) -> f64 {
    let x_kept = match (rule, max) {
        (NanRule::NumPy, true) => x > y || x.is_nan(),
        (NanRule::NumPy, false) => x < y || x.is_nan(),
        (NanRule::Ignore, true) => x >= y || y.is_nan(),
        (NanRule::Ignore, false) => x <= y || y.is_nan(),
    };
    if x_kept {
        x
    } else {
        y
    }
}

/// `op a`. `not` gives a bool; `-` and `~` of a bool are ints in
/// [`Mode::Python`], while in [`Mode::Target`] `~` of a bool is `not`
/// (NumPy).
pub fn unary(op: UnOp, a: ScalarValue, mode: Mode) -> R {
    use ScalarValue::*;
    let exact = mode == Mode::Python;
    Ok(match (op, a) {
        (UnOp::Not, v) => Bool(!truthy(v)),
        (UnOp::Neg, Float(f)) => Float(-f),
        (UnOp::Neg, v) => match as_i64(v).checked_neg() {
            Some(n) => Int(n),
            None if exact => return Err(EvalError::Overflow),
            None => Int(i64::MIN),
        },
        (UnOp::BitNot, Bool(b)) if !exact => Bool(!b),
        (UnOp::BitNot, Float(_)) => return Err(EvalError::Unsupported("~")),
        (UnOp::BitNot, v) => Int(!as_i64(v)),
        (UnOp::Pos, v) => v,
    })
}

/// Wraps an integer to the width of `e` (two's complement, as a C cast
/// does; 64-bit values are kept as their bit pattern).
pub fn wrap_int(v: i64, e: ElemTy) -> i64 {
    match e {
        ElemTy::I8 => v as i8 as i64,
        ElemTy::I16 => v as i16 as i64,
        ElemTy::I32 => v as i32 as i64,
        ElemTy::U8 => v as u8 as i64,
        ElemTy::U16 => v as u16 as i64,
        ElemTy::U32 => v as u32 as i64,
        _ => v,
    }
}

/// NumPy's `gcd` (`lcm`: true) of two integers of type `e` (values as
/// `wrap_int` keeps them): of the magnitudes, Euclid's in the unsigned
/// type; lcm `|a| / gcd * |b|` wrapping in it (`np.lcm(int8(50), 3)` is
/// -106). The C prelude's `parpy_gcd_<type>` / `parpy_lcm_<type>` is this
/// rule in C.
pub fn gcd_lcm(lcm: bool, a: i64, b: i64, e: ElemTy) -> i64 {
    let mag = |v: i64| {
        if e.is_signed_int() {
            v.unsigned_abs()
        } else {
            v as u64
        }
    };
    let (x, y) = (mag(a), mag(b));
    let (mut g, mut r) = (y, x);
    while r != 0 {
        (g, r) = (r, g % r);
    }
    let v = if lcm {
        x.checked_div(g).map_or(0, |q| q.wrapping_mul(y))
    } else {
        g
    };
    wrap_int(v as i64, e)
}

/// C's `nextafter` of float type `e` (`nextafterf` of a float32): the
/// next value after `x` toward `y`.
pub fn next_after(x: f64, y: f64, e: ElemTy) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == y {
        return y;
    }
    let up = y > x;
    if e == ElemTy::F32 {
        let x = x as f32;
        let b = if x == 0.0 {
            return f32::from_bits(1).copysign(if up { 1.0 } else { -1.0 }) as f64;
        } else if up == (x > 0.0) {
            x.to_bits() + 1
        } else {
            x.to_bits() - 1
        };
        return f32::from_bits(b) as f64;
    }
    if x == 0.0 {
        return f64::from_bits(1).copysign(if up { 1.0 } else { -1.0 });
    }
    let b = x.to_bits();
    f64::from_bits(if up == (x > 0.0) { b + 1 } else { b - 1 })
}

/// C's `ldexp`: `x * 2**e` (in steps a float holds, rounded once at the
/// end but for results below the normal floats).
pub fn ldexp(mut x: f64, e: i64) -> f64 {
    let mut e = e.clamp(-100_000, 100_000);
    while e > 1000 && x.is_finite() && x != 0.0 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 && x.is_finite() && x != 0.0 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e as i32)
}

/// IEEE 754's remainder (C's `remainder`, Python's `math.remainder`):
/// `x - n * y`, `n` the integer nearest `x / y` (ties to even), exact;
/// NaN of an infinite `x` or a zero `y`. CPython's way, from `fmod`.
pub fn ieee_remainder(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() || x.is_infinite() || y == 0.0 {
        return f64::NAN;
    }
    if y.is_infinite() {
        return x;
    }
    let (ax, ay) = (x.abs(), y.abs());
    let m = ax % ay;
    let c = ay - m;
    let r = if m < c {
        m
    } else if m > c {
        -c
    } else {
        m - 2.0 * ((0.5 * (ax - m)) % ay)
    };
    1f64.copysign(x) * r
}

/// A float converted to the integer type `e` as NumPy converts it on
/// x86-64 (truncated toward zero): an int64 directly, a uint32 through one
/// (wrapped); an int32, and the narrower types through one (wrapped to
/// their width); a uint64 through an int64, a value from 2**63 shifted
/// down by 2**63 first. A NaN,
/// an infinity or a value those steps cannot hold becomes the minimum
/// integer of the step (what the processor's conversion gives), so NumPy's
/// answer, not C's undefined behaviour. The C prelude's `parpy_to_<type>`
/// is this rule in C.
pub fn float_to_int(f: f64, e: ElemTy) -> i64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    let i64_of = |f: f64| {
        if (-TWO63..TWO63).contains(&f) {
            f as i64
        } else {
            i64::MIN
        }
    };
    let i32_of = |f: f64| {
        if f > -2_147_483_649.0 && f < 2_147_483_648.0 {
            f as i32 as i64
        } else {
            i32::MIN as i64
        }
    };
    match e {
        ElemTy::I64 => i64_of(f),
        ElemTy::U32 => wrap_int(i64_of(f), e),
        ElemTy::U64 if f >= TWO63 => (i64_of(f - TWO63) as u64 ^ (1u64 << 63)) as i64,
        ElemTy::U64 => i64_of(f),
        _ => wrap_int(i32_of(f), e),
    }
}

/// Rounds a float to the precision of `e` (to nearest, ties to even).
pub fn round_float(v: f64, e: ElemTy) -> f64 {
    match e {
        ElemTy::F32 => v as f32 as f64,
        ElemTy::F16 => f16_value(f16_bits(v)),
        _ => v,
    }
}

/// The value converted to `e`. [`Mode::Python`] converts as `bool()`,
/// `int()` and `float()` do (a float that is not finite or does not fit
/// in 64 bits is an error; the width of `e` is the caller's business).
/// [`Mode::Target`] converts as a C cast does: wrapped to the width of
/// `e`, rounded to its precision.
pub fn convert(v: ScalarValue, e: ElemTy, mode: Mode) -> R {
    use ScalarValue::*;
    Ok(if e == ElemTy::Bool {
        Bool(truthy(v))
    } else if e.is_float() {
        let f = as_f64(v);
        Float(if mode == Mode::Target {
            round_float(f, e)
        } else {
            f
        })
    } else {
        match (v, mode) {
            (Float(f), Mode::Python) if !(f.is_finite() && f.abs() < 9.0e18) => {
                return Err(EvalError::Overflow)
            }
            (Float(f), Mode::Python) => Int(f.trunc() as i64),
            (v, Mode::Python) => Int(as_i64(v)),
            (Float(f), Mode::Target) => Int(float_to_int(f, e)),
            (v, Mode::Target) => Int(wrap_int(as_i64(v), e)),
        }
    })
}

#[cfg(test)]
mod tests;
