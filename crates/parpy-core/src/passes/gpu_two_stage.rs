//! GPU backends only, after `outline_kernels` and before `gpu_reductions`:
//! a parallel reduction that asks for more threads than fit in one block is
//! split into two kernels (deterministic, no atomics).
//!
//! The kernel must have the shape `[pre] R [tail]` or
//! `[pre0] for i par { [pre] R [tail] } [tail0]`, where `R` is the
//! reduction loop of the innermost level (`M` threads, `T` per block,
//! `S = ceil(M / T)` blocks), the `pre` statements hold no parallel loop
//! and store no array, and the bounds of `R` and of the outer loop are
//! literals (positive steps). Then, with `K` outer iterations and a device
//! temporary `parts` of `K * S` elements:
//!
//! ```text
//! kernel 1 (levels [outer, S, T]):
//!   [pre0] for i par { [pre]
//!     for c in 0..S par(S) {
//!       blk = identity
//!       for j in (lo + c*C*step)..min(hi, lo + (c+1)*C*step) step par(T) reduce(op -> blk) { .. }
//!       parts[k*S + c] = blk
//!   } }
//! kernel 2 (levels as before):
//!   the original kernel with R replaced by
//!   for s in 0..S par(M) reduce(op -> acc) { acc = acc op parts[k*S + s] }
//! ```
//! where `C = ceil(trip(R) / S)` and `k` is the outer iteration number.
//! Both stages are then ordinary block-level tree reductions for
//! `gpu_reductions`. Kernels of another shape keep the one-block reduction.

use crate::ir::{
    BinOp, Block, Expr, ExprKind, ForLoop, Function, Kernel, KernelId, LoopPar, Place, Program,
    Reduction, Stmt, StmtKind, Type, VarId, VarKind,
};
use crate::passes::gpu_grid::block_threads;
use crate::passes::lower_reductions::identity;
use crate::passes::util::{bin, int, new_var, sub_blocks, sub_blocks_mut};
use crate::types::ElemTy;

pub fn run(p: &mut Program) {
    let n = p.kernels.len();
    for k in 0..n {
        let Some(plan) = plan(&p.kernels[k]) else {
            continue;
        };
        split(p, KernelId(k as u32), plan);
    }
}

/// What the split needs to know about a matching kernel.
struct Plan {
    /// Index of the outer parallel loop in the kernel body (if any).
    outer_at: Option<usize>,
    /// The outer loop's literal lower bound, step and trip count.
    outer: Option<(i64, i64, i64)>,
    /// Index of the reduction loop in its block.
    red_at: usize,
    blocks: i64,
    threads: i64,
    /// Iterations per block.
    chunk: i64,
}

fn lit(e: &Expr) -> Option<i64> {
    match e.kind {
        ExprKind::Int(v) => Some(v),
        _ => None,
    }
}

fn trip(l: &ForLoop) -> Option<(i64, i64)> {
    let (lo, hi) = (lit(&l.lo)?, lit(&l.hi)?);
    if l.step <= 0 {
        return None;
    }
    Some((lo, (hi - lo + l.step - 1).div_euclid(l.step).max(0)))
}

/// No parallel loop, no array store, no barrier.
fn is_scalar_code(b: &[Stmt]) -> bool {
    b.iter().all(|s| match &s.kind {
        StmtKind::Assign { dst, .. } => matches!(dst, Place::Var(_)),
        StmtKind::For(l) => l.par.is_none() && is_scalar_code(&l.body),
        StmtKind::While { body, .. } => is_scalar_code(body),
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => is_scalar_code(then_body) && is_scalar_code(else_body),
        StmtKind::Return(_) | StmtKind::Expr(_) => true,
        StmtKind::OnDevice(_) | StmtKind::Launch { .. } | StmtKind::Barrier => false,
    })
}

fn contains_par(s: &Stmt) -> bool {
    matches!(&s.kind, StmtKind::For(l) if l.par.is_some())
        || sub_blocks(s)
            .into_iter()
            .any(|b| b.iter().any(contains_par))
}

/// The first parallel loop of a block.
fn first_par(b: &[Stmt]) -> Option<usize> {
    b.iter()
        .position(|s| matches!(&s.kind, StmtKind::For(l) if l.par.is_some()))
}

fn plan(k: &Kernel) -> Option<Plan> {
    let levels = &k.launch.levels;
    let (&m, outer_levels) = levels.split_last()?;
    if outer_levels.len() > 1 {
        return None;
    }
    let threads = block_threads(m, k.launch.tpb, true);
    let blocks = (m + threads - 1) / threads;
    if blocks <= 1 {
        return None;
    }
    let body = &k.func.body;
    let at = first_par(body)?;
    if !is_scalar_code(&body[..at]) {
        return None;
    }
    let StmtKind::For(first) = &body[at].kind else {
        return None;
    };
    let (outer_at, outer, block) = if outer_levels.is_empty() {
        (None, None, body)
    } else {
        let (lo, n) = trip(first)?;
        (Some(at), Some((lo, first.step, n)), &first.body)
    };
    let red_at = first_par(block)?;
    if !is_scalar_code(&block[..red_at]) {
        return None;
    }
    let StmtKind::For(r) = &block[red_at].kind else {
        return None;
    };
    if r.reduction.is_none()
        || r.body
            .iter()
            .any(|s| first_par(std::slice::from_ref(s)).is_some())
    {
        return None;
    }
    let (_, n) = trip(r)?;
    if n <= threads {
        return None;
    }
    let blocks = blocks.min((n + threads - 1) / threads);
    let chunk = (n + blocks - 1) / blocks;
    Some(Plan {
        outer_at,
        outer,
        red_at,
        blocks,
        threads,
        chunk,
    })
}

/// The outer iteration number `(i - lo) / step` times `blocks`, plus `c`.
fn part_index(f: &Function, outer: Option<(VarId, i64, i64)>, blocks: i64, c: Expr) -> Expr {
    let span = c.span;
    match outer {
        None => c,
        Some((i, lo, step)) => {
            let mut k = Expr::var(i, f.var(i).ty.clone(), span);
            if k.ty != Type::Scalar(ElemTy::I64) {
                k = Expr::new(
                    ExprKind::Convert { arg: Box::new(k) },
                    Type::Scalar(ElemTy::I64),
                    span,
                );
            }
            if lo != 0 {
                k = bin(BinOp::Sub, k, int(lo, span));
            }
            if step != 1 {
                k = bin(BinOp::FloorDiv, k, int(step, span));
            }
            bin(BinOp::Add, bin(BinOp::Mul, k, int(blocks, span)), c)
        }
    }
}

fn split(p: &mut Program, id: KernelId, plan: Plan) {
    let k = id.0 as usize;
    let orig = p.kernels[k].clone();
    let span = orig.func.span;
    let outer_var = plan.outer_at.and_then(|at| match &orig.func.body[at].kind {
        StmtKind::For(l) => Some(l.var),
        _ => None,
    });
    let outer = match (outer_var, plan.outer) {
        (Some(v), Some((lo, step, _))) => Some((v, lo, step)),
        _ => None,
    };
    let outer_trips = plan.outer.map(|o| o.2).unwrap_or(1);
    let red_block = |b: &mut Block| -> Option<Box<ForLoop>> {
        match b.get(plan.red_at).map(|s| &s.kind) {
            Some(StmtKind::For(l)) => Some(l.clone()),
            _ => None,
        }
    };

    // The device temporary, in the host and as a parameter of both kernels.
    let Some(r) = ({
        let mut b = orig.func.body.clone();
        match plan.outer_at {
            Some(at) => match b.get_mut(at).map(|s| &mut s.kind) {
                Some(StmtKind::For(l)) => red_block(&mut l.body),
                _ => None,
            },
            None => red_block(&mut b),
        }
    }) else {
        return;
    };
    let Some(red) = r.reduction else {
        return;
    };
    let Some(elem) = orig.func.var(red.acc).ty.elem() else {
        return;
    };
    let parts_ty = Type::Array {
        elem,
        shape: vec![outer_trips * plan.blocks],
    };
    let host_parts = new_var(&mut p.host, "parts", parts_ty.clone(), VarKind::Local, span);

    // Kernel 1: everything up to the reduction, then the chunked reduction.
    let mut k1 = orig.clone();
    let parts1 = new_var(
        &mut k1.func,
        "parts",
        parts_ty.clone(),
        VarKind::Param,
        span,
    );
    k1.func.params.push(parts1);
    let c = new_var(
        &mut k1.func,
        "c",
        Type::Scalar(ElemTy::I64),
        VarKind::LoopIndex,
        span,
    );
    let blk = new_var(
        &mut k1.func,
        "blk",
        Type::Scalar(elem),
        VarKind::Local,
        span,
    );
    let lo = r.lo.clone();
    let ce = Expr::var(c, Type::Scalar(ElemTy::I64), span);
    let span_of = |s: i64| int(s, span);
    let offset = bin(BinOp::Mul, ce.clone(), span_of(plan.chunk * r.step));
    let start = match lit(&lo) {
        Some(0) => offset,
        _ => bin(BinOp::Add, lo, offset),
    };
    let end = Expr::new(
        ExprKind::Binary {
            op: BinOp::Min,
            lhs: Box::new(r.hi.clone()),
            rhs: Box::new(bin(BinOp::Add, start.clone(), span_of(plan.chunk * r.step))),
        },
        r.hi.ty.clone(),
        span,
    );
    let mut inner = (*r).clone();
    inner.lo = start;
    inner.hi = end;
    inner.par = Some(LoopPar {
        threads: plan.threads,
        tpb: orig.launch.tpb,
    });
    inner.reduction = Some(Reduction {
        op: red.op,
        acc: blk,
    });
    crate::passes::gpu_reductions::subst_block(&mut inner.body, red.acc, blk);
    let store = Stmt::new(
        StmtKind::Assign {
            dst: Place::Index {
                array: parts1,
                indices: vec![part_index(&k1.func, outer, plan.blocks, ce)],
            },
            value: Expr::var(blk, Type::Scalar(elem), span),
        },
        span,
    );
    let chunk_loop = ForLoop {
        var: c,
        lo: int(0, span),
        hi: int(plan.blocks, span),
        step: 1,
        body: vec![
            Stmt::new(
                StmtKind::Assign {
                    dst: Place::Var(blk),
                    value: identity(red.op, elem, span),
                },
                span,
            ),
            Stmt::new(StmtKind::For(Box::new(inner)), span),
            store,
        ],
        labels: vec![],
        par: Some(LoopPar {
            threads: plan.blocks,
            tpb: orig.launch.tpb,
        }),
        reduction: None,
        wants_reduction: false,
    };
    let chunk_stmt = Stmt::new(StmtKind::For(Box::new(chunk_loop)), span);
    let cut = |b: &mut Block, at: usize, s: Stmt| {
        b.truncate(at);
        b.push(s);
    };
    match plan.outer_at {
        Some(at) => {
            if let Some(StmtKind::For(l)) = k1.func.body.get_mut(at).map(|s| &mut s.kind) {
                cut(&mut l.body, plan.red_at, chunk_stmt);
            }
            k1.func.body.truncate(at + 1);
        }
        None => cut(&mut k1.func.body, plan.red_at, chunk_stmt),
    }
    // The accumulator's start value is for the second stage only.
    drop_assigns_to(&mut k1.func.body, red.acc);
    let mut levels = orig.launch.levels.clone();
    levels.pop();
    levels.push(plan.blocks);
    levels.push(plan.threads);
    k1.launch.levels = levels;
    k1.launch.tpb = orig.launch.tpb;
    k1.func.name = format!("{}_partial", orig.func.name);

    // Kernel 2: the original with R reducing the partials.
    let mut k2 = orig.clone();
    let parts2 = new_var(&mut k2.func, "parts", parts_ty, VarKind::Param, span);
    k2.func.params.push(parts2);
    let s = new_var(
        &mut k2.func,
        "b",
        Type::Scalar(ElemTy::I64),
        VarKind::LoopIndex,
        span,
    );
    let se = Expr::var(s, Type::Scalar(ElemTy::I64), span);
    let acc_e = Expr::var(red.acc, Type::Scalar(elem), span);
    let read = Expr::new(
        ExprKind::Index {
            array: parts2,
            indices: vec![part_index(&k2.func, outer, plan.blocks, se)],
        },
        Type::Scalar(elem),
        span,
    );
    let combine = Expr::new(
        ExprKind::Binary {
            op: match red.op {
                crate::ir::ReduceOp::Sum => BinOp::Add,
                crate::ir::ReduceOp::Prod => BinOp::Mul,
                crate::ir::ReduceOp::Max => BinOp::Max,
                crate::ir::ReduceOp::Min => BinOp::Min,
            },
            lhs: Box::new(acc_e),
            rhs: Box::new(read),
        },
        Type::Scalar(elem),
        span,
    );
    let final_loop = ForLoop {
        var: s,
        lo: int(0, span),
        hi: int(plan.blocks, span),
        step: 1,
        body: vec![Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(red.acc),
                value: combine,
            },
            span,
        )],
        labels: r.labels.clone(),
        par: r.par,
        reduction: Some(red),
        wants_reduction: false,
    };
    let final_stmt = Stmt::new(StmtKind::For(Box::new(final_loop)), span);
    match plan.outer_at {
        Some(at) => {
            if let Some(StmtKind::For(l)) = k2.func.body.get_mut(at).map(|s| &mut s.kind) {
                l.body[plan.red_at] = final_stmt;
            }
        }
        None => k2.func.body[plan.red_at] = final_stmt,
    }
    k2.func.name = format!("{}_final", orig.func.name);
    // Without other parallel loops after the reduction, one warp-rounded
    // thread per partial is enough.
    let tail_par = |b: &[Stmt], from: usize| b.iter().skip(from).any(contains_par);
    let tail_has_par = match plan.outer_at {
        Some(at) => {
            tail_par(&orig.func.body, at + 1)
                || match &orig.func.body[at].kind {
                    StmtKind::For(l) => tail_par(&l.body, plan.red_at + 1),
                    _ => true,
                }
        }
        None => tail_par(&orig.func.body, plan.red_at + 1),
    };
    if !tail_has_par {
        if let Some(last) = k2.launch.levels.last_mut() {
            *last = plan.blocks.min(*last);
        }
    }

    p.kernels[k] = k1;
    let id2 = KernelId(p.kernels.len() as u32);
    p.kernels.push(k2);
    let mut body = std::mem::take(&mut p.host.body);
    add_second_launch(&mut body, id, id2, host_parts);
    p.host.body = body;
}

fn drop_assigns_to(b: &mut Block, v: VarId) {
    b.retain(|s| !matches!(&s.kind, StmtKind::Assign { dst: Place::Var(d), .. } if *d == v));
    for s in b.iter_mut() {
        if let StmtKind::For(l) = &mut s.kind {
            drop_assigns_to(&mut l.body, v);
        }
    }
}

fn add_second_launch(b: &mut Block, first: KernelId, second: KernelId, parts: VarId) {
    let old = std::mem::take(b);
    for mut s in old {
        let span = s.span;
        match &mut s.kind {
            StmtKind::Launch { kernel, args } if *kernel == first => {
                args.push(parts);
                let args2 = args.clone();
                b.push(s);
                b.push(Stmt::new(
                    StmtKind::Launch {
                        kernel: second,
                        args: args2,
                    },
                    span,
                ));
                continue;
            }
            _ => {
                for body in sub_blocks_mut(&mut s) {
                    add_second_launch(body, first, second, parts);
                }
            }
        }
        b.push(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::ir::verify::verify_program;
    use crate::ir::ReduceOp;
    use crate::passes::testutil::bin as tbin;
    use crate::passes::testutil::*;
    use crate::passes::{gpu_grid, gpu_reductions, outline_kernels};

    /// for i in 0..4 par(4) { t = 0; for j in 0..8192 par(m) reduce(sum -> t)
    /// { t = t + x[i, j] }; y[i] = t }
    fn rows(m: i64) -> Program {
        let mut b = FnBuilder::new("rows");
        let x = b.array("x", ElemTy::F32, &[4, 8192]);
        let y = b.array("y", ElemTy::F32, &[4]);
        let i = b.index_var("i");
        let j = b.index_var("j");
        let t = b.local("t", ElemTy::F32);
        let f = &b.f;
        let mut inner = for_loop(
            j,
            0,
            8192,
            &["M"],
            vec![assign(
                t,
                tbin(
                    BinOp::Add,
                    var_e(f, t),
                    idx(f, x, vec![var_e(f, i), var_e(f, j)]),
                ),
            )],
        );
        inner.par = par(m);
        inner.reduction = Some(Reduction {
            op: ReduceOp::Sum,
            acc: t,
        });
        let mut outer = for_loop(
            i,
            0,
            4,
            &["N"],
            vec![
                assign(t, float(0.0, ElemTy::F32)),
                for_stmt(inner),
                store(y, vec![var_e(f, i)], var_e(f, t)),
            ],
        );
        outer.par = par(4);
        b.push(for_stmt(outer));
        let mut p = program(b.f);
        outline_kernels::run(&mut p);
        p
    }

    #[test]
    fn a_wide_row_reduction_becomes_two_kernels() {
        let mut p = rows(4096);
        run(&mut p);
        assert_eq!(verify_program(&p), Ok(()));
        assert_eq!(
            program_to_string(&p),
            "\
kernel rows_N_partial(x: f32[4, 8192], y: f32[4], parts: f32[16]) launch(levels=[4, 4, 1024], tpb=1024, blocks=[1, 1, 1], threads=[1, 1, 1]) {
  for i in 0..4 step 1 [N] par(threads=4, tpb=1024) {
    for c in 0..4 step 1 [] par(threads=4, tpb=1024) {
      blk: f32 = 0.0
      for j in (c * 2048)..min(8192, ((c * 2048) + 2048)) step 1 [M] par(threads=1024, tpb=1024) reduce(sum -> blk) {
        blk = (blk + x[i, j])
      }
      parts[((i * 4) + c)] = blk
    }
  }
}

kernel rows_N_final(x: f32[4, 8192], y: f32[4], parts: f32[16]) launch(levels=[4, 4], tpb=1024, blocks=[1, 1, 1], threads=[1, 1, 1]) {
  for i in 0..4 step 1 [N] par(threads=4, tpb=1024) {
    t: f32 = 0.0
    for b in 0..4 step 1 [M] par(threads=4096, tpb=1024) reduce(sum -> t) {
      t = (t + parts[((i * 4) + b)])
    }
    y[i] = t
  }
}

fn rows(x: f32[4, 8192], y: f32[4]) {
  launch rows_N_partial(x, y, parts)
  launch rows_N_final(x, y, parts)
}
"
        );
        // Both stages lower and map.
        assert!(gpu_reductions::run(&mut p).is_empty());
        assert!(gpu_grid::run(&mut p).is_empty());
        assert_eq!(verify_program(&p), Ok(()));
        assert_eq!(p.kernels[0].launch.blocks, [4, 4, 1]);
        assert_eq!(p.kernels[0].launch.threads, [1024, 1, 1]);
        assert_eq!(p.kernels[1].launch.blocks, [4, 1, 1]);
        assert_eq!(p.kernels[1].launch.threads, [32, 1, 1]);
    }

    #[test]
    fn a_reduction_that_fits_one_block_is_left_alone() {
        let mut p = rows(1024);
        let before = program_to_string(&p);
        run(&mut p);
        assert_eq!(program_to_string(&p), before);
    }
}
