//! Folds arithmetic, comparisons and conversions whose operands are literals,
//! with Python semantics (`ir::eval` in Python mode: `//` and `%` round
//! toward negative infinity).
//! Nothing is folded that would overflow or divide by zero: those stay in
//! the code and behave as the target does.
//!
//! A local assigned exactly once, in the function's top-level block, a
//! literal of its own type (`H, W = y.shape`, `K = 5`, `n = N - 1` once
//! `N` is specialized) is that literal wherever it is read: the reads
//! become the literal (so the C compiler sees constant trip counts and the
//! bounds proofs see constant ranges) and the assignment goes. Folding and
//! propagation alternate until nothing changes.

use std::collections::BTreeMap;

use crate::ir::eval::{self, Mode};
use crate::ir::visit::{own_uses, stmt_exprs_mut, sub_blocks_mut, walk_stmts};
use crate::ir::{
    BinOp, Block, Expr, ExprKind, Function, Place, Program, StmtKind, Type, VarId, VarKind,
};
use crate::types::{ElemTy, ScalarValue};

pub fn run(p: &mut Program) {
    fold_function(&mut p.host);
    for k in &mut p.kernels {
        fold_function(&mut k.func);
    }
    for h in &mut p.helpers {
        fold_function(h);
    }
}

fn fold_function(f: &mut Function) {
    loop {
        fold_block(&mut f.body);
        if !propagate_constants(f) {
            break;
        }
    }
}

/// Replaces the reads of the locals that hold one literal for their whole
/// life (see the module comment); returns whether it replaced any.
fn propagate_constants(f: &mut Function) -> bool {
    // how often each variable is assigned, anywhere; variables a statement
    // names other than in an expression (launch arguments) are excluded
    let mut assigned: BTreeMap<VarId, usize> = BTreeMap::new();
    let mut pinned = std::collections::BTreeSet::new();
    walk_stmts(&f.body, &mut |s| {
        for v in own_uses(s).assigned {
            *assigned.entry(v).or_default() += 1;
        }
        if let StmtKind::Launch { args, .. } = &s.kind {
            pinned.extend(args.iter().copied());
        }
    });
    let mut consts: BTreeMap<VarId, Expr> = BTreeMap::new();
    for s in &f.body {
        let StmtKind::Assign {
            dst: Place::Var(v),
            value,
        } = &s.kind
        else {
            continue;
        };
        let var = f.var(*v);
        let literal = matches!(
            value.kind,
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_)
        );
        if literal
            && var.kind == VarKind::Local
            && value.ty == var.ty
            && assigned.get(v) == Some(&1)
            && !pinned.contains(v)
        {
            consts.insert(*v, value.clone());
        }
    }
    if consts.is_empty() {
        return false;
    }
    f.body.retain(|s| {
        !matches!(&s.kind, StmtKind::Assign { dst: Place::Var(v), .. } if consts.contains_key(v))
    });
    substitute_block(&mut f.body, &consts);
    true
}

fn substitute_block(b: &mut Block, consts: &BTreeMap<VarId, Expr>) {
    for s in b.iter_mut() {
        stmt_exprs_mut(s)
            .into_iter()
            .for_each(|e| substitute_expr(e, consts));
        sub_blocks_mut(s)
            .into_iter()
            .for_each(|b| substitute_block(b, consts));
    }
}

fn substitute_expr(e: &mut Expr, consts: &BTreeMap<VarId, Expr>) {
    if let ExprKind::Var(v) = &e.kind {
        if let Some(c) = consts.get(v) {
            let span = e.span;
            *e = c.clone();
            e.span = span;
            return;
        }
    }
    e.children_mut()
        .into_iter()
        .for_each(|c| substitute_expr(c, consts));
}

fn fold_block(b: &mut Block) {
    for s in b.iter_mut() {
        match &mut s.kind {
            StmtKind::Assign { dst, value } => {
                if let Place::Index { indices, .. } = dst {
                    indices.iter_mut().for_each(fold_expr);
                }
                fold_expr(value);
            }
            StmtKind::For(l) => {
                fold_expr(&mut l.lo);
                fold_expr(&mut l.hi);
                fold_block(&mut l.body);
            }
            StmtKind::While { cond, body } => {
                fold_expr(cond);
                fold_block(body);
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                fold_expr(cond);
                fold_block(then_body);
                fold_block(else_body);
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => fold_expr(e),
            StmtKind::Callback(c) => c.exprs_mut().into_iter().for_each(fold_expr),
            StmtKind::OnDevice(body) => fold_block(body),
            StmtKind::Return(None)
            | StmtKind::Launch { .. }
            | StmtKind::Barrier
            | StmtKind::Break
            | StmtKind::Continue => {}
        }
    }
}

fn lit(e: &Expr) -> Option<ScalarValue> {
    e.literal_value()
}

/// Rounds a value to what the element type can hold; `None` if it cannot.
fn to_kind(v: ScalarValue, ty: &Type) -> Option<ExprKind> {
    let Type::Scalar(t) = ty else { return None };
    match v {
        ScalarValue::Bool(b) if *t == ElemTy::Bool => Some(ExprKind::Bool(b)),
        ScalarValue::Int(i) if t.is_int() && fits(i, *t) => Some(ExprKind::Int(i)),
        ScalarValue::Float(f) if t.is_float() => Some(ExprKind::Float(eval::round_float(f, *t))),
        _ => None,
    }
}

fn fits(i: i64, t: ElemTy) -> bool {
    t.int_bounds()
        .is_some_and(|(lo, hi)| (lo..=hi).contains(&(i as i128)))
}

/// `a op b` as Python computes it, for operands of one kind (`None` where
/// Python raises or the result needs more than 64 bits).
fn fold_binary(op: BinOp, a: ScalarValue, b: ScalarValue) -> Option<ScalarValue> {
    if std::mem::discriminant(&a) != std::mem::discriminant(&b) {
        return None;
    }
    // float powers are left to the target's pow
    if op == BinOp::Pow && matches!(a, ScalarValue::Float(_)) {
        return None;
    }
    eval::binary(op, a, b, Mode::Python).ok()
}

pub fn fold_expr(e: &mut Expr) {
    let new_kind = match &mut e.kind {
        ExprKind::Bool(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Var(_)
        | ExprKind::GpuIndex(_)
        | ExprKind::CpuThreads => None,
        ExprKind::Index { indices, .. } => {
            indices.iter_mut().for_each(fold_expr);
            None
        }
        ExprKind::Unary { op, arg } => {
            fold_expr(arg);
            lit(arg)
                .and_then(|v| eval::unary(*op, v, Mode::Python).ok())
                .and_then(|v| to_kind(v, &e.ty))
        }
        ExprKind::Binary { op, lhs, rhs } => {
            fold_expr(lhs);
            fold_expr(rhs);
            match (lit(lhs), lit(rhs)) {
                (Some(a), Some(b)) => fold_binary(*op, a, b).and_then(|v| to_kind(v, &e.ty)),
                _ => None,
            }
        }
        ExprKind::Select { cond, then, else_ } => {
            let wrap = crate::ir::range::wrap_of(cond, then, else_).map(|(_, n)| n);
            fold_expr(cond);
            fold_expr(then);
            fold_expr(else_);
            // Python's negative index `a < 0 ? a + n : a` of a constant `a`
            // below `-n` stays a wrap: `check_bounds` checks it as such
            // and reports `a`, the index the program computed (folded, it
            // reported `a + n`)
            if let (Some(n), ExprKind::Int(a)) = (wrap, &else_.kind) {
                if (*a as i128) < -n {
                    let n = i64::try_from(n).unwrap_or(i64::MAX);
                    e.kind = crate::ir::range::negative_wrap((**else_).clone(), n).kind;
                    return;
                }
            }
            match lit(cond) {
                Some(ScalarValue::Bool(true)) => Some(then.kind.clone()),
                Some(ScalarValue::Bool(false)) => Some(else_.kind.clone()),
                _ => None,
            }
        }
        ExprKind::Convert { arg } => {
            fold_expr(arg);
            let to = e.ty.elem();
            lit(arg)
                .zip(to)
                .and_then(|(v, to)| eval::convert(v, to, Mode::Python).ok())
                .and_then(|v| to_kind(v, &e.ty))
        }
        ExprKind::WarpReduce { arg, .. }
        | ExprKind::ClusterReduce { arg, .. }
        | ExprKind::CheckIndex { arg, .. }
        | ExprKind::Atomic { value: arg, .. } => {
            fold_expr(arg);
            None
        }
        ExprKind::Assert { cond, values, .. } => {
            fold_expr(cond);
            values.iter_mut().for_each(fold_expr);
            None
        }
        ExprKind::Note { values, .. } => {
            values.iter_mut().for_each(fold_expr);
            None
        }
        ExprKind::Math { args, .. } | ExprKind::Call { args, .. } => {
            args.iter_mut().for_each(fold_expr);
            None
        }
        ExprKind::External { args, .. } => {
            crate::ir::call_arg_exprs_mut(args)
                .into_iter()
                .for_each(fold_expr);
            None
        }
    };
    if let Some(k) = new_kind {
        e.kind = k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::*;

    fn fold(mut e: Expr) -> ExprKind {
        fold_expr(&mut e);
        e.kind
    }

    #[test]
    fn python_int_division() {
        assert_eq!(
            fold(bin(BinOp::FloorDiv, int(-7), int(2))),
            ExprKind::Int(-4)
        );
        assert_eq!(fold(bin(BinOp::Mod, int(-7), int(2))), ExprKind::Int(1));
        assert_eq!(fold(bin(BinOp::Mod, int(7), int(-2))), ExprKind::Int(-1));
        assert_eq!(
            fold(bin(BinOp::FloorDiv, int(7), int(-2))),
            ExprKind::Int(-4)
        );
        // Division by zero is left alone.
        assert!(matches!(
            fold(bin(BinOp::FloorDiv, int(1), int(0))),
            ExprKind::Binary { .. }
        ));
    }

    #[test]
    fn python_float_division() {
        let f = |v| float(v, ElemTy::F64);
        assert_eq!(fold(bin(BinOp::Mod, f(-7.5), f(2.0))), ExprKind::Float(0.5));
        assert_eq!(
            fold(bin(BinOp::FloorDiv, f(-7.5), f(2.0))),
            ExprKind::Float(-4.0)
        );
    }

    #[test]
    fn nested_and_comparisons() {
        let e = bin(BinOp::Mul, bin(BinOp::Add, int(2), int(3)), int(4));
        assert_eq!(fold(e), ExprKind::Int(20));
        assert_eq!(fold(bin(BinOp::Lt, int(2), int(3))), ExprKind::Bool(true));
    }

    #[test]
    fn f32_results_are_rounded() {
        let e = bin(BinOp::Div, float(1.0, ElemTy::F32), float(3.0, ElemTy::F32));
        assert_eq!(fold(e), ExprKind::Float((1.0f32 / 3.0f32) as f64));
    }

    #[test]
    fn uint64_literals_beyond_2_63_are_not_folded_as_negative_ints() {
        // `-np.uint64(3)`: the literal holds 2**64 - 3, not -3
        let u = |v| Expr::int(v, ElemTy::U64, sp());
        let lt = Expr::binary(BinOp::Lt, u(-3), u(5), Type::Scalar(ElemTy::Bool), sp());
        assert!(matches!(fold(lt), ExprKind::Binary { .. }));
        let add = Expr::binary(BinOp::Add, u(-3), u(5), Type::Scalar(ElemTy::U64), sp());
        assert!(matches!(fold(add), ExprKind::Binary { .. }));
    }

    #[test]
    fn overflow_is_not_folded() {
        let e = bin(BinOp::Add, int(i64::MAX), int(1));
        assert!(matches!(fold(e), ExprKind::Binary { .. }));
        // 3 << 62 needs 64 bits plus a sign (was folded to a wrapped value)
        let e = bin(BinOp::Shl, int(3), int(62));
        assert!(matches!(fold(e), ExprKind::Binary { .. }));
        assert_eq!(
            fold(bin(BinOp::Shl, int(-1), int(63))),
            ExprKind::Int(i64::MIN)
        );
    }
}
