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
    /// The largest finite value of a float type (`np.finfo(t).max`).
    pub fn max_finite(self) -> f64 {
        match self {
            ElemTy::F16 => 65504.0,
            ElemTy::F32 => f32::MAX as f64,
            _ => f64::MAX,
        }
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
    /// The smallest and largest value of an integer type (`None` otherwise).
    pub fn int_range(self) -> Option<(i128, i128)> {
        if !self.is_int() {
            return None;
        }
        let bits = self.size() as u32 * 8;
        Some(if self.is_signed_int() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        })
    }

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

/// The IEEE binary16 bits nearest to `v` (ties to even; overflow to
/// infinity, NaN stays NaN): what NumPy's `float16(v)` holds.
pub fn f16_bits(v: f64) -> u16 {
    let b = v.to_bits();
    let sign = ((b >> 48) & 0x8000) as u16;
    let exp = ((b >> 52) & 0x7ff) as i32;
    let man = b & ((1u64 << 52) - 1);
    if exp == 0x7ff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    // the exponent of the result, biased
    let e = exp - 1023 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    // the result's bits before rounding, and the bits shifted out
    let (half, shift, m) = if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | (1u64 << 52);
        let shift = (43 - e) as u32;
        (m >> shift, shift, m)
    } else {
        (((e as u64) << 10) | (man >> 42), 42, man)
    };
    let rem = m & ((1u64 << shift) - 1);
    let mid = 1u64 << (shift - 1);
    // a carry out of the mantissa raises the exponent (up to infinity)
    let r = if rem > mid || (rem == mid && half & 1 == 1) {
        half + 1
    } else {
        half
    };
    sign | r as u16
}

/// The value of IEEE binary16 bits (exact in f64).
pub fn f16_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f64;
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        31 if frac == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        e => sign * (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

/// A compile-time scalar value (a specialized argument or a module constant).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum ScalarValue {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl ScalarValue {
    /// The value as the `// parpy-param: N i64 = 8` header line writes it:
    /// `True`/`False`, an integer, or a float that reads back to the same
    /// bits (`0.1`, `1e300`, `inf`, `NaN`).
    pub fn header_text(self) -> String {
        match self {
            ScalarValue::Bool(b) => if b { "True" } else { "False" }.to_string(),
            ScalarValue::Int(i) => i.to_string(),
            ScalarValue::Float(f) => format!("{f:?}"),
        }
    }

    /// Reads what `header_text` writes (also `1`/`0`/`true`/`false` for a
    /// bool) as a value of an element type `elem`.
    pub fn from_header_text(text: &str, elem: ElemTy) -> Option<ScalarValue> {
        let t = text.trim();
        if elem == ElemTy::Bool {
            return match t {
                "True" | "true" | "1" => Some(ScalarValue::Bool(true)),
                "False" | "false" | "0" => Some(ScalarValue::Bool(false)),
                _ => None,
            };
        }
        if elem.is_float() {
            return t.parse::<f64>().ok().map(ScalarValue::Float);
        }
        t.parse::<i64>().ok().map(ScalarValue::Int)
    }

    /// The same value: floats compare by their bits, so NaN equals NaN and
    /// 0.0 differs from -0.0 (the code may have used either).
    pub fn same_as(self, other: ScalarValue) -> bool {
        match (self, other) {
            (ScalarValue::Float(a), ScalarValue::Float(b)) => {
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
            }
            (a, b) => a == b,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_conversions_round_trip_and_round_to_nearest_even() {
        for h in 0..=u16::MAX {
            let v = f16_value(h);
            if v.is_nan() {
                assert_eq!(f16_bits(v) & 0x7c00, 0x7c00, "{h:#x}");
                assert_ne!(f16_bits(v) & 0x3ff, 0, "{h:#x}");
            } else {
                assert_eq!(f16_bits(v), h, "{h:#x} = {v}");
            }
        }
        // halfway between 1 and the next float16 (1 + 2**-10): to even
        assert_eq!(f16_bits(1.0 + 2f64.powi(-11)), 0x3c00);
        assert_eq!(f16_bits(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        // just above halfway rounds up (f64 input, no double rounding)
        assert_eq!(f16_bits(1.0 + 2f64.powi(-11) + 2f64.powi(-40)), 0x3c01);
        assert_eq!(f16_bits(65520.0), 0x7c00); // rounds to infinity
        assert_eq!(f16_bits(65519.99), 0x7bff);
        assert_eq!(f16_bits(2f64.powi(-25)), 0x0000); // tie to even zero
        assert_eq!(f16_bits(-(2f64.powi(-25) * 1.5)), 0x8001);
        assert_eq!(f16_bits(0.1), 0x2e66);
    }
}
