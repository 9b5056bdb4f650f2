//! Multiple assignment: tuple unpacking (`a, b = b, a`, `H, W = x.shape`)
//! and chained assignment (`a = b = 0.0`). Python evaluates the whole right
//! side first, then assigns the targets from left to right; values that a
//! later target could see changed are kept in temporaries.

use crate::diag::{Diagnostic, Span};
use crate::ir::{self, ElemTy, ExprKind, Place, StmtKind, Type, VarKind};
use crate::syntax::ast;

use super::stmt::Value;
use super::types::{promote_strong, widens};
use super::{Lowerer, TExpr};

/// One value of the right side: lowered (or `None` after an error).
type Lowered = (Option<TExpr>, Span);

/// `value[k]`: item `k` of an array value.
pub(super) fn item(value: &ast::Expr, k: i64) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Subscript {
            value: Box::new(value.clone()),
            indices: vec![ast::Expr::int(k, value.span)],
        },
        span: value.span,
    }
}

/// Does the value need no temporary (a literal is the same value whenever
/// it is read)?
fn is_literal(e: &ir::Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_)
    )
}

impl Lowerer<'_, '_> {
    /// The right side as a list of values: the elements of a tuple, the
    /// extents of `x.shape` (`None` for a single value).
    pub(super) fn unpacked_values(&mut self, value: &ast::Expr) -> Option<Vec<Lowered>> {
        // `lo, hi = bounds(x, i)` of a helper that returns a tuple
        if let ast::ExprKind::Call { func, args, .. } = &value.kind {
            if let Some((def, globals)) = self.tuple_helper(func) {
                return Some(self.helper_values(&def, &globals, args, value.span));
            }
        }
        match &value.kind {
            // (an item that is a tuple, `7, qr(9, 4)` matched against `p,
            // (q, r)` by `nested_unpack`: its values, flattened)
            ast::ExprKind::Tuple(vs) => {
                let mut out = vec![];
                for v in vs {
                    match self.value_shape(v) {
                        Some(_) => out.extend(self.unpacked_values(v)?),
                        None => out.push((self.lower_expr(v), v.span)),
                    }
                }
                Some(out)
            }
            // `q, r = divmod(a, b)`: `a // b` and `a % b`, Python's rules
            ast::ExprKind::Call { func, args, .. }
                if args.len() == 2
                    && self.builtin_of(func) == Some(crate::resolve::Builtin::Divmod) =>
            {
                let part = |op| ast::Expr::binary(op, args[0].clone(), args[1].clone(), value.span);
                let q = part(crate::ir::BinOp::FloorDiv);
                let r = part(crate::ir::BinOp::Mod);
                Some(vec![
                    (self.lower_expr(&q), value.span),
                    (self.lower_expr(&r), value.span),
                ])
            }
            // `a, b, c = sorted((x, y, z))` (`sorted.rs`)
            ast::ExprKind::Call {
                func,
                args,
                keywords,
            } if self.builtin_of(func) == Some(crate::resolve::Builtin::Sorted)
                && args.len() == 1
                && super::sorted::literal_items(&args[0]).is_some() =>
            {
                let n = super::sorted::literal_items(&args[0]).map_or(1, <[_]>::len);
                let at = value.span;
                Some(match self.sorted_values(args, keywords, at) {
                    Some(vs) => vs.into_iter().map(|v| (Some(v), at)).collect(),
                    None => vec![(None, at); n],
                })
            }
            // `r, c = np.unravel_index(k, dims)` (`unravel.rs`)
            ast::ExprKind::Call { func, args, .. }
                if args.len() == 2
                    && self.builtin_of(func) == Some(crate::resolve::Builtin::UnravelIndex) =>
            {
                let values = self.unravel_index(args, value.span);
                Some(values.into_iter().map(|v| (v, value.span)).collect())
            }
            // `f, w = np.modf(x)`, `m, e = math.frexp(x)`: the parts
            // (`ufuncs.rs`)
            ast::ExprKind::Call { func, args, .. }
                if args.len() == 1
                    && matches!(
                        self.builtin_of(func),
                        Some(crate::resolve::Builtin::FloatParts { .. })
                    ) =>
            {
                let at = value.span;
                let Some(crate::resolve::Builtin::FloatParts { frexp, python }) =
                    self.builtin_of(func)
                else {
                    return None;
                };
                let (f, w) = match self.float_parts(frexp, python, &args[0], at) {
                    Some((f, w)) => (Some(f), Some(w)),
                    None => (None, None),
                };
                Some(vec![(f, at), (w, at)])
            }
            ast::ExprKind::Attr { value: base, attr } if attr == "shape" => {
                let shape = self.array_shape(base)??;
                Some(
                    shape
                        .iter()
                        .map(|d| (Some(self.weak_int(*d, value.span)), value.span))
                        .collect(),
                )
            }
            _ => None,
        }
    }

    /// The elements of a 1-D array value unpacked into a tuple of targets
    /// (`a, b, c = x[i, :3]`): `value[k]` for each of its `n`, as Python
    /// iterates it.
    fn array_elements(&mut self, value: &ast::Expr, n: i64) -> Vec<Lowered> {
        (0..n)
            .map(|k| (self.lower_expr(&item(value, k)), value.span))
            .collect()
    }

    /// The rows of an array value of more dimensions unpacked into names
    /// (`r0, r1 = x[i]`): each name a view of its row, `r0 = x[i][0]`, in
    /// order. A name the value reads is refused (it would be re-bound
    /// before the later rows are taken).
    fn unpack_rows(
        &mut self,
        targets: &[ast::Expr],
        value: &ast::Expr,
        n: i64,
        span: Span,
    ) -> Vec<ir::Stmt> {
        let ts = match targets {
            [ast::Expr {
                kind: ast::ExprKind::Tuple(ts),
                ..
            }] if ts.iter().all(|t| matches!(t.kind, ast::ExprKind::Name(_))) => ts,
            _ => {
                self.error(
                    Diagnostic::error("the rows of an array unpack into names (`r0, r1 = x[i]`)")
                        .at(value.span, "rows of an array")
                        .also(targets[0].span, "not a tuple of names"),
                );
                targets
                    .iter()
                    .for_each(|t| self.mark_failed_targets(std::slice::from_ref(t)));
                return vec![];
            }
        };
        if ts.len() as i64 != n {
            self.count_error(n as usize, &targets[0], ts, value.span);
            return vec![];
        }
        let mut read = vec![];
        value.walk(&mut |e| {
            if let ast::ExprKind::Name(m) = &e.kind {
                read.push(m.as_str());
            }
        });
        let reads = |t: &&ast::Expr| matches!(&t.kind, ast::ExprKind::Name(m) if read.contains(&m.as_str()));
        if let Some(t) = ts.iter().find(reads) {
            self.error(
                Diagnostic::error("a name cannot take a row of the array it names")
                    .at(t.span, "re-bound here")
                    .also(value.span, "read here")
                    .help("unpack into other names"),
            );
            self.mark_failed_targets(ts);
            return vec![];
        }
        let mut out = vec![];
        for (k, t) in ts.iter().enumerate() {
            out.extend(
                self.assign(t, &item(value, k as i64), &[], span)
                    .unwrap_or_default(),
            );
        }
        out
    }

    /// "cannot unpack 3 values into 2 targets"
    fn count_error(&mut self, n: usize, target: &ast::Expr, ts: &[ast::Expr], value: Span) {
        self.error(
            Diagnostic::error(format!(
                "cannot unpack {} value{} into {} target{}",
                n,
                if n == 1 { "" } else { "s" },
                ts.len(),
                if ts.len() == 1 { "" } else { "s" },
            ))
            .at(value, format!("{n} values"))
            .also(target.span, format!("{} targets", ts.len())),
        );
        self.mark_failed_targets(ts);
    }

    /// Whether `v` is a tuple: `divmod(a, b)`, `sorted((a, b))`, a call of
    /// a helper that returns a tuple.
    pub(super) fn tuple_valued(&self, v: &ast::Expr) -> bool {
        match &v.kind {
            // (`np.unravel_index(k, x.shape)`: as many values as `x` has
            // dimensions, which `value_shape` cannot see)
            ast::ExprKind::Call { func, args, .. }
                if args.len() == 2
                    && self.builtin_of(func) == Some(crate::resolve::Builtin::UnravelIndex) =>
            {
                true
            }
            ast::ExprKind::Call { .. } => self.value_shape(v).is_some(),
            _ => false,
        }
    }

    /// `v[k]` of a `tuple_valued` `v`: its element `k`, a constant.
    pub(super) fn tuple_element(&mut self, e: &ast::Expr) -> Option<TExpr> {
        let ast::ExprKind::Subscript { value, indices } = &e.kind else {
            return None;
        };
        let k = match indices.as_slice() {
            [k] => self.known_axis(k, "a tuple index"),
            _ => {
                self.error(
                    Diagnostic::error("a tuple takes one index")
                        .at(e.span, "several indices")
                        .type_error(),
                );
                None
            }
        };
        // (of a helper's nested tuple the values are flattened: an item is
        // not the value at its index)
        if let ast::ExprKind::Call { func, .. } = &value.kind {
            let nested = self
                .tuple_helper(func)
                .and_then(|(def, g)| super::inline::returned_shape(&def, g.as_ref()))
                .is_some_and(|s| s.nests());
            if nested {
                self.error(
                    Diagnostic::error(
                        "an item of a nested tuple a helper returns cannot be indexed",
                    )
                    .at(e.span, "indexed here")
                    .help("unpack it instead: `a, (b, c) = f(x)`"),
                );
                return None;
            }
        }
        let values = self.unpacked_values(value)?;
        let k = k?;
        let n = values.len() as i64;
        if k < -n || k >= n {
            self.error(
                Diagnostic::error(format!(
                    "tuple index {k} is out of range for a tuple of {n}"
                ))
                .at(indices[0].span, "out of range")
                .note("Python raises IndexError: tuple index out of range"),
            );
            return None;
        }
        values.into_iter().nth(k.rem_euclid(n) as usize)?.0
    }

    /// The values of an inlined call of a helper that returns a tuple;
    /// after an error, as many unknown values as its last `return` has.
    fn helper_values(
        &mut self,
        def: &std::sync::Arc<crate::syntax::FunctionDef>,
        globals: &std::sync::Arc<dyn crate::resolve::Resolver>,
        args: &[ast::Expr],
        span: Span,
    ) -> Vec<Lowered> {
        let failed = match super::inline::returned_shape(def, globals.as_ref()) {
            Some(shape) => vec![(None, span); shape.leaves()],
            None => vec![(None, span)],
        };
        if args.len() != def.params.len() {
            let n = def.params.len();
            let what = format!("{n} argument{}", if n == 1 { "" } else { "s" });
            self.arity_error(&def.name, &what, args.len(), span);
            return failed;
        }
        match self.inline_values(def, globals, args, span) {
            Some(values) => values.into_iter().map(|t| (Some(t), span)).collect(),
            None => failed,
        }
    }

    /// The jit helper `func` names when it returns a tuple.
    fn tuple_helper(
        &self,
        func: &ast::Expr,
    ) -> Option<(
        std::sync::Arc<crate::syntax::FunctionDef>,
        std::sync::Arc<dyn crate::resolve::Resolver>,
    )> {
        if self.is_local_root(func) {
            return None;
        }
        match self.resolver.resolve(&func.dotted_path()?) {
            crate::resolve::Resolved::Function { def, globals }
                if super::inline::returns_tuple(&def, globals.as_ref()) =>
            {
                Some((def, globals))
            }
            _ => None,
        }
    }

    /// The shape of a tuple value: a tuple literal's items (`7, qr(9,
    /// 4)`: a number and a pair), a call of a helper that returns a tuple
    /// (`inline::expr_shape`), `divmod(a, b)`, `np.modf(x)`; `None` for
    /// another value.
    pub(super) fn value_shape(&self, value: &ast::Expr) -> Option<super::inline::TupleShape> {
        let callee = |f: &ast::Expr| match (self.is_local_root(f), f.dotted_path()) {
            (false, Some(path)) => self.resolve_path(&path),
            _ => crate::resolve::Resolved::NotFound,
        };
        super::inline::expr_shape(value, &callee, 0)
    }

    pub(super) fn multi_assign(
        &mut self,
        targets: &[ast::Expr],
        value: &ast::Expr,
        labels: &[(String, Span)],
        span: Span,
    ) -> Vec<ir::Stmt> {
        // `x[:2] = x[1], x[0]`: the tuple is a sequence stored into the
        // slice, as the list `[x[1], x[0]]` is
        if let ([target], ast::ExprKind::Tuple(items)) = (targets, &value.kind) {
            if self.is_slice_target(target) {
                let list = ast::Expr::list(items.clone(), value.span);
                return self.assign(target, &list, labels, span).unwrap_or_default();
            }
        }
        if !labels.is_empty() {
            self.label_error(labels, span);
        }
        // (a slice among the targets: that error alone, before the values
        // are read as numbers, `x[i, 1:], x[i, 0] = x[i, :-1], x[i, -1]`)
        fn leaves<'a>(t: &'a ast::Expr, out: &mut Vec<&'a ast::Expr>) {
            match &t.kind {
                ast::ExprKind::Tuple(ts) => ts.iter().for_each(|t| leaves(t, out)),
                _ => out.push(t),
            }
        }
        let mut all = vec![];
        targets.iter().for_each(|t| leaves(t, &mut all));
        if let Some(slice) = all.iter().find(|t| self.is_slice_target(t)) {
            self.error(slice_in_multiple_assignment(slice.span));
            let names: Vec<ast::Expr> = all.into_iter().cloned().collect();
            self.mark_failed_targets(&names);
            return vec![];
        }
        let flat;
        let targets = match self.nested_unpack(targets, value) {
            None => targets,
            Some(Some(t)) => {
                flat = [t];
                &flat[..]
            }
            Some(None) => return vec![],
        };
        if let Some(stmts) = self.alias_multi_assign(targets, value, span) {
            return stmts;
        }
        let unpacked = match self.unpacked_values(value) {
            None if targets
                .iter()
                .all(|t| matches!(t.kind, ast::ExprKind::Tuple(_))) =>
            {
                match self.array_shape_of(value) {
                    Some((Some(shape), _)) if shape.len() > 1 => {
                        return self.unpack_rows(targets, value, shape[0], span);
                    }
                    Some((Some(shape), _)) => Some(self.array_elements(value, shape[0])),
                    _ => None,
                }
            }
            values => values,
        };
        let is_tuple = unpacked.is_some();
        let mut values: Vec<Lowered> =
            unpacked.unwrap_or_else(|| vec![(self.lower_expr(value), value.span)]);
        let mut out = vec![];
        // A value read by more than one target, or after an earlier target
        // was assigned, is computed once into a temporary first.
        let direct_first = targets.len() == 1;
        for (k, (v, vspan)) in values.iter_mut().enumerate() {
            let Some(t) = v.as_ref() else { continue };
            if is_literal(&t.e) || (k == 0 && direct_first) {
                continue;
            }
            let Some(ty) = t.e.ty.elem().filter(|_| !t.e.ty.is_array()) else {
                continue;
            };
            let name = self.temp_name(targets, k);
            let tmp = self.new_var(&name, Type::Scalar(ty), VarKind::Local, *vspan);
            let t = v.take().expect("checked above");
            // (before the statements the targets hoist: the check that a
            // Python int fits an int8 target reads the temporary)
            self.pre.push(ir::Stmt::new(
                StmtKind::Assign {
                    dst: Place::Var(tmp),
                    value: t.e,
                },
                *vspan,
            ));
            *v = Some(TExpr {
                e: ir::Expr::var(tmp, Type::Scalar(ty), *vspan),
                weak: t.weak,
            });
        }
        for target in targets {
            match &target.kind {
                ast::ExprKind::Tuple(ts) => {
                    // (a value that failed has had its error: `a, b =
                    // four(x)` of a `four` whose `return two(...)` is
                    // the mistake, `a, b = t` of a `t` that failed)
                    let failed = values.first().is_some_and(|v| v.0.is_none());
                    if !is_tuple && failed {
                        self.mark_failed_targets(ts);
                        continue;
                    }
                    if !is_tuple {
                        self.error(
                            Diagnostic::error(
                                "only a tuple (`a, b = x, y`), an array (`a, b = x[i, :2]`) or an array's shape (`H, W = x.shape`) can be unpacked",
                            )
                            .at(value.span, "not a tuple")
                            .also(target.span, format!("{} targets", ts.len())),
                        );
                        self.mark_failed_targets(ts);
                        continue;
                    }
                    if ts.len() != values.len() {
                        self.count_error(values.len(), target, ts, value.span);
                        continue;
                    }
                    for (t, (v, _)) in ts.iter().zip(&values) {
                        out.extend(self.assign_one(t, v.clone()));
                    }
                }
                _ if is_tuple => {
                    self.error(
                        Diagnostic::error("a tuple cannot be stored in one variable")
                            .at(target.span, "a single target")
                            .also(value.span, format!("{} values", values.len()))
                            .help("unpack it into as many names: `a, b = ...`"),
                    );
                    self.mark_failed_targets(std::slice::from_ref(target));
                }
                _ => {
                    let v = values.first().and_then(|v| v.0.clone());
                    out.extend(self.assign_one(target, v));
                }
            }
        }
        out
    }

    /// `a, (b, c) = f(x)` of a helper whose last statement returns a
    /// nested tuple (`return p, (q, r)`): the targets matched against it
    /// level by level, one flat tuple of targets for its flattened values
    /// (`a, b, c`); `Some(None)` after an error (a nested target of any
    /// other value is one). `None` where neither the targets nor the
    /// helper's tuple nest.
    fn nested_unpack(
        &mut self,
        targets: &[ast::Expr],
        value: &ast::Expr,
    ) -> Option<Option<ast::Expr>> {
        use super::inline::TupleShape;
        let nests = |t: &ast::Expr| {
            matches!(&t.kind, ast::ExprKind::Tuple(ts)
                if ts.iter().any(|t| matches!(t.kind, ast::ExprKind::Tuple(_))))
        };
        let shape = self.value_shape(value);
        if !targets.iter().any(nests) && !shape.as_ref().is_some_and(TupleShape::nests) {
            return None;
        }
        let mut names = vec![];
        targets.iter().for_each(|t| target_names(t, &mut names));
        let shape = match (shape, targets) {
            (Some(shape), [_]) => shape,
            _ => {
                let errors = self.sh.diags.len();
                for t in targets.iter().filter(|t| nests(t)) {
                    let ast::ExprKind::Tuple(ts) = &t.kind else {
                        continue;
                    };
                    for inner in ts
                        .iter()
                        .filter(|t| matches!(t.kind, ast::ExprKind::Tuple(_)))
                    {
                        self.error(
                            Diagnostic::error(
                                "nested tuple targets are not supported in parpy functions",
                            )
                            .at(inner.span, "nested tuple")
                            .help(
                                "unpack one level at a time: `a, b = ...` with names or \
                                 subscripts (a helper's nested tuple, `return p, (q, r)`, \
                                 unpacks into one target list: `a, (b, c) = f(x)`)",
                            ),
                        );
                    }
                }
                if self.sh.diags.len() == errors {
                    // (`a = b = f(x)` of a nested tuple)
                    self.error(
                        Diagnostic::error("a tuple cannot be stored in one variable")
                            .at(value.span, "a nested tuple")
                            .help("unpack it into one target list: `a, (b, c) = f(x)`"),
                    );
                }
                names.iter().for_each(|n| self.scope.mark_failed(n));
                return Some(None);
            }
        };
        let mut flat = vec![];
        if !self.match_shape(&targets[0], &shape, value.span, &mut flat) {
            names.iter().for_each(|n| self.scope.mark_failed(n));
            return Some(None);
        }
        Some(Some(ast::Expr {
            kind: ast::ExprKind::Tuple(flat),
            span: targets[0].span,
        }))
    }

    /// The targets of `target` matched against `shape` (see
    /// [`Self::nested_unpack`]), each target of a value pushed onto `flat`;
    /// false after an error.
    fn match_shape(
        &mut self,
        target: &ast::Expr,
        shape: &super::inline::TupleShape,
        value: Span,
        flat: &mut Vec<ast::Expr>,
    ) -> bool {
        use super::inline::TupleShape;
        match (&target.kind, shape) {
            (ast::ExprKind::Tuple(ts), TupleShape::Items(items)) if ts.len() == items.len() => ts
                .iter()
                .zip(items)
                .all(|(t, s)| self.match_shape(t, s, value, flat)),
            (ast::ExprKind::Tuple(ts), TupleShape::Items(items)) => {
                self.count_error(items.len(), target, ts, value);
                false
            }
            (ast::ExprKind::Tuple(ts), TupleShape::Leaf) => {
                self.error(
                    Diagnostic::error(format!("cannot unpack one value into {} targets", ts.len()))
                        .at(value, "this item of the returned tuple is one value")
                        .also(target.span, format!("{} targets", ts.len()))
                        .note("Python raises TypeError: cannot unpack non-iterable object")
                        .type_error(),
                );
                false
            }
            (_, TupleShape::Items(items)) => {
                self.error(
                    Diagnostic::error("a tuple cannot be stored in one variable")
                        .at(target.span, "a single target")
                        .also(value, format!("a tuple of {} values here", items.len()))
                        .help("unpack it into as many names: `a, (b, c) = ...`"),
                );
                false
            }
            (_, TupleShape::Leaf) => {
                flat.push(target.clone());
                true
            }
        }
    }

    /// The names among `targets` count as defined (with an unknown type)
    /// after an error in their assignment.
    pub(super) fn mark_failed_targets(&mut self, targets: &[ast::Expr]) {
        for t in targets {
            if let ast::ExprKind::Name(n) = &t.kind {
                self.scope.mark_failed(n);
            }
        }
    }

    /// The name of the temporary for value `k` (after its target's name).
    fn temp_name(&self, targets: &[ast::Expr], k: usize) -> String {
        let first = targets.first().map(|t| match &t.kind {
            ast::ExprKind::Tuple(ts) => ts.get(k),
            _ => Some(t),
        });
        match first.flatten().map(|t| &t.kind) {
            Some(ast::ExprKind::Name(n)) => format!("{n}_new"),
            _ => "value".to_string(),
        }
    }

    /// One target of a multiple assignment.
    fn assign_one(&mut self, target: &ast::Expr, v: Option<TExpr>) -> Option<ir::Stmt> {
        if self.is_slice_target(target) {
            self.error(slice_in_multiple_assignment(target.span));
            return None;
        }
        let span = target.span;
        self.scalar_assign(target, Value::Lowered(v))
            .map(|k| ir::Stmt::new(k, span))
    }
}

/// The error of a slice target (at `at`) of a multiple assignment.
fn slice_in_multiple_assignment(at: Span) -> Diagnostic {
    Diagnostic::error("slices cannot be targets of a multiple assignment")
        .at(at, "a slice")
        .note("Python reads the whole right side first, then assigns the targets from left to right")
        .help("assign the slice in its own statement, after copying what it overwrites and a later target reads (`last = x[i, -1]`, then `x[i, 1:] = x[i, :-1]`, then `x[i, 0] = last`)")
}

/// The names whose elements `body` may write: the arrays of element and
/// slice targets (`x[i] = ...`, `x[i, :] += ...`), names passed whole to
/// a call that is not a NumPy, `math` or Python builtin (a helper, an
/// external or callback, `parpy.atomic.*`), and the arrays behind a name
/// bound to one of them or to a row of one (`r = x[i]`; `r[j] = ...`
/// writes `x`); and the subscripts passed to such calls, with their
/// number of scalar indices. A superset: what a view of an array may not
/// assume.
fn stored_names(body: &[ast::Stmt]) -> (std::collections::HashSet<String>, Vec<(String, usize)>) {
    use ast::ExprKind as K;
    fn root(e: &ast::Expr) -> Option<&str> {
        match &e.kind {
            K::Name(n) => Some(n),
            K::Subscript { value, .. } => root(value),
            // `x.T[j, i] = v` writes `x`
            K::Attr { value, attr } if attr == "T" => root(value),
            // `np.asarray(x[i])` is the view itself
            K::Call { func, args, .. }
                if args.len() == 1
                    && func.dotted_path().and_then(|p| p.last().copied()) == Some("asarray") =>
            {
                root(&args[0])
            }
            _ => None,
        }
    }
    let pure_call = |func: &ast::Expr| match func.dotted_path().as_deref() {
        Some(["parpy", "atomic", ..]) => false,
        Some([_, _, ..]) => true,
        Some([n]) => matches!(
            *n,
            "len"
                | "sum"
                | "min"
                | "max"
                | "abs"
                | "range"
                | "enumerate"
                | "zip"
                | "reversed"
                | "float"
                | "int"
                | "bool"
                | "round"
                | "divmod"
                | "any"
                | "all"
                | ast::LIST
                | ast::CONTAINS
                | ast::IS_NONE
        ),
        _ => true,
    };
    fn scalar_indices(e: &ast::Expr) -> usize {
        match &e.kind {
            K::Subscript { value, indices } => {
                scalar_indices(value)
                    + indices
                        .iter()
                        .filter(|i| !matches!(i.kind, K::Slice { .. }))
                        .count()
            }
            _ => 0,
        }
    }
    let mut stored = std::collections::HashSet::new();
    let mut passed: Vec<(String, usize)> = vec![];
    let mut bound: Vec<(String, String)> = vec![];
    ast::for_each_stmt(body, &mut |s| {
        // element and slice targets, and what a name is bound to
        match &s.kind {
            ast::StmtKind::Assign { targets, value } => {
                for t in targets {
                    let ts = match &t.kind {
                        K::Tuple(ts) => ts.iter().collect(),
                        _ => vec![t],
                    };
                    for t in ts {
                        match (&t.kind, root(value)) {
                            (K::Name(n), Some(r)) => bound.push((n.clone(), r.to_string())),
                            (K::Subscript { .. }, _) => stored.extend(root(t).map(String::from)),
                            _ => {}
                        }
                    }
                }
            }
            ast::StmtKind::AugAssign { target, .. }
                if matches!(target.kind, K::Subscript { .. }) =>
            {
                stored.extend(root(target).map(String::from));
            }
            // the statements that write an array in place: `t.sort()`,
            // `t.fill(v)`, `np.copyto(t, v)` (`stmt.rs` `fill_statement`)
            ast::StmtKind::Expr(ast::Expr {
                kind: K::Call { func, args, .. },
                ..
            }) => match &func.kind {
                K::Attr { value, attr } if attr == "sort" || attr == "fill" => {
                    stored.extend(root(value).map(String::from));
                }
                _ if func.dotted_path().and_then(|p| p.last().copied()) == Some("copyto") => {
                    stored.extend(args.first().and_then(root).map(String::from));
                }
                _ => {}
            },
            _ => {}
        }
        // names passed whole to calls that may write them; a subscript
        // passed is a part (a row or a slice) or an element, which the
        // number of its scalar indices tells once the rank is known
        for e in s.own_exprs() {
            e.walk(&mut |x| {
                if let K::Call { func, args, .. } = &x.kind {
                    if !pure_call(func) {
                        for a in args {
                            match (&a.kind, root(a)) {
                                (K::Name(n), _) => {
                                    stored.insert(n.clone());
                                }
                                (K::Subscript { .. }, Some(r)) => {
                                    passed.push((r.to_string(), scalar_indices(a)))
                                }
                                _ => {}
                            }
                        }
                    }
                }
            });
        }
    });
    // writes through a name reach what it is bound to
    loop {
        let more: Vec<String> = bound
            .iter()
            .filter(|(n, r)| stored.contains(n) && !stored.contains(r))
            .map(|(_, r)| r.clone())
            .collect();
        if more.is_empty() {
            return (stored, passed);
        }
        stored.extend(more);
    }
}

/// The names `body` slices (`n[1:]`, `n[..., 0]`, read or written) or
/// iterates (`for v in n`, `enumerate(n)`, `zip(n, ...)`, `reversed(n)`,
/// generator clauses) or transposes (`n.T`, `n.transpose()`,
/// `np.transpose(n)`: a local array's transpose is a view of it) or takes
/// the gradient of (`np.gradient(n)`, which slices it), each
/// with its first such place; an element `n[0, k]` does not count (of an array expression, `element_of` reads it).
fn indexed_names(body: &[ast::Stmt]) -> std::collections::HashMap<String, Span> {
    use ast::ExprKind as K;
    fn iterated(iter: &ast::Expr, out: &mut std::collections::HashMap<String, Span>) {
        match &iter.kind {
            K::Name(n) => {
                out.entry(n.clone()).or_insert(iter.span);
            }
            K::Call { func, args, .. } if matches!(&func.kind, K::Name(f) if f == "enumerate" || f == "zip" || f == "reversed") => {
                args.iter().for_each(|a| iterated(a, out))
            }
            _ => {}
        }
    }
    let mut out = std::collections::HashMap::new();
    ast::for_each_stmt(body, &mut |s| {
        if let ast::StmtKind::For { iter, .. } = &s.kind {
            iterated(iter, &mut out);
        }
        for e in s.own_exprs() {
            e.walk(&mut |x| match &x.kind {
                K::Subscript { value, indices } => {
                    let sliced = indices
                        .iter()
                        .any(|i| matches!(i.kind, K::Slice { .. } | K::Ellipsis | K::None));
                    if let (K::Name(n), true) = (&value.kind, sliced) {
                        out.entry(n.clone()).or_insert(x.span);
                    }
                }
                K::Generator { clauses, .. } => {
                    clauses.iter().for_each(|c| iterated(&c.iter, &mut out))
                }
                // transposed: `t.T`, `t.transpose()`, `np.transpose(t)`,
                // `np.swapaxes(t, 0, 1)` (`permute.rs`)
                K::Attr { value, attr } if attr == "T" || attr == "mT" => {
                    if let K::Name(n) = &value.kind {
                        out.entry(n.clone()).or_insert(x.span);
                    }
                }
                // (the method's array or `np.transpose`'s argument: marking
                // the other, `np` or an array, changes nothing)
                K::Call { func, args, .. } => {
                    if let K::Attr { value, attr } = &func.kind {
                        // (and `np.gradient(t)`, which slices `t`:
                        // `gradient.rs`; the views of `slices.rs`
                        // `view_operand`, `np.diff(t)`, `t.trace()`,
                        // `np.cross(t, u)`, which read a name or subscript)
                        let permutes = crate::resolve::PermuteFn::from_name(attr).is_some();
                        let viewed = match attr.as_str() {
                            "cross" => 2,
                            "flip" | "fliplr" | "flipud" | "diff" | "diagonal" | "diag"
                            | "trace" | "roll" => 1,
                            _ => 0,
                        };
                        let marked: Vec<&ast::Expr> = match (permutes, attr == "gradient") {
                            (true, _) => std::iter::once(&**value).chain(args.first()).collect(),
                            (false, true) => args.first().into_iter().collect(),
                            _ => std::iter::once(&**value)
                                .filter(|_| viewed > 0)
                                .chain(args.iter().take(viewed))
                                .collect(),
                        };
                        for a in marked {
                            if let K::Name(n) = &a.kind {
                                out.entry(n.clone()).or_insert(x.span);
                            }
                        }
                    }
                }
                _ => {}
            });
        }
    });
    out
}

/// Adds the names that `stmts` assign (`n = ...`, `n += ...`, tuple and
/// chained targets), in nested blocks too, to `out`.
/// The names of a target, in tuples nested to any depth.
fn target_names(t: &ast::Expr, out: &mut Vec<String>) {
    match &t.kind {
        ast::ExprKind::Name(n) => out.push(n.clone()),
        ast::ExprKind::Tuple(ts) => ts.iter().for_each(|t| target_names(t, out)),
        _ => {}
    }
}

pub(super) fn assigned_names(stmts: &[ast::Stmt], out: &mut Vec<String>) {
    for s in stmts {
        match &s.kind {
            ast::StmtKind::Assign { targets, .. } => {
                targets.iter().for_each(|t| target_names(t, out))
            }
            // (a new value bound to a name of its own: that name,
            // `syntax::webs`)
            ast::StmtKind::AugAssign {
                rebind: Some(r), ..
            } => out.push(r.clone()),
            ast::StmtKind::AugAssign { target, .. } => target_names(target, out),
            ast::StmtKind::For {
                var,
                unpack,
                body,
                orelse,
                ..
            } => {
                out.push(var.clone());
                out.extend(unpack.iter().map(|(n, _)| n.clone()));
                assigned_names(body, out);
                assigned_names(orelse, out);
            }
            ast::StmtKind::While { body, orelse, .. } => {
                assigned_names(body, out);
                assigned_names(orelse, out);
            }
            ast::StmtKind::With { body, .. } => assigned_names(body, out),
            ast::StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                assigned_names(then_body, out);
                assigned_names(else_body, out);
            }
            _ => {}
        }
    }
}

/// The names a body assigns exactly once, and the integer each of those
/// locals holds when that one assignment stored a constant: a compile-time
/// value wherever one is needed (`H, W = x.shape; y[:W // 2] = ...`). A
/// read cannot see another value: there is no other assignment, and a read
/// before this one is lowered before the value is recorded.
#[derive(Default)]
pub(super) struct AssignedOnce {
    /// How many assignments the body has of each name it assigns.
    counts: std::collections::HashMap<String, usize>,
    /// How many of them are augmented (`n += v`): in place when `n` is an
    /// array, a new binding when it is a number.
    augmented: std::collections::HashMap<String, usize>,
    values: std::collections::HashMap<ir::VarId, i64>,
    /// The names whose elements the body may write (see [`stored_names`]).
    stored: std::collections::HashSet<String>,
    /// Subscripts of names passed to calls that may write them: the name
    /// and the number of scalar indices (a part of the array when fewer
    /// than its rank, else an element).
    passed: Vec<(String, usize)>,
    /// The names the body indexes (`n[...]`) or iterates (`for v in n`,
    /// `enumerate(n)`, ...), with the first place it does.
    indexed: std::collections::HashMap<String, Span>,
}

impl AssignedOnce {
    /// The int constant local `var`, assigned once, holds.
    pub(super) fn value(&self, var: ir::VarId) -> Option<i64> {
        self.values.get(&var).copied()
    }

    pub(super) fn of(body: &[ast::Stmt]) -> AssignedOnce {
        let mut all = vec![];
        assigned_names(body, &mut all);
        let mut counts = std::collections::HashMap::new();
        for n in all {
            *counts.entry(n).or_insert(0) += 1;
        }
        let (mut stored, passed) = stored_names(body);
        let mut augmented = std::collections::HashMap::new();
        ast::for_each_stmt(body, &mut |s| {
            if let ast::StmtKind::AugAssign { target, rebind, .. } = &s.kind {
                if let ast::ExprKind::Name(n) = &target.kind {
                    // (its new value is `rebind`'s first assignment)
                    if rebind.is_none() {
                        *augmented.entry(n.clone()).or_insert(0) += 1;
                    }
                    // an array's elements, when `n` is one
                    stored.insert(n.clone());
                }
            }
        });
        AssignedOnce {
            counts,
            augmented,
            values: Default::default(),
            stored,
            passed,
            indexed: indexed_names(body),
        }
    }

    /// Where the body first slices, iterates or transposes `name`, if it does.
    pub(super) fn indexes(&self, name: &str) -> Option<Span> {
        self.indexed.get(name).copied()
    }

    /// Whether the body may write elements of `name`.
    pub(super) fn stores(&self, name: &str) -> bool {
        self.stored.contains(name)
    }

    /// Whether the body may write elements of array `name` of `rank`
    /// dimensions: it stores into them, or passes the array or a part of
    /// it (not one element) to a call that may.
    pub(super) fn stores_array(&self, name: &str, rank: usize) -> bool {
        self.stores(name) || self.passed.iter().any(|(n, k)| n == name && *k < rank)
    }

    /// Makes the names of one array (the same array passed for several
    /// parameters, `f(a, a)`) share their stores: a write through one
    /// writes what the others read.
    pub(super) fn share_stores(&mut self, groups: &[Vec<String>]) {
        for g in groups {
            if g.iter().any(|n| self.stored.contains(n)) {
                self.stored.extend(g.iter().cloned());
            }
            let passed: Vec<usize> = self
                .passed
                .iter()
                .filter(|(n, _)| g.contains(n))
                .map(|(_, k)| *k)
                .collect();
            for n in g {
                for &k in &passed {
                    self.passed.push((n.clone(), k));
                }
            }
        }
    }

    /// Records `name` (a fresh one sema adds) as assigned once.
    pub(super) fn bind_once(&mut self, name: &str) {
        self.counts.insert(name.to_string(), 1);
    }

    /// Whether the body assigns `name` exactly once.
    pub(super) fn assigns_once(&self, name: &str) -> bool {
        self.counts.get(name) == Some(&1)
    }

    /// Whether the body binds `name` exactly once, its augmented
    /// assignments left out: an array's (`t += 1`) writes its elements.
    pub(super) fn binds_once(&self, name: &str) -> bool {
        let aug = self.augmented.get(name).copied().unwrap_or(0);
        self.counts.get(name).map(|c| c - aug) == Some(1)
    }

    /// Whether the body assigns `name` anywhere.
    pub(super) fn assigns(&self, name: &str) -> bool {
        self.counts.contains_key(name)
    }
}

impl Lowerer<'_, '_> {
    /// The parameters bound to one array, in groups of two or more (the
    /// same array passed twice).
    pub(super) fn aliased_params(&self) -> Vec<Vec<String>> {
        let mut by_var: std::collections::BTreeMap<ir::VarId, Vec<String>> = Default::default();
        for p in &self.scope.params {
            if let Some(b) = self.scope.get(p) {
                if self.func.var(b.var).ty.is_array() {
                    by_var.entry(b.var).or_default().push(p.clone());
                }
            }
        }
        by_var.into_values().filter(|g| g.len() > 1).collect()
    }

    /// A name for a local sema adds, bound nowhere in this function: `n_1`,
    /// `n_2`, ...
    pub(super) fn fresh_name(&mut self, n: &str) -> String {
        let base = n.trim_start_matches('(');
        let base: String = base
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        (1..)
            .map(|k| format!("{base}_{k}"))
            .find(|f| {
                self.scope.get(f).is_none() && !self.once.assigns(f) && !self.scope.is_failed(f)
            })
            .expect("an unused name")
    }

    /// Records the first assignment of local `var` (named `name`): its value
    /// when the name is assigned only there and the value is an integer
    /// constant.
    pub(super) fn note_first_assignment(&mut self, name: &str, var: ir::VarId, value: &ir::Expr) {
        if let (true, Some(c)) = (self.once.assigns_once(name), self.known_int(value)) {
            self.once.values.insert(var, c);
        }
    }

    /// The value of integer expression `e` when it is known when compiling:
    /// constants, and locals assigned once a constant (see [`AssignedOnce`]).
    pub(super) fn known_int(&self, e: &ir::Expr) -> Option<i64> {
        fn replaced(e: &mut ir::Expr, values: &std::collections::HashMap<ir::VarId, i64>) {
            if let ExprKind::Var(v) = e.kind {
                if let Some(c) = values.get(&v) {
                    e.kind = ExprKind::Int(*c);
                }
                return;
            }
            e.children_mut()
                .into_iter()
                .for_each(|c| replaced(c, values));
        }
        super::types::const_int(e).or_else(|| {
            if self.once.values.is_empty() {
                return None;
            }
            let mut e = e.clone();
            replaced(&mut e, &self.once.values);
            super::types::const_int(&e)
        })
    }

    /// A scalar parameter that the body assigns is a local variable in
    /// Python: copy it into a local on entry and bind the name to the copy.
    pub(super) fn copy_assigned_params(&mut self, body: &[ast::Stmt]) -> Vec<ir::Stmt> {
        let mut names = vec![];
        assigned_names(body, &mut names);
        let mut out = vec![];
        for p in self.scope.params.clone() {
            if !names.contains(&p) {
                continue;
            }
            let Some(b) = self.scope.get(&p) else {
                continue;
            };
            let var = self.func.var(b.var).clone();
            let Type::Scalar(_) = var.ty else { continue };
            let Some(init) = self.read_name(&p, var.span) else {
                continue;
            };
            let local = self.new_var(&p, var.ty.clone(), VarKind::Local, var.span);
            out.push(ir::Stmt::new(
                StmtKind::Assign {
                    dst: Place::Var(local),
                    value: init.e,
                },
                var.span,
            ));
            self.scope.bind(
                &p,
                super::scope::Binding {
                    var: local,
                    weak: b.weak,
                },
            );
        }
        out
    }
}

/// Does a local (or a helper's result) that holds values of type `t` on
/// other paths hold the Python int `c` stored into it? An integer type
/// must hold it exactly (Python keeps the int, parpy one type); a float
/// type holds it rounded, as it holds a Python float (the one rule of a
/// local's stores and a helper's returns).
pub(super) fn python_int_held(c: i128, t: ElemTy) -> bool {
    t.int_range().is_none_or(|(lo, hi)| (lo..=hi).contains(&c))
}

/// Does a local of type `t` hold the Python literal `e` it starts as, as
/// NumPy's first update holds it (NEP 50: a Python number takes the NumPy
/// value's type): an integer type the int exactly, a float type the
/// number rounded to its precision (not an infinity or a zero it makes of
/// it), a bool type a bool. (`t = 0.1`, then `t = x16[i]` on a path to
/// the same reads: a float16 local that starts as `np.float16(0.1)`.)
pub(super) fn literal_held(e: &ir::Expr, t: ElemTy) -> bool {
    use super::types::float_changed_by;
    match e.kind {
        ExprKind::Float(f) => t.is_float() && !float_changed_by(f, t),
        ExprKind::Int(i) if t.is_float() => {
            exact_in(e, ElemTy::F64) && !float_changed_by(i as f64, t)
        }
        ExprKind::Int(_) => exact_in(e, t),
        ExprKind::Bool(_) => t == ElemTy::Bool,
        _ => false,
    }
}

/// Is the literal `e` exactly a value of type `t`?
pub(super) fn exact_in(e: &ir::Expr, t: ElemTy) -> bool {
    match e.kind {
        ExprKind::Float(f) => match t {
            ElemTy::F16 | ElemTy::F32 => f.is_nan() || crate::ir::eval::round_float(f, t) == f,
            ElemTy::F64 => true,
            _ => false,
        },
        ExprKind::Int(i) if t.is_float() => {
            let f = i as f64;
            f as i64 == i && crate::ir::eval::round_float(f, t) == f
        }
        ExprKind::Int(i) if t.is_int() => {
            let bits = 8 * t.size() as u32;
            let (lo, hi) = if t.is_signed_int() {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            (lo..=hi).contains(&(i as i128))
        }
        _ => false,
    }
}

impl Lowerer<'_, '_> {
    /// Accumulators typed by use: a local first assigned a Python literal
    /// (`acc = 0.0`, weak) and afterwards only values of one strong type T
    /// (`acc += x[i] * w[i]` over float32 data) holds a T under NumPy's
    /// rules from its first update on. When the literal is exactly a T,
    /// typing the variable T from the start gives the same values (and
    /// saves a conversion per update). A value that is weak only because
    /// it reads the local (`t = t * 100` after `t = x[i]`) is a T then
    /// too, when it is of T's kind (int or float). Returns those
    /// variables' first assignment spans with T.
    pub(super) fn typed_by_use(&self) -> std::collections::HashMap<Span, ElemTy> {
        let mut out = std::collections::HashMap::new();
        for (id, (lit, stores, own)) in &self.acc_uses {
            let var = self.func.var(*id);
            let Some(cur) = var.ty.elem() else { continue };
            // (a Python int's float accumulator: `total = 0`, then
            // `total += x[i]`, a float from its first update on, with
            // Python ints added too: `total += 1`)
            let python_int = |s: &(ElemTy, bool)| s.1 && s.0.is_int() && cur.is_int();
            let Some(&(t, false)) = stores.iter().find(|s| !python_int(s)) else {
                continue;
            };
            let int_to_float = cur.is_int() && t.is_float();
            // (Python numbers stored too, which the local of `t` holds as
            // `t`'s, checked at their store: `t = 0.1`, `t = x16[i]` on
            // one path and `t = 0.2` on another; a Python int into an
            // integer `t` only where `t` is parpy's Python int, as its
            // value may be known only at run time)
            let python_number = |s: &(ElemTy, bool)| {
                s.1 && ((s.0.is_int() && (t.is_float() || t == self.opts.int_type))
                    || (s.0.is_float() && t.is_float())
                    || (s.0 == ElemTy::Bool && t == ElemTy::Bool))
            };
            if stores
                .iter()
                .any(|s| *s != (t, false) && !python_number(s))
                || own
                    .iter()
                    .any(|o| o.is_float() != t.is_float() && !(int_to_float && o.is_int()))
                || (t == ElemTy::Bool && cur != ElemTy::Bool)
                // (of its own type the local stays a Python number, whose
                // store into an integer array is `int(v)`, the loop's
                // rule; a Python bool that then holds NumPy bools is a
                // NumPy bool: `~f` is its logical not)
                || (t == cur && t != ElemTy::Bool)
                || (t.is_float() != cur.is_float() && !int_to_float)
                || !literal_held(lit, t)
            {
                continue;
            }
            out.insert(var.span, t);
        }
        out
    }
}

impl Lowerer<'_, '_> {
    /// A strong value of integer type `src` assigned to the integer local
    /// first assigned at `first`, of type `cur` that cannot hold it
    /// (`pred = state` after `pred = convert(0, I16)`). Python re-binds
    /// the name to the new value; parpy keeps one variable and gives it
    /// the join of both types, which holds every value assigned to it
    /// exactly. Records the join and returns true (the function is lowered
    /// again); false when there is no integer join (`u64` and `i64`: it
    /// is a float) or no more passes are allowed, and the store is checked
    /// as any other.
    pub(super) fn widen_local(&mut self, first: Span, cur: ElemTy, src: ElemTy) -> bool {
        if widens(src, cur)
            || self.sh.widen_frozen
            || !cur.is_int()
            || !src.is_int()
            || cur == ElemTy::Bool
            || src == ElemTy::Bool
        {
            return false;
        }
        let join = promote_strong(cur, src);
        if !join.is_int() {
            return false;
        }
        self.record_widening(first, join)
    }

    /// An integer (`src`; `weak`: a Python int) assigned to the bool local
    /// first assigned at `first` (`found = False`, then `found = i`).
    /// Python re-binds the name to the int, never to its truth; parpy
    /// gives the local the int's type (a Python int's: `options.int_type`)
    /// from its first assignment on, where a bool is 0 or 1 (Python's
    /// `True + 1` is 2, as NumPy's `np.True_ + 1`). Returns true when the
    /// function is lowered again.
    pub(super) fn join_bool_local(
        &mut self,
        first: Span,
        src: ElemTy,
        weak: bool,
        numpy_bool: bool,
    ) -> bool {
        if self.sh.widen_frozen || !src.is_int() || src == ElemTy::Bool {
            return false;
        }
        if numpy_bool {
            self.sh.bool_joined.insert(first);
        }
        let join = if weak { self.opts.int_type } else { src };
        self.record_widening(first, join)
    }

    /// Records that the local first assigned at `first` holds `join`
    /// (joined with what was recorded before); false when the types have
    /// no integer join.
    fn record_widening(&mut self, first: Span, join: ElemTy) -> bool {
        let join = match self.sh.widened.get(&first) {
            Some(&t) if promote_strong(t, join).is_int() => promote_strong(t, join),
            Some(_) => return false,
            None => join,
        };
        if self.sh.widened.insert(first, join) != Some(join) {
            self.sh.widen_gen += 1;
        }
        true
    }
}
