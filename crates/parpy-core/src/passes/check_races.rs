//! Refuses the data races of parallel loops that can be proven at compile
//! time. For every parallel loop `L` over `p` (mapped to more than one
//! thread, more than one iteration, not a `par_reduction()` loop; nested
//! parallel loops are each checked for their own variable), the array
//! stores of its body (nested loops included) are checked:
//!
//! 1. a store whose indices do not depend on `p` (every iteration writes
//!    the same element: `s[0] = x[i]`, `s[0] += x[i]`) is refused, unless
//!    it sits under a condition that depends on `p` in a way other than a
//!    range test (`if x[i] > 0: found[0] = 1` is allowed);
//! 2. a read-modify-write (the body reads the element it stores) whose
//!    index is not provably injective in `p` is refused (`hist[b] += 1`
//!    with `b = x[i]`, `y[i // 2] += v`); injective means one dimension
//!    is `c*p + e` with `c != 0` and `e` invariant in `L`;
//! 3. for an injective store, a read or another store of the same array
//!    whose index is provably the element another iteration writes (every
//!    dimension affine with the store's coefficient of `p`, and the offsets
//!    differing by a constant that `c * delta` matches for one `delta != 0`
//!    inside the loop's range) is refused: `x[i] = x[i - 1] + x[i]`;
//!    where the coefficients differ (`y[2*i]` and `y[i]`, `y[N-1-i]` and
//!    `y[i]`, `y[i]` and `y[0]`) and both run in every iteration, a pair
//!    of different iterations that name one element is looked for over
//!    the known range (a linear Diophantine system in two unknowns);
//! 4. a scalar local that the body assigns and that is used outside the
//!    loop, or read in the body before it is assigned (its value carried
//!    from before the loop or from another iteration), is refused.
//!
//! 5. an array updated atomically (`parpy.atomic.*`) and also read or
//!    stored without an atomic operation in the body is refused, unless
//!    the atomic index is injective in `p` and the plain access is not
//!    provably another iteration's element (rule 3's test): other
//!    iterations update the element while the plain access runs.
//!
//! 6. a plain store whose index provably repeats (`y[i % 4] = x[i]`,
//!    `y[i // 2] = x[i]`: `LoopCx::repeats`), under no condition that
//!    depends on `p` (a range cut could leave one iteration of each
//!    repeat), is refused: iterations write the same elements.
//!
//! Everything else is accepted: a store under `if p == e` (one iteration),
//! a plain scatter `y[perm[i]] = x[i]`, indices that cannot be compared,
//! stores inside called helpers, and atomic updates (`parpy.atomic.*`)
//! of arrays the body does not otherwise touch.

use std::collections::{BTreeSet, HashMap};

use crate::diag::{Diagnostic, Span};
use crate::ir::affine::{affine, Affine};
use crate::ir::range::wrap_of;
use crate::ir::visit::{
    live_after_loop, own_uses, reads_assigns, reads_before_def, same_expr, stmt_exprs, sub_blocks,
    unspanned, uses_var,
};
use crate::ir::{
    BinOp, Expr, ExprKind, ForLoop, Function, Place, Program, Stmt, StmtKind, VarId, VarKind,
};
use crate::options::Options;
use crate::passes::check_parallel_structure::loop_name;

/// Returns one error per racy statement.
pub fn run(p: &Program, options: &Options) -> Vec<Diagnostic> {
    let mut errors = vec![];
    let funcs = std::iter::once(&p.host)
        .chain(&p.helpers)
        .chain(p.kernels.iter().map(|k| &k.func));
    for f in funcs {
        let mut reported = BTreeSet::new();
        find_loops(f, &f.body, options, &mut reported, &mut errors);
    }
    errors
}

fn find_loops(
    f: &Function,
    b: &[Stmt],
    options: &Options,
    reported: &mut BTreeSet<(u32, u32)>,
    errors: &mut Vec<Diagnostic>,
) {
    for s in b {
        if let StmtKind::For(l) = &s.kind {
            let checked = l.par.is_some_and(|p| p.threads > 1)
                && l.reduction.is_none()
                && !l.wants_reduction
                && l.trip_count().is_none_or(|n| n > 1);
            if checked {
                let cx = LoopCx::new(f, l, s.span, options);
                for d in cx.check() {
                    if reported.insert(d.0) {
                        errors.push(d.1);
                    }
                }
            }
        }
        for sb in sub_blocks(s) {
            find_loops(f, sb, options, reported, errors);
        }
    }
}

/// The conditions an access sits under, inside the loop, as far as `p`
/// goes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Ctx {
    /// No condition that depends on `p`.
    Clean,
    /// Conditions that only cut the range of `p` (`i > 0`, `i < n - 1`).
    Range,
    /// A condition that depends on `p` otherwise (data, `i % 2 == 0`).
    Other,
    /// `p == e`: at most one iteration gets here.
    Pinned,
}

impl Ctx {
    fn and(self, o: Ctx) -> Ctx {
        self.max(o)
    }
    /// Both may run for every value of `p` (range cuts aside).
    fn unconditional(self) -> bool {
        matches!(self, Ctx::Clean | Ctx::Range)
    }
}

/// A condition that is the same in every iteration, and the side of it an
/// access is on (the selectors of re-bound array names are such).
type Guard = (Expr, bool);

/// An array element the body reads or stores.
struct Access<'a> {
    array: VarId,
    indices: &'a [Expr],
    span: Span,
    ctx: Ctx,
    /// The loop-invariant conditions it sits under.
    guards: Vec<Guard>,
}

impl Access<'_> {
    /// Do both run whenever one of them does, as far as the loop-invariant
    /// conditions go (the same ones on both)? A read of re-bound name `src`
    /// and a store through `dst` (each under its own selector test) touch
    /// the same array only when the selectors agree, which cannot be known
    /// here.
    fn together(&self, o: &Access) -> bool {
        let within = |a: &[Guard], b: &[Guard]| {
            a.iter()
                .all(|(e, p)| b.iter().any(|(f, q)| p == q && same_expr(e, f)))
        };
        within(&self.guards, &o.guards) && within(&o.guards, &self.guards)
    }
}

/// The array accesses of a loop body.
#[derive(Default)]
struct Accesses<'a> {
    reads: Vec<Access<'a>>,
    /// Plain stores.
    stores: Vec<Access<'a>>,
    /// Atomic updates (`parpy.atomic.*`).
    atomics: Vec<Access<'a>>,
}

struct LoopCx<'a> {
    f: &'a Function,
    l: &'a ForLoop,
    header: Span,
    label: String,
    /// Scalars the body assigns (loop counters included).
    assigned: BTreeSet<VarId>,
    /// Arrays the body stores into.
    stored: BTreeSet<VarId>,
    /// Locals the body assigns exactly once, with their value.
    defs: HashMap<VarId, Expr>,
    /// Scalars whose value may differ between iterations (`p` first).
    tainted: BTreeSet<VarId>,
    /// The counters of the loops inside the body that run the same values
    /// in every iteration of `p` (constant bounds), each `(first, step,
    /// count)`; empty when the body has a `break`, `continue` or `while`
    /// (an inner loop may then stop early).
    inner: HashMap<VarId, (i128, i128, i128)>,
}

impl<'a> LoopCx<'a> {
    fn new(f: &'a Function, l: &'a ForLoop, header: Span, options: &Options) -> LoopCx<'a> {
        let mut used = BTreeSet::new();
        let mut assigned = BTreeSet::new();
        let mut stored = BTreeSet::new();
        let mut counts: HashMap<VarId, usize> = HashMap::new();
        let mut values: HashMap<VarId, Expr> = HashMap::new();
        // (every statement of the body, nested ones included, once)
        crate::ir::visit::walk_stmts(&l.body, &mut |s| {
            let u = own_uses(s);
            used.extend(u.touched());
            stored.extend(u.stored);
            for v in u.assigned {
                assigned.insert(v);
                *counts.entry(v).or_default() += 1;
            }
            if let StmtKind::Assign {
                dst: Place::Var(v),
                value,
            } = &s.kind
            {
                values.insert(*v, value.clone());
            }
        });
        let defs = values
            .into_iter()
            .filter(|(v, e)| {
                counts.get(v) == Some(&1) && f.var(*v).kind == VarKind::Local && !uses_var(e, *v)
            })
            .collect();
        let mut inner = HashMap::new();
        let mut jumps = false;
        crate::ir::visit::walk_stmts(&l.body, &mut |s| match &s.kind {
            StmtKind::For(il) => {
                if let (ExprKind::Int(lo), ExprKind::Int(_), Some(n)) =
                    (&il.lo.kind, &il.hi.kind, il.trip_count())
                {
                    inner.insert(il.var, (*lo as i128, il.step as i128, n as i128));
                }
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::While { .. } => jumps = true,
            _ => {}
        });
        if jumps {
            inner.clear();
        }
        let mut cx = LoopCx {
            f,
            l,
            header: header.header(),
            label: loop_name(l, options),
            assigned,
            stored,
            defs,
            tainted: BTreeSet::from([l.var]),
            inner,
        };
        cx.taint();
        cx
    }

    fn p(&self) -> VarId {
        self.l.var
    }

    fn name(&self, v: VarId) -> &str {
        &self.f.var(v).name
    }

    /// May `e` differ between iterations? (It reads `p`, a scalar that
    /// depends on it, or an array the body writes.)
    fn varies(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var(v) if self.tainted.contains(v) => true,
            ExprKind::Index { array, .. } if self.stored.contains(array) => true,
            _ => e.children().any(|c| self.varies(c)),
        }
    }

    /// The scalars that depend on `p`, through values and control (a
    /// `break` / `continue` under a condition that depends on `p` makes
    /// the rest of its block, and every assignment of its loop, depend on
    /// it: how many iterations run varies).
    fn taint(&mut self) {
        /// Returns whether a `break` / `continue` leaves `b` under a
        /// condition that depends on `p`.
        fn walk(cx: &mut LoopCx, b: &[Stmt], mut ctl: bool) -> bool {
            let mut left = false;
            for s in b {
                let jumps = match &s.kind {
                    StmtKind::Assign {
                        dst: Place::Var(v),
                        value,
                    } => {
                        if ctl || cx.varies(value) {
                            cx.tainted.insert(*v);
                        }
                        false
                    }
                    StmtKind::For(l) => {
                        let c = ctl || cx.varies(&l.lo) || cx.varies(&l.hi);
                        if c {
                            cx.tainted.insert(l.var);
                        }
                        if walk(cx, &l.body, c) && !c {
                            walk(cx, &l.body, true);
                        }
                        false
                    }
                    StmtKind::While { cond, body } => {
                        let c = ctl || cx.varies(cond);
                        if walk(cx, body, c) && !c {
                            walk(cx, body, true);
                        }
                        false
                    }
                    StmtKind::If {
                        cond,
                        then_body,
                        else_body,
                    } => {
                        let c = ctl || cx.varies(cond);
                        let t = walk(cx, then_body, c);
                        walk(cx, else_body, c) || t
                    }
                    StmtKind::Break | StmtKind::Continue => ctl,
                    _ => {
                        // every sub-block is walked (no short cut)
                        let mut j = false;
                        for sb in sub_blocks(s) {
                            j |= walk(cx, sb, ctl);
                        }
                        j
                    }
                };
                if jumps {
                    left = true;
                    ctl = true;
                }
            }
            left
        }
        loop {
            let before = self.tainted.len();
            walk(self, &self.l.body, false);
            if self.tainted.len() == before {
                break;
            }
        }
    }

    fn form(&self, e: &Expr) -> Affine {
        affine(e, &|v| self.defs.get(&v))
    }

    /// Does `e` read nothing the body changes (and not `p`)?
    fn invariant(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Var(v) => *v != self.p() && !self.assigned.contains(v),
            ExprKind::Index { array, .. } if self.stored.contains(array) => false,
            _ => e.children().all(|c| self.invariant(c)),
        }
    }

    /// `c*p + e` with `c != 0` and `e` invariant: the coefficient.
    fn moves_with_p(&self, f: &Affine) -> Option<i128> {
        let c = f.coef_of(self.p());
        let rest = f.without(self.p());
        (c != 0 && rest.terms.iter().all(|(a, _)| self.invariant(a))).then_some(c)
    }

    /// Distinct iterations store distinct elements.
    fn injective(&self, ix: &[Expr]) -> bool {
        ix.iter()
            .any(|e| self.moves_with_p(&self.form(e)).is_some())
    }

    /// A distance `d > 0` at which two iterations store the same element,
    /// where the index provably repeats: every dimension invariant but
    /// one, `(p + e) % c` (`d = c`) or `(p + e) // c` (`d = 1`) of a
    /// constant `c >= 2` and an invariant `e`, over more than `c`
    /// iterations of step 1 (`y[i % 4] = x[i]`).
    fn repeats(&self, ix: &[Expr]) -> Option<i128> {
        let n = self.l.trip_count().filter(|_| self.l.step == 1)? as i128;
        let mut d = None;
        for e in ix.iter().filter(|e| !self.invariant(e)) {
            // (through sema's wrap of a negative index and locals)
            let mut e = e;
            loop {
                e = match &e.kind {
                    ExprKind::Var(v) if self.defs.contains_key(v) => &self.defs[v],
                    ExprKind::Select { cond, then, else_ } => match wrap_of(cond, then, else_) {
                        Some((a, _)) => a,
                        None => break,
                    },
                    _ => break,
                };
            }
            let ExprKind::Binary { op, lhs, rhs } = &e.kind else {
                return None;
            };
            let c = match rhs.kind {
                ExprKind::Int(c) if c >= 2 && (c as i128) < n => c as i128,
                _ => return None,
            };
            let this = match op {
                BinOp::Mod => c,
                BinOp::FloorDiv => 1,
                _ => return None,
            };
            if self.moves_with_p(&self.form(lhs)) != Some(1) || d.replace(this).is_some() {
                return None;
            }
        }
        d
    }

    fn same_element(&self, a: &[Expr], b: &[Expr]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| self.form(x).minus(&self.form(y)).as_const() == Some(0))
    }

    /// `delta != 0` such that the element `read` names in iteration `p` is
    /// the one `write` names in iteration `p + delta`, where provable.
    fn conflict(&self, write: &[Expr], read: &[Expr]) -> Option<i128> {
        if write.len() != read.len() {
            return None;
        }
        let p = self.p();
        let mut delta: Option<i128> = None;
        for (w, r) in write.iter().zip(read) {
            let (fw, fr) = (self.form(w), self.form(r));
            let c = fw.coef_of(p);
            if c != fr.coef_of(p) {
                return None;
            }
            let k = fr.without(p).minus(&fw.without(p)).as_const()?;
            if c == 0 {
                if k != 0 {
                    return None;
                }
                continue;
            }
            if k % c != 0 || delta.is_some_and(|d| d != k / c) {
                return None;
            }
            delta = Some(k / c);
        }
        let d = delta.filter(|d| *d != 0)?;
        let step = self.l.step as i128;
        if d % step != 0 {
            return None;
        }
        match self.l.trip_count() {
            Some(n) if (d / step).abs() >= n as i128 => None,
            _ => Some(d),
        }
    }

    /// Two different iterations `(p1, p2)` such that the element `write`
    /// names in iteration `p1` is the one `other` names in iteration `p2`,
    /// where provable with different coefficients of `p` (`y[2*i]` and
    /// `y[i]`, `y[N - 1 - i]` and `y[i]`, `y[i]` and `y[0]`): every
    /// dimension is affine in `p` over invariant atoms that are the same
    /// on both sides, and the loop's start and trip count are known. Both
    /// accesses must run in every iteration (the caller checks).
    fn witness(&self, write: &[Expr], other: &[Expr], counters: bool) -> Option<(i128, i128)> {
        if write.len() != other.len() {
            return None;
        }
        let p = self.p();
        let lo = match self.l.lo.kind {
            ExprKind::Int(v) => v as i128,
            _ => return None,
        };
        let (n, step) = (self.l.trip_count()? as i128, self.l.step as i128);
        // each dimension: the write's index c1*p + jw + e, the other's
        // c2*p + jo + e + k (jw, jo: counters of inner loops)
        let mut dims = vec![];
        for (w, o) in write.iter().zip(other) {
            let (fw, fo) = (self.form(w), self.form(o));
            let counters = |f: &Affine| -> Vec<(VarId, i128)> {
                f.terms
                    .iter()
                    .filter_map(|(e, c)| match e.kind {
                        ExprKind::Var(v) if self.inner.contains_key(&v) => Some((v, *c)),
                        _ => None,
                    })
                    .collect()
            };
            let (jw, jo) = (counters(&fw), counters(&fo));
            let rest = |f: &Affine, js: &[(VarId, i128)]| {
                js.iter().fold(f.without(p), |f, (v, _)| f.without(*v))
            };
            let (rw, ro) = (rest(&fw, &jw), rest(&fo, &jo));
            if !rw
                .terms
                .iter()
                .chain(&ro.terms)
                .all(|(e, _)| self.invariant(e))
            {
                return None;
            }
            let k = ro.minus(&rw).as_const()?;
            let (c1, c2) = (fw.coef_of(p), fo.coef_of(p));
            dims.push(Dim { c1, c2, k, jw, jo });
        }
        // the dimensions without counters: with p = lo + step*t, one
        // equation a*t1 - b*t2 = r each
        let mut eqs = vec![];
        for Dim { c1, c2, k, .. } in dims.iter().filter(|d| d.jw.is_empty() && d.jo.is_empty()) {
            let (a, b, r) = (c1 * step, c2 * step, k - (c1 - c2) * lo);
            if a == 0 && b == 0 {
                if r != 0 {
                    return None;
                }
                continue;
            }
            eqs.push((a, b, r));
        }
        let pair = if eqs.is_empty() {
            None
        } else {
            // (no two iterations agree on these: no race, whatever the
            // counters do; this spares the search below, which is slow)
            Some(solve_pair(&eqs, n)?)
        };
        if dims.iter().any(|d| !d.jw.is_empty() || !d.jo.is_empty()) {
            if !counters {
                return None;
            }
            return self.search_with_counters(&dims, (lo, step, n));
        }
        let (t1, t2) = pair?;
        Some((lo + step * t1, lo + step * t2))
    }

    /// `witness` where indices read counters of inner loops (`u[i, j]` and
    /// `u[j, i]`; `A[i, j]` and `A[0, j]`; `y[k]` of a sum over `y[:]`):
    /// every iteration of `p` runs every value of those counters, so each
    /// side takes its own. Searched over the first and last values of
    /// each unknown (`p` twice, the counters of each side): a pair found
    /// is a race; none found proves nothing.
    fn search_with_counters(&self, dims: &[Dim], p: (i128, i128, i128)) -> Option<(i128, i128)> {
        let mut js: Vec<VarId> = vec![];
        for d in dims {
            for (v, _) in d.jw.iter().chain(&d.jo) {
                if !js.contains(v) {
                    js.push(*v);
                }
            }
        }
        // unknowns: p1, p2, then each counter on the write side and on the
        // other side
        let mut ranges = vec![p, p];
        ranges.extend(js.iter().map(|v| self.inner[v]));
        ranges.extend(js.iter().map(|v| self.inner[v]));
        if ranges.len() > 8 {
            return None;
        }
        let per = ((1u64 << 20) as f64)
            .powf(1.0 / ranges.len() as f64)
            .floor()
            .max(2.0) as i128;
        let samples: Vec<Vec<i128>> = ranges
            .iter()
            .map(|&(lo, step, n)| {
                let mut t: Vec<i128> = (0..n.min(per / 2 + 1)).collect();
                t.extend((n - per / 2).max(0)..n);
                t.sort_unstable();
                t.dedup();
                t.into_iter().map(|t| lo + step * t).collect()
            })
            .collect();
        if samples.iter().any(|s| s.is_empty()) {
            return None;
        }
        let nj = js.len();
        let pos =
            |v: &VarId, side: usize| 2 + side * nj + js.iter().position(|x| x == v).unwrap_or(0);
        let mut at = vec![0usize; ranges.len()];
        loop {
            let val = |k: usize| samples[k][at[k]];
            let (p1, p2) = (val(0), val(1));
            let meets = |d: &Dim| {
                let side = |c: i128, pv: i128, js: &[(VarId, i128)], s: usize| {
                    c * pv + js.iter().map(|(v, cj)| cj * val(pos(v, s))).sum::<i128>()
                };
                side(d.c1, p1, &d.jw, 0) + d.k == side(d.c2, p2, &d.jo, 1)
            };
            if p1 != p2 && dims.iter().all(meets) {
                return Some((p1, p2));
            }
            // the next combination
            let mut k = 0;
            loop {
                if k == at.len() {
                    return None;
                }
                at[k] += 1;
                if at[k] < samples[k].len() {
                    break;
                }
                at[k] = 0;
                k += 1;
            }
        }
    }

    /// How a condition on the way to an access depends on `p`.
    fn cond_ctx(&self, cond: &Expr) -> Ctx {
        if !self.varies(cond) {
            return Ctx::Clean;
        }
        match &cond.kind {
            ExprKind::Binary {
                op: BinOp::And,
                lhs,
                rhs,
            } => {
                let (a, b) = (self.cond_ctx(lhs), self.cond_ctx(rhs));
                if a == Ctx::Pinned || b == Ctx::Pinned {
                    Ctx::Pinned
                } else {
                    a.and(b)
                }
            }
            ExprKind::Binary { op, lhs, rhs } if op.is_comparison() => {
                let diff = self.form(lhs).minus(&self.form(rhs));
                if self.moves_with_p(&diff).is_none() {
                    Ctx::Other
                } else if *op == BinOp::Eq {
                    Ctx::Pinned
                } else {
                    Ctx::Range
                }
            }
            _ => Ctx::Other,
        }
    }

    /// Every array read, plain store and atomic update of the body, with
    /// its context.
    fn accesses(&self) -> Accesses<'a> {
        let mut acc = Accesses::default();
        self.walk(&self.l.body, Ctx::Clean, &[], &mut acc);
        acc
    }

    /// `ctx` and `guards` for the two sides of condition `cond`.
    fn split(&self, cond: &Expr, ctx: Ctx, guards: &[Guard]) -> [(Ctx, Vec<Guard>); 2] {
        let c = self.cond_ctx(cond);
        // the other side of `p == e` is a range cut
        let e = if c == Ctx::Pinned { Ctx::Range } else { c };
        let side = |pol: bool| {
            let mut g = guards.to_vec();
            if !self.varies(cond) {
                g.push((unspanned(cond), pol));
            }
            g
        };
        [(ctx.and(c), side(true)), (ctx.and(e), side(false))]
    }

    fn reads(&self, e: &'a Expr, ctx: Ctx, guards: &[Guard], out: &mut Vec<Access<'a>>) {
        match &e.kind {
            ExprKind::Index { array, indices } => out.push(Access {
                array: *array,
                indices,
                span: e.span,
                ctx,
                guards: guards.to_vec(),
            }),
            ExprKind::Select { cond, then, else_ } => {
                self.reads(cond, ctx, guards, out);
                let [(ct, gt), (ce, ge)] = self.split(cond, ctx, guards);
                self.reads(then, ct, &gt, out);
                self.reads(else_, ce, &ge, out);
                return;
            }
            _ => {}
        }
        e.children().for_each(|c| self.reads(c, ctx, guards, out));
    }

    /// Collects the accesses of `b`; returns the context of the `break` /
    /// `continue` statements that leave `b` (the most conditional one),
    /// after which the rest of a block runs only in some iterations.
    fn walk(
        &self,
        b: &'a [Stmt],
        mut ctx: Ctx,
        guards: &[Guard],
        acc: &mut Accesses<'a>,
    ) -> Option<Ctx> {
        let loop_ctx = |varies: bool| if varies { Ctx::Other } else { Ctx::Clean };
        let mut left: Option<Ctx> = None;
        for s in b {
            stmt_exprs(s)
                .into_iter()
                .for_each(|e| self.reads(e, ctx, guards, &mut acc.reads));
            let jumped = match &s.kind {
                StmtKind::Assign {
                    dst: Place::Index { array, indices },
                    value,
                } => {
                    let a = Access {
                        array: *array,
                        indices,
                        span: s.span,
                        ctx,
                        guards: guards.to_vec(),
                    };
                    if crate::ir::atomic_of(value).is_some() {
                        acc.atomics.push(a);
                    } else {
                        acc.stores.push(a);
                    }
                    None
                }
                // a nested loop's own `break` / `continue` stay inside it
                StmtKind::For(l) => {
                    let c = loop_ctx(self.varies(&l.lo) || self.varies(&l.hi));
                    self.walk(&l.body, ctx.and(c), guards, acc);
                    None
                }
                StmtKind::While { cond, body } => {
                    let c = loop_ctx(self.varies(cond));
                    self.walk(body, ctx.and(c), guards, acc);
                    None
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    let [(ct, gt), (ce, ge)] = self.split(cond, ctx, guards);
                    let t = self.walk(then_body, ct, &gt, acc);
                    let e = self.walk(else_body, ce, &ge, acc);
                    t.max(e)
                }
                StmtKind::Break | StmtKind::Continue => Some(ctx),
                _ => sub_blocks(s)
                    .into_iter()
                    .filter_map(|sb| self.walk(sb, ctx, guards, acc))
                    .max(),
            };
            if let Some(j) = jumped {
                left = left.max(Some(j));
                // the rest runs where the jump was not taken: all
                // iterations but one after `if p == e: continue`
                ctx = ctx.and(if j == Ctx::Pinned { Ctx::Range } else { j });
            }
        }
        left
    }

    fn check(&self) -> Vec<((u32, u32), Diagnostic)> {
        let mut out = vec![];
        let Accesses {
            reads,
            stores,
            atomics,
        } = self.accesses();
        let key = |s: Span| (s.lo, s.hi);
        out.extend(self.atomic_errors(&atomics, &reads, &stores));
        for st in stores.iter().filter(|s| s.ctx != Ctx::Pinned) {
            if self.private_array(st.array) {
                continue;
            }
            let a = self.name(st.array);
            let rmw = reads.iter().any(|r| {
                r.array == st.array
                    && r.ctx != Ctx::Pinned
                    && r.together(st)
                    && self.same_element(r.indices, st.indices)
            });
            if !st.indices.iter().any(|e| self.varies(e)) {
                if st.ctx != Ctx::Other || rmw {
                    out.push((key(st.span), self.same_element_error(st, a, rmw)));
                }
                continue;
            }
            if !self.injective(st.indices) {
                if rmw {
                    out.push((key(st.span), self.rmw_error(st, a)));
                } else if let Some(d) = self.repeats(st.indices).filter(|_| st.ctx == Ctx::Clean) {
                    out.push((key(st.span), self.repeat_error(st, a, d)));
                }
                continue;
            }
            if !st.ctx.unconditional() {
                continue;
            }
            let others = reads
                .iter()
                .map(|r| (r, false))
                .chain(stores.iter().map(|w| (w, true)));
            for (o, is_store) in others {
                if o.array != st.array || !o.ctx.unconditional() || !o.together(st) {
                    continue;
                }
                let p = self.name(self.p());
                let iters = if let Some(d) = self.conflict(st.indices, o.indices) {
                    let it = match d {
                        d if d > 0 => format!("`{p} + {d}`"),
                        d => format!("`{p} - {}`", -d),
                    };
                    Some((format!("`{p}`"), it))
                } else if st.ctx == Ctx::Clean && o.ctx == Ctx::Clean {
                    // (inner counters take every value only where no
                    // condition at all is on the way)
                    let counters = st.guards.is_empty() && o.guards.is_empty();
                    self.witness(st.indices, o.indices, counters)
                        .map(|(p1, p2)| (format!("`{p} = {p2}`"), format!("`{p} = {p1}`")))
                } else {
                    None
                };
                if let Some(iters) = iters {
                    out.push((key(st.span), self.carried_error(st, o, is_store, a, iters)));
                    break;
                }
            }
        }
        out.extend(self.scalar_errors());
        out
    }

    /// Rule 5: plain reads and stores of an array the body updates
    /// atomically; one error per plain access.
    fn atomic_errors(
        &self,
        atomics: &[Access],
        reads: &[Access],
        stores: &[Access],
    ) -> Vec<((u32, u32), Diagnostic)> {
        let mut out = vec![];
        let plain = reads
            .iter()
            .map(|r| (r, false))
            .chain(stores.iter().map(|w| (w, true)));
        for (o, is_store) in plain {
            if o.ctx == Ctx::Pinned || self.private_array(o.array) {
                continue;
            }
            let hit = atomics.iter().find(|at| {
                if at.array != o.array || at.ctx == Ctx::Pinned || !at.together(o) {
                    return false;
                }
                let own = at.indices.iter().any(|e| self.varies(e)) && self.injective(at.indices);
                !own || self.conflict(at.indices, o.indices).is_some()
            });
            if let Some(at) = hit {
                out.push(((o.span.lo, o.span.hi), self.atomic_error(at, o, is_store)));
            }
        }
        out
    }

    fn atomic_error(&self, at: &Access, o: &Access, is_store: bool) -> Diagnostic {
        let (a, l) = (self.name(at.array), &self.label);
        let (what, note, help) = if is_store {
            (
                "written",
                "a plain store and the atomic updates of other iterations run at the same time, so either may be lost",
                format!("write `{a}` before or after the loop, or make this update atomic too (`parpy.atomic.*`)"),
            )
        } else {
            (
                "read",
                "the atomic updates of other iterations run at the same time, so the read sees some of them and not others",
                format!("read `{a}` after the loop has finished (in a later loop, or after the call)"),
            )
        };
        self.base(format!(
            "`{a}` is updated atomically in the parallel loop `{l}` and also {what} there without an atomic operation"
        ))
        .at(o.span, format!("`{a}` {what} here"))
        .also(at.span, "updated atomically here")
        .also(self.header, format!("parallel loop `{l}`"))
        .note(note)
        .help(help)
    }

    fn base(&self, msg: String) -> Diagnostic {
        Diagnostic::error(msg)
    }

    fn same_element_error(&self, st: &Access, a: &str, rmw: bool) -> Diagnostic {
        let (p, l) = (self.name(self.p()), &self.label);
        if rmw {
            self.base(format!(
                "every iteration of the parallel loop `{l}` updates the same element of `{a}`"
            ))
            .at(st.span, format!("the index does not depend on `{p}`"))
            .also(self.header, format!("parallel loop `{l}`"))
            .note("the iterations run at the same time, so updates are lost")
            .help(format!(
                "combine the values in a reduction loop ('{l}': parpy.threads(n).par_reduction(), body `{a}[...] += ...`), update the element atomically (`parpy.atomic.add({a}, index, value)`; also `max`, `min`), or run `{l}` sequentially (leave it out of the parallel spec)"
            ))
        } else {
            self.base(format!(
                "every iteration of the parallel loop `{l}` writes the same element of `{a}`"
            ))
            .at(st.span, format!("the index does not depend on `{p}`"))
            .also(self.header, format!("parallel loop `{l}`"))
            .note("the iterations run at the same time, so which value is left is not defined")
            .help(format!(
                "write `{a}` at an index that depends on `{p}` (one element per iteration), or run `{l}` sequentially (leave it out of the parallel spec)"
            ))
        }
    }

    fn repeat_error(&self, st: &Access, a: &str, d: i128) -> Diagnostic {
        let (p, l) = (self.name(self.p()), &self.label);
        self.base(format!(
            "iterations of the parallel loop `{l}` write the same elements of `{a}`"
        ))
        .at(
            st.span,
            format!("iteration `{p}` writes the element iteration `{p} + {d}` writes"),
        )
        .also(self.header, format!("parallel loop `{l}`"))
        .note("the iterations run at the same time, so which value is left is not defined")
        .help(format!(
            "give every iteration its own element (an index `c*{p} + e`), or run `{l}` sequentially (leave it out of the parallel spec)"
        ))
    }

    fn rmw_error(&self, st: &Access, a: &str) -> Diagnostic {
        let (p, l) = (self.name(self.p()), &self.label);
        self.base(format!(
            "iterations of the parallel loop `{l}` may update the same element of `{a}`"
        ))
        .at(
            st.span,
            format!("read and written at an index that two values of `{p}` may share"),
        )
        .also(self.header, format!("parallel loop `{l}`"))
        .note("the iterations run at the same time, so updates are lost")
        .help(format!(
            "update the element atomically (`parpy.atomic.add({a}, index, value)`; also `max`, `min`), run `{l}` sequentially (leave it out of the parallel spec), or give every iteration its own element (an index `c*{p} + e`)"
        ))
    }

    fn carried_error(
        &self,
        st: &Access,
        other: &Access,
        is_store: bool,
        a: &str,
        (this, it): (String, String),
    ) -> Diagnostic {
        let l = &self.label;
        let (msg, lab) = if is_store {
            (
                format!("iterations of the parallel loop `{l}` write the same elements of `{a}`"),
                format!("iteration {this} writes what iteration {it} also writes"),
            )
        } else {
            (
                format!(
                    "the parallel loop `{l}` reads elements of `{a}` that other iterations write"
                ),
                format!("iteration {this} reads what iteration {it} writes"),
            )
        };
        self.base(msg)
            .at(other.span, lab)
            .also(st.span, "written here")
            .also(self.header, format!("parallel loop `{l}`"))
            .note(if is_store {
                "the iterations run in no fixed order, so which value is left is not defined"
            } else {
                "the iterations run in no fixed order, so the read may see the old or the new value"
            })
            .help(format!(
                "write the results into another array (reading `{a}` only), or run `{l}` sequentially (leave it out of the parallel spec)"
            ))
    }

    /// Rule 4: scalars shared by the iterations.
    fn scalar_errors(&self) -> Vec<((u32, u32), Diagnostic)> {
        let (p, l) = (self.name(self.p()), &self.label);
        let mut out = vec![];
        for &v in &self.assigned {
            let var = self.f.var(v);
            if var.kind != VarKind::Local || var.ty.is_array() {
                continue;
            }
            let carried = reads_before_def(&self.l.body, v);
            if !carried && !live_after_loop(&self.f.body, self.l, v) {
                continue;
            }
            let Some(site) = first_assignment(&self.l.body, v) else {
                continue;
            };
            let why = if carried {
                "and reads it before assigning it (its value comes from before the loop or from another iteration)"
            } else {
                "and its value may be read after the loop"
            };
            let name = &var.name;
            out.push((
                (site.lo, site.hi),
                self.base(format!(
                    "every iteration of the parallel loop `{l}` assigns the variable `{name}`, {why}"
                ))
                .at(site, format!("`{name}` is one variable shared by all iterations"))
                .also(self.header, format!("parallel loop `{l}`"))
                .note("the iterations run at the same time, so its value is not defined")
                .help(format!(
                    "use a fresh variable assigned first inside the loop, keep one value per iteration in an array indexed by `{p}`, or combine the values in a reduction loop ('{l}': parpy.threads(n).par_reduction())"
                )),
            ));
        }
        out
    }

    /// A compiler temporary (a local array, such as an overlapping slice
    /// assignment's `NAME_rhs`) that only this loop's body touches: the
    /// writer declares it inside the body, one per iteration.
    fn private_array(&self, v: VarId) -> bool {
        let var = self.f.var(v);
        var.kind == VarKind::Local && var.ty.is_array() && !self.used_outside(v)
    }

    /// Is `v` touched in the function outside this loop (other than inside
    /// another parallel loop that assigns it before reading it, where it is
    /// a variable of its own)?
    fn used_outside(&self, v: VarId) -> bool {
        fn walk(b: &[Stmt], me: &ForLoop, v: VarId) -> bool {
            for s in b {
                if let StmtKind::For(l) = &s.kind {
                    if std::ptr::eq(&**l, me) {
                        continue;
                    }
                    let private =
                        l.par.is_some() && !contains(&l.body, me) && !reads_before_def(&l.body, v);
                    if private {
                        continue;
                    }
                }
                let (reads, assigns) = reads_assigns(s, v);
                if reads || assigns {
                    return true;
                }
                if sub_blocks(s).into_iter().any(|sb| walk(sb, me, v)) {
                    return true;
                }
            }
            false
        }
        walk(&self.f.body, self.l, v)
    }
}

/// One dimension of two accesses for [`LoopCx::witness`]: the write's
/// index is `c1*p + jw + e`, the other's `c2*p + jo + e + k` (`jw`, `jo`:
/// inner loop counters with their coefficients).
struct Dim {
    c1: i128,
    c2: i128,
    k: i128,
    jw: Vec<(VarId, i128)>,
    jo: Vec<(VarId, i128)>,
}

/// `(t1, t2)` with `t1 != t2`, both in `0..n`, that satisfy every
/// `a*t1 - b*t2 = r` of `eqs` (none with `a = b = 0`), if there is one.
fn solve_pair(eqs: &[(i128, i128, i128)], n: i128) -> Option<(i128, i128)> {
    let &(a, b, r) = eqs.first()?;
    let fits = |t1: i128, t2: i128| {
        t1 != t2
            && (0..n).contains(&t1)
            && (0..n).contains(&t2)
            && eqs.iter().all(|&(x, y, z)| x * t1 - y * t2 == z)
    };
    // another equation that is not a multiple of the first: one solution
    if let Some(&(a2, b2, r2)) = eqs.iter().find(|&&(x, y, _)| x * b != y * a) {
        let det = b * a2 - a * b2;
        let (n1, n2) = (b * r2 - b2 * r, a * r2 - a2 * r);
        if n1 % det != 0 || n2 % det != 0 {
            return None;
        }
        let (t1, t2) = (n1 / det, n2 / det);
        return fits(t1, t2).then_some((t1, t2));
    }
    // every equation a multiple of the first: a*t1 + bb*t2 = r
    let bb = -b;
    let (g, x, y) = ext_gcd(a, bb);
    if r % g != 0 {
        return None;
    }
    let (x0, y0) = (x * (r / g), y * (r / g));
    // t1 = x0 + (bb/g)*m, t2 = y0 - (a/g)*m
    let (dx, dy) = (bb / g, -(a / g));
    let (mut mlo, mut mhi) = (i128::MIN, i128::MAX);
    for (base, d) in [(x0, dx), (y0, dy)] {
        if d == 0 {
            if !(0..n).contains(&base) {
                return None;
            }
            continue;
        }
        // 0 <= base + d*m <= n - 1
        let (l, h) = (-base, n - 1 - base);
        let (ml, mh) = if d > 0 {
            (div_ceil(l, d), h.div_euclid(d))
        } else {
            (div_ceil(-h, -d), (-l).div_euclid(-d))
        };
        mlo = mlo.max(ml);
        mhi = mhi.min(mh);
    }
    if mlo > mhi {
        return None;
    }
    // t1 == t2 for at most one m (or for all, when dx == dy); the pair of
    // the earliest iterations (for the message) is at one end
    [mlo, mlo + 1, mhi - 1, mhi]
        .into_iter()
        .filter(|m| (mlo..=mhi).contains(m))
        .map(|m| (x0 + dx * m, y0 + dy * m))
        .filter(|&(t1, t2)| fits(t1, t2))
        .min_by_key(|&(t1, t2)| (t1.max(t2), t1 + t2))
}

/// `(g, x, y)` with `a*x + b*y = g = gcd(a, b) > 0` (not both zero).
fn ext_gcd(a: i128, b: i128) -> (i128, i128, i128) {
    let (mut r0, mut r1, mut s0, mut s1, mut t0, mut t1) = (a, b, 1, 0, 0, 1);
    while r1 != 0 {
        let q = r0.div_euclid(r1);
        (r0, r1) = (r1, r0 - q * r1);
        (s0, s1) = (s1, s0 - q * s1);
        (t0, t1) = (t1, t0 - q * t1);
    }
    if r0 < 0 {
        (-r0, -s0, -t0)
    } else {
        (r0, s0, t0)
    }
}

fn div_ceil(a: i128, b: i128) -> i128 {
    -((-a).div_euclid(b))
}

fn contains(b: &[Stmt], me: &ForLoop) -> bool {
    b.iter().any(|s| match &s.kind {
        StmtKind::For(l) if std::ptr::eq(&**l, me) => true,
        _ => sub_blocks(s).into_iter().any(|sb| contains(sb, me)),
    })
}

/// The span of the first statement that assigns `v`.
fn first_assignment(b: &[Stmt], v: VarId) -> Option<Span> {
    for s in b {
        if let StmtKind::Assign {
            dst: Place::Var(d), ..
        } = &s.kind
        {
            if *d == v {
                return Some(s.span);
            }
        }
        if let StmtKind::For(l) = &s.kind {
            if l.var == v {
                return Some(s.span);
            }
        }
        for sb in sub_blocks(s) {
            if let Some(r) = first_assignment(sb, v) {
                return Some(r);
            }
        }
    }
    None
}

/// [`run`] with the pipeline's signature.
pub fn run_pass(p: &mut Program, options: &Options) -> Vec<Diagnostic> {
    run(p, options)
}
