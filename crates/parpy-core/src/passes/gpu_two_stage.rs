//! GPU backends only, after `outline_kernels` and before `gpu_reductions`:
//! a parallel reduction that asks for more threads than fit in one block is
//! split into two kernels (deterministic, no atomics).
//!
//! The kernel must have the shape `[pre] R [tail]` or
//! `[pre0] for i par { [pre] R [tail] } [tail0]`, where `R` is the
//! reduction loop of the innermost level (`M` threads, `T` per block,
//! `S = ceil(M / T)` blocks), the `pre` statements hold no parallel loop,
//! no barrier and no call that is given an array, and the bounds of `R` and
//! of the outer loop are literals (positive steps). The `pre` statements may
//! store into arrays (`y[i] = 0.0` before `y[i] += x[i, j]`) when neither
//! `R` nor the rest of `pre` (the accumulator's start value aside) touches
//! what they store: kernel 1 runs `pre` without those stores, kernel 2 with
//! them. Then, with `K` outer iterations and a device
//! temporary `parts` of `K * S` elements:
//!
//! ```text
//! kernel 1 (levels [outer, S, T]):
//!   [pre0'] for i par { [pre']                (their array stores dropped)
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
//! `gpu_reductions`, and `gpu_grid` maps kernel 1's levels onto blocks
//! `(outer, S)` of `T` threads (e.g. benchmark G5: 10 rows x 64 blocks).
//!
//! On Cuda with `use_cuda_thread_block_clusters`, when `S` is at most
//! `max_thread_blocks_per_cluster`, the kernel is not split: kernel 1's loop
//! over the `S` blocks stays in the original kernel, whose `S` blocks per
//! outer iteration form a thread block cluster (`LaunchInfo::cluster_level`);
//! the blocks combine their results with `ExprKind::ClusterReduce` and the
//! code after the reduction runs in the cluster's first block (see
//! `cluster`). With more blocks the split above is made, with a warning.
//!
//! Kernels of another shape keep the one-block reduction (`gpu_grid` keeps a
//! level holding a tree reduction in one block), but the request is not
//! dropped silently: each reduction of the innermost level that asks for
//! more threads than a block holds and has more iterations than that gets a
//! warning at its span saying it runs in one block (per outer iteration) and
//! why. So does a later wide reduction in the second kernel of a split (only
//! the first reduction of a kernel is split).

use crate::diag::{Diagnostic, Span};
use std::collections::BTreeSet;

use crate::ir::visit::{accesses_explicit, contains_par, for_each_access};
use crate::ir::{
    BinOp, Block, Expr, ExprKind, ForLoop, Function, Kernel, KernelId, LoopPar, Place, Program,
    Reduction, Stmt, StmtKind, Type, VarId, VarKind,
};
use crate::options::{Backend, Options};
use crate::passes::gpu_grid::block_threads;
use crate::passes::util::{assign_var, bin, int, new_var, sub_blocks, sub_blocks_mut};
use crate::types::ElemTy;

pub fn run(p: &mut Program, opts: &Options) -> Vec<Diagnostic> {
    let mut warnings = vec![];
    let n = p.kernels.len();
    let clusters = opts.backend == Backend::Cuda && opts.use_cuda_thread_block_clusters;
    for k in 0..n {
        match plan(&p.kernels[k]) {
            Ok(plan) if clusters && plan.blocks <= opts.max_thread_blocks_per_cluster => {
                warnings.extend(cluster(p, k, plan));
            }
            Ok(plan) => {
                if clusters {
                    warnings.push(too_wide_for_a_cluster(&p.kernels[k], &plan, opts));
                }
                let final_var = split(p, KernelId(k as u32), plan);
                // Later wide reductions of the second kernel stay in one
                // block per outer iteration.
                if let (Some(v), Some(k2)) = (final_var, p.kernels.last()) {
                    warnings.extend(one_block_warnings(
                        k2,
                        Some(v),
                        "only the first parallel reduction of a kernel is split into several \
                         blocks; this one comes after it",
                    ));
                }
            }
            Err(why) => warnings.extend(one_block_warnings(&p.kernels[k], None, why)),
        }
    }
    warnings
}

/// A warning for each reduction loop of the innermost parallel level of `k`
/// (except the one over `skip`) that asks for more threads than one block
/// holds and has more iterations than that, saying it runs in one block.
fn one_block_warnings(k: &Kernel, skip: Option<VarId>, why: &str) -> Vec<Diagnostic> {
    let levels = &k.launch.levels;
    let Some(&m) = levels.last() else {
        return vec![];
    };
    let threads = block_threads(m, k.launch.tpb, true);
    if m <= threads {
        return vec![];
    }
    let mut found = vec![];
    wide_reductions(&k.func.body, 0, levels.len() - 1, threads, skip, &mut found);
    let per = if levels.len() > 1 {
        " per outer iteration"
    } else {
        ""
    };
    found
        .into_iter()
        .map(|(span, label)| {
            let what = match label {
                Some(l) => format!("level `{l}`"),
                None => "this level".to_string(),
            };
            Diagnostic::warning(format!(
                "this parallel reduction asks for {m} threads but runs in one block of \
                 {threads} threads{per}"
            ))
            .at(span, format!("reduction of {what}"))
            .note(why.to_string())
            .help(
                "a reduction spans several blocks when it is the first parallel loop of at most \
                 one outer parallel loop, the code before it does not synchronize and stores \
                 nothing the reduction reads, and the loop bounds are compile-time constants",
            )
        })
        .collect()
}

/// Collects the span and first label of each reduction loop at parallel
/// depth `inner` whose trip count is unknown or larger than `threads`.
fn wide_reductions(
    b: &[Stmt],
    depth: usize,
    inner: usize,
    threads: i64,
    skip: Option<VarId>,
    out: &mut Vec<(Span, Option<String>)>,
) {
    for s in b {
        if let StmtKind::For(l) = &s.kind {
            if l.par.is_some() {
                let wide = l.trip_count().map(|n| n > threads).unwrap_or(true);
                if depth == inner && l.reduction.is_some() && Some(l.var) != skip && wide {
                    out.push((s.span, l.labels.first().cloned()));
                }
                wide_reductions(&l.body, depth + 1, inner, threads, skip, out);
                continue;
            }
        }
        for sub in sub_blocks(s) {
            wide_reductions(sub, depth, inner, threads, skip, out);
        }
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

/// The start and the trip count of a loop with literal bounds and a
/// positive step.
fn trip(l: &ForLoop) -> Option<(i64, i64)> {
    if l.step <= 0 {
        return None;
    }
    Some((lit(&l.lo)?, l.trip_count()?))
}

/// No parallel loop, no barrier, and every array element it touches is
/// explicit (no atomic update, no call given an array): what runs once per
/// thread before the reduction, array stores aside.
fn is_sequential_code(b: &[Stmt]) -> bool {
    accesses_explicit(b)
        && b.iter().all(|s| match &s.kind {
            StmtKind::Assign { .. } => true,
            StmtKind::For(l) => l.par.is_none() && is_sequential_code(&l.body),
            StmtKind::While { body, .. } => is_sequential_code(body),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => is_sequential_code(then_body) && is_sequential_code(else_body),
            StmtKind::Return(_) | StmtKind::Expr(_) | StmtKind::Break | StmtKind::Continue => true,
            StmtKind::OnDevice(_)
            | StmtKind::Launch { .. }
            | StmtKind::Barrier
            | StmtKind::Callback(_) => false,
        })
}

/// The arrays `b` stores into.
fn stored_arrays(b: &[Stmt]) -> BTreeSet<VarId> {
    let mut out = BTreeSet::new();
    for_each_access(b, &mut |a, _, store| {
        if store {
            out.insert(a);
        }
    });
    out
}

/// Whether the first stage, which runs the code before the reduction
/// without its array stores (`pre`, with the accumulator's start values
/// dropped too) and then the reduction `r`, touches an array in `stored`.
fn first_stage_touches(pre: &[&[Stmt]], r: &ForLoop, acc: VarId, stored: &BTreeSet<VarId>) -> bool {
    let mut hit = false;
    for b in pre {
        for s in b.iter() {
            if !matches!(&s.kind, StmtKind::Assign { dst: Place::Var(d), .. } if *d == acc) {
                for_each_access(std::slice::from_ref(s), &mut |a, _, store| {
                    hit |= !store && stored.contains(&a)
                });
            }
        }
    }
    for_each_access(&r.body, &mut |a, _, _| hit |= stored.contains(&a));
    hit
}

/// The first parallel loop of a block.
fn first_par(b: &[Stmt]) -> Option<usize> {
    b.iter()
        .position(|s| matches!(&s.kind, StmtKind::For(l) if l.par.is_some()))
}

/// The split of `k`, or why it cannot be split (only reported when `k` has
/// a reduction wider than one block; see [`one_block_warnings`]).
fn plan(k: &Kernel) -> Result<Plan, &'static str> {
    const NOT_PAR: &str = "the kernel has no parallel loop to split";
    let levels = &k.launch.levels;
    let (&m, outer_levels) = levels.split_last().ok_or(NOT_PAR)?;
    if outer_levels.len() > 1 {
        return Err("the reduction is nested under more than one outer parallel level");
    }
    let threads = block_threads(m, k.launch.tpb, true);
    let blocks = (m + threads - 1) / threads;
    if blocks <= 1 {
        return Err("the reduction fits in one block");
    }
    let body = &k.func.body;
    let at = first_par(body).ok_or(NOT_PAR)?;
    if !is_sequential_code(&body[..at]) {
        return Err(
            "the kernel synchronizes, or calls a function that is given an array, before its \
             parallel loop",
        );
    }
    let StmtKind::For(first) = &body[at].kind else {
        return Err(NOT_PAR);
    };
    let (outer_at, outer, block) = if outer_levels.is_empty() {
        (None, None, body)
    } else {
        let (lo, n) = trip(first).ok_or(
            "the bounds of the outer parallel loop are not compile-time constants, and the \
             temporary of partial results needs a compile-time size (with \
             `specialize_scalars=False`, scalar bounds are run-time values)",
        )?;
        (Some(at), Some((lo, first.step, n)), &first.body)
    };
    let red_at = first_par(block).ok_or(NOT_PAR)?;
    if !is_sequential_code(&block[..red_at]) {
        return Err(
            "the outer loop body synchronizes, or calls a function that is given an array, \
             before the reduction",
        );
    }
    let StmtKind::For(r) = &block[red_at].kind else {
        return Err(NOT_PAR);
    };
    let Some(red) = r.reduction else {
        return Err("the first parallel loop of the outer loop body is not a reduction");
    };
    if r.body
        .iter()
        .any(|s| first_par(std::slice::from_ref(s)).is_some())
    {
        return Err("the reduction's body holds a parallel loop");
    }
    let pre: Vec<&[Stmt]> = match outer_levels.is_empty() {
        true => vec![&block[..red_at]],
        false => vec![&body[..at], &block[..red_at]],
    };
    let stored: BTreeSet<VarId> = pre.iter().flat_map(|b| stored_arrays(b)).collect();
    if first_stage_touches(&pre, r, red.acc, &stored) {
        return Err(
            "the code before the reduction stores into an array that the reduction (or the \
             code before it) also reads or writes, so it would have to run before the \
             partial results",
        );
    }
    let (_, n) = trip(r).ok_or(
        "the bounds of the reduction are not compile-time constants \
         (the iterations cannot be divided among blocks)",
    )?;
    if n <= threads {
        return Err(
            "only the first parallel reduction of the outer loop body is split into several \
             blocks, and that one fits in one block",
        );
    }
    let blocks = blocks.min((n + threads - 1) / threads);
    let chunk = (n + blocks - 1) / blocks;
    Ok(Plan {
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

/// Splits the kernel; returns the variable of the second kernel's loop over
/// the partials (`None` when the kernel is left as it is).
fn split(p: &mut Program, id: KernelId, plan: Plan) -> Option<VarId> {
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
    // The reduction loop, R.
    let red_block = match plan.outer_at {
        Some(at) => match orig.func.body.get(at).map(|s| &s.kind) {
            Some(StmtKind::For(l)) => &l.body,
            _ => return None,
        },
        None => &orig.func.body,
    };
    let r = match red_block.get(plan.red_at).map(|s| &s.kind) {
        Some(StmtKind::For(l)) => l.clone(),
        _ => return None,
    };

    // The device temporary, in the host and as a parameter of both kernels.
    let red = r.reduction?;
    let elem = orig.func.var(red.acc).ty.elem()?;
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
    let (mut chunk_loop, c, blk) = chunked(&mut k1, &r, red, elem, &plan);
    let ce = Expr::var(c, Type::Scalar(ElemTy::I64), span);
    chunk_loop.body.push(Stmt::new(
        StmtKind::Assign {
            dst: Place::Index {
                array: parts1,
                indices: vec![part_index(&k1.func, outer, plan.blocks, ce)],
            },
            value: Expr::var(blk, Type::Scalar(elem), span),
        },
        span,
    ));
    let chunk_stmt = Stmt::new(StmtKind::For(Box::new(chunk_loop)), span);
    // The code before the reduction without its array stores: kernel 2
    // makes them ([`plan`] checked that kernel 1 does not touch them).
    let cut = |b: &mut Block, at: usize, s: Stmt| {
        b.truncate(at);
        drop_stmts(b, &is_array_store);
        b.push(s);
    };
    match plan.outer_at {
        Some(at) => {
            if let Some(StmtKind::For(l)) = k1.func.body.get_mut(at).map(|s| &mut s.kind) {
                cut(&mut l.body, plan.red_at, chunk_stmt);
            }
            // the outer loop's body is cut already (its partials' store stays)
            k1.func.body.truncate(at + 1);
            let outer = k1.func.body.pop();
            drop_stmts(&mut k1.func.body, &is_array_store);
            k1.func.body.extend(outer);
        }
        None => cut(&mut k1.func.body, plan.red_at, chunk_stmt),
    }
    // The accumulator's start value is for the second stage only.
    drop_stmts(
        &mut k1.func.body,
        &|s| matches!(&s.kind, StmtKind::Assign { dst: Place::Var(d), .. } if *d == red.acc),
    );
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
            op: red.op.combine(),
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
        unroll: false,
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
    Some(s)
}

/// The loop over the blocks of one reduction, `for c in 0..S par(S) { blk =
/// identity; for j in chunk(c) par(T) reduce(op -> blk) { .. } }`, with new
/// variables `c` and `blk` of `k` (returned after the loop).
fn chunked(
    k: &mut Kernel,
    r: &ForLoop,
    red: Reduction,
    elem: ElemTy,
    plan: &Plan,
) -> (ForLoop, VarId, VarId) {
    let span = k.func.span;
    let c = new_var(
        &mut k.func,
        "c",
        Type::Scalar(ElemTy::I64),
        VarKind::LoopIndex,
        span,
    );
    let blk = new_var(&mut k.func, "blk", Type::Scalar(elem), VarKind::Local, span);
    let lo = r.lo.clone();
    let ce = Expr::var(c, Type::Scalar(ElemTy::I64), span);
    let offset = bin(BinOp::Mul, ce, int(plan.chunk * r.step, span));
    let start = match lit(&lo) {
        Some(0) => offset,
        _ => bin(BinOp::Add, lo, offset),
    };
    let end = Expr::new(
        ExprKind::Binary {
            op: BinOp::Min,
            lhs: Box::new(r.hi.clone()),
            rhs: Box::new(bin(
                BinOp::Add,
                start.clone(),
                int(plan.chunk * r.step, span),
            )),
        },
        r.hi.ty.clone(),
        span,
    );
    let mut inner = r.clone();
    inner.lo = start;
    inner.hi = end;
    inner.par = Some(LoopPar {
        threads: plan.threads,
        tpb: k.launch.tpb,
    });
    inner.reduction = Some(Reduction::new(red.op, blk));
    crate::passes::util::subst_block(&mut inner.body, red.acc, blk);
    let chunk_loop = ForLoop {
        var: c,
        lo: int(0, span),
        hi: int(plan.blocks, span),
        step: 1,
        body: vec![
            Stmt::new(
                StmtKind::Assign {
                    dst: Place::Var(blk),
                    value: Expr::reduce_identity(red.op, elem, span),
                },
                span,
            ),
            Stmt::new(StmtKind::For(Box::new(inner)), span),
        ],
        labels: vec![],
        par: Some(LoopPar {
            threads: plan.blocks,
            tpb: k.launch.tpb,
        }),
        reduction: None,
        wants_reduction: false,
        unroll: false,
    };
    (chunk_loop, c, blk)
}

/// The reduction loop `R` of a kernel that [`plan`] accepted, and its
/// block (the kernel body or the outer loop's body).
fn reduction_block<'a>(body: &'a mut Block, plan: &Plan) -> Option<&'a mut Block> {
    match plan.outer_at {
        Some(at) => match body.get_mut(at).map(|s| &mut s.kind) {
            Some(StmtKind::For(l)) => Some(&mut l.body),
            _ => None,
        },
        None => Some(body),
    }
}

/// The cluster form (Cuda with `use_cuda_thread_block_clusters`, at most
/// `max_thread_blocks_per_cluster` blocks): one kernel, the blocks of one
/// outer iteration forming a thread block cluster.
///
/// ```text
/// [pre0] for i par { [pre]
///   for c in 0..S par(S) {                     (one cluster of S blocks)
///     blk = identity
///     for j in chunk(c) par(T) reduce(op -> blk) { .. }
///     blk = cluster_op(blk)                    (every block gets the total)
///     acc = acc op blk
///     if c == 0 { [tail] }                     (the cluster's first block)
/// } } [tail0]
/// ```
/// Warns about later wide reductions of `[tail]`, which run in one block.
fn cluster(p: &mut Program, k: usize, plan: Plan) -> Vec<Diagnostic> {
    let mut kc = p.kernels[k].clone();
    let span = kc.func.span;
    let Some(StmtKind::For(r)) = reduction_block(&mut kc.func.body, &plan)
        .and_then(|b| b.get(plan.red_at))
        .map(|s| s.kind.clone())
    else {
        return vec![];
    };
    let (Some(red), Some(elem)) = (
        r.reduction,
        r.reduction.and_then(|red| kc.func.var(red.acc).ty.elem()),
    ) else {
        return vec![];
    };
    let warnings = one_block_warnings(
        &kc,
        Some(r.var),
        "only the first parallel reduction of a kernel spans a thread block cluster; this one \
         comes after it and runs in the cluster's first block",
    );
    let (mut chunk_loop, c, blk) = chunked(&mut kc, &r, red, elem, &plan);
    let ty = Type::Scalar(elem);
    let blk_e = Expr::var(blk, ty.clone(), span);
    let total = Expr::new(
        ExprKind::ClusterReduce {
            op: red.op,
            arg: Box::new(blk_e.clone()),
        },
        ty.clone(),
        span,
    );
    chunk_loop.body.push(assign_var(blk, total, span));
    let acc = Expr::var(red.acc, ty.clone(), span);
    chunk_loop.body.push(assign_var(
        red.acc,
        crate::passes::util::binary(red.op.combine(), acc, blk_e, ty),
        span,
    ));
    let Some(block) = reduction_block(&mut kc.func.body, &plan) else {
        return vec![];
    };
    let tail: Block = block.drain(plan.red_at + 1..).collect();
    if !tail.is_empty() {
        let first = bin(
            BinOp::Eq,
            Expr::var(c, Type::Scalar(ElemTy::I64), span),
            int(0, span),
        );
        chunk_loop.body.push(Stmt::new(
            StmtKind::If {
                cond: first,
                then_body: tail,
                else_body: vec![],
            },
            span,
        ));
    }
    block[plan.red_at] = Stmt::new(StmtKind::For(Box::new(chunk_loop)), span);
    let levels = &mut kc.launch.levels;
    levels.pop();
    levels.push(plan.blocks);
    levels.push(plan.threads);
    kc.launch.cluster_level = Some(levels.len() - 2);
    p.kernels[k] = kc;
    warnings
}

/// Clusters were asked for but the reduction needs more blocks than one
/// cluster may hold: it is split into two kernels instead.
fn too_wide_for_a_cluster(k: &Kernel, plan: &Plan, opts: &Options) -> Diagnostic {
    let (span, label) = reduction_block(&mut k.func.body.clone(), plan)
        .and_then(|b| b.get(plan.red_at).cloned())
        .map(|s| match &s.kind {
            StmtKind::For(l) => (s.span, l.labels.first().cloned()),
            _ => (s.span, None),
        })
        .unwrap_or((k.func.span, None));
    let what = label.map_or("this reduction".to_string(), |l| format!("level `{l}`"));
    Diagnostic::warning(format!(
        "this parallel reduction needs {} blocks of {} threads, more than \
         `max_thread_blocks_per_cluster` = {}: it runs as two kernels instead of one thread \
         block cluster",
        plan.blocks, plan.threads, opts.max_thread_blocks_per_cluster
    ))
    .at(span, format!("reduction of {what}"))
    .help(match (plan.blocks as u64).next_power_of_two() {
        n @ ..=MAX_CLUSTER => format!(
            "raise `max_thread_blocks_per_cluster` to {n} (more than 8 blocks per cluster need a \
             GPU that allows non-portable cluster sizes), or ask for at most {} threads",
            opts.max_thread_blocks_per_cluster * plan.threads
        ),
        _ => format!(
            "a cluster holds at most {MAX_CLUSTER} blocks (8 on every GPU with clusters); ask \
             for at most {} threads to use one",
            opts.max_thread_blocks_per_cluster * plan.threads
        ),
    })
}

/// The largest thread block cluster CUDA has (`options::MAX_CLUSTER_BLOCKS`).
const MAX_CLUSTER: u64 = crate::options::MAX_CLUSTER_BLOCKS as u64;

/// Removes the statements `drop` matches from `b` and its nested blocks.
fn drop_stmts(b: &mut Block, drop: &dyn Fn(&Stmt) -> bool) {
    b.retain(|s| !drop(s));
    for s in b.iter_mut() {
        for sub in sub_blocks_mut(s) {
            drop_stmts(sub, drop);
        }
    }
}

fn is_array_store(s: &Stmt) -> bool {
    matches!(
        &s.kind,
        StmtKind::Assign {
            dst: Place::Index { .. },
            ..
        }
    )
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
        rows_with(m, false, false)
    }

    /// `rows(m)`, with `y[i] = 1` before the reduction (`store_first`) or a
    /// second reduction `u` over the row after it, stored into `y[i]` too.
    fn rows_with(m: i64, store_first: bool, second: bool) -> Program {
        rows_of(4, 8192, 4, m, store_first, second)
    }

    /// `n` rows of `cols` elements, `outer` threads for the rows.
    fn rows_of(
        n: i64,
        cols: i64,
        outer_threads: i64,
        m: i64,
        store_first: bool,
        second: bool,
    ) -> Program {
        let mut b = FnBuilder::new("rows");
        let x = b.array("x", ElemTy::F32, &[n, cols]);
        let y = b.array("y", ElemTy::F32, &[n]);
        let i = b.index_var("i");
        let j = b.index_var("j");
        let t = b.local("t", ElemTy::F32);
        let f = &b.f;
        let mut inner = for_loop(
            j,
            0,
            cols,
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
        inner.reduction = Some(Reduction::new(ReduceOp::Sum, t));
        let mut body = vec![];
        if store_first {
            body.push(store(y, vec![var_e(f, i)], float(1.0, ElemTy::F32)));
        }
        body.push(assign(t, float(0.0, ElemTy::F32)));
        let mut again = inner.clone();
        body.push(for_stmt(inner));
        if second {
            let u = b.local("u", ElemTy::F32);
            let k = b.index_var("k");
            let f = &b.f;
            again.var = k;
            again.body = vec![assign(
                u,
                tbin(
                    BinOp::Max,
                    var_e(f, u),
                    idx(f, x, vec![var_e(f, i), var_e(f, k)]),
                ),
            )];
            again.reduction = Some(Reduction::new(ReduceOp::Max, u));
            body.push(assign(u, float(0.0, ElemTy::F32)));
            body.push(for_stmt(again));
            body.push(store(
                y,
                vec![var_e(f, i)],
                tbin(BinOp::Add, var_e(f, t), var_e(f, u)),
            ));
        } else {
            body.push(store(y, vec![var_e(&b.f, i)], var_e(&b.f, t)));
        }
        let mut outer = for_loop(i, 0, n, &["N"], body);
        outer.par = par(outer_threads);
        b.push(for_stmt(outer));
        let mut p = program(b.f);
        outline_kernels::run(&mut p);
        p
    }

    #[test]
    fn a_wide_row_reduction_becomes_two_kernels() {
        let mut p = rows(4096);
        assert!(run(&mut p, &Options::default()).is_empty());
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
    fn benchmark_g5_rows_span_64_blocks_each() {
        // 10 x 1e8 f32, N = threads(10), M = threads(65536).
        let mut p = rows_of(10, 100_000_000, 10, 65536, false, false);
        assert_eq!(
            program_to_string(&p),
            "\
kernel rows_N(x: f32[10, 100000000], y: f32[10]) launch(levels=[10, 65536], tpb=1024, blocks=[1, 1, 1], threads=[1, 1, 1]) {
  for i in 0..10 step 1 [N] par(threads=10, tpb=1024) {
    t: f32 = 0.0
    for j in 0..100000000 step 1 [M] par(threads=65536, tpb=1024) reduce(sum -> t) {
      t = (t + x[i, j])
    }
    y[i] = t
  }
}

fn rows(x: f32[10, 100000000], y: f32[10]) {
  launch rows_N(x, y)
}
"
        );
        assert!(run(&mut p, &Options::default()).is_empty());
        assert_eq!(verify_program(&p), Ok(()));
        assert_eq!(
            program_to_string(&p),
            "\
kernel rows_N_partial(x: f32[10, 100000000], y: f32[10], parts: f32[640]) launch(levels=[10, 64, 1024], tpb=1024, blocks=[1, 1, 1], threads=[1, 1, 1]) {
  for i in 0..10 step 1 [N] par(threads=10, tpb=1024) {
    for c in 0..64 step 1 [] par(threads=64, tpb=1024) {
      blk: f32 = 0.0
      for j in (c * 1562500)..min(100000000, ((c * 1562500) + 1562500)) step 1 [M] par(threads=1024, tpb=1024) reduce(sum -> blk) {
        blk = (blk + x[i, j])
      }
      parts[((i * 64) + c)] = blk
    }
  }
}

kernel rows_N_final(x: f32[10, 100000000], y: f32[10], parts: f32[640]) launch(levels=[10, 64], tpb=1024, blocks=[1, 1, 1], threads=[1, 1, 1]) {
  for i in 0..10 step 1 [N] par(threads=10, tpb=1024) {
    t: f32 = 0.0
    for b in 0..64 step 1 [M] par(threads=65536, tpb=1024) reduce(sum -> t) {
      t = (t + parts[((i * 64) + b)])
    }
    y[i] = t
  }
}

fn rows(x: f32[10, 100000000], y: f32[10]) {
  launch rows_N_partial(x, y, parts)
  launch rows_N_final(x, y, parts)
}
"
        );
        assert!(gpu_reductions::run(&mut p).is_empty());
        assert!(gpu_grid::run(&mut p).is_empty());
        assert_eq!(verify_program(&p), Ok(()));
        // Grid (rows, blocks per row) of 1024 threads, then one block of
        // 64 threads per row.
        assert_eq!(p.kernels[0].launch.blocks, [10, 64, 1]);
        assert_eq!(p.kernels[0].launch.threads, [1024, 1, 1]);
        assert_eq!(p.kernels[1].launch.blocks, [10, 1, 1]);
        assert_eq!(p.kernels[1].launch.threads, [64, 1, 1]);
    }

    #[test]
    fn a_reduction_that_fits_one_block_is_left_alone() {
        let mut p = rows(1024);
        let before = program_to_string(&p);
        assert!(run(&mut p, &Options::default()).is_empty());
        assert_eq!(program_to_string(&p), before);
    }

    #[test]
    fn a_store_before_the_reduction_is_made_by_the_second_kernel() {
        // y[i] = 1 before the reduction (ParPy's `y[i] = 0.0` followed by
        // `y[i] += x[i, j]`): kernel 1 computes the partials without it.
        let mut p = rows_with(4096, true, false);
        let w = run(&mut p, &Options::default());
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(verify_program(&p), Ok(()));
        assert_eq!(p.kernels.len(), 2);
        let text = |k: &Kernel| {
            let mut q = p.clone();
            q.kernels = vec![k.clone()];
            program_to_string(&q)
        };
        assert!(
            !text(&p.kernels[0]).contains("y[i] = 1.0"),
            "{}",
            text(&p.kernels[0])
        );
        assert!(
            text(&p.kernels[1]).contains("y[i] = 1.0"),
            "{}",
            text(&p.kernels[1])
        );
    }

    #[test]
    fn a_store_the_reduction_reads_keeps_one_block_and_warns() {
        // x[i, 0] = 1 before a reduction over x[i, :].
        let mut p = rows_with(4096, true, false);
        let f = &p.kernels[0].func;
        let x = f.params[0];
        let StmtKind::For(outer) = &f.body[0].kind else {
            panic!("no outer loop")
        };
        let i = outer.var;
        let first = store(
            x,
            vec![var_e(f, i), crate::passes::util::int(0, Span::default())],
            float(1.0, ElemTy::F32),
        );
        if let StmtKind::For(outer) = &mut p.kernels[0].func.body[0].kind {
            outer.body[0] = first;
        }
        let before = program_to_string(&p);
        let w = run(&mut p, &Options::default());
        assert_eq!(program_to_string(&p), before);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(!w[0].is_error());
        assert_eq!(
            w[0].message,
            "this parallel reduction asks for 4096 threads but runs in one block of 1024 \
             threads per outer iteration"
        );
        assert_eq!(w[0].labels[0].message, "reduction of level `M`");
        assert!(
            w[0].notes[0].contains("also reads or writes"),
            "{:?}",
            w[0].notes
        );
        // The fallback still lowers: one block per row.
        assert!(gpu_reductions::run(&mut p).is_empty());
        assert!(gpu_grid::run(&mut p).is_empty());
        assert_eq!(p.kernels[0].launch.blocks, [4, 1, 1]);
        assert_eq!(p.kernels[0].launch.threads, [1024, 1, 1]);
    }

    #[test]
    fn a_runtime_outer_bound_keeps_one_block_and_warns() {
        let mut p = rows(4096);
        let n = new_var(
            &mut p.kernels[0].func,
            "n",
            Type::Scalar(ElemTy::I64),
            VarKind::Param,
            Span::default(),
        );
        p.kernels[0].func.params.push(n);
        if let StmtKind::For(l) = &mut p.kernels[0].func.body[0].kind {
            l.hi = Expr::var(n, Type::Scalar(ElemTy::I64), Span::default());
        }
        let before = program_to_string(&p);
        let w = run(&mut p, &Options::default());
        assert_eq!(program_to_string(&p), before);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].notes[0].contains("not compile-time constants"));
    }

    #[test]
    fn a_second_wide_reduction_after_the_split_warns() {
        let mut p = rows_with(4096, false, true);
        let w = run(&mut p, &Options::default());
        assert_eq!(verify_program(&p), Ok(()));
        assert_eq!(p.kernels.len(), 2);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].notes[0].contains("only the first parallel reduction"));
        // The second kernel keeps the row's width for the later reduction.
        assert_eq!(p.kernels[1].launch.levels, [4, 4096]);
    }

    #[test]
    fn a_narrow_first_reduction_before_a_wide_one_warns_about_the_wide_one() {
        let mut p = rows_with(4096, false, true);
        // The first reduction covers 512 elements of the row only.
        if let StmtKind::For(outer) = &mut p.kernels[0].func.body[0].kind {
            if let StmtKind::For(r) = &mut outer.body[1].kind {
                r.hi = crate::passes::util::int(512, Span::default());
            }
        }
        let before = program_to_string(&p);
        let w = run(&mut p, &Options::default());
        assert_eq!(program_to_string(&p), before);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].notes[0].contains("that one fits in one block"));
    }

    #[test]
    fn a_narrow_level_never_warns() {
        // 1024 threads fit one block: no split and nothing to say, even
        // with a store before the reduction.
        let mut p = rows_with(1024, true, true);
        assert!(run(&mut p, &Options::default()).is_empty());
    }

    fn cluster_opts(max: i64) -> Options {
        Options {
            backend: Backend::Cuda,
            use_cuda_thread_block_clusters: true,
            max_thread_blocks_per_cluster: max,
            ..Options::default()
        }
    }

    #[test]
    fn with_clusters_a_wide_row_reduction_is_one_cluster_kernel() {
        let mut p = rows(4096);
        assert!(run(&mut p, &cluster_opts(8)).is_empty());
        assert_eq!(verify_program(&p), Ok(()));
        assert_eq!(
            program_to_string(&p),
            "\
kernel rows_N(x: f32[4, 8192], y: f32[4]) launch(levels=[4, 4, 1024], tpb=1024, blocks=[1, 1, 1], threads=[1, 1, 1]) cluster(level=1, dims=[0, 0, 0]) {
  for i in 0..4 step 1 [N] par(threads=4, tpb=1024) {
    t: f32 = 0.0
    for c in 0..4 step 1 [] par(threads=4, tpb=1024) {
      blk: f32 = 0.0
      for j in (c * 2048)..min(8192, ((c * 2048) + 2048)) step 1 [M] par(threads=1024, tpb=1024) reduce(sum -> blk) {
        blk = (blk + x[i, j])
      }
      blk = cluster_sum(blk)
      t = (t + blk)
      if (c == 0) {
        y[i] = t
      }
    }
  }
}

fn rows(x: f32[4, 8192], y: f32[4]) {
  launch rows_N(x, y)
}
"
        );
        assert!(gpu_reductions::run(&mut p).is_empty());
        assert!(gpu_grid::run(&mut p).is_empty());
        assert_eq!(verify_program(&p), Ok(()));
        assert_eq!(p.kernels[0].launch.blocks, [4, 4, 1]);
        assert_eq!(p.kernels[0].launch.cluster_dims(), Some([1, 4, 1]));
    }

    #[test]
    fn clusters_fall_back_to_two_kernels_past_the_cluster_size_and_on_metal() {
        let mut p = rows(4096);
        let w = run(&mut p, &cluster_opts(2));
        assert_eq!(p.kernels.len(), 2);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].message.contains("needs 4 blocks"), "{}", w[0].message);
        let mut p = rows(4096);
        let metal = Options {
            backend: Backend::Metal,
            ..cluster_opts(8)
        };
        assert!(run(&mut p, &metal).is_empty());
        assert_eq!(p.kernels.len(), 2);
    }

    #[test]
    fn with_clusters_a_later_wide_reduction_runs_in_the_first_block_and_warns() {
        let mut p = rows_with(4096, false, true);
        let w = run(&mut p, &cluster_opts(8));
        assert_eq!(verify_program(&p), Ok(()));
        assert_eq!(p.kernels.len(), 1);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].notes[0].contains("runs in the cluster's first block"));
        assert!(gpu_reductions::run(&mut p).is_empty());
        assert!(gpu_grid::run(&mut p).is_empty());
        assert_eq!(verify_program(&p), Ok(()));
    }
}
