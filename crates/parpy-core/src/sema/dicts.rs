//! Dict arguments: a dict of arrays, scalars and dicts passed as one
//! argument (`spmv(A, x, y)` with `A = {'values': ..., 'nrows': 256}`).
//!
//! Before a function specialized for a dict argument is lowered, its
//! definition is rewritten: the dict parameter becomes one parameter per
//! leaf, named by its path (`A['values']`, `signature::entry_name`), and
//! every `A['values']` in the body (constant string keys, nested dicts too)
//! becomes a read of that name. A dict (the parameter or a nested entry)
//! may also be passed whole to a jit helper: the call passes its leaves, and
//! the helper is specialized for the same dict type (`calls.rs`,
//! `inline.rs`). Entries cannot be assigned (the caller's dict would not
//! change); the elements of an array entry can.

use std::collections::BTreeMap;

use crate::diag::{Diagnostic, Span};
use crate::signature::{entry_name, ArgType};
use crate::syntax::{ast, FunctionDef};

use super::scope::edit_distance;

/// A function definition with its dict parameters flattened.
pub(super) struct Flat {
    pub def: FunctionDef,
    /// The argument types, one per parameter of `def`.
    pub args: Vec<ArgType>,
    /// The weakness of each argument of `args`.
    pub weak: Vec<bool>,
    /// Every name that stands for a whole dict (the parameters and their
    /// nested dicts) -> its type.
    pub dicts: BTreeMap<String, ArgType>,
}

/// Flattens the dict parameters of `def` (see the module comment); `None`
/// when the body misuses a dict (reported in `diags`).
pub(super) fn flatten(
    def: &FunctionDef,
    args: &[ArgType],
    weak: &[bool],
    diags: &mut Vec<Diagnostic>,
) -> Option<Flat> {
    let dict_types: Vec<Option<ArgType>> = args
        .iter()
        .map(|a| matches!(a, ArgType::Dict(_)).then(|| a.clone()))
        .collect();
    let (flat_def, dicts) = flatten_params(def, &dict_types, diags)?;
    let mut flat_args = vec![];
    let mut flat_weak = vec![];
    for (k, a) in args.iter().enumerate() {
        for (_, leaf) in a.leaves("") {
            flat_weak.push(match a {
                ArgType::Dict(_) => matches!(leaf, ArgType::Scalar { weak: true, .. }),
                _ => weak.get(k).copied().unwrap_or(false),
            });
            flat_args.push(leaf.clone());
        }
    }
    Some(Flat {
        def: flat_def,
        args: flat_args,
        weak: flat_weak,
        dicts,
    })
}

/// Rewrites `def` for the dict types of its parameters (`None`: not a
/// dict): each dict parameter becomes its leaves' parameters, the body
/// names them. Also returns the names that stand for whole dicts.
pub(super) fn flatten_params(
    def: &FunctionDef,
    dict_types: &[Option<ArgType>],
    diags: &mut Vec<Diagnostic>,
) -> Option<(FunctionDef, BTreeMap<String, ArgType>)> {
    let mut out = FunctionDef {
        name: def.name.clone(),
        params: vec![],
        body: def.body.clone(),
        span: def.span,
        source: def.source,
    };
    let mut dicts = BTreeMap::new();
    for (k, p) in def.params.iter().enumerate() {
        match dict_types.get(k) {
            Some(Some(a)) => {
                collect_dicts(&p.name, a, &mut dicts);
                out.params
                    .extend(a.leaves(&p.name).into_iter().map(|(name, _)| ast::Param {
                        name,
                        annotation: None,
                        default: None,
                        kw_only: p.kw_only,
                        pos_only: p.pos_only,
                        span: p.span,
                    }));
            }
            _ => out.params.push(p.clone()),
        }
    }
    let mut rw = Rewriter {
        dicts: &dicts,
        diags,
        ok: true,
    };
    rw.stmts(&mut out.body);
    let ok = rw.ok;
    ok.then_some((out, dicts))
}

/// Records `name` (a dict) and its nested dicts.
fn collect_dicts(name: &str, ty: &ArgType, out: &mut BTreeMap<String, ArgType>) {
    if let ArgType::Dict(entries) = ty {
        out.insert(name.to_string(), ty.clone());
        for (k, v) in entries {
            collect_dicts(&entry_name(name, k), v, out);
        }
    }
}

/// What an expression denotes with respect to the dicts in scope.
enum Path {
    /// Not a dict nor an entry of one.
    Other,
    /// A dict or an entry of one: its flattened name and type.
    Entry(String, ArgType),
    /// A misuse, reported.
    Error,
}

struct Rewriter<'a> {
    dicts: &'a BTreeMap<String, ArgType>,
    diags: &'a mut Vec<Diagnostic>,
    ok: bool,
}

impl Rewriter<'_> {
    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
        self.ok = false;
    }

    fn path(&mut self, e: &ast::Expr) -> Path {
        match &e.kind {
            ast::ExprKind::Name(n) => match self.dicts.get(n) {
                Some(t) => Path::Entry(n.clone(), t.clone()),
                None => Path::Other,
            },
            ast::ExprKind::Subscript { value, indices } => {
                let (name, entries) = match self.path(value) {
                    Path::Entry(name, ArgType::Dict(entries)) => (name, entries),
                    Path::Error => return Path::Error,
                    _ => return Path::Other,
                };
                let key = match indices.as_slice() {
                    [ast::Expr {
                        kind: ast::ExprKind::Str(k),
                        ..
                    }] => k,
                    _ => {
                        let at = indices.first().map_or(e.span, |i| i.span);
                        self.error(
                            Diagnostic::error(format!(
                                "the dict `{name}` can only be indexed by a constant string key"
                            ))
                            .at(at, "not a string literal")
                            .help(format!("write `{name}['key']`")),
                        );
                        return Path::Error;
                    }
                };
                match entries.iter().find(|(k, _)| k == key) {
                    Some((_, ArgType::Unusable(t))) => {
                        self.error(
                            Diagnostic::error(format!(
                                "`{name}['{key}']` is a {t}, which compiled code cannot read"
                            ))
                            .at(e.span, format!("a {t} in the dict passed"))
                            .note("parpy passes a dict's arrays, numbers, bools and dicts; it leaves out the entries of other types, which the function may hold but not read")
                            .help("read the value in Python, outside the jit function, and pass what the code needs as an array or a number")
                            .type_error(),
                        );
                        Path::Error
                    }
                    Some((_, t)) => Path::Entry(entry_name(&name, key), t.clone()),
                    None => {
                        self.missing_key(&name, key, &entries, indices[0].span);
                        Path::Error
                    }
                }
            }
            _ => Path::Other,
        }
    }

    fn missing_key(&mut self, name: &str, key: &str, entries: &[(String, ArgType)], at: Span) {
        let mut d = Diagnostic::error(format!("the dict `{name}` has no key '{key}'"))
            .at(at, "no such key in the dict passed");
        let near = entries
            .iter()
            .map(|(k, _)| (edit_distance(k, key), k))
            .filter(|(d, _)| *d <= (key.chars().count() / 3).max(1))
            .min_by_key(|(d, _)| *d);
        if let Some((_, k)) = near {
            d = d.help(format!("did you mean '{k}'?"));
        }
        let keys: Vec<String> = entries.iter().map(|(k, _)| format!("'{k}'")).collect();
        d = d.note(if keys.is_empty() {
            "the dict is empty".to_string()
        } else {
            format!("its keys are {}", keys.join(", "))
        });
        self.error(d);
    }

    fn expr(&mut self, e: &mut ast::Expr) {
        use ast::ExprKind as K;
        match self.path(e) {
            Path::Entry(name, _) => {
                e.kind = K::Name(name);
                return;
            }
            Path::Error => return,
            Path::Other => {}
        }
        match &mut e.kind {
            K::Int(_)
            | K::Float(_)
            | K::Bool(_)
            | K::Str(_)
            | K::None
            | K::Ellipsis
            | K::Name(_) => {}
            K::Tuple(items) => items.iter_mut().for_each(|i| self.expr(i)),
            K::Generator { elt, clauses, .. } => {
                for c in clauses {
                    self.expr(&mut c.iter);
                    c.ifs.iter_mut().for_each(|e| self.expr(e));
                }
                self.expr(elt);
            }
            K::Lambda { body, .. } => self.expr(body),
            K::Attr { value, .. } => self.expr(value),
            K::Subscript { value, indices } => {
                self.expr(value);
                indices.iter_mut().for_each(|i| self.expr(i));
            }
            K::Slice { lo, hi, step } => {
                for b in [lo, hi, step].into_iter().flatten() {
                    self.expr(b);
                }
            }
            K::Unary { arg, .. } | K::Starred(arg) => self.expr(arg),
            K::Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            K::Compare { first, rest } => {
                self.expr(first);
                rest.iter_mut().for_each(|(_, e)| self.expr(e));
            }
            K::BoolOp { values, .. } => values.iter_mut().for_each(|v| self.expr(v)),
            K::IfExp { cond, then, else_ } => {
                self.expr(cond);
                self.expr(then);
                self.expr(else_);
            }
            K::Call {
                func,
                args,
                keywords,
            } => {
                // the callee is a global path: only its arguments are values
                if func.dotted_path().is_none() {
                    self.expr(func);
                }
                args.iter_mut().for_each(|a| self.expr(a));
                keywords.iter_mut().for_each(|k| self.expr(&mut k.value));
            }
        }
    }

    /// An assignment target: an entry of a dict (or the dict) cannot be
    /// re-bound; the elements of an array entry can be written.
    fn target(&mut self, t: &mut ast::Expr) {
        if let ast::ExprKind::Tuple(items) = &mut t.kind {
            items.iter_mut().for_each(|i| self.target(i));
            return;
        }
        match self.path(t) {
            Path::Entry(name, _) => self.error(
                Diagnostic::error(format!(
                    "cannot assign to `{name}`: a dict argument and its entries cannot be \
                     re-bound in a parpy function"
                ))
                .at(t.span, "assigned here")
                .note("each entry reaches compiled code as an argument of its own, so the entry cannot be re-bound (in Python the caller's dict would change)")
                .help("write into the elements of an array entry (`A['values'][i] = ...`), or use a local"),
            ),
            Path::Error => {}
            Path::Other => self.expr(t),
        }
    }

    fn stmts(&mut self, stmts: &mut [ast::Stmt]) {
        for s in stmts {
            match &mut s.kind {
                ast::StmtKind::Assign { targets, value } => {
                    targets.iter_mut().for_each(|t| self.target(t));
                    self.expr(value);
                }
                ast::StmtKind::AugAssign { target, value, .. } => {
                    self.target(target);
                    self.expr(value);
                }
                ast::StmtKind::For {
                    iter, body, orelse, ..
                } => {
                    self.expr(iter);
                    self.stmts(body);
                    self.stmts(orelse);
                }
                ast::StmtKind::While { cond, body, orelse } => {
                    self.expr(cond);
                    self.stmts(body);
                    self.stmts(orelse);
                }
                ast::StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    self.expr(cond);
                    self.stmts(then_body);
                    self.stmts(else_body);
                }
                ast::StmtKind::With { ctx, body } => {
                    self.expr(ctx);
                    self.stmts(body);
                }
                ast::StmtKind::Assert { test, values, .. } => {
                    self.expr(test);
                    values.iter_mut().for_each(|v| self.expr(v));
                }
                ast::StmtKind::Return(Some(e)) | ast::StmtKind::Expr(e) => self.expr(e),
                ast::StmtKind::Return(None)
                | ast::StmtKind::Pass
                | ast::StmtKind::Break
                | ast::StmtKind::Continue => {}
            }
        }
    }
}

impl super::Lowerer<'_, '_> {
    /// A whole dict passed as a call argument: its name and type.
    pub(super) fn dict_arg(&self, e: &ast::Expr) -> Option<(String, ArgType)> {
        match &e.kind {
            ast::ExprKind::Name(n) => self.dicts.get(n).map(|t| (n.clone(), t.clone())),
            _ => None,
        }
    }

    /// The call arguments with each whole dict replaced by its leaves (the
    /// names its flattened parameters have in this function), in the order
    /// of the callee's flattened parameters.
    pub(super) fn expand_dict_args(&self, args: &[ast::Expr]) -> Vec<ast::Expr> {
        let mut out = vec![];
        for a in args {
            match self.dict_arg(a) {
                Some((name, ty)) => {
                    out.extend(ty.leaves(&name).into_iter().map(|(n, _)| ast::Expr {
                        kind: ast::ExprKind::Name(n),
                        span: a.span,
                    }))
                }
                None => out.push(a.clone()),
            }
        }
        out
    }

    /// Reports a whole dict used where a value is expected; true if `name`
    /// is one.
    pub(super) fn dict_misused(&mut self, name: &str, span: Span) -> bool {
        if !self.dicts.contains_key(name) {
            return false;
        }
        self.error(
            Diagnostic::error(format!("`{name}` is a dict, not a value"))
                .at(span, "a whole dict")
                .help(format!(
                    "read its entries by constant string keys (`{name}['key']`), or pass it whole to a jit function"
                )),
        );
        true
    }
}
