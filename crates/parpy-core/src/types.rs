//! Element types shared by every layer (front end, IR, backends, runtime).

use std::fmt;

/// The scalar element types parpy knows. Arrays hold elements of one of these.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum ElemTy {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
}

impl ElemTy {
    pub const ALL: [ElemTy; 12] = [
        ElemTy::Bool,
        ElemTy::I8,
        ElemTy::I16,
        ElemTy::I32,
        ElemTy::I64,
        ElemTy::U8,
        ElemTy::U16,
        ElemTy::U32,
        ElemTy::U64,
        ElemTy::F16,
        ElemTy::F32,
        ElemTy::F64,
    ];

    pub fn is_float(self) -> bool {
        matches!(self, ElemTy::F16 | ElemTy::F32 | ElemTy::F64)
    }
    pub fn is_int(self) -> bool {
        !self.is_float() && self != ElemTy::Bool
    }
    pub fn is_signed_int(self) -> bool {
        matches!(self, ElemTy::I8 | ElemTy::I16 | ElemTy::I32 | ElemTy::I64)
    }
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, ElemTy::U8 | ElemTy::U16 | ElemTy::U32 | ElemTy::U64)
    }
    /// The smallest and largest value of an integer type (bool: 0 and 1;
    /// floats: `None`).
    pub fn int_bounds(self) -> Option<(i128, i128)> {
        Some(match self {
            ElemTy::Bool => (0, 1),
            ElemTy::U8 | ElemTy::U16 | ElemTy::U32 | ElemTy::U64 => {
                (0, (1i128 << (8 * self.size())) - 1)
            }
            ElemTy::I8 | ElemTy::I16 | ElemTy::I32 | ElemTy::I64 => {
                let h = 1i128 << (8 * self.size() - 1);
                (-h, h - 1)
            }
            ElemTy::F16 | ElemTy::F32 | ElemTy::F64 => return None,
        })
    }
    /// Size in bytes of one element.
    pub fn size(self) -> usize {
        match self {
            ElemTy::Bool | ElemTy::I8 | ElemTy::U8 => 1,
            ElemTy::I16 | ElemTy::U16 | ElemTy::F16 => 2,
            ElemTy::I32 | ElemTy::U32 | ElemTy::F32 => 4,
            ElemTy::I64 | ElemTy::U64 | ElemTy::F64 => 8,
        }
    }
    /// The NumPy-style name (`float32`, `int64`, `bool`).
    pub fn numpy_name(self) -> &'static str {
        match self {
            ElemTy::Bool => "bool",
            ElemTy::I8 => "int8",
            ElemTy::I16 => "int16",
            ElemTy::I32 => "int32",
            ElemTy::I64 => "int64",
            ElemTy::U8 => "uint8",
            ElemTy::U16 => "uint16",
            ElemTy::U32 => "uint32",
            ElemTy::U64 => "uint64",
            ElemTy::F16 => "float16",
            ElemTy::F32 => "float32",
            ElemTy::F64 => "float64",
        }
    }
    pub fn from_numpy_name(name: &str) -> Option<ElemTy> {
        ElemTy::ALL.into_iter().find(|t| t.numpy_name() == name)
    }
    /// The short name used in the IR printer (`f32`, `i64`, `bool`).
    pub fn short_name(self) -> &'static str {
        match self {
            ElemTy::Bool => "bool",
            ElemTy::I8 => "i8",
            ElemTy::I16 => "i16",
            ElemTy::I32 => "i32",
            ElemTy::I64 => "i64",
            ElemTy::U8 => "u8",
            ElemTy::U16 => "u16",
            ElemTy::U32 => "u32",
            ElemTy::U64 => "u64",
            ElemTy::F16 => "f16",
            ElemTy::F32 => "f32",
            ElemTy::F64 => "f64",
        }
    }
}

impl fmt::Display for ElemTy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

/// A compile-time scalar value (a specialized argument or a module constant).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum ScalarValue {
    Bool(bool),
    Int(i64),
    Float(f64),
}
