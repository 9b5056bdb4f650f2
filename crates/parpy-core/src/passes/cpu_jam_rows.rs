//! Cpu backend only, after `cpu_skew_fuse`: a parallel loop whose rows
//! read each other's neighbours (a stencil sweep that did not fuse with
//! another) runs two rows per iteration, side by side, loading once the
//! elements both read in a step of an inner loop (`lanes::jammed_pair`):
//!
//! ```text
//! for i in range(lo, hi):  # parallel        for i in range(lo, hi, 2):  # parallel
//!     for j in range(M):                 =>      for j in range(M):
//!         B[i, j] = A[i, j] + A[i + 1, j]            t = A[i + 1, j]
//!                                                    B[i, j] = A[i, j] + t
//!                                                    B[i + 1, j] = t + A[i + 2, j]
//! ```
//!
//! With an odd count of rows (or one known only at run time) the body is
//! `if i + 1 < hi:` the pair, `else:` the last row alone. The iterations
//! of a parallel loop are independent and the scalars its body assigns
//! are private to an iteration (checked again here), so each row does
//! what it did, on the same values: the results are bit for bit the same.
//! A 700^2 float64 5-point sweep loads 8 elements per two rows instead of
//! 10.

use std::collections::BTreeSet;

use crate::ir::visit::{expr_uses, pure, sub_blocks, sub_blocks_mut};
use crate::ir::Type;
use crate::ir::{BinOp, Block, Expr, ExprKind, ForLoop, Function, Program, Stmt, StmtKind};
use crate::options::{Backend, Options};
use crate::passes::lanes::{assigned_scalars, jammed_pair, private_scalar};
use crate::passes::util::loop_key;
use crate::types::ElemTy;

/// Loops with a constant trip count below this stay as they are.
const MIN_TRIP: i64 = 8;

pub fn run(p: &mut Program, o: &Options) {
    if o.backend != Backend::Cpu {
        return;
    }
    let f = &mut p.host;
    // decided on the whole function first (liveness looks past the
    // loop), each loop known by its box's address
    let mut plans = vec![];
    find(&f.body, f, &mut plans);
    if plans.is_empty() {
        return;
    }
    let plans: BTreeSet<usize> = plans.into_iter().collect();
    let mut body = std::mem::take(&mut f.body);
    rewrite(&mut body, f, &plans);
    f.body = body;
}

/// The parallel loops of `b` that pair their rows, outside any parallel
/// loop (an inner parallel level runs as SIMD lanes of the outer one).
fn find(b: &[Stmt], f: &Function, plans: &mut Vec<usize>) {
    for s in b {
        match &s.kind {
            StmtKind::For(l) if l.par.is_some() => {
                if candidate(l, f) {
                    plans.push(loop_key(l));
                }
            }
            StmtKind::OnDevice(_) => {}
            _ => sub_blocks(s).into_iter().for_each(|sb| find(sb, f, plans)),
        }
    }
}

/// A parallel loop (not a reduction, counted by one) whose body assigns
/// only scalars private to an iteration: its rows can run in pairs. The
/// body's shape, that it touches only the elements it shows, and whether
/// the rows gain, `lanes::jammed_pair` decides.
fn candidate(l: &ForLoop, f: &Function) -> bool {
    let trip_ok = match (&l.lo.kind, &l.hi.kind) {
        (ExprKind::Int(lo), ExprKind::Int(hi)) => hi.saturating_sub(*lo) >= MIN_TRIP,
        _ => pure(&l.lo) && pure(&l.hi),
    };
    let privates = assigned_scalars(&l.body);
    // an odd count tests `i + 1 < hi` inside the body
    let mut bound = BTreeSet::new();
    expr_uses(&l.hi, &mut bound);
    trip_ok
        && bound.is_disjoint(&privates)
        && l.reduction.is_none()
        && !l.wants_reduction
        && !l.unroll
        && l.step == 1
        && !privates.contains(&l.var)
        && privates.iter().all(|&v| private_scalar(v, l, f))
}

fn rewrite(b: &mut Block, f: &mut Function, plans: &BTreeSet<usize>) {
    let mut out = Vec::with_capacity(b.len());
    for mut s in std::mem::take(b) {
        let planned = match &s.kind {
            StmtKind::For(l) => plans.contains(&loop_key(l)),
            _ => false,
        };
        if planned {
            let StmtKind::For(l) = s.kind else {
                unreachable!("a planned statement is a loop")
            };
            out.push(pair_rows(*l, f, s.span));
            continue;
        }
        for sb in sub_blocks_mut(&mut s) {
            rewrite(sb, f, plans);
        }
        out.push(s);
    }
    *b = out;
}

/// The loop over pairs of rows (see the module documentation), or the
/// loop as it was when its rows do not meet.
fn pair_rows(l: ForLoop, f: &mut Function, span: crate::diag::Span) -> Stmt {
    let Some(jammed) = jammed_pair(&l.body, l.var, f) else {
        return Stmt::new(StmtKind::For(Box::new(l)), span);
    };
    let ty = l.lo.ty.clone();
    let odd = match (&l.lo.kind, &l.hi.kind) {
        (ExprKind::Int(lo), ExprKind::Int(hi)) => (hi - lo) % 2 != 0,
        _ => true,
    };
    let body = if odd {
        // the last row of an odd count runs alone
        let i = Expr::var(l.var, ty.clone(), span);
        let one = Expr::new(ExprKind::Int(1), ty.clone(), span);
        let next = Expr::binary(BinOp::Add, i, one, ty.clone(), span);
        let cond = Expr::binary(
            BinOp::Lt,
            next,
            l.hi.clone(),
            Type::Scalar(ElemTy::Bool),
            span,
        );
        vec![Stmt::new(
            StmtKind::If {
                cond,
                then_body: jammed,
                else_body: l.body.clone(),
            },
            span,
        )]
    } else {
        jammed
    };
    let pairs = ForLoop { step: 2, body, ..l };
    Stmt::new(StmtKind::For(Box::new(pairs)), span)
}
