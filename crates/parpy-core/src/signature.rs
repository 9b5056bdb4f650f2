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
    /// A dict of arrays, scalars and dicts passed as one argument, its
    /// entries in the dict's order. Sema gives each leaf a parameter of its
    /// own, named by [`entry_name`]; it never reaches the IR.
    Dict(Vec<(String, ArgType)>),
    /// An entry of a dict that compiled code cannot take (a str, a list,
    /// None; `.0` names its Python type): the call goes on as Python's
    /// does while the function does not read it.
    Unusable(String),
}

impl ArgType {
    /// The arrays and scalars of this argument passed as `name`, depth
    /// first in entry order, with their names (`A['values']`); an array or
    /// a scalar is its own one leaf.
    pub fn leaves(&self, name: &str) -> Vec<(String, &ArgType)> {
        let mut out = vec![];
        self.push_leaves(name.to_string(), &mut out);
        out
    }

    fn push_leaves<'a>(&'a self, name: String, out: &mut Vec<(String, &'a ArgType)>) {
        match self {
            ArgType::Dict(entries) => {
                for (k, v) in entries {
                    v.push_leaves(entry_name(&name, k), out);
                }
            }
            ArgType::Unusable(_) => {}
            leaf => out.push((name, leaf)),
        }
    }

    /// This argument with `f` applied to each leaf (the dict structure kept).
    pub fn map_leaves(&self, f: &impl Fn(&ArgType) -> ArgType) -> ArgType {
        match self {
            ArgType::Dict(entries) => ArgType::Dict(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.map_leaves(f)))
                    .collect(),
            ),
            leaf => f(leaf),
        }
    }
}

/// The name of entry `key` of the dict named `base`: `A['values']`, nested
/// `A['m']['rows']` (no Python identifier spells it, so it cannot collide
/// with a name of the function). Characters that would break the one-line
/// `parpy-param` header (spaces, quotes, backslashes, control characters)
/// or its comment (a `?` after a `?`: a trigraph such as `??/`; a `/`
/// after a `*`) are escaped.
pub fn entry_name(base: &str, key: &str) -> String {
    let mut k = String::with_capacity(key.len());
    let mut prev = '\0';
    for c in key.chars() {
        if c.is_whitespace()
            || c.is_control()
            || c == '\\'
            || c == '\''
            || (c == '?' && prev == '?')
            || (c == '/' && prev == '*')
        {
            k.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            k.push(c);
        }
        prev = c;
    }
    format!("{base}['{k}']")
}

/// The inverse of [`entry_name`]: `A['m']['rows']` is `("A", ["m",
/// "rows"])`; `None` for a name that is no dict entry's (`x`) or that
/// `entry_name` does not write.
pub fn split_entry_name(name: &str) -> Option<(&str, Vec<String>)> {
    let (base, mut rest) = name.split_at(name.find("['")?);
    let mut keys = vec![];
    while !rest.is_empty() {
        let r = rest.strip_prefix("['")?;
        // (a quote in a key is escaped: the first one ends it)
        let end = r.find('\'')?;
        if !r[end..].starts_with("']") {
            return None;
        }
        let mut key = String::new();
        let mut chars = r[..end].chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                key.push(c);
                continue;
            }
            // `\u{hex}`
            let esc: String = chars.by_ref().take_while(|&c| c != '}').collect();
            let hex = esc.strip_prefix("u{")?;
            key.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
        }
        keys.push(key);
        rest = &r[end + 2..];
    }
    (!base.is_empty()).then_some((base, keys))
}

/// Where an external function runs (ParPy's `parpy.Target`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ExtTarget {
    /// Called from host code only.
    Host,
    /// Called from parallel code (and, on Cpu, anywhere).
    Device,
}

/// One dimension of an external's array parameter: a number, or a shape
/// symbol (by the binding's id) that must be the same wherever it appears.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ExtDim {
    Fixed(i64),
    Symbol(u64),
}

/// One parameter of an external function, as declared in Python.
#[derive(Clone, PartialEq, Debug)]
pub enum ExtParam {
    Scalar(ElemTy),
    /// Passed as a pointer to its first element.
    Array {
        elem: ElemTy,
        dims: Vec<ExtDim>,
    },
}

/// An external function (`parpy.external`): its name in the target
/// language, the header declaring it and its declared Python signature.
#[derive(Clone, PartialEq, Debug)]
pub struct ExtDecl {
    /// The function's name in C / CUDA / Metal (`powf`, `metal::sqrt`).
    pub name: String,
    pub target: ExtTarget,
    /// `<name.h>` or `"name.h"` (a bare name is quoted).
    pub header: Option<String>,
    pub params: Vec<(String, ExtParam)>,
    /// `None`: returns nothing.
    pub ret: Option<ElemTy>,
    /// `parallelize=parpy.threads(n)`: the threads that call it together.
    pub threads: Option<i64>,
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
