//! `np.interp(x, xp, fp, left, right)` of a number `x` and 1-D slices `xp`
//! and `fp`: NumPy's linear interpolation, step for step as NumPy's C code
//! takes them (`arr_interp` in `compiled_base.c`), in float64: the
//! search for the interval (`binary_search_with_guess`, with the guess
//! NumPy starts from: a number is searched as NumPy searches it, so an `xp`
//! that does not increase gives NumPy's answer too), the value at a sample
//! point, and the retry from the right end of an interval when the
//! interpolation gives NaN. Of a slice `x` (`y[i, :] = np.interp(x[i, :],
//! xp, fp)`) each element is searched so; NumPy starts each search from the
//! interval of the one before, which finds the same interval for an
//! increasing `xp`, as NumPy requires.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, Stmt, StmtKind, Type, VarId, VarKind};
use crate::syntax::ast;

use super::slices::Indexed as Samples;
use super::types::convert;
use super::{Lowerer, TExpr};

/// NumPy's `LIKELY_IN_CACHE_SIZE`: how far from the guess the search
/// tries a narrower range before it bisects.
const NEAR: i64 = 8;

/// Builds the statements of one interpolation.
struct Build {
    span: Span,
    int_ty: ElemTy,
}

impl Build {
    fn int(&self, v: i64) -> Expr {
        Expr::int(v, self.int_ty, self.span)
    }
    fn ivar(&self, v: VarId) -> Expr {
        Expr::var(v, Type::Scalar(self.int_ty), self.span)
    }
    fn fvar(&self, v: VarId) -> Expr {
        Expr::var(v, Type::Scalar(ElemTy::F64), self.span)
    }
    fn ibin(&self, op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::binary(op, a, b, Type::Scalar(self.int_ty), self.span)
    }
    fn fbin(&self, op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::binary(op, a, b, Type::Scalar(ElemTy::F64), self.span)
    }
    fn cmp(&self, op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::compare(op, a, b, self.span)
    }
    fn set(&self, v: VarId, e: Expr) -> Stmt {
        Stmt::assign_var(v, e, self.span)
    }
    fn when(&self, cond: Expr, then_body: Vec<Stmt>, else_body: Vec<Stmt>) -> Stmt {
        Stmt::new(
            StmtKind::If {
                cond,
                then_body,
                else_body,
            },
            self.span,
        )
    }
    fn is_nan(&self, e: Expr) -> Expr {
        self.cmp(BinOp::Ne, e.clone(), e)
    }

    /// `j = binary_search_with_guess(key, xp, n, guess)` for a key that is
    /// neither NaN nor outside `xp[0] ..= xp[n - 1]` (checked before), in
    /// NumPy's steps: a linear search of at most 4 points, else the points
    /// around the guess, then bisection of what is left (`imin`, `imax`;
    /// an answer `r` found before sets both to `r + 1`).
    fn search(
        &self,
        key: &Expr,
        xp: &Samples,
        guess: i64,
        (j, imin, imax, mid): (VarId, VarId, VarId, VarId),
    ) -> Vec<Stmt> {
        let n = xp.n;
        let ge = |k: Expr| self.cmp(BinOp::Ge, key.clone(), xp.at(k));
        let lt = |k: Expr| self.cmp(BinOp::Lt, key.clone(), xp.at(k));
        if n <= 4 {
            // for (i = 1; i < n && key >= xp[i]; ++i); j = i - 1
            let mut body = vec![];
            for i in (1..n).rev() {
                let found = vec![self.set(j, self.int(i))];
                let mut then = found;
                then.append(&mut body);
                body = vec![self.when(ge(self.int(i)), then, vec![])];
            }
            let mut out = vec![self.set(j, self.int(0))];
            out.extend(body);
            return out;
        }
        let g = guess.min(n - 3).max(1);
        let found = |r: i64| {
            vec![
                self.set(imin, self.int(r + 1)),
                self.set(imax, self.int(r + 1)),
            ]
        };
        // key < xp[g]: below the guess
        let mut below = vec![self.set(imax, self.int(g - 1))];
        if g > NEAR {
            below.push(self.when(
                ge(self.int(g - NEAR)),
                vec![self.set(imin, self.int(g - NEAR))],
                vec![],
            ));
        }
        let below = self.when(lt(self.int(g - 1)), below, found(g - 1));
        // key >= xp[g]: at or above it
        let mut beyond = vec![self.set(imin, self.int(g + 2))];
        if g < n - NEAR - 1 {
            beyond.push(self.when(
                lt(self.int(g + NEAR)),
                vec![self.set(imax, self.int(g + NEAR))],
                vec![],
            ));
        }
        let above = self.when(
            lt(self.int(g + 1)),
            found(g),
            vec![self.when(lt(self.int(g + 2)), found(g + 1), beyond)],
        );
        let step = vec![
            self.set(
                mid,
                self.ibin(
                    BinOp::Add,
                    self.ivar(imin),
                    self.ibin(
                        BinOp::Shr,
                        self.ibin(BinOp::Sub, self.ivar(imax), self.ivar(imin)),
                        self.int(1),
                    ),
                ),
            ),
            self.when(
                ge(self.ivar(mid)),
                vec![self.set(imin, self.ibin(BinOp::Add, self.ivar(mid), self.int(1)))],
                vec![self.set(imax, self.ivar(mid))],
            ),
        ];
        vec![
            self.set(imin, self.int(0)),
            self.set(imax, self.int(n)),
            self.when(lt(self.int(g)), vec![below], vec![above]),
            Stmt::new(
                StmtKind::While {
                    cond: self.cmp(BinOp::Lt, self.ivar(imin), self.ivar(imax)),
                    body: step,
                },
                self.span,
            ),
            self.set(j, self.ibin(BinOp::Sub, self.ivar(imin), self.int(1))),
        ]
    }
}

impl Lowerer<'_, '_> {
    /// `np.interp(x, xp, fp[, left[, right]])` (see the module doc): a
    /// float64.
    pub(super) fn interp(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let (x, xp, fp, left, right) = match args {
            [x, xp, fp, rest @ ..] if rest.len() <= 3 => {
                let given = |k| super::keywords::given(rest, k);
                if let Some(p) = given(2) {
                    self.error(
                        Diagnostic::error(format!("`{name}` takes no `period` in parpy functions"))
                            .at(p.span, "a period")
                            .help("reduce `x` into one period first (`x % period`) and extend `xp` and `fp` by a point at each end"),
                    );
                    return None;
                }
                (x, xp, fp, given(0), given(1))
            }
            _ => {
                self.arity_error(
                    name,
                    "3 to 5 arguments (x, xp, fp, left, right)",
                    args.len(),
                    span,
                );
                return None;
            }
        };
        self.sequential_only(name)?;
        let key = self.lower_expr(x)?;
        self.scalar_elem(&key)?;
        let not_1d = |arg: &ast::Expr| {
            Diagnostic::error(format!("`{name}` takes 1-D sample points"))
                .at(arg.span, "not a 1-D slice")
                .help("pass one row of sample points (`xp[i, :]`)")
        };
        let xs = self.indexed(xp, not_1d(xp), span)?.in_type(ElemTy::F64);
        let fs = self.indexed(fp, not_1d(fp), span)?.in_type(ElemTy::F64);
        let n = xs.n;
        if n == 0 {
            self.error(
                Diagnostic::error("array of sample points is empty")
                    .at(xp.span, "no points")
                    .note("NumPy raises a ValueError"),
            );
            return None;
        }
        if fs.n != n {
            self.error(
                Diagnostic::error(format!(
                    "fp and xp are not of the same length ({} and {n})",
                    fs.n
                ))
                .at(fp.span, format!("{} points", fs.n))
                .note("NumPy raises a ValueError"),
            );
            return None;
        }
        let fill = |v: Option<&ast::Expr>, k: i64, me: &mut Self| -> Option<Expr> {
            Some(match v {
                None => fs.at(Expr::int(k, me.opts.int_type, span)),
                Some(v) => {
                    let v = me.lower_expr(v)?;
                    me.scalar_elem(&v)?;
                    convert(v.e, ElemTy::F64)
                }
            })
        };
        let lval = fill(left, 0, self);
        let rval = fill(right, n - 1, self);
        let (lval, rval) = (lval?, rval?);
        let b = Build {
            span,
            int_ty: self.opts.int_type,
        };
        let f64t = Type::Scalar(ElemTy::F64);
        let it = Type::Scalar(b.int_ty);
        let xv = self.new_var("x_val", f64t.clone(), VarKind::Local, span);
        let res = self.new_var("interp", f64t.clone(), VarKind::Local, span);
        self.pre.push(b.set(xv, convert(key.e, ElemTy::F64)));
        let key = b.fvar(xv);
        let int = |k| b.int(k);
        if n == 1 {
            // (x < xp[0]) ? left : ((x > xp[0]) ? right : fp[0]), NaN: fp[0]
            let (x0, f0) = (xs.at(int(0)), fs.at(int(0)));
            let v = Expr::select(
                b.cmp(BinOp::Lt, key.clone(), x0.clone()),
                lval,
                Expr::select(b.cmp(BinOp::Gt, key, x0), rval, f0),
            );
            self.pre.push(b.set(res, v));
            return Some(TExpr {
                e: b.fvar(res),
                weak: false,
            });
        }
        let vars = (
            self.new_var("j", it.clone(), VarKind::Local, span),
            self.new_var("imin", it.clone(), VarKind::Local, span),
            self.new_var("imax", it.clone(), VarKind::Local, span),
            self.new_var("imid", it, VarKind::Local, span),
        );
        let j = vars.0;
        let jv = || b.ivar(j);
        let j1 = || b.ibin(BinOp::Add, b.ivar(j), int(1));
        let slope_v = self.new_var("slope", f64t, VarKind::Local, span);
        let slope = b.fbin(
            BinOp::Div,
            b.fbin(BinOp::Sub, fs.at(j1()), fs.at(jv())),
            b.fbin(BinOp::Sub, xs.at(j1()), xs.at(jv())),
        );
        let line = |at: Expr, f: Expr| {
            b.fbin(
                BinOp::Add,
                b.fbin(
                    BinOp::Mul,
                    b.fvar(slope_v),
                    b.fbin(BinOp::Sub, key.clone(), at),
                ),
                f,
            )
        };
        // the interpolation, from the left end of the interval, else from
        // its right end, else (equal ends) the value at the left
        let between = vec![
            b.set(slope_v, slope),
            b.set(res, line(xs.at(jv()), fs.at(jv()))),
            b.when(
                b.is_nan(b.fvar(res)),
                vec![
                    b.set(res, line(xs.at(j1()), fs.at(j1()))),
                    b.when(
                        b.is_nan(b.fvar(res)),
                        vec![b.when(
                            b.cmp(BinOp::Eq, fs.at(jv()), fs.at(j1())),
                            vec![b.set(res, fs.at(jv()))],
                            vec![],
                        )],
                        vec![],
                    ),
                ],
                vec![],
            ),
        ];
        let inside = {
            let mut s = b.search(&key, &xs, 0, vars);
            s.push(b.when(
                b.cmp(BinOp::Eq, jv(), int(n - 1)),
                vec![b.set(res, fs.at(int(n - 1)))],
                vec![b.when(
                    b.cmp(BinOp::Eq, xs.at(jv()), key.clone()),
                    vec![b.set(res, fs.at(jv()))],
                    between,
                )],
            ));
            s
        };
        let outside = b.when(
            b.cmp(BinOp::Gt, key.clone(), xs.at(int(n - 1))),
            vec![b.set(res, rval)],
            vec![b.when(
                b.cmp(BinOp::Lt, key.clone(), xs.at(int(0))),
                vec![b.set(res, lval)],
                inside,
            )],
        );
        self.pre
            .push(b.when(b.is_nan(key.clone()), vec![b.set(res, key)], vec![outside]));
        Some(TExpr {
            e: b.fvar(res),
            weak: false,
        })
    }
}
