//! Declaration placement for the C-family writer: each local is declared
//! before the first statement of the innermost block that contains every
//! use of it (blocks numbered in the writer's visiting order), and outside
//! every sequential loop whose iteration may read the value an earlier
//! iteration left in it (`if c: t = x[i]` then `y[i] = t`: in C a local of
//! the loop's body starts each iteration with no value).

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::visit::{own_uses, reads_before_def};
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
    let mut loops = BTreeMap::new();
    let mut w = Walk {
        f,
        next_block: &mut next_block,
        stack: &mut stack,
        sites: &mut sites,
        read: &mut read,
        loops: &mut loops,
    };
    w.block(&f.body);
    let mut decls: BTreeMap<(usize, usize), Vec<VarId>> = BTreeMap::new();
    for (v, mut site) in sites {
        if skip.contains(&v) {
            continue;
        }
        // (outside the outermost loop an iteration of which may read what
        // an earlier one left)
        // (a scalar: a local array is a statement's temporary, written
        // whole before it is read)
        let scalar = !f.var(v).ty.is_array();
        let carried = (1..site.path.len()).find(|&k| {
            scalar
                && loops
                    .get(&site.path[k].0)
                    .is_some_and(|body| reads_before_def(body, v))
        });
        if let Some(k) = carried {
            site.path.truncate(k);
        }
        if let Some(&last) = site.path.last() {
            decls.entry(last).or_default().push(v);
        }
    }
    DeclPlan { decls, read }
}

/// The planner's walk over a function's blocks.
struct Walk<'a, 'f> {
    f: &'f Function,
    next_block: &'a mut usize,
    stack: &'a mut Vec<(usize, usize)>,
    sites: &'a mut BTreeMap<VarId, DeclSite>,
    read: &'a mut BTreeSet<VarId>,
    /// The blocks that are the bodies of sequential loops.
    loops: &'a mut BTreeMap<usize, &'f [Stmt]>,
}

impl<'f> Walk<'_, 'f> {
    fn block(&mut self, b: &'f [Stmt]) {
        let id = *self.next_block;
        *self.next_block += 1;
        for (i, s) in b.iter().enumerate() {
            self.stack.push((id, i));
            let mut used = BTreeSet::new();
            shallow_uses(s, &mut used, self.read);
            for v in used {
                let var = self.f.var(v);
                if var.kind != VarKind::Local {
                    continue;
                }
                let here = DeclSite {
                    path: self.stack.clone(),
                };
                match self.sites.get_mut(&v) {
                    None => {
                        self.sites.insert(v, here);
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
                StmtKind::For(l) => {
                    if l.par.is_none() {
                        self.loops.insert(*self.next_block, &l.body);
                    }
                    self.block(&l.body)
                }
                StmtKind::While { body, .. } => {
                    self.loops.insert(*self.next_block, body);
                    self.block(body)
                }
                StmtKind::OnDevice(body) => self.block(body),
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    self.block(then_body);
                    self.block(else_body);
                }
                _ => {}
            }
            self.stack.pop();
        }
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
