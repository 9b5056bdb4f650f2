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
            let any = Self::numpy_call(
                "any",
                vec![Expr::compare(BinOp::Eq, b.clone(), a.clone(), span)],
                span,
            );
            return Some(any);
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
    /// The element type of scalar `a`, lowered as a probe (its statements
    /// and messages dropped).
    fn probe_elem(&mut self, a: &Expr) -> Option<crate::ir::ElemTy> {
        let (from, diags) = (self.pre.len(), self.sh.diags.len());
        let t = self.lower_expr(a);
        self.pre.truncate(from);
        self.sh.diags.truncate(diags);
        t?.e.ty.elem()
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
