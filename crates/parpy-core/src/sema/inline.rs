//! Inlining a jit helper at its call site: `parpy.builtin.inline(f(...))`,
//! and every call of a helper that holds labels or takes a row of an array
//! (`f(x[i], y[i, :])`) or another view (`f(x[i, 1:], y[0:2, 0:3])`: its
//! slice bounds known when compiling).
//!
//! The helper's body is lowered into the caller's function with a scope of
//! its own: array arguments bind the parameter to the caller's array, scalar
//! arguments are evaluated once into a local (a compile-time constant stays
//! one), and a row argument `x[i]` evaluates its indices once and stands for
//! `x[i]` wherever the parameter is named (the body is rewritten with
//! `param` -> `x[i]`, under names with a `#`, which no Python name
//! has). Its statements are hoisted before the calling statement; a value
//! returned by the last statement is the value of the call. Labels in the
//! body label the inlined loops, so the caller's parallel spec applies.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diag::{Diagnostic, Span};
use crate::ir::{self, Expr, ExprKind, Function, Place, StmtKind, Type, VarKind};
use crate::resolve::{Builtin, Resolved, Resolver};
use crate::syntax::{ast, FunctionDef};

use super::expr::flatten_subscript;
use super::scope::{Binding, Scope};
use super::stmt::{buffer_annotation_error, Passed};
use super::{enter_helper, Lowerer, TExpr};

/// Does `body` hold a `parpy.label(...)` statement (as `globals` resolves
/// names)?
pub(super) fn has_labels(body: &[ast::Stmt], globals: &dyn Resolver) -> bool {
    body.iter().any(|s| match &s.kind {
        ast::StmtKind::Expr(ast::Expr {
            kind: ast::ExprKind::Call { func, .. },
            ..
        }) => func
            .dotted_path()
            .is_some_and(|p| matches!(globals.resolve(&p), Resolved::Builtin(Builtin::Label))),
        ast::StmtKind::For { body, orelse, .. } | ast::StmtKind::While { body, orelse, .. } => {
            has_labels(body, globals) || has_labels(orelse, globals)
        }
        ast::StmtKind::With { body, .. } => has_labels(body, globals),
        ast::StmtKind::If {
            then_body,
            else_body,
            ..
        } => has_labels(then_body, globals) || has_labels(else_body, globals),
        _ => false,
    })
}

/// The leaves of a tuple expression nested to any depth, in order (`a`,
/// `b`, `c` of `(a, (b, c))`); an expression that is no tuple is its own.
pub(super) fn tuple_leaves<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match &e.kind {
        ast::ExprKind::Tuple(items) => items.iter().for_each(|i| tuple_leaves(i, out)),
        _ => out.push(e),
    }
}

/// The shape of the tuple a helper's last statement returns (`return a,
/// (b, c)`: 2 items, the second a tuple of 2; `return qr(a, b)` of a
/// helper `qr` that returns a tuple: `qr`'s), if it returns one; `globals`
/// resolves the helper's names.
pub(super) fn returned_shape(def: &FunctionDef, globals: &dyn Resolver) -> Option<TupleShape> {
    helper_shape(def, globals, 0)
}

/// [`returned_shape`] at `depth` helpers deep (a helper returning its own
/// call is recursion, which parpy refuses where it inlines it: no shape
/// past 32 levels).
fn helper_shape(def: &FunctionDef, globals: &dyn Resolver, depth: usize) -> Option<TupleShape> {
    // (a body that ends in an `if` whose branches return: the tuple of any
    // `return`, which all give as many values, `mixed_returns`)
    let mut any = None;
    ast::for_each_stmt(&def.body, &mut |s| match &s.kind {
        ast::StmtKind::Return(Some(e)) if matches!(e.kind, ast::ExprKind::Tuple(_)) => {
            any.get_or_insert(e);
        }
        _ => {}
    });
    let e = match def.body.last().map(|s| &s.kind) {
        Some(ast::StmtKind::Return(Some(e))) => e,
        _ => any?,
    };
    let globals = super::scope::Globals::of(def, globals);
    let callee = |f: &ast::Expr| {
        f.dotted_path()
            .map_or(Resolved::NotFound, |p| globals.resolve(&p))
    };
    match expr_shape(e, &callee, depth)? {
        TupleShape::Leaf => None,
        items => Some(items),
    }
}

/// The shape of the value of `e`, where `callee` tells what a called
/// function is: a tuple literal's items, a call of a helper that returns a
/// tuple, of `divmod(a, b)`, `np.modf(x)` or `np.frexp(x)` (a pair), of `sorted` of a
/// tuple or list literal (its items); `None` for another
/// value.
pub(super) fn expr_shape(
    e: &ast::Expr,
    callee: &dyn Fn(&ast::Expr) -> Resolved,
    depth: usize,
) -> Option<TupleShape> {
    match &e.kind {
        ast::ExprKind::Tuple(items) => Some(TupleShape::Items(
            items
                .iter()
                .map(|i| expr_shape(i, callee, depth).unwrap_or(TupleShape::Leaf))
                .collect(),
        )),
        ast::ExprKind::Call { func, args, .. } if depth < 32 => match callee(func) {
            Resolved::Function { def, globals } => helper_shape(&def, globals.as_ref(), depth + 1),
            r => {
                match (r.builtin()?, args.len()) {
                    (Builtin::Divmod, 2) | (Builtin::FloatParts { .. }, 1) => {
                        Some(TupleShape::Items(vec![TupleShape::Leaf, TupleShape::Leaf]))
                    }
                    (Builtin::Sorted, 1) => Some(TupleShape::Items(vec![
                    TupleShape::Leaf;
                    super::sorted::literal_items(&args[0])?.len()
                ])),
                    _ => None,
                }
            }
        },
        _ => None,
    }
}

/// A value, or a tuple of values nested to any depth.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum TupleShape {
    Leaf,
    Items(Vec<TupleShape>),
}

impl TupleShape {
    /// The number of values in it.
    pub(super) fn leaves(&self) -> usize {
        match self {
            TupleShape::Leaf => 1,
            TupleShape::Items(items) => items.iter().map(TupleShape::leaves).sum(),
        }
    }

    /// Does a tuple hold a tuple?
    pub(super) fn nests(&self) -> bool {
        matches!(self, TupleShape::Items(items) if items.iter().any(|i| matches!(i, TupleShape::Items(_))))
    }
}

/// Does the helper return a tuple (`return a, b`) anywhere, or another
/// helper's tuple at its end (`return qr(a, b)`)?
pub(super) fn returns_tuple(def: &FunctionDef, globals: &dyn Resolver) -> bool {
    let mut found = false;
    ast::for_each_stmt(&def.body, &mut |s| {
        found |= matches!(
            &s.kind,
            ast::StmtKind::Return(Some(ast::Expr {
                kind: ast::ExprKind::Tuple(_),
                ..
            }))
        );
    });
    found || returned_shape(def, globals).is_some()
}

/// The error for a helper whose `return`s give different numbers of values
/// (`return a, a` and `return a`): Python's caller raises where it unpacks
/// or computes with the other kind (parpy stored 0.0).
fn mixed_returns(def: &FunctionDef) -> Option<Diagnostic> {
    let mut seen: Vec<(usize, Span)> = vec![];
    ast::for_each_stmt(&def.body, &mut |s| {
        let n = match &s.kind {
            ast::StmtKind::Return(Some(ast::Expr {
                kind: ast::ExprKind::Tuple(items),
                ..
            })) => items.len(),
            ast::StmtKind::Return(Some(_)) => 1,
            ast::StmtKind::Return(None) => 0,
            _ => return,
        };
        seen.push((n, s.span));
    });
    let (first, at) = *seen.first()?;
    let &(other, there) = seen.iter().find(|(n, _)| *n != first)?;
    let what = |n: usize| match n {
        0 => "nothing".to_string(),
        1 => "one value".to_string(),
        n => format!("a tuple of {n}"),
    };
    Some(
        Diagnostic::error(format!(
            "`{}` returns {} here and {} there",
            def.name,
            what(first),
            what(other)
        ))
        .at(at, what(first))
        .also(there, what(other))
        .note("Python's caller raises where it unpacks or computes with the other kind")
        .help("return the same number of values on every path"),
    )
}

/// Replaces every `Name(param)` by its argument expression.
pub(super) fn subst_expr(e: &mut ast::Expr, subst: &[(String, ast::Expr)]) {
    use ast::ExprKind as K;
    match &mut e.kind {
        K::Name(n) => {
            if let Some((_, by)) = subst.iter().find(|(p, _)| p == n) {
                *e = by.clone();
            }
        }
        K::Int(_) | K::Float(_) | K::Bool(_) | K::Str(_) | K::None | K::Ellipsis => {}
        K::Attr { value, .. } => subst_expr(value, subst),
        K::Subscript { value, indices } => {
            subst_expr(value, subst);
            indices.iter_mut().for_each(|i| subst_expr(i, subst));
        }
        K::Slice { lo, hi, step } => {
            for b in [lo, hi, step].into_iter().flatten() {
                subst_expr(b, subst);
            }
        }
        K::Unary { arg, .. } | K::Starred(arg) => subst_expr(arg, subst),
        K::Binary { lhs, rhs, .. } => {
            subst_expr(lhs, subst);
            subst_expr(rhs, subst);
        }
        K::Compare { first, rest } => {
            subst_expr(first, subst);
            rest.iter_mut().for_each(|(_, e)| subst_expr(e, subst));
        }
        K::BoolOp { values, .. } | K::Tuple(values) => {
            values.iter_mut().for_each(|v| subst_expr(v, subst))
        }
        K::IfExp { cond, then, else_ } => {
            subst_expr(cond, subst);
            subst_expr(then, subst);
            subst_expr(else_, subst);
        }
        K::Call {
            func,
            args,
            keywords,
        } => {
            // the callee is a global path (only its arguments are values)
            // or a method of a value (`r.sum()` of a substituted `r`)
            let method_of_subst = match &func.kind {
                K::Attr { .. } => func
                    .dotted_path()
                    .is_some_and(|p| subst.iter().any(|(n, _)| n == p[0])),
                _ => false,
            };
            if func.dotted_path().is_none() || method_of_subst {
                subst_expr(func, subst);
            }
            args.iter_mut().for_each(|a| subst_expr(a, subst));
            keywords
                .iter_mut()
                .for_each(|k| subst_expr(&mut k.value, subst));
        }
        K::Generator { elt, clauses, .. } => {
            // a clause's targets hide outer names from the clauses after
            // it, its conditions and the element
            let mut inner = subst.to_vec();
            for c in clauses {
                subst_expr(&mut c.iter, &inner);
                let bound = c
                    .targets()
                    .into_iter()
                    .map(String::from)
                    .collect::<Vec<_>>();
                inner.retain(|(p, _)| !bound.contains(p));
                c.ifs.iter_mut().for_each(|e| subst_expr(e, &inner));
            }
            subst_expr(elt, &inner);
        }
        K::Lambda { params, body } => {
            // (its parameters hide outer names)
            let inner: Vec<_> = subst
                .iter()
                .filter(|(p, _)| !params.contains(p))
                .cloned()
                .collect();
            subst_expr(body, &inner);
        }
    }
}

pub(super) fn subst_stmts(stmts: &mut [ast::Stmt], subst: &[(String, ast::Expr)]) {
    for s in stmts {
        match &mut s.kind {
            ast::StmtKind::Assign { targets, value } => {
                targets.iter_mut().for_each(|t| subst_expr(t, subst));
                subst_expr(value, subst);
            }
            ast::StmtKind::AugAssign { target, value, .. } => {
                subst_expr(target, subst);
                subst_expr(value, subst);
            }
            ast::StmtKind::For {
                iter, body, orelse, ..
            } => {
                subst_expr(iter, subst);
                subst_stmts(body, subst);
                subst_stmts(orelse, subst);
            }
            ast::StmtKind::While { cond, body, orelse } => {
                subst_expr(cond, subst);
                subst_stmts(body, subst);
                subst_stmts(orelse, subst);
            }
            ast::StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                subst_expr(cond, subst);
                subst_stmts(then_body, subst);
                subst_stmts(else_body, subst);
            }
            ast::StmtKind::With { ctx, body } => {
                subst_expr(ctx, subst);
                subst_stmts(body, subst);
            }
            ast::StmtKind::Assert { test, values, .. } => {
                subst_expr(test, subst);
                values.iter_mut().for_each(|v| subst_expr(v, subst));
            }
            ast::StmtKind::Return(Some(e)) | ast::StmtKind::Expr(e) => subst_expr(e, subst),
            ast::StmtKind::Return(None)
            | ast::StmtKind::Pass
            | ast::StmtKind::Break
            | ast::StmtKind::Continue => {}
        }
    }
}

/// Does `b` hold a `return` (anywhere)?
fn has_return(b: &[ir::Stmt]) -> Option<Span> {
    for s in b {
        let inner = match &s.kind {
            StmtKind::Return(_) => return Some(s.span),
            StmtKind::For(l) => has_return(&l.body),
            StmtKind::While { body, .. } | StmtKind::OnDevice(body) => has_return(body),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => has_return(then_body).or_else(|| has_return(else_body)),
            _ => None,
        };
        if inner.is_some() {
            return inner;
        }
    }
    None
}

impl Lowerer<'_, '_> {
    /// `x[i]` / `x[i, :]` (fewer indices than dimensions, trailing full
    /// slices dropped) outside a slice statement: the array (or the
    /// selector of a re-bound name) and the indices.
    pub(super) fn row_view<'e>(&self, e: &'e ast::Expr) -> Option<(ir::VarId, Vec<&'e ast::Expr>)> {
        let (var, idx, rank) = self.subscript_view(e)?;
        let scalar_indices = idx
            .iter()
            .all(|i| !matches!(i.kind, ast::ExprKind::Slice { .. }));
        (scalar_indices && !idx.is_empty() && idx.len() < rank).then_some((var, idx))
    }

    /// A view passed to a helper: a row (`row_view`), or a subscript of an
    /// array with slices (`x[i, 1:]`, `x[0:2, 0:3]`): the array and the
    /// indices, trailing full slices dropped.
    pub(super) fn view_argument<'e>(
        &self,
        e: &'e ast::Expr,
    ) -> Option<(ir::VarId, Vec<&'e ast::Expr>)> {
        if let Some(row) = self.row_view(e) {
            return Some(row);
        }
        let (var, idx, rank) = self.subscript_view(e)?;
        let plain = idx
            .iter()
            .all(|i| !matches!(i.kind, ast::ExprKind::Ellipsis) && !self.is_new_axis(i));
        let sliced = idx
            .iter()
            .any(|i| matches!(i.kind, ast::ExprKind::Slice { .. }));
        (plain && sliced && idx.len() <= rank).then_some((var, idx))
    }

    /// A subscript of an array name outside a slice statement: the name's
    /// variable, the indices with trailing full slices dropped, and the
    /// array's rank (a re-bound name, `sema::alias`, has its arrays').
    fn subscript_view<'e>(
        &self,
        e: &'e ast::Expr,
    ) -> Option<(ir::VarId, Vec<&'e ast::Expr>, usize)> {
        if self.slice.is_some() || !matches!(e.kind, ast::ExprKind::Subscript { .. }) {
            return None;
        }
        let (base, mut idx) = flatten_subscript(e);
        let ast::ExprKind::Name(n) = &base.kind else {
            return None;
        };
        let b = self.scope.get(n)?;
        let array = self.alias_of(b.var).map_or(b.var, |c| c[0]);
        let Type::Array { shape, .. } = &self.func.var(array).ty else {
            return None;
        };
        while idx.last().is_some_and(|i| i.is_full_slice()) {
            idx.pop();
        }
        Some((b.var, idx, shape.len()))
    }

    /// Lowers `def(args)` in place (see the module comment).
    pub(super) fn inline_call(
        &mut self,
        def: &Arc<FunctionDef>,
        globals: &Arc<dyn Resolver>,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let mut values = self.inline_values(def, globals, args, span)?;
        // (a nested tuple's items, not its flattened values)
        let items = match returned_shape(def, globals.as_ref()) {
            Some(TupleShape::Items(items)) => items.len(),
            _ => values.len(),
        };
        match items {
            0 => Some(TExpr {
                e: Expr::new(ExprKind::Bool(false), Type::Void, span),
                weak: false,
            }),
            1 => values.pop(),
            n => {
                self.error(
                    Diagnostic::error(format!(
                        "`{}` returns {n} values: unpack them where it is called",
                        def.name
                    ))
                    .at(span, "a tuple, not one value")
                    .help(format!(
                        "write `{} = {}(...)`",
                        (0..n)
                            .map(|k| format!("v{k}"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        def.name
                    )),
                );
                None
            }
        }
    }

    /// The values an inlined call of `def` returns: none, one, or the
    /// elements of the tuple its last statement returns (`return a, b`,
    /// unpacked by the caller: `lo, hi = bounds(x, i)`).
    pub(super) fn inline_values(
        &mut self,
        def: &Arc<FunctionDef>,
        globals: &Arc<dyn Resolver>,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Vec<TExpr>> {
        if self.slice.is_some() {
            self.error(
                Diagnostic::error(format!(
                    "`{}` cannot be inlined inside a slice statement or reduction",
                    def.name
                ))
                .at(span, "inlined here")
                .help("call it in a statement of its own (inside a loop over the elements)"),
            );
            return None;
        }
        if let Some(d) = mixed_returns(def) {
            self.error(d);
            return None;
        }
        if !enter_helper(self.sh, def, span) {
            return None;
        }
        let r = self.inline_body(def, globals, args, span);
        self.sh.stack.pop();
        r
    }

    /// A `parpy.types.buffer` annotation of an inlined helper's parameter
    /// against the argument (an array, a row or a scalar); false after an
    /// error.
    fn check_buffer(
        &mut self,
        resolver: &dyn Resolver,
        (p, a): (&ast::Param, &ast::Expr),
        passed: Passed<'_>,
        syms: &mut BTreeMap<u64, (i64, String)>,
        type_vars: &mut BTreeMap<u64, ir::ElemTy>,
    ) -> bool {
        match buffer_annotation_error(resolver, p, passed, syms, type_vars) {
            Some(d) => {
                self.error(d.at(p.span, "annotation").also(a.span, "the argument"));
                false
            }
            None => true,
        }
    }

    fn inline_body(
        &mut self,
        def: &Arc<FunctionDef>,
        globals: &Arc<dyn Resolver>,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Vec<TExpr>> {
        // whole dicts: the helper's dict parameters flattened like the
        // caller's (`sema::dicts`), each leaf bound to the caller's leaf
        let flat;
        let expanded;
        let mut dicts = Default::default();
        let (def, args): (&FunctionDef, &[ast::Expr]) =
            if args.iter().any(|a| self.dict_arg(a).is_some()) {
                let types: Vec<_> = args
                    .iter()
                    .map(|a| self.dict_arg(a).map(|(_, t)| t))
                    .collect();
                (flat, dicts) = super::dicts::flatten_params(def, &types, &mut self.sh.diags)?;
                expanded = self.expand_dict_args(args);
                (&flat, &expanded[..])
            } else {
                (def.as_ref(), args)
            };
        let mut scope = Scope::default();
        let mut subst: Vec<(String, ast::Expr)> = vec![];
        let mut type_vars = BTreeMap::new();
        let mut syms = BTreeMap::new();
        let mut ok = true;
        let depth = self.sh.stack.len();
        for (k, (p, a)) in def.params.iter().zip(args).enumerate() {
            scope.params.push(p.name.clone());
            if let Some(v) = self.array_or_alias_arg(a) {
                if let Type::Array { elem, shape } = self.func.var(v).ty.clone() {
                    ok &= self.check_buffer(
                        globals.as_ref(),
                        (p, a),
                        Passed::Array(elem, &shape),
                        &mut syms,
                        &mut type_vars,
                    );
                }
                scope.bind(
                    &p.name,
                    Binding {
                        var: v,
                        weak: false,
                    },
                );
                continue;
            }
            // a reshaped view of an array (`h(y.ravel())`): the reshape of
            // the array, its new shape in numbers (sema::views)
            if let Some(view) = self.reshaped_argument(a, &format!("#{depth}.{k}"), &mut scope) {
                match view {
                    Some(v) => subst.push((p.name.clone(), v)),
                    None => ok = false,
                }
                continue;
            }
            if let Some((base, idx)) = self.view_argument(a) {
                if let Type::Array { elem, shape } = self.func.var(base).ty.clone() {
                    let sliced = idx
                        .iter()
                        .any(|i| matches!(i.kind, ast::ExprKind::Slice { .. }));
                    let row = match sliced {
                        false => shape.get(idx.len()..).unwrap_or(&[]).to_vec(),
                        true => self.array_shape(a).flatten().unwrap_or_default(),
                    };
                    ok &= self.check_buffer(
                        globals.as_ref(),
                        (p, a),
                        Passed::Array(elem, &row),
                        &mut syms,
                        &mut type_vars,
                    );
                }
                let base_name = format!("{}#{depth}.{k}", self.func.var(base).name);
                scope.bind(
                    &base_name,
                    Binding {
                        var: base,
                        weak: false,
                    },
                );
                let mut indices = vec![];
                for (j, ix) in idx.into_iter().enumerate() {
                    // (a slice's bounds are numbers known when compiling)
                    if let ast::ExprKind::Slice { lo, hi, step } = &ix.kind {
                        let mut known =
                            |b: &Option<Box<ast::Expr>>| -> Option<Option<Box<ast::Expr>>> {
                                let Some(b) = b else { return Some(None) };
                                let t = self.lower_expr(b)?;
                                let i = self.element_index(t, "a slice bound")?;
                                match self.known_int(&i) {
                                    Some(v) => Some(Some(Box::new(ast::Expr::int(v, b.span)))),
                                    None => {
                                        self.error(
                                        Diagnostic::error("the bounds of a slice passed to a helper must be known when compiling")
                                            .at(b.span, "not a constant")
                                            .help("pass the whole row and the bounds as arguments (`f(x[i], j, j + 3)`)"),
                                    );
                                        None
                                    }
                                }
                            };
                        match (known(lo), known(hi), known(step)) {
                            (Some(lo), Some(hi), Some(step)) => indices.push(ast::Expr {
                                kind: ast::ExprKind::Slice { lo, hi, step },
                                span: ix.span,
                            }),
                            _ => ok = false,
                        }
                        continue;
                    }
                    let Some(t) = self.lower_expr(ix) else {
                        ok = false;
                        continue;
                    };
                    let Some(i) = self.element_index(t, "an array index") else {
                        ok = false;
                        continue;
                    };
                    let name = format!("{}#{depth}.{k}.{j}", p.name);
                    // a variable is used as it is: the body cannot assign
                    // to a name it cannot spell
                    let var = match i.kind {
                        ExprKind::Var(v) => v,
                        _ => self.bind_value(&format!("{}_i{j}", p.name), i, ix.span),
                    };
                    scope.bind(&name, Binding { var, weak: true });
                    indices.push(ast::Expr {
                        kind: ast::ExprKind::Name(name),
                        span: ix.span,
                    });
                }
                subst.push((
                    p.name.clone(),
                    ast::Expr {
                        kind: ast::ExprKind::Subscript {
                            value: Box::new(ast::Expr {
                                kind: ast::ExprKind::Name(base_name),
                                span: a.span,
                            }),
                            indices,
                        },
                        span: a.span,
                    },
                ));
                continue;
            }
            let Some(t) = self.lower_expr(a) else {
                ok = false;
                continue;
            };
            if self.scalar_elem(&t).is_none() {
                ok = false;
                continue;
            }
            let weak = t.weak;
            if let (None, Some(elem)) = (&p.annotation, self.scalar_elem(&t)) {
                if !self.check_buffer(
                    globals.as_ref(),
                    (p, a),
                    Passed::Scalar(elem),
                    &mut syms,
                    &mut type_vars,
                ) {
                    ok = false;
                    continue;
                }
            }
            if let (Some(ann), Some(elem), false) = (&p.annotation, self.scalar_elem(&t), weak) {
                if !self.bind_type_var(globals.as_ref(), &mut type_vars, p, ann, elem) {
                    ok = false;
                    continue;
                }
            }
            let var = self.bind_value(&p.name, t.e, a.span);
            scope.bind(&p.name, Binding { var, weak });
        }
        if !ok {
            return None;
        }
        // (the helper's globals, its own Python locals hidden)
        let helper_globals = super::scope::Globals::of(def, globals.as_ref());
        let globals = &helper_globals;
        let stored = super::out_args::rewrite(def, globals);
        let def = stored.as_ref().unwrap_or(def);
        let mut body = super::keywords::positional(def, globals, &mut self.sh.diags)?.body;
        subst_stmts(&mut body, &subst);
        let params: Vec<String> = def.params.iter().map(|p| p.name.clone()).collect();
        if let Some(b) = super::lists::global_tuples(globals, &params, &body) {
            body = b;
        }
        if let Some(b) = self.local_tuples(&body) {
            body = b;
        }
        // (sorts and scans read inside expressions named first, as
        // `lower_function` does: `hoist.rs`)
        self.check_list_operators(&body);
        let body = self.hoist_stored_arrays(&body);
        let early = early_returns(&body);
        let body = match early {
            None => body,
            Some(Ok(b)) => b,
            Some(Err(at)) => {
                self.error(ends_without_return(at));
                return None;
            }
        };
        let (stmts, ret) = match body.split_last() {
            Some((
                ast::Stmt {
                    kind: ast::StmtKind::Return(Some(e)),
                    ..
                },
                rest,
            )) => (rest, Some(e)),
            _ => (&body[..], None),
        };
        let placeholder = Function {
            name: String::new(),
            params: vec![],
            vars: vec![],
            body: vec![],
            ret: Type::Void,
            span,
        };
        let before = self.sh.diags.len();
        // An accumulator first assigned a Python number and then values
        // of one strong type (`s = 0`, then `s += e` over a float row) is
        // typed by use, as in `lower_function`: a second lowering of the
        // body with the types the first found (its own, not shared with
        // other calls of the helper).
        let mut retype = std::collections::HashMap::new();
        let mut attempt = 0;
        let (lowered, values, child) = loop {
            attempt += 1;
            let func = std::mem::replace(&mut self.func, placeholder.clone());
            let mut child = Lowerer {
                labels_ok: self.labels_ok,
                inlined: true,
                inlined_from: Some(def.name.clone()),
                device_depth: self.device_depth,
                loop_ranges: self.loop_ranges.clone(),
                aliases: self.aliases.clone(),
                retype: std::mem::take(&mut retype),
                dicts: dicts.clone(),
                type_vars: type_vars.clone(),
                once: super::assign::AssignedOnce::of(&body),
                user_locals: std::mem::take(&mut self.user_locals),
                ..Lowerer::new(&mut *self.sh, globals, self.opts, func, scope.clone())
            };
            let groups = child.aliased_params();
            child.once.share_stores(&groups);
            child.plan_aliases(&body);
            // labels right before the final `return e` label its reduction
            let mut split = stmts.len();
            let mut labels = vec![];
            if ret.is_some() {
                while split > 0 {
                    match child.label_of(&stmts[split - 1]) {
                        Some(l) => labels.extend(l),
                        None => break,
                    }
                    split -= 1;
                }
                labels.reverse();
            }
            let mut lowered = child.lower_block(&stmts[..split]);
            // (the value of an early return starts as a zero of its type, so
            // it is assigned on every path the analyses see: `early_returns`
            // assigns it on every path that reaches the end)
            // (and each item's of a tuple, `return#value0`, ...)
            let items = (0..).map_while(|k| child.scope.get(&format!("{RETURN_VALUE}{k}")));
            for b in child
                .scope
                .get(RETURN_VALUE)
                .into_iter()
                .chain(items.collect::<Vec<_>>())
            {
                if let Type::Scalar(t) = child.func.var(b.var).ty.clone() {
                    let zero = super::expr::literal(crate::types::ScalarValue::Int(0), t, span);
                    let init = ir::Stmt::new(
                        StmtKind::Assign {
                            dst: Place::Var(b.var),
                            value: zero,
                        },
                        span,
                    );
                    lowered.insert(0, init);
                }
            }
            // `return e` or `return a, b`
            // (`return a, (b, c)`: the values flattened, `a, b, c`, which
            // the caller's nested targets take, `assign.rs` `nested_unpack`)
            let returned: Vec<&ast::Expr> = match ret.map(|e| &e.kind) {
                None => vec![],
                Some(ast::ExprKind::Tuple(items)) => {
                    let mut leaves = vec![];
                    items.iter().for_each(|e| tuple_leaves(e, &mut leaves));
                    leaves
                }
                Some(_) => ret.into_iter().collect(),
            };
            let mut values = vec![];
            for e in returned {
                // reads of row views and array expressions (`sema::alias`), as
                // `lower_block` substitutes them in each statement
                let mut e = e.clone();
                subst_expr(&mut e, &child.rows);
                child.red_labels = (!labels.is_empty()).then(|| labels.clone());
                child.red_labels_used = false;
                // (another helper's tuple, `return qr(a, b)` or `return p,
                // qr(a, b)`: its values, flattened)
                let tuple = child.value_shape(&e).is_some();
                let ts = match tuple {
                    true => child
                        .unpacked_values(&e)
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(t, _)| t)
                        .collect(),
                    false => vec![child.lower_expr(&e)],
                };
                let used = std::mem::take(&mut child.red_labels_used);
                if child.red_labels.take().is_some() && !used {
                    child.label_error(&labels, e.span);
                }
                lowered.append(&mut child.pre);
                values.extend(ts);
            }
            let rebinds = std::mem::take(&mut child.int_rebinds);
            let found = if attempt == 1 {
                child.typed_by_use()
            } else {
                Default::default()
            };
            if !found.is_empty() && rebinds.iter().all(|(first, _)| found.contains_key(first)) {
                self.func = std::mem::replace(&mut child.func, placeholder.clone());
                drop(child);
                self.sh.diags.truncate(before);
                retype = found;
                continue;
            }
            for (_, d) in rebinds {
                child.error(d);
            }
            break (lowered, values, child);
        };
        self.func = child.func;
        self.user_locals = child.user_locals;
        self.loop_last.extend(child.loop_last);
        if self.sh.diags[before..].iter().any(|d| d.is_error()) {
            return None;
        }
        if let Some(at) = has_return(&lowered) {
            self.error(
                Diagnostic::error(format!(
                    "`{}` is inlined, so it can only return at its end",
                    def.name
                ))
                .at(at, "return before the end")
                .help("compute the result into a variable and return it in the last statement"),
            );
            return None;
        }
        self.pre.extend(lowered);
        let mut out = vec![];
        for t in values {
            let t = t?;
            let elem = self.scalar_elem(&t)?;
            let var = self.new_var(
                &format!("{}_result", def.name),
                Type::Scalar(elem),
                VarKind::Local,
                span,
            );
            self.pre.push(ir::Stmt::new(
                StmtKind::Assign {
                    dst: Place::Var(var),
                    value: t.e,
                },
                span,
            ));
            out.push(TExpr {
                e: Expr::var(var, Type::Scalar(elem), span),
                weak: t.weak,
            });
        }
        Some(out)
    }

    /// A local holding `value` (computed once, before the inlined body); a
    /// compile-time constant stays one (reads see the value, as for a
    /// specialized parameter).
    fn bind_value(&mut self, name: &str, value: Expr, span: Span) -> ir::VarId {
        let ty = value.ty.clone();
        let constant = match &value.kind {
            ExprKind::Int(i) => Some(crate::types::ScalarValue::Int(*i)),
            ExprKind::Float(f) => Some(crate::types::ScalarValue::Float(*f)),
            ExprKind::Bool(b) => Some(crate::types::ScalarValue::Bool(*b)),
            _ => None,
        };
        let var = self.new_var(name, ty, VarKind::Local, span);
        match constant {
            Some(c) => self.func.vars[var.0 as usize].value = Some(c),
            None => self.pre.push(ir::Stmt::new(
                StmtKind::Assign {
                    dst: Place::Var(var),
                    value,
                },
                span,
            )),
        }
        var
    }
}

/// The names `early_returns` introduces (no Python name has a `#`).
const RETURN_DONE: &str = "return#done";
pub(super) const RETURN_VALUE: &str = "return#value";

/// An inlined body with a `return` before its last statement (`for j in
/// ...: if s[j] > 0: return j`, then `return -1`), rewritten to return
/// only at its end, as its value is the value of the call: each `return
/// v` assigns `v` to a hidden local, sets a hidden flag and leaves the
/// loops it is in (`break`, and `if flag: break` after each statement of
/// a loop body that may return); the statements after one that may return
/// run only while the flag is unset; the body ends with `return value`.
/// A helper that returns a value (at `at`) and may end without `return`,
/// where Python's returns None.
pub(super) fn ends_without_return(at: Span) -> Diagnostic {
    Diagnostic::error("this helper returns a value here but may end without `return`")
        .at(at, "returns a value")
        .note("Python's function returns None where it ends without `return`, which parpy's helper cannot")
        .help("end the helper with `return value`")
}

/// `None` when the body returns only at its end; `Some(Err(at))` when a
/// value is returned early (at `at`) and the body may end without
/// `return`.
pub(super) fn early_returns(body: &[ast::Stmt]) -> Option<Result<Vec<ast::Stmt>, Span>> {
    use ast::{Stmt, StmtKind as S};
    let init = match body.split_last() {
        Some((
            Stmt {
                kind: S::Return(_), ..
            },
            rest,
        )) => rest,
        _ => body,
    };
    let mut early = None;
    ast::for_each_stmt(init, &mut |s| {
        if let S::Return(v) = &s.kind {
            early.get_or_insert(v.as_ref().map_or(s.span, |v| v.span));
        }
    });
    let at = early?;
    let mut r = EarlyReturns {
        valued: false,
        arity: None,
    };
    let (rewritten, _) = r.block(body, false);
    if r.valued && !always_returns(body) {
        return Some(Err(at));
    }
    let span = body[0].span;
    let mut out = vec![assign(RETURN_DONE, bool_lit(false, span), span)];
    out.extend(rewritten);
    if r.valued {
        let value = match r.arity {
            // (every `return` gives a tuple of `n`: one local per item)
            Some(Some(n)) => ast::Expr {
                kind: ast::ExprKind::Tuple(
                    (0..n)
                        .map(|k| ast::Expr::name(&format!("{RETURN_VALUE}{k}"), span))
                        .collect(),
                ),
                span,
            },
            _ => ast::Expr::name(RETURN_VALUE, span),
        };
        out.push(Stmt {
            kind: S::Return(Some(value)),
            span,
        });
    }
    Some(Ok(out))
}

/// Whether every path through `b` ends in a `return` of a value or a
/// raise: its last statement is one, an `if` whose branches both do, or a
/// `while True:` that no `break` leaves.
fn always_returns(b: &[ast::Stmt]) -> bool {
    use ast::{ExprKind as E, StmtKind as S};
    match b.last().map(|s| &s.kind) {
        Some(S::Return(Some(_))) => true,
        Some(S::Assert { test, .. }) => matches!(test.kind, E::Bool(false)),
        Some(S::If {
            then_body,
            else_body,
            ..
        }) => always_returns(then_body) && always_returns(else_body),
        Some(S::While { cond, body, orelse }) => {
            let mut breaks = false;
            own_breaks(body, &mut breaks);
            // (a loop `else:` that returns runs whenever the loop ends
            // without `break`: `for ...: if ...: return i` / `else:
            // return -1`)
            !breaks && (matches!(cond.kind, E::Bool(true)) || always_returns(orelse))
        }
        Some(S::For { body, orelse, .. }) => {
            let mut breaks = false;
            own_breaks(body, &mut breaks);
            !breaks && always_returns(orelse)
        }
        _ => false,
    }
}

/// Whether `b` has a `break` of the loop whose body it is (not of a loop
/// inside it).
pub(super) fn own_breaks(b: &[ast::Stmt], found: &mut bool) {
    use ast::StmtKind as S;
    for s in b {
        match &s.kind {
            S::Break => *found = true,
            S::If {
                then_body,
                else_body,
                ..
            } => {
                own_breaks(then_body, found);
                own_breaks(else_body, found);
            }
            S::With { body, .. } => own_breaks(body, found),
            // (a loop's `else:` runs in the enclosing loop)
            S::For { orelse, .. } | S::While { orelse, .. } => own_breaks(orelse, found),
            _ => {}
        }
    }
}

/// The rewriting of `early_returns`: whether a return has a value, and
/// the length of the tuple every valued return gives (`Some(None)` once
/// one gives something else).
struct EarlyReturns {
    valued: bool,
    arity: Option<Option<usize>>,
}

impl EarlyReturns {
    /// `stmts` rewritten (inside a loop of the body or not), and whether
    /// they may return.
    fn block(&mut self, stmts: &[ast::Stmt], in_loop: bool) -> (Vec<ast::Stmt>, bool) {
        let mut out = vec![];
        for (k, s) in stmts.iter().enumerate() {
            let (s2, may) = self.stmt(s, in_loop);
            out.extend(s2);
            if !may {
                continue;
            }
            let (rest, _) = self.block(&stmts[k + 1..], in_loop);
            if in_loop {
                // out of this loop too
                let brk = ast::Stmt {
                    kind: ast::StmtKind::Break,
                    span: s.span,
                };
                out.push(if_done(vec![brk], vec![], s.span));
                out.extend(rest);
            } else if !rest.is_empty() {
                out.push(if_done(vec![], rest, s.span));
            }
            return (out, true);
        }
        (out, false)
    }

    fn stmt(&mut self, s: &ast::Stmt, in_loop: bool) -> (Vec<ast::Stmt>, bool) {
        use ast::StmtKind as S;
        let mut c = s.clone();
        let may = match &mut c.kind {
            S::Return(v) => {
                let mut out = vec![];
                if let Some(v) = v.take() {
                    self.valued = true;
                    let n = match &v.kind {
                        ast::ExprKind::Tuple(items) => Some(items.len()),
                        _ => None,
                    };
                    let same = *self.arity.get_or_insert(n) == n;
                    match n.filter(|_| same) {
                        Some(n) => {
                            let targets = (0..n)
                                .map(|k| ast::Expr::name(&format!("{RETURN_VALUE}{k}"), s.span))
                                .collect();
                            out.push(ast::Stmt {
                                kind: S::Assign {
                                    targets: vec![ast::Expr {
                                        kind: ast::ExprKind::Tuple(targets),
                                        span: s.span,
                                    }],
                                    value: v,
                                },
                                span: s.span,
                            });
                        }
                        None => {
                            self.arity = Some(None);
                            out.push(assign(RETURN_VALUE, v, s.span));
                        }
                    }
                }
                out.push(assign(RETURN_DONE, bool_lit(true, s.span), s.span));
                if in_loop {
                    out.push(ast::Stmt {
                        kind: S::Break,
                        span: s.span,
                    });
                }
                return (out, true);
            }
            // (an `else:` runs after the loop's iterations: its `break`
            // leaves the loop around this one)
            S::For { body, orelse, .. } | S::While { body, orelse, .. } => {
                let (b, m1) = self.block(body, true);
                let (o, m2) = self.block(orelse, in_loop);
                (*body, *orelse) = (b, o);
                m1 || m2
            }
            S::If {
                then_body,
                else_body,
                ..
            } => {
                let (t, m1) = self.block(then_body, in_loop);
                let (e, m2) = self.block(else_body, in_loop);
                (*then_body, *else_body) = (t, e);
                m1 || m2
            }
            S::With { body, .. } => {
                let (b, m) = self.block(body, in_loop);
                *body = b;
                m
            }
            _ => false,
        };
        (vec![c], may)
    }
}

fn assign(name: &str, value: ast::Expr, span: Span) -> ast::Stmt {
    ast::Stmt {
        kind: ast::StmtKind::Assign {
            targets: vec![ast::Expr::name(name, span)],
            value,
        },
        span,
    }
}

fn bool_lit(v: bool, span: Span) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Bool(v),
        span,
    }
}

/// `if done: then else: else_`.
fn if_done(then: Vec<ast::Stmt>, else_: Vec<ast::Stmt>, span: Span) -> ast::Stmt {
    ast::Stmt {
        kind: ast::StmtKind::If {
            cond: ast::Expr::name(RETURN_DONE, span),
            then_body: then,
            else_body: else_,
        },
        span,
    }
}
