//! After `check_races`: a scalar local that every iteration of a parallel
//! loop assigns before it reads it, whose value after the loop nothing
//! reads, but that the function also uses elsewhere (`m = x[i] * 2` in the
//! loop, `m = x[0]` after it: one Python variable), gets a variable of its
//! own inside the loop. The back ends declare a local at its first
//! assignment, so the loop's copy is private to each thread instead of one
//! variable all threads write.

use crate::ir::visit::{
    live_after_loop, own_uses, reads_assigns, reads_before_def, sub_blocks, walk_stmts,
};
use crate::ir::{ForLoop, Function, Program, Stmt, StmtKind, Var, VarId, VarKind};
use crate::passes::util::subst_block;

pub fn run(p: &mut Program) {
    privatize(&mut p.host);
    for h in &mut p.helpers {
        privatize(h);
    }
}

/// The path of block indices to a statement: (statement index, sub-block
/// index) pairs from the function body down.
type Path = Vec<(usize, usize)>;

fn privatize(f: &mut Function) {
    let mut loops = vec![];
    parallel_loops(&f.body, &mut vec![], &mut loops);
    // outer loops first: a variable renamed there is the inner loops' to
    // rename again
    for (path, k) in loops {
        let l = loop_at(&f.body, &path, k);
        let renames: Vec<VarId> = candidates(f, l);
        for v in renames {
            let old = f.var(v).clone();
            let fresh = f.add_var(Var {
                name: old.name.clone(),
                ty: old.ty.clone(),
                kind: VarKind::Local,
                value: None,
                span: old.span,
            });
            subst_block(&mut loop_at_mut(&mut f.body, &path, k).body, v, fresh);
        }
    }
}

/// Every parallel loop under `b`, outer loops first, as (path to its
/// block, index in it).
fn parallel_loops(b: &[Stmt], path: &mut Path, out: &mut Vec<(Path, usize)>) {
    for (k, s) in b.iter().enumerate() {
        if matches!(&s.kind, StmtKind::For(l) if l.par.is_some()) {
            out.push((path.clone(), k));
        }
        for (j, sb) in sub_blocks(s).into_iter().enumerate() {
            path.push((k, j));
            parallel_loops(sb, path, out);
            path.pop();
        }
    }
}

fn block_at<'a>(mut b: &'a [Stmt], path: &Path) -> &'a [Stmt] {
    for &(k, j) in path {
        b = sub_blocks(&b[k])[j];
    }
    b
}

fn loop_at<'a>(b: &'a [Stmt], path: &Path, k: usize) -> &'a ForLoop {
    match &block_at(b, path)[k].kind {
        StmtKind::For(l) => l,
        _ => unreachable!("a path of parallel_loops names a loop"),
    }
}

fn loop_at_mut<'a>(mut b: &'a mut Vec<Stmt>, path: &Path, k: usize) -> &'a mut ForLoop {
    for &(i, j) in path {
        b = crate::ir::visit::sub_blocks_mut(&mut b[i]).swap_remove(j);
    }
    match &mut b[k].kind {
        StmtKind::For(l) => l,
        _ => unreachable!("a path of parallel_loops names a loop"),
    }
}

/// The scalar locals of `l`'s body that each iteration assigns before it
/// reads them, whose value after the loop is dead, and that the function
/// touches outside `l`.
fn candidates(f: &Function, l: &ForLoop) -> Vec<VarId> {
    let mut assigned = std::collections::BTreeSet::new();
    walk_stmts(&l.body, &mut |s| assigned.extend(own_uses(s).assigned));
    let acc = l.reduction.map(|r| r.acc);
    assigned
        .into_iter()
        .filter(|&v| {
            let var = f.var(v);
            v != l.var
                && Some(v) != acc
                && var.kind == VarKind::Local
                && var.value.is_none()
                && !var.ty.is_array()
                && !reads_before_def(&l.body, v)
                && !live_after_loop(&f.body, l, v)
                && touched_outside(&f.body, l, v)
        })
        .collect()
}

/// Does any statement outside loop `me` read or assign `v`?
fn touched_outside(b: &[Stmt], me: &ForLoop, v: VarId) -> bool {
    b.iter().any(|s| {
        if matches!(&s.kind, StmtKind::For(l) if std::ptr::eq(&**l, me)) {
            return false;
        }
        let (reads, assigns) = reads_assigns(s, v);
        reads
            || assigns
            || sub_blocks(s)
                .into_iter()
                .any(|sb| touched_outside(sb, me, v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::ir::verify::verify_program;
    use crate::passes::testutil::*;
    use crate::types::ElemTy;

    /// for i par { m = x[i]; y[i] = m }; m = x[0]; z[0] = m
    fn program_with(after_reads_first: bool) -> Program {
        let mut b = FnBuilder::new("f");
        let x = b.array("x", ElemTy::F64, &[8]);
        let y = b.array("y", ElemTy::F64, &[8]);
        let z = b.array("z", ElemTy::F64, &[1]);
        let i = b.index_var("i");
        let m = b.local("m", ElemTy::F64);
        let f = &b.f;
        let mut l = for_loop(
            i,
            0,
            8,
            &["i"],
            vec![
                assign(m, idx(f, x, vec![var_e(f, i)])),
                store(y, vec![var_e(f, i)], var_e(f, m)),
            ],
        );
        l.par = par(4);
        let after = if after_reads_first {
            vec![store(z, vec![int(0)], var_e(f, m))]
        } else {
            vec![
                assign(m, idx(f, x, vec![int(0)])),
                store(z, vec![int(0)], var_e(f, m)),
            ]
        };
        b.push(for_stmt(l));
        for s in after {
            b.push(s);
        }
        program(b.f)
    }

    #[test]
    fn a_dead_value_gets_a_variable_of_its_own() {
        let mut p = program_with(false);
        run(&mut p);
        assert_eq!(verify_program(&p), Ok(()));
        let text = program_to_string(&p);
        // two variables named m: the loop's and the function's
        assert_eq!(
            p.host.vars.iter().filter(|v| v.name == "m").count(),
            2,
            "{text}"
        );
        let StmtKind::For(l) = &p.host.body[0].kind else {
            panic!("{text}")
        };
        let StmtKind::Assign {
            dst: crate::ir::Place::Var(inner),
            ..
        } = &l.body[0].kind
        else {
            panic!("{text}")
        };
        let StmtKind::Assign {
            dst: crate::ir::Place::Var(outer),
            ..
        } = &p.host.body[1].kind
        else {
            panic!("{text}")
        };
        assert_ne!(inner, outer, "{text}");
    }

    #[test]
    fn a_value_read_after_the_loop_is_left_alone() {
        let mut p = program_with(true);
        let before = program_to_string(&p);
        run(&mut p);
        assert_eq!(program_to_string(&p), before);
    }
}
