//! Traversals of the IR and the variables statements and expressions use:
//! the shared analyses of the passes and the back ends.

use std::collections::BTreeSet;

use crate::ir::{Block, Expr, ExprKind, ForLoop, Place, Program, Stmt, StmtKind, VarId};

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
        StmtKind::Callback(c) => c.exprs(),
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
        StmtKind::Callback(c) => c.exprs_mut(),
        _ => vec![],
    }
}

/// Calls `f` on every statement of a block, nested blocks included,
/// outermost first.
pub fn walk_stmts(b: &[Stmt], f: &mut dyn FnMut(&Stmt)) {
    for s in b {
        f(s);
        sub_blocks(s).into_iter().for_each(|sub| walk_stmts(sub, f));
    }
}

/// The first statement of GPU host code `b` that moves data between the
/// host and the device (a host read or write of a device temporary,
/// `v = tmp[i]` / `tmp[i] = e`), calls back into Python or calls a host
/// external function, with what it
/// does: host code without one is a pure sequence of launches, which the
/// Cuda runtime can replay as a CUDA graph (`use_cuda_graphs`).
pub fn host_transfer(b: &[Stmt]) -> Option<(&Stmt, &'static str)> {
    for s in b {
        let why = match &s.kind {
            StmtKind::Callback(_) => Some("calls a Python callback"),
            StmtKind::Assign {
                dst: Place::Index { .. },
                ..
            } => Some("writes a device value from the host"),
            _ => {
                let mut why = None;
                for e in stmt_exprs(s) {
                    walk_exprs_of(e, &mut |e| {
                        why = why.or(match e.kind {
                            ExprKind::Index { .. } => Some("reads a device value back to the host"),
                            // (host code holds host externals only)
                            ExprKind::External { .. } => Some("calls a host external function"),
                            _ => None,
                        });
                        why.is_none()
                    });
                }
                why
            }
        };
        if let Some(w) = why {
            return Some((s, w));
        }
        if let Some(found) = sub_blocks(s).into_iter().find_map(|sub| host_transfer(sub)) {
            return Some(found);
        }
    }
    None
}

fn walk_exprs_of(e: &Expr, f: &mut dyn FnMut(&Expr) -> bool) {
    if f(e) {
        e.children().for_each(|c| walk_exprs_of(c, f));
    }
}

/// Is `s` a parallel loop, or does it hold one (at any depth)?
pub fn contains_par(s: &Stmt) -> bool {
    matches!(&s.kind, StmtKind::For(l) if l.par.is_some())
        || sub_blocks(s)
            .into_iter()
            .any(|b| b.iter().any(contains_par))
}

/// Does block `b` hold a parallel loop (at any depth)?
pub fn has_parallel_loop(b: &[Stmt]) -> bool {
    b.iter().any(contains_par)
}

/// The `break` and `continue` statements of `b` that act on the loop
/// around `b` (those not inside a loop nested in `b`), in order.
pub fn loop_exits(b: &[Stmt]) -> Vec<&Stmt> {
    fn go<'a>(b: &'a [Stmt], out: &mut Vec<&'a Stmt>) {
        for s in b {
            match &s.kind {
                StmtKind::Break | StmtKind::Continue => out.push(s),
                StmtKind::For(_) | StmtKind::While { .. } => {}
                _ => sub_blocks(s).into_iter().for_each(|sb| go(sb, out)),
            }
        }
    }
    let mut out = vec![];
    go(b, &mut out);
    out
}

/// The `return` statements of a block, nested blocks and loops included.
pub fn returns(b: &[Stmt]) -> Vec<&Stmt> {
    fn go<'a>(b: &'a [Stmt], out: &mut Vec<&'a Stmt>) {
        for s in b {
            if matches!(s.kind, StmtKind::Return(_)) {
                out.push(s);
            }
            sub_blocks(s).into_iter().for_each(|sb| go(sb, out));
        }
    }
    let mut out = vec![];
    go(b, &mut out);
    out
}

/// May a loop with body `body` stop before its last iteration (a `break`
/// of its own)?
pub fn breaks(body: &[Stmt]) -> bool {
    loop_exits(body)
        .iter()
        .any(|s| matches!(s.kind, StmtKind::Break))
}

/// Calls `f` on every expression of a block, nested blocks included,
/// outermost first; where `f` returns false the expression's operands are
/// skipped.
pub fn walk_exprs(b: &[Stmt], f: &mut dyn FnMut(&Expr) -> bool) {
    for s in b {
        stmt_exprs(s).into_iter().for_each(|e| walk_exprs_of(e, f));
        sub_blocks(s).into_iter().for_each(|sub| walk_exprs(sub, f));
    }
}

/// Does `e` call an external function or update atomically (effects a
/// reordering or a repetition of its evaluation would change)?
pub fn has_effects(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::External { .. } | ExprKind::Atomic { .. })
        || e.children().any(has_effects)
}

/// `e` has no effect and calls nothing (no helper, external function or
/// atomic update): evaluating it once more changes nothing.
pub fn pure(e: &Expr) -> bool {
    !matches!(
        e.kind,
        ExprKind::Call { .. } | ExprKind::External { .. } | ExprKind::Atomic { .. }
    ) && e.children().all(pure)
}

/// Calls `f(array, indices, is_store)` on every element access of a
/// block, nested blocks included: the stores (`a[i] = v`) and the reads
/// (`a[i]` in any expression).
pub fn for_each_access<'a>(b: &'a [Stmt], f: &mut dyn FnMut(VarId, &'a [Expr], bool)) {
    fn reads<'a>(e: &'a Expr, f: &mut dyn FnMut(VarId, &'a [Expr], bool)) {
        if let ExprKind::Index { array, indices } = &e.kind {
            f(*array, indices, false);
        }
        e.children().for_each(|c| reads(c, f));
    }
    for s in b {
        if let StmtKind::Assign {
            dst: Place::Index { array, indices },
            ..
        } = &s.kind
        {
            f(*array, indices, true);
        }
        stmt_exprs(s).into_iter().for_each(|e| reads(e, f));
        sub_blocks(s)
            .into_iter()
            .for_each(|sub| for_each_access(sub, f));
    }
}

/// Every array element `b` touches is one [`for_each_access`] shows: no
/// atomic update (it acts on other threads' elements too), no external
/// function, no helper given an array (either may touch any element).
pub fn accesses_explicit(b: &[Stmt]) -> bool {
    let mut ok = true;
    walk_exprs(b, &mut |e| {
        ok &= match &e.kind {
            ExprKind::Atomic { .. } | ExprKind::External { .. } => false,
            ExprKind::Call { args, .. } => args.iter().all(|a| !a.ty.is_array()),
            _ => true,
        };
        ok
    });
    ok
}

/// Every variable a block may write, nested blocks included: the scalars
/// it assigns (loop counters too), the arrays it stores into, and the
/// arrays it passes to a call (a helper, an external function or a
/// callback may write them).
pub fn written(b: &[Stmt]) -> BTreeSet<VarId> {
    let mut out = BTreeSet::new();
    walk_stmts(b, &mut |s| {
        let u = own_uses(s);
        out.extend(u.assigned);
        out.extend(u.stored);
    });
    walk_exprs(b, &mut |e| {
        match &e.kind {
            ExprKind::External { args, .. } => out.extend(crate::ir::call_arg_arrays(args)),
            ExprKind::Call { args, .. } => out.extend(args.iter().filter_map(|a| match &a.kind {
                ExprKind::Var(v) if a.ty.is_array() => Some(*v),
                _ => None,
            })),
            _ => {}
        }
        true
    });
    out
}

/// Whether each helper of `p` is called, directly or through other helpers,
/// from the host function or a kernel (a call in a branch that constant
/// folding removed leaves its helper uncalled).
pub fn called_helpers(p: &Program) -> Vec<bool> {
    let mut called = vec![false; p.helpers.len()];
    let mut todo: Vec<&Block> = vec![&p.host.body];
    todo.extend(p.kernels.iter().map(|k| &k.func.body));
    while let Some(b) = todo.pop() {
        walk_exprs(b, &mut |e| {
            if let ExprKind::Call { func, .. } = &e.kind {
                let i = func.0 as usize;
                if i < called.len() && !called[i] {
                    called[i] = true;
                    todo.push(&p.helpers[i].body);
                }
            }
            true
        });
    }
    called
}

/// The variables one statement touches itself (not in nested blocks).
#[derive(Default, Debug)]
pub struct OwnUses {
    /// Read by its expressions (indices, values, bounds, conditions), the
    /// accumulator of a reduction loop, the arguments of a launch.
    pub reads: BTreeSet<VarId>,
    /// Scalars it assigns: `v = ...`, a loop's counter, a reduction's
    /// accumulator.
    pub assigned: BTreeSet<VarId>,
    /// Arrays it stores into (`a[i] = ...`).
    pub stored: BTreeSet<VarId>,
}

impl OwnUses {
    /// Every variable touched: read, assigned or stored into.
    pub fn touched(&self) -> impl Iterator<Item = VarId> + '_ {
        self.reads
            .iter()
            .chain(&self.assigned)
            .chain(&self.stored)
            .copied()
    }
}

/// How a statement touches a variable at its own level ([`OwnUses`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Touch {
    Read,
    Assigned,
    Stored,
}

/// Calls `f` for each variable statement `s` touches at its own level (not
/// in nested blocks), and how: the one walk behind [`own_uses`] and the
/// allocation-free questions of [`flow`].
pub fn own_touches(s: &Stmt, f: &mut dyn FnMut(Touch, VarId)) {
    let reads = |e: &Expr, f: &mut dyn FnMut(Touch, VarId)| {
        expr_vars(e, &mut |v| f(Touch::Read, v));
    };
    match &s.kind {
        StmtKind::Assign { dst, value } => {
            match dst {
                Place::Var(v) => f(Touch::Assigned, *v),
                Place::Index { array, indices } => {
                    f(Touch::Stored, *array);
                    indices.iter().for_each(|i| reads(i, f));
                }
            }
            reads(value, f);
        }
        StmtKind::For(l) => {
            f(Touch::Assigned, l.var);
            reads(&l.lo, f);
            reads(&l.hi, f);
            if let Some(r) = &l.reduction {
                f(Touch::Read, r.acc);
                f(Touch::Assigned, r.acc);
            }
        }
        StmtKind::While { cond, .. } | StmtKind::If { cond, .. } => reads(cond, f),
        StmtKind::Return(Some(e)) | StmtKind::Expr(e) => reads(e, f),
        StmtKind::Return(None)
        | StmtKind::OnDevice(_)
        | StmtKind::Barrier
        | StmtKind::Break
        | StmtKind::Continue => {}
        StmtKind::Launch { args, .. } => args.iter().for_each(|a| f(Touch::Read, *a)),
        StmtKind::Callback(c) => {
            c.exprs().into_iter().for_each(|e| reads(e, f));
            for a in c.arrays() {
                f(Touch::Read, a);
                f(Touch::Stored, a);
            }
        }
    }
}

/// The variables statement `s` touches at its own level.
pub fn own_uses(s: &Stmt) -> OwnUses {
    let mut u = OwnUses::default();
    own_touches(s, &mut |t, v| {
        match t {
            Touch::Read => u.reads.insert(v),
            Touch::Assigned => u.assigned.insert(v),
            Touch::Stored => u.stored.insert(v),
        };
    });
    u
}

/// Whether statement `s` reads and whether it assigns `v` at its own level.
pub fn reads_assigns(s: &Stmt, v: VarId) -> (bool, bool) {
    let (mut read, mut assigned) = (false, false);
    own_touches(s, &mut |t, x| {
        if x == v {
            read |= t == Touch::Read;
            assigned |= t == Touch::Assigned;
        }
    });
    (read, assigned)
}

/// Adds every variable a statement reads or writes to `used`, and the scalar
/// variables it assigns to `assigned`, nested blocks included.
pub fn stmt_uses(s: &Stmt, used: &mut BTreeSet<VarId>, assigned: &mut BTreeSet<VarId>) {
    let u = own_uses(s);
    used.extend(u.touched());
    assigned.extend(u.assigned);
    for b in sub_blocks(s) {
        b.iter().for_each(|s| stmt_uses(s, used, assigned));
    }
}

/// Adds every variable an expression reads to `used`.
pub fn expr_uses(e: &Expr, used: &mut BTreeSet<VarId>) {
    expr_vars(e, &mut |v| {
        used.insert(v);
    });
}

/// Calls `f` for each variable `e` reads (repeats included).
pub fn expr_vars(e: &Expr, f: &mut dyn FnMut(VarId)) {
    match &e.kind {
        ExprKind::Var(v) | ExprKind::Index { array: v, .. } => f(*v),
        ExprKind::External { args, .. } => crate::ir::call_arg_arrays(args).for_each(&mut *f),
        _ => {}
    }
    e.children().for_each(|c| expr_vars(c, f));
}

/// Does `e` read variable `v`?
pub fn uses_var(e: &Expr, v: VarId) -> bool {
    match &e.kind {
        ExprKind::Var(x) | ExprKind::Index { array: x, .. } if *x == v => true,
        ExprKind::External { args, .. } if crate::ir::call_arg_arrays(args).any(|a| a == v) => true,
        _ => e.children().any(|c| uses_var(c, v)),
    }
}

/// A copy of `e` with every source span cleared.
pub fn unspanned(e: &Expr) -> Expr {
    stripped(e, false)
}

/// A copy of `e` without source spans; with `floats`, every float literal
/// 0.0 too.
fn stripped(e: &Expr, floats: bool) -> Expr {
    let mut c = e.clone();
    fn clear(e: &mut Expr, floats: bool) {
        e.span = Default::default();
        if let (true, ExprKind::Float(v)) = (floats, &mut e.kind) {
            *v = 0.0;
        }
        for k in e.children_mut() {
            clear(k, floats);
        }
    }
    clear(&mut c, floats);
    c
}

/// Structural equality of expressions, ignoring source spans. Float
/// literals are the same when their bits are (`-0.0` is not `0.0`) or
/// both are NaN: the derived `==` of `f64` would find a NaN literal unlike
/// itself (a float16 `np.quantile`, whose NaN case is such a literal, was
/// no `acc = max(acc, e)` reduction then) and `-0.0` like `0.0`.
pub fn same_expr(a: &Expr, b: &Expr) -> bool {
    fn floats(e: &Expr, out: &mut Vec<f64>) {
        if let ExprKind::Float(v) = e.kind {
            out.push(v);
        }
        e.children().for_each(|c| floats(c, out));
    }
    // (the float literals compared apart)
    if a.ty != b.ty || stripped(a, true) != stripped(b, true) {
        return false;
    }
    let (mut fa, mut fb) = (vec![], vec![]);
    floats(a, &mut fa);
    floats(b, &mut fb);
    fa.iter()
        .zip(&fb)
        .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

/// Structural equality of index lists, ignoring source spans.
pub fn same_exprs(a: &[Expr], b: &[Expr]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_expr(x, y))
}

/// Whether the iterations of a loop with this body may be run as SIMD
/// lanes: every read of an array the body writes is at one of the
/// subscripts the body writes it at (an iteration then reads only its own
/// elements, in order). A read at another subscript (`o[i, j, k % 2]`
/// beside `o[i, j, 1] = ...`) may be the element another lane writes, or
/// one this iteration wrote a statement earlier that the vectorizer no
/// longer orders before the read. Likewise two stores into one array are
/// at one subscript or at subscripts that differ in a constant position
/// (`o[i, 0]`, `o[i, 1]`): under `omp simd` the compiler no longer orders
/// stores that may reach one element (`o[i, j, 1] = a` beside `o[i, j, (w
/// + 1) % 8] = b` in a `while` loop kept `a` where Python stores `b` last).
pub fn lanes_independent(body: &[Stmt]) -> bool {
    fn stores<'a>(b: &'a [Stmt], out: &mut Vec<(VarId, &'a [Expr])>) {
        for s in b {
            if let StmtKind::Assign {
                dst: Place::Index { array, indices },
                ..
            } = &s.kind
            {
                out.push((*array, indices));
            }
            for sb in sub_blocks(s) {
                stores(sb, out);
            }
        }
    }
    let mut written = Vec::new();
    stores(body, &mut written);
    if written.is_empty() {
        return true;
    }
    let apart = |a: &[Expr], b: &[Expr]| {
        same_exprs(a, b)
            || a.iter().zip(b).any(|(x, y)| {
                matches!((&x.kind, &y.kind), (ExprKind::Int(p), ExprKind::Int(q)) if p != q)
            })
    };
    for (k, (array, ix)) in written.iter().enumerate() {
        if written[k + 1..]
            .iter()
            .any(|(other, iy)| other == array && !apart(ix, iy))
        {
            return false;
        }
    }
    let mut ok = true;
    walk_exprs(body, &mut |e| {
        if let ExprKind::Index { array, indices } = &e.kind {
            let mine: Vec<&[Expr]> = written
                .iter()
                .filter(|(a, _)| a == array)
                .map(|(_, ix)| *ix)
                .collect();
            if !mine.is_empty() && !mine.iter().any(|ix| same_exprs(ix, indices)) {
                ok = false;
            }
        }
        ok
    });
    ok
}

/// May some path through `b` read scalar `v` before assigning it? Sound
/// over the control flow: an `if` assigns only when both branches do, a
/// loop body may run zero times (it counts as an assignment after the
/// loop only when its bounds are constants that run it), and a read inside a loop body before the body assigns is a
/// read. A reduction loop over `v` reads it. A `break` / `continue` ends
/// the paths through the rest of its block.
pub fn reads_before_def(b: &[Stmt], v: VarId) -> bool {
    flow(b, v, false).read
}

/// Does loop `l` run at least once, its bounds constants?
pub fn runs_once(l: &ForLoop) -> bool {
    match (&l.lo.kind, &l.hi.kind) {
        (ExprKind::Int(lo), ExprKind::Int(hi)) => {
            (l.step > 0 && lo < hi) || (l.step < 0 && lo > hi)
        }
        _ => false,
    }
}

/// What the paths through a block do with one scalar `v`.
#[derive(Clone, Copy, Debug, Default)]
struct Flow {
    /// A read of `v` may come before any assignment.
    read: bool,
    /// Every path that reaches the end of the block assigned `v` (true when
    /// none reaches it).
    defined: bool,
    /// Some path leaves through a `break` / `continue` of the loop around
    /// the block with `v` not assigned.
    broke: bool,
    continued: bool,
}

/// Whether `e` computes from variables, elements and operators only (no
/// call, no check): evaluated again with none of the variables and arrays
/// it reads written in between, it gives the same value. Stricter than
/// [`pure`], which lets a check (an `assert`) through: a copy of `e` that
/// is evaluated too costs no second check.
pub fn is_pure(e: &Expr) -> bool {
    let here = matches!(
        e.kind,
        ExprKind::Bool(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Var(_)
            | ExprKind::Index { .. }
            | ExprKind::Unary { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Select { .. }
            | ExprKind::Convert { .. }
            | ExprKind::Math { .. }
    );
    here && e.children().all(is_pure)
}

/// Whether running `s` may change the value of the pure expression `e`:
/// it writes a variable or an array `e` reads.
pub fn may_change(s: &Stmt, e: &Expr) -> bool {
    let w = written(std::slice::from_ref(s));
    !w.is_empty() && {
        let mut hit = false;
        expr_vars(e, &mut |v| hit |= w.contains(&v));
        hit
    }
}

/// The conditions known to hold or fail at a point of a block, each where
/// an `if` on it assigned something on its true (or false) side: `(c,
/// holds)`, with `c` pure and unchanged since. An `if` on the same
/// condition again takes the side on which it was assigned.
pub type Known<'e> = Vec<(&'e Expr, bool)>;

/// Whether `known` says that the side `holds` of an `if` on `cond` runs
/// only where `c` took the side that assigned.
pub fn known_side(known: &[(&Expr, bool)], cond: &Expr, holds: bool) -> bool {
    known.iter().any(|&(c, h)| h == holds && same_expr(c, cond))
}

/// [`Flow`] through `b`, entered with `v` assigned (`defined`) or not.
fn flow(b: &[Stmt], v: VarId, defined: bool) -> Flow {
    flow_known(b, v, defined, &[])
}

/// [`flow`], with `v` also assigned where the conditions of `known` take
/// their side.
fn flow_known<'e>(b: &'e [Stmt], v: VarId, mut defined: bool, known: &[(&'e Expr, bool)]) -> Flow {
    let mut out = Flow::default();
    let mut known: Known<'e> = known.to_vec();
    for s in b {
        let (reads, assigns) = reads_assigns(s, v);
        if !defined && reads {
            out.read = true;
            return out;
        }
        match &s.kind {
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                let on = |holds| defined || known_side(&known, cond, holds);
                let t = flow_known(then_body, v, on(true), &known);
                let e = flow_known(else_body, v, on(false), &known);
                if t.read || e.read {
                    out.read = true;
                    return out;
                }
                out.broke |= t.broke || e.broke;
                out.continued |= t.continued || e.continued;
                if !defined && t.defined != e.defined && is_pure(cond) && !may_change(s, cond) {
                    // (a side that leaves through a `break` or `continue`
                    // counts as assigning: no path goes on from it)
                    known.push((cond, t.defined));
                }
                defined = defined || (t.defined && e.defined);
            }
            StmtKind::For(_) | StmtKind::While { .. } | StmtKind::OnDevice(_) => {
                // the loop's own `break` / `continue` stay inside it
                let inner = flow(sub_blocks(s)[0], v, defined);
                if inner.read {
                    out.read = true;
                    return out;
                }
                // a loop that runs at least once (constant bounds) assigns
                // what every path through its body assigns
                if let StmtKind::For(l) = &s.kind {
                    if runs_once(l) && inner.defined && !inner.broke && !inner.continued {
                        defined = true;
                    }
                }
                // a `with parpy.gpu:` block runs once: its assignments count
                if matches!(s.kind, StmtKind::OnDevice(_)) {
                    out.broke |= inner.broke;
                    out.continued |= inner.continued;
                    defined = inner.defined;
                }
                // `while True:` ends only at a `break`: `v` is assigned
                // after it when every `break` assigned it first
                if let StmtKind::While { cond, .. } = &s.kind {
                    if matches!(cond.kind, ExprKind::Bool(true)) && !inner.broke {
                        defined = true;
                    }
                }
            }
            StmtKind::Break | StmtKind::Continue => {
                let jump = if matches!(s.kind, StmtKind::Break) {
                    &mut out.broke
                } else {
                    &mut out.continued
                };
                *jump |= !defined;
                out.defined = true;
                return out;
            }
            _ => {}
        }
        known.retain(|&(c, _)| !may_change(s, c));
        // a loop counter is assigned by its loop only inside the body
        if assigns && !matches!(s.kind, StmtKind::For(_)) {
            defined = true;
        }
    }
    out.defined = defined;
    out
}

/// May the value scalar `v` holds when loop `me` (somewhere in `body`, a
/// function's body) ends be read afterwards? What runs after `me`: the
/// rest of each enclosing block, innermost first; at the end of an
/// enclosing sequential loop's body (or at its `continue`) its body again
/// and, since any iteration may be the last, what follows the loop; at its
/// `break`, what follows the loop (a parallel loop's other iterations are
/// other threads, which its own check covers).
pub fn live_after_loop(body: &[Stmt], me: &ForLoop, v: VarId) -> bool {
    /// Where the paths on which `v` still holds `me`'s value go.
    #[derive(Default)]
    struct Open {
        /// To the end of the block.
        end: bool,
        /// To a `break` / `continue` of the loop around the block.
        broke: bool,
        continued: bool,
    }
    impl Open {
        fn any(&self) -> bool {
            self.end || self.broke || self.continued
        }
    }
    /// `None` when `me` is not in `b`; `Some(Err(()))` when a read may
    /// follow; `Some(Ok(open))` otherwise.
    fn go(b: &[Stmt], me: &ForLoop, v: VarId) -> Option<Result<Open, ()>> {
        for (k, s) in b.iter().enumerate() {
            let is_me = matches!(&s.kind, StmtKind::For(l) if std::ptr::eq(&**l, me));
            let mut open = Open {
                end: true,
                ..Open::default()
            };
            if !is_me {
                let inner = sub_blocks(s).into_iter().find_map(|sb| go(sb, me, v));
                let inner = match inner {
                    None => continue,
                    Some(Err(())) => return Some(Err(())),
                    Some(Ok(open)) => open,
                };
                let again = match &s.kind {
                    StmtKind::For(l) if l.par.is_none() => Some(&l.body),
                    StmtKind::While { body, .. } => Some(body),
                    _ => None,
                };
                open = match (again, &s.kind) {
                    (Some(body), _) => {
                        // the body again, then (or at a `break`) the loop
                        // may end
                        if (inner.end || inner.continued) && flow(body, v, false).read {
                            return Some(Err(()));
                        }
                        Open {
                            end: inner.any(),
                            ..Open::default()
                        }
                    }
                    // a parallel loop: the iteration ends
                    (None, StmtKind::For(_)) => Open {
                        end: inner.any(),
                        ..Open::default()
                    },
                    // `if` / `with parpy.gpu:`: the jumps go on outwards
                    (None, _) => inner,
                };
            }
            if !open.end {
                return Some(Ok(open));
            }
            let rest = flow(&b[k + 1..], v, false);
            if rest.read {
                return Some(Err(()));
            }
            return Some(Ok(Open {
                end: !rest.defined,
                broke: open.broke || rest.broke,
                continued: open.continued || rest.continued,
            }));
        }
        None
    }
    matches!(go(body, me, v), Some(Err(())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::BinOp;
    use crate::ir::Type;
    use crate::passes::testutil::*;
    use crate::types::ElemTy;

    fn jump(brk: bool) -> Stmt {
        let k = if brk {
            StmtKind::Break
        } else {
            StmtKind::Continue
        };
        Stmt::new(k, sp())
    }

    fn when(cond: Expr, then_body: Vec<Stmt>) -> Stmt {
        Stmt::new(
            StmtKind::If {
                cond,
                then_body,
                else_body: vec![],
            },
            sp(),
        )
    }

    #[test]
    fn same_expr_takes_a_nan_literal_for_itself_and_tells_the_zeros_apart() {
        let f = |v: f64| {
            let k = Expr::new(ExprKind::Float(v), Type::Scalar(ElemTy::F64), sp());
            bin(
                BinOp::Add,
                k,
                Expr::new(ExprKind::Float(1.5), Type::Scalar(ElemTy::F64), sp()),
            )
        };
        assert!(same_expr(&f(f64::NAN), &f(f64::NAN)));
        assert!(same_expr(&f(-0.0), &f(-0.0)));
        assert!(!same_expr(&f(0.0), &f(-0.0)));
        assert!(!same_expr(&f(f64::NAN), &f(0.0)));
        assert!(!same_expr(&f(2.0), &f(3.0)));
    }

    #[test]
    fn loop_exits_leave_nested_loops_alone() {
        let mut b = FnBuilder::new("f");
        let (i, j) = (b.index_var("i"), b.index_var("j"));
        let inner = for_loop(j, 0, 4, &[], vec![jump(true)]);
        let body = vec![
            for_stmt(inner),
            when(bin(BinOp::Lt, var_e(&b.f, i), int(2)), vec![jump(false)]),
        ];
        let exits = loop_exits(&body);
        assert_eq!(exits.len(), 1);
        assert!(matches!(exits[0].kind, StmtKind::Continue));
        assert!(!breaks(&body));
        assert!(breaks(&[when(int(1), vec![jump(true)])]));
    }

    #[test]
    fn a_jump_ends_the_paths_through_its_block() {
        let mut b = FnBuilder::new("f");
        let (i, t, u) = (
            b.index_var("i"),
            b.local("t", ElemTy::I64),
            b.local("u", ElemTy::I64),
        );
        let c = bin(BinOp::Lt, var_e(&b.f, i), int(2));
        // `if c: continue` then `t = 1; u = t`: t is assigned first
        let body = vec![
            when(c.clone(), vec![jump(false)]),
            assign(t, int(1)),
            assign(u, var_e(&b.f, t)),
        ];
        assert!(!reads_before_def(&body, t));
        // a read on the path that jumps still counts
        let body = vec![
            when(c.clone(), vec![assign(u, var_e(&b.f, t)), jump(true)]),
            assign(t, int(1)),
        ];
        assert!(reads_before_def(&body, t));
        // `if c: t = 1 else: continue` assigns t on every path that goes on
        let body = vec![
            Stmt::new(
                StmtKind::If {
                    cond: c,
                    then_body: vec![assign(t, int(1))],
                    else_body: vec![jump(false)],
                },
                sp(),
            ),
            assign(u, var_e(&b.f, t)),
        ];
        assert!(!reads_before_def(&body, t));
    }

    /// `for s in 0..4 { [t = 5]; for i par { t = x[i] }; [if s == 1: break];
    /// [t = 0] }; y[0] = t`: is `t` live after the parallel loop?
    fn live(assign_first: bool, with_break: bool, assign_last: bool) -> bool {
        let mut b = FnBuilder::new("f");
        let x = b.array("x", ElemTy::I64, &[8]);
        let y = b.array("y", ElemTy::I64, &[1]);
        let (s, i, t) = (
            b.index_var("s"),
            b.index_var("i"),
            b.local("t", ElemTy::I64),
        );
        let mut me = for_loop(
            i,
            0,
            8,
            &["i"],
            vec![assign(t, idx(&b.f, x, vec![var_e(&b.f, i)]))],
        );
        me.par = par(8);
        let mut body = vec![];
        if assign_first {
            body.push(assign(t, int(5)));
        }
        body.push(for_stmt(me));
        if with_break {
            body.push(when(
                bin(BinOp::Eq, var_e(&b.f, s), int(1)),
                vec![jump(true)],
            ));
        }
        if assign_last {
            body.push(assign(t, int(0)));
        }
        b.push(for_stmt(for_loop(s, 0, 4, &[], body)));
        b.push(store(y, vec![int(0)], var_e(&b.f, t)));
        let StmtKind::For(outer) = &b.f.body[0].kind else {
            unreachable!()
        };
        let me = outer
            .body
            .iter()
            .find_map(|s| match &s.kind {
                StmtKind::For(l) => Some(&**l),
                _ => None,
            })
            .unwrap();
        live_after_loop(&b.f.body, me, t)
    }

    #[test]
    fn a_break_takes_the_value_past_the_code_that_assigns_it() {
        assert!(!live(false, false, true));
        assert!(live(false, true, true));
        assert!(live(true, true, true));
    }

    #[test]
    fn any_iteration_of_a_sequential_loop_may_be_its_last() {
        // the next iteration assigns `t` first, but after the last one the
        // code after the loop reads the parallel loop's value
        assert!(live(true, false, false));
        assert!(live(false, false, false));
    }
}
