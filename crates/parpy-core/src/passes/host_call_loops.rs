//! After `schedule`: a parallel loop of the host body that calls host code
//! as a statement (a `parpy.callback`, or a `Target.Host` external, itself
//! or through the helpers it calls, whose value is not used) runs its
//! iterations in order in host code, as in ParPy: the call happens once per
//! iteration, in order, and the parallel loops inside that do not call host
//! code keep their parallelism (each becomes a kernel launched per
//! iteration). A host function whose value is used inside parallel code
//! stays an error (`check_parallel_structure`).

use crate::diag::Diagnostic;
use crate::ir::visit::{sub_blocks_mut, walk_stmts};
use crate::ir::{Block, ExprKind, Program, Stmt, StmtKind};
use crate::options::Options;
use crate::passes::util::host_external_in;
use crate::signature::ExtTarget;

pub fn run(p: &mut Program, _: &Options) -> Vec<Diagnostic> {
    let mut body = std::mem::take(&mut p.host.body);
    demote(p, &mut body);
    p.host.body = body;
    vec![]
}

fn demote(p: &Program, b: &mut Block) {
    for s in b.iter_mut() {
        if let StmtKind::For(l) = &mut s.kind {
            if l.par.is_some() && calls_host(p, &l.body) {
                l.par = None;
                l.wants_reduction = false;
            }
        }
        for body in sub_blocks_mut(s) {
            demote(p, body);
        }
    }
}

/// Does `b` (at any depth) hold a statement that calls host code?
fn calls_host(p: &Program, b: &[Stmt]) -> bool {
    let mut found = false;
    walk_stmts(b, &mut |s| found |= is_host_call(p, s));
    found
}

fn is_host_call(p: &Program, s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Callback(_) => true,
        StmtKind::Expr(e) => match &e.kind {
            ExprKind::External { ext, .. } => p
                .externals
                .get(*ext as usize)
                .is_some_and(|d| d.target == ExtTarget::Host),
            ExprKind::Call { func, .. } => {
                host_external_in(p, func.0 as usize, &mut vec![false; p.helpers.len()]).is_some()
            }
            _ => false,
        },
        _ => false,
    }
}
