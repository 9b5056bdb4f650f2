//! GPU backends only, after `gpu_reductions` and before `gpu_grid`: calls of
//! cooperative externals, `parpy.external(..., parallelize=parpy.threads(P))`.
//!
//! The `P` threads of a block call such a function together: it may read
//! `threadIdx.x` and exchange values between them (ParPy's `warp_sum`, a
//! warp shuffle reduction of a row of 32 elements), and every thread gets
//! its result. So:
//!
//! - a kernel that calls one gets one more parallel level, of `P` threads
//!   and without a loop (`LaunchInfo.levels` ends with `P`, `tpb = P`): each
//!   iteration of the kernel's innermost parallel loop (or the whole
//!   `with parpy.gpu:` block) runs on one block of `P` threads, and
//!   `gpu_grid` runs the code there on all of them (its array stores by
//!   thread 0, as for any code between inner parallel loops);
//! - each call is hoisted into a local of its own that every thread
//!   assigns before the statement holding the call, so that a store done
//!   by thread 0 alone does not leave the other threads out of the call.
//!
//! A call must be in the body of the kernel's innermost parallel loop
//! (sequential loops and conditions inside it are fine: all `P` threads
//! run them alike) and evaluated whenever its statement runs (not under
//! `and` / `or` / a conditional expression, nor in a `while` condition);
//! the kernel holds no parallel reduction and calls no other `P`.
//! Anything else is an error at the call.

use crate::diag::{Diagnostic, Span};
use crate::ir::visit::{stmt_exprs, stmt_exprs_mut, sub_blocks};
use crate::ir::{BinOp, Block, Expr, ExprKind, Kernel, Place, Program, Stmt, StmtKind, VarKind};
use crate::passes::gpu_grid::{contains_warp_reduce, MAX_TPB};
use crate::passes::util::new_var;
use crate::signature::ExtDecl;

pub fn run(p: &mut Program) -> Vec<Diagnostic> {
    let mut errors = vec![];
    let threads = |ext: u32| p.externals.get(ext as usize).and_then(|d| d.threads);
    let name = |ext: u32| {
        p.externals
            .get(ext as usize)
            .map_or("?", |d: &ExtDecl| d.name.as_str())
    };
    for h in &p.helpers {
        calls_by_depth(&h.body, 0, &threads, &mut |call| {
            let n = call.threads;
            errors.push(
                Diagnostic::error(format!(
                    "the external `{}` is called by {n} threads together \
                     (parallelize=parpy.threads({n})), so it cannot be called from the \
                     helper `{}`",
                    name(call.ext),
                    h.name
                ))
                .at(call.span, "called here")
                .help("call it from the parallel loop of the function that runs it"),
            );
        });
    }
    for k in &mut p.kernels {
        errors.extend(kernel(k, &threads, &name));
    }
    errors
}

/// One call of a cooperative external.
#[derive(Clone, Copy)]
struct Call {
    ext: u32,
    threads: i64,
    span: Span,
    /// The parallel loops around it.
    depth: usize,
}

/// Calls `f` on each call of a cooperative external in expression `e`
/// (its arguments' calls first) at parallel depth `depth`.
fn calls_in(
    e: &Expr,
    depth: usize,
    threads: &impl Fn(u32) -> Option<i64>,
    f: &mut dyn FnMut(Call),
) {
    e.children().for_each(|c| calls_in(c, depth, threads, f));
    if let ExprKind::External { ext, .. } = &e.kind {
        if let Some(n) = threads(*ext) {
            f(Call {
                ext: *ext,
                threads: n,
                span: e.span,
                depth,
            });
        }
    }
}

/// [`calls_in`] over every expression of block `b` (at parallel depth
/// `depth`), counting the parallel loops around each call.
fn calls_by_depth(
    b: &[Stmt],
    depth: usize,
    threads: &impl Fn(u32) -> Option<i64>,
    f: &mut dyn FnMut(Call),
) {
    for s in b {
        for e in stmt_exprs(s) {
            calls_in(e, depth, threads, f);
        }
        let inner = match &s.kind {
            StmtKind::For(l) if l.par.is_some() => depth + 1,
            _ => depth,
        };
        for sub in sub_blocks(s) {
            calls_by_depth(sub, inner, threads, f);
        }
    }
}

fn kernel<'a>(
    k: &mut Kernel,
    threads: &impl Fn(u32) -> Option<i64>,
    name: &impl Fn(u32) -> &'a str,
) -> Vec<Diagnostic> {
    let mut calls: Vec<Call> = vec![];
    calls_by_depth(&k.func.body, 0, threads, &mut |c| calls.push(c));
    let Some(&Call {
        ext: first,
        threads: n,
        span: first_span,
        ..
    }) = calls.first()
    else {
        return vec![];
    };
    let first = name(first);
    let levels = k.launch.levels.len();
    let mut errors = vec![];
    let what = |name: &str, n: i64| {
        format!("the external `{name}` is called by {n} threads together (parallelize=parpy.threads({n}))")
    };
    for &Call {
        ext,
        threads: m,
        span,
        depth,
    } in &calls
    {
        let ext = name(ext);
        if m != n {
            errors.push(
                Diagnostic::error(format!(
                    "{}, but `{first}` in the same parallel code by {n}",
                    what(ext, m)
                ))
                .at(span, "called here")
                .help("call externals with different thread counts from different parallel loops"),
            );
        } else if depth != levels {
            errors.push(
                Diagnostic::error(format!(
                    "{}, so it must be called in the body of the innermost parallel loop",
                    what(ext, m)
                ))
                .at(span, "called here")
                .note(if depth < levels {
                    "here it runs before or after an inner parallel loop"
                } else {
                    "here it is inside a parallel loop that the call's threads would have to share"
                })
                .help("each iteration of the innermost parallel loop runs on its own threads that call it"),
            );
        }
    }
    if n > MAX_TPB {
        errors.push(
            Diagnostic::error(format!(
                "{}, more than the {MAX_TPB} threads of a block",
                what(first, n)
            ))
            .at(first_span, "called here"),
        );
    }
    if contains_warp_reduce(&k.func.body) {
        errors.push(
            Diagnostic::error(format!(
                "{}, and the parallel code that calls it also holds a parallel reduction",
                what(first, n)
            ))
            .at(first_span, "called here")
            .help("compute the reduction in a separate parallel loop, or sequentially"),
        );
    }
    if !errors.is_empty() {
        return errors;
    }
    let body = std::mem::take(&mut k.func.body);
    k.func.body = hoist(body, k, threads, &mut errors);
    k.launch.levels.push(n);
    k.launch.tpb = n;
    errors
}

/// `b` with each call of a cooperative external that is not the whole
/// value of its statement assigned to a new local first.
fn hoist(
    b: Block,
    k: &mut Kernel,
    threads: &impl Fn(u32) -> Option<i64>,
    errors: &mut Vec<Diagnostic>,
) -> Block {
    let mut out = vec![];
    for mut s in b {
        match &mut s.kind {
            StmtKind::For(l) => l.body = hoist(std::mem::take(&mut l.body), k, threads, errors),
            StmtKind::While { cond, body } => {
                calls_in(cond, 0, threads, &mut |call| {
                    errors.push(
                            Diagnostic::error(
                                "an external called by several threads together cannot be \
                                 called in a `while` condition",
                            )
                            .at(call.span, "called here")
                            .help("assign its result to a variable before the loop and at the end of its body"),
                        )
                });
                *body = hoist(std::mem::take(body), k, threads, errors);
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                *then_body = hoist(std::mem::take(then_body), k, threads, errors);
                *else_body = hoist(std::mem::take(else_body), k, threads, errors);
            }
            _ => {}
        }
        let whole = match &s.kind {
            StmtKind::Assign {
                dst: Place::Var(_),
                value,
            }
            | StmtKind::Expr(value) => is_coop(value, threads),
            _ => false,
        };
        if !matches!(s.kind, StmtKind::While { .. }) {
            let span = s.span;
            for e in stmt_exprs_mut(&mut s) {
                if whole {
                    // the call's own arguments may hold more calls
                    if let ExprKind::External { args, .. } = &mut e.kind {
                        for a in crate::ir::call_arg_exprs_mut(args) {
                            lift(a, k, threads, &mut out, errors, span);
                        }
                    }
                } else {
                    lift(e, k, threads, &mut out, errors, span);
                }
            }
        }
        out.push(s);
    }
    out
}

fn is_coop(e: &Expr, threads: &impl Fn(u32) -> Option<i64>) -> bool {
    matches!(&e.kind, ExprKind::External { ext, .. } if threads(*ext).is_some())
}

/// Replaces each cooperative call in `e` (its arguments' calls first) by a
/// new local assigned in `out`; a call that `e` may not evaluate (under
/// `and` / `or` / a conditional expression) is an error.
fn lift(
    e: &mut Expr,
    k: &mut Kernel,
    threads: &impl Fn(u32) -> Option<i64>,
    out: &mut Block,
    errors: &mut Vec<Diagnostic>,
    span: Span,
) {
    let conditional: Vec<usize> = match &e.kind {
        ExprKind::Binary {
            op: BinOp::And | BinOp::Or,
            ..
        } => vec![1],
        ExprKind::Select { .. } => vec![1, 2],
        _ => vec![],
    };
    for (i, c) in e.children_mut().into_iter().enumerate() {
        if conditional.contains(&i) {
            calls_in(c, 0, threads, &mut |call| {
                errors.push(
                    Diagnostic::error(
                        "an external called by several threads together must be called \
                         whenever its statement runs, not under `and`, `or` or a conditional \
                         expression",
                    )
                    .at(call.span, "called here")
                    .help("assign its result to a variable first"),
                )
            });
        } else {
            lift(c, k, threads, out, errors, span);
        }
    }
    if is_coop(e, threads) {
        let v = new_var(&mut k.func, "ext", e.ty.clone(), VarKind::Local, e.span);
        let call = std::mem::replace(e, Expr::var(v, e.ty.clone(), e.span));
        out.push(Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(v),
                value: call,
            },
            span,
        ));
    }
}
