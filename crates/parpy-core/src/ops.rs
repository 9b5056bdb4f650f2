//! The operators shared by the AST and the IR: unary and binary operators,
//! reductions and the math functions of `parpy.math`.

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UnOp {
    Neg,
    /// Logical `not`.
    Not,
    /// Bitwise `~`.
    BitNot,
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
    Max,
    Min,
}

impl BinOp {
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
        }
    }
}

/// Math functions of `parpy.math` (and `abs`).
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
}

impl MathFn {
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
        }
    }
    pub fn from_name(name: &str) -> Option<MathFn> {
        use MathFn::*;
        [
            Sqrt, Exp, Log, Sin, Cos, Tan, Tanh, Abs, Atan2, Floor, Ceil, Pow,
        ]
        .into_iter()
        .find(|f| f.name() == name)
    }
    pub fn arity(self) -> usize {
        match self {
            MathFn::Atan2 | MathFn::Pow => 2,
            _ => 1,
        }
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
}
