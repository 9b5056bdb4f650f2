//! IR builders and traversal helpers shared by the passes (the GPU passes
//! above all), so that each pass holds only its own logic.

use crate::diag::Span;
use crate::ir::{
    BinOp, Block, Expr, ExprKind, ForLoop, Function, Place, Program, Stmt, StmtKind, Type, Var,
    VarId, VarKind,
};
use crate::types::ElemTy;

// The traversals live in the IR layer (the back ends use them too).
pub use crate::ir::visit::{stmt_exprs, stmt_exprs_mut, sub_blocks, sub_blocks_mut, walk_exprs};

/// An `int64` expression.
pub fn i64e(kind: ExprKind, span: Span) -> Expr {
    Expr::new(kind, Type::Scalar(ElemTy::I64), span)
}

/// An `int64` literal.
pub fn int(v: i64, span: Span) -> Expr {
    i64e(ExprKind::Int(v), span)
}

/// `lhs op rhs` of type `ty`, at the span of `lhs`.
pub fn binary(op: BinOp, lhs: Expr, rhs: Expr, ty: Type) -> Expr {
    let span = lhs.span;
    Expr::binary(op, lhs, rhs, ty, span)
}

/// `lhs op rhs`: `bool` for comparisons and `and`, else of the type of
/// `lhs`.
pub fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    let ty = if op.is_comparison() || matches!(op, BinOp::And) {
        Type::Scalar(ElemTy::Bool)
    } else {
        lhs.ty.clone()
    };
    binary(op, lhs, rhs, ty)
}

/// `v = value`.
pub fn assign_var(v: VarId, value: Expr, span: Span) -> Stmt {
    Stmt::assign_var(v, value, span)
}

/// A new variable of `f` without a known value.
pub fn new_var(f: &mut Function, name: &str, ty: Type, kind: VarKind, span: Span) -> VarId {
    f.add_var(Var {
        name: name.into(),
        ty,
        kind,
        value: None,
        span,
    })
}

/// A loop known by its box's address: passes that decide on the whole
/// function before rewriting it key their plans by it (the rewrite moves
/// the boxes, not the loops in them).
pub fn loop_key(l: &ForLoop) -> usize {
    l as *const ForLoop as usize
}

/// Replaces every use (read or write) of `from` by `to`.
pub fn subst_block(b: &mut Block, from: VarId, to: VarId) {
    for s in b {
        match &mut s.kind {
            StmtKind::Assign {
                dst: Place::Var(v), ..
            } if *v == from => *v = to,
            StmtKind::For(l) => {
                if let Some(r) = l.reduction.as_mut().filter(|r| r.acc == from) {
                    r.acc = to;
                }
            }
            _ => {}
        }
        for e in stmt_exprs_mut(s) {
            subst_expr(e, from, to);
        }
        for sub in sub_blocks_mut(s) {
            subst_block(sub, from, to);
        }
    }
}

/// Replaces every read of `var` in `b` by `by` (`var` is not assigned in
/// `b`).
pub fn subst_block_expr(b: &mut Block, var: VarId, by: &Expr) {
    for s in b {
        for e in stmt_exprs_mut(s) {
            replace_var(e, var, by);
        }
        for sub in sub_blocks_mut(s) {
            subst_block_expr(sub, var, by);
        }
    }
}

/// Replaces every read of `var` in `e` by `by`.
pub fn replace_var(e: &mut Expr, var: VarId, by: &Expr) {
    if e.kind == ExprKind::Var(var) {
        *e = by.clone();
        return;
    }
    e.children_mut()
        .into_iter()
        .for_each(|c| replace_var(c, var, by));
}

fn subst_expr(e: &mut Expr, from: VarId, to: VarId) {
    match &mut e.kind {
        ExprKind::Var(v) if *v == from => *v = to,
        _ => e
            .children_mut()
            .into_iter()
            .for_each(|c| subst_expr(c, from, to)),
    }
}

/// The first `Target.Host` external that helper `h` calls, itself or
/// through the helpers it calls, with the span of that call.
pub fn host_external_in<'p>(
    p: &'p Program,
    h: usize,
    seen: &mut Vec<bool>,
) -> Option<(&'p crate::signature::ExtDecl, Span)> {
    if h >= p.helpers.len() || seen[h] {
        return None;
    }
    seen[h] = true;
    let mut found = None;
    let mut callees = vec![];
    crate::ir::visit::walk_exprs(&p.helpers[h].body, &mut |e| {
        match &e.kind {
            ExprKind::External { ext, .. } if found.is_none() => {
                if let Some(d) = p.externals.get(*ext as usize) {
                    if d.target == crate::signature::ExtTarget::Host {
                        found = Some((d, e.span));
                    }
                }
            }
            ExprKind::Call { func, .. } => callees.push(func.0 as usize),
            _ => {}
        }
        found.is_none()
    });
    found.or_else(|| {
        callees
            .into_iter()
            .find_map(|c| host_external_in(p, c, seen))
    })
}

/// Calls `f` on every loop at parallel depth `depth` (the top is 0).
pub fn for_loops_at(b: &mut Block, depth: usize, f: &mut dyn FnMut(&mut ForLoop)) {
    fn walk(b: &mut Block, cur: usize, depth: usize, f: &mut dyn FnMut(&mut ForLoop)) {
        for s in b.iter_mut() {
            match &mut s.kind {
                StmtKind::For(l) if l.par.is_some() => {
                    if cur == depth {
                        f(l);
                    } else {
                        walk(&mut l.body, cur + 1, depth, f);
                    }
                }
                StmtKind::For(l) => walk(&mut l.body, cur, depth, f),
                StmtKind::While { body, .. } | StmtKind::OnDevice(body) => {
                    walk(body, cur, depth, f)
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    walk(then_body, cur, depth, f);
                    walk(else_body, cur, depth, f);
                }
                _ => {}
            }
        }
    }
    walk(b, 0, depth, f);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_blocks_in_order() {
        let sp = Span::default();
        let a = Stmt::new(StmtKind::Barrier, sp);
        let b = Stmt::new(StmtKind::Return(None), sp);
        let mut s = Stmt::new(
            StmtKind::If {
                cond: Expr::new(ExprKind::Bool(true), Type::Scalar(ElemTy::Bool), sp),
                then_body: vec![a.clone()],
                else_body: vec![b.clone(), b.clone()],
            },
            sp,
        );
        let lens: Vec<usize> = sub_blocks(&s).iter().map(|b| b.len()).collect();
        assert_eq!(lens, vec![1, 2]);
        sub_blocks_mut(&mut s)[1].pop();
        let lens: Vec<usize> = sub_blocks(&s).iter().map(|b| b.len()).collect();
        assert_eq!(lens, vec![1, 1]);
        assert!(sub_blocks(&a).is_empty());
        let e = binary(
            BinOp::Add,
            int(1, sp),
            int(2, sp),
            Type::Scalar(ElemTy::I64),
        );
        assert!(matches!(e.kind, ExprKind::Binary { op: BinOp::Add, .. }));
    }
}
