//! The operators shared by the AST and the IR: unary and binary operators,
//! reductions and the math functions of `parpy.math`.

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UnOp {
    Neg,
    /// Logical `not`.
    Not,
    /// Bitwise `~`.
    BitNot,
    /// Python's unary `+`: in the AST only, sema lowers it to its operand
    /// (`Lowerer::unary`), so the IR has none (its value is its operand's).
    Pos,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// True division; operands and result are floats.
    Div,
    /// Python floor division (rounds toward negative infinity).
    FloorDiv,
    /// Python modulo (result has the sign of the divisor).
    Mod,
    Pow,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Short-circuit logical and/or on bools.
    And,
    Or,
    /// NumPy's `maximum` / `minimum` (and the `max` / `min` reductions):
    /// `lhs` wins ties, a NaN operand gives NaN.
    Max,
    Min,
    /// NumPy's `fmax` / `fmin`: a NaN operand loses to a number.
    FMax,
    FMin,
    /// `a @ b` of two 1-D vectors (the AST only: sema lowers it as
    /// `np.dot(a, b)`).
    MatMul,
}

/// Which operand a float max/min gives when NaNs are involved (integers:
/// every rule is the same).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum NanRule {
    /// `np.maximum` (and builtin `max`, parpy's `max` reduction): NaN wins.
    /// (Python's own `max(a, b)` keeps `a` unless `b > a`: it depends on
    /// the operands' order. A reduction loop folds `t = max(t, e)` as
    /// Python does and refuses `t = max(e, t)` of floats:
    /// `passes::lower_reductions`.)
    NumPy,
    /// `np.fmax`: NaN loses.
    Ignore,
}

impl BinOp {
    /// For the max / min operators: whether it is a max, and its NaN rule.
    pub fn max_min(self) -> Option<(bool, NanRule)> {
        Some(match self {
            BinOp::Max => (true, NanRule::NumPy),
            BinOp::Min => (false, NanRule::NumPy),
            BinOp::FMax => (true, NanRule::Ignore),
            BinOp::FMin => (false, NanRule::Ignore),
            _ => return None,
        })
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Max => "max",
            BinOp::Min => "min",
            BinOp::FMax => "fmax",
            BinOp::FMin => "fmin",
            BinOp::MatMul => "@",
        }
    }
}

/// Math functions of `parpy.math` (and `abs`). Each follows the NumPy
/// function of the same name (`Round` is `np.round`: half to even).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MathFn {
    Sqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Tan,
    Tanh,
    Abs,
    Atan2,
    Floor,
    Ceil,
    Pow,
    Erf,
    Erfc,
    Expm1,
    Log1p,
    Hypot,
    Copysign,
    Fmod,
    Cbrt,
    Round,
    IsNan,
    IsInf,
    IsFinite,
    Log10,
    Log2,
    Exp2,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Asinh,
    Acosh,
    Atanh,
    /// Toward zero (`np.trunc`; an integer stays as it is).
    Trunc,
    /// `np.sign`: -1, 0 or 1 in the argument's type (a NaN stays NaN, a
    /// zero of either sign is +0).
    Sign,
    /// `np.gcd` / `np.lcm` of integers (`math.gcd` / `math.lcm` of two):
    /// of the magnitudes, in the integers' type (NumPy's values where the
    /// result wraps: `np.gcd(int8(-128), 0)` is -128).
    Gcd,
    Lcm,
    /// `np.ldexp(x, e)`: `x * 2**e` exactly (the exponent a C `int`,
    /// clamped where every result is already 0 or inf).
    Ldexp,
    /// `np.nextafter(x, y)`: the next float after `x` toward `y`.
    NextAfter,
    /// `math.remainder(x, y)`: IEEE 754's remainder (`x - n*y`, `n` the
    /// nearest integer to `x / y`, ties to even).
    Remainder,
}

impl MathFn {
    pub const ALL: [MathFn; 42] = {
        use MathFn::*;
        [
            Sqrt, Exp, Log, Sin, Cos, Tan, Tanh, Abs, Atan2, Floor, Ceil, Pow, Erf, Erfc, Expm1,
            Log1p, Hypot, Copysign, Fmod, Cbrt, Round, IsNan, IsInf, IsFinite, Log10, Log2, Exp2,
            Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Trunc, Sign, Gcd, Lcm, Ldexp,
            NextAfter, Remainder,
        ]
    };
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Sqrt => "sqrt",
            MathFn::Exp => "exp",
            MathFn::Log => "log",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Tanh => "tanh",
            MathFn::Abs => "abs",
            MathFn::Atan2 => "atan2",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Pow => "pow",
            MathFn::Erf => "erf",
            MathFn::Erfc => "erfc",
            MathFn::Expm1 => "expm1",
            MathFn::Log1p => "log1p",
            MathFn::Hypot => "hypot",
            MathFn::Copysign => "copysign",
            MathFn::Fmod => "fmod",
            MathFn::Cbrt => "cbrt",
            MathFn::Round => "round",
            MathFn::IsNan => "isnan",
            MathFn::IsInf => "isinf",
            MathFn::IsFinite => "isfinite",
            MathFn::Log10 => "log10",
            MathFn::Log2 => "log2",
            MathFn::Exp2 => "exp2",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Sinh => "sinh",
            MathFn::Cosh => "cosh",
            MathFn::Asinh => "asinh",
            MathFn::Acosh => "acosh",
            MathFn::Atanh => "atanh",
            MathFn::Trunc => "trunc",
            MathFn::Sign => "sign",
            MathFn::Gcd => "gcd",
            MathFn::Lcm => "lcm",
            MathFn::Ldexp => "ldexp",
            MathFn::NextAfter => "nextafter",
            MathFn::Remainder => "remainder",
        }
    }
    pub fn from_name(name: &str) -> Option<MathFn> {
        MathFn::ALL.into_iter().find(|f| f.name() == name)
    }
    pub fn arity(self) -> usize {
        match self {
            MathFn::Atan2
            | MathFn::Pow
            | MathFn::Hypot
            | MathFn::Copysign
            | MathFn::Fmod
            | MathFn::Gcd
            | MathFn::Lcm
            | MathFn::Ldexp
            | MathFn::NextAfter
            | MathFn::Remainder => 2,
            _ => 1,
        }
    }
    /// `isnan`, `isinf`, `isfinite`: a bool result (the argument keeps its
    /// float type).
    pub fn is_predicate(self) -> bool {
        matches!(self, MathFn::IsNan | MathFn::IsInf | MathFn::IsFinite)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
    pub fn from_name(name: &str) -> Option<ReduceOp> {
        [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min]
            .into_iter()
            .find(|op| op.name() == name)
    }
    /// The binary operator that adds one value to the result.
    pub fn combine(self) -> BinOp {
        match self {
            ReduceOp::Sum => BinOp::Add,
            ReduceOp::Prod => BinOp::Mul,
            ReduceOp::Max => BinOp::Max,
            ReduceOp::Min => BinOp::Min,
        }
    }
}

/// The operation of an atomic update (`ir::ExprKind::Atomic`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AtomicOp {
    Add,
    Max,
    Min,
}

impl AtomicOp {
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "add",
            AtomicOp::Max => "max",
            AtomicOp::Min => "min",
        }
    }
}

/// The most values the message of an assertion or a `raise` may name (an
/// f-string's fields): the bounds record (`ir::Bounds`) holds
/// `[site + 1, index]` and then these.
pub const MAX_NOTED: usize = 8;

/// `text` as literal text of a message template: braces doubled for
/// Python's `str.format`, `%` doubled for its `%` operator (`printf`).
pub fn template_text(text: &str, printf: bool) -> String {
    if printf {
        text.replace('%', "%%")
    } else {
        text.replace('{', "{{").replace('}', "}}")
    }
}

/// The builtin exceptions a jit function may raise (`raise E("message")`;
/// `assert` raises `AssertionError`): the run time raises the class of
/// this name.
pub const RAISABLE: [&str; 14] = [
    "ArithmeticError",
    "AssertionError",
    "Exception",
    "FloatingPointError",
    "IndexError",
    "KeyError",
    "LookupError",
    "NotImplementedError",
    "OverflowError",
    "RuntimeError",
    "TypeError",
    "UnboundLocalError",
    "ValueError",
    "ZeroDivisionError",
];
