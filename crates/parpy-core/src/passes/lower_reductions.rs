//! Lowers `par_reduction()` loops. The body must end with one statement
//! `lhs = lhs OP e` (OP one of `+ * max min`, `lhs` not depending on the loop
//! variable), after assignments to locals used only in the loop (private to
//! each iteration, feeding `e`); it becomes
//!
//! ```text
//! t = identity(OP)
//! for ... reduce(OP -> t) { t = t OP e }
//! lhs = lhs OP t
//! ```

use crate::diag::{Diagnostic, Span};
use crate::ir::visit::{same_expr, uses_var};
use crate::ir::{
    BinOp, Block, Expr, ExprKind, ForLoop, Function, Place, ReduceOp, Reduction, Stmt, StmtKind,
    Type, Var, VarId, VarKind,
};

/// Rewrites every function of the program; returns all errors.
pub fn run(p: &mut crate::ir::Program) -> Vec<Diagnostic> {
    let mut errors = vec![];
    lower_function(&mut p.host, &mut errors);
    for k in &mut p.kernels {
        lower_function(&mut k.func, &mut errors);
    }
    for h in &mut p.helpers {
        lower_function(h, &mut errors);
    }
    errors
}

fn lower_function(f: &mut Function, errors: &mut Vec<Diagnostic>) {
    let mut body = std::mem::take(&mut f.body);
    let refs = var_refs(&body);
    lower_block(f, &mut body, &refs, errors);
    f.body = body;
}

/// How many times each variable is read or assigned in `b` (an array:
/// its elements).
fn var_refs(b: &[Stmt]) -> std::collections::HashMap<VarId, usize> {
    let mut n = std::collections::HashMap::new();
    fn count(b: &[Stmt], n: &mut std::collections::HashMap<VarId, usize>) {
        for s in b {
            if let StmtKind::Assign {
                dst: Place::Var(v) | Place::Index { array: v, .. },
                ..
            } = &s.kind
            {
                *n.entry(*v).or_default() += 1;
            }
            for sub in crate::ir::visit::sub_blocks(s) {
                count(sub, n);
            }
        }
    }
    count(b, &mut n);
    crate::ir::visit::walk_exprs(b, &mut |e| {
        if let ExprKind::Var(v) | ExprKind::Index { array: v, .. } = &e.kind {
            *n.entry(*v).or_default() += 1;
        }
        true
    });
    n
}

fn lower_block(
    f: &mut Function,
    b: &mut Block,
    refs: &std::collections::HashMap<VarId, usize>,
    errors: &mut Vec<Diagnostic>,
) {
    let old = std::mem::take(b);
    for mut s in old {
        match &mut s.kind {
            StmtKind::For(l) => {
                lower_block(f, &mut l.body, refs, errors);
                if l.wants_reduction && l.reduction.is_none() {
                    match lower_loop(f, l, s.span, refs) {
                        Ok((init, fin)) => {
                            b.push(init);
                            b.push(s);
                            b.push(fin);
                            continue;
                        }
                        Err(d) => errors.push(d),
                    }
                }
            }
            StmtKind::While { body, .. } | StmtKind::OnDevice(body) => {
                lower_block(f, body, refs, errors)
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                lower_block(f, then_body, refs, errors);
                lower_block(f, else_body, refs, errors);
            }
            _ => {}
        }
        b.push(s);
    }
}

/// The reduction of `lhs = lhs op e` (`bools`: of a bool target).
/// NumPy's `+` of bools is their logical or and `*` their logical and
/// (sema's `or` / `and`): the max and min of bools.
fn reduce_op(op: BinOp, bools: bool) -> Option<ReduceOp> {
    match op {
        BinOp::Add => Some(ReduceOp::Sum),
        BinOp::Mul => Some(ReduceOp::Prod),
        BinOp::Max | BinOp::FMax => Some(ReduceOp::Max),
        BinOp::Min | BinOp::FMin => Some(ReduceOp::Min),
        BinOp::Or | BinOp::BitOr if bools => Some(ReduceOp::Max),
        BinOp::And | BinOp::BitAnd if bools => Some(ReduceOp::Min),
        _ => None,
    }
}

fn place_expr(f: &Function, p: &Place, span: Span) -> Option<Expr> {
    match p {
        Place::Var(id) => Some(Expr::var(*id, f.var(*id).ty.clone(), span)),
        Place::Index { array, indices } => {
            let elem = f.var(*array).ty.elem()?;
            Some(Expr::new(
                ExprKind::Index {
                    array: *array,
                    indices: indices.clone(),
                },
                Type::Scalar(elem),
                span,
            ))
        }
    }
}

fn bad_body(l: &ForLoop, span: Span, why: &str) -> Diagnostic {
    let at = l.body.first().map(|s| s.span).unwrap_or(span);
    let label = l.labels.first().cloned().unwrap_or_default();
    Diagnostic::error(format!(
        "the loop labelled `{label}` is marked par_reduction() but its body is not a reduction"
    ))
    .at(at, why.to_string())
    .also(span.header(), "in this loop")
    .help("a par_reduction() loop body must end with one statement `lhs = lhs OP e` (or `lhs OP= e`) with OP one of `+`, `*`, `max`, `min`, where `lhs` does not depend on the loop variable, e.g. `s[0] += x[i]`; the statements before it may only assign local variables used nowhere else (a slice reduction is fine)")
}

/// The error of `t = max(e, t)` of floats under par_reduction() (`is_max`;
/// else `min`): Python's fold is bound to the order of the elements.
fn element_first(l: &ForLoop, stmt: Span, is_max: bool) -> Diagnostic {
    let name = if is_max { "max" } else { "min" };
    let numpy = if is_max { "maximum" } else { "minimum" };
    let label = l.labels.first().cloned().unwrap_or_default();
    Diagnostic::error(format!(
        "the loop labelled `{label}` is marked par_reduction() but its Python `{name}` takes the element first"
    ))
    .at(stmt, format!("`{name}(x[i], out[0])`: a NaN target or element gives way to the next element"))
    .note(format!(
        "Python's fold gives the {name} of the elements after the last NaN (NaN when the last one is NaN): the order of the elements decides, which a parallel reduction does not keep"
    ))
    .help(format!(
        "put the target first, `out[0] = {name}(out[0], x[i])` (NaN elements skipped, as Python folds it), or use `np.{numpy}(out[0], x[i])` (a NaN wins, NumPy's rule)"
    ))
}

/// Whether `s` only assigns locals used nowhere outside the loop (`inside`
/// counts the loop body's references, `refs` the function's): an
/// assignment (of a scalar, or of an element of a local array: the `buf`
/// or `tmp` a sum in NumPy's order fills), a loop of such statements (a
/// slice reduction's `acc = 0; for j reduce(sum -> acc) { acc = acc +
/// x[r, j] }`; a `while` of them: `np.interp`'s search), or an `if` of
/// them (a slice reduction under `a if c else b`, which sema hoists under
/// its condition), or a check.
fn computes_privately(
    f: &Function,
    s: &Stmt,
    inside: &std::collections::HashMap<VarId, usize>,
    refs: &std::collections::HashMap<VarId, usize>,
) -> bool {
    let private = |v: &VarId| f.var(*v).kind == VarKind::Local && inside.get(v) == refs.get(v);
    match &s.kind {
        StmtKind::Assign {
            dst: Place::Var(v) | Place::Index { array: v, .. },
            ..
        } => private(v),
        StmtKind::For(l) => {
            l.reduction.as_ref().is_none_or(|r| private(&r.acc))
                && l.body
                    .iter()
                    .all(|s| computes_privately(f, s, inside, refs))
        }
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => then_body
            .iter()
            .chain(else_body)
            .all(|s| computes_privately(f, s, inside, refs)),
        // (`np.interp`'s binary search)
        StmtKind::While { body, .. } => body.iter().all(|s| computes_privately(f, s, inside, refs)),
        // a check (sema's of Python's `ZeroDivisionError`, an `assert`)
        // reads and writes nothing of the loop's
        StmtKind::Expr(e) => matches!(e.kind, ExprKind::Assert { .. }),
        _ => false,
    }
}

/// Returns the statements before and after the loop, and rewrites the loop.
fn lower_loop(
    f: &mut Function,
    l: &mut ForLoop,
    span: Span,
    refs: &std::collections::HashMap<VarId, usize>,
) -> Result<(Stmt, Stmt), Diagnostic> {
    let Some((s, prefix)) = l.body.split_last() else {
        return Err(bad_body(l, span, "the loop body is empty"));
    };
    // Statements before the update: iteration-private locals.
    let inside = var_refs(&l.body);
    for p in prefix {
        if !computes_privately(f, p, &inside, refs) {
            let exits = crate::ir::visit::loop_exits(std::slice::from_ref(p));
            let (why, at) = match exits.first() {
                None => (
                    "expected assignments to local variables used only in this loop, then the update",
                    p.span,
                ),
                Some(jump) => (
                    "skips the update: combine the identity instead (`s[0] += x[i] if c else 0`)",
                    jump.span,
                ),
            };
            let mut d = bad_body(l, span, why);
            d.labels[0].span = at;
            return Err(d);
        }
    }
    let prefix = prefix.to_vec();
    let StmtKind::Assign { dst, value } = &s.kind else {
        return Err(bad_body(l, span, "expected an assignment `lhs = lhs OP e`"));
    };
    let Some(lhs) = place_expr(f, dst, s.span) else {
        return Err(bad_body(l, span, "the target is not a scalar"));
    };
    // Python's `max(a, b)` of floats is `b if b > a else a` (sema's
    // `python_extreme_of_floats`): `t = max(t, e)` as Python folds it keeps
    // the target's value where it is NaN and skips NaN elements, so the
    // elements combine with `fmax` (no partial is NaN then) and the target
    // with Python's comparison at the end; `t = max(e, t)` of floats is
    // refused: Python's fold gives the greatest of the elements after the
    // last NaN (a NaN target or element is replaced by the next element),
    // which depends on their order (of integers it is the IR's max)
    let mut python_fold: Option<BinOp> = None;
    let target = &lhs;
    let (op, a, b) = match &value.kind {
        ExprKind::Binary { op, lhs, rhs } => (op, lhs, rhs),
        ExprKind::Select { cond, then, else_ } => match &cond.kind {
            ExprKind::Binary {
                op: cmp @ (BinOp::Gt | BinOp::Lt),
                lhs,
                rhs,
            } if same_expr(lhs, then) && same_expr(rhs, else_) => {
                let target_first = same_expr(else_, target);
                let float = matches!(&target.ty, Type::Scalar(t) if t.is_float());
                if !target_first && float && same_expr(then, target) {
                    return Err(element_first(l, s.span, *cmp == BinOp::Gt));
                }
                let op = match (cmp, target_first) {
                    (BinOp::Gt, true) => &BinOp::FMax,
                    (BinOp::Gt, false) => &BinOp::Max,
                    (_, true) => &BinOp::FMin,
                    (_, false) => &BinOp::Min,
                };
                if target_first {
                    python_fold = Some(*cmp);
                }
                (op, rhs, lhs)
            }
            _ => {
                return Err(bad_body(
                    l,
                    span,
                    "expected `lhs = lhs OP e` with OP one of + * max min",
                ))
            }
        },
        _ => {
            return Err(bad_body(
                l,
                span,
                "expected `lhs = lhs OP e` with OP one of + * max min",
            ))
        }
    };
    let bools = lhs.ty == Type::Scalar(crate::ir::ElemTy::Bool);
    let Some(rop) = reduce_op(*op, bools) else {
        return Err(bad_body(
            l,
            span,
            &format!(
                "`{}` is not a reduction operator (use + * max min)",
                op.symbol()
            ),
        ));
    };
    let elem = if same_expr(a, &lhs) {
        (**b).clone()
    } else if same_expr(b, &lhs) {
        (**a).clone()
    } else {
        return Err(bad_body(
            l,
            span,
            "the right-hand side does not combine with the target",
        ));
    };
    if uses_var(&lhs, l.var) {
        return Err(bad_body(l, span, "the target depends on the loop variable"));
    }
    let base = match dst {
        Place::Var(v) => *v,
        Place::Index { array, .. } => *array,
    };
    if uses_var(&elem, base) {
        return Err(bad_body(l, span, "the combined value reads the target"));
    }
    let Type::Scalar(ty) = lhs.ty.clone() else {
        return Err(bad_body(l, span, "the target is not a scalar"));
    };
    let dst = dst.clone();
    let sspan = s.span;
    let t = f.add_var(Var {
        name: "t".into(),
        ty: Type::Scalar(ty),
        kind: VarKind::Local,
        value: None,
        span: sspan,
    });
    let tv = Expr::var(t, Type::Scalar(ty), sspan);
    // (bools: the max / min, which reads both operands as NumPy's `+` / `*`)
    let op = match op {
        BinOp::Or | BinOp::BitOr | BinOp::And | BinOp::BitAnd => rop.combine(),
        _ => *op,
    };
    let combine = |x: Expr, y: Expr| {
        Expr::new(
            ExprKind::Binary {
                op,
                lhs: Box::new(x),
                rhs: Box::new(y),
            },
            Type::Scalar(ty),
            sspan,
        )
    };
    let body = Stmt::new(
        StmtKind::Assign {
            dst: Place::Var(t),
            value: combine(tv.clone(), elem),
        },
        sspan,
    );
    let fin_value = match python_fold {
        Some(cmp) => Expr::select_as(
            Expr::compare(cmp, tv.clone(), lhs.clone(), sspan),
            tv.clone(),
            lhs,
            Type::Scalar(ty),
            sspan,
        ),
        None => combine(lhs, tv),
    };
    let fin = Stmt::new(
        StmtKind::Assign {
            dst,
            value: fin_value,
        },
        sspan,
    );
    let init = Stmt::new(
        StmtKind::Assign {
            dst: Place::Var(t),
            value: Expr::reduce_identity(rop, ty, sspan),
        },
        sspan,
    );
    l.body = prefix;
    l.body.push(body);
    l.reduction = Some(Reduction::new(rop, t));
    Ok((init, fin))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::ir::ElemTy;
    use crate::ir::LoopPar;
    use crate::passes::testutil::*;

    fn manual(op: BinOp, target_index: bool) -> crate::ir::Program {
        let mut b = FnBuilder::new("psum");
        let x = b.array("x", ElemTy::F64, &[1000]);
        let s = b.array("s", ElemTy::F64, &[1]);
        let i = b.index_var("i");
        let f = &b.f;
        let tgt = if target_index { var_e(f, i) } else { int(0) };
        let body = vec![store(
            s,
            vec![tgt.clone()],
            bin(op, idx(f, s, vec![tgt]), idx(f, x, vec![var_e(f, i)])),
        )];
        let mut l = for_loop(i, 0, 1000, &["red"], body);
        l.par = Some(LoopPar {
            threads: 64,
            tpb: 1024,
        });
        l.wants_reduction = true;
        b.push(for_stmt(l));
        program(b.f)
    }

    #[test]
    fn lowers_manual_sum() {
        let mut p = manual(BinOp::Add, false);
        assert!(run(&mut p).is_empty());
        assert_eq!(
            program_to_string(&p),
            "\
fn psum(x: f64[1000], s: f64[1]) {
  t: f64 = 0.0
  for i in 0..1000 step 1 [red] par(threads=64, tpb=1024) reduce(sum -> t) par_reduction {
    t = (t + x[i])
  }
  s[0] = (s[0] + t)
}
"
        );
        assert_eq!(crate::ir::verify::verify_program(&p), Ok(()));
    }

    #[test]
    fn max_identity_is_minus_infinity() {
        let mut p = manual(BinOp::Max, false);
        assert!(run(&mut p).is_empty());
        let text = program_to_string(&p);
        assert!(text.contains("t: f64 = -inf"), "{text}");
        assert!(text.contains("s[0] = max(s[0], t)"), "{text}");
    }

    #[test]
    fn rejects_target_depending_on_loop_var() {
        let mut p = manual(BinOp::Add, true);
        let e = run(&mut p);
        assert_eq!(e.len(), 1);
        assert_eq!(
            e[0].labels[0].message,
            "the target depends on the loop variable"
        );
    }

    #[test]
    fn rejects_subtraction() {
        let mut p = manual(BinOp::Sub, false);
        let e = run(&mut p);
        assert_eq!(e.len(), 1);
        assert!(e[0].labels[0]
            .message
            .contains("`-` is not a reduction operator"));
    }
}
