//! IR builders and traversal helpers shared by the passes (the GPU passes
//! above all), so that each pass holds only its own logic.

use crate::diag::Span;
use crate::ir::{
    BinOp, Block, Expr, ExprKind, Function, Place, Stmt, StmtKind, Type, Var, VarId, VarKind,
};
use crate::types::ElemTy;

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
    Stmt::new(
        StmtKind::Assign {
            dst: Place::Var(v),
            value,
        },
        span,
    )
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

/// The direct operands of an expression.
pub fn expr_children(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Index { indices, .. } => indices.iter().collect(),
        ExprKind::Unary { arg, .. }
        | ExprKind::Convert { arg }
        | ExprKind::WarpReduce { arg, .. } => {
            vec![arg]
        }
        ExprKind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
        ExprKind::Select { cond, then, else_ } => vec![cond, then, else_],
        ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => args.iter().collect(),
        _ => vec![],
    }
}

/// [`expr_children`], mutable.
pub fn expr_children_mut(e: &mut Expr) -> Vec<&mut Expr> {
    match &mut e.kind {
        ExprKind::Index { indices, .. } => indices.iter_mut().collect(),
        ExprKind::Unary { arg, .. }
        | ExprKind::Convert { arg }
        | ExprKind::WarpReduce { arg, .. } => {
            vec![arg]
        }
        ExprKind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
        ExprKind::Select { cond, then, else_ } => vec![cond, then, else_],
        ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => args.iter_mut().collect(),
        _ => vec![],
    }
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
