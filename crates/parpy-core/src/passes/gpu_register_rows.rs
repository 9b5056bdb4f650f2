//! GPU backends only, after `gpu_grid`: keeps a thread's own elements of an
//! array in registers across the sibling loops that walk the same elements,
//! so that the array is read from memory once and written once.
//!
//! A row-wise program such as softmax walks one row four times (max, exp,
//! sum, divide). After `gpu_grid` each walk is a loop over the thread's
//! share of the row, `for j in thread.x..HI step T` with `T` the block's
//! thread count, so thread `t` touches elements `t + k*T` for `k` in
//! `0..K`, `K = ceil(HI / T)`, in every walk.
//!
//! - A group is the loops of one block with that form and the same `HI`
//!   (`K <= Options::max_unroll_count`, since each loop of the group is
//!   unrolled completely; bodies without barriers or warp reductions).
//! - An array `A` is cached for a group when every access to `A` in the
//!   kernel is inside the group's loops with the index `[P.., j]`, where
//!   `j` is that loop's variable and the prefix `P` is the same everywhere
//!   and uses only constants and the variables of loops around the group
//!   (so `[P.., j]` names the same element in every loop for the same `k`),
//!   and at least two of the group's loops touch `A`.
//! - Each loop of the group becomes `for k in 0..K unroll { j = thread.x +
//!   k*T; if j < HI { body } }` (no `if` when `T` divides `HI`) and
//!   `A[P.., j]` becomes `A_reg[k]`. `A_reg` is loaded before the first loop
//!   that touches `A`, unless that loop's first use of `A` is a store that
//!   every iteration makes, and stored back after the last loop that
//!   touches `A` when some loop writes it.
//! - Barriers stay: they also order shared memory and the other arrays.
//!
//! Like the rest of the GPU lowering, this relies on parallel iterations not
//! sharing elements (loops with `parpy.atomic.*` updates are left alone)
//! and on array arguments not overlapping.

use std::collections::HashMap;

use crate::diag::Span;
use crate::ir::visit::same_exprs;
use crate::ir::{
    Axis, BinOp, Block, Expr, ExprKind, ForLoop, Function, GpuIndex, Place, Program, Stmt,
    StmtKind, Type, VarId, VarKind,
};
use crate::passes::util::{
    assign_var, bin, new_var, stmt_exprs, stmt_exprs_mut, sub_blocks, sub_blocks_mut,
};

/// The most cached elements per thread for one group, all arrays together.
const MAX_REGS: i64 = 48;

/// `max_unroll`: the most iterations a loop parpy unrolls completely may
/// have (`Options::max_unroll_count`), so also the most elements of one
/// array a thread keeps in registers.
pub fn run(p: &mut Program, max_unroll: i64) {
    for k in &mut p.kernels {
        let [threads, ty, tz] = k.launch.threads;
        if threads < 1 || ty != 1 || tz != 1 {
            continue;
        }
        let mut counts = HashMap::new();
        count_uses(&k.func.body, &mut counts);
        let mut body = std::mem::take(&mut k.func.body);
        let mut cx = Cx {
            f: &mut k.func,
            threads,
            max_unroll,
            counts: &counts,
            enclosing: vec![],
        };
        cx.block(&mut body);
        k.func.body = body;
    }
}

struct Cx<'a> {
    f: &'a mut Function,
    threads: i64,
    /// The longest loop unrolled completely (`K` of a group).
    max_unroll: i64,
    /// Uses of every array variable in the kernel (element accesses and
    /// whole-array uses).
    counts: &'a HashMap<VarId, usize>,
    /// Variables of the loops around the block being rewritten.
    enclosing: Vec<VarId>,
}

/// One array's accesses in a group.
struct Cached {
    array: VarId,
    elem_ty: Type,
    /// The index prefix `P` (from the first access).
    prefix: Vec<Expr>,
    reg: VarId,
    /// Position (in the block) of the first and last loop touching it.
    first: usize,
    last: usize,
    written: bool,
    preload: bool,
}

impl Cx<'_> {
    fn block(&mut self, b: &mut Block) {
        for s in b.iter_mut() {
            let var = match &s.kind {
                StmtKind::For(l) => Some(l.var),
                _ => None,
            };
            self.enclosing.extend(var);
            for sub in sub_blocks_mut(s) {
                self.block(sub);
            }
            if var.is_some() {
                self.enclosing.pop();
            }
        }
        let mut groups: Vec<(i64, Vec<usize>)> = vec![];
        for (i, s) in b.iter().enumerate() {
            if let Some(hi) = self.share_loop(s) {
                match groups.iter_mut().find(|(h, _)| *h == hi) {
                    Some((_, v)) => v.push(i),
                    None => groups.push((hi, vec![i])),
                }
            }
        }
        for (hi, loops) in groups {
            if loops.len() >= 2 {
                self.group(b, hi, &loops);
            }
        }
    }

    /// `Some(HI)` when `s` is `for j in thread.x..HI step T` with a body
    /// that can run under a per-element condition.
    fn share_loop(&self, s: &Stmt) -> Option<i64> {
        let StmtKind::For(l) = &s.kind else {
            return None;
        };
        let is_tid = matches!(
            strip(&l.lo).kind,
            ExprKind::GpuIndex(GpuIndex::Thread(Axis::X))
        );
        let ExprKind::Int(hi) = strip(&l.hi).kind else {
            return None;
        };
        let k = (hi + self.threads - 1) / self.threads;
        (is_tid
            && l.step == self.threads
            && l.par.is_none()
            && l.reduction.is_none()
            && (1..=self.max_unroll).contains(&k)
            && !has_sync(&l.body)
            && !has_atomic(&l.body))
        .then_some(hi)
    }

    fn group(&mut self, b: &mut Block, hi: i64, loops: &[usize]) {
        let k_count = (hi + self.threads - 1) / self.threads;
        // which arrays qualify
        let mut found: Vec<(VarId, Vec<Access>)> = vec![];
        for &i in loops {
            let StmtKind::For(l) = &b[i].kind else {
                continue;
            };
            let mut acc = vec![];
            collect_accesses(&l.body, l.var, &mut acc);
            for a in acc {
                match found.iter_mut().find(|(v, _)| *v == a.array) {
                    Some((_, v)) => v.push(Access { at: i, ..a }),
                    None => found.push((a.array, vec![Access { at: i, ..a }])),
                }
            }
        }
        let mut cached: Vec<Cached> = vec![];
        let mut regs = 0;
        for (array, acc) in found {
            let var = self.f.var(array);
            let Type::Array { elem, .. } = &var.ty else {
                continue;
            };
            let elem = *elem;
            let elem_ty = Type::Scalar(elem);
            let first = &acc[0];
            let ok = var.kind == VarKind::Param
                && acc.len() == self.counts.get(&array).copied().unwrap_or(0)
                && acc
                    .iter()
                    .all(|a| a.exact && same_exprs(&a.prefix, &first.prefix))
                && first.prefix.iter().all(|e| self.invariant(e))
                && acc.iter().any(|a| a.at != first.at)
                && regs + k_count <= MAX_REGS;
            if !ok {
                continue;
            }
            regs += k_count;
            let name = format!("{}_reg", var.name);
            let span = var.span;
            let reg = new_var(
                self.f,
                &name,
                Type::Array {
                    elem,
                    shape: vec![k_count],
                },
                VarKind::Register,
                span,
            );
            let StmtKind::For(l) = &b[first.at].kind else {
                continue;
            };
            cached.push(Cached {
                array,
                elem_ty,
                prefix: first.prefix.clone(),
                reg,
                first: first.at,
                last: acc.iter().map(|a| a.at).max().unwrap_or(first.at),
                written: acc.iter().any(|a| a.write),
                preload: !starts_with_store(&l.body, array),
            });
        }
        if cached.is_empty() {
            return;
        }
        // counters and positions get the type of the loops' variables (32
        // bits where the backend uses 32-bit integers), `lo` their start
        let StmtKind::For(l0) = &b[loops[0]].kind else {
            return;
        };
        let (ity, lo0) = (self.f.var(l0.var).ty.clone(), l0.lo.clone());
        // rewrite the loops, then add the loads and stores around them
        for &i in loops {
            let StmtKind::For(l) = &mut b[i].kind else {
                continue;
            };
            let touches: Vec<&Cached> = cached
                .iter()
                .filter(|c| (c.first..=c.last).contains(&i))
                .collect();
            if touches.is_empty() {
                continue;
            }
            let span = l.lo.span;
            let k = self.counter(&ity, span);
            let j = l.var;
            self.f.vars[j.0 as usize].kind = VarKind::Local;
            let mut body = std::mem::take(&mut l.body);
            let kv = Expr::var(k, ity.clone(), span);
            rewrite_block(&mut body, &kv, &touches);
            let lo = l.lo.clone();
            let share = self.share_body(j, lo, k, hi, body, span);
            b[i] = Stmt::new(
                StmtKind::For(Box::new(counted(k, &ity, k_count, share, span))),
                span,
            );
        }
        let mut before: HashMap<usize, Vec<Stmt>> = HashMap::new();
        let mut after: HashMap<usize, Vec<Stmt>> = HashMap::new();
        for c in &cached {
            let span = b[c.first].span;
            let lo = lo0.clone();
            if c.preload {
                let (k, j) = (self.counter(&ity, span), self.position(&ity, span));
                let load = Stmt::new(
                    StmtKind::Assign {
                        dst: Place::Index {
                            array: c.reg,
                            indices: vec![Expr::var(k, ity.clone(), span)],
                        },
                        value: Expr::new(
                            ExprKind::Index {
                                array: c.array,
                                indices: full_index(&c.prefix, j, &ity, span),
                            },
                            c.elem_ty.clone(),
                            span,
                        ),
                    },
                    span,
                );
                let share = self.share_body(j, lo.clone(), k, hi, vec![load], span);
                before.entry(c.first).or_default().push(Stmt::new(
                    StmtKind::For(Box::new(counted(k, &ity, k_count, share, span))),
                    span,
                ));
            }
            if c.written {
                let (k, j) = (self.counter(&ity, span), self.position(&ity, span));
                let store = Stmt::new(
                    StmtKind::Assign {
                        dst: Place::Index {
                            array: c.array,
                            indices: full_index(&c.prefix, j, &ity, span),
                        },
                        value: Expr::new(
                            ExprKind::Index {
                                array: c.reg,
                                indices: vec![Expr::var(k, ity.clone(), span)],
                            },
                            c.elem_ty.clone(),
                            span,
                        ),
                    },
                    span,
                );
                let share = self.share_body(j, lo, k, hi, vec![store], span);
                after.entry(c.last).or_default().push(Stmt::new(
                    StmtKind::For(Box::new(counted(k, &ity, k_count, share, span))),
                    span,
                ));
            }
        }
        let old = std::mem::take(b);
        for (i, s) in old.into_iter().enumerate() {
            b.extend(before.remove(&i).unwrap_or_default());
            b.push(s);
            b.extend(after.remove(&i).unwrap_or_default());
        }
    }

    /// `j = lo + k*T; [if j < HI] { body }`.
    fn share_body(&self, j: VarId, lo: Expr, k: VarId, hi: i64, body: Block, span: Span) -> Block {
        let jty = self.f.var(j).ty.clone();
        let kty = self.f.var(k).ty.clone();
        let step = Expr::new(ExprKind::Int(self.threads), kty.clone(), span);
        let pos = bin(
            BinOp::Add,
            lo,
            bin(BinOp::Mul, Expr::var(k, kty, span), step),
        );
        let pos = if pos.ty == jty {
            pos
        } else {
            Expr::new(ExprKind::Convert { arg: Box::new(pos) }, jty.clone(), span)
        };
        let k_count = (hi + self.threads - 1) / self.threads;
        let guard = k_count * self.threads != hi;
        let mut used = std::collections::BTreeSet::new();
        let mut assigned = std::collections::BTreeSet::new();
        for s in &body {
            crate::ir::visit::stmt_uses(s, &mut used, &mut assigned);
        }
        let mut out = vec![];
        if guard || used.contains(&j) {
            out.push(assign_var(j, pos, span));
        }
        if !guard {
            out.extend(body);
        } else {
            let hi_e = Expr::new(ExprKind::Int(hi), jty.clone(), span);
            out.push(Stmt::new(
                StmtKind::If {
                    cond: bin(BinOp::Lt, Expr::var(j, jty, span), hi_e),
                    then_body: body,
                    else_body: vec![],
                },
                span,
            ));
        }
        out
    }

    fn counter(&mut self, ty: &Type, span: Span) -> VarId {
        new_var(self.f, "k", ty.clone(), VarKind::LoopIndex, span)
    }

    fn position(&mut self, ty: &Type, span: Span) -> VarId {
        new_var(self.f, "j", ty.clone(), VarKind::Local, span)
    }

    /// `e` names the same value everywhere in the group: constants and the
    /// variables of enclosing loops only.
    fn invariant(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Bool(_) => true,
            ExprKind::Var(v) => self.enclosing.contains(v),
            ExprKind::Unary { arg, .. } | ExprKind::Convert { arg } => self.invariant(arg),
            ExprKind::Binary { lhs, rhs, .. } => self.invariant(lhs) && self.invariant(rhs),
            _ => false,
        }
    }
}

/// `for k in 0..K unroll { body }`.
fn counted(k: VarId, ty: &Type, count: i64, body: Block, span: Span) -> ForLoop {
    let lo = Expr::new(ExprKind::Int(0), ty.clone(), span);
    let hi = Expr::new(ExprKind::Int(count), ty.clone(), span);
    ForLoop {
        unroll: true,
        ..ForLoop::sequential(k, lo, hi, body)
    }
}

fn full_index(prefix: &[Expr], j: VarId, ty: &Type, span: Span) -> Vec<Expr> {
    let mut v = prefix.to_vec();
    v.push(Expr::var(j, ty.clone(), span));
    v
}

fn strip(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Convert { arg } => strip(arg),
        _ => e,
    }
}

/// One element access of an array inside a group loop.
#[derive(Clone)]
struct Access {
    array: VarId,
    /// The last index is exactly the loop's variable.
    exact: bool,
    prefix: Vec<Expr>,
    write: bool,
    /// Position of the loop in the block.
    at: usize,
}

fn collect_accesses(b: &[Stmt], j: VarId, out: &mut Vec<Access>) {
    for s in b {
        if let StmtKind::Assign {
            dst: Place::Index { array, indices },
            ..
        } = &s.kind
        {
            out.push(access(*array, indices, j, true));
        }
        stmt_exprs(s)
            .into_iter()
            .for_each(|e| expr_accesses(e, j, out));
        for sub in sub_blocks(s) {
            collect_accesses(sub, j, out);
        }
    }
}

fn access(array: VarId, indices: &[Expr], j: VarId, write: bool) -> Access {
    let (last, prefix) = match indices.split_last() {
        Some((l, p)) => (Some(l), p.to_vec()),
        None => (None, vec![]),
    };
    Access {
        array,
        exact: matches!(last.map(|l| &l.kind), Some(ExprKind::Var(v)) if *v == j),
        prefix,
        write,
        at: 0,
    }
}

fn expr_accesses(e: &Expr, j: VarId, out: &mut Vec<Access>) {
    match &e.kind {
        ExprKind::Index { array, indices } => {
            out.push(access(*array, indices, j, false));
            indices.iter().for_each(|i| expr_accesses(i, j, out));
        }
        ExprKind::External { args, .. } => {
            for a in crate::ir::call_arg_arrays(args) {
                out.push(Access {
                    array: a,
                    exact: false,
                    prefix: vec![],
                    write: true,
                    at: 0,
                });
            }
            e.children().for_each(|c| expr_accesses(c, j, out));
        }
        // a whole array used as a value (a helper's argument): never exact
        ExprKind::Var(v) if e.ty.is_array() => out.push(Access {
            array: *v,
            exact: false,
            prefix: vec![],
            write: false,
            at: 0,
        }),
        _ => e.children().for_each(|c| expr_accesses(c, j, out)),
    }
}

/// Uses of array variables: element reads and writes, whole-array uses.
fn count_uses(b: &Block, counts: &mut HashMap<VarId, usize>) {
    let mut acc = vec![];
    // the loop variable does not matter for counting
    collect_accesses(b, VarId(u32::MAX), &mut acc);
    for a in acc {
        *counts.entry(a.array).or_default() += 1;
    }
}

/// A barrier or warp reduction anywhere in `b` (such a body cannot run
/// under a per-thread condition).
fn has_sync(b: &Block) -> bool {
    crate::passes::gpu_grid::contains_warp_reduce(b)
        || b.iter()
            .any(|s| matches!(s.kind, StmtKind::Barrier) || sub_blocks(s).into_iter().any(has_sync))
}

/// An atomic update anywhere in `b`: its element is shared with other
/// threads, so nothing of such a loop stays in registers.
fn has_atomic(b: &Block) -> bool {
    let mut found = false;
    crate::ir::visit::walk_stmts(b, &mut |s| {
        found |= matches!(&s.kind, StmtKind::Assign { value, .. } if crate::ir::atomic_of(value).is_some());
    });
    found
}

/// The first statement of `body` that uses `array` is a store to one of its
/// elements whose value does not read `array` (so every iteration writes
/// before it reads, and nothing needs loading).
fn starts_with_store(body: &Block, array: VarId) -> bool {
    for s in body {
        let mut acc = vec![];
        collect_accesses(std::slice::from_ref(s), VarId(u32::MAX), &mut acc);
        let uses: Vec<&Access> = acc.iter().filter(|a| a.array == array).collect();
        if uses.is_empty() {
            // after `if c: continue` the store is not made every iteration
            if !crate::ir::visit::loop_exits(std::slice::from_ref(s)).is_empty() {
                return false;
            }
            continue;
        }
        let is_store = matches!(&s.kind,
            StmtKind::Assign { dst: Place::Index { array: a, .. }, .. } if *a == array);
        return is_store && uses.iter().all(|a| a.write);
    }
    false
}

/// Replaces `A[P.., j]` by `A_reg[k]` for the cached arrays.
fn rewrite_block(b: &mut Block, kv: &Expr, cached: &[&Cached]) {
    for s in b.iter_mut() {
        if let StmtKind::Assign {
            dst: Place::Index { array, indices },
            ..
        } = &mut s.kind
        {
            if let Some(c) = cached.iter().find(|c| c.array == *array) {
                *array = c.reg;
                *indices = vec![kv.clone()];
            }
        }
        for e in stmt_exprs_mut(s) {
            rewrite_expr(e, kv, cached);
        }
        for sub in sub_blocks_mut(s) {
            rewrite_block(sub, kv, cached);
        }
    }
}

fn rewrite_expr(e: &mut Expr, kv: &Expr, cached: &[&Cached]) {
    if let ExprKind::Index { array, indices } = &mut e.kind {
        if let Some(c) = cached.iter().find(|c| c.array == *array) {
            *array = c.reg;
            *indices = vec![kv.clone()];
            return;
        }
    }
    for c in e.children_mut() {
        rewrite_expr(c, kv, cached);
    }
}
