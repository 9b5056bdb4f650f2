//! `a.reshape(d0, d1, ...)` (or a tuple, one `-1` inferred),
//! `np.reshape(a, shape)`, `a.ravel()`, `a.flatten()`, `np.ravel(a)` read by
//! an array expression: NumPy's array of `a`'s elements in row-major order,
//! of the new shape. Each element is `a`'s element at the same row-major
//! position, read where the expression reads it (`slices.rs`
//! `element_at`): `y[i, :2] = x[i, :].reshape(2, 4).sum(axis=1)`.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, Expr, Type};
use crate::resolve::Resolved;
use crate::syntax::ast;

use super::slices::IndexSlot;
use super::{Lowerer, TExpr};

impl Lowerer<'_, '_> {
    /// The array and the new shape (as written; `None`: flattened) of a
    /// reshape, ravel or flatten call of `func` with `args`; `None` for
    /// other calls. (`alias.rs` `rank` asks for every call: the name is
    /// looked at before anything is resolved.)
    pub(super) fn reshape_of<'e>(
        &self,
        func: &'e ast::Expr,
        args: &'e [ast::Expr],
    ) -> Option<(&'e ast::Expr, Option<Vec<&'e ast::Expr>>)> {
        let shape = |dims: &'e [ast::Expr]| match dims {
            [d] => match (&d.kind, d.list_items()) {
                (ast::ExprKind::Tuple(items), _) => items.iter().collect(),
                (_, Some(items)) => items.iter().collect(),
                _ => vec![d],
            },
            _ => dims.iter().collect(),
        };
        let ast::ExprKind::Attr { value, attr } = &func.kind else {
            return None;
        };
        if !matches!(attr.as_str(), "reshape" | "ravel" | "flatten") {
            return None;
        }
        if self.is_local_value(value) {
            return match (attr.as_str(), args) {
                ("reshape", [_, ..]) => Some((value, Some(shape(args)))),
                ("ravel" | "flatten", []) => Some((value, None)),
                _ => None,
            };
        }
        // `np.reshape(a, shape)`, `np.ravel(a)`: NumPy's functions, which
        // the resolver knows as ones without a builtin of their own
        let path = func.dotted_path().filter(|_| !self.is_local_root(func))?;
        let Resolved::Unsupported(d) = self.resolve_path(&path) else {
            return None;
        };
        let numpy = |name: &str| {
            d.strip_prefix("numpy.")
                .and_then(|r| r.strip_prefix(name))
                .is_some_and(|r| r.starts_with(','))
        };
        match args {
            [a, dims @ ..] if numpy("reshape") && !dims.is_empty() => Some((a, Some(shape(dims)))),
            [a] if numpy("ravel") => Some((a, None)),
            _ => None,
        }
    }

    /// The number of dimensions of a reshape (see the module doc).
    pub(super) fn reshape_rank(&self, dims: &Option<Vec<&ast::Expr>>) -> usize {
        dims.as_ref().map_or(1, Vec::len)
    }

    /// A reshape read inside an array expression; `None` after an error.
    pub(super) fn reshaped(
        &mut self,
        (a, dims): (&ast::Expr, Option<Vec<&ast::Expr>>),
        span: Span,
    ) -> Option<TExpr> {
        let (from, _) = self.shape_of(a, "a reshape")?;
        let shape = self.reshape_shape(&from, dims, span)?;
        let int_ty = self.opts.int_type;
        let slots = shape
            .iter()
            .map(|&extent| IndexSlot::full(extent, int_ty, span))
            .collect();
        let counters = self.map_slices(slots, false, span)?;
        // the row-major position of the element, then its index in `a`
        let at = reshaped_indices(counters, &shape, &from, int_ty, span);
        let at = at.into_iter().map(|i| (i, span)).collect();
        self.element_at(a, at, span)
    }

    /// The new shape of a reshape of an array of shape `from` (one `-1`
    /// inferred); `None` after an error (NumPy's ValueError).
    pub(super) fn reshape_shape(
        &mut self,
        from: &[i64],
        dims: Option<Vec<&ast::Expr>>,
        span: Span,
    ) -> Option<Vec<i64>> {
        let n: i64 = from.iter().product();
        let mut shape = vec![];
        let mut inferred = None;
        for d in dims.unwrap_or_default() {
            let t = self.lower_expr(d)?;
            match self.known_int(&t.e) {
                Some(-1) if inferred.is_none() => {
                    inferred = Some(shape.len());
                    shape.push(1);
                }
                Some(k) if k >= 0 => shape.push(k),
                _ => {
                    self.error(
                        Diagnostic::error(
                            "the new shape of a reshape must be known when compiling",
                        )
                        .at(d.span, "not a known length (or a second -1)")
                        .help(
                            "use constants, shapes (`x.shape[1]`) or specialized scalar arguments",
                        ),
                    );
                    return None;
                }
            }
        }
        if shape.is_empty() {
            shape.push(n);
        }
        if let Some(k) = inferred {
            let rest = shape.iter().try_fold(1i64, |a, &d| a.checked_mul(d));
            if let Some(rest) = rest.filter(|&r| r > 0 && n % r == 0) {
                shape[k] = n / rest;
            }
        }
        // (a product past int64 is no size: 2**32 * 2**32 wrapped to 0)
        let size = shape.iter().try_fold(1i64, |a, &d| a.checked_mul(d));
        if size != Some(n) {
            self.error(
                Diagnostic::error(format!(
                    "cannot reshape an array of {n} elements into shape {}",
                    super::local_arrays::shape_text(&shape)
                ))
                .at(
                    span,
                    format!("from shape {}", super::local_arrays::shape_text(from)),
                )
                .note("NumPy raises ValueError for it")
                .type_error(),
            );
            return None;
        }
        Some(shape)
    }
}

/// The indices into an array of shape `from` of the element at `counters`
/// (indices into its reshape to `shape`): their row-major position, then
/// that position's index in `from`, NumPy's C-order reshape. The one
/// mapping of a reshape read (`reshaped`) and a reshaped view's subscript
/// (`views.rs`).
pub(super) fn reshaped_indices(
    counters: Vec<Expr>,
    shape: &[i64],
    from: &[i64],
    int_ty: crate::types::ElemTy,
    span: Span,
) -> Vec<Expr> {
    let it = Type::Scalar(int_ty);
    let bin = |op, l: Expr, r: Expr| Expr::binary(op, l, r, it.clone(), span);
    let mut flat = Expr::int(0, int_ty, span);
    for (k, d) in counters.into_iter().zip(shape) {
        flat = bin(
            BinOp::Add,
            bin(BinOp::Mul, flat, Expr::int(*d, int_ty, span)),
            k,
        );
    }
    let mut stride: i64 = from.iter().product();
    let mut at = vec![];
    for (j, d) in from.iter().enumerate() {
        stride /= (*d).max(1);
        let mut i = flat.clone();
        if stride > 1 {
            i = bin(BinOp::FloorDiv, i, Expr::int(stride, int_ty, span));
        }
        // (the first index is below its dimension already)
        if j > 0 {
            i = bin(BinOp::Mod, i, Expr::int(*d, int_ty, span));
        }
        at.push(i);
    }
    at
}
