//! `None` arguments and `is None` tests.
//!
//! A parameter passed `None` (an optional array or number left out, `def
//! f(x, y, w=None)`) is no parameter of the compiled code: the function is
//! specialized for it, as for a dict's structure (the binding passes it as
//! `ArgType::Unusable("NoneType")` and no data). Before the function is
//! lowered its definition is rewritten here:
//! - `p is None` / `p is not None` of a parameter `p` becomes `True` or
//!   `False` where `p` still holds its argument (no assignment of `p` on a
//!   path before the test); where an assignment may have happened (a test
//!   in a loop that assigns `p`, or after an `if` that assigns it in one
//!   branch) the test is refused, as parpy decides it when compiling;
//! - an `if`, a conditional expression, `not`, `and` and `or` whose
//!   condition is then known keep the branch or operand Python evaluates,
//!   so the code for the other case (`w[i]` under `if w is not None:`) is
//!   never compiled;
//! - a `None` parameter passed on to a function is the literal `None`
//!   (a jit helper is specialized for it, `calls.rs`); another read of it
//!   left in the code Python runs is a type error pointing at it
//!   (compiled code holds no `None`); a `None` parameter may be assigned a
//!   value (`if w is None: w = 1.0`), which the rest of the function reads
//!   as a local.
//!
//! Other `is None` tests (of locals, of expressions) are lowered by
//! [`super::Lowerer::is_none_test`]: every value jit code computes is an
//! array or a number, never `None`.

use std::collections::BTreeSet;

use crate::diag::{Diagnostic, Span};
use crate::ops::{BinOp, UnOp};
use crate::signature::ArgType;
use crate::syntax::ast::{self, Expr, ExprKind, FunctionDef, Stmt, StmtKind};

/// A function definition without its `None` parameters.
pub(super) struct Dropped {
    pub def: FunctionDef,
    pub args: Vec<ArgType>,
    pub weak: Vec<bool>,
}

/// Whether an argument is Python's `None`.
fn is_none_arg(a: &ArgType) -> bool {
    matches!(a, ArgType::Unusable(t) if t == "NoneType")
}

/// Drops the `None` parameters of `def` and rewrites its body (see the
/// module comment). `Ok(None)`: no argument is `None`; `Err(())`: a misuse,
/// reported in `diags`.
pub(super) fn drop_none_params(
    def: &FunctionDef,
    args: &[ArgType],
    weak: &[bool],
    diags: &mut Vec<Diagnostic>,
) -> Result<Option<Dropped>, ()> {
    if args.len() != def.params.len() || !args.iter().any(is_none_arg) {
        return Ok(None);
    }
    let none: BTreeSet<String> = def
        .params
        .iter()
        .zip(args)
        .filter(|(_, a)| is_none_arg(a))
        .map(|(p, _)| p.name.clone())
        .collect();
    let mut rw = Rewriter {
        none: &none,
        cur: none.clone(),
        set: BTreeSet::new(),
        params: def.params.iter().map(|p| p.name.clone()).collect(),
        diags,
        ok: true,
    };
    let body = rw.block(def.body.clone());
    if !rw.ok {
        return Err(());
    }
    let mut out = Dropped {
        def: FunctionDef {
            name: def.name.clone(),
            params: vec![],
            body,
            span: def.span,
            source: def.source,
        },
        args: vec![],
        weak: vec![],
    };
    for (k, (p, a)) in def.params.iter().zip(args).enumerate() {
        if !is_none_arg(a) {
            out.def.params.push(p.clone());
            out.args.push(a.clone());
            out.weak.push(weak.get(k).copied().unwrap_or(false));
        }
    }
    Ok(Some(out))
}

struct Rewriter<'a> {
    /// The parameters passed `None`.
    none: &'a BTreeSet<String>,
    /// Those no path so far has assigned.
    cur: BTreeSet<String>,
    /// The names every path so far has assigned (a value, never None).
    set: BTreeSet<String>,
    /// Every parameter (one not passed None is never None).
    params: BTreeSet<String>,
    diags: &'a mut Vec<Diagnostic>,
    ok: bool,
}

/// A bool literal's value.
fn known(e: &Expr) -> Option<bool> {
    match e.kind {
        ExprKind::Bool(b) => Some(b),
        _ => None,
    }
}

/// Whether no statement after `stmts` runs (they end in `return`,
/// `break` or `continue` on every path).
fn ends(stmts: &[Stmt]) -> bool {
    match stmts.last().map(|s| &s.kind) {
        Some(StmtKind::Return(_) | StmtKind::Break | StmtKind::Continue) => true,
        Some(StmtKind::If {
            then_body,
            else_body,
            ..
        }) => ends(then_body) && ends(else_body),
        _ => false,
    }
}

fn bool_lit(b: bool, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Bool(b),
        span,
    }
}

impl Rewriter<'_> {
    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
        self.ok = false;
    }

    /// Marks `names` as assigned from here on.
    fn assigned(&mut self, names: &[String]) {
        for n in names {
            self.cur.remove(n);
            self.set.insert(n.clone());
        }
    }

    fn block(&mut self, stmts: Vec<Stmt>) -> Vec<Stmt> {
        let mut out = vec![];
        for s in stmts {
            // (what follows a `return`, also one of the branch taken, is
            // never run: `if s is None: return v` then `return v * s`)
            if ends(&out) {
                break;
            }
            self.stmt(s, &mut out);
        }
        out
    }

    /// A block that runs or not (a loop's body, with the loop's
    /// `targets` assigned in it): what it may assign is maybe assigned
    /// after it.
    fn branch(&mut self, stmts: Vec<Stmt>, targets: &[String]) -> Vec<Stmt> {
        let (cur, set) = (self.cur.clone(), self.set.clone());
        self.assigned(targets);
        let out = self.block(stmts);
        self.cur.retain(|n| cur.contains(n));
        self.set = set;
        out
    }

    fn stmt(&mut self, mut s: Stmt, out: &mut Vec<Stmt>) {
        match &mut s.kind {
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                self.expr(cond);
                if let Some(taken) = known(cond) {
                    // (Python has no block scope: the branch taken in place)
                    let body = std::mem::take(if taken { then_body } else { else_body });
                    for s in body {
                        self.stmt(s, out);
                    }
                    return;
                }
                let (cur, set) = (self.cur.clone(), self.set.clone());
                *then_body = self.block(std::mem::take(then_body));
                let (then_cur, mut then_set) = (
                    std::mem::replace(&mut self.cur, cur),
                    std::mem::replace(&mut self.set, set),
                );
                *else_body = self.block(std::mem::take(else_body));
                // (a branch that ends in `return` does not reach what
                // follows: the other's assignments hold there)
                match (ends(then_body), ends(else_body)) {
                    (true, false) => {}
                    (false, true) => {
                        self.cur = then_cur;
                        self.set = then_set;
                    }
                    _ => {
                        self.cur.retain(|n| then_cur.contains(n));
                        then_set.retain(|n| self.set.contains(n));
                        self.set = then_set;
                    }
                }
            }
            StmtKind::For {
                var,
                unpack,
                iter,
                body,
                orelse,
                ..
            } => {
                self.expr(iter);
                // (a later iteration sees what an earlier one assigned)
                let mut names = vec![];
                super::assign::assigned_names(body, &mut names);
                self.cur.retain(|n| !names.contains(n));
                // (the body runs with the loop's targets assigned)
                let mut targets = vec![var.clone()];
                targets.extend(unpack.iter().map(|(n, _)| n.clone()));
                *body = self.branch(std::mem::take(body), &targets);
                *orelse = self.branch(std::mem::take(orelse), &[]);
            }
            StmtKind::While { cond, body, orelse } => {
                let mut names = vec![];
                super::assign::assigned_names(body, &mut names);
                self.cur.retain(|n| !names.contains(n));
                self.expr(cond);
                *body = self.branch(std::mem::take(body), &[]);
                *orelse = self.branch(std::mem::take(orelse), &[]);
            }
            StmtKind::With { ctx, body } => {
                self.expr(ctx);
                *body = self.block(std::mem::take(body));
            }
            StmtKind::Assign { targets, value } => {
                self.expr(value);
                for t in targets.iter_mut() {
                    // (an element or attribute target reads its base)
                    if !matches!(t.kind, ExprKind::Name(_) | ExprKind::Tuple(_)) {
                        self.expr(t);
                    }
                }
                let mut names = vec![];
                super::assign::assigned_names(std::slice::from_ref(&s), &mut names);
                self.assigned(&names);
            }
            StmtKind::AugAssign { target, value, .. } => {
                self.expr(value);
                self.expr(target);
                let mut names = vec![];
                super::assign::assigned_names(std::slice::from_ref(&s), &mut names);
                self.assigned(&names);
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => self.expr(e),
            StmtKind::Assert { test, values, .. } => {
                self.expr(test);
                values.iter_mut().for_each(|v| self.expr(v));
                if known(test) == Some(true) {
                    return;
                }
            }
            StmtKind::Return(None) | StmtKind::Pass | StmtKind::Break | StmtKind::Continue => {}
        }
        out.push(s);
    }

    /// Rewrites `e` in place: the `is None` tests of parameters and what
    /// they decide.
    fn expr(&mut self, e: &mut Expr) {
        let span = e.span;
        match &mut e.kind {
            ExprKind::Call { func, args, .. }
                if matches!(&func.kind, ExprKind::Name(n) if n == ast::IS_NONE)
                    && args.len() == 1 =>
            {
                if let ExprKind::Name(n) = &args[0].kind {
                    if let Some(b) = self.param_is_none(n, span) {
                        *e = bool_lit(b, span);
                        return;
                    }
                }
                self.expr(&mut args[0]);
            }
            ExprKind::Name(n) => {
                if self.cur.contains(n) {
                    let n = n.clone();
                    self.error(
                        Diagnostic::error(format!(
                            "`{n}` is None here (the argument passed has type NoneType), which compiled code cannot read"
                        ))
                        .at(span, "None")
                        .note("parpy compiles the function for the arguments passed: a parameter given None is no value of the compiled code, only `is None` tests read it")
                        .help(format!(
                            "test it first (`if {n} is not None:`), or pass an array or a number"
                        ))
                        .type_error(),
                    );
                }
            }
            ExprKind::Unary { op: UnOp::Not, arg } => {
                self.expr(arg);
                if let Some(b) = known(arg) {
                    *e = bool_lit(!b, span);
                }
            }
            ExprKind::BoolOp { op, values } => {
                // Python evaluates the operands up to the first that decides
                let decides = *op == BinOp::Or;
                let mut kept = vec![];
                for mut v in std::mem::take(values) {
                    self.expr(&mut v);
                    let stop = known(&v) == Some(decides);
                    kept.push(v);
                    if stop {
                        break;
                    }
                }
                // (`True and x` is `x`: a literal that decides nothing is
                // dropped, unless it is the value of the whole)
                let last = kept.len() - 1;
                let mut k = 0;
                kept.retain(|v| {
                    k += 1;
                    k - 1 == last || known(v).is_none()
                });
                if kept.len() == 1 {
                    *e = kept.pop().expect("one value");
                } else {
                    *values = kept;
                }
            }
            ExprKind::IfExp { cond, then, else_ } => {
                self.expr(cond);
                match known(cond) {
                    Some(taken) => {
                        let mut arm = std::mem::replace(
                            if taken { then } else { else_ },
                            Box::new(bool_lit(false, span)),
                        );
                        self.expr(&mut arm);
                        *e = *arm;
                    }
                    None => {
                        self.expr(then);
                        self.expr(else_);
                    }
                }
            }
            ExprKind::Generator { elt, clauses, .. } => {
                // (its own targets may shadow a parameter's name)
                let (cur, set) = (self.cur.clone(), self.set.clone());
                for c in clauses.iter_mut() {
                    self.expr(&mut c.iter);
                    for n in c.targets() {
                        self.cur.remove(n);
                        self.set.insert(n.to_string());
                    }
                    c.ifs.iter_mut().for_each(|i| self.expr(i));
                }
                self.expr(elt);
                self.cur = cur;
                self.set = set;
            }
            ExprKind::Call {
                func,
                args,
                keywords,
            } => {
                self.expr(func);
                // (a `None` parameter passed on is `None`: a jit helper is
                // specialized for it)
                for a in args.iter_mut() {
                    match &a.kind {
                        ExprKind::Name(n) if self.cur.contains(n) => a.kind = ExprKind::None,
                        _ => self.expr(a),
                    }
                }
                keywords.iter_mut().for_each(|k| self.expr(&mut k.value));
            }
            _ => e.children_mut(&mut |c| self.expr(c)),
        }
    }

    /// `name is None` of a parameter: known where it still holds its
    /// argument; refused for a `None` parameter that may have been
    /// assigned; `None` (no answer) for other names.
    fn param_is_none(&mut self, name: &str, span: Span) -> Option<bool> {
        if self.cur.contains(name) {
            return Some(true);
        }
        if self.set.contains(name) {
            return Some(false);
        }
        if self.none.contains(name) {
            self.error(
                Diagnostic::error(format!(
                    "`{name} is None` where `{name}` may have been assigned"
                ))
                .at(span, "not known when compiling")
                .note(format!(
                    "`{name}` was passed None: parpy decides its `is None` tests when compiling, which it cannot do after a loop iteration or a branch that may have assigned it"
                ))
                .help(format!(
                    "assign `{name}` before any loop or branch (`if {name} is None: {name} = ...` first), or keep a bool flag of your own"
                )),
            );
            return Some(false);
        }
        // (a parameter passed an array or a number)
        self.params.contains(name).then_some(false)
    }
}

impl super::Lowerer<'_, '_> {
    /// `a is None` (the converter's `#is_none(a)`) of what no parameter
    /// passed `None` is: false (a local, an array, a number), once `a` is
    /// lowered for its errors.
    pub(super) fn is_none_test(&mut self, args: &[Expr], span: Span) -> Option<super::TExpr> {
        let [a] = args else {
            return None;
        };
        let bound = matches!(&a.kind, ExprKind::Name(n) if self.scope.get(n).is_some());
        if !bound {
            self.lower_expr(a)?;
        }
        Some(super::TExpr {
            e: crate::ir::Expr::new(
                crate::ir::ExprKind::Bool(false),
                crate::ir::Type::Scalar(crate::ir::ElemTy::Bool),
                span,
            ),
            weak: true,
        })
    }
}
