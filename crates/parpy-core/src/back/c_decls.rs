//! Declaration placement for the C-family writer: each local is declared
//! before the first statement of the innermost block that contains every
//! use of it (blocks numbered in the writer's visiting order).

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::visit::own_uses;
use crate::ir::{Function, Stmt, StmtKind, VarId, VarKind};

/// Where a local is declared: the block and the index of the first
/// statement of that block that touches it.
#[derive(Clone, Debug)]
struct DeclSite {
    path: Vec<(usize, usize)>,
}

/// The declarations of one function.
#[derive(Default)]
pub struct DeclPlan {
    /// (block id, statement index) -> locals to declare before it.
    pub decls: BTreeMap<(usize, usize), Vec<VarId>>,
    /// Every variable some statement reads.
    pub read: BTreeSet<VarId>,
}

/// Plans the declarations of `f`'s locals, leaving out `skip` (declared
/// elsewhere, such as device temporaries).
pub fn plan(f: &Function, skip: &BTreeSet<VarId>) -> DeclPlan {
    let mut sites: BTreeMap<VarId, DeclSite> = BTreeMap::new();
    let mut read = BTreeSet::new();
    let mut next_block = 0;
    let mut stack = vec![];
    plan_block(
        f,
        &f.body,
        &mut next_block,
        &mut stack,
        &mut sites,
        &mut read,
    );
    let mut decls: BTreeMap<(usize, usize), Vec<VarId>> = BTreeMap::new();
    for (v, site) in sites {
        if skip.contains(&v) {
            continue;
        }
        if let Some(&last) = site.path.last() {
            decls.entry(last).or_default().push(v);
        }
    }
    DeclPlan { decls, read }
}

fn plan_block(
    f: &Function,
    b: &[Stmt],
    next_block: &mut usize,
    stack: &mut Vec<(usize, usize)>,
    sites: &mut BTreeMap<VarId, DeclSite>,
    read: &mut BTreeSet<VarId>,
) {
    let id = *next_block;
    *next_block += 1;
    for (i, s) in b.iter().enumerate() {
        stack.push((id, i));
        let mut used = BTreeSet::new();
        shallow_uses(s, &mut used, read);
        for v in used {
            let var = f.var(v);
            if var.kind != VarKind::Local {
                continue;
            }
            let here = DeclSite {
                path: stack.clone(),
            };
            match sites.get_mut(&v) {
                None => {
                    sites.insert(v, here);
                }
                Some(site) => {
                    let mut common = vec![];
                    for (a, b) in site.path.iter().zip(&here.path) {
                        if a == b {
                            common.push(*a);
                        } else {
                            if a.0 == b.0 {
                                common.push((a.0, a.1.min(b.1)));
                            }
                            break;
                        }
                    }
                    if common.is_empty() {
                        // Different blocks at the top: cannot happen for
                        // one function body; keep the first site.
                        continue;
                    }
                    site.path = common;
                }
            }
        }
        match &s.kind {
            StmtKind::For(l) => plan_block(f, &l.body, next_block, stack, sites, read),
            StmtKind::While { body, .. } | StmtKind::OnDevice(body) => {
                plan_block(f, body, next_block, stack, sites, read)
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                plan_block(f, then_body, next_block, stack, sites, read);
                plan_block(f, else_body, next_block, stack, sites, read);
            }
            _ => {}
        }
        stack.pop();
    }
}

/// Variables a statement touches at its own level (not inside nested
/// blocks, which the planner visits itself) into `used`; those it reads,
/// arrays stored into included, into `read`.
fn shallow_uses(s: &Stmt, used: &mut BTreeSet<VarId>, read: &mut BTreeSet<VarId>) {
    let u = own_uses(s);
    used.extend(u.touched());
    read.extend(u.reads.into_iter().chain(u.stored));
}
