//! The types of a call's arguments as the binding observed them and of the
//! entry point's parameters as the backend emitted them.

use crate::types::{ElemTy, ScalarValue};

/// The type of one call argument, as the binding observed it.
#[derive(Clone, PartialEq, Debug)]
pub enum ArgType {
    /// A contiguous array (NumPy or other) with its element type and shape.
    Array { elem: ElemTy, shape: Vec<i64> },
    /// A scalar: `bool` -> Bool, `int` -> I64, `float` -> F64 (the options
    /// may narrow these), a NumPy scalar -> its dtype. `value` is set when
    /// scalars are specialized. `weak`: a Python `bool`/`int`/`float`, whose
    /// type yields to the other operand's (NEP 50); NumPy scalars are strong
    /// (`np.int8(5) * 100` is int8).
    Scalar {
        elem: ElemTy,
        value: Option<ScalarValue>,
        weak: bool,
    },
}

/// The description of one entry-point parameter, for the runtime and for
/// `compile_string`'s argument checks.
#[derive(Clone, PartialEq, Debug)]
pub struct ParamInfo {
    pub name: String,
    pub ty: ArgType,
    /// The function may write this array (NumPy arrays are copied back from
    /// a device only when this is set).
    pub written: bool,
}
