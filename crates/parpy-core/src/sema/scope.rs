//! Names inside one function: parameters, locals and loop variables (Python
//! has one scope per function), plus "did you mean" suggestions.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::VarId;
use crate::resolve::{Resolved, Resolver};
use crate::syntax::FunctionDef;

/// The globals of one function's body: its resolver with the function's
/// Python locals (`FunctionDef::python_locals`) hidden. Python decides at
/// compile time that a name assigned anywhere in a function is a local of
/// the whole function, so a read of it never finds a module global of
/// that name (`G = 5.0` further down a loop: the read before takes the
/// local, or raises `UnboundLocalError`); sema's reads of such a name
/// that no binding reaches find nothing here and are `not_defined`.
pub(crate) struct Globals<'r> {
    inner: &'r dyn Resolver,
    locals: BTreeSet<String>,
}

impl<'r> Globals<'r> {
    pub fn of(def: &FunctionDef, inner: &'r dyn Resolver) -> Globals<'r> {
        Globals {
            inner,
            locals: def.python_locals(),
        }
    }

    /// What the global `path` denotes (`NotFound` for a path rooted at a
    /// Python local).
    pub fn resolve(&self, path: &[&str]) -> Resolved {
        match path.first() {
            Some(n) if self.locals.contains(*n) => Resolved::NotFound,
            _ => self.inner.resolve(path),
        }
    }

    /// The resolver, no name hidden.
    pub fn inner(&self) -> &'r dyn Resolver {
        self.inner
    }

    /// Whether Python makes `name` a local of the function.
    pub fn is_local(&self, name: &str) -> bool {
        self.locals.contains(crate::syntax::ast::source_name(name))
    }
}

impl Resolver for Globals<'_> {
    fn resolve(&self, path: &[&str]) -> Resolved {
        Globals::resolve(self, path)
    }
}

/// What a name is bound to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Binding {
    pub var: VarId,
    /// Reads of the name are weakly typed (Python scalars, loop indices,
    /// locals first assigned a weak value).
    pub weak: bool,
}

#[derive(Default, Clone)]
pub(crate) struct Scope {
    names: BTreeMap<String, Binding>,
    /// Parameter names in order (for help messages).
    pub params: Vec<String>,
    /// Names whose assignment failed with an error: defined with an unknown
    /// type, so their uses report nothing more (one error per root cause).
    failed: BTreeSet<String>,
}

impl Scope {
    pub fn get(&self, name: &str) -> Option<Binding> {
        self.names.get(name).copied()
    }
    /// Binds `name`, returning the previous binding.
    pub fn bind(&mut self, name: &str, b: Binding) -> Option<Binding> {
        self.names.insert(name.to_string(), b)
    }
    pub fn unbind(&mut self, name: &str) {
        self.names.remove(name);
    }
    /// Marks `name` as assigned by a statement that failed.
    pub fn mark_failed(&mut self, name: &str) {
        if !self.names.contains_key(name) {
            self.failed.insert(name.to_string());
        }
    }
    pub fn is_failed(&self, name: &str) -> bool {
        self.failed.contains(name)
    }
    /// The defined name closest to `name` by edit distance, if close enough.
    pub fn closest(&self, name: &str) -> Option<&str> {
        let limit = (name.chars().count() / 3).max(1);
        self.names
            .keys()
            .map(|k| (edit_distance(k, name), k))
            .filter(|(d, _)| *d <= limit)
            .min_by_key(|(d, _)| *d)
            .map(|(_, k)| k.as_str())
    }
}

/// Levenshtein distance between two strings (by characters).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance() {
        assert_eq!(edit_distance("out", "y"), 3);
        assert_eq!(edit_distance("acc", "ac"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn closest_name() {
        let mut s = Scope::default();
        s.bind(
            "total",
            Binding {
                var: VarId(0),
                weak: false,
            },
        );
        s.bind(
            "x",
            Binding {
                var: VarId(1),
                weak: false,
            },
        );
        assert_eq!(s.closest("totl"), Some("total"));
        assert_eq!(s.closest("out"), None);
    }
}
