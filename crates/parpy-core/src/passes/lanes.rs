//! Iterations of a loop run side by side (unroll-and-jam), for the Cpu
//! passes that do it: `cpu_unroll_jam` (lanes of a sequential loop around
//! an inner loop with a loop-carried scalar), `cpu_skew_fuse` and
//! `cpu_jam_rows` (pairs of rows of a stencil sweep, which read each
//! other's neighbours).
//!
//! A body that lanes jam over is straight statements (assignments and
//! `if`s) and inner loops over straight statements ([`jammable`]). Lane
//! `k` is the iteration `var + k`: each straight segment is repeated once
//! per lane, each inner loop runs once with its body repeated once per
//! lane ([`jam_lanes`]); the scalars the body assigns get a copy per lane.
//! The caller proves the iterations independent: each lane then does its
//! iteration's operations in order, on the same values, so the results
//! are bit for bit the same.
//!
//! [`share_reads`] then loads once what several lanes read in one step of
//! an inner loop (the rows `i` and `i + 1` of a stencil both read
//! `A[i, j]` and `A[i + 1, j]`): the C compiler cannot, since the stores
//! between the reads might reach the same memory as far as it knows (a
//! 700^2 Jacobi step: 10 loads for two rows instead of 8, 15% faster).

use std::collections::BTreeSet;

use crate::ir::affine::affine;
use crate::ir::visit::{
    accesses_explicit, expr_uses, for_each_access, live_after_loop, reads_before_def,
    stmt_exprs_mut, sub_blocks_mut,
};
use crate::ir::{BinOp, Block, Expr, ExprKind, ForLoop, Function, Place, Stmt, StmtKind, UnOp};
use crate::ir::{VarId, VarKind};
use crate::passes::util::{assign_var, new_var, subst_block, subst_block_expr};

/// A sequential loop without control flow out of it, not parallel, not a
/// reduction, counted by one.
pub fn plain(l: &ForLoop) -> bool {
    l.par.is_none() && l.reduction.is_none() && !l.unroll && l.step == 1
}

/// Assignments and `if`s only (the body of an inner loop, a segment).
pub fn straight(b: &[Stmt]) -> bool {
    b.iter().all(|s| match &s.kind {
        StmtKind::Assign { .. } => true,
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => straight(then_body) && straight(else_body),
        _ => false,
    })
}

/// The scalars a body assigns, nested blocks included (each lane gets its
/// own copy of them).
pub fn assigned_scalars(b: &[Stmt]) -> BTreeSet<VarId> {
    let mut out = BTreeSet::new();
    crate::ir::visit::walk_stmts(b, &mut |s| {
        if let StmtKind::Assign {
            dst: Place::Var(v), ..
        } = &s.kind
        {
            out.insert(*v);
        }
    });
    out
}

/// A scalar that loop `l`'s body assigns and that is private to each of
/// its iterations: a local scalar the body assigns before it reads it,
/// whose value after the loop nothing reads (each lane may have its own).
pub fn private_scalar(v: VarId, l: &ForLoop, f: &Function) -> bool {
    let var = f.var(v);
    var.kind == VarKind::Local
        && !var.ty.is_array()
        && !reads_before_def(&l.body, v)
        && !live_after_loop(&f.body, l, v)
}

/// The inner loops of a body, when it has the shape lanes jam over:
/// straight segments and plain inner loops (or, with `parallel_ok`,
/// parallel ones that are not reductions) over straight bodies whose
/// bounds read neither `var` nor a scalar the body assigns (`privates`),
/// and whose counters are not such scalars. None otherwise.
pub fn inner_loops<'a>(
    body: &'a [Stmt],
    var: VarId,
    privates: &BTreeSet<VarId>,
    parallel_ok: bool,
) -> Option<Vec<&'a ForLoop>> {
    let mut loops = vec![];
    for s in body {
        match &s.kind {
            StmtKind::For(inner) => {
                let mut bounds = BTreeSet::new();
                expr_uses(&inner.lo, &mut bounds);
                expr_uses(&inner.hi, &mut bounds);
                // sequential, or (`parallel_ok`) an inner parallel level:
                // the columns of a 2-D slice statement with two labels
                let counted = inner.reduction.is_none()
                    && !inner.wants_reduction
                    && !inner.unroll
                    && inner.step == 1;
                if !counted
                    || (inner.par.is_some() && !parallel_ok)
                    || !straight(&inner.body)
                    || bounds.contains(&var)
                    || bounds.iter().any(|v| privates.contains(v))
                    || privates.contains(&inner.var)
                {
                    return None;
                }
                loops.push(&**inner);
            }
            _ if straight(std::slice::from_ref(s)) => {}
            _ => return None,
        }
    }
    Some(loops)
}

/// Fresh copies of `privates` for lanes `1..lanes` (lane 0 keeps the
/// variables): `renames[k]` maps each to lane `k`'s copy.
pub fn lane_renames(
    f: &mut Function,
    privates: &[VarId],
    lanes: usize,
) -> Vec<Vec<(VarId, VarId)>> {
    let mut renames = vec![vec![]];
    for _ in 1..lanes {
        renames.push(
            privates
                .iter()
                .map(|&v| {
                    let var = f.var(v).clone();
                    (v, new_var(f, &var.name, var.ty, VarKind::Local, var.span))
                })
                .collect(),
        );
    }
    renames
}

/// The iterations `var + 0 .. var + lanes - 1` of `body` (of the shape
/// [`inner_loops`] accepts) side by side, lane `k` with the variables of
/// `renames[k]` (see the module documentation). `var` is the counter as an
/// expression of its type.
pub fn jam_lanes(body: &[Stmt], var: &Expr, renames: &[Vec<(VarId, VarId)>]) -> Block {
    let ExprKind::Var(counter) = var.kind else {
        unreachable!("lanes are jammed over a loop counter")
    };
    let lane = |b: &[Stmt], k: usize| -> Block {
        let mut b = b.to_vec();
        for &(from, to) in &renames[k] {
            subst_block(&mut b, from, to);
        }
        if k > 0 {
            let at = Expr::new(ExprKind::Int(k as i64), var.ty.clone(), var.span);
            let by = Expr::binary(BinOp::Add, var.clone(), at, var.ty.clone(), var.span);
            subst_block_expr(&mut b, counter, &by);
        }
        b
    };
    let all = |b: &[Stmt]| -> Block { (0..renames.len()).flat_map(|k| lane(b, k)).collect() };
    let mut out = vec![];
    let mut segment = vec![];
    for s in body {
        match &s.kind {
            StmtKind::For(inner) => {
                out.extend(all(&std::mem::take(&mut segment)));
                let mut jammed = (**inner).clone();
                jammed.body = all(&inner.body);
                out.push(Stmt::new(StmtKind::For(Box::new(jammed)), s.span));
            }
            _ => segment.push(s.clone()),
        }
    }
    out.extend(all(&segment));
    out
}

/// An index whose affine form is its value: counters, numbers, `+`, `-`
/// and `*` only (no conversion that may narrow, no wrap of a negative
/// index, no checked index: `ir::affine` looks through those).
fn linear(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(_) | ExprKind::Int(_) => true,
        ExprKind::Binary {
            op: BinOp::Add | BinOp::Sub | BinOp::Mul,
            lhs,
            rhs,
        } => linear(lhs) && linear(rhs),
        ExprKind::Unary { op: UnOp::Neg, arg } => linear(arg),
        _ => false,
    }
}

/// Two index lists that always name the same element.
fn same_element(a: &[Expr], b: &[Expr]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            let none = |_: VarId| None;
            affine(x, &none).minus(&affine(y, &none)).as_const() == Some(0)
        })
}

/// A read `array[indices]` that a loop body evaluates every time it runs
/// (not under an `if`, a branch of a select or the right operand of
/// `and` / `or`), of an array the body does not store into, at linear
/// indices that read no scalar the body assigns.
struct Read<'a> {
    array: VarId,
    indices: &'a [Expr],
    expr: &'a Expr,
}

/// The reads of [`Read`] in the straight statements at the top of `body`.
fn unconditional_reads(body: &[Stmt]) -> Vec<Read<'_>> {
    let mut stored = BTreeSet::new();
    for_each_access(body, &mut |array, _, store| {
        if store {
            stored.insert(array);
        }
    });
    let assigned = assigned_scalars(body);
    fn walk<'a>(e: &'a Expr, out: &mut Vec<Read<'a>>) {
        match &e.kind {
            ExprKind::Index { array, indices } => {
                out.push(Read {
                    array: *array,
                    indices,
                    expr: e,
                });
                indices.iter().for_each(|i| walk(i, out));
            }
            ExprKind::Select { cond, .. } => walk(cond, out),
            ExprKind::Binary {
                op: BinOp::And | BinOp::Or,
                lhs,
                ..
            } => walk(lhs, out),
            _ => e.children().for_each(|c| walk(c, out)),
        }
    }
    let mut found = vec![];
    for s in body {
        if let StmtKind::Assign { value, .. } = &s.kind {
            walk(value, &mut found);
        }
    }
    found
        .into_iter()
        .filter(|r| {
            let mut uses = BTreeSet::new();
            r.indices.iter().for_each(|i| expr_uses(i, &mut uses));
            !stored.contains(&r.array)
                && r.indices.iter().all(linear)
                && uses.is_disjoint(&assigned)
        })
        .collect()
}

/// Whether two lanes of `body` (iterations `var` and `var + 1`) would read
/// one element in the same step of one of its inner loops, which
/// [`share_reads`] then loads once.
pub fn lanes_share_reads(inner: &[&ForLoop], var: &Expr) -> bool {
    let ExprKind::Var(counter) = var.kind else {
        return false;
    };
    let one = Expr::new(ExprKind::Int(1), var.ty.clone(), var.span);
    let next = Expr::binary(BinOp::Add, var.clone(), one, var.ty.clone(), var.span);
    inner.iter().any(|l| {
        let reads = unconditional_reads(&l.body);
        reads.iter().any(|a| {
            reads.iter().any(|b| {
                let mut moved = b.indices.to_vec();
                moved
                    .iter_mut()
                    .for_each(|e| crate::passes::util::replace_var(e, counter, &next));
                a.array == b.array && same_element(a.indices, &moved)
            })
        })
    })
}

/// In each inner loop of `b` (its top-level loops), an element that the
/// loop's body reads more than once per step, unconditionally, from an
/// array the body does not store into ([`Read`]), is read once into a new
/// local at the top of the body, and every read of it reads the local.
/// Arguments never overlap (see the invariants), so no store of the body
/// reaches it.
pub fn share_reads(b: &mut Block, f: &mut Function) {
    for s in b.iter_mut() {
        let StmtKind::For(l) = &mut s.kind else {
            continue;
        };
        // the elements read twice or more, in order of their first read
        let mut shared: Vec<(VarId, Vec<Expr>, Expr)> = vec![];
        {
            let reads = unconditional_reads(&l.body);
            let mut counted: Vec<(usize, usize)> = vec![];
            for (k, r) in reads.iter().enumerate() {
                match counted.iter_mut().find(|(first, _)| {
                    let a = &reads[*first];
                    a.array == r.array && same_element(a.indices, r.indices)
                }) {
                    Some(c) => c.1 += 1,
                    None => counted.push((k, 1)),
                }
            }
            for (first, n) in counted {
                let r = &reads[first];
                if n >= 2 {
                    shared.push((r.array, r.indices.to_vec(), r.expr.clone()));
                }
            }
        }
        if shared.is_empty() {
            continue;
        }
        let mut loads = vec![];
        for (array, indices, read) in shared {
            let span = read.span;
            let name = format!("{}_at", f.var(array).name);
            let v = new_var(f, &name, read.ty.clone(), VarKind::Local, span);
            let local = Expr::var(v, read.ty.clone(), span);
            replace_reads(&mut l.body, array, &indices, &local);
            loads.push(assign_var(v, read, span));
        }
        loads.append(&mut l.body);
        l.body = loads;
    }
}

/// Every read of `array` at the element `indices` names, in `b`, replaced
/// by `by`.
fn replace_reads(b: &mut Block, array: VarId, indices: &[Expr], by: &Expr) {
    fn go(e: &mut Expr, array: VarId, indices: &[Expr], by: &Expr) {
        if let ExprKind::Index {
            array: a,
            indices: ix,
        } = &e.kind
        {
            if *a == array && ix.iter().all(linear) && same_element(ix, indices) {
                *e = by.clone();
                return;
            }
        }
        e.children_mut()
            .into_iter()
            .for_each(|c| go(c, array, indices, by));
    }
    for s in b {
        for e in stmt_exprs_mut(s) {
            go(e, array, indices, by);
        }
        for sub in sub_blocks_mut(s) {
            replace_reads(sub, array, indices, by);
        }
    }
}

/// Iterations `var` and `var + 1` of `body` jammed side by side, their
/// shared reads loaded once ([`share_reads`]), when `body` has the shape
/// lanes jam over and the two would read one element in a step of an
/// inner loop ([`lanes_share_reads`]); None otherwise. The caller proves
/// the iterations independent and the scalars `body` assigns private to
/// each.
pub fn jammed_pair(body: &[Stmt], var: VarId, f: &mut Function) -> Option<Block> {
    // every element the body touches is one it shows (no helper or
    // external function given an array, no atomic update)
    if !accesses_explicit(body) {
        return None;
    }
    // a local array is one per iteration: the lanes would share it
    let mut local_array = false;
    for_each_access(body, &mut |array, _, _| {
        local_array |= f.var(array).kind != VarKind::Param;
    });
    if local_array {
        return None;
    }
    let privates = assigned_scalars(body);
    let inner = inner_loops(body, var, &privates, true)?;
    let counter = Expr::var(var, f.var(var).ty.clone(), f.var(var).span);
    if !lanes_share_reads(&inner, &counter) {
        return None;
    }
    let privates: Vec<VarId> = privates.into_iter().collect();
    let renames = lane_renames(f, &privates, 2);
    let mut b = jam_lanes(body, &counter, &renames);
    share_reads(&mut b, f);
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::visit::walk_exprs;
    use crate::passes::testutil::*;
    use crate::types::ElemTy;

    /// The reads of `array` in a block.
    fn reads_of(b: &[Stmt], array: VarId) -> usize {
        let mut n = 0;
        walk_exprs(b, &mut |e| {
            n += matches!(e.kind, ExprKind::Index { array: a, .. } if a == array) as usize;
            true
        });
        n
    }

    /// `for j in range(10): B[i, j] = value(A, i, j)` inside a function
    /// with arrays `A`, `B` and counters `i`, `j`.
    fn row_body(
        value: &dyn Fn(&Function, VarId, VarId, VarId) -> Expr,
    ) -> (Function, Block, [VarId; 3]) {
        let mut b = FnBuilder::new("rows");
        let a = b.array("A", ElemTy::F64, &[12, 10]);
        let out = b.array("B", ElemTy::F64, &[12, 10]);
        let i = b.index_var("i");
        let j = b.index_var("j");
        let f = &b.f;
        let st = store(out, vec![var_e(f, i), var_e(f, j)], value(f, a, i, j));
        let body = vec![for_stmt(for_loop(j, 0, 10, &[], vec![st]))];
        (b.f, body, [a, i, j])
    }

    fn at(f: &Function, a: VarId, i: VarId, di: i64, j: VarId) -> Expr {
        let row = match di {
            0 => var_e(f, i),
            _ => bin(BinOp::Add, var_e(f, i), int(di)),
        };
        idx(f, a, vec![row, var_e(f, j)])
    }

    #[test]
    fn two_rows_load_the_element_both_read_once() {
        // B[i, j] = A[i, j] + A[i + 1, j]: rows i and i + 1 both read A[i + 1, j]
        let (mut f, body, [a, i, _]) =
            row_body(&|f, a, i, j| bin(BinOp::Add, at(f, a, i, 0, j), at(f, a, i, 1, j)));
        let jammed = jammed_pair(&body, i, &mut f).expect("the rows meet");
        let StmtKind::For(l) = &jammed[0].kind else {
            panic!("one inner loop")
        };
        // A[i, j], the shared A[i + 1, j] (loaded first), A[i + 2, j]
        assert_eq!(reads_of(&l.body, a), 3);
        assert!(matches!(
            &l.body[0].kind,
            StmtKind::Assign {
                dst: Place::Var(_),
                ..
            }
        ));
        assert_eq!(l.body.len(), 3);
    }

    #[test]
    fn rows_that_do_not_meet_are_not_paired() {
        // A[i - 1, j] and A[i + 1, j]: the next row reads A[i, j], A[i + 2, j]
        let (mut f, body, [_, i, _]) =
            row_body(&|f, a, i, j| bin(BinOp::Add, at(f, a, i, -1, j), at(f, a, i, 1, j)));
        assert!(jammed_pair(&body, i, &mut f).is_none());
    }

    #[test]
    fn a_read_under_a_branch_is_not_loaded_ahead() {
        // A[i + 1, j] if j > 0 else A[i, j]: whether it is read depends on j
        let (mut f, body, [_, i, _]) = row_body(&|f, a, i, j| {
            Expr::new(
                ExprKind::Select {
                    cond: Box::new(bin(BinOp::Gt, var_e(f, j), int(0))),
                    then: Box::new(at(f, a, i, 1, j)),
                    else_: Box::new(at(f, a, i, 0, j)),
                },
                crate::ir::Type::Scalar(ElemTy::F64),
                sp(),
            )
        });
        assert!(jammed_pair(&body, i, &mut f).is_none());
    }

    #[test]
    fn only_elements_of_arrays_the_loop_does_not_store_are_shared() {
        // for j: B[i, j] = A[i, j] * A[i, j]; then the same with A[i, j] = 0
        // after it, and with a wrapped index (not linear)
        for (stores_a, wrapped, shared) in [
            (false, false, true),
            (true, false, false),
            (false, true, false),
        ] {
            let (mut f, mut body, [a, i, j]) =
                row_body(&|f, a, i, j| bin(BinOp::Mul, at(f, a, i, 0, j), at(f, a, i, 0, j)));
            let StmtKind::For(l) = &mut body[0].kind else {
                unreachable!()
            };
            if stores_a {
                l.body.push(store(
                    a,
                    vec![var_e(&f, i), var_e(&f, j)],
                    float(0.0, ElemTy::F64),
                ));
            }
            if wrapped {
                let jm = bin(BinOp::Sub, var_e(&f, j), int(1));
                let wrap = Expr::new(
                    ExprKind::Select {
                        cond: Box::new(bin(BinOp::Lt, jm.clone(), int(0))),
                        then: Box::new(bin(BinOp::Add, jm.clone(), int(10))),
                        else_: Box::new(jm),
                    },
                    jm_ty(),
                    sp(),
                );
                let read = idx(&f, a, vec![var_e(&f, i), wrap]);
                let StmtKind::Assign { value, .. } = &mut l.body[0].kind else {
                    unreachable!()
                };
                *value = bin(BinOp::Mul, read.clone(), read);
            }
            share_reads(&mut body, &mut f);
            let StmtKind::For(l) = &body[0].kind else {
                unreachable!()
            };
            assert_eq!(reads_of(&l.body, a) == 1, shared, "{stores_a} {wrapped}");
        }
    }

    fn jm_ty() -> crate::ir::Type {
        crate::ir::Type::Scalar(ElemTy::I64)
    }
}
