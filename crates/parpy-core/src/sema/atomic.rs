//! `parpy.atomic.add(a, i, v)`, `.max`, `.min`: an atomic update of the
//! element `a[i]` (`i` one index or a tuple), a statement of its own. The
//! value is converted to the element type first, as a store converts it;
//! the result is `Assign { a[i], ExprKind::Atomic { op, v } }`.
//! `with parpy.atomic:` marks the elements its `a[i] += v` statements
//! update: each is `parpy.atomic.add(a, i, v)`.

use crate::diag::{Diagnostic, Span};
use crate::ir::{AtomicOp, Expr, ExprKind, Place, StmtKind, Type};
use crate::resolve::Builtin;
use crate::syntax::ast;

use super::expr::Sub;
use super::Lowerer;

impl Lowerer<'_, '_> {
    /// The atomic operation `func` names, if it names `parpy.atomic.*`.
    pub(super) fn atomic_op(&self, func: &ast::Expr) -> Option<AtomicOp> {
        match self.builtin_of(func)? {
            Builtin::Atomic(op) => Some(op),
            _ => None,
        }
    }

    /// The body of `with parpy.atomic:`: element updates `a[...] += v`
    /// only, each an atomic add.
    pub(super) fn atomic_block(&mut self, body: &[ast::Stmt]) -> Vec<crate::ir::Stmt> {
        let mut out = vec![];
        for s in body {
            let update = match &s.kind {
                ast::StmtKind::AugAssign {
                    target,
                    op: crate::ir::BinOp::Add,
                    value,
                    ..
                } => match &target.kind {
                    ast::ExprKind::Subscript {
                        value: base,
                        indices,
                    } => Some((base, indices, target.span, value)),
                    _ => None,
                },
                ast::StmtKind::Pass => continue,
                ast::StmtKind::Expr(ast::Expr {
                    kind: ast::ExprKind::Str(_),
                    ..
                }) => continue,
                _ => None,
            };
            let Some((base, indices, place_span, value)) = update else {
                self.error(
                    Diagnostic::error(
                        "`with parpy.atomic:` holds only updates of array elements `a[i] += v`",
                    )
                    .at(s.span, "not an element update with `+=`")
                    .help("move this statement out of the block; for max and min call `parpy.atomic.max(a, i, v)` / `parpy.atomic.min(a, i, v)`"),
                );
                continue;
            };
            if let Some(k) =
                self.lower_atomic(AtomicOp::Add, base, indices.clone(), place_span, value)
            {
                out.push(crate::ir::Stmt::new(k, s.span));
            }
        }
        out
    }

    pub(super) fn atomic_stmt(
        &mut self,
        op: AtomicOp,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<StmtKind> {
        let name = format!("parpy.atomic.{}", op.name());
        let [array, index, value] = args else {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` takes 3 arguments (an array, an index, a value) but {} {} given",
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ))
                .at(span, "wrong number of arguments")
                .help(format!("write `{name}(hist, i, 1)` to update `hist[i]`")),
            );
            return None;
        };
        let indices = match &index.kind {
            ast::ExprKind::Tuple(v) => v.clone(),
            _ => vec![index.clone()],
        };
        self.lower_atomic(op, array, indices, array.span.to(index.span), value)
    }

    /// `op` of `value` into the element `array[indices]` (`place_span`
    /// covers both): the element store whose value is `ExprKind::Atomic`.
    fn lower_atomic(
        &mut self,
        op: AtomicOp,
        array: &ast::Expr,
        indices: Vec<ast::Expr>,
        place_span: Span,
        value: &ast::Expr,
    ) -> Option<StmtKind> {
        let name = format!("parpy.atomic.{}", op.name());
        let place = ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(array.clone()),
                indices,
            },
            span: place_span,
        };
        let sub = self.lower_subscript(&place);
        let v = self.lower_expr(value);
        let Sub::Elem {
            array: arr,
            indices,
            elem,
            alias,
        } = sub?
        else {
            self.error(
                Diagnostic::error(format!("`{name}` updates one element of an array"))
                    .at(place.span, "not an element")
                    .help(format!(
                        "give one index per dimension: `{name}(a, (i, j), v)`"
                    )),
            );
            return None;
        };
        if alias.is_some() {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` on a name bound to different arrays on different paths"
                ))
                .at(array.span, "this name is re-bound")
                .help("call it on each array in its own branch"),
            );
            return None;
        }
        if !self.opts.backend.supports_atomic(elem) {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` on {elem} elements is not supported by the {} backend",
                    self.opts.backend.name()
                ))
                .at(array.span, format!("an array of {elem}"))
                .note(
                    "atomic updates: every number type on Cpu; 32- and 64-bit types on Cuda; \
                     int32, uint32 and float32 on Metal",
                ),
            );
            return None;
        }
        let v = self.store_convert(v?, elem, place.span)?;
        let vspan = v.span;
        let value = Expr::new(
            ExprKind::Atomic {
                op,
                value: Box::new(v),
            },
            Type::Scalar(elem),
            vspan,
        );
        Some(StmtKind::Assign {
            dst: Place::Index {
                array: arr,
                indices,
            },
            value,
        })
    }
}
