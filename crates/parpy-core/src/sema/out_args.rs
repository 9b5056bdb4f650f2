//! `out=` (and `where=`) of NumPy's elementwise functions, as a statement:
//! `np.exp(x[i, :], out=y[i, :])` stores the function's value into the
//! array `out` is (`y[i, :] = np.exp(x[i, :])`; `out=y` of a whole array
//! is `y[...] = ...`), and `where=m` keeps `out`'s element where `m` is
//! false (`y[i, :] = np.where(m, np.exp(x[i, :]), y[i, :])`), as NumPy
//! does. The store is a slice assignment of the function's type, so an
//! `out` of another type is the store's error (NumPy would cast within a
//! kind). Elsewhere (`v = np.exp(x, out=y)`), `out=` stays an error.
//!
//! This runs on the body before `keywords` binds the calls' arguments.

use crate::resolve::{Builtin, Resolver};
use crate::syntax::ast::{self, Expr, ExprKind, FunctionDef, Keyword, Stmt, StmtKind};

/// NumPy's elementwise functions that take `out=` and `where=`.
fn elementwise(b: Builtin) -> bool {
    matches!(
        b,
        Builtin::Math(_)
            | Builtin::Ufunc(_)
            | Builtin::Abs
            | Builtin::Maximum
            | Builtin::Minimum
            | Builtin::Fmax
            | Builtin::Fmin
            | Builtin::Clip
    )
}

/// `def` with each statement `f(..., out=o[, where=m])` of an elementwise
/// NumPy function `f` made the store into `o`; `None` when it has none.
pub(super) fn rewrite(def: &FunctionDef, resolver: &dyn Resolver) -> Option<FunctionDef> {
    let mut locals: Vec<String> = def.params.iter().map(|p| p.name.clone()).collect();
    super::assign::assigned_names(&def.body, &mut locals);
    let store = |s: &Stmt| -> Option<Stmt> {
        let StmtKind::Expr(Expr {
            kind:
                ExprKind::Call {
                    func,
                    args,
                    keywords,
                },
            span,
        }) = &s.kind
        else {
            return None;
        };
        let path = func.dotted_path()?;
        if locals.iter().any(|l| l == path[0]) {
            return None;
        }
        let b = resolver.resolve(&path).builtin()?;
        let out = keywords.iter().find(|k| k.name == "out")?;
        if !elementwise(b) || matches!(out.value.kind, ExprKind::None | ExprKind::Tuple(_)) {
            return None;
        }
        let target = match &out.value.kind {
            ExprKind::Name(_) => Expr {
                kind: ExprKind::Subscript {
                    value: Box::new(out.value.clone()),
                    indices: vec![Expr {
                        kind: ExprKind::Ellipsis,
                        span: out.span,
                    }],
                },
                span: out.value.span,
            },
            _ => out.value.clone(),
        };
        let rest: Vec<Keyword> = keywords
            .iter()
            .filter(|k| k.name != "out" && k.name != "where")
            .cloned()
            .collect();
        let mut value = Expr {
            kind: ExprKind::Call {
                func: func.clone(),
                args: args.clone(),
                keywords: rest,
            },
            span: *span,
        };
        if let Some(m) = keywords.iter().find(|k| k.name == "where") {
            let args = vec![m.value.clone(), value, target.clone()];
            value = super::Lowerer::numpy_call("where", args, *span);
        }
        Some(Stmt {
            kind: StmtKind::Assign {
                targets: vec![target],
                value,
            },
            span: s.span,
        })
    };
    let mut any = false;
    let mut body = def.body.clone();
    ast::for_each_stmt_mut(&mut body, &mut |s| {
        if let Some(new) = store(s) {
            *s = new;
            any = true;
        }
    });
    any.then(|| FunctionDef {
        body,
        ..def.clone()
    })
}
