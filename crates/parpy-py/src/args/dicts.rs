//! Dict arguments: a dict of arrays, scalars and dicts passed as one
//! argument. A call with one is flattened to its leaves (depth first, in
//! the dict's order), each named by its path (`A['values']`, the name of
//! the entry parameter the core gives it); the leaves are then observed and
//! inspected like any other argument. The dict's structure (its keys, in
//! order) is part of the specialization key; the core gets the argument as
//! an `ArgType::Dict`. An entry compiled code cannot take (a str, a list,
//! None, ...) is no leaf: the core gets its type's name
//! (`ArgType::Unusable`, part of the key) and reports a read of it: the
//! call goes on as Python's does where the function does not read them. A
//! key that is not a string, which jit code cannot name, is a TypeError,
//! as in ParPy. An argument that is None takes the same way: no leaf, its
//! type's name in the key and for the core (`sema::none_args`).

use parpy_core::signature::entry_name;
use parpy_core::ArgType;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use super::{ArgCtx, KeyBuf, MAX_ARGS};

/// Marks a dict in the key (the non-dict arguments push 0 there).
const TAG_DICT: u64 = 10;

/// How deeply dicts may nest (a dict holding itself stops here).
const MAX_DEPTH: usize = 16;

/// The structure of one argument.
enum Node {
    Leaf,
    Dict(Vec<(String, Node)>),
    /// An entry compiled code cannot take, with its Python type's name.
    Unusable(String),
}

impl Node {
    /// How many leaves the argument of this structure has.
    fn leaves(&self) -> usize {
        match self {
            Node::Leaf => 1,
            Node::Dict(entries) => entries.iter().map(|(_, n)| n.leaves()).sum(),
            Node::Unusable(_) => 0,
        }
    }
}

/// Whether compiled code cannot take `obj` as a dict entry: Python's
/// containers and text and None (anything else is inspected as an
/// argument, with its errors).
fn unusable(obj: &Bound<'_, PyAny>) -> bool {
    use pyo3::types::{PyBytes, PyFrozenSet, PyList, PySet, PyTuple};
    obj.is_none()
        || obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyBytes>()
        || obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || obj.is_instance_of::<PySet>()
        || obj.is_instance_of::<PyFrozenSet>()
}

/// The arguments of a call with every dict replaced by its leaves.
pub struct Flat<'py> {
    /// The leaves, in order.
    pub objs: Vec<Bound<'py, PyAny>>,
    /// Their names: a parameter's name, or the path of a dict entry.
    pub names: Vec<String>,
    /// One per argument.
    shape: Vec<Node>,
}

/// Is any argument a dict or None (a call flattened by [`Flat`])?
#[inline]
pub fn any_dict<'py, B: std::ops::Deref<Target = Bound<'py, PyAny>>>(
    args: impl IntoIterator<Item = B>,
) -> bool {
    args.into_iter()
        .any(|a| a.is_none() || a.is_instance_of::<PyDict>())
}

impl<'py> Flat<'py> {
    /// Flattens `args` (the call's arguments, one per parameter of `ctx`).
    pub fn new(
        args: impl IntoIterator<Item = Bound<'py, PyAny>>,
        ctx: &ArgCtx<'_>,
    ) -> PyResult<Self> {
        let mut f = Flat {
            objs: vec![],
            names: vec![],
            shape: vec![],
        };
        for (i, a) in args.into_iter().enumerate() {
            let name = ctx.name(i);
            // (a parameter passed None: no parameter of the compiled code,
            // `sema::none_args`)
            let node = if a.is_none() {
                Node::Unusable(super::type_name(&a))
            } else {
                f.push(a, name, ctx, 0)?
            };
            f.shape.push(node);
        }
        if f.objs.len() > MAX_ARGS {
            return Err(PyTypeError::new_err(format!(
                "the arguments of `{}` hold {} arrays and scalars (counting each entry of a \
                 dict); parpy supports at most {MAX_ARGS}",
                ctx.func,
                f.objs.len()
            )));
        }
        Ok(f)
    }

    fn push(
        &mut self,
        obj: Bound<'py, PyAny>,
        name: String,
        ctx: &ArgCtx<'_>,
        depth: usize,
    ) -> PyResult<Node> {
        let Ok(d) = obj.cast::<PyDict>() else {
            self.objs.push(obj);
            self.names.push(name);
            return Ok(Node::Leaf);
        };
        if depth >= MAX_DEPTH {
            return Err(PyTypeError::new_err(format!(
                "argument `{name}` of `{}` nests dicts more than {MAX_DEPTH} deep (does a dict \
                 hold itself?)",
                ctx.func
            )));
        }
        let mut entries = vec![];
        for (k, v) in d.iter() {
            let Ok(ks) = k.cast::<PyString>() else {
                return Err(non_string_key(&k, &name, ctx));
            };
            let key = ks.to_cow()?.into_owned();
            let node = if unusable(&v) {
                Node::Unusable(super::type_name(&v))
            } else if let Some(layout) = super::device::torch_sparse_layout(&v) {
                // (no data pointer: rides along unread, as ParPy's do)
                Node::Unusable(format!("sparse torch tensor ({layout})"))
            } else {
                self.push(v, entry_name(&name, &key), ctx, depth + 1)?
            };
            entries.push((key, node));
        }
        Ok(Node::Dict(entries))
    }

    /// `mask` (bit i: parameter i) over the leaves: the bit of each
    /// parameter that is a leaf itself, at its leaf's position.
    pub fn leaf_mask(&self, mask: u64) -> u64 {
        let mut out = 0;
        let mut leaf = 0usize;
        for (i, n) in self.shape.iter().enumerate() {
            match n {
                Node::Leaf => {
                    if i < 64 && leaf < 64 && mask >> i & 1 != 0 {
                        out |= 1 << leaf;
                    }
                    leaf += 1;
                }
                Node::Dict(_) => leaf += n.leaves(),
                Node::Unusable(_) => {}
            }
        }
        out
    }

    /// Pushes the dicts' structure (keys in order) onto the key.
    pub fn push_key(&self, key: &mut KeyBuf) {
        fn text(t: &str, key: &mut KeyBuf) {
            let b = t.as_bytes();
            key.push(b.len() as u64);
            for c in b.chunks(8) {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                key.push(u64::from_le_bytes(w));
            }
        }
        fn node(n: &Node, key: &mut KeyBuf) {
            match n {
                Node::Leaf => key.push(0),
                Node::Dict(entries) => {
                    key.push(TAG_DICT | ((entries.len() as u64) << 8));
                    for (k, v) in entries {
                        text(k, key);
                        node(v, key);
                    }
                }
                Node::Unusable(t) => {
                    key.push(TAG_DICT | 1);
                    text(t, key);
                }
            }
        }
        for n in &self.shape {
            node(n, key);
        }
    }

    /// The core's argument types (one per parameter, dicts as
    /// `ArgType::Dict`) from the leaves' types.
    pub fn assemble(&self, leaves: Vec<ArgType>) -> Vec<ArgType> {
        fn node(n: &Node, it: &mut std::vec::IntoIter<ArgType>) -> ArgType {
            match n {
                Node::Leaf => it.next().unwrap_or(ArgType::Dict(vec![])),
                Node::Unusable(t) => ArgType::Unusable(t.clone()),
                Node::Dict(entries) => ArgType::Dict(
                    entries
                        .iter()
                        .map(|(k, v)| (k.clone(), node(v, it)))
                        .collect(),
                ),
            }
        }
        let mut it = leaves.into_iter();
        self.shape.iter().map(|n| node(n, &mut it)).collect()
    }
}

/// A dict key that is not a string: a `CompileTypeError` (a `TypeError`
/// and a `CompileError`) naming the argument.
fn non_string_key(k: &Bound<'_, PyAny>, name: &str, ctx: &ArgCtx<'_>) -> PyErr {
    let shown = k
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".into());
    let msg = format!(
        "argument `{name}` of `{}` is a dict with the non-string key {shown} (of type {}); \
         parpy takes dicts whose keys are strings, read in the function as `{name}['key']`",
        ctx.func,
        super::type_name(k)
    );
    let py = k.py();
    match crate::errors::compile_type_error(py) {
        Ok(t) => PyErr::from_type(t.clone(), msg),
        Err(e) => e,
    }
}
