//! Array indices made safe: each index the range analysis (`ir::range`)
//! proves inside its dimension is left as it is (no cost); any other
//! becomes a run-time check ([`ExprKind::CheckIndex`]) that records the
//! first failure in a record array the caller reads after the call (an
//! `IndexError` in Python). Negative indices were already made to count
//! from the end by sema (`ir::range` knows that form). With `bounds_check`
//! off (and on Metal, which has no run-time record yet) nothing is checked.
//!
//! Sema's `assert` statements ([`ExprKind::Assert`]) become checks of
//! `cond ? 0 : 1` against size 1 whose site is an assertion
//! ([`SiteKind::Assert`]: an `AssertionError` in Python), with
//! `bounds_check` off too; Metal code leaves them out.
//!
//! Runs before outlining: loops still have their bounds, and the record,
//! a host parameter, reaches kernels as any array they use. Helpers that
//! check get the record as a last parameter, passed at every call.

use std::collections::BTreeMap;

use crate::ir::range::{negative_wrap, unwrapped, var_plus_const};
use crate::ir::range::{Interval, Ranges};
use crate::ir::{
    record_type, BinOp, Block, Bounds, BoundsSite, Expr, ExprKind, ForLoop, Function, Place,
    Program, SiteKind, Stmt, StmtKind, Type, UnOp, Var, VarId, VarKind,
};
use crate::options::{Backend, Options};
use crate::passes::util::bin;
use crate::types::ElemTy;

pub fn run(p: &mut Program, options: &Options) {
    let checks = options.bounds_check && options.backend != Backend::Metal;
    if options.backend == Backend::Metal {
        for f in std::iter::once(&mut p.host).chain(&mut p.helpers) {
            strip_asserts(&mut f.body);
        }
    }
    let mut sites = vec![];
    let version = options.backend == Backend::Cpu;
    let mut host_rec = guard_function(&mut p.host, checks, version, &mut sites);
    let mut recs: Vec<Option<VarId>> = p
        .helpers
        .iter_mut()
        .map(|h| guard_function(h, checks, version, &mut sites))
        .collect();
    // A function that calls a helper with a record passes its own.
    loop {
        let takes = record_arity(&p.helpers, &recs);
        let mut changed = false;
        for (h, rec) in p.helpers.iter_mut().zip(recs.iter_mut()) {
            changed |= pass_record(h, rec, &takes);
        }
        let takes = record_arity(&p.helpers, &recs);
        changed |= pass_record(&mut p.host, &mut host_rec, &takes);
        if !changed {
            break;
        }
    }
    // what checked code does after a failure (`check_exits`)
    let takes: Vec<bool> = recs.iter().map(Option::is_some).collect();
    let gpu = options.backend != Backend::Cpu;
    let functions = std::iter::once((&mut p.host, host_rec, gpu))
        .chain(p.helpers.iter_mut().zip(recs).map(|(h, r)| (h, r, false)));
    let cpu = options.backend == Backend::Cpu;
    for (f, rec, host) in functions {
        if let Some(r) = rec {
            super::check_exits::apply(&mut f.body, r, &takes, host, cpu);
        }
    }
    p.bounds = host_rec.map(|record| Bounds { record, sites });
}

/// For each helper that takes the record (its last parameter): its number
/// of parameters.
fn record_arity(helpers: &[Function], recs: &[Option<VarId>]) -> Vec<Option<usize>> {
    helpers
        .iter()
        .zip(recs)
        .map(|(h, r)| r.map(|_| h.params.len()))
        .collect()
}

/// Adds the record parameter to `f`.
fn add_record(f: &mut Function) -> VarId {
    let v = f.add_var(Var {
        name: "bounds".into(),
        ty: record_type(),
        kind: VarKind::Param,
        value: None,
        span: f.span,
    });
    f.params.push(v);
    v
}

/// Appends the record to the calls of `f` to helpers that take one (and
/// gives `f` a record when it needs one). True when something changed.
fn pass_record(f: &mut Function, rec: &mut Option<VarId>, takes: &[Option<usize>]) -> bool {
    let mut calls = 0;
    count_calls(&f.body, takes, &mut calls);
    if calls == 0 {
        return false;
    }
    let r = *rec.get_or_insert_with(|| add_record(f));
    let mut body = std::mem::take(&mut f.body);
    let arg = Expr::var(r, record_type(), f.span);
    for_each_expr(&mut body, &mut |e| append_record(e, takes, &arg));
    f.body = body;
    true
}

fn count_calls(b: &Block, takes: &[Option<usize>], n: &mut usize) {
    crate::ir::visit::walk_exprs(b, &mut |e| {
        if let ExprKind::Call { func, args } = &e.kind {
            if needs_record(func.0 as usize, args, takes) {
                *n += 1;
            }
        }
        true
    });
}

/// A call of a helper that takes the record and is not given it yet.
fn needs_record(h: usize, args: &[Expr], takes: &[Option<usize>]) -> bool {
    takes.get(h).copied().flatten() == Some(args.len() + 1)
}

fn append_record(e: &mut Expr, takes: &[Option<usize>], arg: &Expr) {
    for c in e.children_mut() {
        append_record(c, takes, arg);
    }
    if let ExprKind::Call { func, args } = &mut e.kind {
        if needs_record(func.0 as usize, args, takes) {
            args.push(arg.clone());
        }
    }
}

fn for_each_expr(b: &mut Block, f: &mut dyn FnMut(&mut Expr)) {
    for s in b.iter_mut() {
        for e in crate::ir::visit::stmt_exprs_mut(s) {
            f(e);
        }
        for sub in crate::ir::visit::sub_blocks_mut(s) {
            for_each_expr(sub, f);
        }
    }
}

/// Guards the indices of `f`; returns its record parameter when some
/// check needs one.
fn guard_function(
    f: &mut Function,
    checks: bool,
    version: bool,
    sites: &mut Vec<BoundsSite>,
) -> Option<VarId> {
    let mut assigned = BTreeMap::new();
    count_assignments(&f.body, &mut assigned);
    let mut env = Ranges::default();
    // parameters that keep their value: their type's range, narrowed by
    // the conditions around a use
    for &p in &f.params {
        let v = f.var(p);
        if let (Type::Scalar(t), None, false) = (&v.ty, v.value, assigned.contains_key(&p)) {
            if let Some(r) = Interval::of_type(*t) {
                env.set(p, r);
            }
        }
    }
    let mut body = std::mem::take(&mut f.body);
    let mut g = Guard {
        f,
        checks,
        version,
        in_version: false,
        sites,
        assigned,
        record: VarId(f.vars.len() as u32),
        used: false,
        loops: vec![],
        cond_depth: 0,
    };
    g.block(&mut body, &mut env);
    let used = g.used;
    let record = g.record;
    f.body = body;
    if used {
        let r = add_record(f);
        debug_assert_eq!(r, record);
        Some(r)
    } else {
        None
    }
}

fn count_assignments(b: &Block, out: &mut BTreeMap<VarId, usize>) {
    for s in b {
        if let StmtKind::Assign {
            dst: Place::Var(v), ..
        } = &s.kind
        {
            *out.entry(*v).or_default() += 1;
        }
        if let StmtKind::For(l) = &s.kind {
            if let Some(r) = l.reduction {
                *out.entry(r.acc).or_default() += 2;
            }
        }
        for sub in crate::ir::visit::sub_blocks(s) {
            count_assignments(sub, out);
        }
    }
}

struct Guard<'a> {
    f: &'a Function,
    checks: bool,
    /// Loop versioning (`Guard::versioned`) is allowed (Cpu; with checks
    /// off it drops the negative-index wraps where the bounds allow).
    version: bool,
    /// Inside a loop that is being versioned (its loops are not).
    in_version: bool,
    sites: &'a mut Vec<BoundsSite>,
    /// How often each variable is assigned.
    assigned: BTreeMap<VarId, usize>,
    /// The record parameter the function gets if a check needs it.
    record: VarId,
    used: bool,
    /// The `for` loops around the current statement, outermost first.
    loops: Vec<Enclosing>,
    /// How many conditionals (`if`, `while`, a branch of `a if c else b`,
    /// the right side of `and`/`or`) are around the current point.
    cond_depth: usize,
}

/// A loop around the current point, and the checks hoisted in front of it.
struct Enclosing {
    var: VarId,
    lo: Expr,
    hi: Expr,
    /// Step 1 and bounds that keep their value in the function: the
    /// counter's last value is `hi - 1`, known before the loop.
    hoistable: bool,
    cond_depth: usize,
    /// Conditions (bool) that must hold to run the loop: the hoisted checks.
    checks: Vec<Expr>,
    /// The (last index, size) of each hoisted check.
    hoisted: Vec<(Expr, i64)>,
}

/// Removes the `assert` statements of `b` (Metal: no run-time record).
fn strip_asserts(b: &mut Block) {
    b.retain(
        |s| !matches!(&s.kind, StmtKind::Expr(e) if matches!(e.kind, ExprKind::Assert { .. })),
    );
    for s in b {
        crate::ir::visit::sub_blocks_mut(s)
            .into_iter()
            .for_each(strip_asserts);
    }
}

/// Does every path through `b` end in a `break`, `continue` or `return`?
fn always_leaves(b: &[Stmt]) -> bool {
    match b.last().map(|s| &s.kind) {
        Some(StmtKind::Break | StmtKind::Continue | StmtKind::Return(_)) => true,
        Some(StmtKind::If {
            then_body,
            else_body,
            ..
        }) => always_leaves(then_body) && always_leaves(else_body),
        _ => false,
    }
}

fn has_return(b: &[Stmt]) -> bool {
    let mut ret = false;
    crate::ir::visit::walk_stmts(b, &mut |s| ret |= matches!(s.kind, StmtKind::Return(_)));
    ret
}

/// May a path through `b` leave it early: a `break` / `continue` of the
/// loop around it, or a `return`?
fn may_leave(b: &[Stmt]) -> bool {
    has_return(b) || !crate::ir::visit::loop_exits(b).is_empty()
}

impl Guard<'_> {
    fn block(&mut self, b: &mut Block, env: &mut Ranges) {
        // after a statement that may leave the block, the rest runs only
        // on some paths: conditional (no hoisting past it)
        let depth_before = self.cond_depth;
        for s in b.iter_mut() {
            self.stmt(s, env);
            if let StmtKind::If {
                cond,
                then_body,
                else_body,
            } = &s.kind
            {
                // `if c: continue` / `if c: ... else: break`: the rest
                // knows which side of `c` it is on
                if always_leaves(then_body) {
                    env.assume_not(self.f, cond);
                }
                if always_leaves(else_body) {
                    env.assume(self.f, cond);
                }
            }
            if self.cond_depth == depth_before && may_leave(std::slice::from_ref(s)) {
                self.cond_depth += 1;
            }
        }
        self.cond_depth = depth_before;
    }

    fn stmt(&mut self, s: &mut Stmt, env: &mut Ranges) {
        match &mut s.kind {
            StmtKind::Assign { dst, value } => {
                self.expr(value, env);
                match dst {
                    Place::Index { array, indices } => self.indices(*array, indices, env),
                    Place::Var(v) => {
                        let var = self.f.var(*v);
                        if var.kind == VarKind::Local && self.assigned.get(v) == Some(&1) {
                            if let Some(r) = env.expr(self.f, value) {
                                env.set(*v, r);
                            }
                        }
                    }
                }
            }
            StmtKind::For(l) => {
                self.expr(&mut l.lo, env);
                self.expr(&mut l.hi, env);
                // the fast version is planned on the body as it was
                let fast = self.versioned(l, env);
                // no versioning inside a versioned loop (at most two copies
                // of any loop)
                let outer = self.in_version;
                self.in_version |= fast.is_some();
                let done = self.for_body(l, env, None);
                let span = s.span;
                let lp = std::mem::replace(&mut s.kind, StmtKind::Barrier);
                s.kind = only_if(done, lp, span);
                if let Some((cond, mut fl, counter)) = fast {
                    // the copy's own hoisted checks (of the loops inside it)
                    // guard it as they guard the checked loop
                    let done = self.for_body(&mut fl, env, Some(counter));
                    let slow = std::mem::replace(&mut s.kind, StmtKind::Barrier);
                    s.kind = StmtKind::If {
                        cond,
                        then_body: vec![Stmt::new(only_if(done, StmtKind::For(fl), span), span)],
                        else_body: vec![Stmt::new(slow, span)],
                    };
                }
                self.in_version = outer;
            }
            StmtKind::While { cond, body } => {
                self.expr(cond, env);
                self.cond_depth += 1;
                self.block(body, &mut env.clone());
                self.cond_depth -= 1;
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                self.expr(cond, env);
                let mut then_env = env.clone();
                then_env.assume(self.f, cond);
                self.cond_depth += 1;
                self.block(then_body, &mut then_env);
                let mut else_env = env.clone();
                else_env.assume_not(self.f, cond);
                self.block(else_body, &mut else_env);
                self.cond_depth -= 1;
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => self.expr(e, env),
            StmtKind::Callback(c) => {
                for a in c.args.iter_mut() {
                    match a {
                        crate::ir::CallArg::Array { array, prefix } => {
                            self.indices(*array, prefix, env)
                        }
                        crate::ir::CallArg::Scalar(e) => self.expr(e, env),
                    }
                }
            }
            StmtKind::OnDevice(body) => self.block(body, &mut env.clone()),
            StmtKind::Return(None)
            | StmtKind::Launch { .. }
            | StmtKind::Barrier
            | StmtKind::Break
            | StmtKind::Continue => {}
        }
    }

    /// The number of `site` in the record's table (one entry per distinct
    /// site: a versioned loop checks some indices in both copies).
    fn site(&mut self, site: BoundsSite) -> u32 {
        self.used = true;
        let at = match self.sites.iter().position(|s| *s == site) {
            Some(at) => at,
            None => {
                self.sites.push(site);
                self.sites.len() - 1
            }
        };
        at as u32
    }

    /// Guards the body of loop `l` (its bounds already guarded), with the
    /// counter's range `counter` when given (else the one its bounds
    /// give); returns the checks hoisted in front of it.
    fn for_body(&mut self, l: &mut ForLoop, env: &Ranges, counter: Option<Interval>) -> Vec<Expr> {
        let mut inner = env.clone();
        if !self.assigned.contains_key(&l.var) {
            if let Some(r) = counter.or_else(|| env.loop_counter(self.f, l)) {
                inner.set(l.var, r);
            }
        }
        // a loop that may stop early need not reach the last
        // index
        let stops_early = crate::ir::visit::breaks(&l.body) || has_return(&l.body);
        let hoistable = l.step == 1
            && !stops_early
            && !self.assigned.contains_key(&l.var)
            && self.invariant(&l.lo)
            && self.invariant(&l.hi);
        self.loops.push(Enclosing {
            var: l.var,
            lo: l.lo.clone(),
            hi: l.hi.clone(),
            hoistable,
            cond_depth: self.cond_depth,
            checks: vec![],
            hoisted: vec![],
        });
        self.block(&mut l.body, &mut inner);
        self.loops.pop().map(|e| e.checks).unwrap_or_default()
    }

    /// Loop versioning (Cpu): a sequential loop (at most 32
    /// statements, not inside another versioned loop) whose bounds are
    /// only known at run time (`for k in range(rows[i], rows[i + 1])` of
    /// CSR SpMV) and whose body indexes arrays with `k + c` gets a copy
    /// without those checks, run when its bounds keep every such index in
    /// range: `if lo >= A and hi <= B + 1: fast else: checked`. Returns the
    /// condition, the unguarded copy and the counter's range in it.
    fn versioned(&self, l: &ForLoop, env: &Ranges) -> Option<(Expr, Box<ForLoop>, Interval)> {
        const MAX_STMTS: usize = 32;
        let mut stmts = 0;
        crate::ir::visit::walk_stmts(&l.body, &mut |_| stmts += 1);
        let sequential = l.par.is_none() && l.reduction.is_none() && !l.unroll;
        if !self.version
            || self.in_version
            || !sequential
            || stmts > MAX_STMTS
            || l.step != 1
            || self.assigned.contains_key(&l.var)
            || !crate::ir::visit::pure(&l.lo)
            || !crate::ir::visit::pure(&l.hi)
        {
            return None;
        }
        // the counter values for which every `k + c` index is in range
        let mut need = Interval::new(i64::MIN as i128, i64::MAX as i128);
        // an access the fast copy makes cheaper: any (a check goes), or
        // with checks off one with a negative-index wrap (the wrap goes)
        let mut any = false;
        let checks = self.checks;
        crate::ir::visit::for_each_access(&l.body, &mut |array, indices, _| {
            let Type::Array { shape, .. } = &self.f.var(array).ty else {
                return;
            };
            for (ix, &n) in indices.iter().zip(shape) {
                let inner = unwrapped(ix, n);
                if let Some((v, c)) = var_plus_const(inner.unwrap_or(ix)) {
                    if v == l.var {
                        need = Interval::new(need.lo.max(-c), need.hi.min(n as i128 - 1 - c));
                        any |= checks || inner.is_some();
                    }
                }
            }
        });
        let known = env.loop_counter(self.f, l);
        if !any || need.lo > need.hi || known.is_some_and(|r| r.within(need.lo, need.hi)) {
            return None;
        }
        // bounds that never keep every index in range (`np.roll`'s wrapped
        // `j - 1` over all of `0..n`): the fast copy would never run
        let never = |e: &Expr, bad: &dyn Fn(Interval) -> bool| env.expr(self.f, e).is_some_and(bad);
        if never(&l.lo, &|r| r.hi < need.lo) || never(&l.hi, &|r| r.lo > need.hi + 1) {
            return None;
        }
        // bounds that keep their value with a first counter value proven
        // in range: `hoist` checks the last index once, in front of the
        // loop, which costs less than a second copy
        let first_proven = env
            .expr(self.f, &l.lo)
            .is_some_and(|r| r.within(need.lo, need.hi));
        if self.invariant(&l.lo) && self.invariant(&l.hi) && first_proven {
            return None;
        }
        let (lo, hi) = (
            i64::try_from(need.lo).ok()?,
            i64::try_from(need.hi).ok()?.checked_add(1)?,
        );
        let ty = l.lo.elem();
        let cond = bin(
            BinOp::And,
            bin(BinOp::Ge, l.lo.clone(), Expr::int(lo, ty, l.lo.span)),
            bin(BinOp::Le, l.hi.clone(), Expr::int(hi, ty, l.hi.span)),
        );
        let counter = match known {
            Some(r) => Interval::new(r.lo.max(need.lo), r.hi.min(need.hi)),
            None => need,
        };
        Some((cond, Box::new(l.clone()), counter))
    }

    /// The one variable `ix` reads, when it is the counter of an enclosing
    /// loop.
    fn sole_counter(&self, ix: &Expr) -> Option<VarId> {
        let mut vars = vec![];
        let mut other = false;
        let mut walk = vec![ix];
        while let Some(e) = walk.pop() {
            match &e.kind {
                ExprKind::Var(v) => vars.push(*v),
                ExprKind::Int(_) | ExprKind::Binary { .. } => {}
                _ => other = true,
            }
            walk.extend(e.children());
        }
        vars.sort_by_key(|v| v.0);
        vars.dedup();
        match (other, vars.as_slice()) {
            (false, [v]) if self.loops.iter().any(|l| l.var == *v) => Some(*v),
            _ => None,
        }
    }

    /// `e` has the same value everywhere in the function: literals and
    /// parameters that are never assigned.
    fn invariant(&self, e: &Expr) -> bool {
        let here = match &e.kind {
            ExprKind::Int(_) | ExprKind::Bool(_) => true,
            ExprKind::Var(v) => {
                self.f.var(*v).kind == VarKind::Param && !self.assigned.contains_key(v)
            }
            // (a uint64 bound `range(N)` is `N > INT64_MAX ? INT64_MAX :
            // N`, a select)
            ExprKind::Unary { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Convert { .. }
            | ExprKind::Select { .. } => true,
            _ => false,
        };
        here && e.children().all(|c| self.invariant(c))
    }

    fn expr(&mut self, e: &mut Expr, env: &Ranges) {
        if let ExprKind::Assert {
            cond,
            message,
            exception,
            index,
            values,
            types,
            printf,
        } = &mut e.kind
        {
            self.expr(cond, env);
            values.iter_mut().for_each(|v| self.expr(v, env));
            // `0 <= i < n` of an index (a reshaped view's): the check of
            // `i` against `n`, the index recorded as an array index's is
            if let Some((i, n)) = index.as_ref().and_then(|_| index_bounds(cond)) {
                let of = index.take().expect("an index");
                let site = self.site(BoundsSite {
                    kind: SiteKind::Index {
                        array: of.array,
                        axis: of.axis,
                        shape: of.shape,
                    },
                    span: e.span,
                });
                let span = e.span;
                let ty = i.ty.clone();
                *e = Expr::new(
                    ExprKind::CheckIndex {
                        arg: Box::new(i),
                        size: n,
                        site,
                        record: Some(Box::new(Expr::var(self.record, record_type(), span))),
                        wrap: false,
                    },
                    ty,
                    span,
                );
                return;
            }
            let site = self.site(BoundsSite {
                kind: SiteKind::Assert {
                    message: message.take(),
                    exception: std::mem::take(exception),
                    values: std::mem::take(types),
                    printf: *printf,
                },
                span: e.span,
            });
            let span = e.span;
            let int = Type::Scalar(ElemTy::I64);
            let cond = std::mem::replace(&mut **cond, Expr::int(0, ElemTy::I64, span));
            let record = || Box::new(Expr::var(self.record, record_type(), span));
            // the values of the message noted only when it fails
            let failing = match std::mem::take(values) {
                v if v.is_empty() => Expr::int(1, ElemTy::I64, span),
                values => Expr::new(
                    ExprKind::Note {
                        site,
                        record: record(),
                        values,
                    },
                    int.clone(),
                    span,
                ),
            };
            let failed = Expr::select_as(
                cond,
                Expr::int(0, ElemTy::I64, span),
                failing,
                int.clone(),
                span,
            );
            *e = Expr::new(
                ExprKind::CheckIndex {
                    arg: Box::new(failed),
                    size: 1,
                    site,
                    record: Some(record()),
                    wrap: false,
                },
                int,
                span,
            );
            return;
        }
        // sema's negative-index wraps come off first, so that the checks
        // inside them see one index expression, not three
        let wraps: Vec<Vec<bool>> = match &mut e.kind {
            ExprKind::Index { array, indices } => vec![self.unwrap_all(*array, indices)],
            ExprKind::External { args, .. } => args
                .iter_mut()
                .map(|arg| match arg {
                    crate::ir::CallArg::Array { array, prefix } => self.unwrap_all(*array, prefix),
                    crate::ir::CallArg::Scalar(_) => vec![],
                })
                .collect(),
            _ => vec![],
        };
        // operands evaluated only sometimes: the branches of a select, the
        // right side of `and` / `or`
        let conditional_from = match &e.kind {
            ExprKind::Select { .. } => 1,
            ExprKind::Binary {
                op: BinOp::And | BinOp::Or,
                ..
            } => 1,
            _ => usize::MAX,
        };
        for (k, c) in e.children_mut().into_iter().enumerate() {
            let cond = k >= conditional_from;
            self.cond_depth += cond as usize;
            self.expr(c, env);
            self.cond_depth -= cond as usize;
        }
        match &mut e.kind {
            ExprKind::Index { array, indices } => {
                let a = *array;
                self.guard_all(a, indices, &wraps[0], env);
            }
            ExprKind::External { args, .. } => {
                for (arg, wraps) in args.iter_mut().zip(&wraps) {
                    if let crate::ir::CallArg::Array { array, prefix } = arg {
                        let a = *array;
                        self.guard_all(a, prefix, wraps, env);
                    }
                }
            }
            _ => {}
        }
    }

    /// The indices of a store: their own reads, then the indices.
    fn indices(&mut self, array: VarId, indices: &mut [Expr], env: &Ranges) {
        let wraps = self.unwrap_all(array, indices);
        for ix in indices.iter_mut() {
            self.expr(ix, env);
        }
        self.guard_all(array, indices, &wraps, env);
    }

    /// Takes sema's wrap `a < 0 ? a + n : a` (Python's negative index, `n`
    /// the dimension) off each index of `array`; says which had one.
    fn unwrap_all(&self, array: VarId, indices: &mut [Expr]) -> Vec<bool> {
        let shape = match &self.f.var(array).ty {
            Type::Array { shape, .. } => shape.clone(),
            _ => vec![],
        };
        indices
            .iter_mut()
            .zip(shape)
            .map(|(ix, n)| unwrapped(ix, n).cloned().map(|a| *ix = a).is_some())
            .collect()
    }

    /// Guards the indices of `array` (`wraps[k]`: index `k` lost its
    /// negative-index wrap to `unwrap_all`, which this puts back where it
    /// is needed: in the check, or as it was when no check is made).
    fn guard_all(&mut self, array: VarId, indices: &mut [Expr], wraps: &[bool], env: &Ranges) {
        let var = self.f.var(array);
        let Type::Array { shape, .. } = &var.ty else {
            return;
        };
        for (k, ix) in indices.iter_mut().enumerate() {
            let Some(&n) = shape.get(k) else { return };
            // a wrap is needed where the index may be negative
            let wrap = wraps.get(k) == Some(&true) && env.expr(self.f, ix).is_none_or(|r| r.lo < 0);
            if wrap {
                let wrapped = negative_wrap(ix.clone(), n);
                let proven = env
                    .expr(self.f, &wrapped)
                    .is_some_and(|r| r.within(0, n as i128 - 1));
                if proven || !self.checks {
                    // no record: the wrap alone, `arg` evaluated once and
                    // a branch the CPU predicts (sema's select repeats the
                    // index: with a gather `x[cols[k]]` in CSR SpMV that
                    // was ~35% slower than the checked code)
                    wrap_in_check(ix, n, 0, None, true);
                    continue;
                }
            } else {
                let r = env
                    .expr(self.f, ix)
                    .unwrap_or(Interval::new(i64::MIN as i128, i64::MAX as i128));
                if r.within(0, n as i128 - 1) || !self.checks {
                    continue;
                }
            }
            let site = BoundsSite {
                kind: SiteKind::Index {
                    array: var.name.clone(),
                    axis: k,
                    shape: shape.clone(),
                },
                span: ix.span,
            };
            if !wrap && self.hoist(ix, n, env, &site) {
                continue;
            }
            let at = self.site(site);
            let record = Expr::var(self.record, record_type(), ix.span);
            wrap_in_check(ix, n, at, Some(record), wrap);
        }
    }

    /// An index `i + c` of a loop counter `i` whose bounds are known before
    /// the loop, in a loop nest with nothing conditional around the index:
    /// one check of its last value `hi - 1 + c` in front of the nest (the
    /// nest then runs only if it passes) instead of one per access.
    fn hoist(&mut self, ix: &Expr, n: i64, env: &Ranges, site: &BoundsSite) -> bool {
        // `i + c`, or an index nondecreasing in one counter `i` (`i // 3`,
        // `2 * i + 1`, `i >> 1`: literals the other operands, no overflow
        // over the counter's range): its values lie between those at the
        // first and the last value of `i`
        let (v, c) = match var_plus_const(ix) {
            Some((v, c)) => (v, Some(c)),
            None => match self.sole_counter(ix) {
                Some(v) if env.nondecreasing_in(ix, v) => (v, None),
                _ => return false,
            },
        };
        let Some(at) = self.loops.iter().position(|l| l.var == v) else {
            return false;
        };
        // the outermost loop from which on everything is hoistable and
        // unconditional
        let mut target = self.loops.len();
        while target > 0 {
            let l = &self.loops[target - 1];
            if !l.hoistable || l.cond_depth != self.cond_depth {
                break;
            }
            target -= 1;
        }
        let l = &self.loops[at];
        if target > at || n < 1 || l.hi.ty != l.lo.ty {
            return false;
        }
        let (first, last) = match c {
            Some(c) => {
                if l.hi.ty != ix.ty || l.lo.ty != ix.ty {
                    return false;
                }
                let Ok(c64) = i64::try_from(c) else {
                    return false;
                };
                let first = bin(BinOp::Add, l.lo.clone(), Expr::int(c64, ix.elem(), ix.span));
                let last = match c64 - 1 {
                    0 => l.hi.clone(),
                    d if d < 0 => bin(
                        BinOp::Sub,
                        l.hi.clone(),
                        Expr::int(-d, ix.elem(), l.hi.span),
                    ),
                    d => bin(BinOp::Add, l.hi.clone(), Expr::int(d, ix.elem(), l.hi.span)),
                };
                (first, last)
            }
            None => {
                if l.hi.ty != self.f.var(v).ty {
                    return false;
                }
                // (the loop is entered: `hi - 1 >= lo` does not overflow)
                let one = Expr::int(1, l.hi.elem(), l.hi.span);
                let end = bin(BinOp::Sub, l.hi.clone(), one);
                let mut first = ix.clone();
                crate::passes::util::replace_var(&mut first, v, &l.lo);
                let mut last = ix.clone();
                crate::passes::util::replace_var(&mut last, v, &end);
                (first, last)
            }
        };
        // the first value must be in range: proven here
        match env.expr(self.f, &first) {
            Some(r) if r.within(0, n as i128 - 1) => {}
            _ => return false,
        }
        if self.loops[target].hoisted.contains(&(last.clone(), n)) {
            return true; // the same check is already there
        }
        self.loops[target].hoisted.push((last.clone(), n));
        let at = self.site(site.clone());
        let mut checked = last.clone();
        let record = Expr::var(self.record, record_type(), ix.span);
        wrap_in_check(&mut checked, n, at, Some(record), false);
        // runs: every loop from the target in is entered; then the check
        let entered = self.loops[target..]
            .iter()
            .map(|l| bin(BinOp::Lt, l.lo.clone(), l.hi.clone()))
            .reduce(|a, b| bin(BinOp::And, a, b));
        let ok = bin(BinOp::Eq, checked, last);
        let cond = match entered {
            Some(e) => bin(
                BinOp::Or,
                Expr::new(
                    ExprKind::Unary {
                        op: UnOp::Not,
                        arg: Box::new(e),
                    },
                    Type::Scalar(ElemTy::Bool),
                    ix.span,
                ),
                ok,
            ),
            None => ok,
        };
        self.loops[target].checks.push(cond);
        true
    }
}

/// `lp` (a loop), run only when the checks hoisted in front of it pass.
fn only_if(checks: Vec<Expr>, lp: StmtKind, span: crate::diag::Span) -> StmtKind {
    match checks.into_iter().reduce(|a, b| bin(BinOp::And, a, b)) {
        Some(cond) => StmtKind::If {
            cond,
            then_body: vec![Stmt::new(lp, span)],
            else_body: vec![],
        },
        None => lp,
    }
}

fn wrap_in_check(ix: &mut Expr, size: i64, site: u32, record: Option<Expr>, wrap: bool) {
    let span = ix.span;
    let ty = ix.ty.clone();
    let arg = std::mem::replace(ix, Expr::new(ExprKind::Int(0), ty.clone(), span));
    *ix = Expr::new(
        ExprKind::CheckIndex {
            arg: Box::new(arg),
            size,
            site,
            record: record.map(Box::new),
            wrap,
        },
        ty,
        span,
    );
}

/// `i` and `n` of sema's `0 <= i < n` (`i >= 0 and i < n`, or `i < n` when
/// the first half folded away: `i` is not negative), `n` a literal; `None`
/// for another condition.
fn index_bounds(cond: &Expr) -> Option<(Expr, i64)> {
    let upper = |e: &Expr| match &e.kind {
        ExprKind::Binary {
            op: BinOp::Lt,
            lhs,
            rhs,
        } => match rhs.kind {
            ExprKind::Int(n) if n >= 0 => Some(((**lhs).clone(), n)),
            _ => None,
        },
        _ => None,
    };
    match &cond.kind {
        ExprKind::Binary {
            op: BinOp::And,
            lhs,
            rhs,
        } => {
            let (i, n) = upper(rhs)?;
            match &lhs.kind {
                ExprKind::Binary {
                    op: BinOp::Ge,
                    lhs: l,
                    rhs: zero,
                } if matches!(zero.kind, ExprKind::Int(0)) && **l == i => Some((i, n)),
                _ => None,
            }
        }
        _ => upper(cond),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testutil::{for_loop, for_stmt, idx, int, program, store, var_e, FnBuilder};
    use std::collections::BTreeSet;

    /// The sites' variables, for tests.
    fn checked(p: &Program) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        crate::ir::visit::walk_exprs(&p.host.body, &mut |e| {
            if let ExprKind::CheckIndex { record, .. } = &e.kind {
                out.insert(if record.is_some() { "check" } else { "none" }.to_string());
            }
            true
        });
        out
    }

    fn run_on(p: &mut Program, checks: bool) {
        let o = Options {
            bounds_check: checks,
            ..Options::default()
        };
        run(p, &o);
        crate::ir::verify::verify_program(p).unwrap();
    }

    /// `for i in range(lo, hi): y[f(i)] = x[i]` over `x, y: f32[100]`.
    fn shifted(lo: i64, hi: i64, index: impl Fn(Expr) -> Expr) -> Program {
        let mut b = FnBuilder::new("f");
        let x = b.array("x", ElemTy::F32, &[100]);
        let y = b.array("y", ElemTy::F32, &[100]);
        let i = b.index_var("i");
        let f = &b.f;
        let body = vec![store(
            y,
            vec![index(var_e(f, i))],
            idx(f, x, vec![var_e(f, i)]),
        )];
        let l = for_loop(i, lo, hi, &[], body);
        b.push(for_stmt(l));
        program(b.f)
    }

    #[test]
    fn proven_indices_cost_nothing() {
        let mut p = shifted(0, 95, |i| bin(BinOp::Add, i, int(5)));
        run_on(&mut p, true);
        assert!(checked(&p).is_empty());
        assert!(p.bounds.is_none());
        assert_eq!(p.host.params.len(), 2);
    }

    #[test]
    fn unproven_indices_are_checked() {
        let mut p = shifted(0, 100, |i| bin(BinOp::Add, i, int(5)));
        run_on(&mut p, true);
        assert_eq!(checked(&p), BTreeSet::from(["check".to_string()]));
        let b = p.bounds.as_ref().unwrap();
        assert_eq!(b.sites.len(), 1);
        assert!(matches!(&b.sites[0].kind, SiteKind::Index { array, .. } if array == "y"));
        assert_eq!(*p.host.params.last().unwrap(), b.record);
    }

    #[test]
    fn a_possibly_negative_index_is_checked() {
        // (sema wraps negative indices first; this IR has no wrap)
        let mut p = shifted(0, 100, |i| bin(BinOp::Sub, i, int(1)));
        run_on(&mut p, true);
        assert_eq!(checked(&p), BTreeSet::from(["check".to_string()]));
    }

    #[test]
    fn off_leaves_no_check() {
        let mut p = shifted(0, 100, |i| bin(BinOp::Add, i, int(5)));
        run_on(&mut p, false);
        assert!(checked(&p).is_empty());
        let mut p = shifted(0, 100, |i| bin(BinOp::Sub, i, int(200)));
        run_on(&mut p, false);
        assert!(checked(&p).is_empty());
    }

    /// `for k in range(r[0], r[1]): y[k] = x[k + 1]` over `x, y: f32[100]`,
    /// `r: i64[2]` (bounds known only at run time).
    fn runtime_bounds() -> Program {
        let mut b = FnBuilder::new("f");
        let x = b.array("x", ElemTy::F32, &[100]);
        let y = b.array("y", ElemTy::F32, &[100]);
        let r = b.array("r", ElemTy::I64, &[2]);
        let k = b.index_var("k");
        let f = &b.f;
        let body = vec![store(
            y,
            vec![var_e(f, k)],
            idx(f, x, vec![bin(BinOp::Add, var_e(f, k), int(1))]),
        )];
        let mut l = for_loop(k, 0, 1, &[], body);
        l.lo = idx(f, r, vec![int(0)]);
        l.hi = idx(f, r, vec![int(1)]);
        b.push(for_stmt(l));
        program(b.f)
    }

    fn run_backend(p: &mut Program, backend: Backend) {
        let o = Options {
            bounds_check: true,
            backend,
            ..Options::default()
        };
        run(p, &o);
        crate::ir::verify::verify_program(p).unwrap();
    }

    #[test]
    fn a_loop_with_runtime_bounds_gets_an_unchecked_copy() {
        let mut p = runtime_bounds();
        run_backend(&mut p, Backend::Cpu);
        let [s] = p.host.body.as_slice() else {
            panic!("one statement: {:?}", p.host.body)
        };
        let StmtKind::If {
            then_body,
            else_body,
            ..
        } = &s.kind
        else {
            panic!("a versioned loop: {s:?}")
        };
        // y[k] and x[k + 1] are in range for 0 <= k <= 98
        let text = crate::ir::print::function_to_string(&p.host);
        assert!(text.contains("if ((r[0] >= 0) and (r[1] <= 99))"), "{text}");
        let checks = |b: &Block| {
            let mut n = 0;
            crate::ir::visit::walk_exprs(b, &mut |e| {
                n += matches!(e.kind, ExprKind::CheckIndex { .. }) as usize;
                true
            });
            n
        };
        assert_eq!(checks(then_body), 0);
        assert_eq!(checks(else_body), 2);
        // one site per distinct access
        assert_eq!(p.bounds.as_ref().unwrap().sites.len(), 2);
    }

    #[test]
    fn gpus_and_code_without_checks_or_wraps_are_not_versioned() {
        for backend in [Backend::Cuda, Backend::Metal] {
            let mut p = runtime_bounds();
            run_backend(&mut p, backend);
            assert!(
                matches!(p.host.body[0].kind, StmtKind::For(_)),
                "{backend:?}"
            );
        }
        let mut p = runtime_bounds();
        run_on(&mut p, false);
        assert!(matches!(p.host.body[0].kind, StmtKind::For(_)));
    }
}
