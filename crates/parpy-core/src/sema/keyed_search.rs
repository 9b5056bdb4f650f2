//! Python's `max(iterable, key=f, default=d)` / `min(...)` of one iterable:
//! a `range` (of run-time bounds too), a 1-D slice or array, a tuple, or a
//! generator expression. CPython's loop (`min_max` in `bltinmodule.c`),
//! hoisted before the statement and run in order (a label on it is an
//! error, as on `np.argmax`):
//!
//! ```text
//! found = False
//! for v in iterable:            # a generator's own clauses
//!     it = v                    # (its element)
//!     k = f(it)                 # each key computed once
//!     if not found or k > best_key:     # `<` for min
//!         best, best_key, found = it, k, True
//! ```
//!
//! so the first of equal keys wins and a NaN key neither replaces nor, if
//! first, is replaced. No items: CPython's ValueError ("max() iterable
//! argument is empty"), or `d` with `default=`, the result then typed as
//! `best if found else d` is. `best` and `best_key` start at a zero of the
//! types the item and the key have (`probe_types`). Without `key=` the key
//! is the item itself.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, Stmt, StmtKind, UnOp};
use crate::resolve::Builtin;
use crate::syntax::ast;

use super::generators::{assign, if_, nest_clauses};
use super::{Lowerer, TExpr};

impl Lowerer<'_, '_> {
    /// `name(iterable, key=key, default=default)` for `b` Python's `max`
    /// or `min` (see the module doc).
    pub(super) fn keyed_search(
        &mut self,
        b: Builtin,
        name: &str,
        iterable: &ast::Expr,
        (key, default): (Option<&ast::Expr>, Option<&ast::Expr>),
        span: Span,
    ) -> Option<TExpr> {
        self.sequential_only(name)?;
        // (Python evaluates the default before it iterates)
        let default = match default {
            Some(d) => {
                let t = self.lower_expr(d)?;
                self.scalar_elem(&t)?;
                let hidden = self.stash_value(&format!("{name}_default"), t, d.span);
                Some(ast::Expr::name(&hidden, d.span))
            }
            None => None,
        };
        // the iterable as a generator of one clause, `(v for v in it)`
        let (clauses, elt, mut fresh_names) = match &iterable.kind {
            ast::ExprKind::Generator { elt, clauses, .. } => self.renamed_generator(clauses, elt),
            _ => {
                let v = self.fresh_name("each");
                let c = ast::Clause::over(&v, iterable.clone());
                (vec![c], ast::Expr::name(&v, iterable.span), vec![v])
            }
        };
        // (names unbound until the loop is lowered: each distinct from
        // those taken before it)
        let fresh = |this: &mut Self, names: &mut Vec<String>, n: &str| {
            let mut f = this.fresh_name(n);
            for k in 1.. {
                if !names.contains(&f) {
                    break;
                }
                f = this.fresh_name(&format!("{n}{k}"));
            }
            names.push(f.clone());
            f
        };
        let item = fresh(self, &mut fresh_names, "item");
        let k = fresh(self, &mut fresh_names, "key");
        let best = fresh(self, &mut fresh_names, name);
        let best_key = fresh(self, &mut fresh_names, "best_key");
        let found = fresh(self, &mut fresh_names, "found");
        let name_at = |n: &str| ast::Expr::name(n, span);
        // each local's assignments at a span of its own, empty (no
        // expression's), which `retype` and widening key: `item`, `k`,
        // `best`, `best_key`, `found` at the call's first offsets
        let locals = [&item, &k, &best, &best_key, &found];
        let target_of = |n: &str| {
            let at = locals.iter().position(|l| *l == n).unwrap_or(0) as u32;
            let lo = span.lo + at.min(span.hi.saturating_sub(span.lo));
            Span { lo, hi: lo, ..span }
        };
        let set = |n: &str, value: ast::Expr| assign(n, value, target_of(n));
        let key_of = |item: ast::Expr| match key {
            Some(f) => super::calls::key_call(f, item),
            None => item,
        };
        let item_and_key = vec![set(&item, elt.clone()), set(&k, key_of(name_at(&item)))];
        // the types of the item and its key, to start `best` and
        // `best_key` from (the real lowering reports what fails here)
        let probe = nest_clauses(&clauses, item_and_key.clone(), iterable.span, iterable.span);
        let types = self.probe_types(&[&item, &k], probe);
        fresh_names.iter().for_each(|n| self.scope.unbind(n));
        let mut start = vec![];
        for (var, t) in [best.as_str(), best_key.as_str()].into_iter().zip(types) {
            let number = t.as_ref().map(|(t, _)| !t.is_array());
            let Some((t, weak)) = t
                .and_then(|(t, weak)| Some((t.elem()?, weak)))
                .filter(|_| number == Some(true))
            else {
                // (an item or key that is no number: its lowering says why)
                let before = self.sh.diags.len();
                let pre = std::mem::take(&mut self.pre);
                let probe =
                    nest_clauses(&clauses, item_and_key.clone(), iterable.span, iterable.span);
                if number.is_none() {
                    self.hoisted(&[probe]);
                }
                self.pre = pre;
                fresh_names.iter().for_each(|n| self.scope.unbind(n));
                if self.sh.diags.len() == before {
                    self.error(
                        Diagnostic::error(format!(
                            "`{name}` of an iterable takes numbers, and a key that gives numbers"
                        ))
                        .at(iterable.span, "not an iterable of numbers")
                        .help(format!("pass a `range`, a 1-D slice or a generator of numbers: `{name}(range(n), key=f)`")),
                    );
                }
                return None;
            };
            let zero = match (t, weak) {
                (ElemTy::Bool, true) => ast::Expr {
                    kind: ast::ExprKind::Bool(false),
                    span,
                },
                (t, true) if t.is_float() => ast::Expr::float(0.0, span),
                (t, _) => {
                    if !weak {
                        self.retype.insert(target_of(var), t);
                    }
                    ast::Expr::int(0, span)
                }
            };
            start.push(set(var, zero));
        }
        let op = match b {
            Builtin::Max => BinOp::Gt,
            _ => BinOp::Lt,
        };
        let better = ast::Expr {
            kind: ast::ExprKind::BoolOp {
                op: BinOp::Or,
                values: vec![
                    ast::Expr {
                        kind: ast::ExprKind::Unary {
                            op: UnOp::Not,
                            arg: Box::new(name_at(&found)),
                        },
                        span,
                    },
                    ast::Expr {
                        kind: ast::ExprKind::Compare {
                            first: Box::new(name_at(&k)),
                            rest: vec![(op, name_at(&best_key))],
                        },
                        span,
                    },
                ],
            },
            span,
        };
        let flag = |v| ast::Expr {
            kind: ast::ExprKind::Bool(v),
            span,
        };
        let replace = vec![
            set(&best, name_at(&item)),
            set(&best_key, name_at(&k)),
            set(&found, flag(true)),
        ];
        let mut body = item_and_key;
        body.push(if_(better, replace, span));
        start.push(set(&found, flag(false)));
        start.push(nest_clauses(&clauses, body, iterable.span, iterable.span));
        let lowered = self.hoisted(&start);
        self.pre.extend(lowered);
        let value = match default {
            None => {
                let some = self.lower_expr(&name_at(&found));
                let message = super::masks::empty_extreme_message(b);
                if let (Some(some), Some(message)) = (some, message) {
                    let check = Expr::assert(some.e, Some(message.to_string()), "ValueError", span);
                    self.pre.push(Stmt::new(StmtKind::Expr(check), span));
                }
                self.lower_expr(&name_at(&best))
            }
            Some(d) => self.lower_expr(&ast::Expr {
                kind: ast::ExprKind::IfExp {
                    cond: Box::new(name_at(&found)),
                    then: Box::new(name_at(&best)),
                    else_: Box::new(d),
                },
                span,
            }),
        };
        fresh_names.iter().for_each(|n| self.scope.unbind(n));
        value
    }
}
