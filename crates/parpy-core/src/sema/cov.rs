//! `np.cov(m, y, rowvar, bias, ddof)` and `np.corrcoef(x, y, rowvar)` of
//! one or two 1-D arrays, as NumPy's Python code computes them
//! (`numpy/lib/_function_base_impl.py`): the rows `X` in float64 (NumPy's
//! `result_type(m, y, np.float64)`, float64 for every real input), their
//! means `np.average(X, axis=1)` subtracted, `c = dot(X, X.T)`, then `c *=
//! np.true_divide(1, fact)` with `fact = N - ddof` (`ddof` 1, or 0 for a
//! nonzero `bias`; `fact <= 0` is `0.0`, so NumPy's warning cases give its
//! `inf` and `nan`). `np.corrcoef` divides by the outer product of the
//! standard deviations `sqrt(diag(c))`, one row and one column at a time,
//! and clips to `[-1, 1]`; of one vector it is NumPy's `c / c`.
//!
//! Each element is built as that source (`np.dot(x - np.mean(x), y -
//! np.mean(y)) * np.true_divide(1, fact)`) and lowered as the user's own
//! would be, so only the dot's order of additions may differ from NumPy's
//! BLAS. One vector gives a number (NumPy's 0-d array); two a 2x2 matrix,
//! read by constant indices (`np.corrcoef(a, b)[0, 1]`, `lower_expr` asks
//! `cov_element`) or stored whole into a 2x2 slice (`C[i, :, :] =
//! np.cov(a, b)`, `stmt.rs` asks `cov_store`), its element `[1, 0]` the
//! `[0, 1]` one, as NumPy's symmetric product gives it.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy};
use crate::resolve::Builtin;
use crate::syntax::ast;

use super::expr::flatten_subscript;
use super::generators::{assign, stmt};
use super::local_arrays::astype_to;
use super::types::const_int;
use super::{Lowerer, TExpr};

/// A call of `np.cov` or `np.corrcoef`, its arguments checked.
struct Cov {
    /// `np.corrcoef` (else `np.cov`)
    corr: bool,
    /// the vectors, each in float64
    rows: Vec<ast::Expr>,
    /// `np.true_divide(1, fact)`
    scale: ast::Expr,
    span: Span,
}

impl Cov {
    fn name(&self) -> &'static str {
        match self.corr {
            true => "np.corrcoef",
            false => "np.cov",
        }
    }

    fn bin(&self, op: BinOp, l: ast::Expr, r: ast::Expr) -> ast::Expr {
        ast::Expr::binary(op, l, r, self.span)
    }

    /// NumPy's `c[j, k]` before `np.corrcoef`'s scaling: the dot of the
    /// centered rows (`centered` gives row `j` less its mean), times
    /// `1 / fact`.
    fn product(&self, centered: &dyn Fn(usize) -> ast::Expr, j: usize, k: usize) -> ast::Expr {
        let (j, k) = (j.min(k), j.max(k));
        let dot = Lowerer::numpy_call("dot", vec![centered(j), centered(k)], self.span);
        self.bin(BinOp::Mul, dot, self.scale.clone())
    }

    /// Element `[j, k]` of the result (`[0, 0]` for one vector, which is
    /// the whole 0-d result), given NumPy's `c[j, k]` by `c`.
    fn element(&self, c: &dyn Fn(usize, usize) -> ast::Expr, j: usize, k: usize) -> ast::Expr {
        if !self.corr {
            return c(j, k);
        }
        if self.rows.len() == 1 {
            // (a scalar covariance: `c / c`)
            return self.bin(BinOp::Div, c(0, 0), c(0, 0));
        }
        let sqrt = |e| Lowerer::numpy_call("sqrt", vec![e], self.span);
        let by_row = self.bin(BinOp::Div, c(j, k), sqrt(c(j, j)));
        let by_col = self.bin(BinOp::Div, by_row, sqrt(c(k, k)));
        let int = |v| ast::Expr::int(v, self.span);
        Lowerer::numpy_call("clip", vec![by_col, int(-1), int(1)], self.span)
    }
}

impl Lowerer<'_, '_> {
    /// The call `e` of `np.cov` or `np.corrcoef`: whether it is one.
    fn cov_builtin<'e>(&self, e: &'e ast::Expr) -> Option<(bool, &'e [ast::Expr])> {
        let ast::ExprKind::Call { func, args, .. } = &e.kind else {
            return None;
        };
        match self.builtin_of(func)? {
            Builtin::Cov(corr) => Some((corr, args)),
            _ => None,
        }
    }

    /// Reads a call of `np.cov` (`corr` false) or `np.corrcoef`, its
    /// arguments bound by `keywords` (`m, y, rowvar, bias, ddof` and `x, y,
    /// rowvar`); `None` after an error.
    fn cov_call(&mut self, corr: bool, args: &[ast::Expr], span: Span) -> Option<Cov> {
        let name = if corr { "np.corrcoef" } else { "np.cov" };
        let most = if corr { 3 } else { 5 };
        if args.is_empty() || args.len() > most {
            let expected = match corr {
                true => "1 to 3 arguments (x, y, rowvar)",
                false => "1 to 5 arguments (m, y, rowvar, bias, ddof)",
            };
            self.arity_error(name, expected, args.len(), span);
            return None;
        }
        let given = |k| super::keywords::given(args, k);
        // (`rowvar` changes nothing for 1-D arrays, but NumPy reads its truth)
        if let Some(r) = given(2).filter(|r| self.rank(r) > 0) {
            self.error(
                Diagnostic::error(format!("`rowvar` of `{name}` is a flag, not an array"))
                    .at(r.span, "an array")
                    .note("NumPy raises ValueError: the truth value of an array with more than one element is ambiguous")
                    .help(format!("give at most two vectors: `{name}(a[i, :], b[i, :])`")),
            );
            return None;
        }
        let vectors: Vec<&ast::Expr> = [Some(&args[0]), given(1)].into_iter().flatten().collect();
        let mut n = None;
        let mut rows = vec![];
        for v in vectors {
            let (shape, elem) = self.array_shape_of(v)?;
            let len = match shape.as_deref() {
                Some([len]) => *len,
                Some(shape) => {
                    self.error(
                        Diagnostic::error(format!(
                            "`{name}` of a {}-D array is not supported in parpy functions",
                            shape.len()
                        ))
                        .at(v.span, "not a 1-D array")
                        .note("parpy takes one or two vectors of observations (the `rowvar` forms of a matrix are refused)")
                        .help(format!("pass rows: `{name}(a[i, :], b[i, :])`")),
                    );
                    return None;
                }
                None => {
                    self.error(
                        Diagnostic::error(format!(
                            "`{name}` of a number is not supported in parpy functions"
                        ))
                        .at(v.span, "not an array")
                        .help(format!("pass a vector of observations: `{name}(a[i, :])`")),
                    );
                    return None;
                }
            };
            if let Some(first) = n.filter(|first| *first != len) {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}`: the vectors have {first} and {len} observations"
                    ))
                    .at(v.span, format!("{len} observations"))
                    .also(args[0].span, format!("{first} observations"))
                    .note("NumPy raises ValueError: all the input array dimensions except for the concatenation axis must match exactly"),
                );
                return None;
            }
            n = Some(len);
            rows.push(match elem {
                ElemTy::F64 => v.clone(),
                _ => astype_to(v, ElemTy::F64, span),
            });
        }
        let n = n?;
        // NumPy: `if ddof is not None and ddof != int(ddof): raise ValueError`
        if let Some(d) = given(4) {
            let (_, elem) = self.array_shape_of(d)?;
            let integral = match d.kind {
                ast::ExprKind::Float(v) => v.fract() == 0.0,
                _ => !elem.is_float(),
            };
            if !integral {
                let d_err = Diagnostic::error(format!("`{name}`: ddof must be integer"))
                    .at(d.span, "not an integer");
                self.error(match d.kind {
                    ast::ExprKind::Float(_) => d_err.note("NumPy raises ValueError"),
                    _ => d_err.help(
                        "pass an integer `ddof` (NumPy raises ValueError for a fractional one)",
                    ),
                });
                return None;
            }
        }
        let int = |v| ast::Expr::int(v, span);
        // ddof = 1 if bias == 0 else 0, unless given
        let ddof = match (given(4), given(3)) {
            (Some(d), _) => d.clone(),
            (None, None) => int(1),
            (None, Some(b)) => match &b.kind {
                ast::ExprKind::Bool(b) => int(i64::from(!*b)),
                ast::ExprKind::Int(b) => int(i64::from(*b == 0)),
                _ => ast::Expr {
                    kind: ast::ExprKind::IfExp {
                        cond: Box::new(ast::Expr::compare(BinOp::Eq, b.clone(), int(0), span)),
                        then: Box::new(int(1)),
                        else_: Box::new(int(0)),
                    },
                    span,
                },
            },
        };
        // fact = N - ddof, 0.0 where that is <= 0
        let fact = ast::Expr::binary(BinOp::Sub, int(n), ddof, span);
        let fact = Self::numpy_call("maximum", vec![fact, int(0)], span);
        let scale = Self::numpy_call("divide", vec![int(1), fact], span);
        Some(Cov {
            corr,
            rows,
            scale,
            span,
        })
    }

    /// `cov_call` of the arguments of a call not lowered as a call (an
    /// element read, a store): first checked and dropped as `compact`
    /// does for a call (`aweights=` refused, defaults dropped).
    fn cov_call_of(&mut self, corr: bool, args: &[ast::Expr], span: Span) -> Option<Cov> {
        let name = if corr { "np.corrcoef" } else { "np.cov" };
        let sig = super::keywords::builtin_signature(Builtin::Cov(corr));
        let args = self.compact(name, sig, args)?;
        self.cov_call(corr, &args, span)
    }

    /// `row - np.mean(row)`, NumPy's `X -= avg[:, None]` of one row.
    fn centered(row: &ast::Expr, mean: ast::Expr, span: Span) -> ast::Expr {
        ast::Expr::binary(BinOp::Sub, row.clone(), mean, span)
    }

    /// `np.cov(...)` / `np.corrcoef(...)` as a value: of one vector a
    /// number; of two refused, as a 2x2 matrix must be indexed or stored.
    pub(super) fn cov_value(
        &mut self,
        corr: bool,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let cov = self.cov_call(corr, args, span)?;
        if cov.rows.len() == 2 {
            let name = cov.name();
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of two vectors is a 2x2 matrix, which parpy reads by constant indices or stores whole"
                ))
                .at(span, "a 2x2 matrix here")
                .help(format!(
                    "index it (`{name}(a[i, :], b[i, :])[0, 1]`) or store it into a 2x2 slice (`C[i, :, :] = {name}(a[i, :], b[i, :])`)"
                )),
            );
            return None;
        }
        self.lower_cov_element(&cov, 0, 0)
    }

    /// Element `[j, k]` of `cov` as an expression.
    fn lower_cov_element(&mut self, cov: &Cov, j: usize, k: usize) -> Option<TExpr> {
        let mean = |r: &ast::Expr| Self::numpy_call("mean", vec![r.clone()], cov.span);
        let centered = |j: usize| Self::centered(&cov.rows[j], mean(&cov.rows[j]), cov.span);
        let c = |j, k| cov.product(&centered, j, k);
        let e = cov.element(&c, j, k);
        let t = self.lower_expr(&e)?;
        Some(TExpr {
            e: t.e,
            weak: false,
        })
    }

    /// Whether `e` subscripts a call of `np.cov` or `np.corrcoef`.
    pub(super) fn cov_element_of(&self, e: &ast::Expr) -> bool {
        self.cov_builtin(flatten_subscript(e).0).is_some()
    }

    /// The element `e` of `np.cov(...)` or `np.corrcoef(...)`
    /// (`np.corrcoef(a, b)[0, 1]`, also `[0][1]`; `cov_element_of`);
    /// `None` after an error.
    pub(super) fn cov_element(&mut self, e: &ast::Expr) -> Option<TExpr> {
        let (value, idx) = flatten_subscript(e);
        let (corr, args) = self.cov_builtin(value)?;
        let cov = self.cov_call_of(corr, args, value.span)?;
        let rank = if cov.rows.len() == 2 { 2 } else { 0 };
        let name = cov.name();
        if idx.len() != rank {
            let d = match rank {
                0 => Diagnostic::error(format!(
                    "`{name}` of one vector is a number (NumPy's 0-d array), which cannot be indexed"
                ))
                .at(e.span, "indexed here")
                .note("NumPy raises IndexError: too many indices for array")
                .help("use the value itself"),
                _ => Diagnostic::error(format!(
                    "`{name}` of two vectors is a 2x2 matrix: parpy reads it by two constant indices"
                ))
                .at(e.span, format!("{} index(es)", idx.len()))
                .help(format!("read one element (`{name}(a, b)[0, 1]`)")),
            };
            self.error(d);
            return None;
        }
        let mut at = vec![];
        for ix in &idx {
            let t = self.lower_expr(ix)?;
            match const_int(&t.e) {
                Some(v) if (-2..2).contains(&v) => at.push(v.rem_euclid(2) as usize),
                Some(v) => {
                    self.error(
                        Diagnostic::error(format!(
                            "index {v} is out of bounds for axis of size 2 of `{name}`'s result"
                        ))
                        .at(ix.span, "out of bounds")
                        .note("NumPy raises IndexError"),
                    );
                    return None;
                }
                None => {
                    self.error(
                        Diagnostic::error(format!(
                            "`{name}`'s 2x2 matrix is read by constant indices in parpy functions"
                        ))
                        .at(ix.span, "an index known only when running")
                        .help(
                            "store the matrix into a 2x2 slice (`C[i, :, :] = ...`) and index that",
                        ),
                    );
                    return None;
                }
            }
        }
        self.lower_cov_element(&cov, at[0], at[1])
    }

    /// `target = np.cov(a, b)` (or `np.corrcoef`) into a 2x2 slice: the
    /// means and NumPy's three distinct products in fresh locals, then
    /// the four stores; `None` for other statements (one vector's number
    /// is stored as any number is), `Some(None)` after an error.
    pub(super) fn cov_store(&mut self, s: &ast::Stmt) -> Option<Option<Vec<ast::Stmt>>> {
        let ast::StmtKind::Assign { targets, value } = &s.kind else {
            return None;
        };
        let [target] = targets.as_slice() else {
            return None;
        };
        if !matches!(target.kind, ast::ExprKind::Subscript { .. }) {
            return None;
        }
        let (corr, args) = self.cov_builtin(value)?;
        let given_y = super::keywords::given(args, 1).is_some();
        if !given_y {
            return None;
        }
        let cov = match self.cov_call_of(corr, args, value.span) {
            Some(cov) => cov,
            None => return Some(None),
        };
        let span = cov.span;
        match self.array_shape(target) {
            Some(Some(shape)) if shape == [2, 2] => {}
            Some(None) => return Some(None),
            shape => {
                let shape = shape.flatten().unwrap_or_default();
                self.error(
                    Diagnostic::error(format!(
                        "could not broadcast input array from shape (2,2) into shape {}",
                        crate::ir::shape_text(&shape)
                    ))
                    .at(span, format!("`{}`'s 2x2 matrix", cov.name()))
                    .also(target.span, "stored here")
                    .note("NumPy raises ValueError")
                    .help("store it into a 2x2 slice (`C[i, :, :]`)"),
                );
                return Some(None);
            }
        }
        let mut body = vec![];
        // (`fresh_name` reserves a name once it is assigned: one base each)
        let means: Vec<String> = ["mean_x", "mean_y"]
            .iter()
            .map(|n| self.fresh_name(n))
            .collect();
        for (m, row) in means.iter().zip(&cov.rows) {
            let mean = Self::numpy_call("mean", vec![row.clone()], span);
            body.push(assign(m, mean, span));
        }
        let centered =
            |j: usize| Self::centered(&cov.rows[j], ast::Expr::name(&means[j], span), span);
        let mut products = vec![];
        for (j, k) in [(0, 0), (0, 1), (1, 1)] {
            let c = self.fresh_name(&format!("c{j}{k}"));
            body.push(assign(&c, cov.product(&centered, j, k), span));
            products.push(((j, k), c));
        }
        let c = |j: usize, k: usize| {
            let key = (j.min(k), j.max(k));
            let (_, c) = products
                .iter()
                .find(|(at, _)| *at == key)
                .expect("three products");
            ast::Expr::name(c, span)
        };
        for j in 0..2 {
            for k in 0..2 {
                let element = ast::Expr {
                    kind: ast::ExprKind::Subscript {
                        value: Box::new(target.clone()),
                        indices: vec![
                            ast::Expr::int(j as i64, span),
                            ast::Expr::int(k as i64, span),
                        ],
                    },
                    span: target.span,
                };
                let store = ast::StmtKind::Assign {
                    targets: vec![element],
                    value: cov.element(&c, j, k),
                };
                body.push(stmt(store, s.span));
            }
        }
        Some(Some(body))
    }
}
