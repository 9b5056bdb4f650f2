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
//!   into arrays and is followed by more code.
//! - `OnDevice` kernels (no parallel level) run with one thread.

use crate::diag::{Diagnostic, Span};
use crate::ir::{
    Axis, BinOp, Block, Expr, ExprKind, ForLoop, Function, GpuIndex, Kernel, Place, Program, Stmt,
    StmtKind, Type, VarKind, WARP_SIZE,
};
use crate::types::ElemTy;

/// The largest block a GPU backend launches.
pub const MAX_TPB: i64 = 1024;

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

fn contains_warp_reduce(b: &Block) -> bool {
    let mut found = false;
    visit_exprs(b, &mut |e| {
        if matches!(e.kind, ExprKind::WarpReduce { .. }) {
            found = true;
        }
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
    let mut m = Mapper {
        plan: &plan,
        threads: t,
        blocks,
    };
    let body = std::mem::take(&mut k.func.body);
    k.func.body = m.block(body, 0, &k.func);
    Ok(())
}

struct Mapper<'a> {
    plan: &'a [Level],
    threads: i64,
    blocks: [i64; 3],
}

fn i64e(kind: ExprKind, span: Span) -> Expr {
    Expr::new(kind, Type::Scalar(ElemTy::I64), span)
}

fn gidx(g: GpuIndex, span: Span) -> Expr {
    i64e(ExprKind::GpuIndex(g), span)
}

fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    let ty = if op.is_comparison() || matches!(op, BinOp::And) {
        Type::Scalar(ElemTy::Bool)
    } else {
        lhs.ty.clone()
    };
    let span = lhs.span;
    Expr::new(
        ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        ty,
        span,
    )
}

fn to_ty(e: Expr, ty: &Type) -> Expr {
    if &e.ty == ty {
        return e;
    }
    let span = e.span;
    Expr::new(ExprKind::Convert { arg: Box::new(e) }, ty.clone(), span)
}

fn stores_array(b: &Block, f: &Function) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::Assign {
            dst: Place::Index { array, .. },
            ..
        } => f.var(*array).kind != VarKind::Shared,
        StmtKind::For(l) => stores_array(&l.body, f),
        StmtKind::While { body, .. } | StmtKind::OnDevice(body) => stores_array(body, f),
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => stores_array(then_body, f) || stores_array(else_body, f),
        _ => false,
    })
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
        let mut c = bin(
            BinOp::Eq,
            gidx(GpuIndex::Thread(Axis::X), span),
            i64e(ExprKind::Int(0), span),
        );
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
    /// parallel loops).
    fn block(&mut self, b: Block, d: usize, f: &Function) -> Block {
        let mut out = vec![];
        let n = b.len();
        for (i, s) in b.into_iter().enumerate() {
            let span = s.span;
            let last = i + 1 == n;
            match s.kind {
                StmtKind::For(l) if l.par.is_some() => {
                    let inner = d >= self.innermost();
                    let needs_barrier =
                        inner && self.threads > 1 && !last && stores_array(&l.body, f);
                    let l = self.par_loop(*l, d, f);
                    out.push(Stmt::new(StmtKind::For(Box::new(l)), span));
                    if needs_barrier {
                        out.push(Stmt::new(StmtKind::Barrier, span));
                    }
                }
                StmtKind::For(mut l) => {
                    l.body = self.block(std::mem::take(&mut l.body), d, f);
                    out.push(Stmt::new(StmtKind::For(l), span));
                }
                StmtKind::While { cond, body } => {
                    let body = self.block(body, d, f);
                    out.push(Stmt::new(StmtKind::While { cond, body }, span));
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    let then_body = self.block(then_body, d, f);
                    let else_body = self.block(else_body, d, f);
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
                    && self.multi_threaded(d) =>
                {
                    let store = Stmt::new(
                        StmtKind::Assign {
                            dst: Place::Index { array, indices },
                            value,
                        },
                        span,
                    );
                    out.push(Stmt::new(
                        StmtKind::If {
                            cond: self.leader(d, span),
                            then_body: vec![store],
                            else_body: vec![],
                        },
                        span,
                    ));
                    if !last && self.threads > 1 {
                        out.push(Stmt::new(StmtKind::Barrier, span));
                    }
                }
                kind => out.push(Stmt::new(kind, span)),
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

    fn par_loop(&mut self, mut l: ForLoop, d: usize, f: &Function) -> ForLoop {
        let d = d.min(self.innermost());
        let span = l.lo.span;
        let workers = self.plan[d].workers;
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
        l.body = self.block(std::mem::take(&mut l.body), d + 1, f);
        l
    }
}

/// Calls `f` on every expression of a block (outermost first).
pub fn visit_exprs(b: &Block, f: &mut dyn FnMut(&Expr)) {
    fn expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
        f(e);
        match &e.kind {
            ExprKind::Index { indices, .. } => indices.iter().for_each(|i| expr(i, f)),
            ExprKind::Unary { arg, .. }
            | ExprKind::Convert { arg }
            | ExprKind::WarpReduce { arg, .. } => expr(arg, f),
            ExprKind::Binary { lhs, rhs, .. } => {
                expr(lhs, f);
                expr(rhs, f);
            }
            ExprKind::Select { cond, then, else_ } => {
                expr(cond, f);
                expr(then, f);
                expr(else_, f);
            }
            ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => {
                args.iter().for_each(|a| expr(a, f))
            }
            ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Var(_)
            | ExprKind::GpuIndex(_) => {}
        }
    }
    for s in b {
        match &s.kind {
            StmtKind::Assign { dst, value } => {
                if let Place::Index { indices, .. } = dst {
                    indices.iter().for_each(|i| expr(i, f));
                }
                expr(value, f);
            }
            StmtKind::For(l) => {
                expr(&l.lo, f);
                expr(&l.hi, f);
                visit_exprs(&l.body, f);
            }
            StmtKind::While { cond, body } => {
                expr(cond, f);
                visit_exprs(body, f);
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                expr(cond, f);
                visit_exprs(then_body, f);
                visit_exprs(else_body, f);
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => expr(e, f),
            StmtKind::OnDevice(body) => visit_exprs(body, f),
            StmtKind::Return(None) | StmtKind::Launch { .. } | StmtKind::Barrier => {}
        }
    }
}
