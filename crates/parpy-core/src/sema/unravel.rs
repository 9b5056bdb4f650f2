//! `np.unravel_index(k, dims)` and `np.ravel_multi_index(idx, dims)` of
//! scalar indices, with `dims` known when compiling (a tuple or list of
//! numbers, or `x.shape`), in C order:
//! - `r, c = np.unravel_index(k, dims)` (unpacked where it is called, or
//!   indexed: `np.unravel_index(k, dims)[0]`): `k // stride % d` per
//!   dimension;
//! - `np.ravel_multi_index((r, c), dims)`: the sum of `r * stride`.
//!
//! Both give NumPy's `intp` (a strong int64) and raise NumPy's
//! `ValueError` where an index is out of bounds (`0 <= k < size`, `0 <= r
//! < d`): checked where the code runs, as an `assert` is. A float index is
//! NumPy's `TypeError`, when compiling.

use crate::diag::{Diagnostic, Span};
use crate::ir::{ElemTy, Expr, ExprKind, Stmt, StmtKind};
use crate::syntax::ast;

use super::{Lowerer, TExpr};

impl Lowerer<'_, '_> {
    /// The extents `dims` names, each known when compiling.
    fn unravel_dims(&mut self, what: &str, dims: &ast::Expr) -> Option<Vec<i64>> {
        if let ast::ExprKind::Attr { value, attr } = &dims.kind {
            if attr == "shape" {
                return self.array_shape(value)?;
            }
        }
        let items: Vec<ast::Expr> = match &dims.kind {
            ast::ExprKind::Tuple(items) => items.clone(),
            _ => match dims.list_items() {
                Some(items) => items.to_vec(),
                None => {
                    self.error(
                        Diagnostic::error(format!(
                            "`{what}` takes the dimensions as a tuple of numbers known when compiling, or `x.shape`"
                        ))
                        .at(dims.span, "not a tuple")
                        .type_error(),
                    );
                    return None;
                }
            },
        };
        let mut out = vec![];
        for d in &items {
            let t = self.lower_expr(d)?;
            match self.known_int(&t.e) {
                Some(v) if v >= 0 => out.push(v),
                Some(_) => {
                    self.error(
                        Diagnostic::error("dimensions must be non-negative")
                            .at(d.span, "negative")
                            .raises("ValueError"),
                    );
                    return None;
                }
                None => {
                    self.error(
                        Diagnostic::error(format!(
                            "the dimensions of `{what}` must be known when compiling"
                        ))
                        .at(d.span, "known only when the code runs")
                        .help("pass numbers, parameters specialized on their values, or `x.shape`"),
                    );
                    return None;
                }
            }
        }
        Some(out)
    }

    /// An index operand of `what`: its value as an int64 in a hidden
    /// local (read once), by name.
    fn unravel_operand(&mut self, what: &str, e: &ast::Expr) -> Option<String> {
        let t = self.lower_expr(e)?;
        let elem = self.scalar_elem(&t)?;
        if !elem.is_int() {
            self.error(
                Diagnostic::error(format!(
                    "`{what}` takes integer indices, not {}",
                    elem.numpy_name()
                ))
                .at(e.span, "not an integer")
                .note("NumPy: only int indices permitted")
                .type_error(),
            );
            return None;
        }
        let v = super::types::convert(t.e, ElemTy::I64);
        Some(self.stash_named("index", v, e.span))
    }

    /// `lo <= name < hi` checked, raising NumPy's `ValueError` with
    /// `message` when false: a template whose field `{0}` is the value
    /// (or a plain message, which names none).
    fn unravel_check(&mut self, name: &str, hi: i64, message: &str, span: Span) -> Option<()> {
        let ge = ast::Expr::compare(
            crate::ir::BinOp::Ge,
            ast::Expr::name(name, span),
            ast::Expr::int(0, span),
            span,
        );
        let lt = ast::Expr::compare(
            crate::ir::BinOp::Lt,
            ast::Expr::name(name, span),
            ast::Expr::int(hi, span),
            span,
        );
        let both = ast::Expr {
            kind: ast::ExprKind::BoolOp {
                op: crate::ir::BinOp::And,
                values: vec![ge, lt],
            },
            span,
        };
        let cond = self.lower_expr(&both)?;
        // (the index as NumPy prints it: an integer; recorded only where
        // the message names it)
        let mut values = vec![];
        if message.contains("{0}") {
            values.push((self.lower_expr(&ast::Expr::name(name, span))?.e, true));
        }
        let check = Expr::assert_noting(
            cond.e,
            Some(message.to_string()),
            values,
            "ValueError",
            false,
            span,
        );
        self.pre.push(Stmt::new(StmtKind::Expr(check), span));
        Some(())
    }

    /// `ast` lowered as NumPy's `intp`: an int64, strong.
    fn intp(&mut self, e: &ast::Expr) -> Option<TExpr> {
        let t = self.lower_expr(e)?;
        Some(TExpr {
            e: super::types::convert(t.e, ElemTy::I64),
            weak: false,
        })
    }

    /// The values of `np.unravel_index(k, dims)`, one per dimension
    /// (`None` after an error, for each).
    pub(super) fn unravel_index(&mut self, args: &[ast::Expr], span: Span) -> Vec<Option<TExpr>> {
        let what = "np.unravel_index";
        let dims = self.unravel_dims(what, &args[1]);
        let k = self.unravel_operand(what, &args[0]);
        let (Some(dims), Some(k)) = (dims, k) else {
            // (as many values as the tuple written has, after the error)
            let n = match &args[1].kind {
                ast::ExprKind::Tuple(items) => items.len(),
                _ => args[1].list_items().map_or(1, |i| i.len()),
            };
            return vec![None; n];
        };
        let size = dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d));
        let Some(size) = size else {
            self.error(
                Diagnostic::error("these dimensions hold more elements than an int64 counts")
                    .at(args[1].span, "too many elements")
                    .raises("ValueError"),
            );
            return vec![None; dims.len()];
        };
        let message = format!("index {{0}} is out of bounds for array with size {size}");
        if self.unravel_check(&k, size, &message, span).is_none() {
            return vec![None; dims.len()];
        }
        let mut out = vec![];
        let mut stride = size;
        for (j, &d) in dims.iter().enumerate() {
            stride = if d == 0 { 0 } else { stride / d };
            // (the first is below its extent once `k` is in bounds)
            let mut e = ast::Expr::name(&k, span);
            if stride != 1 {
                e = ast::Expr::binary(
                    crate::ir::BinOp::FloorDiv,
                    e,
                    ast::Expr::int(stride, span),
                    span,
                );
            }
            if j > 0 {
                e = ast::Expr::binary(crate::ir::BinOp::Mod, e, ast::Expr::int(d, span), span);
            }
            out.push(self.intp(&e));
        }
        out
    }

    /// `np.ravel_multi_index(idx, dims)` of a tuple of scalar indices.
    pub(super) fn ravel_multi_index(&mut self, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let what = "np.ravel_multi_index";
        if args.len() != 2 {
            self.arity_error(what, "2 arguments", args.len(), span);
            return None;
        }
        let dims = self.unravel_dims(what, &args[1])?;
        let items: Vec<ast::Expr> = match &args[0].kind {
            ast::ExprKind::Tuple(items) => items.clone(),
            _ => args[0].list_items().map(|i| i.to_vec()).unwrap_or_default(),
        };
        if items.len() != dims.len() {
            self.error(
                Diagnostic::error(format!(
                    "parameter multi_index must be a sequence of length {}",
                    dims.len()
                ))
                .at(args[0].span, format!("{} indices", items.len()))
                .raises("ValueError"),
            );
            return None;
        }
        if dims
            .iter()
            .try_fold(1i64, |a, &d| a.checked_mul(d))
            .is_none()
        {
            self.error(
                Diagnostic::error("these dimensions hold more elements than an int64 counts")
                    .at(args[1].span, "too many elements")
                    .raises("ValueError"),
            );
            return None;
        }
        let mut names = vec![];
        for it in &items {
            names.push(self.unravel_operand(what, it)?);
        }
        for (n, &d) in names.iter().zip(&dims) {
            self.unravel_check(n, d, "invalid entry in coordinates array", span)?;
        }
        let mut sum: Option<ast::Expr> = None;
        let mut stride = 1i64;
        for (n, &d) in names.iter().zip(&dims).rev() {
            let term = match stride {
                1 => ast::Expr::name(n, span),
                _ => ast::Expr::binary(
                    crate::ir::BinOp::Mul,
                    ast::Expr::name(n, span),
                    ast::Expr::int(stride, span),
                    span,
                ),
            };
            sum = Some(match sum {
                None => term,
                Some(s) => ast::Expr::binary(crate::ir::BinOp::Add, term, s, span),
            });
            stride *= d;
        }
        match sum {
            Some(s) => self.intp(&s),
            // (no dimensions: index 0)
            None => Some(TExpr {
                e: crate::ir::Expr::new(
                    ExprKind::Int(0),
                    crate::ir::Type::Scalar(ElemTy::I64),
                    span,
                ),
                weak: false,
            }),
        }
    }
}
