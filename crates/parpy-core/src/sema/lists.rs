//! A list literal `[a, b, c]` (`ast::Expr::list`) where NumPy reads it as
//! an array: an operand of an array expression (`y[i, :3] = [a, b, c]`,
//! `x[i, :3] * [1.0, 2.0, 0.5]`), `np.array([...])` (`dtype=` too), a
//! name bound to one (`v = np.array([a, b, c])`: `sema::alias` or a local
//! array). Its element `j` is the `j`-th item, selected by the counter of
//! the statement's slot; its type is NumPy's for a list: the items'
//! types promoted, a Python int as int64, a float as float64, a bool as
//! bool. An item of a Python list read one at a time (`c[0]`, a `for`
//! loop, `sum`) is the item as Python reads it (a Python number weak);
//! an element of `np.array([...])` (`ast::Expr::array_list`, also through
//! a name) is a NumPy value of the array's type (`list_item`,
//! `python_list`).
//!
//! Python's operators on a list are not NumPy's: `[a, b] * 2` repeats the
//! list, `[a] + [b]` joins two, `v + 1.0` and `-v` raise `TypeError`, and
//! `v * k` of a NumPy integer repeats it too. Only with an array operand
//! (`x[i, :2] * [a, b]`) does NumPy make the list an array and compute
//! elementwise; `check_list_operators` refuses the others.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, VarId};
use crate::resolve::TupleItem;
use crate::syntax::ast;
use crate::types::ScalarValue;

use super::slices::IndexSlot;
use super::types::{convert, promote_strong};
use super::{Lowerer, TExpr};

/// The methods that change a list, which a tuple lacks.
const LIST_MUTATORS: [&str; 8] = [
    "append", "extend", "insert", "pop", "remove", "sort", "reverse", "clear",
];

impl Lowerer<'_, '_> {
    /// A local name bound to a tuple literal (`t = (1.0, 2.0)`, `w = (a,
    /// b, c)`) reads as a list of the same items: Python's tuple and list
    /// are read alike (an item, a loop, `len`, `sum`, unpacking). What
    /// changes it, which Python's tuple refuses (`t[0] = v`, `t.append(v)`),
    /// is an error here. `None` when the body binds no such name.
    pub(super) fn local_tuples(&mut self, body: &[ast::Stmt]) -> Option<Vec<ast::Stmt>> {
        use ast::ExprKind as K;
        fn tuple_of(s: &ast::Stmt) -> Option<&str> {
            match &s.kind {
                ast::StmtKind::Assign { targets, value } => match (targets.as_slice(), &value.kind)
                {
                    (
                        [ast::Expr {
                            kind: K::Name(n), ..
                        }],
                        K::Tuple(items),
                    ) if !items.iter().any(|i| matches!(i.kind, K::Tuple(_))) => Some(n),
                    _ => None,
                },
                _ => None,
            }
        }
        let mut names = std::collections::BTreeSet::new();
        ast::for_each_stmt(body, &mut |s| {
            if let Some(n) = tuple_of(s) {
                names.insert(n.to_string());
            }
        });
        // a name bound once to a tuple of tuples of numbers (`offsets =
        // ((0, 1), (1, 0))`): read as the literal, as a tuple literal
        // iterated or indexed is
        let mut bound = vec![];
        super::assign::assigned_names(body, &mut bound);
        bound.extend(self.scope.params.iter().cloned());
        let constant = |e: &ast::Expr| {
            fn numbers(e: &ast::Expr) -> bool {
                match &e.kind {
                    K::Tuple(items) => items.iter().all(numbers),
                    _ => e.is_number_literal(),
                }
            }
            matches!(&e.kind, K::Tuple(items) if items.iter().any(|i| matches!(i.kind, K::Tuple(_))))
                && numbers(e)
        };
        let mut literals: Vec<(String, ast::Expr)> = vec![];
        ast::for_each_stmt(body, &mut |s| {
            if let ast::StmtKind::Assign { targets, value } = &s.kind {
                if let (
                    [ast::Expr {
                        kind: K::Name(n), ..
                    }],
                    true,
                ) = (targets.as_slice(), constant(value))
                {
                    if bound.iter().filter(|b| *b == n).count() == 1 {
                        literals.push((n.clone(), value.clone()));
                    }
                }
            }
        });
        if names.is_empty() && literals.is_empty() {
            return None;
        }
        let mut bad: Vec<(Span, String)> = vec![];
        let item_store = |t: &ast::Expr, bad: &mut Vec<(Span, String)>| {
            let mut one = |t: &ast::Expr| {
                if let K::Subscript { value, .. } = &t.kind {
                    if matches!(&value.kind, K::Name(n) if names.contains(n)) {
                        bad.push((
                            t.span,
                            "'tuple' object does not support item assignment".into(),
                        ));
                    }
                }
            };
            match &t.kind {
                K::Tuple(ts) => ts.iter().for_each(&mut one),
                _ => one(t),
            }
        };
        ast::for_each_stmt(body, &mut |s| {
            match &s.kind {
                ast::StmtKind::Assign { targets, .. } => {
                    targets.iter().for_each(|t| item_store(t, &mut bad));
                }
                ast::StmtKind::AugAssign { target, .. } => item_store(target, &mut bad),
                _ => {}
            }
            for e in s.own_exprs() {
                e.walk(&mut |x| {
                    if let K::Attr { value, attr } = &x.kind {
                        let tuple = matches!(&value.kind, K::Name(n) if names.contains(n));
                        if tuple && LIST_MUTATORS.contains(&attr.as_str()) {
                            bad.push((x.span, format!("'tuple' object has no attribute '{attr}'")));
                        }
                    }
                });
            }
        });
        for (at, what) in bad {
            self.error(
                Diagnostic::error(what)
                    .at(at, "changes a tuple")
                    .note("Python raises here: a tuple cannot change")
                    .help("bind the name to a list (`t = [a, b]`) to change it")
                    .type_error(),
            );
        }
        let mut out = body.to_vec();
        ast::for_each_stmt_mut(&mut out, &mut |s| {
            if tuple_of(s).is_some() {
                if let ast::StmtKind::Assign { value, .. } = &mut s.kind {
                    if let K::Tuple(items) = &value.kind {
                        *value = ast::Expr::tuple_list(items.clone(), value.span);
                    }
                }
            }
        });
        if !literals.is_empty() {
            let is_literal = |n: &str| literals.iter().find(|(m, _)| m == n).map(|(_, v)| v);
            // (the binding dropped, every read the literal: a loop runs
            // over it as over a tuple literal)
            ast::for_each_stmt_mut(&mut out, &mut |s| {
                if let ast::StmtKind::Assign { targets, .. } = &s.kind {
                    if matches!(targets.as_slice(), [ast::Expr { kind: K::Name(n), .. }] if is_literal(n).is_some())
                    {
                        s.kind = ast::StmtKind::Pass;
                    }
                }
            });
            ast::walk_stmts_mut(&mut out, &mut |e| {
                if let K::Name(n) = &e.kind {
                    if let Some(v) = is_literal(n) {
                        e.kind = v.kind.clone();
                    }
                }
            });
        }
        Some(out)
    }

    /// The list `[items]` read by an array expression (see the module
    /// doc); `None` after an error.
    pub(super) fn array_literal(&mut self, items: &[ast::Expr], span: Span) -> Option<TExpr> {
        if self.nested_list(items) {
            return None;
        }
        if self.slice.is_none() {
            self.error(
                Diagnostic::error("a list is an array in parpy functions, read by an array expression")
                    .at(span, "a list used as a number")
                    .help("store it (`y[i, :3] = [a, b, c]`), name it (`v = np.array([a, b, c])`), or use its items"),
            );
            return None;
        }
        if items.is_empty() {
            self.error(
                Diagnostic::error("an empty list is an array without elements")
                    .at(span, "no items")
                    .help("give the list at least one item"),
            );
            return None;
        }
        if let Some(item) = items.iter().find(|i| self.rank(i) > 0) {
            self.error(
                Diagnostic::error("a list of arrays is not supported in parpy functions")
                    .at(item.span, "an array item")
                    .note("a list in jit code is a 1-D array of numbers")
                    .help("store each array into a row of an array (`t = np.empty((2, n))`, then `t[0, :] = ...`)"),
            );
            return None;
        }
        let (values, ty) = self.list_values(items)?;
        let it = self.opts.int_type;
        let slot = IndexSlot::Slice {
            lo: Expr::int(0, it, span),
            extent: values.len() as i64,
            step: 1,
            rot: 0,
        };
        let k = self.map_slices(vec![slot], false, span)?.pop()?;
        let mut values = values.into_iter().map(|e| convert(e, ty)).enumerate().rev();
        let (_, last) = values.next().expect("at least one item");
        let e = values.fold(last, |rest, (j, v)| {
            let at = Expr::compare(BinOp::Eq, k.clone(), Expr::int(j as i64, it, span), span);
            Expr::select(at, v, rest)
        });
        Some(TExpr { e, weak: false })
    }

    /// Reports each operator of `body` with a list operand (a list
    /// literal, or a name the body binds to one) and no array operand:
    /// Python's list operation, not NumPy's (see the module doc).
    pub(super) fn check_list_operators(&mut self, body: &[ast::Stmt]) {
        use ast::ExprKind as K;
        let mut lists = std::collections::BTreeSet::new();
        ast::for_each_stmt(body, &mut |s| {
            if let ast::StmtKind::Assign { targets, value } = &s.kind {
                if value.list_items().is_some() {
                    for t in targets {
                        if let K::Name(n) = &t.kind {
                            lists.insert(n.clone());
                        }
                    }
                }
            }
        });
        let is_list = |e: &ast::Expr| {
            e.list_items().is_some() || matches!(&e.kind, K::Name(n) if lists.contains(n))
        };
        let mut found: Vec<(String, Span, Span)> = vec![];
        ast::for_each_stmt(body, &mut |s| {
            let mut operands: Vec<(String, Vec<&ast::Expr>, Span)> = vec![];
            if let ast::StmtKind::AugAssign {
                target, op, value, ..
            } = &s.kind
            {
                operands.push((format!("{}=", op.symbol()), vec![target, value], s.span));
            }
            for e in s.own_exprs() {
                e.walk(&mut |x| match &x.kind {
                    K::Binary { op, lhs, rhs } => {
                        operands.push((op.symbol().to_string(), vec![&**lhs, &**rhs], x.span))
                    }
                    K::Compare { first, rest } => {
                        let mut all = vec![&**first];
                        all.extend(rest.iter().map(|(_, e)| e));
                        operands.push((rest[0].0.symbol().to_string(), all, x.span));
                    }
                    K::Unary { op, arg } if *op != crate::ops::UnOp::Not => {
                        operands.push(("a unary operator".to_string(), vec![&**arg], x.span))
                    }
                    _ => {}
                });
            }
            // (an operand that may be an array, a local this check cannot
            // see yet, leaves the operator alone)
            // (`surely_number` walks its operand, and each operator of a
            // long sum is one: only an operator with a list operand asks,
            // else the check is cubic in the length of the expression)
            for (op, all, at) in operands {
                let Some(l) = all.iter().find(|e| is_list(e)) else {
                    continue;
                };
                if all.iter().all(|e| is_list(e) || self.surely_number(e)) {
                    found.push((op, l.span, at));
                }
            }
        });
        for (op, list, at) in found {
            let what = match op.as_str() {
                "+" | "+=" => "joins lists (and raises TypeError for a number)",
                "*" | "*=" => "repeats the list an integer number of times",
                _ => "is not defined for a list (Python raises TypeError) or compares lists as wholes",
            };
            self.error(
                Diagnostic::error(format!(
                    "`{op}` of a Python list is not NumPy's elementwise operation"
                ))
                .at(list, "a Python list")
                .also(at, format!("Python's `{op}` here {what}"))
                .note("NumPy computes elementwise only when the other operand is an array")
                .help("make it an array first: `np.array([a, b]) * 2`")
                .type_error(),
            );
        }
    }

    /// Whether `e` is a number whatever the body binds: a literal, or an
    /// expression of no dimensions whose names (outside its subscripts'
    /// indices) are bound before the body runs (parameters, globals).
    fn surely_number(&self, e: &ast::Expr) -> bool {
        use ast::ExprKind as K;
        if self.rank(e) > 0 {
            return false;
        }
        match &e.kind {
            K::Int(_) | K::Float(_) | K::Bool(_) => true,
            K::Name(n) => self.scope.get(n).is_some() || self.is_global_number(e),
            K::Unary { arg, .. } => self.surely_number(arg),
            K::Binary { lhs, rhs, .. } => self.surely_number(lhs) && self.surely_number(rhs),
            K::Subscript { value, .. } => {
                self.surely_number(value) || self.array_arg(value).is_some()
            }
            K::Attr { .. } => self.is_global_number(e),
            _ => false,
        }
    }

    /// A global constant (`math.pi`).
    fn is_global_number(&self, e: &ast::Expr) -> bool {
        e.dotted_path()
            .filter(|p| self.scope.get(p[0]).is_none())
            .is_some_and(|p| {
                matches!(
                    self.resolve_path(&p),
                    crate::resolve::Resolved::Const(_) | crate::resolve::Resolved::TypedConst(..)
                )
            })
    }

    /// The lowered items of a list of numbers and NumPy's type of its
    /// array: the items' types promoted, a Python int as int64, a float
    /// as float64, a bool as bool. `None` after an error.
    pub(super) fn list_values(&mut self, items: &[ast::Expr]) -> Option<(Vec<Expr>, ElemTy)> {
        let mut values = vec![];
        let mut ty: Option<ElemTy> = None;
        for item in items {
            let t = self.lower_expr(item)?;
            let elem = self.scalar_elem(&t)?;
            // NumPy's type of a Python number in a list
            let elem = match (t.weak, elem) {
                (true, e) if e.is_float() => ElemTy::F64,
                (true, ElemTy::Bool) => ElemTy::Bool,
                (true, _) => ElemTy::I64,
                (false, e) => e,
            };
            ty = Some(ty.map_or(elem, |t| promote_strong(t, elem)));
            values.push(t.e);
        }
        Some((values, ty?))
    }

    /// The type of each item of a list, lowered as a probe (its
    /// statements dropped): a Python number weak. `None` after an error in
    /// an item.
    pub(super) fn item_types(&mut self, items: &[ast::Expr]) -> Option<Vec<(ElemTy, bool)>> {
        if self.nested_list(items) {
            return None;
        }
        let (from, diags) = (self.pre.len(), self.sh.diags.len());
        let mut types = vec![];
        for item in items {
            let t = self.lower_expr(item);
            types.push(t.and_then(|t| Some((self.scalar_elem(&t)?, t.weak))));
        }
        self.pre.truncate(from);
        if self.sh.diags[diags..].iter().any(|d| d.is_error()) {
            return None;
        }
        types.into_iter().collect()
    }

    /// Whether `list` is read as Python reads a list (its items one by
    /// one: a `for` loop, `sum`, `max`, `min`) the same as parpy reads
    /// NumPy's array of it: its items all of one type (`Some(weak)`: all
    /// Python numbers or not). Reports an error when they are not
    /// (`Some(None)`); `None` after an error in an item.
    pub(super) fn python_list(&mut self, list: &ast::Expr, what: &str) -> Option<Option<bool>> {
        let items = list.list_items()?;
        if !list.is_python_list() {
            // (`np.array([...])`: its elements are NumPy values of its type)
            return Some(Some(false));
        }
        let types = self.item_types(items)?;
        let Some(first) = types.first() else {
            // (no items: nothing is read)
            return Some(Some(true));
        };
        match types.iter().position(|t| t != first) {
            None => Some(Some(first.1)),
            Some(k) => {
                self.error(
                    Diagnostic::error(format!(
                        "the items of the list {what} are of different types: {} and {}",
                        show(*first),
                        show(types[k])
                    ))
                    .at(items[k].span, show(types[k]))
                    .also(items[0].span, show(*first))
                    .note("Python reads each item of a list as it is; parpy reads them as NumPy's array of the list, in one type")
                    .help("give the items one type (`float(v)`, `np.float32(v)`), or make the array first: `np.array([...])`"),
                );
                Some(None)
            }
        }
    }

    /// Notes local array `v` bound to `value` (of element type `elem`): a
    /// Python list or tuple literal, with the type its items share; bound
    /// again, the types of both bindings. Python numbers in one binding and
    /// NumPy values of their NumPy type in another (`w = (1.0, 0.0)`, then
    /// `w = (w[0] * z, w[1] * z)` of float64 values) are that type from
    /// the first binding on, as a local first assigned a Python literal
    /// and then values of one NumPy type is (`assign.rs` `typed_by_use`):
    /// Python holds that type from the first re-binding on.
    pub(super) fn note_python_list(&mut self, v: VarId, value: &ast::Expr, elem: ElemTy) {
        let key = self.func.var(v).span;
        let items = match value.list_items().filter(|_| value.is_python_list()) {
            Some(items) => {
                let Some(types) = self.item_types(items) else {
                    return;
                };
                let first = types.first().copied().unwrap_or((elem, false));
                match types.iter().position(|t| *t != first) {
                    None => ListItems::One(first),
                    Some(k) => ListItems::Mixed {
                        at: items[k].span,
                        what: format!("item {k} is {} and item 0 {}", show(types[k]), show(first)),
                    },
                }
            }
            // (NumPy's array re-binding a Python list: its elements)
            None if self.python_lists.contains_key(&v) => ListItems::One((elem, false)),
            None => return,
        };
        let strong = self.sh.strong_lists.contains(&key);
        let items = match items {
            ListItems::One((t, weak)) => ListItems::One((t, weak && !strong)),
            mixed => mixed,
        };
        let tuple = value.is_tuple_list();
        let Some(entry) = self.python_lists.get(&v).cloned() else {
            self.python_lists.insert(v, PythonList { items, tuple });
            return;
        };
        let merged = match (entry.items, items) {
            (ListItems::One(a), ListItems::One(b)) if a == b => ListItems::One(a),
            (ListItems::One((a, wa)), ListItems::One((b, wb)))
                if a == b && !self.sh.widen_frozen =>
            {
                // (one binding weak: lowered again, its items of that type)
                debug_assert!(wa != wb);
                if self.sh.strong_lists.insert(key) {
                    self.sh.widen_gen += 1;
                }
                ListItems::One((a, false))
            }
            (ListItems::One(a), ListItems::One(b)) => ListItems::Mixed {
                at: value.span,
                what: format!(
                    "item 0 is {} here and {} where first bound",
                    show(b),
                    show(a)
                ),
            },
            (m @ ListItems::Mixed { .. }, _) => m,
            (_, m) => m,
        };
        self.python_lists.insert(
            v,
            PythonList {
                items: merged,
                tuple: entry.tuple || tuple,
            },
        );
    }

    /// `name`, a local array of a Python list or tuple of one type,
    /// re-bound to `value`, a list or tuple whose NumPy type `elem` is
    /// another (`w = (1.0, 0.0)`, then float32 items): reports it, naming
    /// an item whose type changes (the local array keeps one type).
    pub(super) fn python_list_retyped(
        &mut self,
        name: &str,
        value: &ast::Expr,
        elem: ElemTy,
    ) -> bool {
        let Some(v) = self.local_array_var(name) else {
            return false;
        };
        let (Some(items), Some(old)) = (value.list_items(), self.func.var(v).ty.elem()) else {
            return false;
        };
        let Some(PythonList {
            items: ListItems::One(first),
            tuple,
        }) = self.python_lists.get(&v).cloned()
        else {
            return false;
        };
        if old == elem || !value.is_python_list() {
            return false;
        }
        let Some(types) = self.item_types(items) else {
            return false;
        };
        let Some(k) = types.iter().position(|t| *t != first) else {
            return false;
        };
        let kind = if tuple || value.is_tuple_list() {
            "tuple"
        } else {
            "list"
        };
        let first_span = self.func.var(v).span;
        self.error(
            Diagnostic::error(format!(
                "`{name}` is re-bound to a {kind} of items of another type"
            ))
            .at(items[k].span, format!("item {k} is {} here and {} where first bound", show(types[k]), show(first)))
            .also(first_span, format!("`{name}` first bound here: NumPy's {} array of its items", old.numpy_name()))
            .note(format!("Python re-binds the name to the new {kind}; parpy keeps `{name}` in one array of NumPy's type of its first binding's items"))
            .help(format!(
                "give the first binding items of the new type (`np.{}(v)`), or give the new {kind} a name of its own",
                elem.numpy_name()
            ))
            .type_error(),
        );
        true
    }

    /// An item of the list literal of `items` at index `at`: `Ok(weak)`
    /// when its items share one type (NumPy's array of the list holds
    /// them; a Python number is weak); the item itself where they do not
    /// and the index is known when compiling (Python reads it as it is);
    /// an error otherwise. `None` after an error.
    /// A nested list literal (a 2-D table of numbers) among `items`: an
    /// error with the fixes that compile; true when there is one.
    fn nested_list(&mut self, items: &[ast::Expr]) -> bool {
        let Some(row) = items.iter().find(|i| i.list_items().is_some()) else {
            return false;
        };
        self.error(
            Diagnostic::error("a nested list (a 2-D array literal) is not supported in parpy functions")
                .at(row.span, "a row written as a list")
                .note("a list in jit code is a 1-D array of numbers")
                .help("write the table as a tuple of tuples (`K = ((-1.0, 0.0, 1.0), (-2.0, 0.0, 2.0))`, read as `K[a][b]`) or fill the rows of a local array (`k = np.empty((2, 3))`, then `k[0, :] = [-1.0, 0.0, 1.0]`)"),
        );
        true
    }

    /// How the item at `at` of list literal `list` is read: `Ok(weak)`,
    /// of the list's type (a Python list's items all Python numbers are;
    /// never an element of `np.array([...])`, a NumPy value of the
    /// array's type: the one rule for both), or `Err(item)` at a known
    /// index of a Python list of items of several types (the item as
    /// Python reads it). `None` after an error.
    pub(super) fn list_item(
        &mut self,
        list: &ast::Expr,
        at: &[(Expr, Span)],
        span: Span,
    ) -> Option<Result<bool, TExpr>> {
        let items = list.list_items()?;
        if !list.is_python_list() {
            // (an element of `np.array([...])`: a NumPy value of its type)
            return Some(Ok(false));
        }
        let types = self.item_types(items)?;
        if let Some(first) = types.first().filter(|f| types.iter().all(|t| t == *f)) {
            return Some(Ok(first.1));
        }
        let n = items.len() as i64;
        if let [(ix, _)] = at {
            if let Some(k) = self.known_int(ix).filter(|k| (-n..n).contains(k)) {
                return self.lower_expr(&items[k.rem_euclid(n) as usize]).map(Err);
            }
        }
        self.error(
            Diagnostic::error("the items of this list are of different types, and this reads one")
                .at(span, "an item of the list")
                .note("Python reads each item of a list as it is; parpy reads them as NumPy's array of the list, in one type, at an index not known when compiling")
                .help("give the items one type (`float(v)`, `np.float32(v)`), or make the array first: `np.array([...])`"),
        );
        None
    }

    /// Whether an item read (an integer index) of local array `array` is
    /// a Python number (weak): the items of a Python list of Python
    /// numbers are. An error for a Python list whose items are of
    /// different types, which Python reads each as it is (`None`).
    pub(super) fn python_item_read(&mut self, array: VarId, e: &ast::Expr) -> Option<bool> {
        let Some(list) = self.python_lists.get(&array) else {
            return Some(false);
        };
        match &list.items {
            ListItems::One((_, weak)) => Some(*weak),
            ListItems::Mixed { at, what } => {
                let (at, what) = (*at, what.clone());
                let name = self.func.var(array).name.clone();
                let kind = if list.tuple { "tuple" } else { "list" };
                let first = self.func.var(array).span;
                let mut d = Diagnostic::error(format!(
                    "the items of the {kind} `{name}` are of different types, and this reads one"
                ))
                .at(e.span, format!("an item of the {kind}"))
                .also(at, what);
                if first != at {
                    d = d.also(first, format!("`{name}` first bound here"));
                }
                self.error(
                    d.note(format!("Python reads each item of a {kind} as it is; parpy reads them as NumPy's array of the {kind}, in one type"))
                        .help(format!("give the items one type in every binding of `{name}` (`np.float32(v)`, `float(v)`)")),
                );
                None
            }
        }
    }

    /// Checks a store of `v` into an item of local array `array`: into a
    /// Python list, the value must be of its items' type (Python's list
    /// would hold the value as it is). `None` after reporting.
    pub(super) fn python_item_store(&mut self, array: VarId, v: &TExpr, span: Span) -> Option<()> {
        let Some(PythonList {
            items: ListItems::One(items),
            ..
        }) = self.python_lists.get(&array).cloned()
        else {
            return Some(());
        };
        let value = (self.scalar_elem(v)?, v.weak);
        if value == items {
            return Some(());
        }
        let name = self.func.var(array).name.clone();
        self.error(
            Diagnostic::error(format!(
                "storing {} into an item of the list `{name}`, whose items are {}, makes that item {} in Python",
                show(value),
                show_many(items),
                show(value)
            ))
            .at(span, format!("an item of `{name}`"))
            .note("parpy's list is NumPy's array of the list, of one type; Python's holds each value as it is")
            .help("store a value of the items' type (`float(v)`, `np.float32(v)`), or make the list an array: `np.array([...])`"),
        );
        None
    }
}

/// A local array of a Python list or tuple (`Lowerer::python_lists`).
#[derive(Clone, Debug)]
pub(super) struct PythonList {
    pub(super) items: ListItems,
    /// Bound to a tuple literal (`local_tuples`).
    pub(super) tuple: bool,
}

/// The type of a Python list's items.
#[derive(Clone, Debug)]
pub(super) enum ListItems {
    /// One type (weak: Python numbers).
    One((ElemTy, bool)),
    /// Several: an item where they differ, and what differs.
    Mixed { at: Span, what: String },
}

/// `show` of several values.
fn show_many((t, weak): (ElemTy, bool)) -> String {
    match weak {
        true => format!("{}s", &show((t, weak))[2..]),
        false => format!("{} values", t.numpy_name()),
    }
}

/// A type as Python code sees it: a Python number (weak) or NumPy's.
fn show((t, weak): (ElemTy, bool)) -> String {
    match weak {
        true if t.is_float() => "a Python float".to_string(),
        true if t == ElemTy::Bool => "a Python bool".to_string(),
        true => "a Python int".to_string(),
        false => t.numpy_name().to_string(),
    }
}

/// `body` with each read of a module-level tuple of Python numbers
/// (`WEIGHTS = (0.25, 0.5, 0.25)`, `Resolved::ConstTuple`, as `resolver`
/// finds it) replaced by its literal, which reads as a list literal does
/// (an item a Python number, `for w in WEIGHTS`, `x[i, :3] * WEIGHTS`);
/// of a tuple of tuples (`SOBEL = ((-1, 0, 1), ...)`), by the tuple
/// literal, as the same tuple bound to a local name reads (`local_tuples`);
/// `None` when it reads none. `params` and the names `body` assigns are
/// its locals.
pub(super) fn global_tuples(
    resolver: &dyn crate::resolve::Resolver,
    params: &[String],
    body: &[ast::Stmt],
) -> Option<Vec<ast::Stmt>> {
    let mut locals: Vec<String> = params.to_vec();
    super::assign::assigned_names(body, &mut locals);
    let tuple_of = |n: &str| match resolver.resolve(&[n]) {
        crate::resolve::Resolved::ConstTuple(items) => Some(items),
        _ => None,
    };
    let mut any = false;
    ast::for_each_stmt(body, &mut |s| {
        for e in s.own_exprs() {
            e.walk(&mut |x| {
                if let ast::ExprKind::Name(n) = &x.kind {
                    any |= !locals.contains(n) && tuple_of(n).is_some();
                }
            });
        }
    });
    if !any {
        return None;
    }
    fn literal(items: Vec<TupleItem>, span: Span) -> Vec<ast::Expr> {
        items
            .into_iter()
            .map(|v| {
                let kind = match v {
                    TupleItem::Number(ScalarValue::Bool(b)) => ast::ExprKind::Bool(b),
                    TupleItem::Number(ScalarValue::Int(i)) => ast::ExprKind::Int(i),
                    TupleItem::Number(ScalarValue::Float(f)) => ast::ExprKind::Float(f),
                    TupleItem::Tuple(t) => ast::ExprKind::Tuple(literal(t, span)),
                };
                ast::Expr { kind, span }
            })
            .collect()
    }
    // (a tuple of tuples is the tuple literal, as a local name bound once
    // to one reads: `local_tuples`)
    let nested = |items: &[TupleItem]| items.iter().any(|i| matches!(i, TupleItem::Tuple(_)));
    let global = |e: &ast::Expr| match &e.kind {
        ast::ExprKind::Name(n) if !locals.contains(n) => tuple_of(n),
        _ => None,
    };
    let mut out = body.to_vec();
    // a loop runs over the tuple itself, as over a tuple literal
    fn loops(stmts: &mut [ast::Stmt], tuple: &dyn Fn(&ast::Expr) -> Option<Vec<ast::Expr>>) {
        for s in stmts {
            match &mut s.kind {
                ast::StmtKind::For {
                    iter, body, orelse, ..
                } => {
                    if let Some(items) = tuple(iter) {
                        iter.kind = ast::ExprKind::Tuple(items);
                    }
                    loops(body, tuple);
                    loops(orelse, tuple);
                }
                ast::StmtKind::While { body, orelse, .. } => {
                    loops(body, tuple);
                    loops(orelse, tuple);
                }
                ast::StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    loops(then_body, tuple);
                    loops(else_body, tuple);
                }
                ast::StmtKind::With { body, .. } => loops(body, tuple),
                _ => {}
            }
        }
    }
    loops(&mut out, &|e| global(e).map(|items| literal(items, e.span)));
    // anywhere else, the list literal
    ast::walk_stmts_mut(&mut out, &mut |e| {
        if let Some(items) = global(e) {
            *e = if nested(&items) {
                ast::Expr {
                    kind: ast::ExprKind::Tuple(literal(items, e.span)),
                    span: e.span,
                }
            } else {
                ast::Expr::list(literal(items, e.span), e.span)
            };
        }
    });
    Some(out)
}
