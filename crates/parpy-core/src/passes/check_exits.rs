//! Checked code stops where Python stops: the second half of
//! `check_bounds`, run by it once every function that checks has its
//! record.
//!
//! A failed [`ExprKind::CheckIndex`] records the failure and yields index
//! 0, so memory is never touched out of bounds; the call raises after the
//! code returns. Two things must not follow from that index 0:
//!
//! - A store (or an atomic update) through a checked index would write
//!   element 0, which Python never writes: the store runs only when its
//!   checked indices are in range (`if 0 <= k < n: x[k] = v`, `-n <= k <
//!   n` for one that counts from the end) and otherwise records the failure.
//! - A loop whose end depends on the values read would go on reading
//!   element 0, maybe forever (`while x[j] < 100.0: j += 1` past the end
//!   of `x`): a `while` loop, or a sequential `for` loop that can `break`,
//!   whose condition or body can fail leaves at the top of its next
//!   iteration when the record holds a failure. So does a sequential
//!   `for` loop whose bounds are only known when it runs and whose
//!   counter indexes an array through arithmetic (`vals[k]` of CSR's `for
//!   k in range(rows[r], rows[r + 1])`): with bounds past the array
//!   (garbage `rows`) it would run to their end, maybe 2**62 steps, where
//!   Python stops at its `IndexError`; so does one whose bounds are known
//!   but that runs more than 2**31 times (an index whose last value
//!   overflows, `x[4 * i]` over `range(2**62 + 1)`, is checked access by
//!   access, not in front of the loop). (Cpu's copy of such a loop for
//!   bounds that keep the counter in range, `check_bounds`'s versioning,
//!   has no such check left: only the checked copy branches. Cpu only:
//!   a GPU kernel's loop keeps its checks in registers.)

use crate::ir::visit::{loop_exits, pure, stmt_exprs, sub_blocks, sub_blocks_mut, uses_var};
use crate::ir::{BinOp, Block, Expr, ExprKind, Place, Stmt, StmtKind, Type, VarId};
use crate::types::ElemTy;

/// Applies both rules to a body whose checks record into `record`;
/// `takes[h]`: helper `h` takes the record (its calls can fail). With
/// `host` (a GPU's host function outside its parallel loops and `OnDevice`
/// blocks) no loop tests the record, which is device memory there. With
/// `cpu`, loops whose counter runs past an array stop too (GPU kernels
/// keep their loops free of branches to the record: not measured yet).
pub fn apply(body: &mut Block, record: VarId, takes: &[bool], host: bool, cpu: bool) {
    for s in body.iter_mut() {
        let inner_host = host
            && !matches!(&s.kind, StmtKind::OnDevice(_))
            && !matches!(&s.kind, StmtKind::For(l) if l.par.is_some());
        for b in sub_blocks_mut(s) {
            apply(b, record, takes, inner_host, cpu);
        }
        match &mut s.kind {
            _ if host => {}
            StmtKind::While { cond, body } if can_fail(cond, takes) || block_fails(body, takes) => {
                leave_on_failure(body, record, s.span);
            }
            StmtKind::For(l)
                if l.par.is_none()
                    && l.reduction.is_none()
                    && (!loop_exits(&l.body).is_empty() && block_fails(&l.body, takes)
                        || cpu && runs_long(l) && indexes_past_end(&l.body, l.var)) =>
            {
                leave_on_failure(&mut l.body, record, s.span);
            }
            _ => {}
        }
        guard_store(s);
    }
}

/// Trip counts above this are "long": a loop that would run on after a
/// failed check for longer than a second or so.
const LONG_TRIPS: i64 = 1 << 31;

/// The loop's trip count is known only when it runs, or is long (`for i
/// in range(N): x[4 * i]` with `N = 2**62 + 1` known when compiling: its
/// last index overflows, so `check_bounds` cannot check it in front of
/// the loop, and the loop would run 2**62 steps past its failure).
fn runs_long(l: &crate::ir::ForLoop) -> bool {
    l.trip_count().is_none_or(|n| n > LONG_TRIPS)
}

/// `if record[0] != 0: break` first in `body`.
fn leave_on_failure(body: &mut Block, record: VarId, span: crate::diag::Span) {
    let i64t = Type::Scalar(ElemTy::I64);
    let site = Expr::new(
        ExprKind::Index {
            array: record,
            indices: vec![Expr::int(0, ElemTy::I64, span)],
        },
        i64t,
        span,
    );
    let failed = Expr::compare(BinOp::Ne, site, Expr::int(0, ElemTy::I64, span), span);
    body.insert(
        0,
        Stmt::new(
            StmtKind::If {
                cond: failed,
                then_body: vec![Stmt::new(StmtKind::Break, span)],
                else_body: vec![],
            },
            span,
        ),
    );
}

/// Does a recording check in `b` check an index computed from the
/// counter `var` by arithmetic alone (`k + 1`, `2 * k`, `k * n + j`; not
/// a gather `x[cols[k]]`, which the counter's bounds do not decide)?
fn indexes_past_end(b: &[Stmt], var: VarId) -> bool {
    fn arithmetic(e: &Expr) -> bool {
        !matches!(
            e.kind,
            ExprKind::Index { .. } | ExprKind::CheckIndex { .. } | ExprKind::Call { .. }
        ) && e.children().all(arithmetic)
    }
    fn found(e: &Expr, var: VarId) -> bool {
        let here = matches!(&e.kind, ExprKind::CheckIndex { record: Some(_), arg, .. }
            if uses_var(arg, var) && arithmetic(arg));
        here || e.children().any(|c| found(c, var))
    }
    b.iter().any(|s| {
        stmt_exprs(s).into_iter().any(|e| found(e, var))
            || sub_blocks(s).into_iter().any(|b| indexes_past_end(b, var))
    })
}

/// May evaluating `e` record a failure?
fn can_fail(e: &Expr, takes: &[bool]) -> bool {
    let here = match &e.kind {
        ExprKind::CheckIndex { record, .. } => record.is_some(),
        ExprKind::Call { func, .. } => takes.get(func.0 as usize) == Some(&true),
        _ => false,
    };
    here || e.children().any(|c| can_fail(c, takes))
}

fn block_fails(b: &[Stmt], takes: &[bool]) -> bool {
    b.iter().any(|s| {
        stmt_exprs(s).into_iter().any(|e| can_fail(e, takes))
            || sub_blocks(s).into_iter().any(|b| block_fails(b, takes))
    })
}

/// A store through checked indices, as `if <in range>: <the store,
/// unchecked> else: <the checks, which record the failure>`.
fn guard_store(s: &mut Stmt) {
    let StmtKind::Assign {
        dst: Place::Index { indices, .. },
        ..
    } = &s.kind
    else {
        return;
    };
    let checked = |ix: &Expr| matches!(&ix.kind, ExprKind::CheckIndex { record: Some(_), arg, .. } if pure(arg));
    if !indices.iter().any(checked) {
        return;
    }
    let span = s.span;
    let mut unchecked = s.clone();
    let StmtKind::Assign {
        dst: Place::Index { indices, .. },
        ..
    } = &mut unchecked.kind
    else {
        unreachable!()
    };
    let (mut conds, mut records) = (vec![], vec![]);
    for ix in indices.iter_mut().filter(|ix| checked(ix)) {
        let ExprKind::CheckIndex {
            arg, size, wrap, ..
        } = &ix.kind
        else {
            unreachable!()
        };
        let (arg, size, wrap) = ((**arg).clone(), *size, *wrap);
        // the checks inside the index too (`y[b[k]]`: a failed `k` gives
        // `b[0]`, which may be in range)
        checks_inside(&arg, &mut conds);
        conds.push(inside(&arg, size, wrap));
        records.push(Stmt::new(StmtKind::Expr(ix.clone()), span));
        // in range: the index itself (counted from the end where it may
        // be negative: the wrap alone, evaluated once)
        *ix = match wrap {
            true => Expr::new(
                ExprKind::CheckIndex {
                    arg: Box::new(arg),
                    size,
                    site: 0,
                    record: None,
                    wrap: true,
                },
                ix.ty.clone(),
                span,
            ),
            false => arg,
        };
    }
    let bool_t = Type::Scalar(ElemTy::Bool);
    let cond = conds
        .into_iter()
        .reduce(|a, b| Expr::binary(BinOp::And, a, b, bool_t.clone(), span));
    let Some(cond) = cond else { return };
    s.kind = StmtKind::If {
        cond,
        then_body: vec![unchecked],
        else_body: records,
    };
}

/// `lo <= arg < size` of a checked index (`lo`: `-size` where it may
/// count from the end).
fn inside(arg: &Expr, size: i64, wrap: bool) -> Expr {
    let (ty, span) = (arg.ty.elem().unwrap_or(ElemTy::I64), arg.span);
    let lo = if wrap { -size } else { 0 };
    Expr::binary(
        BinOp::And,
        Expr::compare(BinOp::Le, Expr::int(lo, ty, span), arg.clone(), span),
        Expr::compare(BinOp::Lt, arg.clone(), Expr::int(size, ty, span), span),
        Type::Scalar(ElemTy::Bool),
        span,
    )
}

/// The in-range conditions of the recording checks inside `e`, innermost
/// first.
fn checks_inside(e: &Expr, out: &mut Vec<Expr>) {
    for c in e.children() {
        checks_inside(c, out);
    }
    if let ExprKind::CheckIndex {
        arg,
        size,
        wrap,
        record: Some(_),
        ..
    } = &e.kind
    {
        out.push(inside(arg, *size, *wrap));
    }
}
