//! An assignment of a scalar local that nothing reads is dropped when its
//! value cannot fail or act (no call, no array read, whose bounds an
//! `IndexError` may need, no `assert`): the element of a returned pair
//! left unused (`pair(a, b)[1]`), `s` of `s, p = pair(a, b)` when only `p`
//! is used. Nothing observes such a store; CUDA's front end warns about a
//! variable set but never used. Repeated until none is left (dropping `s =
//! t` can leave `t` unread).

use std::collections::BTreeSet;

use crate::ir::visit::{own_uses, pure, sub_blocks_mut, walk_stmts};
use crate::ir::{Block, Expr, ExprKind, Function, Place, Program, StmtKind, VarId, VarKind};

pub fn run(p: &mut Program) {
    drop_unread(&mut p.host);
    for h in &mut p.helpers {
        drop_unread(h);
    }
}

fn drop_unread(f: &mut Function) {
    loop {
        let mut reads = BTreeSet::new();
        walk_stmts(&f.body, &mut |s| reads.extend(own_uses(s).reads));
        let dead: BTreeSet<VarId> = (0..f.vars.len() as u32)
            .map(VarId)
            .filter(|v| f.var(*v).kind == VarKind::Local && !reads.contains(v))
            .collect();
        if !retain(&mut f.body, &dead) {
            return;
        }
    }
}

/// Drops the stores of `dead` locals whose value is `quiet`; whether one
/// was dropped.
fn retain(b: &mut Block, dead: &BTreeSet<VarId>) -> bool {
    let before = b.len();
    b.retain(|s| {
        !matches!(&s.kind, StmtKind::Assign { dst: Place::Var(v), value }
            if dead.contains(v) && quiet(value))
    });
    let mut dropped = b.len() != before;
    for s in b.iter_mut() {
        for sub in sub_blocks_mut(s) {
            dropped |= retain(sub, dead);
        }
    }
    dropped
}

/// No call, array read or assertion: evaluating it or not is the same.
fn quiet(e: &Expr) -> bool {
    pure(e)
        && !matches!(
            e.kind,
            ExprKind::Index { .. } | ExprKind::Assert { .. } | ExprKind::CheckIndex { .. }
        )
        && e.children().all(quiet)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::BinOp;
    use crate::passes::testutil::*;
    use crate::types::ElemTy;

    #[test]
    fn unread_stores_go_and_take_the_values_they_read_along() {
        let mut b = FnBuilder::new("f");
        let x = b.array("x", ElemTy::F64, &[4]);
        let y = b.array("y", ElemTy::F64, &[1]);
        let t = b.local("t", ElemTy::F64);
        let s = b.local("s", ElemTy::F64);
        let kept = b.local("kept", ElemTy::F64);
        // t = 1.0; s = t * 2.0; kept = x[3] (a read that may fail); y[0] = 2.0
        let t_e = var_e(&b.f, t);
        let read = idx(&b.f, x, vec![int(3)]);
        b.push(assign(t, float(1.0, ElemTy::F64)));
        b.push(assign(s, bin(BinOp::Mul, t_e, float(2.0, ElemTy::F64))));
        b.push(assign(kept, read));
        b.push(store(y, vec![int(0)], float(2.0, ElemTy::F64)));
        drop_unread(&mut b.f);
        assert_eq!(b.f.body.len(), 2, "{:?}", b.f.body);
        assert!(
            matches!(&b.f.body[0].kind, StmtKind::Assign { dst: Place::Var(v), .. } if *v == kept)
        );
    }
}
