//! Diagonal and triangular matrices as operands of an array expression:
//! `np.eye(N, M, k, dtype)`, `np.identity(n, dtype)`, `np.tri(N, M, k,
//! dtype)` (`y[i, :, :] = np.eye(3) * x[i, 0]`, `t = np.tri(4)`), and
//! `np.triu(m, k)` / `np.tril(m, k)` of an array. NumPy would allocate the
//! matrix; parpy computes each element where the expression reads it, from
//! its row `r` and column `c`: `eye` is 1 where `c - r == k`, `tri` where
//! `c - r <= k`, else 0, in `dtype` (float64 by default); `triu(m, k)` is
//! NumPy's `where(tri(R, C, k - 1, bool), zeros(1, m.dtype), m)`, `tril(m,
//! k)` its `where(tri(R, C, k, bool), m, zeros(1, m.dtype))` over the last
//! two axes of `m`. The sizes are known when compiling; `k` may be known
//! only at run time.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, Type};
use crate::syntax::ast;

use super::slices::IndexSlot;
use super::types::convert;
use super::{Lowerer, TExpr};

/// A matrix of ones on and below (`Tri`) or on (`Eye`) the `k`-th diagonal.
#[derive(Clone, Copy, PartialEq)]
enum Pattern {
    Eye,
    Tri,
}

impl Lowerer<'_, '_> {
    /// The arguments of allocating function `call`, positional or by name,
    /// in the order of `params`; `None` after an error.
    pub(super) fn bound_params<'a>(
        &mut self,
        call: &str,
        params: &[&str],
        (args, keywords): (&'a [ast::Expr], &'a [ast::Keyword]),
        span: Span,
    ) -> Option<Vec<Option<&'a ast::Expr>>> {
        if args.len() > params.len() {
            let most = format!("at most {} arguments", params.len());
            self.arity_error(call, &most, args.len(), span);
            return None;
        }
        let mut given: Vec<Option<&ast::Expr>> = vec![None; params.len()];
        for (k, a) in args.iter().enumerate() {
            given[k] = Some(a);
        }
        for kw in keywords {
            let Some(k) = params.iter().position(|p| *p == kw.name) else {
                self.error(
                    Diagnostic::error(format!("`{call}` has no parameter `{}`", kw.name))
                        .at(kw.span, "unknown keyword argument")
                        .help(format!("its parameters are {}", params.join(", "))),
                );
                return None;
            };
            if given[k].is_some() {
                self.error(
                    Diagnostic::error(format!(
                        "`{call}` got multiple values for argument `{}`",
                        kw.name
                    ))
                    .at(kw.span, "given again here")
                    .type_error(),
                );
                return None;
            }
            given[k] = Some(&kw.value);
        }
        // `None` is a parameter's default
        Some(
            given
                .into_iter()
                .map(|g| g.filter(|a| !matches!(a.kind, ast::ExprKind::None)))
                .collect(),
        )
    }

    /// An integer argument of `call` known when compiling, at least `min`.
    pub(super) fn known_count_of(
        &mut self,
        call: &str,
        what: &str,
        e: &ast::Expr,
        min: i64,
    ) -> Option<i64> {
        let t = self.lower_expr(e)?;
        match self.known_int(&t.e) {
            Some(v) if v >= min && t.e.ty.elem().is_some_and(|e| e.is_int()) => Some(v),
            _ => {
                self.error(
                    Diagnostic::error(format!(
                        "{what} of `{call}` must be an integer known when compiling, at least {min}"
                    ))
                    .at(e.span, "not such an integer")
                    .note("the shape of every array must be known when compiling"),
                );
                None
            }
        }
    }

    /// `np.eye`, `np.identity`, `np.tri`, `np.triu` or `np.tril` (`function`,
    /// without `numpy.`) read inside an array expression (see the module
    /// doc); `None` after an error.
    pub(super) fn triangle(
        &mut self,
        function: &str,
        call: (&[ast::Expr], &[ast::Keyword]),
        span: Span,
    ) -> Option<TExpr> {
        let name = format!("np.{function}");
        match function {
            "triu" | "tril" => {
                let given = self.bound_params(&name, &["m", "k"], call, span)?;
                let Some(m) = given[0] else {
                    self.arity_error(&name, "1 or 2 arguments", 0, span);
                    return None;
                };
                self.triangular_part(&name, m, given[1], function == "triu", span)
            }
            "identity" => {
                let given = self.bound_params(&name, &["n", "dtype", "like"], call, span)?;
                let n = self.matrix_size(&name, given[0], span)?;
                self.pattern(Pattern::Eye, (n, n), None, given[1], span)
            }
            _ => {
                let params = ["N", "M", "k", "dtype", "order", "like", "device"];
                let given = self.bound_params(&name, &params[..], call, span)?;
                let n = self.matrix_size(&name, given[0], span)?;
                let m = match given[1] {
                    Some(m) => self.matrix_size(&name, Some(m), span)?,
                    None => n,
                };
                let pattern = match function {
                    "eye" => Pattern::Eye,
                    _ => Pattern::Tri,
                };
                self.pattern(pattern, (n, m), given[2], given[3], span)
            }
        }
    }

    /// `N` (or `M`, `n`) of a matrix: an integer known when compiling.
    fn matrix_size(&mut self, call: &str, n: Option<&ast::Expr>, span: Span) -> Option<i64> {
        let Some(n) = n else {
            self.error(
                Diagnostic::error(format!("`{call}` needs the number of rows"))
                    .at(span, "missing")
                    .type_error(),
            );
            return None;
        };
        self.known_count_of(call, "the size", n, 0)
    }

    /// The diagonal `k` (0 when not given): an integer, maybe known only
    /// at run time.
    fn diagonal_offset(&mut self, k: Option<&ast::Expr>, span: Span) -> Option<Expr> {
        let int_ty = self.opts.int_type;
        let Some(k) = k else {
            return Some(Expr::int(0, int_ty, span));
        };
        let t = self.lower_expr(k)?;
        if !t.e.ty.elem().is_some_and(|e| e.is_int()) || !matches!(t.e.ty, Type::Scalar(_)) {
            self.error(
                Diagnostic::error("the diagonal `k` must be an integer")
                    .at(k.span, "not an integer")
                    .type_error(),
            );
            return None;
        }
        Some(convert(t.e, int_ty))
    }

    /// `c - r` of the element the expression reads, over a new `rows` x
    /// `cols` operand (its last two dimensions).
    fn column_minus_row(&mut self, (rows, cols): (i64, i64), span: Span) -> Option<Expr> {
        let int_ty = self.opts.int_type;
        let slot = |extent| IndexSlot::Slice {
            lo: Expr::int(0, int_ty, span),
            extent,
            step: 1,
            rot: 0,
        };
        let mut rc = self.map_slices(vec![slot(rows), slot(cols)], false, span)?;
        let (c, r) = (rc.pop()?, rc.pop()?);
        Some(Expr::binary(BinOp::Sub, c, r, Type::Scalar(int_ty), span))
    }

    /// The matrix of `pattern`: 1 on (`Eye`) or on and below (`Tri`) the
    /// `k`-th diagonal, else 0, in `dtype`.
    fn pattern(
        &mut self,
        pattern: Pattern,
        shape: (i64, i64),
        k: Option<&ast::Expr>,
        dtype: Option<&ast::Expr>,
        span: Span,
    ) -> Option<TExpr> {
        let k = self.diagonal_offset(k, span)?;
        let elem = match dtype {
            Some(d) => self.allocation_dtype(d)?,
            None => ElemTy::F64,
        };
        let d = self.column_minus_row(shape, span)?;
        let op = match pattern {
            Pattern::Eye => BinOp::Eq,
            Pattern::Tri => BinOp::Le,
        };
        let on = Expr::compare(op, d, k, span);
        Some(TExpr {
            e: convert(on, elem),
            weak: false,
        })
    }

    /// `np.triu(m, k)` (`upper`) or `np.tril(m, k)`: `m` where `c - r >= k`
    /// (`<= k`), else 0 of `m`'s type.
    fn triangular_part(
        &mut self,
        call: &str,
        m: &ast::Expr,
        k: Option<&ast::Expr>,
        upper: bool,
        span: Span,
    ) -> Option<TExpr> {
        let shape = match self.array_shape(m) {
            Some(shape) => shape?,
            None => vec![],
        };
        let [.., rows, cols] = shape[..] else {
            self.error(
                Diagnostic::error(format!("`{call}` takes an array of at least 2 dimensions"))
                    .at(m.span, format!("{} dimension(s)", shape.len()))
                    .note("NumPy's `triu` and `tril` of a 1-D array make a square matrix of it, parpy's do not")
                    .type_error(),
            );
            return None;
        };
        let k = self.diagonal_offset(k, span)?;
        let value = self.lower_expr(m)?;
        let elem = value.e.ty.elem()?;
        let d = self.column_minus_row((rows, cols), span)?;
        let op = if upper { BinOp::Ge } else { BinOp::Le };
        let keep = Expr::compare(op, d, k, span);
        let zero = convert(Expr::int(0, ElemTy::I64, span), elem);
        Some(TExpr {
            e: Expr::select(keep, value.e, zero),
            weak: false,
        })
    }
}
