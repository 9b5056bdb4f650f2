//! Python's `UnboundLocalError`: the reads of a function's locals that some
//! path may reach before any assignment of the local (definite assignment
//! over the structured control flow). Sema guards those reads with a flag
//! (`sema::unbound`); every other read needs nothing.

use std::collections::{BTreeSet, HashSet};

use crate::diag::Span;
use crate::ir::visit::{is_pure, known_side, may_change, stmt_exprs};
use crate::ir::{BinOp, Expr, ExprKind, ForLoop, Place, Stmt, StmtKind, VarId};

/// The locals assigned on every path to a point; `None` where no path
/// reaches it (after a `return`, `break` or `continue`): there every local
/// counts as assigned.
type Assigned = Option<BTreeSet<VarId>>;

/// What holds on the paths that reach both `a` and `b`'s points.
fn meet(a: Assigned, b: Assigned) -> Assigned {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => Some(a.intersection(&b).copied().collect()),
    }
}

/// The reads (a local and the read's span) of the locals in `tracked` that
/// may run before the local is assigned, entering `body` with none of them
/// assigned. `runs(l)` says that loop `l` runs at least once (a trip count
/// known when compiling): then what its body assigns on every path through
/// it is assigned after it. A read evaluated only under a condition inside
/// its expression (`c and t`, `t if c else 0`) is reported too
/// ([`conditional_reads`] gives its condition).
pub fn maybe_unbound_reads(
    body: &[Stmt],
    tracked: &BTreeSet<VarId>,
    runs: &dyn Fn(&ForLoop) -> bool,
) -> HashSet<(VarId, Span)> {
    let mut w = Walk {
        tracked,
        runs,
        out: HashSet::new(),
        loops: vec![],
    };
    w.block(body, Some(BTreeSet::new()), &[]);
    w.out
}

/// The reads of `e` that run whenever `e` is evaluated (not under the
/// condition of a `Select`, nor the right side of `and` / `or`).
pub fn unconditional_reads(e: &Expr, f: &mut dyn FnMut(VarId, Span)) {
    match &e.kind {
        ExprKind::Var(v) => f(*v, e.span),
        ExprKind::Select { cond, .. } => unconditional_reads(cond, f),
        ExprKind::Binary {
            op: BinOp::And | BinOp::Or,
            lhs,
            ..
        } => unconditional_reads(lhs, f),
        _ => e.children().for_each(|c| unconditional_reads(c, f)),
    }
}

/// The conditions a read runs under (see [`conditional_reads`]).
pub type Path<'e> = Vec<(&'e Expr, bool)>;

/// What [`conditional_reads`] calls for each read.
pub type ReadUnder<'e> = dyn FnMut(VarId, Span, &[(&'e Expr, bool)]) + 'e;

/// The reads of `e` evaluated only under a condition, with it: `f(v,
/// span, path)`, where the read runs when each `(c, holds)` of `path`, in
/// order, has `c` true (`holds`) or false (the condition of a `Select`
/// for its sides, the left side of `and` / `or` for the right).
pub fn conditional_reads<'e>(e: &'e Expr, path: &mut Path<'e>, f: &mut ReadUnder<'e>) {
    let under =
        |path: &mut Path<'e>, c: &'e Expr, holds: bool, side: &'e Expr, f: &mut ReadUnder<'e>| {
            path.push((c, holds));
            unconditional_reads(side, &mut |v, span| f(v, span, path));
            conditional_reads(side, path, f);
            path.pop();
        };
    match &e.kind {
        ExprKind::Select { cond, then, else_ } => {
            conditional_reads(cond, path, f);
            under(path, cond, true, then, f);
            under(path, cond, false, else_, f);
        }
        ExprKind::Binary {
            op: op @ (BinOp::And | BinOp::Or),
            lhs,
            rhs,
        } => {
            conditional_reads(lhs, path, f);
            under(path, lhs, *op == BinOp::And, rhs, f);
        }
        _ => e.children().for_each(|c| conditional_reads(c, path, f)),
    }
}

struct Walk<'a> {
    tracked: &'a BTreeSet<VarId>,
    runs: &'a dyn Fn(&ForLoop) -> bool,
    out: HashSet<(VarId, Span)>,
    /// For each enclosing loop, innermost last: what holds at its `break`s
    /// and at its `continue`s.
    loops: Vec<(Assigned, Assigned)>,
}

/// A condition known to hold (or fail) at a point, and the locals the side
/// of an `if` on it assigned: an `if` on the same condition again (pure,
/// unchanged since) enters that side with them assigned.
type Fact<'e> = (&'e Expr, bool, BTreeSet<VarId>);

impl Walk<'_> {
    fn block<'e>(&mut self, b: &'e [Stmt], mut st: Assigned, known: &[Fact<'e>]) -> Assigned {
        let mut known: Vec<Fact<'e>> = known.to_vec();
        for s in b {
            let cur = st.as_ref()?;
            for e in stmt_exprs(s) {
                let mut read = |v, span| {
                    if self.tracked.contains(&v) && !cur.contains(&v) {
                        self.out.insert((v, span));
                    }
                };
                unconditional_reads(e, &mut read);
                conditional_reads(e, &mut vec![], &mut |v, span, _| read(v, span));
            }
            st = match &s.kind {
                StmtKind::Assign {
                    dst: Place::Var(v), ..
                } => st.map(|mut a| {
                    a.insert(*v);
                    a
                }),
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    let side = |holds: bool| {
                        let mut a = st.clone();
                        if let Some(a) = &mut a {
                            for (c, h, vs) in &known {
                                if known_side(&[(c, *h)], cond, holds) {
                                    a.extend(vs);
                                }
                            }
                        }
                        a
                    };
                    let (entry_t, entry_e) = (side(true), side(false));
                    let t = self.block(then_body, entry_t, &known);
                    let e = self.block(else_body, entry_e, &known);
                    if is_pure(cond) && !may_change(s, cond) {
                        for (holds, end) in [(true, &t), (false, &e)] {
                            if let (Some(end), Some(before)) = (end, &st) {
                                let new: BTreeSet<VarId> =
                                    end.difference(before).copied().collect();
                                if !new.is_empty() {
                                    known.push((cond, holds, new));
                                }
                            }
                        }
                    }
                    meet(t, e)
                }
                StmtKind::For(l) => {
                    self.loops.push((None, None));
                    let end = self.block(&l.body, st.clone(), &[]);
                    let (broke, continued) = self.loops.pop().unwrap_or_default();
                    if (self.runs)(l) {
                        // (the last iteration ends at its end or at a
                        // `continue`, or the loop at a `break`)
                        meet(meet(end, continued), broke)
                    } else {
                        st
                    }
                }
                StmtKind::While { cond, body } => {
                    self.loops.push((None, None));
                    self.block(body, st.clone(), &[]);
                    let (broke, _) = self.loops.pop().unwrap_or_default();
                    if matches!(cond.kind, ExprKind::Bool(true)) {
                        // (`while True:` ends only at a `break`)
                        broke
                    } else {
                        st
                    }
                }
                StmtKind::OnDevice(b) => self.block(b, st, &known),
                StmtKind::Return(_) => None,
                StmtKind::Break | StmtKind::Continue => {
                    let brk = matches!(s.kind, StmtKind::Break);
                    if let Some((broke, continued)) = self.loops.last_mut() {
                        let at = if brk { broke } else { continued };
                        *at = meet(at.take(), st);
                    }
                    None
                }
                _ => st,
            };
            known.retain(|(c, _, _)| !may_change(s, c));
        }
        st
    }
}
