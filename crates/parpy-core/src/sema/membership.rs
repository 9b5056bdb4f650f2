//! Membership tests, `a in b` (the converter's `#in(a, b)`; `a not in b`
//! is `not #in(a, b)`), as Python computes them for what `b` may be in
//! jit code:
//!
//! - a tuple or Python list literal: `a == b0 or a == b1 or ...` (Python
//!   compares each item with `==`; no item: false);
//! - `range(lo, hi, step)` (a step known when compiling): `lo <= a < hi`
//!   (`hi < a <= lo` counting down, both on the values) and `(a - lo) %
//!   step == 0` (an integer `a` as an int64: Python's ints), which is
//!   also how a float `a` is in a range only at an integer;
//! - an array or an array expression (`np.array([...])` too: its elements
//!   of its type, `np.float32(0.1) in np.array([0.1])` is false): NumPy's
//!   `(b == a).any()`.
//!
//! The result is a Python bool.
//!
//! NumPy's `np.isin(e, t, invert=)` (`isin`) is the array rule of each
//! element of `e` (NumPy's array of it: a Python number strong, of its
//! NumPy type) against `t` (a tuple or list literal NumPy's array of its
//! items, `keywords.rs` `tuples_as_lists`): of a number `e`, `np.any(t ==
//! e)`; of an array `e`, `np.any(e[..., None] == t, axis=-1)` (`calls.rs`
//! `with_new_axis`) of a 1-D `t`, each element searched for; a NumPy
//! bool, `~` of it for `invert=True`.

use crate::diag::{Diagnostic, Span};
use crate::ir::BinOp;
use crate::resolve::Builtin;
use crate::syntax::ast::{Expr, ExprKind};

use super::{Lowerer, TExpr};

impl Lowerer<'_, '_> {
    pub(super) fn membership(&mut self, args: &[Expr], span: Span) -> Option<TExpr> {
        let [a, b] = args else {
            return None;
        };
        let test = self.membership_test(a, b, span)?;
        let t = self.lower_expr(&test)?;
        let e = self.truthy(t)?;
        Some(TExpr { e, weak: true })
    }

    /// The test `a in b` written with what jit code computes.
    fn membership_test(&mut self, a: &Expr, b: &Expr, span: Span) -> Option<Expr> {
        let eq = |item: &Expr| Expr::compare(BinOp::Eq, a.clone(), item.clone(), span);
        let items = match &b.kind {
            ExprKind::Tuple(items) => Some(&items[..]),
            // (`np.array([...])` is an array: its elements are of its type)
            _ => b.list_items().filter(|_| b.is_python_list()),
        };
        if let Some(items) = items {
            return Some(match items {
                [] => Expr {
                    kind: ExprKind::Bool(false),
                    span,
                },
                _ => Expr {
                    kind: ExprKind::BoolOp {
                        op: BinOp::Or,
                        values: items.iter().map(eq).collect(),
                    },
                    span,
                },
            });
        }
        if let ExprKind::Call { func, args, .. } = &b.kind {
            if self.builtin_of(func) == Some(Builtin::Range) {
                return self.in_range(a, args, b.span, span);
            }
        }
        if self.rank(b) > 0 {
            // NumPy's `b.__contains__(a)`
            return Some(any_equal(a.clone(), b.clone(), None, span));
        }
        self.error(
            Diagnostic::error(
                "`in` tests a tuple, a list, a `range` or an array in parpy functions",
            )
            .at(b.span, "not one of those")
            .help("write the comparisons (`a == b or a == c`)"),
        );
        None
    }

    /// `a in range(args)`.
    fn in_range(&mut self, a: &Expr, args: &[Expr], at: Span, span: Span) -> Option<Expr> {
        let zero = Expr::int(0, span);
        let (lo, hi, step) = match args {
            [hi] => (zero, hi.clone(), 1),
            [lo, hi] => (lo.clone(), hi.clone(), 1),
            [lo, hi, step] => match literal_int(step) {
                Some(s) if s != 0 => (lo.clone(), hi.clone(), s),
                _ => {
                    self.error(
                        Diagnostic::error("the step of a `range` an `in` tests must be a non-zero integer written in the code")
                            .at(step.span, "this step")
                            .help("the step's sign says which way the range counts"),
                    );
                    return None;
                }
            },
            _ => {
                self.error(
                    Diagnostic::error("`range` takes 1 to 3 arguments").at(at, "this range"),
                );
                return None;
            }
        };
        let (low, high) = match step > 0 {
            true => (
                Expr::compare(BinOp::Le, lo.clone(), a.clone(), span),
                Expr::compare(BinOp::Lt, a.clone(), hi, span),
            ),
            false => (
                Expr::compare(BinOp::Lt, hi, a.clone(), span),
                Expr::compare(BinOp::Le, a.clone(), lo.clone(), span),
            ),
        };
        // (an integer counts as a Python int does: an unsigned `a` less a
        // negative bound is no NumPy overflow)
        let from = self.probe_elem(a);
        let whole = match from {
            Some(t) if !t.is_float() => Self::numpy_call("int64", vec![a.clone()], span),
            _ => a.clone(),
        };
        let offset = Expr::binary(BinOp::Sub, whole, lo, span);
        let rem = Expr::binary(BinOp::Mod, offset, Expr::int(step, span), span);
        let on_step = Expr::compare(BinOp::Eq, rem, Expr::int(0, span), span);
        Some(Expr {
            kind: ExprKind::BoolOp {
                op: BinOp::And,
                values: vec![low, high, on_step],
            },
            span,
        })
    }
}

impl Lowerer<'_, '_> {
    /// `np.isin(element, test_elements[, assume_unique[, invert]])` (see
    /// the module doc; `assume_unique` does not change the answer).
    pub(super) fn isin(&mut self, name: &str, args: &[Expr], span: Span) -> Option<TExpr> {
        let (e, t, invert) = match args {
            [e, t] | [e, t, _] => (e, t, false),
            [e, t, _, v] => match v.kind {
                ExprKind::Bool(v) => (e, t, v),
                _ => {
                    self.error(
                        Diagnostic::error(format!(
                            "`{name}` takes `invert=True` or `invert=False` in parpy functions"
                        ))
                        .at(v.span, "not a bool literal")
                        .help("write `invert=False` and `~` of the result where it must vary"),
                    );
                    return None;
                }
            },
            _ => {
                self.arity_error(name, "2 to 4 positional arguments", args.len(), span);
                return None;
            }
        };
        let nested = |x: &Expr| matches!(x.kind, ExprKind::Tuple(_)) || x.list_items().is_some();
        if matches!(t.kind, ExprKind::Tuple(_))
            || t.list_items().is_some_and(|s| s.iter().any(nested))
        {
            // (`keywords.rs` leaves a tuple of tuples a tuple)
            self.error(
                Diagnostic::error(format!(
                    "`{name}` takes a tuple or list literal of numbers as its test elements in parpy functions"
                ))
                .at(t.span, "nested tuples or lists")
                .help("pass the test elements as an array argument"),
            );
            return None;
        }
        let e = self.strong(e);
        let t = match t.list_items() {
            Some([]) => {
                // (NumPy's empty array of float64: nothing is in it)
                let none = Expr {
                    kind: ExprKind::Bool(false),
                    span,
                };
                let same = Expr::compare(BinOp::Eq, e.clone(), e, span);
                Expr::binary(BinOp::BitAnd, same, none, span)
            }
            _ if self.rank(t) == 0 => Expr::compare(BinOp::Eq, e, self.strong(t), span),
            _ if self.rank(&e) == 0 => any_equal(e, t.clone(), None, span),
            _ if self.rank(t) > 1 => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` of an array element takes 1-D test elements in parpy functions"
                    ))
                    .at(t.span, format!("{} dimensions", self.rank(t)))
                    .help("test a row of them at a time, or `np.isin` each element of the array"),
                );
                return None;
            }
            _ => {
                let Some(column) = self.with_new_axis(&e) else {
                    self.error(
                        Diagnostic::error(format!(
                            "`{name}` takes an elementwise array expression as its element in parpy functions"
                        ))
                        .at(e.span, "not an expression of arrays elementwise (a list literal, or a reduction inside)")
                        .help("store the array first, then test it"),
                    );
                    return None;
                };
                any_equal(column, t.clone(), Some(-1), span)
            }
        };
        let test = match invert {
            true => Expr {
                kind: ExprKind::Unary {
                    op: crate::ops::UnOp::BitNot,
                    arg: Box::new(t),
                },
                span,
            },
            false => t,
        };
        let r = self.lower_expr(&test)?;
        Some(TExpr { weak: false, ..r })
    }

    /// `a` as NumPy's array of it reads it: a Python number (or a value
    /// of one, weak) as the NumPy number of its type (`np.isin(0.1, x)`
    /// compares in float64, as `np.asarray(0.1)` is).
    /// (An array is NumPy's already; where `a` does not lower, its own
    /// lowering reports why.)
    fn strong(&mut self, a: &Expr) -> Expr {
        match self.rank(a) {
            0 => match self.probe(a) {
                Some((t, true)) => Self::numpy_call(t.numpy_name(), vec![a.clone()], a.span),
                _ => a.clone(),
            },
            _ => a.clone(),
        }
    }

    /// The element type of scalar `a`, lowered as a probe (its statements
    /// and messages dropped).
    fn probe_elem(&mut self, a: &Expr) -> Option<crate::ir::ElemTy> {
        self.probe(a).map(|(t, _)| t)
    }

    /// The element type of `a` and whether it is weak, lowered as a probe
    /// (its statements and messages dropped); `None` where `a` does not
    /// lower or has no element type.
    fn probe(&mut self, a: &Expr) -> Option<(crate::ir::ElemTy, bool)> {
        let (from, diags) = (self.pre.len(), self.sh.diags.len());
        let t = self.lower_expr(a);
        self.pre.truncate(from);
        self.sh.diags.truncate(diags);
        let t = t?;
        Some((t.e.ty.elem()?, t.weak))
    }
}

/// An integer literal (`-1` too).
fn literal_int(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Unary {
            op: crate::ops::UnOp::Neg,
            arg,
        } => match arg.kind {
            ExprKind::Int(v) => v.checked_neg(),
            _ => None,
        },
        _ => None,
    }
}

/// NumPy's `np.any(b == a)`, along `axis` when given: whether an element
/// of the array `b` equals `a` (NumPy's promotion of the two decides how).
fn any_equal(a: Expr, b: Expr, axis: Option<i64>, span: Span) -> Expr {
    let mut args = vec![Expr::compare(BinOp::Eq, b, a, span)];
    args.extend(axis.map(|k| Expr::int(k, span)));
    Lowerer::numpy_call("any", args, span)
}
