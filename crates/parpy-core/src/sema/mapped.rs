//! A helper called inside a slice statement (`y[i, :] = h(x[i, :])`) runs
//! once per element, with the elements of its array arguments. That is
//! Python's answer only when the helper is elementwise: its parameters
//! (and the locals computed from them) meet only operators and
//! elementwise functions. A helper whose body is one `return e` has its
//! arguments put in `e` instead (`v / v.sum()` of a row is the row
//! divided by its sum); any other use (a reduction, an index, `len`, a
//! loop over the parameter) is a located error rather than the wrong
//! answer of applying it element by element.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::diag::{Diagnostic, Span};
use crate::resolve::{Builtin, Resolved, Resolver};
use crate::syntax::ast::{self, ExprKind, FunctionDef, StmtKind};

use super::Lowerer;

impl Lowerer<'_, '_> {
    /// For a helper call in a slice statement: `Some(Ok(e))`, the call as
    /// the expression `e` to lower in its place; `Some(Err(()))` when the
    /// helper cannot run per element (reported); `None` to call it per
    /// element.
    pub(super) fn mapped_helper(
        &mut self,
        def: &Arc<FunctionDef>,
        globals: &Arc<dyn Resolver>,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Result<ast::Expr, ()>> {
        if self.slice.is_none() || args.len() != def.params.len() {
            return None;
        }
        let arrays: BTreeSet<&str> = def
            .params
            .iter()
            .zip(args)
            .filter(|(_, a)| self.rank(a) >= 1)
            .map(|(p, _)| p.name.as_str())
            .collect();
        if arrays.is_empty() {
            return None;
        }
        // (an elementwise helper runs per element, as always)
        let at = not_elementwise(def, globals.as_ref(), arrays, 0)?;
        if let Some(e) = self.one_expression(def, globals, args) {
            return Some(Ok(e));
        }
        self.error(
            Diagnostic::error(format!(
                "`{}` is called with an array inside a slice statement, so it would run once per element, but it uses its array as a whole",
                def.name
            ))
            .at(at, "not an elementwise use")
            .also(span, "called here")
            .note("inside a slice statement parpy applies a helper to each element of its array arguments")
            .help("make the helper's body one `return` expression, compute the array's reduction in the caller and pass it, or write the loop over the elements in the caller"),
        );
        Some(Err(()))
    }

    /// The body `return e` of an unannotated helper as `e` with the call's
    /// arguments put in, where each global `e` reads is the same object
    /// for the caller (it is lowered here); `None` otherwise.
    fn one_expression(
        &self,
        def: &FunctionDef,
        globals: &Arc<dyn Resolver>,
        args: &[ast::Expr],
    ) -> Option<ast::Expr> {
        if def.params.iter().any(|p| p.annotation.is_some()) {
            return None;
        }
        let [stmt] = &def.body[..] else { return None };
        let StmtKind::Return(Some(e)) = &stmt.kind else {
            return None;
        };
        let params: BTreeSet<&str> = def.params.iter().map(|p| p.name.as_str()).collect();
        let mut same = true;
        e.walk(&mut |x| {
            let Some(path) = x.dotted_path() else { return };
            if !params.contains(path[0]) {
                same &= same_global(&self.resolver.resolve(&path), &globals.resolve(&path));
            }
        });
        if !same {
            return None;
        }
        let subst: Vec<(String, ast::Expr)> = def
            .params
            .iter()
            .zip(args)
            .map(|(p, a)| (p.name.clone(), a.clone()))
            .collect();
        let mut e = e.clone();
        super::inline::subst_expr(&mut e, &subst);
        Some(e)
    }
}

/// The first use in `def`'s body of a parameter in `arrays` (or of a local
/// computed from one) that is not elementwise, or `None`. (`depth`: of the
/// helper calls around, which are looked into.)
fn not_elementwise(
    def: &FunctionDef,
    globals: &dyn Resolver,
    arrays: BTreeSet<&str>,
    depth: usize,
) -> Option<Span> {
    let mut names: BTreeSet<String> = arrays.iter().map(|s| s.to_string()).collect();
    let mentions = |e: &ast::Expr, names: &BTreeSet<String>| {
        let mut found = false;
        e.walk(&mut |x| found |= matches!(&x.kind, ExprKind::Name(n) if names.contains(n)));
        found
    };
    // (the locals computed from them, to a fixed point)
    loop {
        let before = names.len();
        let mut add = vec![];
        ast::walk_stmts(&def.body, &mut |s| match &s.kind {
            StmtKind::Assign { targets, value } if mentions(value, &names) => {
                for t in targets {
                    t.walk(&mut |x| {
                        if let ExprKind::Name(n) = &x.kind {
                            add.push(n.clone());
                        }
                    });
                }
            }
            StmtKind::AugAssign { target, value, .. } if mentions(value, &names) => {
                if let ExprKind::Name(n) = &target.kind {
                    add.push(n.clone());
                }
            }
            _ => {}
        });
        names.extend(add);
        if names.len() == before {
            break;
        }
    }
    let mut bad = None;
    ast::walk_stmts(&def.body, &mut |s| {
        if let StmtKind::For { iter, .. } = &s.kind {
            if mentions(iter, &names) {
                bad = bad.or(Some(iter.span));
            }
        }
    });
    ast::walk_stmt_exprs(&def.body, &mut |top| {
        top.walk(&mut |e| {
            let wrong = match &e.kind {
                // (of a name or of any value computed from one:
                // `sq(v).sum()`, `(v * 2)[0]`)
                ExprKind::Subscript { value, .. } | ExprKind::Attr { value, .. } => {
                    mentions(value, &names)
                }
                ExprKind::Generator { .. } => mentions(e, &names),
                ExprKind::Call { func, args, .. } if args.iter().any(|a| mentions(a, &names)) => {
                    let arrays: Vec<bool> = args.iter().map(|a| mentions(a, &names)).collect();
                    !elementwise_call(func, &arrays, globals, depth)
                }
                _ => false,
            };
            if wrong {
                bad = bad.or(Some(e.span));
            }
        })
    });
    bad
}

/// Does the function `func` called with arguments computed from arrays
/// where `arrays` holds compute each element of its result from the
/// elements at the same place of its arguments? A jit helper does when
/// its body is elementwise in those parameters.
fn elementwise_call(
    func: &ast::Expr,
    arrays: &[bool],
    globals: &dyn Resolver,
    depth: usize,
) -> bool {
    let Some(path) = func.dotted_path() else {
        return false;
    };
    let n = arrays.len();
    match globals.resolve(&path) {
        Resolved::Function { def, globals } => {
            // (a helper calling itself is not looked into without end)
            depth < 8
                && def.params.len() == n
                && not_elementwise(
                    &def,
                    globals.as_ref(),
                    (def.params.iter().zip(arrays))
                        .filter(|(_, &a)| a)
                        .map(|(p, _)| p.name.as_str())
                        .collect(),
                    depth + 1,
                )
                .is_none()
        }
        Resolved::Dtype(_) => true,
        Resolved::Builtin(b) | Resolved::NumPy(b) => match b {
            Builtin::Min | Builtin::Max => n >= 2,
            Builtin::Math(_)
            | Builtin::PyMath(_)
            | Builtin::MathToInt(_)
            | Builtin::Convert
            | Builtin::Maximum
            | Builtin::Minimum
            | Builtin::Fmax
            | Builtin::Fmin
            | Builtin::Where
            | Builtin::Ufunc(_)
            | Builtin::Clip
            | Builtin::NanToNum
            | Builtin::IsClose
            | Builtin::MathIsClose
            | Builtin::Abs
            | Builtin::Float
            | Builtin::Int
            | Builtin::Bool
            | Builtin::Pow => true,
            _ => false,
        },
        _ => false,
    }
}

/// Do two resolutions of one global name denote the same thing?
fn same_global(a: &Resolved, b: &Resolved) -> bool {
    match (a, b) {
        (Resolved::Builtin(a), Resolved::Builtin(b)) | (Resolved::NumPy(a), Resolved::NumPy(b)) => {
            a == b
        }
        (Resolved::Dtype(a), Resolved::Dtype(b)) => a == b,
        (Resolved::Const(a), Resolved::Const(b)) => a == b,
        (Resolved::TypedConst(a, s), Resolved::TypedConst(b, t)) => a == b && s == t,
        (Resolved::Namespace, Resolved::Namespace) | (Resolved::NotFound, Resolved::NotFound) => {
            true
        }
        (Resolved::Function { def: a, .. }, Resolved::Function { def: b, .. }) => Arc::ptr_eq(a, b),
        _ => false,
    }
}
