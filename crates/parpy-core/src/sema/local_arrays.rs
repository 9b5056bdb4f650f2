//! Local arrays: `tmp = np.zeros(K)` (also `np.ones`, `np.empty`,
//! `np.full` and the `_like` forms) in jit code.
//!
//! The shape is known when compiling (constants, shapes, specialized scalar
//! arguments). The array is a local variable of the function, which the
//! back ends declare in the innermost block holding all its uses: inside a
//! parallel loop, each iteration has its own, as Python makes a new array
//! each time the statement runs. The statement fills it (`np.empty` with
//! zeros, so no run reads what another left), as NumPy does.

use crate::diag::{Diagnostic, Span};
use crate::ir::{ElemTy, Expr, Place, Stmt, StmtKind, Type, VarKind};
use crate::resolve::{Builtin, Resolved};
use crate::syntax::ast;

use super::scope::Binding;
use super::types::convert;
use super::{Lowerer, TExpr};

/// The most bytes one local array may take: it lives in a GPU thread's
/// local memory or on a CPU thread's stack.
pub(super) const MAX_LOCAL_ARRAY_BYTES: i64 = 16 * 1024;

/// The NumPy functions that make a local array, and whether each takes an
/// array whose shape it copies (`_like`) and a fill value.
pub(super) fn allocation(name: &str) -> Option<(bool, bool)> {
    Some(match name {
        "zeros" | "ones" | "empty" => (false, false),
        "full" => (false, true),
        "zeros_like" | "ones_like" | "empty_like" => (true, false),
        "full_like" => (true, true),
        _ => return None,
    })
}

impl Lowerer<'_, '_> {
    /// `name = np.zeros(shape, dtype)` and the other allocations: the
    /// statements that fill the new local array, in loops that the
    /// statement's labels parallelize (`Some(None)` after an error); `None`
    /// when `value` is not such a call.
    pub(super) fn local_array_assign(
        &mut self,
        name: &str,
        value: &ast::Expr,
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<Option<Vec<Stmt>>> {
        let ast::ExprKind::Call {
            func,
            args,
            keywords,
        } = &value.kind
        else {
            return None;
        };
        let path = func.dotted_path()?;
        if self.scope.get(path[0]).is_some() {
            return None;
        }
        let Resolved::Allocates(what) = self.resolve_path(&path) else {
            return None;
        };
        let function = what.strip_prefix("numpy.")?;
        let (like, fill) = allocation(function)?;
        let call = format!("np.{function}");
        let r = self
            .local_array(name, &call, (like, fill), args, keywords, value.span, span)
            .and_then(|(shape, fill)| {
                // the labels of the statement parallelize the fill
                let per_dim = self.labels_per_dim(labels, shape.len(), span)?;
                let int_ty = self.opts.int_type;
                let (vars, body) = fill;
                Some(super::slices::loop_nest(
                    &vars, &shape, body, per_dim, None, int_ty, span,
                ))
            });
        if r.is_none() {
            self.scope.mark_failed(name);
        }
        Some(r)
    }

    /// The array's shape, and the store that fills it with the counters of
    /// the loops around it.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn local_array(
        &mut self,
        name: &str,
        call: &str,
        kind: (bool, bool),
        args: &[ast::Expr],
        keywords: &[ast::Keyword],
        at: Span,
        span: Span,
    ) -> Option<(Vec<i64>, (Vec<crate::ir::VarId>, Vec<Stmt>))> {
        let (shape, elem, value) = self.allocation_value(call, kind, (args, keywords), at)?;
        let var = self.declare_local(name, (&shape, elem), &format!("`{call}`"), at, span)?;
        // fill it: one loop per dimension around the store
        let int_ty = self.opts.int_type;
        let mut ctx = super::slices::SliceCtx::default();
        self.init_ctx(&mut ctx, shape.clone(), span);
        let vars = ctx.vars().to_vec();
        let store = Stmt::new(
            StmtKind::Assign {
                dst: Place::Index {
                    array: var,
                    indices: vars
                        .iter()
                        .map(|v| Expr::var(*v, Type::Scalar(int_ty), span))
                        .collect(),
                },
                value: convert(value.e, elem),
            },
            span,
        );
        Some((shape, (vars, vec![store])))
    }

    /// `np.zeros(shape)`, `np.full_like(a, v)` and the others but
    /// `np.empty` read inside an array expression (`np.maximum(s,
    /// np.zeros(8))`, `np.ones_like(s).sum()`): NumPy's new array, its
    /// value where the expression reads it. `None` after an error.
    pub(super) fn filled_array(
        &mut self,
        function: &str,
        (args, keywords): (&[ast::Expr], &[ast::Keyword]),
        at: Span,
        span: Span,
    ) -> Option<TExpr> {
        let call = format!("np.{function}");
        let kind = allocation(function)?;
        if function.starts_with("empty") {
            self.error(
                Diagnostic::error(format!("`{call}` read in an expression has no values"))
                    .at(at, "uninitialized elements")
                    .note("NumPy's `empty` leaves whatever the memory held")
                    .help("use `np.zeros` or `np.full`"),
            );
            return None;
        }
        let (shape, elem, value) = self.allocation_value(&call, kind, (args, keywords), at)?;
        let slots = shape
            .iter()
            .map(|&extent| super::slices::IndexSlot::Slice {
                lo: Expr::int(0, self.opts.int_type, span),
                extent,
                step: 1,
                rot: 0,
            })
            .collect();
        self.map_slices(slots, false, span)?;
        Some(TExpr {
            e: convert(value.e, elem),
            weak: false,
        })
    }

    /// The shape, element type and fill value of the new array of
    /// `call(args)`.
    fn allocation_value(
        &mut self,
        call: &str,
        (like, fill): (bool, bool),
        (args, keywords): (&[ast::Expr], &[ast::Keyword]),
        at: Span,
    ) -> Option<(Vec<i64>, ElemTy, TExpr)> {
        // the parameters, positional or named, in NumPy's order
        let first = if like { "a" } else { "shape" };
        let mut names = vec![first];
        if fill {
            names.push("fill_value");
        }
        names.push("dtype");
        let mut given: Vec<Option<&ast::Expr>> = vec![None; names.len()];
        if args.len() > names.len() {
            self.error(
                Diagnostic::error(format!(
                    "`{call}` takes at most {} arguments in parpy functions",
                    names.len()
                ))
                .at(at, format!("{} given", args.len()))
                .help(format!("its parameters here are {}", names.join(", "))),
            );
            return None;
        }
        for (k, a) in args.iter().enumerate() {
            given[k] = Some(a);
        }
        for kw in keywords {
            let Some(k) = names.iter().position(|n| *n == kw.name) else {
                self.error(
                    Diagnostic::error(format!(
                        "`{call}` takes no keyword `{}` in parpy functions",
                        kw.name
                    ))
                    .at(kw.span, "not supported")
                    .help(format!("its parameters here are {}", names.join(", "))),
                );
                return None;
            };
            given[k] = Some(&kw.value);
        }
        let Some(shape_arg) = given[0] else {
            self.error(
                Diagnostic::error(format!("`{call}` needs its `{first}` argument"))
                    .at(at, "missing"),
            );
            return None;
        };
        let fill_arg = if fill {
            let Some(f) = given[1] else {
                self.error(
                    Diagnostic::error(format!("`{call}` needs its `fill_value` argument"))
                        .at(at, "missing"),
                );
                return None;
            };
            Some(f)
        } else {
            None
        };
        let dtype_arg = given[names.len() - 1].filter(|d| !matches!(d.kind, ast::ExprKind::None));
        let (shape, like_elem) = if like {
            let (s, e) = self.shape_of(shape_arg, call)?;
            (s, Some(e))
        } else {
            (self.shape_arg(shape_arg, call)?, None)
        };
        let value = match (fill_arg, call.trim_start_matches("np.")) {
            (Some(f), _) => self.lower_expr(f)?,
            (None, "ones" | "ones_like") => self.weak_int(1, at),
            (None, _) => self.weak_int(0, at),
        };
        let elem = match dtype_arg {
            Some(d) => self.allocation_dtype(d)?,
            None => match like_elem {
                Some(e) => e,
                // `np.full` takes its fill value's type (a Python int is
                // int64, a float float64); the others are float64
                None if fill => {
                    let t = value.e.ty.elem()?;
                    if value.weak && t.is_int() {
                        ElemTy::I64
                    } else if value.weak && t.is_float() {
                        ElemTy::F64
                    } else {
                        t
                    }
                }
                None => ElemTy::F64,
            },
        };
        Some((shape, elem, value))
    }

    /// The local array `name` for a value of `shape` and `elem` made at
    /// `at`: a new one, or the one a statement before bound it to, which
    /// the value replaces (the same shape and type: one array per name).
    pub(super) fn declare_local(
        &mut self,
        name: &str,
        (shape, elem): (&[i64], ElemTy),
        what: &str,
        at: Span,
        span: Span,
    ) -> Option<crate::ir::VarId> {
        if let Some(var) = self.local_array_var(name) {
            let (old_shape, old_elem) = match &self.func.var(var).ty {
                Type::Array { shape, elem } => (shape.clone(), *elem),
                _ => unreachable!("a local array"),
            };
            if old_shape != shape || old_elem != elem {
                let first = self.func.var(var).span;
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` is re-bound to an array of another shape or type"
                    ))
                    .at(at, format!("{} {}", elem.numpy_name(), shape_text(shape)))
                    .also(first, format!("first {} {}", old_elem.numpy_name(), shape_text(&old_shape)))
                    .note("parpy keeps a name bound to new arrays in one local array: each value it is given has the first one's shape and type")
                    .help("give this array a name of its own"),
                );
                return None;
            }
            return Some(var);
        }
        if self.scope.get(name).is_some() {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` is assigned a new array here and something else elsewhere"
                ))
                .at(at, "a new array")
                .note("a local array keeps one name, shape and type in the whole function")
                .help("give each array its own name"),
            );
            return None;
        }
        let count: i64 = shape.iter().product();
        if count == 0 {
            self.error(
                Diagnostic::error(format!("{what} makes an array without elements"))
                    .at(at, "a dimension of length 0")
                    .help("give every dimension at least one element"),
            );
            return None;
        }
        let bytes = count.saturating_mul(elem.size() as i64);
        if bytes > MAX_LOCAL_ARRAY_BYTES {
            // (a hidden name, `hoist.rs`' `sliced@12`, is the expression's
            // new array)
            let subject = match name.contains('@') {
                true => "the array this expression computes, a local array,".to_string(),
                false => format!("the local array `{name}`"),
            };
            self.error(
                Diagnostic::error(format!(
                    "{subject} takes {bytes} bytes, more than the {MAX_LOCAL_ARRAY_BYTES} a parpy function may allocate"
                ))
                .at(at, format!("{count} elements of {}", elem.numpy_name()))
                .note("a local array lives in a GPU thread's local memory or on a CPU thread's stack")
                .help("allocate the array in Python and pass it as an argument"),
            );
            return None;
        }
        let var = self.new_var(
            name,
            Type::Array {
                elem,
                shape: shape.to_vec(),
            },
            VarKind::Local,
            span,
        );
        self.scope.bind(name, Binding { var, weak: false });
        Some(var)
    }

    /// The local array (`VarKind::Local`) `name` is bound to, if any.
    pub(super) fn local_array_var(&self, name: &str) -> Option<crate::ir::VarId> {
        let b = self.scope.get(name)?;
        let v = self.func.var(b.var);
        (v.kind == VarKind::Local && v.ty.is_array() && self.alias_of(b.var).is_none())
            .then_some(b.var)
    }

    /// `name = value` of an array value that `name` keeps in a local array
    /// of its own, as NumPy's new array: `name` re-bound (`t = t * 2`, or
    /// bound in two branches), written through (`t[0] = 0`, `t /= s`),
    /// sliced or iterated, or computed from an array written later, where
    /// it cannot stand for its expression (`expr_view_assign`); and every
    /// later value of a name bound so. The value is stored into the array
    /// as a slice statement (`t[...] = value`, labels parallelizing it).
    /// A view (`t = x[i, :]`) is copied only where neither side is written
    /// (no write could tell the copy from the view). `Some(statements)`
    /// when it is such an assignment (`Some(None)` after an error), `None`
    /// when it is not.
    pub(super) fn local_copy_assign(
        &mut self,
        name: &str,
        value: &ast::Expr,
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<Option<Vec<Stmt>>> {
        let bound = self.local_array_var(name).is_some();
        // `t = np.sort(s)`, `t = np.cumsum(s)`: only a slice assignment
        // computes such an array
        let stored = match self.stored_array(value) {
            Some(None) => {
                self.scope.mark_failed(name);
                return Some(None);
            }
            s => s.flatten(),
        };
        if !bound && stored.is_none() && (self.scope.get(name).is_some() || self.rank(value) == 0) {
            return None;
        }
        let view = self.view_base(value);
        if !bound && stored.is_none() {
            // `a = x` of an array name: `sema::alias` (one of several arrays)
            if matches!(value.kind, ast::ExprKind::Name(_)) {
                return None;
            }
            let viewed = view.is_some();
            if (viewed && self.once.binds_once(name))
                || (!viewed && labels.is_empty() && self.inline_blocker(name, value).is_none())
            {
                return None;
            }
        }
        if stored.is_none() && self.rank(value) == 0 {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` holds an array; parpy cannot re-bind it to a number"
                ))
                .at(value.span, "a number")
                .note("a name keeps one type in a parpy function")
                .help(format!(
                    "fill the array with `{name}[...] = v`, or give the number a name of its own"
                )),
            );
            self.scope.mark_failed(name);
            return Some(None);
        }
        if let Some(base) = view {
            let rank = self.rank(&ast::Expr::name(&base, value.span));
            if self.once.stores(name) || self.once.stores_array(&base, rank) {
                let written = if self.once.stores(name) {
                    name
                } else {
                    base.as_str()
                };
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` would be a view of `{base}` here, and is also bound to other arrays"
                    ))
                    .at(value.span, format!("a view of `{base}`"))
                    .note(format!("parpy keeps a re-bound array name in a local array of its own; a copy of this view would not show the writes to `{written}` that NumPy's view shows"))
                    .help("copy the view explicitly (`x[i, :].copy()`), or give it a name of its own"),
                );
                self.scope.mark_failed(name);
                return Some(None);
            }
        }
        if let Some(rest) = self.view_of_rebound(name) {
            self.error(
                Diagnostic::error(format!("`{rest}` is a view of `{name}`, which is re-bound here"))
                    .at(value.span, format!("`{name}` re-bound"))
                    .note(format!("parpy writes the new value of `{name}` into its local array, where the view would see it; NumPy's view keeps the old array"))
                    .help(format!("copy the view explicitly (`{rest} = {name}[...].copy()`), or give the new array a name of its own")),
            );
            self.scope.mark_failed(name);
            return Some(None);
        }
        let Some((shape, elem)) =
            stored.or_else(|| self.shape_of(value, &format!("`{name} = ...`")))
        else {
            self.scope.mark_failed(name);
            return Some(None);
        };
        if self.python_list_retyped(name, value, elem) {
            self.scope.mark_failed(name);
            return Some(None);
        }
        let what = "this value";
        if self
            .declare_local(name, (&shape, elem), what, value.span, span)
            .is_none()
        {
            self.scope.mark_failed(name);
            return Some(None);
        }
        // (a Python list: the type its items share, `lists.rs`)
        if let Some(v) = self.local_array_var(name) {
            self.note_python_list(v, value, elem);
        }
        let target = ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(ast::Expr::name(name, value.span)),
                indices: vec![ast::Expr::full_slice(value.span); shape.len()],
            },
            span: value.span,
        };
        Some(self.slice_assign(&target, value, labels, span))
    }

    /// `e.copy()`, `np.copy(e)` and `np.array(e)` (`dtype=` given or not)
    /// of an array `e` as the new array NumPy makes: a view (`x[i, :]`)
    /// as `e.astype(T)` of its own element type, so that it is no view;
    /// a computed array (`x[i, :] * 2`) or a number as itself. Also
    /// `np.asarray(e)`, which is `e` itself; `None` for other expressions.
    pub(super) fn copy_of(&self, e: &ast::Expr) -> Option<ast::Expr> {
        let ast::ExprKind::Call {
            func,
            args,
            keywords,
        } = &e.kind
        else {
            return None;
        };
        let (arg, dtype) = match (&func.kind, args.as_slice(), keywords.as_slice()) {
            (ast::ExprKind::Attr { value, attr }, [], [])
                if attr == "copy" && self.is_local_value(value) =>
            {
                ((**value).clone(), None)
            }
            (_, [a], kws) if !self.is_local_root(func) => {
                let path = func.dotted_path()?;
                let crate::resolve::Resolved::Allocates(what) = self.resolve_path(&path) else {
                    return None;
                };
                // (of a number: a 0-d array, `calls.rs` `lower_call`)
                if super::calls::copies_a_number(&what, args, kws, |e| self.rank(e)) {
                    return None;
                }
                let dtype = match (what.as_str(), kws) {
                    ("numpy.asarray" | "numpy.asanyarray", []) => return Some(a.clone()),
                    ("numpy.copy", []) | ("numpy.array", []) => None,
                    ("numpy.array", [k]) if k.name == "dtype" => Some(k.value.clone()),
                    _ => return None,
                };
                // `np.array((a, b))`: the list `[a, b]`, NumPy's array of
                // it (its items elements of one type: no Python list)
                let items = match &a.kind {
                    ast::ExprKind::Tuple(items) => Some(&items[..]),
                    _ => a.list_items(),
                };
                let a = match items {
                    Some(items) => ast::Expr::array_list(items.to_vec(), a.span),
                    None => a.clone(),
                };
                (a, dtype)
            }
            _ => return None,
        };
        Some(match dtype {
            Some(d) => astype_of(&arg, d, func.span, e.span),
            None => self.copy_of_value(arg, e.span),
        })
    }

    /// A copy of `arg`: `arg.astype(T)` of its own type `T` when it is a
    /// view (so that the copy is no view), else `arg` itself.
    fn copy_of_value(&self, arg: ast::Expr, span: Span) -> ast::Expr {
        match self.view_base(&arg).is_some() && self.rank(&arg) > 0 {
            true => {
                let base = super::expr::flatten_subscript(&arg).0;
                let base = super::expr::transpose_of(base).unwrap_or(base);
                let elem = self.array_or_alias_arg(base).and_then(|var| {
                    let var = self.alias_of(var).map_or(var, |c| c[0]);
                    self.func.var(var).ty.elem()
                });
                match elem {
                    Some(elem) => astype_to(&arg, elem, span),
                    None => arg,
                }
            }
            false => arg,
        }
    }

    /// The array a view `value` looks into: an array name (`t = x`) or a
    /// subscript of one that leaves dimensions (`x[i, :]`, `x[::-1]`).
    fn view_base(&self, value: &ast::Expr) -> Option<String> {
        // NumPy's views of a view: `y.T`, `np.flip(y)`, `y.diagonal()`
        // (sema::views)
        if let Some(m) = super::expr::transpose_of(value) {
            return self.view_base(m);
        }
        if let Some((Builtin::Flip(_) | Builtin::Diagonal(_), args)) = self.view_builtin_call(value)
        {
            return args.first().and_then(|m| self.view_base(m));
        }
        let (base, _) = super::expr::flatten_subscript(value);
        let base = super::expr::transpose_of(base).unwrap_or(base);
        match (&value.kind, &base.kind) {
            (ast::ExprKind::Subscript { .. } | ast::ExprKind::Name(_), ast::ExprKind::Name(n))
                if self.array_or_alias_arg(base).is_some() =>
            {
                Some(n.clone())
            }
            _ => None,
        }
    }

    /// A name bound to a view of `name` (`sema::alias` rows), if any.
    fn view_of_rebound(&self, name: &str) -> Option<String> {
        self.rows.iter().find_map(|(n, e)| {
            let mut names = vec![];
            super::stmt::names_in(e, &mut names);
            names.contains(&name).then(|| n.clone())
        })
    }

    /// The dimensions of a new array: an integer or a tuple of them, each
    /// known when compiling.
    fn shape_arg(&mut self, e: &ast::Expr, call: &str) -> Option<Vec<i64>> {
        // another array's shape (`np.zeros(x.shape)`, `x[i].shape`)
        if let ast::ExprKind::Attr { value, attr } = &e.kind {
            if attr == "shape" {
                return self.shape_of(value, call).map(|(shape, _)| shape);
            }
        }
        let items: Vec<&ast::Expr> = match (&e.kind, e.list_items()) {
            (ast::ExprKind::Tuple(items), _) => items.iter().collect(),
            (_, Some(items)) => items.iter().collect(),
            _ => vec![e],
        };
        let mut shape = vec![];
        for item in items {
            let t = self.lower_expr(item)?;
            let i = self.index_value(t, "a dimension")?;
            let Some(n) = self.known_int(&i) else {
                self.error(
                    Diagnostic::error(format!(
                        "the shape of `{call}` must be known when compiling"
                    ))
                    .at(item.span, "not a constant")
                    .help("use constants, shapes (`x.shape[0]`) or specialized scalar arguments"),
                );
                return None;
            };
            if n < 0 {
                self.error(
                    Diagnostic::error(format!("negative dimensions are not allowed (`{call}`)"))
                        .at(item.span, format!("{n}"))
                        .note("NumPy raises ValueError for it"),
                );
                return None;
            }
            shape.push(n);
        }
        if shape
            .iter()
            .try_fold(1i64, |a, &d| a.checked_mul(d))
            .is_none()
        {
            self.error(
                Diagnostic::error(format!(
                    "array is too big (`{call}` of shape {})",
                    shape_text(&shape)
                ))
                .at(e.span, "more elements than an int64 counts")
                .note("NumPy raises ValueError for it"),
            );
            return None;
        }
        Some(shape)
    }

    /// The shape and element type of the array or slice `e`, for `_like`
    /// (and `np.cross`), found by lowering it once (its statements
    /// dropped).
    pub(super) fn shape_of(&mut self, e: &ast::Expr, call: &str) -> Option<(Vec<i64>, ElemTy)> {
        match self.array_shape_of(e)? {
            (Some(shape), elem) => Some((shape, elem)),
            (None, _) => {
                let d =
                    Diagnostic::error(format!("`{call}` of a number")).at(e.span, "not an array");
                self.error(match call.ends_with("_like") {
                    true => d.help("use a local scalar (`acc = 0.0`)"),
                    false => d,
                });
                None
            }
        }
    }

    /// The shape (`None` for a number) and element type of `e`, found by
    /// lowering it once (its statements dropped); `None` after an error.
    pub(super) fn array_shape_of(&mut self, e: &ast::Expr) -> Option<(Option<Vec<i64>>, ElemTy)> {
        let (from, diags) = (self.pre.len(), self.sh.diags.len());
        let (elem, ctx) = self.lower_reduced(e);
        self.pre.truncate(from);
        if self.sh.diags[diags..].iter().any(|d| d.is_error()) {
            return None;
        }
        let elem = elem?.e.ty.elem()?;
        Some((ctx.and_then(|c| c.extents().map(<[i64]>::to_vec)), elem))
    }

    /// The `dtype` of a new array: a NumPy or parpy type, or Python's
    /// `int`, `float` or `bool`.
    pub(super) fn allocation_dtype(&mut self, d: &ast::Expr) -> Option<ElemTy> {
        if let Some(path) = d.dotted_path().filter(|p| self.scope.get(p[0]).is_none()) {
            if let Resolved::Builtin(b) = self.resolver.resolve(&path) {
                match b {
                    Builtin::Int => return Some(ElemTy::I64),
                    Builtin::Float => return Some(ElemTy::F64),
                    Builtin::Bool => return Some(ElemTy::Bool),
                    _ => {}
                }
            }
        }
        self.dtype_arg(d)
    }
}

/// A shape as NumPy prints it: `(8,)`, `(2, 3)`.
pub(super) fn shape_text(shape: &[i64]) -> String {
    crate::ir::shape_text(shape)
}

/// `arg.astype(#np.T)` of the element type `elem` (`T` its NumPy name).
pub(super) fn astype_to(arg: &ast::Expr, elem: ElemTy, span: Span) -> ast::Expr {
    let dtype = ast::Expr {
        kind: ast::ExprKind::Attr {
            value: Box::new(ast::Expr::name(crate::resolve::NUMPY_ROOT, span)),
            attr: elem.numpy_name().to_string(),
        },
        span,
    };
    astype_of(arg, dtype, span, span)
}

/// `arg.astype(dtype)`.
pub(super) fn astype_of(arg: &ast::Expr, dtype: ast::Expr, at: Span, span: Span) -> ast::Expr {
    ast::Expr::method(arg, "astype", vec![dtype], at, span)
}
