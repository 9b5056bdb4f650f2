//! GPU backends only, after `outline_kernels`: keeps a kernel's threads
//! from waiting on other blocks. The levels below the top of a kernel map
//! onto further block axes (`gpu_grid`), and the innermost level spills
//! into several blocks when it has more threads than a block; blocks
//! cannot wait for each other inside a kernel. So when the code around a
//! parallel loop P (the rest of the body of the parallel loop enclosing P)
//! reads an array P writes, or writes one P reads or writes, P's level
//! must stay inside one block:
//!
//! - a middle level becomes sequential (its loops lose `par`; every thread
//!   of the block runs them, with the levels below still parallel);
//! - the innermost level gets at most one block of threads (its strided
//!   loop covers the rest); with a reduction it is already kept in one
//!   block by `gpu_grid`, or split into kernels by `gpu_two_stage`.
//!
//! `gpu_grid`'s barriers then order the accesses within the block.

use std::collections::BTreeSet;

use crate::ir::{Block, Expr, ExprKind, Kernel, Place, Program, Stmt, StmtKind, VarId};
use crate::passes::outline_kernels::launch_levels;
use crate::passes::util::{for_loops_at, stmt_exprs, sub_blocks};

pub fn run(p: &mut Program) {
    for k in &mut p.kernels {
        run_kernel(k);
    }
}

fn run_kernel(k: &mut Kernel) {
    let mut changed = false;
    // each step removes a level or shrinks the innermost one: terminates
    while let Some((depth, innermost)) = first_conflict(k) {
        changed = true;
        for_loops_at(&mut k.func.body, depth, &mut |l| match &mut l.par {
            Some(p) if innermost => p.threads = p.threads.min(p.tpb),
            _ => l.par = None,
        });
    }
    if changed {
        if let Some(top) = k.func.body.iter().find(|s| is_par(s)) {
            let (levels, tpb) = launch_levels(top);
            k.launch.levels = levels;
            k.launch.tpb = tpb;
        }
    }
}

fn is_par(s: &Stmt) -> bool {
    matches!(&s.kind, StmtKind::For(l) if l.par.is_some())
}

/// The first parallel depth (below the top) whose loops race with the
/// code around them across blocks, and whether it is the innermost.
fn first_conflict(k: &Kernel) -> Option<(usize, bool)> {
    let top = k.func.body.iter().find(|s| is_par(s))?;
    let n = launch_levels(top).0.len();
    // an innermost level with a reduction stays in one block (`gpu_grid`)
    // or is split into kernels (`gpu_two_stage`)
    let mut reduces = false;
    enclosing_bodies(&k.func.body, 0, n.saturating_sub(2), &mut |body| {
        let mut loops = vec![];
        direct_par_loops(body, &mut loops);
        reduces |= loops
            .iter()
            .any(|s| matches!(&s.kind, StmtKind::For(l) if l.reduction.is_some()));
    });
    for d in 1..n {
        let innermost = d + 1 == n;
        if innermost && reduces {
            continue;
        }
        let mut found = false;
        enclosing_bodies(&k.func.body, 0, d - 1, &mut |body| {
            let mut loops = vec![];
            direct_par_loops(body, &mut loops);
            // an innermost level within one block needs no change
            let spills = loops.iter().any(
                |s| matches!(&s.kind, StmtKind::For(l) if l.par.is_some_and(|p| p.threads > p.tpb)),
            );
            found |= (!innermost || spills) && body_conflicts(body);
        });
        if found {
            return Some((d, innermost));
        }
    }
    None
}

/// Calls `f` on the body of every parallel loop at parallel depth `depth`.
fn enclosing_bodies(b: &[Stmt], cur: usize, depth: usize, f: &mut dyn FnMut(&Block)) {
    for s in b {
        match &s.kind {
            StmtKind::For(l) if l.par.is_some() => {
                if cur == depth {
                    f(&l.body);
                } else {
                    enclosing_bodies(&l.body, cur + 1, depth, f);
                }
            }
            _ => sub_blocks(s)
                .into_iter()
                .for_each(|sub| enclosing_bodies(sub, cur, depth, f)),
        }
    }
}

/// Arrays read and written.
#[derive(Default)]
struct Access {
    reads: BTreeSet<VarId>,
    writes: BTreeSet<VarId>,
}

impl Access {
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Index { array, .. } => {
                self.reads.insert(*array);
            }
            ExprKind::External { args, .. } => {
                for a in crate::ir::call_arg_arrays(args) {
                    self.reads.insert(a);
                    self.writes.insert(a);
                }
            }
            // a helper may write the arrays it is given
            ExprKind::Call { args, .. } => {
                for a in args {
                    if let (ExprKind::Var(v), true) = (&a.kind, a.ty.is_array()) {
                        self.reads.insert(*v);
                        self.writes.insert(*v);
                    }
                }
            }
            _ => {}
        }
        e.children().for_each(|c| self.expr(c));
    }

    /// The accesses of `b`, leaving out the parallel loops directly in it
    /// (not inside another parallel loop) when `skip_par`.
    fn block(&mut self, b: &[Stmt], skip_par: bool) {
        for s in b {
            if skip_par && is_par(s) {
                continue;
            }
            if let StmtKind::Assign {
                dst: Place::Index { array, .. },
                ..
            } = &s.kind
            {
                self.writes.insert(*array);
            }
            stmt_exprs(s).into_iter().for_each(|e| self.expr(e));
            let inner_skip = skip_par && !matches!(&s.kind, StmtKind::For(l) if l.par.is_some());
            sub_blocks(s)
                .into_iter()
                .for_each(|sub| self.block(sub, inner_skip));
        }
    }
}

/// The parallel loops in `b` that are not inside another parallel loop.
fn direct_par_loops<'a>(b: &'a [Stmt], out: &mut Vec<&'a Stmt>) {
    for s in b {
        if is_par(s) {
            out.push(s);
        } else {
            sub_blocks(s)
                .into_iter()
                .for_each(|sub| direct_par_loops(sub, out));
        }
    }
}

/// Whether the code of `body` outside its parallel loops touches what one
/// of them writes (or writes what it reads), or two of them do so.
fn body_conflicts(body: &Block) -> bool {
    let mut loops = vec![];
    direct_par_loops(body, &mut loops);
    let mut around = Access::default();
    around.block(body, true);
    let accesses: Vec<Access> = loops
        .iter()
        .map(|s| {
            let mut a = Access::default();
            a.block(std::slice::from_ref(*s), false);
            a
        })
        .collect();
    for (i, a) in accesses.iter().enumerate() {
        let clash = |o: &Access| {
            o.reads.iter().any(|v| a.writes.contains(v))
                || o.writes
                    .iter()
                    .any(|v| a.writes.contains(v) || a.reads.contains(v))
        };
        if clash(&around) || accesses.iter().enumerate().any(|(j, o)| j != i && clash(o)) {
            return true;
        }
    }
    false
}
