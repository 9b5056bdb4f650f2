//! GPU backends only, after `gpu_reductions`: maps the parallel levels of
//! each kernel onto the launch grid and fills `LaunchInfo.blocks/threads`.
//!
//! - The innermost parallel level runs on `thread.x`, with
//!   `min(tpb, threads)` threads per block; more threads than that spill
//!   into several blocks (one more block axis). A level that holds a tree
//!   reduction (the kernel contains a `WarpReduce`) stays in one block and
//!   its block size is rounded up to whole warps.
//! - Each outer parallel level gets one block axis, outermost first: `x`,
//!   then `y`, then `z` (the spill axis comes last). More than three block
//!   axes is an error. Counts above the axis limit (2^31-1 for `x`, 65535
//!   for `y`/`z`) are capped; the strided loops cover the rest.
//! - Every parallel loop becomes a strided loop over its workers:
//!   `for i in (lo + w*step)..hi step W*step`, where `w` is the worker index
//!   and `W` the number of workers of its level.
//! - Code between inner parallel loops runs on every thread of the block:
//!   array stores there are done by thread 0 of the block only (and by block
//!   0 of every axis that does not index the statement's level), followed by
//!   a barrier; a barrier also follows each inner parallel loop that stores
//!   into arrays and is followed by more code (the next iteration of an
//!   enclosing sequential loop counts as more code, and so does the next
//!   iteration of an outer parallel level a block runs more than once of:
//!   fewer blocks than iterations). A barrier also comes
//!   before such a store or loop when the code since the last barrier
//!   (an earlier iteration of an enclosing sequential loop included) reads
//!   an array it stores into: a thread still reading must not see the new
//!   value (`if c: continue` read by every thread, then thread 0's store of
//!   what `c` read; found by the CUDA emulator, fuzz seed 6915).
//! - `OnDevice` kernels (no parallel level) run with one thread.
//! - A kernel with a `cluster_level` (thread block clusters) gets its
//!   `cluster` dimensions: the block count of that level along its axis.

use std::collections::BTreeSet;

use crate::diag::{Diagnostic, Span};
use crate::ir::visit::{expr_uses, for_each_access};
use crate::ir::{
    Axis, BinOp, Block, Expr, ExprKind, ForLoop, Function, GpuIndex, Kernel, Place, Program, Stmt,
    StmtKind, Type, VarId, VarKind, WARP_SIZE,
};
use crate::passes::util::{bin, i64e, walk_exprs};

/// The largest block a GPU backend launches.
pub const MAX_TPB: i64 = crate::options::MAX_THREADS_PER_BLOCK;

/// Threads per block of the innermost level.
pub fn block_threads(inner_threads: i64, tpb: i64, reduction: bool) -> i64 {
    let t = inner_threads.min(tpb).max(1);
    if reduction {
        ((t + WARP_SIZE - 1) / WARP_SIZE * WARP_SIZE).min(MAX_TPB)
    } else {
        t
    }
}

fn axis_limit(a: Axis) -> i64 {
    match a {
        Axis::X => i32::MAX as i64,
        _ => 65535,
    }
}

/// How each parallel depth of a kernel maps onto the grid.
#[derive(Clone, Debug, PartialEq)]
struct Level {
    /// Block axis of an outer level, or the spill axis of the innermost.
    axis: Option<Axis>,
    /// Workers at this level (block count for an outer level; for the
    /// innermost, threads per block times spill blocks).
    workers: i64,
}

pub fn run(p: &mut Program) -> Vec<Diagnostic> {
    let mut errors = vec![];
    for k in &mut p.kernels {
        if let Err(d) = map_kernel(k) {
            errors.push(d);
        }
    }
    errors
}

/// Whether a warp reduction appears anywhere in `b`.
pub(crate) fn contains_warp_reduce(b: &[Stmt]) -> bool {
    let mut found = false;
    walk_exprs(b, &mut |e| {
        if matches!(e.kind, ExprKind::WarpReduce { .. }) {
            found = true;
        }
        true
    });
    found
}

fn map_kernel(k: &mut Kernel) -> Result<(), Diagnostic> {
    let levels = k.launch.levels.clone();
    let Some((&inner, outer)) = levels.split_last() else {
        k.launch.blocks = [1, 1, 1];
        k.launch.threads = [1, 1, 1];
        return Ok(());
    };
    let tpb = k.launch.tpb;
    if tpb > MAX_TPB {
        return Err(Diagnostic::error(format!(
            "{tpb} threads per block is more than the GPU maximum of {MAX_TPB}"
        ))
        .at(k.func.span, "in this parallel loop nest")
        .help(format!("use `.tpb(n)` with n <= {MAX_TPB}")));
    }
    let reduction = contains_warp_reduce(&k.func.body);
    let t = block_threads(inner, tpb, reduction);
    let spill = if reduction { 1 } else { (inner + t - 1) / t };
    let mut counts: Vec<i64> = outer.to_vec();
    if spill > 1 {
        counts.push(spill);
    }
    if counts.len() > 3 {
        return Err(Diagnostic::error(format!(
            "this loop nest needs {} block axes; a GPU grid has 3",
            counts.len()
        ))
        .at(k.func.span, "in this parallel loop nest")
        .note(format!(
            "parallel levels: {levels:?}, threads per block: {t}"
        ))
        .help("parallelize fewer nested levels, or fewer threads at the innermost level"));
    }
    let mut blocks = [1i64; 3];
    let mut plan = vec![];
    for (i, c) in counts.iter().enumerate() {
        let a = Axis::ALL[i];
        let n = (*c).min(axis_limit(a)).max(1);
        blocks[i] = n;
        plan.push(Level {
            axis: Some(a),
            workers: n,
        });
    }
    let spill_level = if spill > 1 { plan.pop() } else { None };
    plan.push(Level {
        axis: spill_level.as_ref().and_then(|l| l.axis),
        workers: t * spill_level.map(|l| l.workers).unwrap_or(1),
    });
    k.launch.blocks = blocks;
    k.launch.threads = [t, 1, 1];
    // The blocks of the cluster level form one cluster along its axis.
    if let Some(a) = k
        .launch
        .cluster_level
        .and_then(|d| plan.get(d).filter(|_| d + 1 < plan.len()))
        .and_then(|l| l.axis)
    {
        let mut dims = [1; 3];
        dims[a.index()] = blocks[a.index()];
        k.launch.cluster = dims;
    }
    // A local array (`tmp = np.zeros(K)`, a re-bound array name) that
    // code outside the innermost level uses is one array of the block
    // (shared memory), not each thread's own: thread 0 stores there and
    // the threads of the innermost level see it.
    let (mut outside, mut inside) = (BTreeSet::new(), BTreeSet::new());
    local_array_uses(
        &k.func.body,
        &k.func,
        (0, plan.len()),
        &mut outside,
        &mut inside,
    );
    let promoted: BTreeSet<VarId> = if t > 1 { outside } else { BTreeSet::new() };
    if let Some(v) = promoted.iter().find(|v| spill > 1 && inside.contains(v)) {
        let var = k.func.var(*v);
        return Err(Diagnostic::error(format!(
            "the local array `{}` is shared by the threads of a parallel level that spans {spill} blocks",
            var.name
        ))
        .at(var.span, "a local array of the parallel iteration")
        .note(format!(
            "the innermost parallel level has {inner} threads, more than one block of {t} holds; a local array lives in the memory of one block"
        ))
        .help(format!("give the innermost level at most {t} threads, or make the array an argument")));
    }
    let mut m = Mapper {
        plan: &plan,
        threads: t,
        blocks,
        promoted: &promoted,
    };
    let body = std::mem::take(&mut k.func.body);
    k.func.body = m.block(body, 0, &k.func, true, &mut BTreeSet::new());
    for v in promoted {
        k.func.vars[v.0 as usize].kind = VarKind::Shared;
    }
    Ok(())
}

/// The local arrays (`VarKind::Local` with an array type) that code of
/// `b` uses outside the innermost parallel loops (`outside`) and inside
/// them (`inside`); `(depth, levels)`: the parallel loops around `b` and
/// the number of levels.
fn local_array_uses(
    b: &[Stmt],
    f: &Function,
    (depth, levels): (usize, usize),
    outside: &mut BTreeSet<VarId>,
    inside: &mut BTreeSet<VarId>,
) {
    for s in b {
        let u = crate::ir::visit::own_uses(s);
        let local = |v: &&VarId| {
            let var = f.var(**v);
            var.kind == VarKind::Local && var.ty.is_array()
        };
        let here = if depth < levels {
            &mut *outside
        } else {
            &mut *inside
        };
        here.extend(u.reads.iter().chain(&u.stored).filter(local));
        let inner = match &s.kind {
            StmtKind::For(l) if l.par.is_some() => depth + 1,
            _ => depth,
        };
        for sb in crate::ir::visit::sub_blocks(s) {
            local_array_uses(sb, f, (inner, levels), outside, inside);
        }
    }
}

/// The arrays in global memory that `b` reads (`store`: stores into).
fn arrays(b: &[Stmt], f: &Function, store: bool) -> BTreeSet<VarId> {
    let mut out = BTreeSet::new();
    for_each_access(b, &mut |array, _, is_store| {
        if is_store == store && f.var(array).kind != VarKind::Shared {
            out.insert(array);
        }
    });
    out
}

struct Mapper<'a> {
    plan: &'a [Level],
    threads: i64,
    blocks: [i64; 3],
    /// The local arrays that become the block's (`map_kernel`).
    promoted: &'a BTreeSet<VarId>,
}

fn gidx(g: GpuIndex, span: Span) -> Expr {
    i64e(ExprKind::GpuIndex(g), span)
}

/// `threadIdx.x == 0`.
fn thread_zero(span: Span) -> Expr {
    bin(
        BinOp::Eq,
        gidx(GpuIndex::Thread(Axis::X), span),
        i64e(ExprKind::Int(0), span),
    )
}

fn to_ty(e: Expr, ty: &Type) -> Expr {
    if &e.ty == ty {
        return e;
    }
    let span = e.span;
    Expr::new(ExprKind::Convert { arg: Box::new(e) }, ty.clone(), span)
}

impl Mapper<'_> {
    fn innermost(&self) -> usize {
        self.plan.len() - 1
    }

    /// The worker index of parallel depth `d`.
    fn worker(&self, d: usize, span: Span) -> Expr {
        let l = &self.plan[d];
        if d < self.innermost() {
            return gidx(GpuIndex::Block(l.axis.unwrap_or(Axis::X)), span);
        }
        let tid = gidx(GpuIndex::Thread(Axis::X), span);
        match l.axis {
            Some(a) => bin(
                BinOp::Add,
                tid,
                bin(
                    BinOp::Mul,
                    gidx(GpuIndex::Block(a), span),
                    i64e(ExprKind::Int(self.threads), span),
                ),
            ),
            None => tid,
        }
    }

    /// The condition under which one thread does a store at depth `d`
    /// (outside the innermost level): thread 0, and block 0 of each axis
    /// that does not index an enclosing level.
    fn leader(&self, d: usize, span: Span) -> Expr {
        let mut c = thread_zero(span);
        for a in Axis::ALL {
            let used = self.plan[..d].iter().any(|l| l.axis == Some(a));
            if !used && self.blocks[a.index()] > 1 {
                let z = bin(
                    BinOp::Eq,
                    gidx(GpuIndex::Block(a), span),
                    i64e(ExprKind::Int(0), span),
                );
                c = bin(BinOp::And, c, z);
            }
        }
        c
    }

    /// Rewrites a block at parallel depth `d` (the number of enclosing
    /// parallel loops). `tail`: nothing of the enclosing parallel iteration
    /// runs after this block (the body of a sequential loop is followed by
    /// its next iteration, which may read what the last statement stored).
    /// `read`: the arrays read since the last barrier, on entry and on exit.
    fn block(
        &mut self,
        b: Block,
        d: usize,
        f: &Function,
        tail: bool,
        read: &mut BTreeSet<VarId>,
    ) -> Block {
        let mut out = vec![];
        let n = b.len();
        // a barrier before a store into an array some thread may still read
        let threads = self.threads;
        let fence =
            |stored: &BTreeSet<VarId>, read: &mut BTreeSet<VarId>, out: &mut Block, span| {
                if threads > 1 && stored.iter().any(|a| read.contains(a)) {
                    out.push(Stmt::new(StmtKind::Barrier, span));
                    read.clear();
                }
            };
        for (i, s) in b.into_iter().enumerate() {
            let span = s.span;
            let last = i + 1 == n && tail;
            let reads_here = arrays(std::slice::from_ref(&s), f, false);
            match s.kind {
                StmtKind::Barrier => {
                    read.clear();
                    out.push(Stmt::new(StmtKind::Barrier, span));
                }
                StmtKind::For(l) if l.par.is_some() => {
                    let inner = d >= self.innermost();
                    let stored = arrays(&l.body, f, true);
                    if inner {
                        fence(&stored, read, &mut out, span);
                    }
                    let needs_barrier = inner && self.threads > 1 && !last && !stored.is_empty();
                    let l = self.par_loop(*l, d, f, read);
                    out.push(Stmt::new(StmtKind::For(Box::new(l)), span));
                    if needs_barrier {
                        out.push(Stmt::new(StmtKind::Barrier, span));
                        read.clear();
                    } else {
                        read.extend(reads_here);
                    }
                }
                StmtKind::For(mut l) => {
                    // the next iteration follows the body's end
                    let mut inside = read.clone();
                    inside.extend(reads_here.iter().copied());
                    l.body = self.block(std::mem::take(&mut l.body), d, f, false, &mut inside);
                    read.extend(inside);
                    out.push(Stmt::new(StmtKind::For(l), span));
                }
                StmtKind::While { cond, body } => {
                    let mut inside = read.clone();
                    inside.extend(reads_here.iter().copied());
                    let body = self.block(body, d, f, false, &mut inside);
                    read.extend(inside);
                    out.push(Stmt::new(StmtKind::While { cond, body }, span));
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    let mut entry = read.clone();
                    // the condition's reads (arrays it names that the
                    // statement reads)
                    let mut named = BTreeSet::new();
                    expr_uses(&cond, &mut named);
                    entry.extend(named.into_iter().filter(|v| reads_here.contains(v)));
                    let mut t = entry.clone();
                    let then_body = self.block(then_body, d, f, last, &mut t);
                    let mut e = entry;
                    let else_body = self.block(else_body, d, f, last, &mut e);
                    *read = t;
                    read.extend(e);
                    out.push(Stmt::new(
                        StmtKind::If {
                            cond,
                            then_body,
                            else_body,
                        },
                        span,
                    ));
                }
                StmtKind::Assign {
                    dst: Place::Index { array, indices },
                    value,
                } if d <= self.innermost()
                    && f.var(array).kind != VarKind::Shared
                    && (f.var(array).kind != VarKind::Local || self.promoted.contains(&array))
                    && self.multi_threaded(d) =>
                {
                    fence(&BTreeSet::from([array]), read, &mut out, span);
                    // each block has its own copy of a promoted local array
                    let leader = if self.promoted.contains(&array) {
                        thread_zero(span)
                    } else {
                        self.leader(d, span)
                    };
                    let store = Stmt::new(
                        StmtKind::Assign {
                            dst: Place::Index { array, indices },
                            value,
                        },
                        span,
                    );
                    out.push(Stmt::new(
                        StmtKind::If {
                            cond: leader,
                            then_body: vec![store],
                            else_body: vec![],
                        },
                        span,
                    ));
                    if !last && self.threads > 1 {
                        out.push(Stmt::new(StmtKind::Barrier, span));
                        read.clear();
                    }
                }
                kind => {
                    read.extend(reads_here);
                    out.push(Stmt::new(kind, span));
                }
            }
        }
        out
    }

    /// Is code at depth `d` (outside the loops of depth `d`) run by more than
    /// one thread?
    fn multi_threaded(&self, d: usize) -> bool {
        let _ = d;
        self.threads > 1 || self.blocks.iter().any(|b| *b > 1)
    }

    fn par_loop(
        &mut self,
        mut l: ForLoop,
        d: usize,
        f: &Function,
        read: &BTreeSet<VarId>,
    ) -> ForLoop {
        let d = d.min(self.innermost());
        let span = l.lo.span;
        let workers = self.plan[d].workers;
        // a block that runs more than one iteration of an outer level runs
        // the next right after the body: as a sequential loop's, what the
        // body reads must be read by every thread before the next
        // iteration stores into it (a local array refilled, found by the
        // CUDA emulator)
        let repeats = d < self.innermost() && l.trip_count().is_none_or(|n| n > workers);
        let ty = l.lo.ty.clone();
        let w = to_ty(self.worker(d, span), &ty);
        let off = if l.step == 1 {
            w
        } else {
            bin(BinOp::Mul, w, to_ty(i64e(ExprKind::Int(l.step), span), &ty))
        };
        let lo = std::mem::replace(&mut l.lo, i64e(ExprKind::Int(0), span));
        l.lo = match lo.kind {
            ExprKind::Int(0) => off,
            _ => bin(BinOp::Add, lo, off),
        };
        l.step *= workers;
        l.par = None;
        let mut inside = read.clone();
        if repeats {
            inside.extend(arrays(&l.body, f, false));
        }
        l.body = self.block(std::mem::take(&mut l.body), d + 1, f, !repeats, &mut inside);
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::ir::verify::verify_program;
    use crate::ir::{LoopPar, ReduceOp, Reduction};
    use crate::passes::testutil::bin;
    use crate::passes::testutil::*;
    use crate::passes::{gpu_reductions, outline_kernels};
    use crate::types::ElemTy;

    fn par(threads: i64, tpb: i64) -> Option<LoopPar> {
        Some(LoopPar { threads, tpb })
    }

    /// Outlines, lowers reductions and maps the grid; returns the kernels.
    fn lower(mut p: Program) -> Result<String, Vec<Diagnostic>> {
        outline_kernels::run(&mut p);
        let e = gpu_reductions::run(&mut p);
        if !e.is_empty() {
            return Err(e);
        }
        let e = run(&mut p);
        if !e.is_empty() {
            return Err(e);
        }
        assert_eq!(verify_program(&p), Ok(()));
        Ok(program_to_string(&p))
    }

    #[test]
    fn one_level_runs_on_the_threads_of_one_block() {
        let mut p = sum_rows_program();
        if let StmtKind::For(l) = &mut p.host.body[0].kind {
            l.par = par(100, 1024);
        }
        let text = lower(p).unwrap();
        assert!(
            text.starts_with(
                "\
kernel sum_rows_outer(x: f32[100, 1024], y: f32[100]) launch(levels=[100], tpb=1024, blocks=[1, 1, 1], threads=[100, 1, 1]) {
  for i in thread.x..100 step 100 [outer] {
    acc: f32 = 0.0
    for j in 0..1024 step 1 [] reduce(sum -> acc) {
      acc = (acc + x[i, j])
    }
    y[i] = acc
  }
}
"
            ),
            "{text}"
        );
    }

    #[test]
    fn more_threads_than_tpb_spill_into_blocks() {
        // for i in 0..5000 par(3000, tpb 1024) { y[i] = x[i] }
        let mut b = FnBuilder::new("copy");
        let x = b.array("x", ElemTy::F32, &[5000]);
        let y = b.array("y", ElemTy::F32, &[5000]);
        let i = b.index_var("i");
        let f = &b.f;
        let mut l = for_loop(
            i,
            0,
            5000,
            &["i"],
            vec![store(y, vec![var_e(f, i)], idx(f, x, vec![var_e(f, i)]))],
        );
        l.par = par(3000, 1024);
        b.push(for_stmt(l));
        let text = lower(program(b.f)).unwrap();
        assert!(
            text.starts_with(
                "\
kernel copy_i(x: f32[5000], y: f32[5000]) launch(levels=[3000], tpb=1024, blocks=[3, 1, 1], threads=[1024, 1, 1]) {
  for i in (thread.x + (block.x * 1024))..5000 step 3072 [i] {
    y[i] = x[i]
  }
}
"
            ),
            "{text}"
        );
    }

    /// for i in 0..4 par(4) [N] { t = 0; for j in 0..64 par(m) [M] reduce(sum -> t)
    /// { t = t + x[i, j] }; y[i] = t }
    fn row_sums(m: i64) -> Program {
        let mut b = FnBuilder::new("rows");
        let x = b.array("x", ElemTy::F32, &[4, 64]);
        let y = b.array("y", ElemTy::F32, &[4]);
        let i = b.index_var("i");
        let j = b.index_var("j");
        let t = b.local("t", ElemTy::F32);
        let f = &b.f;
        let mut inner = for_loop(
            j,
            0,
            64,
            &["M"],
            vec![assign(
                t,
                bin(
                    BinOp::Add,
                    var_e(f, t),
                    idx(f, x, vec![var_e(f, i), var_e(f, j)]),
                ),
            )],
        );
        inner.par = par(m, 1024);
        inner.reduction = Some(Reduction::new(ReduceOp::Sum, t));
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
        outer.par = par(4, 1024);
        b.push(for_stmt(outer));
        program(b.f)
    }

    #[test]
    fn two_levels_with_a_tree_reduction() {
        let text = lower(row_sums(64)).unwrap();
        assert!(
            text.starts_with(
                "\
kernel rows_N(x: f32[4, 64], y: f32[4]) launch(levels=[4, 64], tpb=1024, blocks=[4, 1, 1], threads=[64, 1, 1]) {
  shared shm_f32: f32[2]
  for i in block.x..4 step 4 [N] {
    t: f32 = 0.0
    partial: f32 = 0.0
    for j in thread.x..64 step 64 [M] {
      partial = (partial + x[i, j])
    }
    partial = warp_sum(partial)
    if (lane == 0) {
      shm_f32[warp] = partial
    }
    barrier
    partial = warp_sum((shm_f32[lane] if (lane < 2) else 0.0))
    barrier
    t = (t + partial)
    if (thread.x == 0) {
      y[i] = t
    }
  }
}
"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_reduction_level_stays_in_one_block_of_whole_warps() {
        // 3000 threads at the reduction level: one block of 1024 threads.
        let text = lower(row_sums(3000)).unwrap();
        assert!(
            text.contains("blocks=[4, 1, 1], threads=[1024, 1, 1]"),
            "{text}"
        );
        assert!(
            text.contains("for j in thread.x..64 step 1024 [M]"),
            "{text}"
        );
        // 40 threads are rounded up to two warps.
        let text = lower(row_sums(40)).unwrap();
        assert!(text.contains("threads=[64, 1, 1]"), "{text}");
    }

    #[test]
    fn inner_loops_that_store_are_followed_by_a_barrier() {
        // for i par(8) { for j par(32) { y[i, j] = 1 }; for j par(32) { z[i, j] = y[i, 31 - j] } }
        let mut b = FnBuilder::new("two");
        let y = b.array("y", ElemTy::F64, &[8, 32]);
        let z = b.array("z", ElemTy::F64, &[8, 32]);
        let i = b.index_var("i");
        let j = b.index_var("j");
        let f = &b.f;
        let mut a = for_loop(
            j,
            0,
            32,
            &["M"],
            vec![store(
                y,
                vec![var_e(f, i), var_e(f, j)],
                float(1.0, ElemTy::F64),
            )],
        );
        a.par = par(32, 1024);
        let mut c = for_loop(
            j,
            0,
            32,
            &["M"],
            vec![store(
                z,
                vec![var_e(f, i), var_e(f, j)],
                idx(
                    f,
                    y,
                    vec![var_e(f, i), bin(BinOp::Sub, int(31), var_e(f, j))],
                ),
            )],
        );
        c.par = par(32, 1024);
        let mut outer = for_loop(i, 0, 8, &["N"], vec![for_stmt(a), for_stmt(c)]);
        outer.par = par(8, 1024);
        b.push(for_stmt(outer));
        let text = lower(program(b.f)).unwrap();
        assert!(
            text.contains(
                "    for j in thread.x..32 step 32 [M] {\n      y[i, j] = 1.0\n    }\n    barrier\n    for j in thread.x..32 step 32 [M] {"
            ),
            "{text}"
        );
        // No barrier after the last loop.
        assert_eq!(text.matches("barrier").count(), 1, "{text}");
    }

    #[test]
    fn too_many_block_axes_is_an_error() {
        // Four nested levels [2, 2, 2, 2048]: three outer axes plus a spill.
        let mut b = FnBuilder::new("deep");
        let y = b.array("y", ElemTy::F32, &[2048]);
        let vars: Vec<_> = (0..4).map(|k| b.index_var(&format!("i{k}"))).collect();
        let f = &b.f;
        let mut l = for_loop(
            vars[3],
            0,
            2048,
            &["d"],
            vec![store(y, vec![var_e(f, vars[3])], float(0.0, ElemTy::F32))],
        );
        l.par = par(2048, 1024);
        for k in (0..3).rev() {
            let mut o = for_loop(vars[k], 0, 2, &["o"], vec![for_stmt(l)]);
            o.par = par(2, 1024);
            l = o;
        }
        b.push(for_stmt(l));
        let e = lower(program(b.f)).unwrap_err();
        let text = crate::diag::render_all(&e);
        assert!(
            text.contains("needs 4 block axes; a GPU grid has 3"),
            "{text}"
        );
    }

    #[test]
    fn tpb_above_the_maximum_is_an_error() {
        let mut p = sum_rows_program();
        if let StmtKind::For(l) = &mut p.host.body[0].kind {
            l.par = par(100, 2048);
        }
        let e = lower(p).unwrap_err();
        let text = crate::diag::render_all(&e);
        assert!(text.contains("2048 threads per block"), "{text}");
    }

    #[test]
    fn on_device_kernels_run_one_thread() {
        let mut b = FnBuilder::new("dev");
        let y = b.array("y", ElemTy::F32, &[1]);
        b.push(Stmt::new(
            StmtKind::OnDevice(vec![store(y, vec![int(0)], float(1.0, ElemTy::F32))]),
            sp(),
        ));
        let text = lower(program(b.f)).unwrap();
        assert!(
            text.starts_with(
                "kernel dev_gpu(y: f32[1]) launch(levels=[], tpb=1, blocks=[1, 1, 1], threads=[1, 1, 1]) {\n  y[0] = 1.0\n}\n"
            ),
            "{text}"
        );
    }
}
