//! Array re-binding: a local name that refers to one of several arrays of
//! one type and shape (`src = alpha1` ... `src = alpha2`, or
//! `if c: a = x else: a = y`).
//!
//! The name is bound to a scalar selector holding the [`VarId`] number of
//! the array it refers to now (so `a = b` between two such names copies the
//! selector). Before a function (or an inlined helper body) is lowered,
//! [`Lowerer::plan_aliases`] collects, for every name assigned an array
//! name, every array it can refer to; a read `a[i]` is a select over them
//! (`sel == x ? x[i] : y[i]`), a store an `if` chain. The selector is an
//! ordinary scalar, so host code can switch arrays between kernel launches.

use std::collections::BTreeMap;

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, Expr, ExprKind, Place, Stmt, StmtKind, Type, VarId, VarKind};
use crate::syntax::ast;
use crate::types::ElemTy;

use super::scope::Binding;
use super::Lowerer;

/// The `name = other` pairs of one target and value: a name assigned a
/// name, or the names of a tuple assigned a tuple (`a, b = b, a`).
fn copy_pairs<'a>(t: &'a ast::Expr, v: &'a ast::Expr, out: &mut Vec<(&'a str, &'a str)>) {
    match (&t.kind, &v.kind) {
        (ast::ExprKind::Name(n), ast::ExprKind::Name(m)) => out.push((n, m)),
        (ast::ExprKind::Tuple(ts), ast::ExprKind::Tuple(vs)) if ts.len() == vs.len() => {
            ts.iter().zip(vs).for_each(|(t, v)| copy_pairs(t, v, out))
        }
        _ => {}
    }
}

/// `name = other` pairs of a body (names only), in order.
fn name_copies<'a>(body: &'a [ast::Stmt], out: &mut Vec<(&'a str, &'a str)>) {
    for s in body {
        match &s.kind {
            ast::StmtKind::Assign { targets, value } => {
                for t in targets {
                    copy_pairs(t, value, out);
                }
            }
            ast::StmtKind::For { body, orelse, .. } | ast::StmtKind::While { body, orelse, .. } => {
                name_copies(body, out);
                name_copies(orelse, out);
            }
            ast::StmtKind::With { body, .. } => name_copies(body, out),
            ast::StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                name_copies(then_body, out);
                name_copies(else_body, out);
            }
            _ => {}
        }
    }
}

/// Whether `b` applies to each element of its array arguments (`np.exp`,
/// `np.where`, `np.maximum`, a dtype conversion).
pub(super) fn elementwise(b: crate::resolve::Builtin) -> bool {
    use crate::resolve::Builtin as B;
    matches!(
        b,
        B::Math(_)
            | B::PyMath(_)
            | B::Abs
            | B::Ufunc(_)
            | B::Real
            | B::Maximum
            | B::Minimum
            | B::Fmax
            | B::Fmin
            | B::Where
            | B::Clip
            | B::Convert
            | B::NanToNum
            | B::IsClose
            | B::Pow
    )
}

/// Why a name cannot stand for the array expression it is assigned
/// (`Lowerer::inline_blocker`).
pub(super) enum Blocker {
    /// Its elements are written (`t[0] = v`, `t += v`).
    Stored,
    /// It is assigned more than once.
    Rebound,
    /// It is sliced, iterated or transposed, first here.
    Indexed(Span),
    /// The expression reads a re-bound array name (`sema::alias`).
    AliasRead,
    /// The expression reads this array, which the function writes or
    /// re-binds.
    Writes(String),
}

impl Lowerer<'_, '_> {
    /// The arrays a re-bound name `sel` can refer to.
    pub(super) fn alias_of(&self, var: VarId) -> Option<&[VarId]> {
        self.aliases.get(&var).map(|v| v.as_slice())
    }

    /// Records, for each name of `body` assigned an array name, the arrays
    /// (bound now in the scope) it can refer to.
    pub(super) fn plan_aliases(&mut self, body: &[ast::Stmt]) {
        let mut pairs = vec![];
        name_copies(body, &mut pairs);
        let mut plan: BTreeMap<String, Vec<VarId>> = BTreeMap::new();
        loop {
            let mut changed = false;
            for (n, m) in &pairs {
                let from: Vec<VarId> = match self.scope.get(m) {
                    Some(b) if self.func.var(b.var).ty.is_array() => vec![b.var],
                    Some(b) if self.aliases.contains_key(&b.var) => self.aliases[&b.var].clone(),
                    _ => plan.get(*m).cloned().unwrap_or_default(),
                };
                let to = plan.entry(n.to_string()).or_default();
                for v in from {
                    if !to.contains(&v) {
                        to.push(v);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        plan.retain(|_, v| !v.is_empty());
        for v in plan.values_mut() {
            v.sort();
        }
        self.alias_plan = plan;
    }

    /// `name = x[i]` (or `x[i, :]`) with fewer indices than `x` has
    /// dimensions, `name` assigned nowhere else: a view of that row, as in
    /// NumPy. The indices
    /// are copied into fresh locals here (the view does not move when `i`
    /// does) and later reads of `name` stand for `x[copies]` (reads and
    /// writes through it reach `x`). `Some(statement)` when it is such an
    /// assignment (`Some(None)` after an error), `None` when it is not.
    pub(super) fn row_assign(&mut self, name: &str, value: &ast::Expr) -> Option<Option<StmtKind>> {
        let (mut stmts, view) = match self.named_view(name, value)? {
            Some(r) => r,
            None => return Some(None),
        };
        let last = stmts.pop().map(|s| s.kind);
        self.pre.extend(stmts);
        self.rows.push((name.to_string(), view));
        Some(last)
    }

    /// The view `row_assign` makes `name` stand for, and the statements
    /// that copy its scalar indices (`Some(None)` after an error, `None`
    /// when `value` is no such view). Also a transposed array's subscript
    /// (`x.T[:, :, i]`, which `x[i].T` becomes) and the whole array
    /// (`x[:]`, `x[:, :]`, `x[...]`: `x` itself, a view of all of it).
    pub(super) fn named_view(
        &mut self,
        name: &str,
        value: &ast::Expr,
    ) -> Option<Option<(Vec<Stmt>, ast::Expr)>> {
        if !matches!(value.kind, ast::ExprKind::Subscript { .. }) {
            return None;
        }
        // a view of a view (`s = r[1:]` after `r = x[i]`): one subscript
        let flat = match self.subscript_of_a_view(value) {
            Some(_) if self.once.binds_once(name) && self.scope.get(name).is_none() => {
                match self.composed_subscript(value) {
                    Some(f) => f,
                    None => {
                        // (its uses are not errors of their own)
                        self.scope.mark_failed(name);
                        return Some(None);
                    }
                }
            }
            Some(_) => return None,
            None => value.clone(),
        };
        let (arr, indices) = super::expr::flatten_subscript(&flat);
        let indices: Vec<ast::Expr> = indices.into_iter().cloned().collect();
        // a gather (`g = x[idx]`, NumPy's copy): the name stands for the
        // subscript where neither it nor what it reads changes
        let plain = |i: &ast::Expr| {
            !matches!(
                i.kind,
                ast::ExprKind::Slice { .. } | ast::ExprKind::Ellipsis
            )
        };
        let gathered = indices
            .iter()
            .find(|i| plain(i) && !self.is_new_axis(i) && self.rank(i) > 0)
            .filter(|i| self.integer_array(i));
        if let Some(ix) = gathered {
            let root = match &arr.kind {
                ast::ExprKind::Name(n) => Some(n.as_str()),
                _ => None,
            };
            let fixed = self.once.binds_once(name)
                && self.scope.get(name).is_none()
                && !self.once.stores(name)
                && root.is_some_and(|r| !self.once.stores(r) && !self.once.assigns(r))
                && self.keeps_value(&flat);
            if fixed {
                return Some(Some((vec![], flat.clone())));
            }
            self.error(
                Diagnostic::error(format!(
                    "`{name} = ...` names a gather (a subscript with an array of indices), which parpy supports only where neither `{name}` nor what it reads is written"
                ))
                .at(value.span, "a gather: a new array in NumPy")
                .also(ix.span, "an array of indices")
                .note("NumPy copies the elements; parpy reads them where the name is used")
                .help(format!(
                    "store it into a local array (`{name} = np.empty(...)`, then `{name}[:] = ...`), or use the subscript where it is"
                )),
            );
            self.scope.mark_failed(name);
            return Some(None);
        }
        // a view with new axes (`r = x[None]`, `c = x[:, None]`): the
        // name stands for the subscript, which each use indexes again
        if indices.iter().any(|i| self.is_new_axis(i))
            && self.once.binds_once(name)
            && self.scope.get(name).is_none()
            && matches!(arr.kind, ast::ExprKind::Name(_))
            && self.array_arg(arr).is_some()
        {
            let fixed = indices.iter().all(|i| {
                self.is_new_axis(i) || i.is_full_slice() || matches!(i.kind, ast::ExprKind::Int(_))
            });
            if fixed {
                return Some(Some((vec![], flat.clone())));
            }
            self.error(
                Diagnostic::error(format!(
                    "`{name} = ...` names a view with a new axis (`None`), which parpy supports with `:` and constant indices only"
                ))
                .at(value.span, "a view with a new axis")
                .help("use the subscript where it is, or index the array itself"),
            );
            self.scope.mark_failed(name);
            return Some(None);
        }
        let transposed = super::expr::transpose_of(arr);
        let (_, Type::Array { shape, .. }) = self.array_arg(transposed.unwrap_or(arr))? else {
            return None;
        };
        // `x[i, :]` is the row `x[i]`: full slices after the indices
        let trailing = indices
            .iter()
            .rev()
            .take_while(|i| i.is_full_slice())
            .count();
        let indices = &indices[..indices.len() - trailing];
        let is_slice = |i: &ast::Expr| matches!(i.kind, ast::ExprKind::Slice { .. });
        let scalars = indices.iter().filter(|i| !is_slice(i)).count();
        // `x[:]`, `x[:, :]`: all of `x` (an element of a 0-d array is not)
        if indices.is_empty()
            && trailing > 0
            && trailing <= shape.len()
            && self.once.binds_once(name)
            && self.scope.get(name).is_none()
        {
            return Some(Some((vec![], arr.clone())));
        }
        if (scalars == indices.len() && (indices.is_empty() || indices.len() >= shape.len()))
            || indices.len() > shape.len()
            || indices
                .iter()
                .any(|i| matches!(i.kind, ast::ExprKind::Ellipsis) || self.is_new_axis(i))
            || !self.once.binds_once(name)
            || self.scope.get(name).is_some()
        {
            return None;
        }
        // a slice's bounds are taken when compiling (`r = x[i, 1:]`,
        // `c = x[:, j]`); a window (`w = x[i, j:j + 3]`) as written, where
        // the names its bounds read keep their values (each assigned once,
        // or never: loop counters, parameters; no array written): each use
        // checks it stays inside the array
        let mut slices = vec![];
        for ix in indices.iter().filter(|i| is_slice(i)) {
            if let Some(b) = self.constant_bounds(ix) {
                slices.push(b);
                continue;
            }
            let Some(moving) = self.changing_name(ix) else {
                slices.push(ix.clone());
                continue;
            };
            self.error(
                Diagnostic::error(format!(
                    "`{name}` would be a view whose bounds read `{moving}`, which changes"
                ))
                .at(ix.span, format!("reads `{moving}`"))
                .note("a named view is taken where it is assigned; parpy names a window (`w = x[i, j:j + 3]`) whose bounds read names assigned once (loop counters, parameters) and no array the function writes")
                .help("use the window where it is (`np.sum(x[i, j:j + 3])`, `x[i, j + 1]` for its element 1), or copy the bound first (`lo = j` assigned once)"),
            );
            self.scope.mark_failed(name);
            return Some(None);
        }
        let mut slices = slices.into_iter();
        let mut copies = vec![];
        let mut stmts = vec![];
        for ix in indices {
            if is_slice(ix) {
                copies.push(slices.next().expect("one per slice"));
                continue;
            }
            let copy = ast::Expr::name(&self.fresh_name(&format!("{name}_i")), ix.span);
            match self.scalar_assign(&copy, super::stmt::Value::Ast(ix)) {
                Some(k) => stmts.push(crate::ir::Stmt::new(k, ix.span)),
                None => return Some(None),
            }
            copies.push(copy);
        }
        let view = ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(arr.clone()),
                indices: copies,
            },
            span: value.span,
        };
        Some(Some((stmts, view)))
    }

    /// A name `e` reads whose value may change: one assigned more than
    /// once, or an array the function writes (`None` when `e` means the
    /// same wherever it is read after its names are bound: loop counters,
    /// parameters, locals assigned once).
    pub(super) fn changing_name<'e>(&self, e: &'e ast::Expr) -> Option<&'e str> {
        let mut names = vec![];
        super::stmt::names_in(e, &mut names);
        names
            .into_iter()
            .find(|n| self.once.assigns(n) && !self.once.assigns_once(n) || self.once.stores(n))
    }

    /// Whether `e` means the same wherever it is read (`changing_name`).
    pub(super) fn keeps_value(&self, e: &ast::Expr) -> bool {
        self.changing_name(e).is_none()
    }

    /// The slice `s` with each bound that is known when compiling as its
    /// number; `None` when a bound is known only at run time.
    fn constant_bounds(&mut self, s: &ast::Expr) -> Option<ast::Expr> {
        let ast::ExprKind::Slice { lo, hi, step } = &s.kind else {
            return None;
        };
        let mut part = |p: &Option<Box<ast::Expr>>| -> Option<Option<Box<ast::Expr>>> {
            let Some(p) = p else {
                return Some(None);
            };
            let v = self.lower_expr(p).and_then(|t| self.known_int(&t.e))?;
            Some(Some(Box::new(ast::Expr::int(v, p.span))))
        };
        let kind = ast::ExprKind::Slice {
            lo: part(lo)?,
            hi: part(hi)?,
            step: part(step)?,
        };
        Some(ast::Expr { kind, span: s.span })
    }

    /// `name = e` where `e` is an array-valued expression
    /// (`np.exp(x[i, :] - m)`, `x[i, :] * w`), outside a reduction, and `name` is assigned
    /// nowhere else and never written through: `name` stands for `e`, as a
    /// row view stands for its row (parpy does not allocate the array NumPy
    /// would). The scalar locals `e` reads are copied here, so later
    /// changes to them are not seen; an array it reads must not be written
    /// anywhere in the function (it would be seen). `Some(statements)`
    /// when it is such an assignment (`Some(None)` after an error), `None`
    /// when it is not.
    pub(super) fn expr_view_assign(
        &mut self,
        name: &str,
        value: &ast::Expr,
        span: Span,
    ) -> Option<Option<Vec<Stmt>>> {
        // a row (`x[i]`) and an array name are views of their own; a bare
        // slice (`y = x[1:]`) is a view in NumPy, which writes on either
        // side would show (not this copy-like expression): still an error
        if matches!(
            value.kind,
            ast::ExprKind::Subscript { .. } | ast::ExprKind::Name(_)
        ) || self.once.stores(name)
            || !self.array_valued(value)
        {
            return None;
        }
        match self.inline_blocker(name, value) {
            None => {}
            Some(Blocker::Stored | Blocker::AliasRead) => return None,
            Some(Blocker::Rebound) => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` is assigned an array expression here and is assigned elsewhere too"
                    ))
                    .at(value.span, "an array expression")
                    .note("parpy does not allocate arrays: a local stands for an array expression only when the function assigns it once")
                    .help("give each expression its own name, or store it into an array argument (`tmp[i, :] = ...`)"),
                );
                self.scope.mark_failed(name);
                return Some(None);
            }
            Some(Blocker::Indexed(at)) => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` is an array expression, which parpy does not store: it can be used whole or by element, not sliced or iterated"
                    ))
                    .at(at, format!("`{name}` sliced or iterated here"))
                    .also(value.span, format!("`{name}` is this expression"))
                    .help("slice or iterate the arrays the expression is made of (`x[i, 1:] - w[1:]`), or store it into an array argument first (`tmp[i, :] = ...`)"),
                );
                self.scope.mark_failed(name);
                return Some(None);
            }
            Some(Blocker::Writes(a)) => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` is an array expression that reads `{a}`, which this function writes"
                    ))
                    .at(value.span, format!("an array computed from `{a}`"))
                    .note(format!(
                        "parpy does not allocate arrays: `{name}` stands for this expression where it is used, and would see the writes to `{a}` that NumPy's copy would not"
                    ))
                    .help(format!(
                        "store the expression into an array argument first (`tmp[i, :] = ...`), or write it out where `{name}` is used"
                    )),
                );
                self.scope.mark_failed(name);
                return Some(None);
            }
        }
        let (_, mut scalars) = self.names_read(value);
        scalars.sort_unstable();
        scalars.dedup();
        let mut subst = vec![];
        let mut stmts = vec![];
        for s in scalars {
            let copy = ast::Expr::name(&self.fresh_name(&format!("{name}_{s}")), span);
            let read = ast::Expr::name(s, span);
            match self.scalar_assign(&copy, super::stmt::Value::Ast(&read)) {
                Some(k) => stmts.push(Stmt::new(k, span)),
                None => return Some(None),
            }
            subst.push((s.to_string(), copy));
        }
        let mut view = value.clone();
        super::inline::subst_expr(&mut view, &subst);
        self.rows.push((name.to_string(), view));
        Some(Some(stmts))
    }

    /// The array names (arguments, local arrays, re-bound names) and the
    /// other bound names `value` reads.
    pub(super) fn names_read<'e>(&self, value: &'e ast::Expr) -> (Vec<&'e str>, Vec<&'e str>) {
        let mut arrays: Vec<&str> = vec![];
        let mut scalars: Vec<&str> = vec![];
        value.walk(&mut |e| {
            if let ast::ExprKind::Name(n) = &e.kind {
                if self.array_or_alias_arg(e).is_some() {
                    arrays.push(n);
                } else if self.scope.get(n).is_some() {
                    scalars.push(n);
                }
            }
        });
        (arrays, scalars)
    }

    /// Why `name = value` (an array expression) cannot make `name` stand
    /// for `value` where it is read (`expr_view_assign`): `None` when it
    /// can. `sema::local_arrays` stores such a value in a local array.
    pub(super) fn inline_blocker(&self, name: &str, value: &ast::Expr) -> Option<Blocker> {
        if self.once.stores(name) {
            return Some(Blocker::Stored);
        }
        if !self.once.binds_once(name) || self.scope.get(name).is_some() {
            return Some(Blocker::Rebound);
        }
        if let Some(at) = self.once.indexes(name) {
            return Some(Blocker::Indexed(at));
        }
        let (arrays, _) = self.names_read(value);
        let span = value.span;
        // a re-bound array name could change under the view
        if arrays
            .iter()
            .any(|a| self.array_arg(&ast::Expr::name(a, span)).is_none())
        {
            return Some(Blocker::AliasRead);
        }
        let written = |a: &str| {
            let rank = match self.array_arg(&ast::Expr::name(a, span)) {
                Some((_, Type::Array { shape, .. })) => shape.len(),
                _ => 0,
            };
            self.once.stores_array(a, rank) || !self.once.binds_once(a) && self.once.assigns(a)
        };
        arrays
            .iter()
            .find(|a| written(a))
            .map(|a| Blocker::Writes(a.to_string()))
    }

    /// Whether `e` is an array (has dimensions) outside the reductions in
    /// it: a slice, a row, a whole array, an operation on one, or a
    /// reduction along some of its axes.
    fn array_valued(&self, e: &ast::Expr) -> bool {
        self.rank(e) > 0
    }

    /// The rank of the array a NumPy allocation that an array expression
    /// computes (`np.arange`, `np.linspace`, `np.eye`, `np.triu`, ...)
    /// makes; `None` for other calls.
    fn computed_allocation_rank(&self, func: &ast::Expr, args: &[ast::Expr]) -> Option<usize> {
        let path = func.dotted_path().filter(|_| !self.is_local_root(func))?;
        let crate::resolve::Resolved::Allocates(w) = self.resolve_path(&path) else {
            return None;
        };
        match w.as_str() {
            "numpy.arange" | "numpy.linspace" => Some(1),
            "numpy.eye" | "numpy.identity" | "numpy.tri" => Some(2),
            "numpy.triu" | "numpy.tril" => Some(args.first().map_or(0, |m| self.rank(m))),
            // `np.ones(3)`, `np.zeros((2, 3))`: a dimension per length;
            // `np.ones_like(a)`: `a`'s (`local_arrays.rs` `filled_array`)
            "numpy.zeros" | "numpy.ones" | "numpy.empty" | "numpy.full" => {
                args.first().map(|shape| match &shape.kind {
                    ast::ExprKind::Tuple(items) => items.len(),
                    _ => shape.list_items().map_or(1, |items| items.len()),
                })
            }
            "numpy.zeros_like" | "numpy.ones_like" | "numpy.empty_like" | "numpy.full_like" => {
                args.first().map(|a| self.rank(a))
            }
            _ => None,
        }
    }

    /// The number of dimensions of `e`, as far as its text tells (0 for a
    /// number).
    /// Whether `e` is plainly a boolean array (a comparison, `~` or `not`
    /// of one, a name of a bool array): a mask as an index.
    pub(super) fn is_mask(&self, e: &ast::Expr) -> bool {
        use ast::ExprKind as K;
        match &e.kind {
            K::Compare { .. } => true,
            K::Unary { arg, .. } => self.is_mask(arg),
            K::Binary { lhs, rhs, .. } => self.is_mask(lhs) && self.is_mask(rhs),
            K::Name(_) => matches!(
                self.array_arg(e),
                Some((
                    _,
                    Type::Array {
                        elem: crate::ir::ElemTy::Bool,
                        ..
                    }
                ))
            ),
            K::Subscript { .. } => {
                matches!(super::expr::flatten_subscript(e).0.kind, K::Name(_))
                    && self.is_mask(super::expr::flatten_subscript(e).0)
            }
            _ => false,
        }
    }

    pub(super) fn rank(&self, e: &ast::Expr) -> usize {
        use crate::resolve::Builtin as B;
        use ast::ExprKind as K;
        if let K::Call { func, args, .. } = &e.kind {
            if let Some((_, dims)) = self.reshape_of(func, args) {
                return self.reshape_rank(&dims);
            }
        }
        let ndim = |a: &ast::Expr| match self.array_arg(super::expr::transpose_of(a).unwrap_or(a)) {
            Some((_, Type::Array { shape, .. })) => shape.len(),
            _ => 0,
        };
        // a reduction of `arg` called with `args` (bound to the parameters
        // of `sig`, as `keywords` binds them): the dimensions its `axis`
        // leaves (`None`: none), or all of them with `keepdims`
        let reduced =
            |arg: &ast::Expr, args: &[ast::Expr], sig: Option<&[super::keywords::Param]>| {
                let at = |name: &str| {
                    let k = sig?.iter().position(|(n, _)| *n == name)?;
                    args.get(k).map(|a| &a.kind)
                };
                let axes = match at("axis") {
                    None | Some(K::None) => return 0,
                    Some(K::Tuple(items)) => items.len(),
                    Some(_) => 1,
                };
                match at("keepdims") {
                    Some(K::Bool(true)) => self.rank(arg),
                    _ => self.rank(arg).saturating_sub(axes),
                }
            };
        match &e.kind {
            K::Subscript { value, indices } => {
                if let Some((_, idx)) = self.row_view(e) {
                    let (base, _) = super::expr::flatten_subscript(e);
                    return ndim(base).saturating_sub(idx.len());
                }
                let slices = indices
                    .iter()
                    .filter(|i| matches!(i.kind, K::Slice { .. }))
                    .count();
                // the dimensions left out are full slices (`x[i]` inside a
                // slice statement, a row view read there)
                let new_axes = indices.iter().filter(|i| self.is_new_axis(i)).count();
                // arrays of integers add their dimensions (NumPy's advanced
                // indexing: `x[idx, :]`); a boolean mask stands for one
                let gathered = indices
                    .iter()
                    .filter(|i| {
                        !matches!(i.kind, K::Slice { .. } | K::Ellipsis) && !self.is_mask(i)
                    })
                    .map(|i| self.rank(i))
                    .max()
                    .unwrap_or(0);
                slices + new_axes + gathered + ndim(value).saturating_sub(indices.len() - new_axes)
            }
            K::Name(_) => ndim(e),
            K::Attr { .. } => ndim(e),
            K::Unary { arg, .. } => self.rank(arg),
            // `a @ b`: 1-D operands lose their dimension, matrices the
            // one they share
            K::Binary {
                op: crate::ops::BinOp::MatMul,
                lhs,
                rhs,
            } => (self.rank(lhs) + self.rank(rhs)).saturating_sub(2),
            K::Binary { lhs, rhs, .. } => self.rank(lhs).max(self.rank(rhs)),
            K::Compare { first, rest } => rest
                .iter()
                .map(|(_, r)| self.rank(r))
                .fold(self.rank(first), usize::max),
            K::IfExp { then, else_, .. } => self.rank(then).max(self.rank(else_)),
            // a list literal: a 1-D array of its numbers
            K::Call { .. } if e.list_items().is_some() => 1,
            K::Call { func, args, .. } => match (&func.kind, self.builtin_of(func)) {
                // elementwise builtins of an array are arrays
                (_, Some(b)) if elementwise(b) => {
                    args.iter().map(|a| self.rank(a)).max().unwrap_or(0)
                }
                // reductions leave the axes they do not reduce
                (_, Some(b)) if b.numpy_reduction() => args.first().map_or(0, |a| {
                    reduced(a, args, super::keywords::builtin_signature(b))
                }),
                // the trapezoidal rule integrates along one axis
                (_, Some(B::Trapezoid)) => {
                    args.first().map_or(0, |a| self.rank(a).saturating_sub(1))
                }
                // one vector's covariance is a number, two vectors' 2x2
                (_, Some(B::Cov(_))) => match super::keywords::given(args, 1) {
                    Some(_) => 2,
                    None => 0,
                },
                // a ufunc's `reduce`: axis 0 unless told
                (_, Some(b @ (B::UfuncReduce(_) | B::UfuncFold(_)))) => match args.as_slice() {
                    [a] => self.rank(a).saturating_sub(1),
                    [a, ..] => reduced(a, args, super::keywords::builtin_signature(b)),
                    [] => 0,
                },
                (_, Some(B::Dot)) => match args.as_slice() {
                    [a, b, ..] => (self.rank(a) + self.rank(b)).saturating_sub(2),
                    _ => 0,
                },
                (_, Some(B::Outer)) => 2,
                // `np.select`: its conditions' and values' broadcast
                (_, Some(B::Select)) => args
                    .iter()
                    .flat_map(|a| super::calls::select_items(a).unwrap_or(std::slice::from_ref(a)))
                    .map(|a| self.rank(a))
                    .max()
                    .unwrap_or(0),
                (_, Some(B::Einsum)) => match args.split_first() {
                    Some((
                        ast::Expr {
                            kind: K::Str(s), ..
                        },
                        operands,
                    )) => {
                        let ranks: Vec<usize> = operands.iter().map(|x| self.rank(x)).collect();
                        super::einsum::parse(s, &ranks).map_or(0, |spec| spec.output.len())
                    }
                    _ => 0,
                },
                (_, Some(B::Polyval | B::SearchSorted)) => args.get(1).map_or(0, |x| self.rank(x)),
                (_, Some(B::Digitize)) => args.first().map_or(0, |x| self.rank(x)),
                (_, Some(B::Flip(_) | B::Diff | B::Roll | B::Pad)) => {
                    args.first().map_or(0, |a| self.rank(a))
                }
                (_, Some(B::Cross)) => args.iter().map(|a| self.rank(a)).max().unwrap_or(0),
                (_, Some(B::Diagonal(_))) => {
                    args.first().map_or(0, |a| self.rank(a).saturating_sub(1))
                }
                (_, Some(B::Trace)) => args.first().map_or(0, |a| self.rank(a).saturating_sub(2)),
                // `len`, `zip`, `min(s)` and the rest are not arrays
                (_, Some(_)) => 0,
                // `np.arange(...)`, `np.linspace(...)`, `np.eye(...)`,
                // `np.triu(m)` read by an array expression
                (_, None) if self.computed_allocation_rank(func, args).is_some() => {
                    self.computed_allocation_rank(func, args).unwrap_or(0)
                }
                // a method is its builtin with the array first
                (K::Attr { value, attr }, None) => {
                    match (attr.as_str(), super::keywords::method_builtin(attr)) {
                        ("astype", _) => self.rank(value),
                        (_, Some(B::Diagonal(_))) => self.rank(value).saturating_sub(1),
                        (_, Some(B::Trace)) => self.rank(value).saturating_sub(2),
                        (_, Some(B::Dot)) => (self.rank(value)
                            + args.first().map_or(0, |b| self.rank(b)))
                        .saturating_sub(2),
                        (_, Some(b)) if elementwise(b) => self.rank(value),
                        (_, Some(B::Cumulative(_)) | None) => 0,
                        (_, Some(_)) => {
                            reduced(value, args, super::keywords::method_signature(attr))
                        }
                    }
                }
                _ => 0,
            },
            _ => 0,
        }
    }

    /// `name = other` where `other` names an array (or a re-bound name):
    /// `Some(statement)` when it is such an assignment (`Some(None)` after
    /// an error), `None` when it is not.
    pub(super) fn alias_assign(
        &mut self,
        name: &str,
        value: &ast::Expr,
        span: Span,
    ) -> Option<Option<StmtKind>> {
        let ast::ExprKind::Name(m) = &value.kind else {
            return None;
        };
        let src = self.scope.get(m)?;
        // another name of a local array: the same array, as in NumPy (a
        // later re-binding of `m` is refused while this name reads it)
        if self.local_array_var(m).is_some() {
            if self.once.binds_once(name) && self.scope.get(name).is_none() {
                self.rows.push((name.to_string(), value.clone()));
                return Some(None);
            }
            self.error(
                Diagnostic::error(format!(
                    "parpy cannot make `{name}` refer to the local array `{m}` here"
                ))
                .at(span, "array assigned here")
                .note("another name of a local array is assigned once, where nothing else binds it")
                .help(format!(
                    "copy the array (`{name} = {m}.copy()`), or keep using `{m}`"
                )),
            );
            self.scope.mark_failed(name);
            return Some(None);
        }
        let src_is_array = self.func.var(src.var).ty.is_array();
        if !src_is_array && !self.aliases.contains_key(&src.var) {
            return None;
        }
        let src_ty = match self.alias_of(src.var) {
            Some(c) => self.func.var(c[0]).ty.clone(),
            None => self.func.var(src.var).ty.clone(),
        };
        // (the source's arrays too: `c = np.asarray(y)` is `c = y` only
        // once `stmt.rs` `rewrite_views` has seen it, after the plan)
        let mut cands = self.alias_plan.get(name).cloned().unwrap_or_default();
        let from = match self.alias_of(src.var) {
            Some(c) => c.to_vec(),
            None => vec![src.var],
        };
        for v in from {
            if !cands.contains(&v) {
                cands.push(v);
                cands.sort();
            }
        }
        let sel = match self.scope.get(name) {
            Some(b) if self.aliases.contains_key(&b.var) => b.var,
            Some(b) => {
                let what = if self.func.var(b.var).ty.is_array() {
                    "the array parameter"
                } else {
                    "the scalar"
                };
                self.error(
                    Diagnostic::error(format!(
                        "cannot make {what} `{name}` refer to the array `{m}`"
                    ))
                    .at(span, "array assigned here")
                    .help("use a new name for the array reference"),
                );
                return Some(None);
            }
            None => {
                let int_ty = self.opts.int_type;
                let sel = self.new_var(name, Type::Scalar(int_ty), VarKind::Local, span);
                self.scope.bind(
                    name,
                    Binding {
                        var: sel,
                        weak: false,
                    },
                );
                self.aliases.insert(sel, cands.clone());
                sel
            }
        };
        for c in &cands {
            if self.func.var(*c).ty != src_ty {
                let show = |t: &Type| crate::ir::print::type_to_string(t);
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` refers to arrays of different types or shapes: `{}` is `{}` but `{m}` is `{}`",
                        self.func.var(*c).name,
                        show(&self.func.var(*c).ty),
                        show(&src_ty)
                    ))
                    .at(span, "array assigned here")
                    .note("a name re-bound to several arrays needs them all of one type and shape"),
                );
                return Some(None);
            }
        }
        let int_ty = self.opts.int_type;
        let value = if src_is_array {
            Expr::int(src.var.0 as i64, int_ty, span)
        } else {
            Expr::var(src.var, Type::Scalar(int_ty), span)
        };
        Some(Some(StmtKind::Assign {
            dst: Place::Var(sel),
            value,
        }))
    }

    /// Does `e` name an array or a re-bound array name?
    fn names_array(&self, e: &ast::Expr) -> bool {
        let ast::ExprKind::Name(m) = &e.kind else {
            return false;
        };
        self.scope.get(m).is_some_and(|b| {
            self.func.var(b.var).ty.is_array() || self.aliases.contains_key(&b.var)
        })
    }

    /// `a, b = b, a` and `a = b = x` over array names: `None` when the
    /// values are not all array names. Python evaluates the right side
    /// first, so each value's array is kept in a fresh selector before any
    /// target is re-bound.
    pub(super) fn alias_multi_assign(
        &mut self,
        targets: &[ast::Expr],
        value: &ast::Expr,
        span: Span,
    ) -> Option<Vec<Stmt>> {
        let values: Vec<&ast::Expr> = match &value.kind {
            ast::ExprKind::Tuple(vs) => vs.iter().collect(),
            _ => vec![value],
        };
        if !values.iter().all(|v| self.names_array(v)) {
            return None;
        }
        let is_name = |t: &ast::Expr| matches!(t.kind, ast::ExprKind::Name(_));
        let shapes_match = targets.iter().all(|t| match (&t.kind, &value.kind) {
            (ast::ExprKind::Tuple(ts), ast::ExprKind::Tuple(vs)) => {
                ts.len() == vs.len() && ts.iter().all(is_name)
            }
            (ast::ExprKind::Name(_), ast::ExprKind::Name(_)) => true,
            _ => false,
        });
        if !shapes_match {
            return None;
        }
        let local = values.iter().find_map(|v| match &v.kind {
            ast::ExprKind::Name(m) if self.local_array_var(m).is_some() => Some(m),
            _ => None,
        });
        if let Some(m) = local {
            self.error(
                Diagnostic::error(format!(
                    "parpy cannot re-bind names to the local array `{m}` in a multiple assignment"
                ))
                .at(value.span, format!("`{m}` is a local array"))
                .note("a local array keeps its name; a multiple assignment would make another name refer to it")
                .help(format!("swap the elements instead: `tmp = {m}.copy()`, then assign into each array with `[...] =`")),
            );
            targets.iter().for_each(|t| {
                let mut names = vec![];
                super::stmt::names_in(t, &mut names);
                names.into_iter().for_each(|n| self.scope.mark_failed(n));
            });
            return Some(vec![]);
        }
        let mut out = vec![];
        let mut held = vec![];
        for v in &values {
            let ast::ExprKind::Name(m) = &v.kind else {
                unreachable!("checked by names_array")
            };
            let var = self.scope.get(m).expect("checked by names_array").var;
            let cands = match self.alias_of(var) {
                Some(c) => c.to_vec(),
                None => vec![var],
            };
            // not a Python identifier: no user name can refer to it
            let tmp = format!("{m} (value {})", self.func.vars.len());
            self.alias_plan.insert(tmp.clone(), cands);
            match self.alias_assign(&tmp, v, span) {
                Some(Some(k)) => out.push(Stmt::new(k, span)),
                // an error was reported (types or shapes differ)
                _ => return Some(out),
            }
            held.push(ast::Expr {
                kind: ast::ExprKind::Name(tmp),
                span: v.span,
            });
        }
        for t in targets {
            let names: Vec<&ast::Expr> = match &t.kind {
                ast::ExprKind::Tuple(ts) => ts.iter().collect(),
                _ => vec![t],
            };
            for (n, h) in names.into_iter().zip(&held) {
                let ast::ExprKind::Name(n) = &n.kind else {
                    unreachable!("checked above")
                };
                if let Some(Some(k)) = self.alias_assign(n, h, span) {
                    out.push(Stmt::new(k, span));
                }
            }
        }
        Some(out)
    }

    fn refers_to(&self, sel: VarId, array: VarId, span: Span) -> Expr {
        let int_ty = self.opts.int_type;
        Expr::new(
            ExprKind::Binary {
                op: BinOp::Eq,
                lhs: Box::new(Expr::var(sel, Type::Scalar(int_ty), span)),
                rhs: Box::new(Expr::int(array.0 as i64, int_ty, span)),
            },
            Type::Scalar(ElemTy::Bool),
            span,
        )
    }

    /// `name[indices]` read through the selector `sel`.
    pub(super) fn alias_read(
        &self,
        sel: VarId,
        indices: Vec<Expr>,
        elem: ElemTy,
        span: Span,
    ) -> Expr {
        let cands = self.alias_of(sel).unwrap_or_default();
        let index = |a: VarId| {
            Expr::new(
                ExprKind::Index {
                    array: a,
                    indices: indices.clone(),
                },
                Type::Scalar(elem),
                span,
            )
        };
        let (last, rest) = cands.split_last().expect("an alias has candidates");
        rest.iter().rev().fold(index(*last), |acc, c| {
            Expr::select_as(
                self.refers_to(sel, *c, span),
                index(*c),
                acc,
                Type::Scalar(elem),
                span,
            )
        })
    }

    /// `name[indices] = value` through the selector `sel`.
    pub(super) fn alias_store(
        &self,
        sel: VarId,
        indices: Vec<Expr>,
        value: Expr,
        span: Span,
    ) -> StmtKind {
        let cands = self.alias_of(sel).unwrap_or_default();
        let store = |a: VarId| StmtKind::Assign {
            dst: Place::Index {
                array: a,
                indices: indices.clone(),
            },
            value: value.clone(),
        };
        let (last, rest) = cands.split_last().expect("an alias has candidates");
        rest.iter().rev().fold(store(*last), |acc, c| StmtKind::If {
            cond: self.refers_to(sel, *c, span),
            then_body: vec![Stmt::new(store(*c), span)],
            else_body: vec![Stmt::new(acc, span)],
        })
    }
}
