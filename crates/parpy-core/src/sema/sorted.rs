//! Python's `sorted` of a few numbers: `a, b, c = sorted((x, y, z))`,
//! `sorted([p, q], key=abs, reverse=True)[0]`.
//!
//! The argument is a tuple or list literal of at most [`MAX_ITEMS`]
//! numbers; the call is a tuple value (`assign.rs` `unpacked_values`,
//! `tuple_element`, `inline.rs` `expr_shape`). CPython's `list.sort`
//! (3.10 to 3.12) is written out as Python over hidden int locals that
//! hold a permutation of the items' positions: the items evaluated once,
//! then the key of each in order, the list reversed first under
//! `reverse=True` (and the result at the end, which keeps equal keys in
//! their order), `count_run`'s first run (strictly descending, then
//! reversed, or non-descending) and binary insertion of the rest (a
//! list this short is a single run below `minrun`). Only `<` of the keys
//! is asked, as CPython asks it, so a NaN key lands where CPython's
//! algorithm puts it. Item and key at a run-time position are chains of
//! conditional expressions, typed as `a if c else b` is.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, UnOp};
use crate::syntax::ast;
use crate::types::ScalarValue;

use super::generators::{assign, if_, stmt};
use super::{Lowerer, TExpr};

/// The most items `sorted` takes in parpy functions (the sort is
/// unrolled over their positions).
const MAX_ITEMS: usize = 8;

/// The items of `sorted`'s argument when it is a tuple or list literal.
pub(super) fn literal_items(arg: &ast::Expr) -> Option<&[ast::Expr]> {
    match &arg.kind {
        ast::ExprKind::Tuple(items) => Some(items),
        _ => arg.list_items(),
    }
}

/// `vals[0] if at == 0 else vals[1] if at == 1 else ... vals[n - 1]`.
fn chain(vals: &[String], at: &ast::Expr, span: Span) -> ast::Expr {
    let last = ast::Expr::name(&vals[vals.len() - 1], span);
    vals.iter()
        .enumerate()
        .rev()
        .skip(1)
        .fold(last, |rest, (k, v)| ast::Expr {
            kind: ast::ExprKind::IfExp {
                cond: Box::new(ast::Expr::compare(
                    BinOp::Eq,
                    at.clone(),
                    ast::Expr::int(k as i64, span),
                    span,
                )),
                then: Box::new(ast::Expr::name(v, span)),
                else_: Box::new(rest),
            },
            span,
        })
}

impl Lowerer<'_, '_> {
    /// The values of `sorted(args, **keywords)`, in order.
    pub(super) fn sorted_values(
        &mut self,
        args: &[ast::Expr],
        keywords: &[ast::Keyword],
        span: Span,
    ) -> Option<Vec<TExpr>> {
        let Some(items) = self.sorted_literal(args) else {
            self.sorted_argument_error(args, span);
            return None;
        };
        let (mut key, mut reverse) = (None, false);
        for k in keywords {
            match k.name.as_str() {
                "key" if matches!(k.value.kind, ast::ExprKind::None) => {}
                "key" => key = Some(&k.value),
                _ => reverse = self.reverse_flag(&k.value)?,
            }
        }
        let hold = |this: &mut Self, v: &ast::Expr, what: &str| -> Option<String> {
            let t = this.lower_expr(v)?;
            this.scalar_elem(&t)?;
            Some(this.stash_value(&format!("sorted_{what}"), t, v.span))
        };
        let mut values = vec![];
        for v in items {
            values.push(hold(self, v, "item")?);
        }
        let keys = match key {
            Some(f) => {
                let mut keys = vec![];
                for v in &values {
                    let call = ast::Expr::call(f.clone(), vec![ast::Expr::name(v, f.span)], f.span);
                    keys.push(hold(self, &call, "key")?);
                }
                keys
            }
            None => values.clone(),
        };
        let n = values.len();
        let slots: Vec<String> = (0..n)
            .map(|j| self.fresh_name(&format!("sorted_at{j}")))
            .collect();
        let stmts = self.sort_statements(&slots, &keys, reverse, span);
        let lowered = self.hoisted(&stmts);
        self.pre.extend(lowered);
        let mut out = vec![];
        for j in 0..n {
            let slot = if reverse { n - 1 - j } else { j };
            let at = ast::Expr::name(&slots[slot], span);
            out.push(self.lower_expr(&chain(&values, &at, span))?);
        }
        Some(out)
    }

    /// The items of `sorted`'s one argument when it is a tuple or list
    /// literal of 1 to [`MAX_ITEMS`] numbers.
    pub(super) fn sorted_literal<'a>(&self, args: &'a [ast::Expr]) -> Option<&'a [ast::Expr]> {
        match args {
            [a] => literal_items(a)
                .filter(|i| !i.is_empty() && i.len() <= MAX_ITEMS)
                .filter(|i| i.iter().all(|v| self.rank(v) == 0)),
            _ => None,
        }
    }

    /// The error for a `sorted` whose arguments `sorted_literal` refuses.
    pub(super) fn sorted_argument_error(&mut self, args: &[ast::Expr], span: Span) {
        let what = match args {
            [_] => "not a tuple or list literal of 1 to 8 numbers",
            _ => "`sorted` takes one positional argument",
        };
        self.error(
            Diagnostic::error(format!(
                "`sorted` takes a tuple or list literal of at most {MAX_ITEMS} numbers in parpy functions"
            ))
            .at(span, what)
            .help("write the numbers themselves, `a, b, c = sorted((x, y, z))`; sort an array with `np.sort`"),
        );
    }

    /// `reverse=`'s value, an int or bool known when compiling.
    fn reverse_flag(&mut self, e: &ast::Expr) -> Option<bool> {
        let t = self.lower_expr(e)?;
        match super::types::const_scalar(&t.e) {
            Some(ScalarValue::Bool(b)) => Some(b),
            Some(ScalarValue::Int(v)) => Some(v != 0),
            _ => {
                self.error(
                    Diagnostic::error("`sorted`'s `reverse=` takes a bool known when compiling in parpy functions")
                        .at(e.span, "not a bool or int constant")
                        .help("write `reverse=True` or `reverse=False`"),
                );
                None
            }
        }
    }

    /// CPython's sort of the positions in `slots` (ints, hidden) by the
    /// keys named `keys`: the slots start as the positions (reversed under
    /// `reverse`), then `count_run` and binary insertion.
    fn sort_statements(
        &mut self,
        slots: &[String],
        keys: &[String],
        reverse: bool,
        span: Span,
    ) -> Vec<ast::Stmt> {
        let n = slots.len();
        let name = |s: &str| ast::Expr::name(s, span);
        let int = |v: usize| ast::Expr::int(v as i64, span);
        let key_at = |e: ast::Expr| chain(keys, &e, span);
        let less = |a, b| ast::Expr::compare(BinOp::Lt, a, b, span);
        let flag = |b: bool| ast::Expr {
            kind: ast::ExprKind::Bool(b),
            span,
        };
        let mut out: Vec<ast::Stmt> = (0..n)
            .map(|j| assign(&slots[j], int(if reverse { n - 1 - j } else { j }), span))
            .collect();
        if n < 2 {
            return out;
        }
        // count_run: a strictly descending run, or a non-descending one
        let (desc, run, going) = (
            self.fresh_name("sorted_desc"),
            self.fresh_name("sorted_run"),
            self.fresh_name("sorted_going"),
        );
        let slot_key = |j: usize| key_at(name(&slots[j]));
        out.push(assign(&desc, less(slot_key(1), slot_key(0)), span));
        out.push(assign(&run, int(2), span));
        out.push(assign(&going, flag(true), span));
        for j in 2..n {
            let lt = self.fresh_name("sorted_lt");
            let not_lt = ast::Expr {
                kind: ast::ExprKind::Unary {
                    op: UnOp::Not,
                    arg: Box::new(name(&lt)),
                },
                span,
            };
            let goes_on = ast::Expr {
                kind: ast::ExprKind::IfExp {
                    cond: Box::new(name(&desc)),
                    then: Box::new(name(&lt)),
                    else_: Box::new(not_lt),
                },
                span,
            };
            let step = vec![
                assign(&lt, less(slot_key(j), slot_key(j - 1)), span),
                stmt(
                    ast::StmtKind::If {
                        cond: goes_on,
                        then_body: vec![assign(&run, int(j + 1), span)],
                        else_body: vec![assign(&going, flag(false), span)],
                    },
                    span,
                ),
            ];
            out.push(if_(name(&going), step, span));
        }
        // a descending run reversed in place
        let mut reversals = vec![];
        for m in 2..=n {
            let swaps = (0..m / 2)
                .map(|a| {
                    let b = m - 1 - a;
                    stmt(
                        ast::StmtKind::Assign {
                            targets: vec![ast::Expr {
                                kind: ast::ExprKind::Tuple(vec![name(&slots[a]), name(&slots[b])]),
                                span,
                            }],
                            value: ast::Expr {
                                kind: ast::ExprKind::Tuple(vec![name(&slots[b]), name(&slots[a])]),
                                span,
                            },
                        },
                        span,
                    )
                })
                .collect();
            let is_m = ast::Expr::compare(BinOp::Eq, name(&run), int(m), span);
            reversals.push(if_(is_m, swaps, span));
        }
        out.push(if_(name(&desc), reversals, span));
        // binary insertion of each later position into the sorted ones
        let (lo, hi, mid, pivot, pivot_key, probe) = (
            self.fresh_name("sorted_lo"),
            self.fresh_name("sorted_hi"),
            self.fresh_name("sorted_mid"),
            self.fresh_name("sorted_pivot"),
            self.fresh_name("sorted_pivot_key"),
            self.fresh_name("sorted_probe"),
        );
        for ok in 2..n {
            let search = stmt(
                ast::StmtKind::While {
                    cond: less(name(&lo), name(&hi)),
                    body: vec![
                        assign(
                            &mid,
                            ast::Expr::binary(
                                BinOp::Shr,
                                ast::Expr::binary(BinOp::Add, name(&lo), name(&hi), span),
                                int(1),
                                span,
                            ),
                            span,
                        ),
                        assign(&probe, chain(&slots[..ok], &name(&mid), span), span),
                        stmt(
                            ast::StmtKind::If {
                                cond: less(name(&pivot_key), key_at(name(&probe))),
                                then_body: vec![assign(&hi, name(&mid), span)],
                                else_body: vec![assign(
                                    &lo,
                                    ast::Expr::binary(BinOp::Add, name(&mid), int(1), span),
                                    span,
                                )],
                            },
                            span,
                        ),
                    ],
                    orelse: vec![],
                },
                span,
            );
            let mut insert = vec![
                assign(&lo, int(0), span),
                assign(&hi, int(ok), span),
                assign(&pivot, name(&slots[ok]), span),
                assign(&pivot_key, key_at(name(&pivot)), span),
                search,
            ];
            for j in (1..=ok).rev() {
                let moves = ast::Expr::compare(BinOp::Lt, name(&lo), int(j), span);
                insert.push(if_(
                    moves,
                    vec![assign(&slots[j], name(&slots[j - 1]), span)],
                    span,
                ));
            }
            for (j, slot) in slots.iter().enumerate().take(ok + 1) {
                let here = ast::Expr::compare(BinOp::Eq, name(&lo), int(j), span);
                insert.push(if_(here, vec![assign(slot, name(&pivot), span)], span));
            }
            let unsorted = ast::Expr::compare(BinOp::Ge, int(ok), name(&run), span);
            out.push(if_(unsorted, insert, span));
        }
        out
    }
}
