//! Traversals of the IR and the variables statements and expressions use:
//! the shared analyses of the passes and the back ends.

use std::collections::BTreeSet;

use crate::ir::{Block, Expr, ExprKind, Place, Stmt, StmtKind, VarId};

/// The blocks nested directly in a statement (a loop's body, the branches
/// of an `if` in order, an `OnDevice` block); empty for the others.
pub fn sub_blocks(s: &Stmt) -> Vec<&Block> {
    match &s.kind {
        StmtKind::For(l) => vec![&l.body],
        StmtKind::While { body, .. } | StmtKind::OnDevice(body) => vec![body],
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => vec![then_body, else_body],
        _ => vec![],
    }
}

/// [`sub_blocks`], mutably.
pub fn sub_blocks_mut(s: &mut Stmt) -> Vec<&mut Block> {
    match &mut s.kind {
        StmtKind::For(l) => vec![&mut l.body],
        StmtKind::While { body, .. } | StmtKind::OnDevice(body) => vec![body],
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => vec![then_body, else_body],
        _ => vec![],
    }
}

/// The expressions a statement holds itself, not those of nested blocks:
/// a store's indices and value, a loop's bounds, a condition, a returned or
/// evaluated expression.
pub fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    match &s.kind {
        StmtKind::Assign { dst, value } => {
            let mut v: Vec<&Expr> = match dst {
                Place::Index { indices, .. } => indices.iter().collect(),
                Place::Var(_) => vec![],
            };
            v.push(value);
            v
        }
        StmtKind::For(l) => vec![&l.lo, &l.hi],
        StmtKind::While { cond, .. } | StmtKind::If { cond, .. } => vec![cond],
        StmtKind::Return(Some(e)) | StmtKind::Expr(e) => vec![e],
        _ => vec![],
    }
}

/// [`stmt_exprs`], mutable.
pub fn stmt_exprs_mut(s: &mut Stmt) -> Vec<&mut Expr> {
    match &mut s.kind {
        StmtKind::Assign { dst, value } => {
            let mut v: Vec<&mut Expr> = match dst {
                Place::Index { indices, .. } => indices.iter_mut().collect(),
                Place::Var(_) => vec![],
            };
            v.push(value);
            v
        }
        StmtKind::For(l) => vec![&mut l.lo, &mut l.hi],
        StmtKind::While { cond, .. } | StmtKind::If { cond, .. } => vec![cond],
        StmtKind::Return(Some(e)) | StmtKind::Expr(e) => vec![e],
        _ => vec![],
    }
}

/// Calls `f` on every expression of a block, nested blocks included,
/// outermost first; where `f` returns false the expression's operands are
/// skipped.
pub fn walk_exprs(b: &[Stmt], f: &mut dyn FnMut(&Expr) -> bool) {
    fn expr(e: &Expr, f: &mut dyn FnMut(&Expr) -> bool) {
        if f(e) {
            e.children().into_iter().for_each(|c| expr(c, f));
        }
    }
    for s in b {
        stmt_exprs(s).into_iter().for_each(|e| expr(e, f));
        sub_blocks(s).into_iter().for_each(|sub| walk_exprs(sub, f));
    }
}

/// Adds every variable a statement reads or writes to `used`, and the scalar
/// variables it assigns to `assigned`.
pub fn stmt_uses(s: &Stmt, used: &mut BTreeSet<VarId>, assigned: &mut BTreeSet<VarId>) {
    match &s.kind {
        StmtKind::Assign { dst, value } => {
            match dst {
                Place::Var(v) => {
                    used.insert(*v);
                    assigned.insert(*v);
                }
                Place::Index { array, indices } => {
                    used.insert(*array);
                    indices.iter().for_each(|i| expr_uses(i, used));
                }
            }
            expr_uses(value, used);
        }
        StmtKind::For(l) => {
            used.insert(l.var);
            assigned.insert(l.var);
            expr_uses(&l.lo, used);
            expr_uses(&l.hi, used);
            if let Some(r) = &l.reduction {
                used.insert(r.acc);
                assigned.insert(r.acc);
            }
            l.body.iter().for_each(|s| stmt_uses(s, used, assigned));
        }
        StmtKind::While { cond, body } => {
            expr_uses(cond, used);
            body.iter().for_each(|s| stmt_uses(s, used, assigned));
        }
        StmtKind::If {
            cond,
            then_body,
            else_body,
        } => {
            expr_uses(cond, used);
            then_body
                .iter()
                .chain(else_body)
                .for_each(|s| stmt_uses(s, used, assigned));
        }
        StmtKind::Return(Some(e)) | StmtKind::Expr(e) => expr_uses(e, used),
        StmtKind::Return(None) | StmtKind::Barrier => {}
        StmtKind::OnDevice(body) => body.iter().for_each(|s| stmt_uses(s, used, assigned)),
        StmtKind::Launch { args, .. } => used.extend(args.iter().copied()),
    }
}

/// Adds every variable an expression reads to `used`.
pub fn expr_uses(e: &Expr, used: &mut BTreeSet<VarId>) {
    match &e.kind {
        ExprKind::Var(v) | ExprKind::Index { array: v, .. } => {
            used.insert(*v);
        }
        _ => {}
    }
    e.children().into_iter().for_each(|c| expr_uses(c, used));
}

/// Does `e` read variable `v`?
pub fn uses_var(e: &Expr, v: VarId) -> bool {
    match &e.kind {
        ExprKind::Var(x) | ExprKind::Index { array: x, .. } if *x == v => true,
        _ => e.children().into_iter().any(|c| uses_var(c, v)),
    }
}
