//! Cpu backend only, after `check_bounds`: unroll-and-jam of a sequential
//! loop whose iterations are independent and whose body runs an inner
//! loop with a loop-carried scalar (naive matmul, batched GEMM):
//!
//! ```text
//! for j in range(M):                  for j in range(0, M - M % 8, 8):
//!     acc = 0.0                           acc_0 = 0.0 ... acc_7 = 0.0
//!     for k in range(K):          =>      for k in range(K):
//!         acc = acc + A[i, k] * B[k, j]       acc_0 = acc_0 + A[i, k] * B[k, j + 0]
//!     C[i, j] = acc                           ... acc_7 = acc_7 + A[i, k] * B[k, j + 7]
//!                                         C[i, j + 0] = acc_0 ... C[i, j + 7] = acc_7
//!                                     (the original loop over the last M % 8)
//! ```
//!
//! Bounds known only at run time split the loop at
//! `lo + (max(hi - lo, 0) & -16)`, computed once into a local.
//!
//! Each lane does exactly the operations of its iteration, in the same
//! order, so the results are bit for bit the same; what changes is that
//! [`LANES`] (or [`MIN_LANES`]) independent dependency chains run side by
//! side, which the C compiler turns into SIMD lanes (`B[k, j + 0..7]` are
//! contiguous). The
//! inner loop alone cannot be vectorized: a float sum must keep its order.
//! A 64 x 96^3 float32 batched GEMM ran 15x faster.
//!
//! The lanes are independent when the body (straight-line statements,
//! `if`s and loops whose bodies hold no loop) writes only scalars that
//! each iteration assigns before reading them and whose value after the
//! loop is never read, and arrays it does not read, each at an index with
//! `j + c` (one `c` per array) in some dimension: no lane reads what
//! another writes, and two lanes never write one element.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::range::counter_dim;
use crate::ir::visit::{
    accesses_explicit, expr_uses, for_each_access, reads_before_def, sub_blocks_mut, walk_exprs,
    walk_stmts,
};
use crate::ir::{
    BinOp, Block, Expr, ExprKind, ForLoop, Function, Program, Stmt, StmtKind, VarId, VarKind,
};
use crate::options::{Backend, Options};
use crate::passes::lanes::{
    assigned_scalars, inner_loops, jam_lanes, lane_renames, plain, private_scalar,
};
use crate::passes::util::{assign_var, loop_key, new_var};

/// The iterations run side by side: sixteen when the loop has that many
/// (two AVX2 registers of float32: two independent chains of vector adds,
/// a 64 x 96^3 batched GEMM ran 1.6x faster than with eight), else eight.
pub const LANES: i64 = 16;
/// The fewest lanes worth jamming.
pub const MIN_LANES: i64 = 8;

/// Bodies with more statements than this stay as they are (the jammed
/// copy holds up to [`LANES`] of each).
const MAX_STMTS: usize = 16;

pub fn run(p: &mut Program, o: &Options) {
    if o.backend != Backend::Cpu {
        return;
    }
    jam_function(&mut p.host);
    for h in &mut p.helpers {
        jam_function(h);
    }
}

fn jam_function(f: &mut Function) {
    // decided on the whole function first (liveness looks past the loop),
    // each loop known by its box's address, which the rewrite keeps
    let mut plans = BTreeMap::new();
    walk_stmts(&f.body, &mut |s| {
        if let StmtKind::For(l) = &s.kind {
            if let Some(privates) = plan(l, f) {
                plans.insert(loop_key(l), privates);
            }
        }
    });
    if plans.is_empty() {
        return;
    }
    let mut body = std::mem::take(&mut f.body);
    rewrite(&mut body, f, &plans);
    f.body = body;
}

fn rewrite(b: &mut Block, f: &mut Function, plans: &BTreeMap<usize, Vec<VarId>>) {
    let mut out = Vec::with_capacity(b.len());
    for mut s in std::mem::take(b) {
        let plan = match &s.kind {
            StmtKind::For(l) => plans.get(&loop_key(l)),
            _ => None,
        };
        match (plan, s.kind) {
            (Some(privates), StmtKind::For(l)) => out.extend(jam(*l, privates, f, s.span)),
            (_, kind) => {
                s.kind = kind;
                for sb in sub_blocks_mut(&mut s) {
                    rewrite(sb, f, plans);
                }
                out.push(s);
            }
        }
    }
    *b = out;
}

/// The private scalars of `l` when it can be jammed (see the module
/// documentation), else None.
fn plan(l: &ForLoop, f: &Function) -> Option<Vec<VarId>> {
    if !plain(l) {
        return None;
    }
    match (&l.lo.kind, &l.hi.kind) {
        (ExprKind::Int(lo), ExprKind::Int(hi)) => {
            if hi.checked_sub(*lo).is_none_or(|n| n < MIN_LANES) {
                return None;
            }
        }
        // bounds known at run time: evaluated once more, in front of the
        // loop, to split it
        _ if crate::ir::visit::pure(&l.lo) && crate::ir::visit::pure(&l.hi) => {}
        _ => return None,
    }
    let mut stmts = 0;
    walk_stmts(&l.body, &mut |_| stmts += 1);
    if stmts > MAX_STMTS {
        return None;
    }
    // the scalars the body assigns: private to each iteration
    let privates = assigned_scalars(&l.body);
    if privates.contains(&l.var) {
        return None;
    }
    if !privates.iter().all(|&v| private_scalar(v, l, f)) {
        return None;
    }
    // the shape: segments of straight code and inner loops over them, one
    // with a loop-carried scalar (the chain the lanes break)
    let inner = inner_loops(&l.body, l.var, &privates, false)?;
    if inner.iter().any(|i| !stores(&i.body).is_empty()) {
        return None;
    }
    let carried = inner
        .iter()
        .any(|i| privates.iter().any(|&v| reads_before_def(&i.body, v)));
    if !carried || !accesses_explicit(&l.body) {
        return None;
    }
    // the arrays written: not read, one `j + c` dimension each (an index
    // that may count from the end is not one)
    let lowest = match l.lo.kind {
        ExprKind::Int(lo) => Some(lo as i128),
        _ => None,
    };
    let mut written: BTreeMap<VarId, (usize, i128)> = BTreeMap::new();
    for (array, indices) in stores(&l.body) {
        let at = counter_dim(indices, l.var, lowest)?;
        if *written.entry(array).or_insert(at) != at {
            return None;
        }
    }
    let mut read = BTreeSet::new();
    walk_exprs(&l.body, &mut |e| {
        expr_uses(e, &mut read);
        false
    });
    if written.keys().any(|a| read.contains(a)) {
        return None;
    }
    Some(privates.into_iter().collect())
}

/// The stores of a block (`a[...] = v`), nested blocks included.
fn stores(b: &[Stmt]) -> Vec<(VarId, &[Expr])> {
    let mut out = vec![];
    for_each_access(b, &mut |array, indices, store| {
        if store {
            out.push((array, indices));
        }
    });
    out
}

/// The jammed loop over the first `M - M % lanes` iterations and the
/// original loop over the rest. Bounds known only at run time split at
/// `lo + (max(hi - lo, 0) & -lanes)`, computed into a local first.
fn jam(l: ForLoop, privates: &[VarId], f: &mut Function, span: crate::diag::Span) -> Vec<Stmt> {
    let ty = l.lo.ty.clone();
    let int = |v: i64| Expr::new(ExprKind::Int(v), ty.clone(), span);
    let mut out = vec![];
    let (lanes, split, rest) = match (&l.lo.kind, &l.hi.kind) {
        (ExprKind::Int(lo), ExprKind::Int(hi)) => {
            let lanes = if hi - lo >= LANES { LANES } else { MIN_LANES };
            let split = lo + (hi - lo) / lanes * lanes;
            (lanes, int(split), split < *hi)
        }
        _ => {
            let n = Expr::binary(BinOp::Sub, l.hi.clone(), l.lo.clone(), ty.clone(), span);
            let n = Expr::binary(BinOp::Max, n, int(0), ty.clone(), span);
            let whole = Expr::binary(BinOp::BitAnd, n, int(-LANES), ty.clone(), span);
            let at = Expr::binary(BinOp::Add, l.lo.clone(), whole, ty.clone(), span);
            let v = new_var(f, "split", ty.clone(), VarKind::Local, span);
            out.push(assign_var(v, at, span));
            (LANES, Expr::var(v, ty.clone(), span), true)
        }
    };
    let renames = lane_renames(f, privates, lanes as usize);
    let counter = Expr::var(l.var, f.var(l.var).ty.clone(), span);
    let body = jam_lanes(&l.body, &counter, &renames);
    let main = ForLoop {
        hi: split.clone(),
        step: lanes,
        body,
        ..l.clone()
    };
    out.push(Stmt::new(StmtKind::For(Box::new(main)), span));
    if rest {
        let rest = ForLoop { lo: split, ..l };
        out.push(Stmt::new(StmtKind::For(Box::new(rest)), span));
    }
    out
}
