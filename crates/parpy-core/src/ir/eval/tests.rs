//! `ir::eval` against CPython: `cpython_table.txt` (written by
//! `cpython_table.py`) holds what CPython computes for every operator on a
//! grid of values; Python mode must agree on every line, values and
//! errors alike.

use super::*;

fn value(t: &str) -> ScalarValue {
    let (kind, rest) = t.split_at(1);
    match kind {
        "b" => ScalarValue::Bool(rest == "1"),
        "i" => ScalarValue::Int(rest.parse().unwrap()),
        "f" => ScalarValue::Float(rest.parse().unwrap()),
        _ => panic!("bad value {t}"),
    }
}

fn binop(s: &str) -> BinOp {
    use BinOp::*;
    [
        Add, Sub, Mul, Div, FloorDiv, Mod, Pow, BitAnd, BitOr, BitXor, Shl, Shr, Eq, Ne, Lt, Le,
        Gt, Ge, Max, Min,
    ]
    .into_iter()
    .find(|o| o.symbol() == s)
    .unwrap_or_else(|| panic!("bad operator {s}"))
}

fn unop(s: &str) -> UnOp {
    match s {
        "-" => UnOp::Neg,
        "~" => UnOp::BitNot,
        "not" => UnOp::Not,
        _ => panic!("bad operator {s}"),
    }
}

/// The same value: floats bit for bit (so the sign of a zero counts), any
/// NaN equal to any NaN.
fn same(a: ScalarValue, b: ScalarValue) -> bool {
    match (a, b) {
        (ScalarValue::Float(x), ScalarValue::Float(y)) => {
            (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits()
        }
        _ => a == b,
    }
}

fn error_kind(e: EvalError) -> &'static str {
    match e {
        EvalError::DivisionByZero => "ZeroDivision",
        EvalError::Overflow => "Overflow",
        EvalError::NegativePower => "NegativePower",
        EvalError::NegativeShift => "NegativeShift",
        EvalError::Unsupported(_) => "Unsupported",
    }
}

#[test]
fn python_mode_agrees_with_cpython() {
    let table = include_str!("cpython_table.txt");
    let mut checked = 0;
    let mut wrong = vec![];
    for line in table.lines() {
        let (lhs, want) = line.split_once(" = ").expect("`=` in every line");
        let parts: Vec<&str> = lhs.split(' ').collect();
        let got = match parts[..] {
            // (sema lowers Python's `max(a, b)` as the IR's `Max(b, a)`: the
            // IR's gives the second operand of a tie, Python's the first)
            ["max" | "min", a, b] => binary(binop(parts[0]), value(b), value(a), Mode::Python),
            [op, a, b] => binary(binop(op), value(a), value(b), Mode::Python),
            [op, a] => unary(unop(op), value(a), Mode::Python),
            _ => panic!("bad line {line}"),
        };
        // parpy's `max` and `min` are NumPy's `maximum` and `minimum`: a NaN
        // operand gives NaN, where CPython's builtins return the other
        // operand when the NaN comes second
        let numpy_nan = matches!(parts[..], ["max" | "min", a, b] if a == "fnan" || b == "fnan");
        let want = if numpy_nan { "fnan" } else { want };
        let ok = match (want.strip_prefix("E:"), got) {
            (Some(kind), Err(e)) => kind == error_kind(e),
            (None, Ok(v)) => same(v, value(want)),
            _ => false,
        };
        if !ok {
            wrong.push(format!("{lhs}: CPython {want}, eval {got:?}"));
        }
        checked += 1;
    }
    assert!(checked > 5_000, "only {checked} lines");
    assert!(
        wrong.is_empty(),
        "{} of {checked} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn float_floor_division_and_modulo_are_cpythons_in_both_modes() {
    let f = ScalarValue::Float;
    for mode in [Mode::Python, Mode::Target] {
        // floor(1.0 / 0.1) is 10; Python rounds the exact quotient
        assert_eq!(binary(BinOp::FloorDiv, f(1.0), f(0.1), mode), Ok(f(9.0)));
        let r = binary(BinOp::Mod, f(-0.0), f(1.0), mode).unwrap();
        assert!(same(r, f(0.0)), "{r:?}");
        let r = binary(BinOp::Mod, f(1.0), f(-0.5), mode).unwrap();
        assert!(same(r, f(-0.0)), "{r:?}");
    }
}

#[test]
fn target_mode_wraps_where_python_mode_refuses() {
    let i = ScalarValue::Int;
    let t = Mode::Target;
    assert_eq!(binary(BinOp::Add, i(i64::MAX), i(1), t), Ok(i(i64::MIN)));
    assert_eq!(
        binary(BinOp::FloorDiv, i(i64::MIN), i(-1), t),
        Ok(i(i64::MIN))
    );
    assert_eq!(binary(BinOp::Mod, i(i64::MIN), i(-1), t), Ok(i(0)));
    assert_eq!(unary(UnOp::Neg, i(i64::MIN), t), Ok(i(i64::MIN)));
    // NumPy's integer division by zero, shifts beyond the width
    assert_eq!(binary(BinOp::Mod, i(5), i(0), t), Ok(i(0)));
    assert_eq!(binary(BinOp::FloorDiv, i(5), i(0), t), Ok(i(0)));
    assert_eq!(binary(BinOp::Shl, i(3), i(64), t), Ok(i(0)));
    assert_eq!(binary(BinOp::Shr, i(-3), i(70), t), Ok(i(-1)));
    let f = ScalarValue::Float;
    assert_eq!(
        binary(BinOp::FloorDiv, f(-1.0), f(0.0), t),
        Ok(f(f64::NEG_INFINITY))
    );
    // floats follow IEEE
    let r = binary(
        BinOp::Div,
        ScalarValue::Float(1.0),
        ScalarValue::Float(0.0),
        t,
    );
    assert_eq!(r, Ok(ScalarValue::Float(f64::INFINITY)));
    // NumPy's bools: `+` is `or`, `~` is `not`
    let b = ScalarValue::Bool;
    assert_eq!(binary(BinOp::Add, b(true), b(true), t), Ok(b(true)));
    assert_eq!(unary(UnOp::BitNot, b(true), t), Ok(b(false)));
    assert_eq!(wrap_int(300, ElemTy::U8), 44);
    assert_eq!(convert(ScalarValue::Float(-1.5), ElemTy::I8, t), Ok(i(-1)));
    assert_eq!(round_float(0.1, ElemTy::F16), 0.0999755859375);
}

#[test]
fn fmax_and_fmin_let_a_nan_lose_and_maximum_lets_it_win() {
    use ScalarValue::Float;
    let nan = f64::NAN;
    let f = |op, x, y| match binary(op, Float(x), Float(y), Mode::Target).unwrap() {
        Float(r) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(f(BinOp::FMax, nan, 1.0), 1.0);
    assert_eq!(f(BinOp::FMax, 1.0, nan), 1.0);
    assert_eq!(f(BinOp::FMin, nan, 1.0), 1.0);
    assert!(f(BinOp::FMax, nan, nan).is_nan());
    assert!(f(BinOp::Max, 1.0, nan).is_nan());
    assert!(f(BinOp::Min, nan, 1.0).is_nan());
    // ties keep the first operand of `fmax`, the second of `maximum`, as
    // NumPy's float64 loops (the sign of a zero shows it)
    assert!(f(BinOp::FMax, -0.0, 0.0).is_sign_negative());
    assert!(f(BinOp::Max, 0.0, -0.0).is_sign_negative());
    assert!(f(BinOp::Min, -0.0, 0.0).is_sign_positive());
}

#[test]
fn python_numbers_agree_with_cpython_and_stay_exact_past_64_bits() {
    let table = include_str!("cpython_table.txt");
    let number = |t: &str| match value(t) {
        ScalarValue::Int(i) => Some(PyNumber::Int(i as i128)),
        ScalarValue::Float(f) => Some(PyNumber::Float(f)),
        ScalarValue::Bool(_) => None,
    };
    let mut checked = 0;
    for line in table.lines() {
        let (lhs, want) = line.split_once(" = ").unwrap();
        let parts: Vec<&str> = lhs.split(' ').collect();
        let [op, a, b] = parts[..] else { continue };
        let op = binop(op);
        let (Some(a), Some(b)) = (number(a), number(b)) else {
            continue;
        };
        let got = python_binary(op, a, b);
        let ok = match (want.strip_prefix("E:"), got) {
            (_, Err(EvalError::Unsupported(_))) => continue,
            // the table's overflow is of 64 bits; these ints are exact
            (Some("Overflow"), Ok(PyNumber::Int(v))) => i64::try_from(v).is_err(),
            (Some(kind), Err(e)) => kind == error_kind(e),
            (None, Ok(PyNumber::Int(v))) => value(want) == ScalarValue::Int(v as i64),
            (None, Ok(PyNumber::Float(f))) => same(ScalarValue::Float(f), value(want)),
            _ => false,
        };
        assert!(ok, "{lhs}: CPython {want}, python_binary {got:?}");
        checked += 1;
    }
    assert!(checked > 3_000, "only {checked} lines");
    let i = PyNumber::Int;
    let pow = |a, b| python_binary(BinOp::Pow, i(a), i(b)).unwrap();
    let big = pow(2, 100);
    assert_eq!(python_binary(BinOp::FloorDiv, big, pow(2, 98)), Ok(i(4)));
    assert_eq!(
        python_binary(BinOp::Mod, big, i(-7)),
        Ok(i((1i128 << 100) % 7 - 7))
    );
    assert_eq!(python_binary(BinOp::Shr, i(-(1 << 65)), i(60)), Ok(i(-32)));
    assert_eq!(
        python_binary(BinOp::Mul, big, PyNumber::Float(1.0)),
        Ok(PyNumber::Float(2f64.powi(100)))
    );
    assert_eq!(
        python_binary(BinOp::Pow, i(2), i(127)),
        Err(EvalError::Overflow)
    );
    assert_eq!(
        python_binary(BinOp::Shl, i(1), i(127)),
        Err(EvalError::Overflow)
    );
    assert!(matches!(
        python_binary(BinOp::Div, big, i(3)),
        Err(EvalError::Unsupported(_))
    ));
    assert_eq!(python_unary(UnOp::Neg, big), Ok(i(-(1 << 100))));
}

#[test]
fn gcd_lcm_follow_numpy_where_they_wrap() {
    // np.gcd(int8(-128), 0), np.gcd(int8(-128), 6), np.lcm(int8(50), 3)
    assert_eq!(gcd_lcm(false, -128, 0, ElemTy::I8), -128);
    assert_eq!(gcd_lcm(false, -128, 6, ElemTy::I8), 2);
    assert_eq!(gcd_lcm(true, 50, 3, ElemTy::I8), -106);
    assert_eq!(gcd_lcm(true, i64::MIN, 1, ElemTy::I64), i64::MIN);
    assert_eq!(gcd_lcm(true, 0, 0, ElemTy::I64), 0);
    assert_eq!(gcd_lcm(true, -4, 6, ElemTy::I64), 12);
    // uint64 values above 2**63 are magnitudes as they are
    assert_eq!(gcd_lcm(false, -2, 6, ElemTy::U64), 2);
}

#[test]
fn next_after_steps_in_the_type() {
    assert_eq!(next_after(1.0, 2.0, ElemTy::F64), 1.0 + f64::EPSILON);
    assert_eq!(
        next_after(1.0, 2.0, ElemTy::F32),
        (1.0 + f32::EPSILON) as f64
    );
    assert_eq!(next_after(0.0, -1.0, ElemTy::F64), -f64::from_bits(1));
    assert_eq!(next_after(-0.0, 1.0, ElemTy::F32), f32::from_bits(1) as f64);
    assert_eq!(
        next_after(f64::MAX, f64::INFINITY, ElemTy::F64),
        f64::INFINITY
    );
    assert!(next_after(f64::NAN, 1.0, ElemTy::F64).is_nan());
}

#[test]
fn ieee_remainder_and_ldexp_are_cs() {
    // Python: math.remainder(5, 3) == -1.0, (7.5, 2) == -0.5, (-2.5, 1.0) == -0.5 (tie to even)
    assert_eq!(ieee_remainder(5.0, 3.0), -1.0);
    assert_eq!(ieee_remainder(7.5, 2.0), -0.5);
    assert_eq!(ieee_remainder(-2.5, 1.0), -0.5);
    assert_eq!(ieee_remainder(3.5, f64::INFINITY), 3.5);
    assert!(ieee_remainder(f64::INFINITY, 1.0).is_nan() && ieee_remainder(1.0, 0.0).is_nan());
    assert_eq!(ieee_remainder(-0.0, 1.0).to_bits(), (-0.0f64).to_bits());
    assert_eq!(ldexp(1.5, 3), 12.0);
    assert_eq!(ldexp(1.0, -1074), f64::from_bits(1));
    assert_eq!(ldexp(1.0, 2000), f64::INFINITY);
    assert_eq!(ldexp(3.0, i64::MIN), 0.0);
}
