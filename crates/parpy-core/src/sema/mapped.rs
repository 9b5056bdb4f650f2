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
        let (at, how) = not_elementwise(def, globals.as_ref(), arrays, 0)?;
        if how == Use::Truth {
            self.error(
                Diagnostic::error(format!(
                    "`{}` is called with an array inside a slice statement, but it uses the array as a truth value",
                    def.name
                ))
                .at(at, "a test of an array")
                .also(span, "called here")
                .note("Python raises here (the truth value of an array with more than one element is ambiguous); inside a slice statement parpy would apply the helper to each element")
                .help("choose elementwise with `np.where(c, a, b)` (or `np.clip(v, lo, hi)`, `np.maximum`, `np.minimum`) in the helper, or call the helper per element in a loop over the slice"),
            );
            return Some(Err(()));
        }
        if how == Use::Scalar {
            self.error(
                Diagnostic::error(format!(
                    "`{}` is called with an array inside a slice statement, but it converts the array to one Python number",
                    def.name
                ))
                .at(at, "a Python number of an array")
                .also(span, "called here")
                .note("Python raises here for an array of more than one element (`float`, `int`, `bool`, `math.*` and Python's `max` / `min` of several arguments take numbers, not arrays); inside a slice statement parpy would apply the helper to each element")
                .help("use NumPy's elementwise functions in the helper (`np.sqrt`, `np.floor`, `np.maximum(v, 0.0)`, `v.astype(np.float64)`), or call the helper per element in a loop over the slice"),
            );
            return Some(Err(()));
        }
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

/// How a helper uses an array parameter other than element by element.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Use {
    /// As a whole: a reduction, an index, `len`, a loop over it.
    Whole,
    /// As a truth value: the test of an `if`, `while`, `assert` or
    /// `x if c else y`, an operand `and` / `or` / `not` test, a comparison
    /// of a chain but the last (`lo < v < hi`). NumPy raises for an array
    /// of more than one element ("the truth value of an array ... is
    /// ambiguous"); per element it would branch element by element.
    Truth,
    /// As one Python number: `float(v)`, `int(v)`, `bool(v)`, `math.f(v)`,
    /// Python's `max(v, 0.0)`. Python raises for an array of more than one
    /// element.
    Scalar,
}

/// The first use in `def`'s body of a parameter in `arrays` (or of a local
/// computed from one) that is not elementwise, the earlier in the text of
/// the first whole use and the first truth use, or `None`. (`depth`: of
/// the helper calls around, which are looked into; a truth use inside one
/// is reported where it is.)
fn not_elementwise(
    def: &FunctionDef,
    globals: &dyn Resolver,
    arrays: BTreeSet<&str>,
    depth: usize,
) -> Option<(Span, Use)> {
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
    let mentions = |e: &ast::Expr| mentions(e, &names);
    // the first use inside `top` that is not elementwise (a helper's truth
    // use at its own place)
    let first_use = |top: &ast::Expr| {
        let mut bad: Option<(Span, Use)> = None;
        top.walk(&mut |e| {
            let found = match &e.kind {
                // (of a name or of any value computed from one:
                // `sq(v).sum()`, `(v * 2)[0]`)
                ExprKind::Subscript { value, .. } | ExprKind::Attr { value, .. }
                    if mentions(value) =>
                {
                    Some((e.span, Use::Whole))
                }
                ExprKind::Generator { .. } if mentions(e) => Some((e.span, Use::Whole)),
                ExprKind::Call { func, args, .. } if args.iter().any(&mentions) => {
                    let arrays: Vec<bool> = args.iter().map(&mentions).collect();
                    match elementwise_call(func, &arrays, globals, depth) {
                        Ok(()) => None,
                        Err(Some(inner @ (_, Use::Truth | Use::Scalar))) => Some(inner),
                        Err(Some((_, Use::Whole)) | None) => Some((e.span, Use::Whole)),
                    }
                }
                _ => None,
            };
            bad = bad.or(found);
        });
        bad
    };
    // a test of an array (not of a whole use of one: `if v.sum() > 0:`)
    let tested =
        |t: &ast::Expr| (mentions(t) && first_use(t).is_none()).then_some((t.span, Use::Truth));
    let mut uses: Vec<(Span, Use)> = vec![];
    ast::walk_stmts(&def.body, &mut |s| match &s.kind {
        StmtKind::For { iter, .. } if mentions(iter) => uses.push((iter.span, Use::Whole)),
        StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => uses.extend(tested(cond)),
        StmtKind::Assert { test, .. } => uses.extend(tested(test)),
        _ => {}
    });
    ast::walk_stmt_exprs(&def.body, &mut |top| {
        uses.extend(first_use(top));
        top.walk(&mut |e| match &e.kind {
            ExprKind::IfExp { cond, .. } => uses.extend(tested(cond)),
            ExprKind::Unary {
                op: crate::ops::UnOp::Not,
                arg,
            } => uses.extend(tested(arg)),
            ExprKind::BoolOp { values, .. } => {
                // (the last operand is the value, not tested)
                let n = values.len().saturating_sub(1);
                uses.extend(values[..n].iter().filter_map(&tested));
            }
            ExprKind::Compare { first, rest } => {
                // `a < b < c` is `a < b and b < c`: each comparison but the
                // last is tested
                let mut lhs = &**first;
                for (_, rhs) in rest.iter().take(rest.len().saturating_sub(1)) {
                    if (mentions(lhs) || mentions(rhs))
                        && first_use(lhs).is_none()
                        && first_use(rhs).is_none()
                    {
                        uses.push((lhs.span.to(rhs.span), Use::Truth));
                    }
                    lhs = rhs;
                }
            }
            _ => {}
        });
    });
    uses.into_iter().min_by_key(|(span, _)| span.lo)
}

/// Does the function `func` called with arguments computed from arrays
/// where `arrays` holds compute each element of its result from the
/// elements at the same place of its arguments? A jit helper does when
/// its body is elementwise in those parameters; `Err` holds its first use
/// that is not (`None`: the function is not elementwise; a Python function
/// of numbers is a `Use::Scalar` at the call).
fn elementwise_call(
    func: &ast::Expr,
    arrays: &[bool],
    globals: &dyn Resolver,
    depth: usize,
) -> Result<(), Option<(Span, Use)>> {
    let Some(path) = func.dotted_path() else {
        return Err(None);
    };
    let n = arrays.len();
    let elementwise = match globals.resolve(&path) {
        Resolved::Function { def, globals } => {
            // (a helper calling itself is not looked into without end)
            if depth >= 8 || def.params.len() != n {
                return Err(None);
            }
            return match not_elementwise(
                &def,
                globals.as_ref(),
                (def.params.iter().zip(arrays))
                    .filter(|(_, &a)| a)
                    .map(|(p, _)| p.name.as_str())
                    .collect(),
                depth + 1,
            ) {
                None => Ok(()),
                Some(u) => Err(Some(u)),
            };
        }
        Resolved::Dtype(_) => true,
        // Python's functions of numbers: `float(v)` of a row raises
        Resolved::Builtin(b) if b.takes_python_numbers(n) => {
            return Err(Some((func.span, Use::Scalar)));
        }
        Resolved::Builtin(b) | Resolved::NumPy(b) => match b {
            Builtin::Min | Builtin::Max => false,
            Builtin::Math(_)
            | Builtin::PyMath(_)
            | Builtin::MathGcdLcm(_)
            | Builtin::MathAngle(_)
            | Builtin::MathUlp
            | Builtin::MathInt(_)
            | Builtin::Real
            | Builtin::MathToInt(_)
            | Builtin::Convert
            | Builtin::Maximum
            | Builtin::Minimum
            | Builtin::Fmax
            | Builtin::Fmin
            | Builtin::Where
            | Builtin::Select
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
    };
    if elementwise {
        Ok(())
    } else {
        Err(None)
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
