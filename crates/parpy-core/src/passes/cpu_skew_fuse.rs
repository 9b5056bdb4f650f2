//! Cpu backend only, after `cpu_unroll_jam`: two sibling parallel loops
//! over the same range, the second reading what the first writes near the
//! same index (the two sweeps of a Jacobi step), run fused, each thread
//! over one chunk of the range with the second loop `DP` iterations
//! behind the first:
//!
//! ```text
//! for i in range(lo, hi):  # parallel        for w in range(T):  # parallel, T threads
//!     B[i, :] = f(A[i-1:i+2, :])                 for i in chunk w:
//! for i in range(lo, hi):  # parallel    =>          B[i, :] = f(A[i-1:i+2, :])
//!     A[i, :] = g(B[i-1:i+2, :])                     if i - DP is inside the chunk by DM:
//!                                                         A[i-DP, :] = g(B[i-DP-1:i-DP+2, :])
//!                                            for w in range(T):  # parallel
//!                                                for i in chunk w, its first DM and last DP:
//!                                                    A[i, :] = g(B[i-1:i+2, :])
//! ```
//!
//! A row of `B` is read back while it is still in the core's cache, so a
//! step moves each array through memory once instead of twice (a 700^2
//! float64 Jacobi ran 1.4x faster on two cores).
//!
//! Why it is right. Every access of an array both loops touch, and one of
//! them stores, indexes some dimension (the same for every access of that
//! array) with the loop's counter plus a constant: iteration `k` of the
//! first loop touches row `k + c1`, iteration `j` of the second row
//! `j + c2`. They meet when `k = j + (c2 - c1)`, so iteration `j` of the
//! second loop depends on iterations `j - DM ..= j + DP` of the first
//! (`DP`, `DM`: the largest `c2 - c1` and `c1 - c2`, at least 0). A
//! thread runs iteration `j` of the second loop right after iteration
//! `j + DP` of the first when that whole window lies in its chunk; the
//! others (the first `DM` and the last `DP` of each chunk) wait for every
//! thread (the end of the first parallel loop). The iterations of each
//! loop stay independent of each other (they are parallel loops), and the
//! scalars the bodies assign are private to an iteration, so each
//! iteration does exactly what it did before, on the same values: the
//! results are bit for bit the same. With `DP = DM = 0` the loops fuse
//! into one without chunks.
//!
//! Rows in pairs. When the rows of either loop read each other's
//! neighbours (`lanes::jammed_pair`), the first chunk loop runs two rows
//! per step: iterations `i` and `i + 1` of the first loop, then `i - DP`
//! and `i + 1 - DP` of the second, each pair side by side when its rows
//! share reads (else one after the other); the row left at the end of the
//! chunk runs alone. Iteration `i - DP` of the second loop now runs after
//! iteration `i + 1` of the first, which it does not meet (it meets only
//! the first's iterations up to `i - DP + DP`). On a 700^2 float64 Jacobi
//! the pairs load 8 elements for two rows instead of 10: 8.9 -> 7.9 ms,
//! with Numba at 9.3-9.8 in the same runs.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::Span;
use crate::ir::range::counter_dim;
use crate::ir::visit::{
    accesses_explicit, expr_uses, for_each_access, live_after_loop, loop_exits, pure,
    reads_before_def, same_expr, sub_blocks, sub_blocks_mut, walk_stmts, written,
};
use crate::ir::{
    BinOp, Block, Expr, ExprKind, ForLoop, Function, Place, Program, Stmt, StmtKind, Type, VarId,
    VarKind,
};
use crate::options::{Backend, Options};
use crate::passes::lanes::jammed_pair;
use crate::passes::util::{assign_var, loop_key, new_var, subst_block_expr};
use crate::types::ElemTy;

/// The largest `DM + DP` fused: more rows of each chunk would wait for
/// the other threads.
pub const MAX_SKEW: i128 = 4;

/// Loops with a constant trip count below this stay as they are.
const MIN_TRIP: i64 = 16;

/// How far the second loop runs behind the first, and how far ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Skew {
    /// `DP`: iteration `j` of the second loop needs iteration `j + DP` of
    /// the first.
    ahead: i64,
    /// `DM`: ... and iteration `j - DM`.
    behind: i64,
}

pub fn run(p: &mut Program, o: &Options) {
    if o.backend != Backend::Cpu {
        return;
    }
    let f = &mut p.host;
    // decided on the whole function first (liveness looks past the
    // loops), each pair known by its first loop's box address
    let mut plans = BTreeMap::new();
    find_pairs(&f.body, f, &mut plans);
    if plans.is_empty() {
        return;
    }
    let mut body = std::mem::take(&mut f.body);
    rewrite(&mut body, f, &plans);
    f.body = body;
}

/// A loop statement, or an `if` without `else` around one loop alone
/// (`check_bounds`' checks of a nest whose bounds are known only at run
/// time: the nest runs only when they pass): the condition and the loop.
fn guarded(s: &Stmt) -> Option<(Option<&Expr>, &ForLoop)> {
    match &s.kind {
        StmtKind::For(l) => Some((None, l)),
        StmtKind::If {
            cond,
            then_body,
            else_body,
        } if else_body.is_empty() && then_body.len() == 1 => match &then_body[0].kind {
            StmtKind::For(l) => Some((Some(cond), l)),
            _ => None,
        },
        _ => None,
    }
}

/// [`guarded`], taking the statement apart.
fn into_guarded(s: Stmt) -> (Option<Expr>, ForLoop) {
    match s.kind {
        StmtKind::For(l) => (None, *l),
        StmtKind::If {
            cond,
            mut then_body,
            ..
        } => match then_body.pop().map(|s| s.kind) {
            Some(StmtKind::For(l)) => (Some(cond), *l),
            _ => unreachable!("a planned statement is a guarded loop"),
        },
        _ => unreachable!("a planned statement is a guarded loop"),
    }
}

/// Adjacent (guarded) parallel loops of `b` (and of its sequential
/// sub-blocks) that fuse, outside any parallel loop.
fn find_pairs(b: &[Stmt], f: &Function, plans: &mut BTreeMap<usize, Skew>) {
    let mut k = 0;
    while k < b.len() {
        if let (Some((_, l1)), Some((c2, l2))) = (guarded(&b[k]), b.get(k + 1).and_then(guarded)) {
            if let Some(skew) = plan(l1, l2, c2, f) {
                plans.insert(loop_key(l1), skew);
                k += 2;
                continue;
            }
        }
        let s = &b[k];
        let inside_par = matches!(&s.kind, StmtKind::For(l) if l.par.is_some());
        if !inside_par && !matches!(s.kind, StmtKind::OnDevice(_)) {
            for sb in sub_blocks(s) {
                find_pairs(sb, f, plans);
            }
        }
        k += 1;
    }
}

fn rewrite(b: &mut Block, f: &mut Function, plans: &BTreeMap<usize, Skew>) {
    let mut out = Vec::with_capacity(b.len());
    let mut it = std::mem::take(b).into_iter();
    while let Some(mut s) = it.next() {
        let skew = guarded(&s).and_then(|(_, l)| plans.get(&loop_key(l)).copied());
        let Some(skew) = skew else {
            for sb in sub_blocks_mut(&mut s) {
                rewrite(sb, f, plans);
            }
            out.push(s);
            continue;
        };
        let span = s.span;
        let (c1, l1) = into_guarded(s);
        let (c2, l2) = into_guarded(it.next().expect("a planned pair is two statements"));
        if c1.is_none() && c2.is_none() {
            out.extend(fuse(l1, l2, skew, f, span));
            continue;
        }
        // guarded: both guards first (in order), then the fused loops when
        // both pass, else each loop its guard lets run
        let bool_ty = Type::Scalar(ElemTy::Bool);
        let mut guard = |c: Option<Expr>, out: &mut Vec<Stmt>| -> Option<Expr> {
            let c = c?;
            let v = new_var(f, "checked", bool_ty.clone(), VarKind::Local, span);
            out.push(assign_var(v, c, span));
            Some(Expr::var(v, bool_ty.clone(), span))
        };
        let (ok1, ok2) = (guard(c1, &mut out), guard(c2, &mut out));
        let guarded_if = |cond: Option<Expr>, then_body: Block, else_body: Block| match cond {
            Some(cond) => vec![Stmt::new(
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                },
                span,
            )],
            None => then_body,
        };
        let alone = |ok: Option<Expr>, l: ForLoop| {
            guarded_if(
                ok,
                vec![Stmt::new(StmtKind::For(Box::new(l)), span)],
                vec![],
            )
        };
        let both = match (ok1.clone(), ok2.clone()) {
            (Some(a), Some(b)) => Expr::binary(BinOp::And, a, b, bool_ty.clone(), span),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => unreachable!("a guarded pair has a guard"),
        };
        let fused = fuse(l1.clone(), l2.clone(), skew, f, span);
        let mut else_body = alone(ok1, l1);
        else_body.extend(alone(ok2, l2));
        out.extend(guarded_if(Some(both), fused, else_body));
    }
    *b = out;
}

/// A parallel loop (not a reduction, counted by one, more than one
/// worker) whose body does not leave it, touches only the elements it
/// shows, and runs a loop (a row per iteration: with a scalar per
/// iteration the arrays fit in cache unless they are huge, and the fused
/// loop would not vectorize).
fn plain_parallel(l: &ForLoop) -> bool {
    let mut simple = true;
    let mut rows = false;
    walk_stmts(&l.body, &mut |s| {
        rows |= matches!(s.kind, StmtKind::For(_) | StmtKind::While { .. });
        simple &= matches!(
            s.kind,
            StmtKind::Assign { .. }
                | StmtKind::For(_)
                | StmtKind::While { .. }
                | StmtKind::If { .. }
                | StmtKind::Break
                | StmtKind::Continue
        );
    });
    l.par.is_some_and(|p| p.threads != 1)
        && l.reduction.is_none()
        && !l.wants_reduction
        && !l.unroll
        && l.step == 1
        && simple
        && rows
        && loop_exits(&l.body).is_empty()
        && accesses_explicit(&l.body)
}

/// The skew with which `l2` (behind the guard `c2`, if any) fuses into
/// `l1` (see the module documentation), or None.
fn plan(l1: &ForLoop, l2: &ForLoop, c2: Option<&Expr>, f: &Function) -> Option<Skew> {
    if !plain_parallel(l1)
        || !plain_parallel(l2)
        || !same_expr(&l1.lo, &l2.lo)
        || !same_expr(&l1.hi, &l2.hi)
        || !pure(&l1.lo)
        || !pure(&l1.hi)
        || l1.lo.ty != Type::Scalar(ElemTy::I64)
    {
        return None;
    }
    if let (ExprKind::Int(lo), ExprKind::Int(hi)) = (&l1.lo.kind, &l1.hi.kind) {
        if hi.saturating_sub(*lo) < MIN_TRIP {
            return None;
        }
    }
    // the bounds are evaluated once before the loops and the second guard
    // before the first loop runs: nothing the bodies write may feed them
    let (w1, w2) = (written(&l1.body), written(&l2.body));
    let mut bounds = BTreeSet::new();
    expr_uses(&l1.lo, &mut bounds);
    expr_uses(&l1.hi, &mut bounds);
    if bounds.iter().any(|v| w1.contains(v) || w2.contains(v)) {
        return None;
    }
    let mut guard = BTreeSet::new();
    if let Some(c) = c2 {
        expr_uses(c, &mut guard);
    }
    if guard.iter().any(|v| w1.contains(v)) {
        return None;
    }
    // the scalars the bodies assign: private to an iteration of each loop
    // (inner loops' counters included: their loops assign them first)
    let mut assigned = BTreeSet::new();
    for b in [&l1.body, &l2.body] {
        walk_stmts(b, &mut |s| {
            if let StmtKind::Assign {
                dst: Place::Var(v), ..
            } = &s.kind
            {
                assigned.insert(*v);
            }
        });
    }
    for &v in &assigned {
        if f.var(v).kind != VarKind::Local
            || v == l1.var
            || v == l2.var
            || reads_before_def(&l1.body, v)
            || reads_before_def(&l2.body, v)
            || live_after_loop(&f.body, l1, v)
            || live_after_loop(&f.body, l2, v)
        {
            return None;
        }
    }
    if [l1.var, l2.var]
        .iter()
        .any(|v| w1.contains(v) || w2.contains(v))
    {
        return None;
    }
    let (a1, a2) = (rows(l1), rows(l2));
    let mut skew = Skew {
        ahead: 0,
        behind: 0,
    };
    let mut shared = false;
    for (array, first) in &a1 {
        let Some(second) = a2.get(array) else {
            continue;
        };
        let stored = first.accesses.iter().chain(&second.accesses).any(|a| a.1);
        if !stored {
            continue;
        }
        // every access of the array, in both loops, in one dimension
        if first.dim? != second.dim? {
            return None;
        }
        shared = true;
        for &(c1, s1) in &first.accesses {
            for &(c2, s2) in &second.accesses {
                if s1 || s2 {
                    skew.ahead = skew.ahead.max(i64::try_from(c2 - c1).ok()?);
                    skew.behind = skew.behind.max(i64::try_from(c1 - c2).ok()?);
                }
            }
        }
    }
    // no array in common: nothing to gain
    if !shared || (skew.ahead + skew.behind) as i128 > MAX_SKEW {
        return None;
    }
    Some(skew)
}

/// How a loop body touches one array.
#[derive(Default)]
struct Rows {
    /// The dimension every access indexes with `var + c` (None: some
    /// access has no such dimension, or they differ).
    dim: Option<usize>,
    /// `(c, is_store)` of each access.
    accesses: Vec<(i128, bool)>,
}

/// The accesses of `l`'s body per array, as rows `var + c` of its counter.
fn rows(l: &ForLoop) -> BTreeMap<VarId, Rows> {
    let lowest = match l.lo.kind {
        ExprKind::Int(lo) => Some(lo as i128),
        _ => None,
    };
    let mut out: BTreeMap<VarId, Rows> = BTreeMap::new();
    for_each_access(&l.body, &mut |array, indices, store| {
        let at = counter_dim(indices, l.var, lowest);
        let r = out.entry(array).or_default();
        // one dimension for all the array's accesses, or none
        let d = at.map(|(d, _)| d);
        r.dim = if r.accesses.is_empty() || r.dim == d {
            d
        } else {
            None
        };
        r.accesses.push((at.map_or(0, |(_, c)| c), store));
    });
    out
}

/// The fused loops (see the module documentation).
fn fuse(l1: ForLoop, l2: ForLoop, skew: Skew, f: &mut Function, span: Span) -> Vec<Stmt> {
    let ty = l1.lo.ty.clone();
    let int = |v: i64| Expr::new(ExprKind::Int(v), ty.clone(), span);
    let bin = |op: BinOp, a: Expr, b: Expr| Expr::binary(op, a, b, ty.clone(), span);
    let cmp =
        |op: BinOp, a: Expr, b: Expr| Expr::binary(op, a, b, Type::Scalar(ElemTy::Bool), span);
    let var = |v: VarId| Expr::var(v, ty.clone(), span);
    let body2_at = |j: Expr| {
        let mut b = l2.body.clone();
        subst_block_expr(&mut b, l2.var, &j);
        b
    };
    if skew.ahead == 0 && skew.behind == 0 {
        // iteration j of the second loop needs only iteration j of the
        // first: one loop
        let mut body = l1.body.clone();
        body.extend(body2_at(var(l1.var)));
        let fused = ForLoop { body, ..l1 };
        return vec![Stmt::new(StmtKind::For(Box::new(fused)), span)];
    }
    let mut out = vec![];
    // before the loops: the thread count, the start and the trip count
    let mut host_local = |name: &str, value: Expr, out: &mut Vec<Stmt>| -> Expr {
        if let ExprKind::Int(_) = value.kind {
            return value;
        }
        let v = new_var(f, name, ty.clone(), VarKind::Local, span);
        out.push(assign_var(v, value, span));
        var(v)
    };
    let threads = host_local(
        "threads",
        Expr::new(ExprKind::CpuThreads, ty.clone(), span),
        &mut out,
    );
    let lo = host_local("lo", l1.lo.clone(), &mut out);
    let n = match (&l1.lo.kind, &l1.hi.kind) {
        (ExprKind::Int(lo), ExprKind::Int(hi)) => int((hi - lo).max(0)),
        _ => {
            let n = bin(BinOp::Sub, l1.hi.clone(), lo.clone());
            host_local("trip", bin(BinOp::Max, n, int(0)), &mut out)
        }
    };
    // a chunk loop: `for w in range(threads)` whose body first sets the
    // chunk's `[start, end)`
    let chunk_loop = |l: &ForLoop, f: &mut Function, inner: &dyn Fn(Expr, Expr) -> Vec<Stmt>| {
        let w = new_var(f, "chunk", ty.clone(), VarKind::LoopIndex, span);
        let start = new_var(f, "start", ty.clone(), VarKind::Local, span);
        let end = new_var(f, "end", ty.clone(), VarKind::Local, span);
        let bound = |k: Expr| {
            let share = bin(
                BinOp::FloorDiv,
                bin(BinOp::Mul, n.clone(), k),
                threads.clone(),
            );
            bin(BinOp::Add, lo.clone(), share)
        };
        let mut body = vec![
            assign_var(start, bound(var(w)), span),
            assign_var(end, bound(bin(BinOp::Add, var(w), int(1))), span),
        ];
        body.extend(inner(var(start), var(end)));
        let outer = ForLoop {
            var: w,
            lo: int(0),
            hi: threads.clone(),
            body,
            ..l.clone()
        };
        Stmt::new(StmtKind::For(Box::new(outer)), span)
    };
    let window = skew.ahead + skew.behind;
    let when = |cond: Expr, then_body: Block| {
        Stmt::new(
            StmtKind::If {
                cond,
                then_body,
                else_body: vec![],
            },
            span,
        )
    };
    // iteration `i` of the first loop, then the second's iteration whose
    // window is done, if any
    let single = |start: &Expr| {
        let lagged = bin(BinOp::Sub, var(l1.var), int(skew.ahead));
        let ready = cmp(
            BinOp::Ge,
            var(l1.var),
            bin(BinOp::Add, start.clone(), int(window)),
        );
        let mut body = l1.body.clone();
        body.push(when(ready, body2_at(lagged)));
        body
    };
    // Two rows at a time when the rows of a pair read each other's
    // neighbours (`lanes::jammed_pair`): iterations `i` and `i + 1` of the
    // first loop, then iterations `i - DP` and `i + 1 - DP` of the second
    // (or the last alone, at the start of the chunk). The second's
    // iteration `i - DP` moves after the first's `i + 1`, which it does
    // not touch (it only meets the first's iterations up to `i`).
    let pair1 = jammed_pair(&l1.body, l1.var, f);
    let pair2 = jammed_pair(&l2.body, l2.var, f);
    let pairs = (pair1.is_some() || pair2.is_some())
        .then(|| new_var(f, "pairs", ty.clone(), VarKind::Local, span));
    let twice = |body: &Block, v: VarId, at: Expr| {
        let mut b = body.clone();
        subst_block_expr(&mut b, v, &at);
        let mut next = body.clone();
        subst_block_expr(&mut next, v, &bin(BinOp::Add, at, int(1)));
        b.extend(next);
        b
    };
    let first = |start: Expr, end: Expr| -> Vec<Stmt> {
        let Some(pairs) = pairs else {
            let inner = ForLoop::sequential(l1.var, start.clone(), end, single(&start));
            return vec![Stmt::new(StmtKind::For(Box::new(inner)), span)];
        };
        let i = var(l1.var);
        let lagged = bin(BinOp::Sub, i.clone(), int(skew.ahead));
        let mut body = match &pair1 {
            Some(b) => b.clone(),
            None => twice(&l1.body, l1.var, i.clone()),
        };
        let both = match &pair2 {
            Some(b) => {
                let mut b = b.clone();
                subst_block_expr(&mut b, l2.var, &lagged);
                b
            }
            None => twice(&l2.body, l2.var, lagged.clone()),
        };
        let ready_at = |k: i64| {
            let row = match k {
                0 => i.clone(),
                _ => bin(BinOp::Add, i.clone(), int(k)),
            };
            cmp(BinOp::Ge, row, bin(BinOp::Add, start.clone(), int(window)))
        };
        body.push(Stmt::new(
            StmtKind::If {
                cond: ready_at(0),
                then_body: both,
                else_body: vec![when(
                    ready_at(1),
                    body2_at(bin(BinOp::Add, lagged.clone(), int(1))),
                )],
            },
            span,
        ));
        // the pairs end at `start + ((end - start) & -2)`; the row left,
        // if any, runs alone
        let whole = bin(
            BinOp::BitAnd,
            bin(BinOp::Sub, end.clone(), start.clone()),
            int(-2),
        );
        let paired = ForLoop {
            step: 2,
            ..ForLoop::sequential(l1.var, start.clone(), var(pairs), body)
        };
        let rest = ForLoop::sequential(l1.var, var(pairs), end, single(&start));
        vec![
            assign_var(pairs, bin(BinOp::Add, start.clone(), whole), span),
            Stmt::new(StmtKind::For(Box::new(paired)), span),
            Stmt::new(StmtKind::For(Box::new(rest)), span),
        ]
    };
    // the second loop's iterations at the edges of each chunk
    let second = |start: Expr, end: Expr| {
        let j = var(l2.var);
        let head = cmp(
            BinOp::Lt,
            j.clone(),
            bin(BinOp::Add, start.clone(), int(skew.behind)),
        );
        let tail = cmp(BinOp::Ge, j, bin(BinOp::Sub, end.clone(), int(skew.ahead)));
        let edge = match (skew.behind, skew.ahead) {
            (0, _) => tail,
            (_, 0) => head,
            _ => cmp(BinOp::Or, head, tail),
        };
        let body = vec![when(edge, l2.body.clone())];
        let inner = ForLoop::sequential(l2.var, start, end, body);
        vec![Stmt::new(StmtKind::For(Box::new(inner)), span)]
    };
    out.push(chunk_loop(&l1, f, &first));
    out.push(chunk_loop(&l2, f, &second));
    out
}
