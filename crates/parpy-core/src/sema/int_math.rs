//! Python's integer functions of the `math` module: `math.factorial(n)`,
//! `math.comb(n, k)`, `math.perm(n, k=None)` and `math.isqrt(n)`, of
//! Python ints (bools, NumPy integers: what has `__index__`), each a Python
//! int. Python's ints have no bound; parpy's are its int type (int64; int32
//! with `force_int_size=32` and on Metal): a result past it is an
//! `OverflowError` where Python would give a bigger int.
//!
//! `n.bit_length()` of a Python int is here too: the bits of `|n|`
//! (counted by shifts; the most negative int has all of them); and
//! Python's `pow(a, b, m)` of Python ints: square and multiply modulo
//! `|m|` (a negative `b` through the inverse of `a`, by Euclid's extended
//! algorithm, Python's `ValueError` where there is none; a negative `m`
//! gives a result in `(m, 0]`), each product `x * y % c` directly where
//! `c * c` fits the int, else by doubling and adding modulo `c`
//! (`mul_mod`), which never leaves `[0, c)`.
//!
//! * Arguments known when compiling: the value computed here exactly
//!   (`fold`), or the located error of Python's `ValueError` (a negative
//!   argument) or of the overflow.
//! * Otherwise: the loop CPython's algorithm runs, written as Python and
//!   hoisted before the statement (as `generators.rs` hoists a generator's
//!   loop), so it runs only where the call does; its checks raise Python's
//!   `ValueError` where Python does, and `OverflowError` as soon as a
//!   partial product leaves the int type (the products only grow), which
//!   also ends the loop. `comb` multiplies `C(n - k + j - 1, j - 1)` by
//!   `(n - k + j) / j` with the common factor of the partial result and `j`
//!   divided out first, so no partial product is larger than the result;
//!   `isqrt` corrects the float square root by whole steps, comparing
//!   `r + 1` with `n // (r + 1)` (no square that could overflow).

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, Expr};
use crate::resolve::IntFn;
use crate::syntax::ast;

use super::generators::{assign, if_, stmt};
use super::{Lowerer, TExpr};

/// Python's `ValueError` messages for a negative argument.
const NEGATIVE_N: &str = "n must be a non-negative integer";
const NEGATIVE_K: &str = "k must be a non-negative integer";
const NEGATIVE_FACTORIAL: &str = "factorial() not defined for negative values";
const NEGATIVE_ISQRT: &str = "isqrt() argument must be nonnegative";
const ZERO_MODULUS: &str = "pow() 3rd argument cannot be 0";
const NOT_INVERTIBLE: &str = "base is not invertible for the given modulus";

/// What Python raises for arguments known when compiling, or the result.
type Folded = Result<i64, (&'static str, String)>;

/// `f` of `args` exactly, the result at most `max`.
fn fold(f: IntFn, args: &[i64], max: i64, overflow: &str) -> Folded {
    let value_error = |m: &str| Err(("ValueError", m.to_string()));
    let too_large = || Err(("OverflowError", overflow.to_string()));

    let (n, k) = (args[0] as i128, args.get(1).map(|k| *k as i128));
    match f {
        IntFn::PowMod => {
            let (b, m) = (args[1] as i128, args[2] as i128);
            if m == 0 {
                return value_error(ZERO_MODULUS);
            }
            let c = m.abs();
            let mut a = n.rem_euclid(c);
            if b < 0 {
                let (g, x) = inverse(a, c);
                if g != 1 {
                    return value_error(NOT_INVERTIBLE);
                }
                a = x.rem_euclid(c);
            }
            let (mut e, mut r) = (b.abs(), 1 % c);
            while e > 0 {
                if e & 1 == 1 {
                    r = r * a % c;
                }
                a = a * a % c;
                e >>= 1;
            }
            Ok((if m < 0 && r != 0 { r - c } else { r }) as i64)
        }
        IntFn::BitLength => Ok(128 - n.unsigned_abs().leading_zeros() as i64),
        IntFn::Isqrt => {
            if n < 0 {
                return value_error(NEGATIVE_ISQRT);
            }
            let mut r = (n as f64).sqrt() as i128;
            while r * r > n {
                r -= 1;
            }
            while (r + 1) * (r + 1) <= n {
                r += 1;
            }
            Ok(r as i64)
        }
        IntFn::Factorial | IntFn::Perm | IntFn::Comb => {
            if n < 0 {
                return value_error(if f == IntFn::Factorial {
                    NEGATIVE_FACTORIAL
                } else {
                    NEGATIVE_N
                });
            }
            let k = k.unwrap_or(n);
            if k < 0 {
                return value_error(NEGATIVE_K);
            }
            if k > n {
                return Ok(0);
            }
            let mut r: i128 = 1;
            if f == IntFn::Comb {
                let k = k.min(n - k);
                for j in 1..=k {
                    r = r * (n - k + j) / j;
                    if r > max as i128 {
                        return too_large();
                    }
                }
            } else {
                for j in 0..k {
                    r *= n - j;
                    if r > max as i128 {
                        return too_large();
                    }
                }
            }
            Ok(r as i64)
        }
    }
}

/// The gcd of `a` and `c` (`0 <= a < c`) and the coefficient `x` of `a`
/// in it (Euclid's extended algorithm, as the run-time loop does).
fn inverse(a: i128, c: i128) -> (i128, i128) {
    let (mut r0, mut r1, mut s0, mut s1) = (a, c, 1, 0);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (s0, s1) = (s1, s0 - q * s1);
    }
    (r0, s0)
}

/// `assert cond` raising `exception` with `message`.
pub(super) fn check(cond: ast::Expr, exception: &str, message: &str, span: Span) -> ast::Stmt {
    stmt(
        ast::StmtKind::Assert {
            test: cond,
            msg: Some(message.to_string()),
            values: vec![],
            exception: exception.to_string(),
            printf: false,
        },
        span,
    )
}

/// `while ok and j <op> k: body` (`ok` and `j` names).
fn while_ok(ok: &str, cond: ast::Expr, body: Vec<ast::Stmt>, span: Span) -> ast::Stmt {
    let both = ast::Expr {
        kind: ast::ExprKind::BoolOp {
            op: BinOp::And,
            values: vec![ast::Expr::name(ok, span), cond],
        },
        span,
    };
    stmt(
        ast::StmtKind::While {
            cond: both,
            body,
            orelse: vec![],
        },
        span,
    )
}

impl Lowerer<'_, '_> {
    /// Python's `math.<f>(args)` (see the module doc).
    pub(super) fn math_int(
        &mut self,
        f: IntFn,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let (fewest, most) = f.arity();
        if !(fewest..=most).contains(&args.len()) {
            let want = match (fewest, most) {
                (1, 1) => "1 argument".to_string(),
                (a, b) if a == b => format!("{a} arguments"),
                (a, b) => format!("{a} or {b} arguments"),
            };
            self.arity_error(name, &want, args.len(), span);
            return None;
        }
        let int = self.opts.int_type;
        let max = int.int_range().map_or(i64::MAX, |(_, hi)| hi as i64);
        let overflow = format!(
            "the result of `{name}` does not fit in an {} (parpy's Python int)",
            int.numpy_name()
        );
        // each argument a Python int, evaluated once
        let mut values = vec![];
        for a in args {
            let v = self.python_int_operand(name, a);
            // (NumPy's integers take no modulus: `pow(np.int64(2), 3, 5)`
            // is a TypeError)
            if let Some(v) = v.as_ref().filter(|v| f == IntFn::PowMod && !v.weak) {
                let t = self.scalar_elem(v)?;
                self.error(
                    Diagnostic::error(format!(
                        "`pow` with a modulus takes Python ints: unsupported operand type 'numpy.{}' (a TypeError in Python)",
                        t.numpy_name()
                    ))
                    .at(a.span, format!("a numpy.{}", t.numpy_name()))
                    .help("convert it first: `int(v)`")
                    .type_error(),
                );
                return None;
            }
            values.push(v.map(|v| (v, a)));
        }
        let mut ints = vec![];
        for v in values {
            let (v, a) = v?;
            let e = self.python_int_of(v, a, a.span);
            ints.push(super::types::convert(e, int));
        }
        let known: Option<Vec<i64>> = ints.iter().map(|e| self.known_int(e)).collect();
        if let Some(known) = known {
            return match fold(f, &known, max, &overflow) {
                Ok(v) => Some(TExpr {
                    e: Expr::int(v, int, span),
                    weak: true,
                }),
                Err((exception, message)) => {
                    self.error(
                        Diagnostic::error(format!("`{name}` raises {exception}: {message}"))
                            .at(span, "arguments known when compiling")
                            .raises(exception),
                    );
                    None
                }
            };
        }
        let names: Vec<String> = ints
            .into_iter()
            .map(|e| self.stash_named(&format!("{}_arg", f.name()), e, span))
            .collect();
        let result = self.fresh_name(f.name());
        let stmts = self.int_fn_loop(f, &names, &result, max, &overflow, span);
        let lowered = self.hoisted(&stmts);
        self.pre.extend(lowered);
        let value = self.lower_expr(&ast::Expr::name(&result, span));
        value.map(|v| TExpr { e: v.e, weak: true })
    }

    /// The Python statements that leave `f` of the Python ints named
    /// `args` in the local `result`.
    fn int_fn_loop(
        &mut self,
        f: IntFn,
        args: &[String],
        result: &str,
        max: i64,
        overflow: &str,
        span: Span,
    ) -> Vec<ast::Stmt> {
        use ast::Expr as E;
        let name = |n: &str| E::name(n, span);
        let int = |v: i64| E::int(v, span);
        let bin = |op, l, r| E::binary(op, l, r, span);
        let n = &args[0];
        let ge0 = |v: &str| ast::Expr::compare(BinOp::Ge, name(v), int(0), span);
        if f == IntFn::PowMod {
            return self.pow_mod_loop(args, result, max, span);
        }
        if f == IntFn::BitLength {
            // v = |n| (the most negative int stays negative: all the bits)
            let v = self.fresh_name("v");
            let bits = int((max as u64).count_ones() as i64 + 1);
            let neg = |e| ast::Expr {
                kind: ast::ExprKind::Unary {
                    op: crate::ir::UnOp::Neg,
                    arg: Box::new(e),
                },
                span,
            };
            let count = stmt(
                ast::StmtKind::While {
                    cond: ast::Expr::compare(BinOp::Gt, name(&v), int(0), span),
                    body: vec![
                        assign(&v, bin(BinOp::Shr, name(&v), int(1)), span),
                        assign(result, bin(BinOp::Add, name(result), int(1)), span),
                    ],
                    orelse: vec![],
                },
                span,
            );
            let negative = ast::Expr::compare(BinOp::Lt, name(&v), int(0), span);
            return vec![
                assign(&v, name(n), span),
                if_(
                    negative.clone(),
                    vec![assign(&v, neg(name(&v)), span)],
                    span,
                ),
                assign(result, int(0), span),
                stmt(
                    ast::StmtKind::If {
                        cond: negative,
                        then_body: vec![assign(result, bits, span)],
                        else_body: vec![count],
                    },
                    span,
                ),
            ];
        }
        if f == IntFn::Isqrt {
            // r = int(sqrt(float(n))), then corrected by whole steps
            let float = Self::python_call("float", vec![name(n)], span);
            let root = Self::numpy_call("sqrt", vec![float], span);
            let step = bin(BinOp::Add, name(result), int(1));
            return vec![
                check(ge0(n), "ValueError", NEGATIVE_ISQRT, span),
                assign(result, Self::python_call("int", vec![root], span), span),
                stmt(
                    ast::StmtKind::While {
                        cond: ast::Expr::compare(
                            BinOp::Gt,
                            bin(BinOp::Mul, name(result), name(result)),
                            name(n),
                            span,
                        ),
                        body: vec![assign(result, bin(BinOp::Sub, name(result), int(1)), span)],
                        orelse: vec![],
                    },
                    span,
                ),
                stmt(
                    ast::StmtKind::While {
                        cond: ast::Expr::compare(
                            BinOp::Le,
                            step.clone(),
                            bin(BinOp::FloorDiv, name(n), step.clone()),
                            span,
                        ),
                        body: vec![assign(result, step, span)],
                        orelse: vec![],
                    },
                    span,
                ),
            ];
        }
        let k = self.fresh_name("k");
        let (j, ok) = (self.fresh_name("j"), self.fresh_name("ok"));
        let mut out = vec![];
        if f == IntFn::Factorial {
            out.push(check(ge0(n), "ValueError", NEGATIVE_FACTORIAL, span));
            out.push(assign(&k, name(n), span));
        } else {
            out.push(check(ge0(n), "ValueError", NEGATIVE_N, span));
            let given = args.get(1).map_or(name(n), |k| name(k));
            out.push(assign(&k, given, span));
            out.push(check(ge0(&k), "ValueError", NEGATIVE_K, span));
        }
        let limit = |m: E| bin(BinOp::FloorDiv, int(max), m);
        let body = if f == IntFn::Comb {
            // k = min(k, n - k); each step r = r // g * ((n - k + j) // (j // g))
            let g = self.fresh_name("g");
            let m = self.fresh_name("m");
            let gcd = Self::python_call("math.gcd", vec![name(result), name(&j)], span);
            let n_k = bin(BinOp::Sub, name(n), name(&k));
            let r_g = bin(BinOp::FloorDiv, name(result), name(&g));
            let j_g = bin(BinOp::FloorDiv, name(&j), name(&g));
            let loop_body = vec![
                assign(&g, gcd, span),
                assign(
                    &m,
                    bin(BinOp::FloorDiv, bin(BinOp::Add, n_k.clone(), name(&j)), j_g),
                    span,
                ),
                assign(
                    &ok,
                    ast::Expr::compare(BinOp::Le, r_g.clone(), limit(name(&m)), span),
                    span,
                ),
                if_(
                    name(&ok),
                    vec![assign(result, bin(BinOp::Mul, r_g, name(&m)), span)],
                    span,
                ),
                assign(&j, bin(BinOp::Add, name(&j), int(1)), span),
            ];
            vec![
                if_(
                    ast::Expr::compare(BinOp::Gt, name(&k), n_k.clone(), span),
                    vec![assign(&k, n_k, span)],
                    span,
                ),
                assign(&j, int(1), span),
                while_ok(
                    &ok,
                    ast::Expr::compare(BinOp::Le, name(&j), name(&k), span),
                    loop_body,
                    span,
                ),
            ]
        } else {
            // r = n * (n - 1) * ... * (n - k + 1)
            let m = bin(BinOp::Sub, name(n), name(&j));
            let loop_body = vec![
                assign(
                    &ok,
                    ast::Expr::compare(BinOp::Le, name(result), limit(m.clone()), span),
                    span,
                ),
                if_(
                    name(&ok),
                    vec![assign(result, bin(BinOp::Mul, name(result), m), span)],
                    span,
                ),
                assign(&j, bin(BinOp::Add, name(&j), int(1)), span),
            ];
            vec![
                assign(&j, int(0), span),
                while_ok(
                    &ok,
                    ast::Expr::compare(BinOp::Lt, name(&j), name(&k), span),
                    loop_body,
                    span,
                ),
            ]
        };
        let mut when_fits = vec![
            assign(result, int(1), span),
            assign(
                &ok,
                E {
                    kind: ast::ExprKind::Bool(true),
                    span,
                },
                span,
            ),
        ];
        when_fits.extend(body);
        when_fits.push(check(name(&ok), "OverflowError", overflow, span));
        out.push(assign(result, int(0), span));
        out.push(if_(
            ast::Expr::compare(BinOp::Le, name(&k), name(n), span),
            when_fits,
            span,
        ));
        out
    }
}

impl Lowerer<'_, '_> {
    /// The statements of `pow(a, b, m)` (see the module doc) of the Python
    /// ints named `args`, leaving it in `result`.
    fn pow_mod_loop(
        &mut self,
        args: &[String],
        result: &str,
        max: i64,
        span: Span,
    ) -> Vec<ast::Stmt> {
        use ast::Expr as E;
        let name = |n: &str| E::name(n, span);
        let int = |v: i64| E::int(v, span);
        let bin = |op, l, r| E::binary(op, l, r, span);
        let cmp = |op, l, r| ast::Expr::compare(op, l, r, span);
        let (m, c, a, e) = (
            &args[2],
            self.fresh_name("c"),
            self.fresh_name("a"),
            self.fresh_name("e"),
        );
        let neg = |e| E {
            kind: ast::ExprKind::Unary {
                op: crate::ir::UnOp::Neg,
                arg: Box::new(e),
            },
            span,
        };
        let too_large = "the modulus of `pow` does not fit in parpy's Python int when negated";
        let mut out = vec![
            check(
                cmp(BinOp::Ne, name(m), int(0)),
                "ValueError",
                ZERO_MODULUS,
                span,
            ),
            check(
                cmp(BinOp::Ge, name(m), int(-max)),
                "OverflowError",
                too_large,
                span,
            ),
            assign(&c, name(m), span),
            if_(
                cmp(BinOp::Lt, name(&c), int(0)),
                vec![assign(&c, neg(name(&c)), span)],
                span,
            ),
            assign(&a, bin(BinOp::Mod, name(&args[0]), name(&c)), span),
            assign(&e, name(&args[1]), span),
        ];
        // a negative exponent: the inverse of `a` modulo `c`, then `-e`
        let (r0, r1, s0, s1, q, t) = (
            self.fresh_name("r0"),
            self.fresh_name("r1"),
            self.fresh_name("s0"),
            self.fresh_name("s1"),
            self.fresh_name("q"),
            self.fresh_name("t"),
        );
        let euclid = stmt(
            ast::StmtKind::While {
                cond: cmp(BinOp::Ne, name(&r1), int(0)),
                body: vec![
                    assign(&q, bin(BinOp::FloorDiv, name(&r0), name(&r1)), span),
                    assign(
                        &t,
                        bin(BinOp::Sub, name(&r0), bin(BinOp::Mul, name(&q), name(&r1))),
                        span,
                    ),
                    assign(&r0, name(&r1), span),
                    assign(&r1, name(&t), span),
                    assign(
                        &t,
                        bin(BinOp::Sub, name(&s0), bin(BinOp::Mul, name(&q), name(&s1))),
                        span,
                    ),
                    assign(&s0, name(&s1), span),
                    assign(&s1, name(&t), span),
                ],
                orelse: vec![],
            },
            span,
        );
        out.push(if_(
            cmp(BinOp::Lt, name(&e), int(0)),
            vec![
                check(
                    cmp(BinOp::Ge, name(&e), int(-max)),
                    "OverflowError",
                    "the exponent of `pow` does not fit in parpy's Python int when negated",
                    span,
                ),
                assign(&r0, name(&a), span),
                assign(&r1, name(&c), span),
                assign(&s0, int(1), span),
                assign(&s1, int(0), span),
                euclid,
                check(
                    cmp(BinOp::Eq, name(&r0), int(1)),
                    "ValueError",
                    NOT_INVERTIBLE,
                    span,
                ),
                assign(&a, bin(BinOp::Mod, name(&s0), name(&c)), span),
                assign(&e, neg(name(&e)), span),
            ],
            span,
        ));
        // square and multiply
        let limit = (max as f64).sqrt() as i64;
        let mul = |this: &mut Self, dst: &str, x: &str, y: &str| -> ast::Stmt {
            let (p, xx, yy) = (
                this.fresh_name("p"),
                this.fresh_name("x"),
                this.fresh_name("y"),
            );
            let add = |acc: &str, v: &str| {
                // acc + v modulo c, never past c
                let room = bin(BinOp::Sub, name(&c), name(v));
                E {
                    kind: ast::ExprKind::IfExp {
                        cond: Box::new(cmp(BinOp::Ge, name(acc), room.clone())),
                        then: Box::new(bin(BinOp::Sub, name(acc), room)),
                        else_: Box::new(bin(BinOp::Add, name(acc), name(v))),
                    },
                    span,
                }
            };
            let slow = vec![
                assign(&p, int(0), span),
                assign(&xx, name(x), span),
                assign(&yy, name(y), span),
                stmt(
                    ast::StmtKind::While {
                        cond: cmp(BinOp::Gt, name(&yy), int(0)),
                        body: vec![
                            if_(
                                cmp(BinOp::Eq, bin(BinOp::Mod, name(&yy), int(2)), int(1)),
                                vec![assign(&p, add(&p, &xx), span)],
                                span,
                            ),
                            assign(&xx, add(&xx, &xx), span),
                            assign(&yy, bin(BinOp::FloorDiv, name(&yy), int(2)), span),
                        ],
                        orelse: vec![],
                    },
                    span,
                ),
                assign(dst, name(&p), span),
            ];
            stmt(
                ast::StmtKind::If {
                    cond: cmp(BinOp::Le, name(&c), int(limit)),
                    then_body: vec![assign(
                        dst,
                        bin(BinOp::Mod, bin(BinOp::Mul, name(x), name(y)), name(&c)),
                        span,
                    )],
                    else_body: slow,
                },
                span,
            )
        };
        let times = mul(self, result, result, &a);
        let square = mul(self, &a, &a, &a);
        out.push(assign(result, bin(BinOp::Mod, int(1), name(&c)), span));
        out.push(stmt(
            ast::StmtKind::While {
                cond: cmp(BinOp::Gt, name(&e), int(0)),
                body: vec![
                    if_(
                        cmp(BinOp::Eq, bin(BinOp::Mod, name(&e), int(2)), int(1)),
                        vec![times],
                        span,
                    ),
                    square,
                    assign(&e, bin(BinOp::FloorDiv, name(&e), int(2)), span),
                ],
                orelse: vec![],
            },
            span,
        ));
        let negative = E {
            kind: ast::ExprKind::BoolOp {
                op: BinOp::And,
                values: vec![
                    cmp(BinOp::Lt, name(m), int(0)),
                    cmp(BinOp::Ne, name(result), int(0)),
                ],
            },
            span,
        };
        out.push(if_(
            negative,
            vec![assign(
                result,
                bin(BinOp::Sub, name(result), name(&c)),
                span,
            )],
            span,
        ));
        out
    }
}

#[cfg(test)]
mod fold_tests {
    use super::*;

    const MAX: i64 = i64::MAX;

    fn value(f: IntFn, args: &[i64]) -> i64 {
        fold(f, args, MAX, "over").unwrap()
    }

    #[test]
    fn folds_as_python() {
        assert_eq!(value(IntFn::Factorial, &[0]), 1);
        assert_eq!(value(IntFn::Factorial, &[20]), 2432902008176640000);
        assert_eq!(value(IntFn::Comb, &[5, 2]), 10);
        assert_eq!(value(IntFn::Comb, &[5, 7]), 0);
        assert_eq!(value(IntFn::Comb, &[66, 33]), 7219428434016265740);
        assert_eq!(value(IntFn::Perm, &[5, 2]), 20);
        assert_eq!(value(IntFn::Perm, &[5]), 120);
        assert_eq!(value(IntFn::Isqrt, &[0]), 0);
        assert_eq!(value(IntFn::Isqrt, &[15]), 3);
        assert_eq!(value(IntFn::Isqrt, &[16]), 4);
        assert_eq!(value(IntFn::Isqrt, &[i64::MAX]), 3037000499);
        assert_eq!(value(IntFn::BitLength, &[0]), 0);
        assert_eq!(value(IntFn::BitLength, &[-8]), 4);
        assert_eq!(value(IntFn::BitLength, &[i64::MIN]), 64);
        assert_eq!(value(IntFn::BitLength, &[i64::MAX]), 63);
        assert_eq!(value(IntFn::PowMod, &[3, -1, 7]), 5);
        assert_eq!(value(IntFn::PowMod, &[-3, 5, 7]), 2);
        assert_eq!(value(IntFn::PowMod, &[3, 5, -7]), -2);
        assert_eq!(value(IntFn::PowMod, &[0, 0, 5]), 1);
        assert_eq!(value(IntFn::PowMod, &[3, 0, 1]), 0);
        assert_eq!(value(IntFn::PowMod, &[0, -1, 1]), 0);
        assert_eq!(
            value(IntFn::PowMod, &[i64::MAX - 1, i64::MAX - 2, i64::MAX]),
            i64::MAX - 1
        );
    }

    #[test]
    fn raises_as_python() {
        let err = |f, args: &[i64]| fold(f, args, MAX, "over").unwrap_err();
        assert_eq!(err(IntFn::Factorial, &[-1]).1, NEGATIVE_FACTORIAL);
        assert_eq!(err(IntFn::Factorial, &[21]).0, "OverflowError");
        assert_eq!(err(IntFn::Comb, &[-1, 0]).1, NEGATIVE_N);
        assert_eq!(err(IntFn::Comb, &[1, -1]).1, NEGATIVE_K);
        assert_eq!(err(IntFn::Comb, &[68, 34]).0, "OverflowError");
        assert_eq!(err(IntFn::Isqrt, &[-4]).1, NEGATIVE_ISQRT);
        assert_eq!(err(IntFn::PowMod, &[2, -1, 4]).1, NOT_INVERTIBLE);
        assert_eq!(err(IntFn::PowMod, &[2, 1, 0]).1, ZERO_MODULUS);
        assert_eq!(
            fold(IntFn::Factorial, &[13], i32::MAX as i64, "over")
                .unwrap_err()
                .0,
            "OverflowError"
        );
    }
}
