//! Generated names: the C-family reserved words and the [`Namer`] that
//! keeps Python names where it can and makes them valid and unique.

use std::collections::BTreeSet;

/// C-family keywords and library names no generated name may take.
pub const COMMON_RESERVED: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "true",
    "false",
    "NULL",
    "main",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "size_t",
    "INFINITY",
    "NAN",
    "sqrt",
    "sqrtf",
    "exp",
    "expf",
    "log",
    "logf",
    "sin",
    "sinf",
    "cos",
    "cosf",
    "tan",
    "tanf",
    "tanh",
    "tanhf",
    "fabs",
    "fabsf",
    "atan2",
    "atan2f",
    "floor",
    "floorf",
    "ceil",
    "ceilf",
    "pow",
    "powf",
    "fmod",
    "fmodf",
    "copysign",
    "copysignf",
    "abs",
    "llabs",
    "args",
    "class",
    "namespace",
    "template",
    "new",
    "delete",
    "this",
    "private",
    "public",
    "protected",
    "virtual",
    "operator",
    "using",
    "device",
    "kernel",
    "thread",
    "threadgroup",
    "constant",
    "half",
    "uint",
    "vec",
    "min",
    "max",
    "signbit",
    "isnan",
];

/// Makes names valid and unique: Python names are kept where possible,
/// reserved words are avoided, duplicates get `_1`, `_2`. Stable: the same
/// sequence of requests gives the same names.
#[derive(Clone, Default)]
pub struct Namer {
    taken: BTreeSet<String>,
}

impl Namer {
    pub fn new(reserved: &[&str]) -> Namer {
        Namer {
            taken: reserved.iter().map(|s| s.to_string()).collect(),
        }
    }
    pub fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_string());
    }
    pub fn fresh(&mut self, wanted: &str) -> String {
        let mut base: String = wanted
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() {
            base = "v".into();
        }
        if base.starts_with(|c: char| c.is_ascii_digit()) || base.starts_with("parpy_") {
            base = format!("v_{base}");
        }
        // Leading `__` (and `_X`) are reserved in C.
        if base.starts_with("__")
            || (base.starts_with('_') && base[1..].starts_with(|c: char| c.is_ascii_uppercase()))
        {
            base = format!("v{base}");
        }
        let mut name = base.clone();
        let mut n = 1;
        while self.taken.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}
