//! Arrays that only a statement of their own computes, named first.
//!
//! `np.sort(s)`, `np.argsort(s)`, `np.cumsum(s)` (and `cumprod`, a ufunc's
//! `accumulate`), `np.concatenate(parts)` are computed by a slice
//! assignment that takes the whole array (`y[i, :] = np.sort(s)`, or `t =
//! np.sort(s)`: a local array). Read anywhere else (`np.sort(s)[-3:]`,
//! `np.sort(s)[:3].sum()`, `np.cumsum(s) / n`, `for v in np.sort(s)`),
//! such a call is first assigned to a hidden name, a statement of its own
//! right before the statement that reads it (and before that statement's
//! labels), as NumPy makes the new array before the rest of the expression
//! reads it; the statement reads the name. So is a computed array that a
//! slice subscripts (`(x[i, :] * 2.0)[2:6]`, `np.flip(s)[1:]`, the array of
//! `np.gradient(x[i, :] * 2.0)`, which `gradient.rs` slices): the name is
//! sliced (a local array); and one transposed (`(a @ b).T`,
//! `np.transpose(x * 2.0)`, `(x * 2.0).transpose()`): the name's transpose
//! is a view. These two, elementwise, are computed under a copy of the
//! statement's labels when they have a dimension for each
//! (`parpy.label('i'); y[:, :] = (x + 1.0).T` computes the sum in
//! parallel too, in device memory on a GPU). So is a computed array passed
//! to a helper (`norm(x[i, :] * 2.0)`): the helper reads the name; and a
//! tuple of numbers passed to one (`cmul((a, b), z)`), as the list literal
//! a local name of a tuple is (`lists.rs` `local_tuples`).
//! A `while` condition is left as written (it is evaluated again at each
//! iteration) and so is a generator expression.
//!
//! This runs on the body before the analyses of `assign.rs` and `alias.rs`
//! see it, so the hidden names are names as any other.

use crate::resolve::Builtin;
use crate::syntax::ast::{self, Expr, ExprKind, Stmt, StmtKind};

use super::permute::Axes;
use super::Lowerer;

/// A statement naming an array first, with the array's rank where the
/// labels of the statement that reads it may parallelize it too.
type Hoisted = (Stmt, Option<usize>);

impl Lowerer<'_, '_> {
    /// `la = lb = np.zeros(3)` (names bound to a new array: a call that
    /// allocates, or any array value but a name): `la = np.zeros(3)`, then
    /// `lb = la`, as Python binds every target to the one array, so a write
    /// through `la` shows through `lb` (`alias.rs` makes `lb` a view of
    /// `la`; it was refused as a number expected).
    fn chained_new_array(&self, s: &Stmt) -> Option<Vec<Stmt>> {
        let StmtKind::Assign { targets, value } = &s.kind else {
            return None;
        };
        let names =
            targets.len() >= 2 && targets.iter().all(|t| matches!(t.kind, ExprKind::Name(_)));
        let allocates = match &value.kind {
            ExprKind::Call { func, .. } => func.dotted_path().is_some_and(|p| {
                matches!(
                    self.resolve_path(&p),
                    crate::resolve::Resolved::Allocates(_)
                )
            }),
            _ => false,
        };
        let array = allocates || self.rank(value) >= 1;
        if !names || !array || matches!(value.kind, ExprKind::Name(_)) {
            return None;
        }
        let assign = |target: &Expr, value: Expr| Stmt {
            kind: StmtKind::Assign {
                targets: vec![target.clone()],
                value,
            },
            span: s.span,
        };
        let mut out = vec![assign(&targets[0], value.clone())];
        out.extend(targets[1..].iter().map(|t| assign(t, targets[0].clone())));
        Some(out)
    }

    /// `body` with the arrays of the module doc named first, in each
    /// block.
    pub(super) fn hoist_stored_arrays(&self, body: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(body.len());
        for s in body {
            if let Some(split) = self.chained_new_array(s) {
                out.extend(self.hoist_stored_arrays(&split));
                continue;
            }
            let mut s = s.clone();
            let mut before = vec![];
            match &mut s.kind {
                StmtKind::Assign { targets, value } => {
                    for t in targets.iter_mut() {
                        self.hoist_target(t, &mut before);
                    }
                    // (the whole value is the statement's own; so is the
                    // array of a reversed one, which `stmt.rs`
                    // `reversed_store` stores backwards)
                    match &mut value.kind {
                        ExprKind::Subscript { value: v, indices } if is_reversal(indices) => {
                            self.hoist_args(v, &mut before)
                        }
                        _ => self.hoist_args(value, &mut before),
                    }
                }
                StmtKind::AugAssign { target, value, .. } => {
                    self.hoist_target(target, &mut before);
                    self.hoist_in(value, &mut before);
                }
                StmtKind::For {
                    iter, body, orelse, ..
                } => {
                    self.hoist_in(iter, &mut before);
                    *body = self.hoist_stored_arrays(body);
                    *orelse = self.hoist_stored_arrays(orelse);
                }
                StmtKind::While { body, orelse, .. } => {
                    *body = self.hoist_stored_arrays(body);
                    *orelse = self.hoist_stored_arrays(orelse);
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    self.hoist_in(cond, &mut before);
                    *then_body = self.hoist_stored_arrays(then_body);
                    *else_body = self.hoist_stored_arrays(else_body);
                }
                StmtKind::With { body, .. } => *body = self.hoist_stored_arrays(body),
                StmtKind::Return(Some(e)) | StmtKind::Expr(e) => self.hoist_in(e, &mut before),
                StmtKind::Assert { test, values, .. } => {
                    self.hoist_in(test, &mut before);
                    values
                        .iter_mut()
                        .for_each(|v| self.hoist_in(v, &mut before));
                }
                StmtKind::Return(None) | StmtKind::Pass | StmtKind::Break | StmtKind::Continue => {}
            }
            if !before.is_empty() {
                // before the labels of the statement too; an elementwise
                // array with as many dimensions as the statement has
                // labels under a copy of them
                let mut at = out.len();
                while at > 0 && self.is_label(&out[at - 1]) {
                    at -= 1;
                }
                let labels = out[at..].to_vec();
                let mut named = vec![];
                for (stmt, rank) in before {
                    if rank.is_some_and(|r| !labels.is_empty() && r >= labels.len()) {
                        named.extend(labels.iter().cloned());
                    }
                    named.push(stmt);
                }
                out.splice(at..at, named);
            }
            out.push(s);
        }
        out
    }

    /// A store target: a call it subscripts is not named (a store into a
    /// copy would be lost): `expr.rs` `lower_subscript` stores through
    /// NumPy's view (`np.flip(y)[1:] = v`, `y.reshape(3, 2)[:, 0] = v`,
    /// sema::views) or says why it cannot.
    fn hoist_target(&self, t: &mut Expr, before: &mut Vec<Hoisted>) {
        if let ExprKind::Subscript { value, indices } = &mut t.kind {
            if matches!(value.kind, ExprKind::Call { .. }) {
                self.hoist_args(value, before);
                for i in indices.iter_mut() {
                    self.hoist_in(i, before);
                }
                return;
            }
        }
        self.hoist_in(t, before);
    }

    /// Names the arrays of the module doc inside `e` and `e` itself.
    fn hoist_in(&self, e: &mut Expr, before: &mut Vec<Hoisted>) {
        self.hoist_args(e, before);
        if self.stored_only(e) {
            self.name_first(e, "stored", before, false);
        }
    }

    /// Names the arrays of the module doc inside `e`, not `e` itself; the
    /// computed array a slice subscripts.
    fn hoist_args(&self, e: &mut Expr, before: &mut Vec<Hoisted>) {
        // (a view of its operand: `(x * 2.0).transpose()`,
        // `np.swapaxes(x * 2.0, 0, 1)`)
        let permuted = matches!(e.kind, ExprKind::Call { .. }) && self.is_view_permutation(e);
        // (`np.gradient` slices its array: `np.gradient(x[i, :] * 2.0)`)
        let gradient = self
            .concatenation_of(e)
            .is_some_and(|j| matches!(j.how, super::concatenate::Join::Gradient));
        match &mut e.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::None
            | ExprKind::Ellipsis
            | ExprKind::Name(_)
            | ExprKind::Generator { .. }
            | ExprKind::Lambda { .. } => {}
            ExprKind::Attr { value, attr } => {
                self.hoist_in(value, before);
                if (attr == "T" || attr == "mT") && self.computed(value) {
                    self.name_first(value, "transposed", before, true);
                }
            }
            ExprKind::Unary { arg, .. } | ExprKind::Starred(arg) => self.hoist_in(arg, before),
            ExprKind::Subscript { value, indices } => {
                self.hoist_in(value, before);
                for i in indices.iter_mut() {
                    self.hoist_in(i, before);
                }
                let sliced = indices
                    .iter()
                    .any(|i| matches!(i.kind, ExprKind::Slice { .. }));
                if sliced && self.computed(value) {
                    self.name_first(value, "sliced", before, true);
                }
            }
            ExprKind::Slice { lo, hi, step } => {
                for b in [lo, hi, step].into_iter().flatten() {
                    self.hoist_in(b, before);
                }
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.hoist_in(lhs, before);
                self.hoist_in(rhs, before);
            }
            ExprKind::Compare { first, rest } => {
                self.hoist_in(first, before);
                rest.iter_mut().for_each(|(_, e)| self.hoist_in(e, before));
            }
            ExprKind::BoolOp { values, .. } | ExprKind::Tuple(values) => {
                values.iter_mut().for_each(|e| self.hoist_in(e, before));
            }
            ExprKind::IfExp { cond, then, else_ } => {
                self.hoist_in(cond, before);
                self.hoist_in(then, before);
                self.hoist_in(else_, before);
            }
            ExprKind::Call { func, args, .. } => {
                // (a method's array: `np.sort(s)[:3].sum()`)
                if let ExprKind::Attr { value, .. } = &mut func.kind {
                    self.hoist_in(value, before);
                }
                args.iter_mut().for_each(|a| self.hoist_in(a, before));
                // (an array computed for a helper: `norm(x[i, :] * 2.0)`,
                // as Python passes the new array)
                if self.is_helper(func) {
                    for a in args.iter_mut().filter(|a| self.computed(a)) {
                        self.name_first(a, "argument", before, true);
                    }
                    // (a tuple of numbers: `cmul((a, b), z)`, named as
                    // `t = (a, b)` is, a local name of a tuple literal:
                    // `lists.rs` `local_tuples`)
                    for a in args.iter_mut() {
                        if let ExprKind::Tuple(items) = &a.kind {
                            if !items.iter().any(|i| matches!(i.kind, ExprKind::Tuple(_))) {
                                *a = Expr::tuple_list(items.clone(), a.span);
                                self.name_first(a, "tuple", before, false);
                            }
                        }
                    }
                }
                if let Some(a) = args.first_mut().filter(|a| gradient && self.computed(a)) {
                    self.name_first(a, "sliced", before, true);
                }
                // (the views of `slices.rs` `view_operand` read a name or
                // a subscript: `np.diff(x[i, :] ** 2)`, `np.flip(x * 2.0)`,
                // `np.cross(a * 2.0, b)`)
                let viewed = match self.builtin_of(func) {
                    Some(Builtin::Cross) => 2,
                    Some(
                        Builtin::Flip(_)
                        | Builtin::Diff
                        | Builtin::Diagonal(_)
                        | Builtin::Trace
                        | Builtin::Roll,
                    ) => 1,
                    _ => 0,
                };
                for a in args.iter_mut().take(viewed) {
                    if self.computed(a) {
                        self.name_first(a, "viewed", before, true);
                    }
                }
                // (the methods among them: `(a @ b).trace()`)
                if let ExprKind::Attr { value, attr } = &mut func.kind {
                    if matches!(attr.as_str(), "trace" | "diagonal") && self.computed(value) {
                        self.name_first(value, "viewed", before, true);
                    }
                }
                let method = self.permute_fn(func).is_none();
                match &mut func.kind {
                    ExprKind::Attr { value, .. } if permuted && method && self.computed(value) => {
                        self.name_first(value, "transposed", before, true);
                    }
                    _ if permuted && !method => {
                        if let Some(a) = args.first_mut().filter(|a| self.computed(a)) {
                            self.name_first(a, "transposed", before, true);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// A call only a slice assignment of the whole array computes.
    fn stored_only(&self, e: &Expr) -> bool {
        self.sort_of(e).is_some()
            || self.cumulative_of(e).is_some()
            || self.concatenation_of(e).is_some()
    }

    /// An array computed by an expression (not a name, a subscript or an
    /// attribute such as `x.T`), which a slice cannot view: `(x * 2.0)`,
    /// `np.flip(s)`; `np.transpose(x)`, which `stmt.rs` makes a view, is
    /// not one.
    fn computed(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(_)
            | ExprKind::Subscript { .. }
            | ExprKind::Attr { .. }
            | ExprKind::Tuple(_) => false,
            ExprKind::Call { .. } => self.permutation(e).is_none() && e.list_items().is_none(),
            _ => self.rank(e) > 0,
        }
    }

    /// Replaces `e` by a hidden name (`what@offset`, no Python identifier)
    /// assigned `e` by a statement pushed on `before`; with its rank if it
    /// is `elementwise` (computed as a slice assignment that labels can
    /// parallelize).
    fn name_first(&self, e: &mut Expr, what: &str, before: &mut Vec<Hoisted>, elementwise: bool) {
        let span = e.span;
        let name = format!("{what}@{}", span.lo);
        let rank = elementwise.then(|| self.rank(e));
        let value = std::mem::replace(e, ast::Expr::name(&name, span));
        let stmt = Stmt {
            kind: StmtKind::Assign {
                targets: vec![ast::Expr::name(&name, span)],
                value,
            },
            span,
        };
        before.push((stmt, rank));
    }

    /// A call of a `@parpy.jit` (or plain Python) helper.
    pub(super) fn is_helper(&self, func: &Expr) -> bool {
        !self.is_local_root(func)
            && func.dotted_path().is_some_and(|p| {
                matches!(
                    self.resolver.resolve(&p),
                    crate::resolve::Resolved::Function { .. }
                )
            })
    }

    /// A permutation of axes that parpy views (`permute.rs`).
    fn is_view_permutation(&self, e: &Expr) -> bool {
        self.permutation(e)
            .is_some_and(|p| matches!(p.axes, Ok(Axes::Same | Axes::Reversed)))
    }

    /// `parpy.label(...)` as a statement.
    fn is_label(&self, s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::Expr(Expr {
                kind: ExprKind::Call { func, .. },
                ..
            }) => self.builtin_of(func) == Some(Builtin::Label),
            _ => false,
        }
    }
}

/// `[::-1]`.
fn is_reversal(indices: &[Expr]) -> bool {
    matches!(indices, [Expr { kind: ExprKind::Slice { lo: None, hi: None, step: Some(k) }, .. }]
        if matches!(k.kind, ExprKind::Unary { op: crate::ops::UnOp::Neg, ref arg } if matches!(arg.kind, ExprKind::Int(1))) || matches!(k.kind, ExprKind::Int(-1)))
}
