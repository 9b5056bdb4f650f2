//! Python's `UnboundLocalError` in jit code. A read of a local that some
//! path reaches before any assignment of it (`if c: t = x[i]` then
//! `y[i] = t`, a loop that may run zero times) raises where Python raises:
//! the local gets a flag, false at the start of the function and set after
//! each assignment, and the statement with such a read first asserts it.
//! A read its expression evaluates only under a condition (`c and t`, `t
//! if c else 0`) asserts `flag or not c`, where `c` (its conditions) reads
//! and calls nothing more than what the expression evaluates anyway.
//! Reads every path reaches assigned (`ir::unbound` proves which) cost
//! nothing.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::diag::Span;
use crate::ir::unbound::{conditional_reads, maybe_unbound_reads, unconditional_reads};
use crate::ir::visit::{stmt_exprs, sub_blocks, sub_blocks_mut};
use crate::ir::{self, Block, ElemTy, ExprKind, ForLoop, Place, StmtKind, Type, VarId, VarKind};

use super::Lowerer;

impl Lowerer<'_, '_> {
    /// Guards the reads of `body`'s user locals that may run before the
    /// local is assigned (see the module). A local assigned inside a loop
    /// the spec makes parallel is left alone: a read of it that no
    /// assignment of its iteration precedes is `check_races`' error.
    pub(super) fn guard_unbound_reads(&mut self, body: &mut Block) {
        if self.user_locals.is_empty() {
            return;
        }
        let runs = |l: &ForLoop| match (self.known_int(&l.lo), self.known_int(&l.hi)) {
            (Some(lo), Some(hi)) => super::stmt::range_len(lo, hi, l.step) >= 1,
            _ => false,
        };
        let reads = maybe_unbound_reads(body, &self.user_locals, &runs);
        if reads.is_empty() {
            return;
        }
        let mut parallel = BTreeSet::new();
        self.assigned_in_parallel(body, false, &mut parallel);
        let mut flags: BTreeMap<VarId, VarId> = BTreeMap::new();
        // (in the order of the locals: the code is the same every time)
        let vars: BTreeSet<VarId> = reads.iter().map(|r| r.0).collect();
        for v in vars {
            if parallel.contains(&v) {
                continue;
            }
            let var = self.func.var(v);
            let (name, span) = (format!("{}_bound", var.name), var.span);
            let flag = self.new_var(&name, Type::Scalar(ElemTy::Bool), VarKind::Local, span);
            flags.insert(v, flag);
        }
        if flags.is_empty() {
            return;
        }
        let reads: HashSet<(VarId, Span)> = reads
            .into_iter()
            .filter(|(v, _)| flags.contains_key(v))
            .collect();
        self.insert_guards(body, &flags, &reads);
        let inits = flags.values().map(|&flag| {
            let span = self.func.var(flag).span;
            set_flag(flag, false, span)
        });
        let inits: Block = inits.collect();
        body.splice(0..0, inits);
    }

    /// The user locals `b` assigns inside a loop whose label the spec maps.
    fn assigned_in_parallel(&self, b: &Block, inside: bool, out: &mut BTreeSet<VarId>) {
        for s in b {
            if let (
                true,
                StmtKind::Assign {
                    dst: Place::Var(v), ..
                },
            ) = (inside, &s.kind)
            {
                out.insert(*v);
            }
            let mapped = match &s.kind {
                StmtKind::For(l) => l
                    .labels
                    .iter()
                    .any(|l| self.opts.parallelize.contains_key(l)),
                _ => false,
            };
            for sub in sub_blocks(s) {
                self.assigned_in_parallel(sub, inside || mapped, out);
            }
        }
    }

    /// Puts the assertion of each flag in front of the statements that
    /// read its local unassigned, and sets the flag after each assignment.
    fn insert_guards(
        &self,
        b: &mut Block,
        flags: &BTreeMap<VarId, VarId>,
        reads: &HashSet<(VarId, Span)>,
    ) {
        let old = std::mem::take(b);
        for mut s in old {
            for sub in sub_blocks_mut(&mut s) {
                self.insert_guards(sub, flags, reads);
            }
            let mut guarded = BTreeSet::new();
            let check = |v: VarId, span: Span, unless: Option<ir::Expr>| {
                let flag = flags[&v];
                let name = &self.func.var(v).name;
                let message = format!(
                    "cannot access local variable '{name}' where it is not associated with a value"
                );
                let bound = ir::Expr::var(flag, Type::Scalar(ElemTy::Bool), span);
                let cond = match unless {
                    Some(c) => ir::Expr::binary(
                        ir::BinOp::Or,
                        bound,
                        ir::Expr::not(c, span),
                        Type::Scalar(ElemTy::Bool),
                        span,
                    ),
                    None => bound,
                };
                let check = ir::Expr::assert(cond, Some(message), "UnboundLocalError", span);
                ir::Stmt::new(StmtKind::Expr(check), span)
            };
            for e in stmt_exprs(&s) {
                unconditional_reads(e, &mut |v, span| {
                    if reads.contains(&(v, span)) && guarded.insert(v) {
                        b.push(check(v, span, None));
                    }
                });
            }
            for e in stmt_exprs(&s) {
                conditional_reads(e, &mut vec![], &mut |v, span, path| {
                    if !reads.contains(&(v, span)) || guarded.contains(&v) {
                        return;
                    }
                    if let Some(c) = path_condition(path, span) {
                        b.push(check(v, span, Some(c)));
                    }
                });
            }
            let assigned = match &s.kind {
                StmtKind::Assign {
                    dst: Place::Var(v), ..
                } => flags.get(v).copied(),
                _ => None,
            };
            let span = s.span;
            b.push(s);
            if let Some(flag) = assigned {
                b.push(set_flag(flag, true, span));
            }
        }
    }
}

/// The conjunction of `path`'s conditions (`ir::unbound::conditional_reads`),
/// where each is pure: it computes from variables, elements and
/// operators only (a helper call or a check is not made twice).
fn path_condition(path: &[(&ir::Expr, bool)], span: Span) -> Option<ir::Expr> {
    let mut out: Option<ir::Expr> = None;
    for &(c, holds) in path {
        if !crate::ir::visit::is_pure(c) {
            return None;
        }
        let c = if holds {
            c.clone()
        } else {
            ir::Expr::not(c.clone(), span)
        };
        out = Some(match out {
            Some(o) => ir::Expr::binary(ir::BinOp::And, o, c, Type::Scalar(ElemTy::Bool), span),
            None => c,
        });
    }
    out
}

/// `flag = value`.
fn set_flag(flag: VarId, value: bool, span: Span) -> ir::Stmt {
    ir::Stmt::new(
        StmtKind::Assign {
            dst: Place::Var(flag),
            value: ir::Expr::new(ExprKind::Bool(value), Type::Scalar(ElemTy::Bool), span),
        },
        span,
    )
}
