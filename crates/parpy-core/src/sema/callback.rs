//! Calls of `parpy.callback` Python functions: a statement of the entry's
//! host code (`StmtKind::Callback`) passing whole arrays, rows of arrays
//! (`a[i]`, `a[i, :]`: views of the other dimensions) and scalars.

use crate::diag::{Diagnostic, Span};
use crate::ir::{CallArg, Callback, StmtKind, Type};
use crate::resolve::Resolved;
use crate::syntax::ast;

use super::Lowerer;

impl Lowerer<'_, '_> {
    /// The callback `func` names, if it names one: (id, name).
    pub(super) fn callback_of(&self, func: &ast::Expr) -> Option<(u64, String)> {
        if self.is_local_root(func) {
            return None;
        }
        match self.resolver.resolve(&func.dotted_path()?) {
            Resolved::Callback { id, name } => Some((id, name)),
            _ => None,
        }
    }

    pub(super) fn callback_stmt(
        &mut self,
        func: &ast::Expr,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<StmtKind> {
        let (id, name) = self.callback_of(func)?;
        if !self.is_entry {
            self.error(
                Diagnostic::error(format!(
                    "the callback `{name}` can only be called from the host code of the function \
                     called from Python"
                ))
                .at(span, "called inside a helper function")
                .help("call it in the `@parpy.jit` function itself, or inline this helper with `parpy.builtin.inline(...)`"),
            );
            return None;
        }
        let mut out = vec![];
        let mut ok = true;
        for a in args {
            match self.callback_arg(a) {
                Some(arg) => out.push(arg),
                None => ok = false,
            }
        }
        let site = self.sh.callback_sites;
        self.sh.callback_sites += 1;
        ok.then(|| {
            StmtKind::Callback(Box::new(Callback {
                site,
                id,
                name,
                args: out,
            }))
        })
    }

    fn callback_arg(&mut self, a: &ast::Expr) -> Option<CallArg> {
        if let Some((array, _)) = self.array_arg(a) {
            if self.alias_of(array).is_none() {
                return Some(CallArg::Array {
                    array,
                    prefix: vec![],
                });
            }
        }
        if self.array_or_alias_arg(a).is_some() {
            self.error(
                Diagnostic::error("a callback takes arrays by their own names")
                    .at(a.span, "a name re-bound to several arrays")
                    .help("call the callback in each branch with the array itself"),
            );
            return None;
        }
        if let Some((array, idx)) = self.row_view(a) {
            if self.alias_of(array).is_some() {
                self.error(
                    Diagnostic::error("a callback takes rows of arrays by their own names")
                        .at(a.span, "a name re-bound to several arrays"),
                );
                return None;
            }
            let prefix = self.view_prefix(array, idx)?;
            return Some(CallArg::Array { array, prefix });
        }
        if matches!(a.kind, ast::ExprKind::Subscript { .. }) && self.lower_subscript_is_view(a) {
            self.error(
                Diagnostic::error("a callback takes whole arrays, rows `a[i]` and scalars")
                    .at(a.span, "a slice of an array")
                    .help("pass the whole array and slice it inside the callback"),
            );
            return None;
        }
        let t = self.lower_expr(a)?;
        self.scalar_elem(&t)?;
        Some(CallArg::Scalar(t.e))
    }

    /// The indices of a row view `array[idx]` (`row_view`), lowered and
    /// wrapped like any index (negative ones count from the end).
    pub(super) fn view_prefix(
        &mut self,
        array: crate::ir::VarId,
        idx: Vec<&ast::Expr>,
    ) -> Option<Vec<crate::ir::Expr>> {
        let Type::Array { shape, .. } = self.func.var(array).ty.clone() else {
            return None;
        };
        let mut prefix = vec![];
        for (ix, dim) in idx.into_iter().zip(shape) {
            let t = self.lower_expr(ix)?;
            let i = self.element_index(t, "an array index")?;
            prefix.push(self.wrap_negative(i, dim));
        }
        Some(prefix)
    }

    /// `a[...]` with a slice among its indices.
    fn lower_subscript_is_view(&self, a: &ast::Expr) -> bool {
        let mut e = a;
        while let ast::ExprKind::Subscript { value, indices } = &e.kind {
            if indices
                .iter()
                .any(|i| matches!(i.kind, ast::ExprKind::Slice { .. }))
            {
                return true;
            }
            e = value;
        }
        false
    }
}
