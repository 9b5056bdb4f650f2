//! Live-range splitting: one variable per web of a name.
//!
//! Python binds a name to each value assigned to it, with that value's own
//! type; parpy gives each local one type. A name's assignments that never
//! reach a common read are different variables in Python's terms
//! (`acc = 100; y = acc * 100; acc = x8[i]`: the product reads the Python
//! int, whatever `acc` holds later). This pass finds the webs of each local
//! of a function body (the assignments and reads connected through
//! reaching definitions: an assignment reaches a read along some path with
//! no other assignment of the name between; two assignments reaching one
//! read are in one web) and renames every web after the first to a name of
//! its own, `name#rK` ([`crate::diag::WEB_MARK`]), which diagnostics show
//! as `name` ([`crate::diag::shown_names`]). Sema then types each web on
//! its own.
//!
//! The analysis is over the structured control flow of the AST: `if` /
//! `else`, `for` and `while` loops with their `else` (iterated to a fixed
//! point; a loop may run zero times), `break`, `continue` and `return`. An
//! augmented assignment reads the name and assigns it a new value, which
//! starts a web of its own unless it reaches the same read (a loop-carried
//! `acc += v`): `a = 0.5; y = a / 3; a += x32[i]` divides the Python float
//! (sema's `rebind`: `a#r1 = a + x32[i]`, or an array's update in place and
//! `a#r1 = a`); a loop target and each name of a tuple target is an assignment; a
//! parameter, or a local not yet assigned, is an assignment at entry, and
//! the web holding it keeps the name (so reads that may find the local
//! unbound keep sema's `UnboundLocalError` checks, and a parameter keeps its
//! binding). A generator's or comprehension's targets are its own names.
//! A name assigned a call is split like any other (`m = 100; y = m * 100;
//! m = max(x[0], x[1])` multiplies the Python int; `t = np.zeros(3)`, then
//! `t = np.zeros(4)`, are two local arrays); a name assigned a tuple or a
//! generator anywhere is not split yet (`kept_whole`). Code no path
//! reaches (after `return`) is left as it is.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::ast::{self, Expr, ExprKind, FunctionDef, Stmt, StmtKind};
use crate::diag::WEB_MARK;

/// Where a name is assigned.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
enum Site {
    /// At the start of the function (a parameter, or not yet assigned).
    Entry,
    /// A `Name` target (its address).
    Expr(usize),
    /// The `k`-th name of a `for` statement's target (`usize::MAX`: `var`).
    ForVar(usize, usize),
    /// The assignment of an augmented assignment (the statement's address;
    /// its read is the target's `Expr`).
    Aug(usize),
}

/// The definitions of each name that reach a point (`live` false: no
/// path reaches it).
#[derive(Clone, Default, PartialEq, Debug)]
struct State {
    live: bool,
    defs: BTreeMap<String, BTreeSet<usize>>,
}

impl State {
    fn dead() -> State {
        State::default()
    }
    fn join(&mut self, other: &State) {
        if !other.live {
            return;
        }
        if !self.live {
            *self = other.clone();
            return;
        }
        for (n, ds) in &other.defs {
            self.defs.entry(n.clone()).or_default().extend(ds);
        }
    }
}

#[derive(Default)]
struct LoopExits {
    breaks: State,
    continues: State,
}

#[derive(Default)]
struct Webs {
    locals: HashSet<String>,
    /// Definition id -> (name, site).
    defs: Vec<(String, Site)>,
    ids: HashMap<Site, usize>,
    /// Read (a `Name`'s address) -> (name, the definitions reaching it).
    reads: HashMap<usize, (String, BTreeSet<usize>)>,
    loops: Vec<LoopExits>,
    /// Names a generator binds, innermost last.
    shadow: Vec<Vec<String>>,
}

fn addr<T>(t: &T) -> usize {
    t as *const T as usize
}

impl Webs {
    fn def_id(&mut self, name: &str, site: Site) -> usize {
        if let Some(&d) = self.ids.get(&site) {
            return d;
        }
        let d = self.defs.len();
        self.defs.push((name.to_string(), site));
        self.ids.insert(site, d);
        d
    }

    fn define(&mut self, st: &mut State, name: &str, site: Site) {
        if !st.live || !self.locals.contains(name) {
            return;
        }
        let d = self.def_id(name, site);
        st.defs.insert(name.to_string(), BTreeSet::from([d]));
    }

    fn read(&mut self, st: &State, name: &str, at: usize) {
        if !st.live
            || !self.locals.contains(name)
            || self.shadow.iter().any(|s| s.iter().any(|n| n == name))
        {
            return;
        }
        let ds = st.defs.get(name).cloned().unwrap_or_default();
        self.reads
            .entry(at)
            .or_insert_with(|| (name.to_string(), BTreeSet::new()))
            .1
            .extend(ds);
    }

    fn expr(&mut self, e: &Expr, st: &State) {
        match &e.kind {
            ExprKind::Name(n) => self.read(st, n, addr(e)),
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::None
            | ExprKind::Ellipsis => {}
            ExprKind::Attr { value, .. } => self.expr(value, st),
            ExprKind::Subscript { value, indices } => {
                self.expr(value, st);
                indices.iter().for_each(|i| self.expr(i, st));
            }
            ExprKind::Slice { lo, hi, step } => {
                for p in [lo, hi, step].into_iter().flatten() {
                    self.expr(p, st);
                }
            }
            ExprKind::Unary { arg, .. } | ExprKind::Starred(arg) => self.expr(arg, st),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs, st);
                self.expr(rhs, st);
            }
            ExprKind::Compare { first, rest } => {
                self.expr(first, st);
                rest.iter().for_each(|(_, r)| self.expr(r, st));
            }
            ExprKind::BoolOp { values, .. } => values.iter().for_each(|v| self.expr(v, st)),
            ExprKind::IfExp { cond, then, else_ } => {
                self.expr(cond, st);
                self.expr(then, st);
                self.expr(else_, st);
            }
            ExprKind::Tuple(items) => items.iter().for_each(|v| self.expr(v, st)),
            ExprKind::Call {
                func,
                args,
                keywords,
            } => {
                self.expr(func, st);
                args.iter().for_each(|a| self.expr(a, st));
                keywords.iter().for_each(|k| self.expr(&k.value, st));
            }
            ExprKind::Generator { elt, clauses, .. } => {
                // (the first iterable is read outside the generator's
                // scope; the rest inside it)
                self.shadow.push(vec![]);
                for c in clauses {
                    self.expr(&c.iter, st);
                    let names: Vec<String> = c.targets().iter().map(|n| n.to_string()).collect();
                    self.shadow.last_mut().unwrap().extend(names);
                    c.ifs.iter().for_each(|i| self.expr(i, st));
                }
                self.expr(elt, st);
                self.shadow.pop();
            }
            ExprKind::Lambda { params, body } => {
                self.shadow.push(params.clone());
                self.expr(body, st);
                self.shadow.pop();
            }
        }
    }

    fn target(&mut self, t: &Expr, st: &mut State) {
        match &t.kind {
            ExprKind::Name(n) => self.define(st, n, Site::Expr(addr(t))),
            ExprKind::Tuple(items) => items.iter().for_each(|i| self.target(i, st)),
            _ => self.expr(t, st),
        }
    }

    fn block(&mut self, b: &[Stmt], mut st: State) -> State {
        for s in b {
            st = self.stmt(s, st);
        }
        st
    }

    fn for_targets(&mut self, s: &Stmt, st: &mut State) {
        if let StmtKind::For { var, unpack, .. } = &s.kind {
            if unpack.is_empty() {
                self.define(st, var, Site::ForVar(addr(s), usize::MAX));
            }
            for (k, (n, _)) in unpack.iter().enumerate() {
                self.define(st, n, Site::ForVar(addr(s), k));
            }
        }
    }

    /// A loop: `run` is one pass of the condition and the body from the
    /// loop's head; returns the state after the loop (before its `else`)
    /// and the state of its `break`s.
    fn fixed_point(
        &mut self,
        entry: &State,
        run: &mut dyn FnMut(&mut Webs, State) -> State,
    ) -> (State, State) {
        let mut head = entry.clone();
        loop {
            self.loops.push(LoopExits::default());
            let end = run(self, head.clone());
            let exits = self.loops.pop().expect("the loop's exits");
            let mut next = entry.clone();
            next.join(&end);
            next.join(&exits.continues);
            next.join(&head);
            if next == head {
                return (head, exits.breaks);
            }
            head = next;
        }
    }

    fn stmt(&mut self, s: &Stmt, mut st: State) -> State {
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                self.expr(value, &st);
                for t in targets {
                    self.target(t, &mut st);
                }
                st
            }
            StmtKind::AugAssign { target, value, .. } => {
                self.expr(target, &st);
                self.expr(value, &st);
                if let ExprKind::Name(n) = &target.kind {
                    self.define(&mut st, n, Site::Aug(addr(s)));
                }
                st
            }
            StmtKind::For {
                iter, body, orelse, ..
            } => {
                self.expr(iter, &st);
                let (head, breaks) = self.fixed_point(&st, &mut |w, mut h| {
                    w.for_targets(s, &mut h);
                    w.block(body, h)
                });
                let mut out = self.block(orelse, head);
                out.join(&breaks);
                out
            }
            StmtKind::While { cond, body, orelse } => {
                let (head, breaks) = self.fixed_point(&st, &mut |w, h| {
                    w.expr(cond, &h);
                    w.block(body, h)
                });
                self.expr(cond, &head);
                let mut out = self.block(orelse, head);
                out.join(&breaks);
                out
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                self.expr(cond, &st);
                let mut t = self.block(then_body, st.clone());
                let e = self.block(else_body, st);
                t.join(&e);
                t
            }
            StmtKind::Return(v) => {
                if let Some(v) = v {
                    self.expr(v, &st);
                }
                State::dead()
            }
            StmtKind::With { ctx, body } => {
                self.expr(ctx, &st);
                self.block(body, st)
            }
            StmtKind::Expr(e) => {
                self.expr(e, &st);
                st
            }
            StmtKind::Assert { test, values, .. } => {
                self.expr(test, &st);
                values.iter().for_each(|v| self.expr(v, &st));
                st
            }
            StmtKind::Pass => st,
            StmtKind::Break => {
                if let Some(l) = self.loops.last_mut() {
                    l.breaks.join(&st);
                }
                State::dead()
            }
            StmtKind::Continue => {
                if let Some(l) = self.loops.last_mut() {
                    l.continues.join(&st);
                }
                State::dead()
            }
        }
    }
}

/// The names a body assigns (targets, augmented targets, loop targets).
fn assigned(b: &[Stmt], out: &mut HashSet<String>) {
    fn target(t: &Expr, out: &mut HashSet<String>) {
        match &t.kind {
            ExprKind::Name(n) => {
                out.insert(n.clone());
            }
            ExprKind::Tuple(items) => items.iter().for_each(|i| target(i, out)),
            _ => {}
        }
    }
    for s in b {
        match &s.kind {
            StmtKind::Assign { targets, .. } => targets.iter().for_each(|t| target(t, out)),
            StmtKind::AugAssign { target: t, .. } => target(t, out),
            StmtKind::For {
                var,
                unpack,
                body,
                orelse,
                ..
            } => {
                if unpack.is_empty() {
                    out.insert(var.clone());
                }
                out.extend(unpack.iter().map(|(n, _)| n.clone()));
                assigned(body, out);
                assigned(orelse, out);
            }
            StmtKind::While { body, orelse, .. } => {
                assigned(body, out);
                assigned(orelse, out);
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                assigned(then_body, out);
                assigned(else_body, out);
            }
            StmtKind::With { body, .. } => assigned(body, out),
            _ => {}
        }
    }
}

/// Names assigned a tuple or a generator somewhere (tuples that sema
/// tracks by name: left whole for now).
fn kept_whole(b: &[Stmt], out: &mut HashSet<String>) {
    for s in b {
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                if matches!(value.kind, ExprKind::Tuple(_) | ExprKind::Generator { .. }) {
                    for t in targets {
                        t.walk(&mut |e| {
                            if let ExprKind::Name(n) = &e.kind {
                                out.insert(n.clone());
                            }
                        });
                    }
                }
            }
            StmtKind::For { body, orelse, .. } | StmtKind::While { body, orelse, .. } => {
                kept_whole(body, out);
                kept_whole(orelse, out);
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                kept_whole(then_body, out);
                kept_whole(else_body, out);
            }
            StmtKind::With { body, .. } => kept_whole(body, out),
            _ => {}
        }
    }
}

fn find(uf: &mut [usize], mut x: usize) -> usize {
    while uf[x] != x {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    x
}

/// The new name of each renamed site: `Name` addresses (reads and
/// targets) and `for` targets.
type Renames = HashMap<Site, String>;

fn plan(body: &[Stmt]) -> Renames {
    let mut w = Webs::default();
    assigned(body, &mut w.locals);
    let mut whole = HashSet::new();
    kept_whole(body, &mut whole);
    w.locals.retain(|n| !whole.contains(n));
    let mut st = State {
        live: true,
        defs: BTreeMap::new(),
    };
    let mut names: Vec<&String> = w.locals.iter().collect();
    names.sort();
    for n in names {
        let d = w.defs.len();
        w.defs.push((n.clone(), Site::Entry));
        st.defs.insert(n.clone(), BTreeSet::from([d]));
    }
    w.block(body, st);
    // webs: union the definitions that reach one read (an augmented
    // assignment's new value is a definition of its own: sema's `rebind`
    // binds it, an array's in place)
    let mut uf: Vec<usize> = (0..w.defs.len()).collect();
    for (_, ds) in w.reads.values() {
        let mut ds = ds.iter().copied();
        if let Some(first) = ds.next() {
            for d in ds {
                let (a, b) = (find(&mut uf, first), find(&mut uf, d));
                uf[a] = b;
            }
        }
    }
    // per name, its webs in the order of their first definition; the one
    // holding the entry keeps the name (the first when none does)
    let mut webs: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut entry_root: HashMap<String, usize> = HashMap::new();
    for d in 0..w.defs.len() {
        let r = find(&mut uf, d);
        let (name, site) = w.defs[d].clone();
        if site == Site::Entry {
            entry_root.insert(name.clone(), r);
            continue;
        }
        let list = webs.entry(name).or_default();
        if !list.contains(&r) {
            list.push(r);
        }
    }
    let read_roots: HashSet<usize> = w
        .reads
        .values()
        .filter_map(|(_, ds)| ds.iter().next())
        .map(|&d| find(&mut uf, d))
        .collect();
    let mut loop_only: HashSet<usize> = HashSet::new();
    let mut other: HashSet<usize> = HashSet::new();
    for d in 0..w.defs.len() {
        let r = find(&mut uf, d);
        match w.defs[d].1 {
            Site::ForVar(..) => loop_only.insert(r),
            _ => other.insert(r),
        };
    }
    loop_only.retain(|r| !other.contains(r));
    let mut new_name: HashMap<usize, String> = HashMap::new();
    for (name, list) in &webs {
        // (a read that finds the parameter, or the local unbound, keeps
        // the name even when no assignment of the body reaches it)
        let keep = entry_root
            .get(name)
            .copied()
            .filter(|r| list.contains(r) || read_roots.contains(r))
            .unwrap_or(list[0]);
        let mut k = 0;
        for &r in list {
            // (a web of `for` targets only is the loop's own variable,
            // which sema makes anew for each loop: it keeps the name)
            if r == keep || loop_only.contains(&r) {
                continue;
            }
            k += 1;
            new_name.insert(r, format!("{name}{WEB_MARK}{k}"));
        }
    }
    let mut out = Renames::new();
    if new_name.is_empty() {
        return out;
    }
    for d in 0..w.defs.len() {
        if let Some(n) = new_name.get(&find(&mut uf, d)) {
            out.insert(w.defs[d].1, n.clone());
        }
    }
    for (at, (_, ds)) in &w.reads {
        if let Some(&d) = ds.iter().next() {
            if let Some(n) = new_name.get(&find(&mut uf, d)) {
                out.insert(Site::Expr(*at), n.clone());
            }
        }
    }
    out
}

/// Renames the sites of `r` in `b`: the statements' own sites (a `for`
/// statement's targets, an augmented assignment's new value as its
/// `rebind` where it differs from the name read), then every `Name`.
fn rename_block(b: &mut [Stmt], r: &Renames) {
    ast::for_each_stmt_mut(b, &mut |s| {
        let at = addr(s);
        match &mut s.kind {
            StmtKind::AugAssign { target, rebind, .. } => {
                if let ExprKind::Name(n) = &target.kind {
                    let read = r.get(&Site::Expr(addr(target))).unwrap_or(n);
                    let def = r.get(&Site::Aug(at)).unwrap_or(n);
                    if def != read {
                        *rebind = Some(def.clone());
                    }
                }
            }
            StmtKind::For { var, unpack, .. } => {
                if let Some(n) = r.get(&Site::ForVar(at, usize::MAX)) {
                    *var = n.clone();
                }
                for (k, (name, _)) in unpack.iter_mut().enumerate() {
                    if let Some(n) = r.get(&Site::ForVar(at, k)) {
                        *name = n.clone();
                    }
                }
            }
            _ => {}
        }
    });
    ast::walk_stmts_mut(b, &mut |x| {
        if let Some(n) = r.get(&Site::Expr(addr(x))) {
            if let ExprKind::Name(name) = &mut x.kind {
                *name = n.clone();
            }
        }
    });
}

/// Splits the live ranges of `def`'s locals (see the module).
pub fn split(def: &mut FunctionDef) {
    let renames = plan(&def.body);
    if !renames.is_empty() {
        rename_block(&mut def.body, &renames);
    }
}

#[cfg(test)]
mod tests {
    use crate::diag::SourceFile;
    use crate::syntax::ast::{Stmt, StmtKind};
    use crate::syntax::{parse_function, Expr, ExprKind};

    /// The names of every assignment target and read, in source order.
    fn names(src: &str) -> Vec<String> {
        let def = parse_function(SourceFile::from_function_text("w.py", src, 1)).unwrap();
        let mut out = vec![];
        fn e(x: &Expr, out: &mut Vec<String>) {
            x.walk(&mut |y| {
                if let ExprKind::Name(n) = &y.kind {
                    out.push(n.clone());
                }
            });
        }
        fn b(stmts: &[Stmt], out: &mut Vec<String>) {
            for s in stmts {
                match &s.kind {
                    StmtKind::Assign { targets, value } => {
                        e(value, out);
                        targets.iter().for_each(|t| e(t, out));
                    }
                    StmtKind::AugAssign {
                        target,
                        value,
                        rebind,
                        ..
                    } => {
                        e(target, out);
                        e(value, out);
                        out.extend(rebind.iter().map(|r| format!("->{r}")));
                    }
                    StmtKind::For {
                        var,
                        unpack,
                        iter,
                        body,
                        orelse,
                        ..
                    } => {
                        e(iter, out);
                        if unpack.is_empty() {
                            out.push(var.clone());
                        }
                        out.extend(unpack.iter().map(|(n, _)| n.clone()));
                        b(body, out);
                        b(orelse, out);
                    }
                    StmtKind::While { cond, body, orelse } => {
                        e(cond, out);
                        b(body, out);
                        b(orelse, out);
                    }
                    StmtKind::If {
                        cond,
                        then_body,
                        else_body,
                    } => {
                        e(cond, out);
                        b(then_body, out);
                        b(else_body, out);
                    }
                    StmtKind::Return(Some(v)) | StmtKind::Expr(v) => e(v, out),
                    StmtKind::Assert { test, values, .. } => {
                        e(test, out);
                        values.iter().for_each(|v| e(v, out));
                    }
                    StmtKind::With { ctx, body } => {
                        e(ctx, out);
                        b(body, out);
                    }
                    _ => {}
                }
            }
        }
        b(&def.body, &mut out);
        out.retain(|n| {
            let n = n.trim_start_matches("->");
            n.starts_with('a') || n.starts_with('i') || n.starts_with('p')
        });
        out
    }

    #[test]
    fn straight_line_rebinding_is_two_variables() {
        let n =
            names("def f(x, y):\n    a = 100\n    y[0] = a * 100\n    a = x[0]\n    y[1] = a\n");
        assert_eq!(n, ["a", "a", "a#r1", "a#r1"]);
    }

    #[test]
    fn assignments_meeting_at_a_read_are_one_variable() {
        let src = "def f(x, y, c):\n    a = 1\n    if c:\n        a = x[0]\n    y[0] = a\n";
        assert_eq!(names(src), ["a", "a", "a"]);
    }

    #[test]
    fn loop_carried_and_read_after_the_loop() {
        // `acc` read in the loop reaches itself; `a` after a loop that may
        // not run reads both assignments
        let src = "def f(x, y, N):\n    a = 0\n    for i in range(N):\n        a = a + x[i]\n    y[0] = a\n    a = 5\n    y[1] = a\n";
        assert_eq!(names(src), ["a", "i", "a", "i", "a", "a", "a#r1", "a#r1"]);
    }

    #[test]
    fn augmented_assignment_binds_a_new_variable() {
        // `a += x[0]` reads the Python int and binds a new value (`->`:
        // sema's `rebind`, `a#r1 = a + x[0]`); a loop-carried update
        // reaches its own read and stays one web
        let src = "def f(x, y, N):\n    a = 1\n    a += x[0]\n    y[0] = a\n    a = 2.5\n    for i in range(N):\n        a += 1\n    y[1] = a\n";
        assert_eq!(
            names(src),
            ["a", "a", "->a#r1", "a#r1", "a#r2", "i", "a#r2", "a#r2"]
        );
    }

    #[test]
    fn unbound_reads_keep_the_name() {
        // the read after `if` may find `a` unbound: that web keeps `a`
        let src =
            "def f(x, y, c):\n    if c:\n        a = 2\n    y[1] = a\n    a = 3\n    y[2] = a\n";
        assert_eq!(names(src), ["a", "a", "a#r1", "a#r1"]);
    }

    #[test]
    fn parameters_and_breaks() {
        // a parameter re-bound after its last read is a new variable; the
        // value a `break` leaves reaches the read after the loop
        let src = "def f(p, y, N):\n    y[0] = p\n    p = 3\n    y[1] = p\n    a = 0\n    for i in range(N):\n        if i > 2:\n            a = i\n            break\n    else:\n        a = -1\n    y[2] = a\n";
        assert_eq!(
            names(src),
            ["p", "p#r1", "p#r1", "a", "i", "i", "i", "a#r1", "a#r1", "a#r1"]
        );
    }

    #[test]
    fn generator_targets_are_their_own() {
        let src = "def f(x, y, N):\n    i = 5\n    y[0] = i\n    y[1] = sum(x[i] for i in range(N))\n    i = 2\n    y[2] = i\n";
        assert_eq!(names(src), ["i", "i", "i", "i#r1", "i#r1"]);
    }
}
