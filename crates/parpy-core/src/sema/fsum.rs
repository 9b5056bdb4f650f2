//! Python's `math.fsum(items)` of a 1-D slice, a tuple or list literal or
//! a generator expression: CPython's correctly rounded float sum, bit for
//! bit, with its exceptions.
//!
//! The loop CPython's `math_fsum` runs is written as Python and hoisted
//! before the statement (as `generators.rs` hoists a generator's loop), so
//! it runs where the call does, sequentially (no label parallelizes it):
//!
//! * each item becomes a Python float (`float(item)`: an int or a float32
//!   as CPython converts it) and is added into the partials `p[0:n]`
//!   (Shewchuk's algorithm: each partial in turn summed with it into a
//!   rounded `hi` and its exact error `lo`; the non-zero errors kept, in
//!   order, then the last `hi`);
//! * a sum that leaves the finite floats from finite items raises
//!   `OverflowError("intermediate overflow in fsum")`; an infinite or NaN
//!   item is added into `special` (and an infinite one into `inf_sum`) and
//!   the partials start again: the result is then `special`, or
//!   `ValueError("-inf + inf in fsum")` when `inf_sum` is NaN;
//! * the partials are summed from the largest down while that is exact,
//!   with CPython's last step that rounds half to even across partials
//!   (`lo * 2` added when the next partial has `lo`'s sign).
//!
//! The partials live in a local float64 array of [`PARTIALS`] elements,
//! written before they are read (not filled first).

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, UnOp};
use crate::syntax::ast;

use super::generators::{assign, for_in, if_, stmt};
use super::int_math::check;
use super::{Lowerer, TExpr};

/// How many partials a sum of doubles can hold at once. They are non-zero,
/// finite and *nonadjacent*: Shewchuk's Grow-Expansion (the inner loop
/// below, with its zero partials dropped) keeps an expansion nonadjacent
/// under round-half-even (Shewchuk 1997, "Adaptive Precision
/// Floating-Point Arithmetic", Theorem 13), so between the bits of two
/// partials at least one bit position is free. A finite double's bits lie
/// in the 2098 positions from 2^-1074 to 2^1023, so there are at most
/// 2098 / 2 = 1049 partials after each item, and the inner loop writes
/// only below the count it started from (CPython grows a heap list
/// instead, which never needs more).
const PARTIALS: i64 = 1050;

const OVERFLOW: &str = "intermediate overflow in fsum";
const INF_MINUS_INF: &str = "-inf + inf in fsum";

/// The items `fsum_loop` adds.
pub(super) enum Items<'a> {
    /// Those the element takes in the loops the function puts a body in.
    Loop(&'a dyn Fn(Vec<ast::Stmt>) -> ast::Stmt, ast::Expr),
    /// Those of a tuple or list literal, each as it is.
    Literal(&'a [ast::Expr]),
}

impl Lowerer<'_, '_> {
    /// `math.fsum(seq)` of a 1-D slice or array, or a tuple or list
    /// literal (a generator: `generator_call`, which calls `fsum_loop`).
    pub(super) fn math_fsum(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let [seq] = args else {
            self.arity_error(name, "1 argument", args.len(), span);
            return None;
        };
        let items = match &seq.kind {
            ast::ExprKind::Tuple(items) => Some(items.as_slice()),
            _ => seq.list_items(),
        };
        let iter = match items {
            // (each item added in turn, as it is)
            Some(items) => return self.fsum_loop(Items::Literal(items), vec![], span),
            None if self.rank(seq) == 1 => seq.clone(),
            None => {
                let help = "sum a row at a time (`math.fsum(x[i, :])`) or write a generator (`math.fsum(x[i, j] for j in range(n))`)";
                return self.not_a_sequence(name, seq, help);
            }
        };
        let item = self.fresh_name("item");
        let each = |body: Vec<ast::Stmt>| for_in(&item, iter.clone(), body, span);
        let elt = ast::Expr::name(&item, span);
        self.fsum_loop(Items::Loop(&each, elt), vec![item.clone()], span)
    }

    /// CPython's `fsum` of `items` (see the module doc); `fresh` are the
    /// names their loops bind, unbound when done.
    pub(super) fn fsum_loop(
        &mut self,
        items: Items,
        mut fresh: Vec<String>,
        span: Span,
    ) -> Option<TExpr> {
        use ast::Expr as E;
        // (CPython's sum is of doubles: no float32 stands in for them)
        if self.opts.float_type != ElemTy::F64 {
            let d = match self.opts.backend {
                crate::options::Backend::Metal => Diagnostic::error(
                    "Metal does not support double-precision floating-point numbers (float64), but `math.fsum` sums Python floats (float64)",
                )
                .help("sum in float32 with `np.sum`, or use another backend"),
                _ => Diagnostic::error(
                    "`math.fsum` sums Python floats (float64), but `force_float_size=32` makes them float32",
                )
                .help("leave `force_float_size` unset, or sum with `np.sum`"),
            };
            self.error(d.at(span, "a float64 sum"));
            return None;
        }
        let mut local = |this: &mut Self, n: &str| {
            let f = this.fresh_name(n);
            fresh.push(f.clone());
            f
        };
        let p = local(self, "partials");
        let j = local(self, "j");
        let [n, i] = ["n", "i"].map(|v| local(self, v));
        let floats = [
            "x", "y", "t", "xsave", "hi", "lo", "special", "inf_sum", "fsum",
        ]
        .map(|v| local(self, v));
        let [x, y, t, xsave, hi, lo, special, inf_sum, result] = floats.clone();
        let name = |v: &str| E::name(v, span);
        let int = |v: i64| E::int(v, span);
        let float = |v: f64| E::float(v, span);
        let bin = |op, l, r| E::binary(op, l, r, span);
        let cmp = |op, l, r| E::compare(op, l, r, span);
        let not = |e| E {
            kind: ast::ExprKind::Unary {
                op: UnOp::Not,
                arg: Box::new(e),
            },
            span,
        };
        let bool_op = |op, values| E {
            kind: ast::ExprKind::BoolOp { op, values },
            span,
        };
        let at = |a: &str, k: E| E {
            kind: ast::ExprKind::Subscript {
                value: Box::new(name(a)),
                indices: vec![k],
            },
            span,
        };
        let set = |target: E, value: E| {
            stmt(
                ast::StmtKind::Assign {
                    targets: vec![target],
                    value,
                },
                span,
            )
        };
        let math = |f: &str, v: &str| Self::python_call(&format!("math.{f}"), vec![name(v)], span);
        let abs = |v: &str| Self::python_call("abs", vec![name(v)], span);
        let incr = |v: &str| assign(v, bin(BinOp::Add, name(v), int(1)), span);
        let decr = |v: &str| assign(v, bin(BinOp::Sub, name(v), int(1)), span);
        let if_else = |cond, then_body, else_body| {
            stmt(
                ast::StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                },
                span,
            )
        };
        // hi = x + y; lo = y - (hi - x)
        let two_sum = || {
            vec![
                assign(&hi, bin(BinOp::Add, name(&x), name(&y)), span),
                assign(
                    &lo,
                    bin(BinOp::Sub, name(&y), bin(BinOp::Sub, name(&hi), name(&x))),
                    span,
                ),
            ]
        };

        // the partials: a local array, not filled (each is written first)
        self.declare_local(&p, (&[PARTIALS], ElemTy::F64), "`math.fsum`", span, span)?;

        // adding one item
        let mut inner = vec![
            assign(&y, at(&p, name(&j)), span),
            if_(
                cmp(BinOp::Lt, abs(&x), abs(&y)),
                vec![
                    assign(&t, name(&x), span),
                    assign(&x, name(&y), span),
                    assign(&y, name(&t), span),
                ],
                span,
            ),
        ];
        inner.extend(two_sum());
        inner.push(if_(
            cmp(BinOp::Ne, name(&lo), float(0.0)),
            vec![set(at(&p, name(&i)), name(&lo)), incr(&i)],
            span,
        ));
        inner.push(assign(&x, name(&hi), span));
        let special_item = vec![
            check(
                not(math("isfinite", &xsave)),
                "OverflowError",
                OVERFLOW,
                span,
            ),
            if_(
                math("isinf", &xsave),
                vec![assign(
                    &inf_sum,
                    bin(BinOp::Add, name(&inf_sum), name(&xsave)),
                    span,
                )],
                span,
            ),
            assign(
                &special,
                bin(BinOp::Add, name(&special), name(&xsave)),
                span,
            ),
            assign(&n, int(0), span),
        ];
        let add = |elt: ast::Expr| {
            vec![
                assign(&x, Self::python_call("float", vec![elt], span), span),
                assign(&xsave, name(&x), span),
                assign(&i, int(0), span),
                for_in(
                    &j,
                    Self::range_call(vec![name(&n)], span),
                    inner.clone(),
                    span,
                ),
                assign(&n, name(&i), span),
                if_(
                    cmp(BinOp::Ne, name(&x), float(0.0)),
                    vec![if_else(
                        not(math("isfinite", &x)),
                        special_item.clone(),
                        vec![set(at(&p, name(&n)), name(&x)), incr(&n)],
                    )],
                    span,
                ),
            ]
        };

        // the partials summed from the largest down while that is exact
        let mut step = vec![
            assign(&x, name(&hi), span),
            decr(&n),
            assign(&y, at(&p, name(&n)), span),
        ];
        step.extend(two_sum());
        let below = || at(&p, bin(BinOp::Sub, name(&n), int(1)));
        let same_sign = |op| {
            bool_op(
                BinOp::And,
                vec![cmp(op, name(&lo), float(0.0)), cmp(op, below(), float(0.0))],
            )
        };
        let half_even = bool_op(
            BinOp::And,
            vec![
                cmp(BinOp::Gt, name(&n), int(0)),
                bool_op(BinOp::Or, vec![same_sign(BinOp::Lt), same_sign(BinOp::Gt)]),
            ],
        );
        let exact = vec![
            decr(&n),
            assign(&hi, at(&p, name(&n)), span),
            // (until a sum is inexact: `lo` is 0.0 before the first)
            assign(&lo, float(0.0), span),
            stmt(
                ast::StmtKind::While {
                    cond: bool_op(
                        BinOp::And,
                        vec![
                            cmp(BinOp::Eq, name(&lo), float(0.0)),
                            cmp(BinOp::Gt, name(&n), int(0)),
                        ],
                    ),
                    body: step,
                    orelse: vec![],
                },
                span,
            ),
            // CPython's half-even rounding across partials
            if_(
                half_even,
                vec![
                    assign(&y, bin(BinOp::Mul, name(&lo), float(2.0)), span),
                    assign(&x, bin(BinOp::Add, name(&hi), name(&y)), span),
                    if_(
                        cmp(BinOp::Eq, name(&y), bin(BinOp::Sub, name(&x), name(&hi))),
                        vec![assign(&hi, name(&x), span)],
                        span,
                    ),
                ],
                span,
            ),
        ];
        let finite = vec![
            assign(&hi, float(0.0), span),
            if_(cmp(BinOp::Gt, name(&n), int(0)), exact, span),
            assign(&result, name(&hi), span),
        ];
        // each local first assigned at a span of its own (sema keys a
        // local's type by its first assignment's span): spans inside the
        // call's, other than the call's own
        let len = span.hi - span.lo;
        let mut own = (0..=len)
            .flat_map(|a| (a..=len).map(move |b| (a, b)))
            .filter(|&(a, b)| (a, b) != (0, len))
            .map(|(a, b)| Span::new(span.file, span.lo + a, span.lo + b));
        let mut stmts = vec![];
        for (v, zero) in [(&n, int(0)), (&i, int(0))]
            .into_iter()
            .chain(floats.iter().map(|v| (v, float(0.0))))
        {
            let at = own.next().unwrap_or(span);
            stmts.push(assign(
                v,
                E {
                    kind: zero.kind,
                    span: at,
                },
                at,
            ));
        }
        stmts.extend([
            assign(&special, float(0.0), span),
            assign(&inf_sum, float(0.0), span),
        ]);
        match items {
            Items::Loop(each, elt) => stmts.push(each(add(elt))),
            Items::Literal(items) => items.iter().for_each(|e| stmts.extend(add(e.clone()))),
        }
        stmts.extend([if_else(
            cmp(BinOp::Ne, name(&special), float(0.0)),
            vec![
                check(
                    not(math("isnan", &inf_sum)),
                    "ValueError",
                    INF_MINUS_INF,
                    span,
                ),
                assign(&result, name(&special), span),
            ],
            finite,
        )]);
        let lowered = self.hoisted(&stmts);
        self.pre.extend(lowered);
        let value = self.lower_expr(&name(&result));
        fresh.iter().for_each(|v| self.scope.unbind(v));
        value.map(|v| TExpr { e: v.e, weak: true })
    }
}
