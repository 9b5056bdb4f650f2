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

/// Builders of the Python statements sema writes itself (also
/// `int_math.rs`).
pub(super) fn stmt(kind: ast::StmtKind, span: Span) -> ast::Stmt {
    ast::Stmt { kind, span }
}

pub(super) fn assign(name: &str, value: ast::Expr, span: Span) -> ast::Stmt {
    stmt(
        ast::StmtKind::Assign {
            targets: vec![ast::Expr::name(name, span)],
            value,
        },
        span,
    )
}

/// `for var in iter: body`.
pub(super) fn for_in(var: &str, iter: ast::Expr, body: Vec<ast::Stmt>, span: Span) -> ast::Stmt {
    stmt(
        ast::StmtKind::For {
            var: var.to_string(),
            var_span: span,
            unpack: vec![],
            group: None,
            iter,
            body,
            orelse: vec![],
        },
        span,
    )
}

pub(super) fn if_(cond: ast::Expr, then_body: Vec<ast::Stmt>, span: Span) -> ast::Stmt {
    stmt(
        ast::StmtKind::If {
            cond,
            then_body,
            else_body: vec![],
        },
        span,
    )
}

/// `body` inside the loops of generator clauses `clauses` (one `for` per
/// clause, an `if` per condition), as Python runs a generator.
/// (`at` locates the `if`s, `loops` the `for`s).
pub(super) fn nest_clauses(
    clauses: &[ast::Clause],
    body: Vec<ast::Stmt>,
    at: Span,
    loops: Span,
) -> ast::Stmt {
    let mut body = body;
    for c in clauses.iter().rev() {
        for cond in c.ifs.iter().rev() {
            body = vec![if_(cond.clone(), body, at)];
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
            loops,
        )];
    }
    body.remove(0)
}

impl Lowerer<'_, '_> {
    /// `name(gen)` for builtin `b`; `gen` is an `ast::ExprKind::Generator`.
    /// `start` is `math.prod`'s (`None` for the others).
    pub(super) fn generator_call(
        &mut self,
        b: Builtin,
        name: &str,
        gen: &ast::Expr,
        start: Option<&ast::Expr>,
        span: Span,
    ) -> Option<TExpr> {
        let ast::ExprKind::Generator {
            elt, clauses, list, ..
        } = &gen.kind
        else {
            return None;
        };
        let python_reduction = matches!(
            b,
            Builtin::Sum | Builtin::Any | Builtin::All | Builtin::Max | Builtin::Min
        ) && !name.contains('.');
        if !python_reduction && !matches!(b, Builtin::MathFsum | Builtin::MathProd) {
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
        let (renamed, elt, mut fresh_names) = self.renamed_generator(clauses, elt);
        let nest = |body: ast::Stmt| nest_clauses(&renamed, vec![body], span, gen.span);
        if b == Builtin::MathFsum {
            let each = |body: Vec<ast::Stmt>| nest_clauses(&renamed, body, span, gen.span);
            return self.fsum_loop(super::fsum::Items::Loop(&each, elt), fresh_names, span);
        }
        let acc = self.fresh_name(name);
        fresh_names.push(acc.clone());
        let acc_e = ast::Expr::name(&acc, span);
        let flag = |v| ast::Expr {
            kind: ast::ExprKind::Bool(v),
            span,
        };
        let (start, update) = match b {
            Builtin::Sum | Builtin::MathProd => {
                // Python's `0 + e0 + e1 ...` (`start * e0 * e1 ...`) has
                // the type of `0 + elt` (`start * elt`)
                let (op, start) = match b {
                    Builtin::Sum => (BinOp::Add, ast::Expr::int(0, span)),
                    _ => (
                        BinOp::Mul,
                        start.cloned().unwrap_or_else(|| ast::Expr::int(1, span)),
                    ),
                };
                let probe = self.fresh_name("elt");
                let first = ast::Expr::binary(op, start.clone(), elt.clone(), span);
                // (when the element has errors, the real lowering reports them)
                let (t, weak) = self
                    .probe_type(&probe, nest(assign(&probe, first, span)))
                    .unwrap_or((self.opts.int_type, true));
                fresh_names.push(probe);
                fresh_names.iter().for_each(|n| self.scope.unbind(n));
                let start = match (t, weak, &start.kind) {
                    // (a Python float: `0.0`, `float(start)`)
                    (t, true, ast::ExprKind::Int(v)) if t.is_float() => {
                        ast::Expr::float(*v as f64, span)
                    }
                    (t, true, _) if t.is_float() => Self::python_call("float", vec![start], span),
                    (_, true, _) => start,
                    (t, false, _) => {
                        self.retype.insert(gen.span, t);
                        start
                    }
                };
                let update = assign(&acc, ast::Expr::binary(op, acc_e.clone(), elt, span), span);
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

    /// A generator's clauses with fresh names for their targets (a
    /// generator's names are its own: an outer `k` keeps its value),
    /// substituted into the clauses after theirs and into the element; and
    /// the fresh names, which the caller unbinds when done.
    pub(super) fn renamed_generator(
        &mut self,
        clauses: &[ast::Clause],
        elt: &ast::Expr,
    ) -> (Vec<ast::Clause>, ast::Expr, Vec<String>) {
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
        let mut elt = elt.clone();
        subst_expr(&mut elt, &subst);
        (renamed, elt, fresh_names)
    }

    /// `stmts` lowered as statements of their own, outside the expression
    /// being lowered (its slice context and labels).
    pub(super) fn hoisted(&mut self, stmts: &[ast::Stmt]) -> crate::ir::Block {
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
        let (t, weak) = self.probe_types(&[probe], nest).pop()??;
        Some((t.elem()?, weak))
    }

    /// [`Self::probe_type`] of several locals `probes` assigned in `nest`.
    pub(super) fn probe_types(
        &mut self,
        probes: &[&str],
        nest: ast::Stmt,
    ) -> Vec<Option<(crate::ir::Type, bool)>> {
        let before = self.sh.diags.len();
        let pre = std::mem::take(&mut self.pre);
        self.hoisted(&[nest]);
        self.pre = pre;
        self.sh.diags.truncate(before);
        probes
            .iter()
            .map(|p| {
                let b = self.scope.get(p)?;
                Some((self.func.var(b.var).ty.clone(), b.weak))
            })
            .collect()
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
        let (n, values) = self.clause_values(c, &ast::Expr::int(0, at), at)?;
        (n > 0).then_some(values)
    }

    /// How many values clause `c` gives, and the values its targets take
    /// at step `k` (an integer expression): of a `range(...)` with bounds
    /// known when compiling, `lo + k * step`; of a 1-D array or slice
    /// `a[k]`, of `reversed(a)` `a[n - 1 - k]`, of `enumerate(a, start)`
    /// `(start + k, a[k])`, of `zip(a, b, ...)` `(a[k], b[k], ...)`. `None`
    /// for other iterables.
    fn clause_values(
        &mut self,
        c: &ast::Clause,
        k: &ast::Expr,
        at: Span,
    ) -> Option<(i64, Vec<(String, ast::Expr)>)> {
        use ast::ExprKind as K;
        let plus = |a: ast::Expr, b: ast::Expr| ast::Expr::binary(BinOp::Add, a, b, at);
        let times = |a: ast::Expr, b: ast::Expr| ast::Expr::binary(BinOp::Mul, a, b, at);
        let mut values = vec![];
        let mut iterables = vec![];
        let mut last = false;
        match &c.iter.kind {
            K::Call { func, args, .. } => match self.builtin_of(func) {
                Some(Builtin::Range) => {
                    let (lo, hi, step) = self.known_range(args)?;
                    let n = super::stmt::range_len(lo, hi, step);
                    let v = plus(
                        ast::Expr::int(lo, at),
                        times(k.clone(), ast::Expr::int(step, at)),
                    );
                    return c.unpack.is_empty().then(|| (n, vec![(c.var.clone(), v)]));
                }
                Some(Builtin::Reversed) if args.len() == 1 => {
                    last = true;
                    iterables.push(&args[0]);
                }
                Some(Builtin::Enumerate) if (1..=2).contains(&args.len()) => {
                    let start = args.get(1).cloned().unwrap_or(ast::Expr::int(0, at));
                    values.push(plus(start, k.clone()));
                    iterables.push(&args[0]);
                }
                Some(Builtin::Zip) => iterables.extend(args),
                _ => return None,
            },
            _ => iterables.push(&c.iter),
        }
        let mut len: Option<i64> = None;
        for a in &iterables {
            if self.rank(a) != 1 {
                return None;
            }
            let n = self.array_shape(a)??.first().copied()?;
            len = Some(len.map_or(n, |m| m.min(n)));
        }
        let len = len?;
        for a in iterables {
            let index = match last {
                true => ast::Expr::binary(BinOp::Sub, ast::Expr::int(len - 1, at), k.clone(), at),
                false => k.clone(),
            };
            values.push(ast::Expr {
                kind: K::Subscript {
                    value: Box::new(a.clone()),
                    indices: vec![index],
                },
                span: a.span,
            });
        }
        match (c.unpack.is_empty(), values.len()) {
            (true, 1) => Some((len, vec![(c.var.clone(), values.pop()?)])),
            (false, n) if n == c.unpack.len() => Some((
                len,
                c.unpack
                    .iter()
                    .map(|(n, _)| n.clone())
                    .zip(values)
                    .collect(),
            )),
            _ => None,
        }
    }

    /// `target = [elt for v in iter]` of a 1-D slice target (`y[i, :] =
    /// [x[i, j] * 2.0 for j in range(M)]`): NumPy's array of the list
    /// stored into the slice, as the loop `for k in range(n): target[k] =
    /// elt`, `v` the clause's `k`-th value (`clause_values`), which the
    /// statement's labels parallelize. One clause, without `if`, of a
    /// length known when compiling: the target's. `None` when `s` is not
    /// such a store, `Some(None)` after an error.
    pub(super) fn list_comprehension_store(&mut self, s: &ast::Stmt) -> Option<Option<ast::Stmt>> {
        let ast::StmtKind::Assign { targets, value } = &s.kind else {
            return None;
        };
        let (
            [target],
            ast::ExprKind::Generator {
                elt,
                clauses,
                list: true,
            },
        ) = (targets.as_slice(), &value.kind)
        else {
            return None;
        };
        if !matches!(target.kind, ast::ExprKind::Subscript { .. }) {
            return None;
        }
        let at = value.span;
        let refuse = |this: &mut Self, why: &str, help: &str| {
            this.error(
                Diagnostic::error(format!("a list comprehension stored into a slice {why}"))
                    .at(at, "this list comprehension")
                    .help(help.to_string()),
            );
            Some(None)
        };
        let [c] = clauses.as_slice() else {
            return refuse(
                self,
                "takes one `for` clause",
                "write the loops out, storing each element",
            );
        };
        if !c.ifs.is_empty() {
            return refuse(
                self,
                "takes no `if`",
                "NumPy's list would have as many elements as the conditions let through: store `np.where(cond, value, other)` instead",
            );
        }
        let shape = match self.array_shape(target) {
            Some(Some(shape)) if shape.len() == 1 => shape,
            Some(None) => return Some(None),
            _ => {
                return refuse(
                    self,
                    "needs a target of one dimension",
                    "store it into a 1-D slice (`y[i, :] = [...]`)",
                )
            }
        };
        let k = self.fresh_name("k");
        let Some((n, subst)) = self.clause_values(c, &ast::Expr::name(&k, at), at) else {
            return refuse(
                self,
                "iterates a `range` with bounds known when compiling, or 1-D arrays",
                "the length of the list must be known when compiling",
            );
        };
        if n != shape[0] {
            self.error(
                Diagnostic::error(format!(
                    "could not broadcast input array from shape ({n},) into shape ({},)",
                    shape[0]
                ))
                .at(at, format!("a list of {n}"))
                .also(target.span, format!("a slice of {}", shape[0]))
                .note("NumPy raises ValueError")
                .type_error(),
            );
            return Some(None);
        }
        let base = super::expr::flatten_subscript(target).0;
        if let ast::ExprKind::Name(b) = &base.kind {
            let (arrays, _) = self.names_read(value);
            if arrays.iter().any(|a| a == b) {
                return refuse(
                    self,
                    &format!("reads `{b}`, which it writes"),
                    "NumPy makes the whole list before it stores it: compute it into another array first",
                );
            }
        }
        let mut elt = (**elt).clone();
        super::inline::subst_expr(&mut elt, &subst);
        let store = ast::Stmt {
            kind: ast::StmtKind::Assign {
                targets: vec![ast::Expr {
                    kind: ast::ExprKind::Subscript {
                        value: Box::new(target.clone()),
                        indices: vec![ast::Expr::name(&k, at)],
                    },
                    span: target.span,
                }],
                value: elt,
            },
            span: s.span,
        };
        let range = Self::range_call(vec![ast::Expr::int(n, at)], at);
        let mut nest = for_in(&k, range, vec![store], at);
        nest.span = s.span;
        Some(Some(nest))
    }
}
