//! Boolean-mask stores: `t[t < 0] = 0.0`, `y[i, x[i, :] > 0.5] = 1.0`,
//! `y[i, m] += 1` with a boolean array as the last index.
//!
//! NumPy stores the value into the elements where the mask is true. With
//! one value (a number) that is `y[i, :] = np.where(m, v, y[i, :])`
//! (`y[i, :] = np.where(m, y[i, :] + 1, y[i, :])` for `+=`), which this
//! module writes before the statement is lowered: the mask stands for as
//! many full slices as it has dimensions. A mask elsewhere than last, or
//! an array of values (NumPy packs them into the true elements in order),
//! is refused with what to write.

use crate::diag::Diagnostic;
use crate::ir::ElemTy;
use crate::syntax::ast;

use super::Lowerer;

impl Lowerer<'_, '_> {
    /// `s` as the `np.where` store it is when its target has a boolean
    /// mask; `Some(None)` after an error, `None` for other statements.
    pub(super) fn mask_store(&mut self, s: &ast::Stmt) -> Option<Option<ast::Stmt>> {
        let (target, op, value) = match &s.kind {
            ast::StmtKind::Assign { targets, value } if targets.len() == 1 => {
                (&targets[0], None, value)
            }
            ast::StmtKind::AugAssign { target, op, value } => (target, Some(*op), value),
            _ => return None,
        };
        let ast::ExprKind::Subscript {
            value: base,
            indices,
        } = &target.kind
        else {
            return None;
        };
        let at = indices.iter().position(|i| {
            !matches!(
                i.kind,
                ast::ExprKind::Slice { .. } | ast::ExprKind::Ellipsis | ast::ExprKind::None
            ) && self.rank(i) > 0
        })?;
        let mask = &indices[at];
        let (dims, elem) = self.shape_of(mask, "a mask")?;
        if elem != ElemTy::Bool {
            self.error(
                Diagnostic::error("an array of indices is not supported as an index in parpy functions")
                    .at(mask.span, format!("an array of {}", elem.numpy_name()))
                    .note("parpy indexes with numbers, slices and boolean masks")
                    .help("index inside a loop over the indices (`for k in range(len(idx)): y[idx[k]] = v`)"),
            );
            return Some(None);
        }
        if at + 1 != indices.len() {
            self.error(
                Diagnostic::error("a boolean mask is supported as the last index of a store in parpy functions")
                    .at(mask.span, "a mask followed by more indices")
                    .also(target.span, "this store")
                    .help("put the mask last (`y[i, m] = v`), or store with `np.where` over the whole slice"),
            );
            return Some(None);
        }
        if self.rank(value) > 0 {
            self.error(
                Diagnostic::error("a masked store takes one value in parpy functions")
                    .at(value.span, "an array of values")
                    .note("NumPy stores the values of an array, in order, into the elements where the mask is true")
                    .help("store one number (`t[t < 0] = 0.0`), or write the whole slice with `np.where(mask, values, t)`"),
            );
            return Some(None);
        }
        // the slice the mask selects from: one full slice per dimension
        let mut whole = indices.clone();
        whole.splice(
            at..,
            std::iter::repeat_n(ast::Expr::full_slice(mask.span), dims.len()),
        );
        let slice = ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: base.clone(),
                indices: whole,
            },
            span: target.span,
        };
        let new = match op {
            None => value.clone(),
            Some(op) => ast::Expr {
                kind: ast::ExprKind::Binary {
                    op,
                    lhs: Box::new(slice.clone()),
                    rhs: Box::new(value.clone()),
                },
                span: s.span,
            },
        };
        let func = ast::Expr {
            kind: ast::ExprKind::Attr {
                value: Box::new(ast::Expr::name(crate::resolve::NUMPY_ROOT, s.span)),
                attr: "where".to_string(),
            },
            span: s.span,
        };
        let select = ast::Expr::call(func, vec![mask.clone(), new, slice.clone()], s.span);
        Some(Some(ast::Stmt {
            kind: ast::StmtKind::Assign {
                targets: vec![slice],
                value: select,
            },
            span: s.span,
        }))
    }
}
