//! Generator expressions (and list comprehensions, the same loop) as
//! Python's `sum`, `any`, `all`, `max` and `min` take them: `sum(x[i, k] *
//! w[k] for k in range(K) if m[k])` becomes the
//! loop Python runs, hoisted before the statement (one `for` per clause, an
//! `if` per condition) around an accumulator:
//!
//! * `sum`: `acc = 0`, then `acc = acc + elt` (left to right, in the type
//!   `0 + elt` has: the elements' own type, as Python adds NumPy numbers);
//! * `any` / `all`: `acc = False` / `True`, set by each element's truth;
//! * `max` / `min`: `acc` starts at the first element and takes the builtin
//!   `max` / `min` of each (NumPy's NaN rule, as for two arguments). Python
//!   raises `ValueError` for an empty sequence, so every clause must be a
//!   `range` with bounds known when compiling, not empty, without `if`.
//!
//! The clause targets get fresh names (a generator's names are its own in
//! Python: an outer `k` keeps its value).

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy};
use crate::resolve::Builtin;
use crate::syntax::ast;

use super::inline::subst_expr;
use super::{Lowerer, TExpr};

fn stmt(kind: ast::StmtKind, span: Span) -> ast::Stmt {
    ast::Stmt { kind, span }
}

fn assign(name: &str, value: ast::Expr, span: Span) -> ast::Stmt {
    stmt(
        ast::StmtKind::Assign {
            targets: vec![ast::Expr::name(name, span)],
            value,
        },
        span,
    )
}

fn if_(cond: ast::Expr, then_body: Vec<ast::Stmt>, span: Span) -> ast::Stmt {
    stmt(
        ast::StmtKind::If {
            cond,
            then_body,
            else_body: vec![],
        },
        span,
    )
}

impl Lowerer<'_, '_> {
    /// `name(gen)` for builtin `b`; `gen` is an `ast::ExprKind::Generator`.
    pub(super) fn generator_call(
        &mut self,
        b: Builtin,
        name: &str,
        gen: &ast::Expr,
        span: Span,
    ) -> Option<TExpr> {
        let ast::ExprKind::Generator {
            elt, clauses, list, ..
        } = &gen.kind
        else {
            return None;
        };
        if !matches!(
            b,
            Builtin::Sum | Builtin::Any | Builtin::All | Builtin::Max | Builtin::Min
        ) || name.contains('.')
        {
            let d = if *list {
                Diagnostic::error(format!("`{name}` of a list comprehension is not supported"))
                    .at(gen.span, "a list comprehension")
                    .note("parpy does not make the array NumPy would make of the list")
                    .help("reduce an array expression (`np.sum(x[i, :] * 2.0)`), or use Python's `sum`, `any`, `all`, `max` or `min`, which add left to right")
            } else {
                Diagnostic::error(format!("`{name}` does not take a generator expression"))
                    .at(gen.span, "a generator expression")
                    .note("NumPy functions do not iterate a generator (`np.sum(g)` sums the generator object itself)")
                    .help("use Python's `sum`, `any`, `all`, `max` or `min`, or write the loop")
            };
            self.error(d);
            return None;
        }
        // fresh names for the targets, substituted into the clauses after
        // theirs and into the element
        let mut subst: Vec<(String, ast::Expr)> = vec![];
        let mut fresh_names = vec![];
        let mut renamed = vec![];
        for c in clauses {
            let mut c = c.clone();
            // the iterable sees the targets of the clauses before
            subst_expr(&mut c.iter, &subst);
            let mut fresh = |this: &mut Self, n: &str, at: Span| -> (String, Span) {
                let f = this.fresh_name(n);
                subst.retain(|(m, _)| m != n);
                subst.push((n.to_string(), ast::Expr::name(&f, at)));
                fresh_names.push(f.clone());
                (f, at)
            };
            if c.unpack.is_empty() {
                (c.var, c.var_span) = fresh(self, &c.var.clone(), c.var_span);
            } else {
                c.unpack = c.unpack.iter().map(|(n, at)| fresh(self, n, *at)).collect();
            }
            // the conditions see its own too
            c.ifs.iter_mut().for_each(|e| subst_expr(e, &subst));
            renamed.push(c);
        }
        let mut elt = (**elt).clone();
        subst_expr(&mut elt, &subst);

        let nest = |body: ast::Stmt| -> ast::Stmt {
            let mut body = vec![body];
            for c in renamed.iter().rev() {
                for cond in c.ifs.iter().rev() {
                    body = vec![if_(cond.clone(), body, span)];
                }
                body = vec![stmt(
                    ast::StmtKind::For {
                        var: c.var.clone(),
                        var_span: c.var_span,
                        unpack: c.unpack.clone(),
                        group: None,
                        iter: c.iter.clone(),
                        body,
                        orelse: vec![],
                    },
                    gen.span,
                )];
            }
            body.remove(0)
        };
        let acc = self.fresh_name(name);
        fresh_names.push(acc.clone());
        let acc_e = ast::Expr::name(&acc, span);
        let flag = |v| ast::Expr {
            kind: ast::ExprKind::Bool(v),
            span,
        };
        let (start, update) = match b {
            Builtin::Sum => {
                // Python's `0 + e0 + e1 ...` has the type of `0 + elt`
                let probe = self.fresh_name("elt");
                // (when the element has errors, the real lowering reports them)
                let (t, weak) = self
                    .probe_type(&probe, nest(assign(&probe, elt.clone(), span)))
                    .unwrap_or((self.opts.int_type, true));
                fresh_names.push(probe);
                fresh_names.iter().for_each(|n| self.scope.unbind(n));
                let start = match (t, weak) {
                    (t, true) if t.is_float() => ast::Expr::float(0.0, span),
                    (_, true) => ast::Expr::int(0, span),
                    (t, false) => {
                        let t = if t == ElemTy::Bool {
                            self.opts.int_type
                        } else {
                            t
                        };
                        self.retype.insert(gen.span, t);
                        ast::Expr::int(0, span)
                    }
                };
                let update = assign(
                    &acc,
                    ast::Expr::binary(BinOp::Add, acc_e.clone(), elt, span),
                    span,
                );
                (start, update)
            }
            Builtin::Any | Builtin::All => {
                let any = b == Builtin::Any;
                let cond = if any {
                    elt
                } else {
                    ast::Expr {
                        kind: ast::ExprKind::Unary {
                            op: crate::ir::UnOp::Not,
                            arg: Box::new(elt),
                        },
                        span,
                    }
                };
                (
                    flag(!any),
                    if_(cond, vec![assign(&acc, flag(any), span)], span),
                )
            }
            _ => {
                let first = self.first_element(name, &renamed, &elt, gen.span)?;
                let call =
                    ast::Expr::call(ast::Expr::name(name, span), vec![acc_e.clone(), elt], span);
                (first, assign(&acc, call, span))
            }
        };
        let stmts = vec![assign(&acc, start, gen.span), nest(update)];
        let lowered = self.hoisted(&stmts);
        self.pre.extend(lowered);
        let value = self.lower_expr(&acc_e);
        fresh_names.iter().for_each(|n| self.scope.unbind(n));
        value
    }

    /// `stmts` lowered as statements of their own, outside the expression
    /// being lowered (its slice context and labels).
    fn hoisted(&mut self, stmts: &[ast::Stmt]) -> crate::ir::Block {
        let slice = self.slice.take();
        let labels = self.red_labels.take();
        let target = self.name_target.take();
        let lowered = self.lower_block(stmts);
        (self.slice, self.red_labels, self.name_target) = (slice, labels, target);
        lowered
    }

    /// The type (and weakness) local `probe` gets from its one assignment in
    /// `nest`, lowered for that only: its code is dropped, and so are its
    /// errors (the real lowering reports them).
    fn probe_type(&mut self, probe: &str, nest: ast::Stmt) -> Option<(ElemTy, bool)> {
        let before = self.sh.diags.len();
        let pre = std::mem::take(&mut self.pre);
        self.hoisted(&[nest]);
        self.pre = pre;
        self.sh.diags.truncate(before);
        let b = self.scope.get(probe)?;
        Some((self.func.var(b.var).ty.elem()?, b.weak))
    }

    /// The first element of a `max` / `min` generator: every clause a
    /// non-empty `range` with known bounds and no `if`, its target at the
    /// range's start.
    fn first_element(
        &mut self,
        name: &str,
        clauses: &[ast::Clause],
        elt: &ast::Expr,
        at: Span,
    ) -> Option<ast::Expr> {
        let mut subst = vec![];
        for c in clauses {
            let first = self.first_values(c, at).filter(|_| c.ifs.is_empty());
            let Some(first) = first else {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` of a generator needs to know when compiling that it is not empty"
                    ))
                    .at(c.iter.span, "not a `range` known to be non-empty")
                    .note("Python raises ValueError for an empty sequence, which jit code cannot")
                    .note(format!(
                        "`{name}` takes generators whose clauses are `range(...)` with bounds known when compiling, tuples of numbers or arrays, without `if`"
                    ))
                    .help(format!("write the loop, starting from a value of your choice (`m = -np.inf`, then `m = {name}(m, ...)`)")),
                );
                return None;
            };
            subst.extend(first);
        }
        let mut first = elt.clone();
        subst_expr(&mut first, &subst);
        Some(first)
    }

    /// The values clause `c`'s targets take first, when it is known not to
    /// be empty: a `range(...)` with known bounds, a tuple literal (its
    /// first element, unpacked as the target says), a 1-D array or slice,
    /// `reversed`, `enumerate` or `zip` of such arrays.
    fn first_values(&mut self, c: &ast::Clause, at: Span) -> Option<Vec<(String, ast::Expr)>> {
        if let ast::ExprKind::Tuple(items) = &c.iter.kind {
            let first = items.first()?;
            return match (&first.kind, c.unpack.is_empty()) {
                (_, true) => Some(vec![(c.var.clone(), first.clone())]),
                (ast::ExprKind::Tuple(parts), false) if parts.len() == c.unpack.len() => Some(
                    c.unpack
                        .iter()
                        .map(|(n, _)| n.clone())
                        .zip(parts.iter().cloned())
                        .collect(),
                ),
                _ => None,
            };
        }
        if let Some(start) = self.nonempty_range_start(c) {
            return c
                .unpack
                .is_empty()
                .then(|| vec![(c.var.clone(), ast::Expr::int(start, at))]);
        }
        // an array's first element; `reversed`'s last, `enumerate`'s
        // `(start, a[0])`, `zip`'s `(a[0], b[0], ...)`
        let mut values = vec![];
        let mut iterables = vec![];
        let mut last = false;
        match &c.iter.kind {
            ast::ExprKind::Call { func, args, .. } => match self.builtin_of(func) {
                Some(Builtin::Reversed) if args.len() == 1 => {
                    last = true;
                    iterables.push(&args[0]);
                }
                Some(Builtin::Enumerate) if (1..=2).contains(&args.len()) => {
                    values.push(args.get(1).cloned().unwrap_or(ast::Expr::int(0, at)));
                    iterables.push(&args[0]);
                }
                Some(Builtin::Zip) => iterables.extend(args),
                _ => return None,
            },
            _ => iterables.push(&c.iter),
        }
        for a in iterables {
            if self.rank(a) != 1 {
                return None;
            }
            let n = self.array_shape(a)??.first().copied()?;
            if n == 0 {
                return None;
            }
            let k = if last { n - 1 } else { 0 };
            values.push(ast::Expr {
                kind: ast::ExprKind::Subscript {
                    value: Box::new(a.clone()),
                    indices: vec![ast::Expr::int(k, at)],
                },
                span: a.span,
            });
        }
        match (c.unpack.is_empty(), values.len()) {
            (true, 1) => Some(vec![(c.var.clone(), values.pop()?)]),
            (false, n) if n == c.unpack.len() => Some(
                c.unpack
                    .iter()
                    .map(|(n, _)| n.clone())
                    .zip(values)
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The first value of `range(...)` clause `c` when its bounds are known
    /// and it is not empty.
    fn nonempty_range_start(&mut self, c: &ast::Clause) -> Option<i64> {
        let ast::ExprKind::Call { func, args, .. } = &c.iter.kind else {
            return None;
        };
        if self.builtin_of(func) != Some(Builtin::Range) {
            return None;
        }
        let (lo, hi, step) = self.known_range(args)?;
        (super::stmt::range_len(lo, hi, step) > 0).then_some(lo)
    }
}
