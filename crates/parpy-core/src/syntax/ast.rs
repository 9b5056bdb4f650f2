//! Our own small AST for the supported Python subset. Every node carries the
//! `Span` of the source it came from; unsupported constructs never get here
//! (the converter in `syntax/convert.rs` rejects them).

use crate::diag::{SourceId, Span};
use crate::ops::{BinOp, UnOp};

/// One parsed `def` (decorators ignored).
#[derive(Clone, Debug)]
pub struct FunctionDef {
    pub name: String,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    pub span: Span,
    pub source: SourceId,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub annotation: Option<Expr>,
    /// `name=default`: the default's expression as written (Python
    /// evaluates it once, where the function is defined). The binding fills
    /// in an entry function's defaults from the Python function itself;
    /// sema uses a helper's when a call leaves the parameter out.
    pub default: Option<Keyword>,
    /// After `*` in the `def`: given by name only.
    pub kw_only: bool,
    /// Before `/` in the `def`: given by position only.
    pub pos_only: bool,
    pub span: Span,
}

/// `name=value` of a call (and a parameter's default).
#[derive(Clone, Debug)]
pub struct Keyword {
    pub name: String,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// A name and where it is written.
pub type Named = (String, Span);

/// Where a loop target's names hold a nested tuple (`for i, (a, b) in
/// ...`: `Some((1, 3))`, the range of `a` and `b` in the flat list).
pub type Group = Option<(usize, usize)>;

#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `t0 = t1 = ... = value` (Python evaluates `value` once and assigns
    /// it to each target from left to right). A target is a `Name`, a
    /// `Subscript` or a `Tuple` of those (`a, b = b, a`).
    Assign {
        targets: Vec<Expr>,
        value: Expr,
    },
    /// `target op= value`. `rebind`: the name a `Name` target's new value
    /// is bound to when it is not the name read (`syntax::webs`: the
    /// value read and the value assigned are different variables; a
    /// scalar's `a += v` is `rebind = a + v`, an array's is updated in
    /// place and `rebind` names it too).
    AugAssign {
        target: Expr,
        op: BinOp,
        value: Expr,
        rebind: Option<String>,
    },
    /// `for var in iter:` (sema checks the iterator: `range(...)`, an
    /// array or slice, `enumerate(...)`, `zip(...)`). A tuple target
    /// `for a, b in ...:` has its names in `unpack`, and `var` is then a
    /// name no Python identifier can be (`(a, b)`). A tuple inside it
    /// (`for i, (a, b) in ...:`) has its names in `unpack[lo..hi]`, `group`
    /// `Some((lo, hi))`.
    For {
        var: String,
        var_span: Span,
        unpack: Vec<Named>,
        group: Group,
        iter: Expr,
        body: Vec<Stmt>,
        /// `else:` after the loop: runs when the loop ends without `break`.
        orelse: Vec<Stmt>,
    },
    While {
        cond: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    /// `elif` chains are nested `If`s in `else_body`.
    If {
        cond: Expr,
        then_body: Vec<Stmt>,
        else_body: Vec<Stmt>,
    },
    Return(Option<Expr>),
    /// `with ctx:` (only `parpy.gpu` is valid; checked in sema).
    With {
        ctx: Expr,
        body: Vec<Stmt>,
    },
    /// An expression evaluated for its effect (`parpy.label('x')`, a call).
    Expr(Expr),
    /// `assert test` / `assert test, "message"` (a string literal), whose
    /// failure raises `exception` (`AssertionError`); `raise E("message")`
    /// is one whose test is `False`, raising `E`. An f-string message has
    /// `values`, computed when the test fails; then `msg` is a template
    /// for Python's `str.format`, field `k` being `values[k]`; or, when
    /// `printf` (`"n is %d" % n`), a text for Python's `%` operator, which
    /// takes `values` in order.
    Assert {
        test: Expr,
        msg: Option<String>,
        values: Vec<Expr>,
        exception: String,
        printf: bool,
    },
    Pass,
    /// `break` / `continue`, inside a `for` or `while` loop of the
    /// function (the converter rejects them elsewhere).
    Break,
    Continue,
}

/// Python's builtin functions that parpy functions call (they take
/// numbers and iterables; `print` aside).
pub const PYTHON_BUILTINS: &[&str] = &[
    "range",
    "min",
    "max",
    "abs",
    "float",
    "int",
    "bool",
    "len",
    "round",
    "sum",
    "enumerate",
    "zip",
    "reversed",
    "divmod",
    "sorted",
    "pow",
    "any",
    "all",
];

/// The function name of a list literal (`Expr::list`).
pub const LIST: &str = "#list";

/// The keyword that marks the list literal of `np.array([...])`
/// (`Expr::array_list`).
pub const ARRAY_OF_LIST: &str = "#array";

/// The keyword that marks the list literal a local name's tuple literal
/// reads as (`Expr::tuple_list`).
pub const TUPLE_AS_LIST: &str = "#tuple";

/// The function name of a membership test: `a in b` is `#in(a, b)`, `a
/// not in b` is `not #in(a, b)` (`sema::membership`).
pub const CONTAINS: &str = "#in";

/// The function name of a test against `None`: `a is None` is
/// `#is_none(a)`, `a is not None` is `not #is_none(a)` (`sema::none_args`).
pub const IS_NONE: &str = "#is_none";

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Int(i64),
    Float(f64),
    Bool(bool),
    /// Only meaningful as a call argument (labels).
    Str(String),
    /// Python's `None`: only as a keyword argument, a parameter's default or
    /// an index (a new axis, `x[:, None]`; the converter rejects it
    /// elsewhere), or where sema fills in a
    /// parameter left out before one given by name (`np.var(s, ddof=1)` is
    /// `np.var(s, None, None, None, 1)`).
    None,
    /// `...` in a subscript: the dimensions the other indices leave, as
    /// full slices (sema expands it where the array is known).
    Ellipsis,
    Name(String),
    /// `value.attr`
    Attr {
        value: Box<Expr>,
        attr: String,
    },
    /// `value[i0, i1, ...]`; a tuple index is flattened into `indices`.
    Subscript {
        value: Box<Expr>,
        indices: Vec<Expr>,
    },
    /// `lo:hi` or `lo:hi:step` inside a subscript.
    Slice {
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    /// `-e`, `not e`, `~e` (unary `+` is dropped by the parser).
    Unary {
        op: UnOp,
        arg: Box<Expr>,
    },
    /// Arithmetic and bitwise operators.
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `first op0 e0 op1 e1 ...` (ops are comparison `BinOp`s).
    Compare {
        first: Box<Expr>,
        rest: Vec<(BinOp, Expr)>,
    },
    /// `a and b and c` (`op` is `BinOp::And` or `BinOp::Or`).
    BoolOp {
        op: BinOp,
        values: Vec<Expr>,
    },
    /// `then if cond else else_`
    IfExp {
        cond: Box<Expr>,
        then: Box<Expr>,
        else_: Box<Expr>,
    },
    /// `(e0, e1, ...)`: only as an assignment target, the value of an
    /// assignment (`a, b = b, a`) or what a loop iterates (`for d in (-1,
    /// 0, 1):`, also from a list literal); rejected elsewhere by the
    /// converter.
    Tuple(Vec<Expr>),
    /// `func(args..., name=value...)`. Sema rewrites the keywords into
    /// positional arguments (`sema::keywords`) before it lowers the call.
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        keywords: Vec<Keyword>,
    },
    /// `elt for ... in ... if ...` (`list`: `[elt for ...]`, a list
    /// comprehension, the same loop): only as the argument of `sum`, `any`,
    /// `all`, `max` and `min`, a list comprehension also as the value
    /// stored into a slice (sema rejects it elsewhere).
    Generator {
        elt: Box<Expr>,
        clauses: Vec<Clause>,
        list: bool,
    },
    /// `*v`: only as an argument of a call, whose arguments sema spreads
    /// into (`calls.rs` `spread_starred`: the items of a tuple literal,
    /// the elements of an array of a length known when compiling).
    Starred(Box<Expr>),
    /// `lambda params: body`, or a local lambda or nested function named:
    /// only as the `key=` of Python's `max` and `min`, whose items sema
    /// puts in place of the parameters (`sema::calls` `key_call`).
    Lambda {
        params: Vec<String>,
        body: Box<Expr>,
    },
}

/// One `for var in iter if cond ...` clause of a generator expression; the
/// target as in [`StmtKind::For`].
#[derive(Clone, Debug)]
pub struct Clause {
    pub var: String,
    pub var_span: Span,
    pub unpack: Vec<Named>,
    pub iter: Expr,
    pub ifs: Vec<Expr>,
}

impl Clause {
    /// The clause `for var in iter`, of no conditions.
    pub fn over(var: &str, iter: Expr) -> Clause {
        Clause {
            var: var.to_string(),
            var_span: iter.span,
            unpack: vec![],
            iter,
            ifs: vec![],
        }
    }

    /// The names the clause binds.
    pub fn targets(&self) -> Vec<&str> {
        if self.unpack.is_empty() {
            vec![self.var.as_str()]
        } else {
            self.unpack.iter().map(|(n, _)| n.as_str()).collect()
        }
    }
}

impl Expr {
    /// A number or bool literal, maybe negated (`3`, `-0.5`, `True`).
    pub fn is_number_literal(&self) -> bool {
        match &self.kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => true,
            ExprKind::Unary {
                op: crate::ops::UnOp::Neg,
                arg,
            } => matches!(arg.kind, ExprKind::Int(_) | ExprKind::Float(_)),
            _ => false,
        }
    }

    /// Builders for the expressions sema writes itself (desugared loops,
    /// `divmod`, `np.var`, ...).
    pub fn int(v: i64, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Int(v),
            span,
        }
    }
    pub fn float(v: f64, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Float(v),
            span,
        }
    }
    pub fn name(n: &str, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Name(n.to_string()),
            span,
        }
    }
    pub fn binary(op: BinOp, lhs: Expr, rhs: Expr, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            span,
        }
    }
    /// The comparison `lhs op rhs` (one operator, no chain).
    pub fn compare(op: BinOp, lhs: Expr, rhs: Expr, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Compare {
                first: Box::new(lhs),
                rest: vec![(op, rhs)],
            },
            span,
        }
    }
    /// The Python int `u` (2**63 .. 2**64 - 1 included) as the literal
    /// parpy reads: below 2**63 an int, from there the operators of int64s
    /// it equals (`(u >> 1) * 2 + (u & 1)`), which sema computes exactly
    /// as other such operators. A literal past 2**63 - 1
    /// (`0x8000000000000000`) is written so, and so is a Python int known
    /// when compiling that large (a specialized argument, a module-level
    /// `np.uint64`).
    pub fn int_literal(u: u64, span: Span) -> Expr {
        let int = |v: u64| Expr {
            kind: ExprKind::Int(v as i64),
            span,
        };
        if u <= i64::MAX as u64 {
            return int(u);
        }
        let twice = Expr::binary(BinOp::Mul, int(u >> 1), int(2), span);
        Expr::binary(BinOp::Add, twice, int(u & 1), span)
    }
    /// The full slice `:`.
    /// A list literal `[a, b, c]` of an expression: the call
    /// `#list(a, b, c)` (`#list` is no Python name), which sema reads as
    /// NumPy reads a list, a 1-D array.
    pub fn list(items: Vec<Expr>, span: Span) -> Expr {
        Expr::call(Expr::name(LIST, span), items, span)
    }
    /// The list literal of `np.array([items])` (sema's `copy_of`): read
    /// as a list literal is (`list_items`), but it is NumPy's array of the
    /// list, its items elements of one NumPy type, not a Python list's
    /// items (`is_python_list`): `#list(items, #array=True)`.
    pub fn array_list(items: Vec<Expr>, span: Span) -> Expr {
        let mut e = Expr::list(items, span);
        if let ExprKind::Call { keywords, .. } = &mut e.kind {
            keywords.push(Keyword {
                name: ARRAY_OF_LIST.to_string(),
                value: Expr {
                    kind: ExprKind::Bool(true),
                    span,
                },
                span,
            });
        }
        e
    }
    /// A local name's tuple literal read as a list literal
    /// (`sema::lists::local_tuples`): `#list(items, #tuple=True)`.
    pub fn tuple_list(items: Vec<Expr>, span: Span) -> Expr {
        let mut e = Expr::list(items, span);
        if let ExprKind::Call { keywords, .. } = &mut e.kind {
            keywords.push(Keyword {
                name: TUPLE_AS_LIST.to_string(),
                value: Expr {
                    kind: ExprKind::Bool(true),
                    span,
                },
                span,
            });
        }
        e
    }
    /// Is this list literal a tuple's (`tuple_list`)?
    pub fn is_tuple_list(&self) -> bool {
        matches!(&self.kind, ExprKind::Call { keywords, .. }
            if self.list_items().is_some() && keywords.iter().any(|k| k.name == TUPLE_AS_LIST))
    }
    /// A list literal that is a Python list or tuple (`Expr::list`,
    /// `tuple_list`; not `array_list`).
    pub fn is_python_list(&self) -> bool {
        match &self.kind {
            ExprKind::Call { keywords, .. } => {
                self.list_items().is_some() && !keywords.iter().any(|k| k.name == ARRAY_OF_LIST)
            }
            _ => false,
        }
    }
    /// The elements of a list literal (`Expr::list`, `Expr::array_list`).
    pub fn list_items(&self) -> Option<&[Expr]> {
        match &self.kind {
            ExprKind::Call { func, args, .. } if matches!(&func.kind, ExprKind::Name(n) if n == LIST) => {
                Some(args)
            }
            _ => None,
        }
    }
    pub fn full_slice(span: Span) -> Expr {
        Expr {
            kind: ExprKind::Slice {
                lo: None,
                hi: None,
                step: None,
            },
            span,
        }
    }
    /// Is this the full slice `:`?
    pub fn is_full_slice(&self) -> bool {
        matches!(
            self.kind,
            ExprKind::Slice {
                lo: None,
                hi: None,
                step: None
            }
        )
    }
    /// `value.attr(args)`, the attribute at `at`.
    pub fn method(value: &Expr, attr: &str, args: Vec<Expr>, at: Span, span: Span) -> Expr {
        let func = Expr {
            kind: ExprKind::Attr {
                value: Box::new(value.clone()),
                attr: attr.to_string(),
            },
            span: at,
        };
        Expr::call(func, args, span)
    }
    pub fn call(func: Expr, args: Vec<Expr>, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Call {
                func: Box::new(func),
                args,
                keywords: vec![],
            },
            span,
        }
    }

    /// The dotted path of a name or attribute chain (`parpy.operators.sum`).
    pub fn dotted_path(&self) -> Option<Vec<&str>> {
        match &self.kind {
            ExprKind::Name(n) => Some(vec![n.as_str()]),
            ExprKind::Attr { value, attr } => {
                let mut p = value.dotted_path()?;
                p.push(attr.as_str());
                Some(p)
            }
            _ => None,
        }
    }
}

impl Expr {
    /// Calls `f` on this expression and every expression inside it.
    pub fn walk<'e>(&'e self, f: &mut dyn FnMut(&'e Expr)) {
        f(self);
        match &self.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::None
            | ExprKind::Ellipsis
            | ExprKind::Name(_) => {}
            ExprKind::Attr { value, .. }
            | ExprKind::Unary { arg: value, .. }
            | ExprKind::Starred(value) => value.walk(f),
            ExprKind::Subscript { value, indices } => {
                value.walk(f);
                indices.iter().for_each(|i| i.walk(f));
            }
            ExprKind::Slice { lo, hi, step } => {
                lo.iter()
                    .chain(hi.iter())
                    .chain(step.iter())
                    .for_each(|e| e.walk(f));
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                lhs.walk(f);
                rhs.walk(f);
            }
            ExprKind::Compare { first, rest } => {
                first.walk(f);
                rest.iter().for_each(|(_, e)| e.walk(f));
            }
            ExprKind::BoolOp { values, .. } | ExprKind::Tuple(values) => {
                values.iter().for_each(|e| e.walk(f));
            }
            ExprKind::IfExp { cond, then, else_ } => {
                cond.walk(f);
                then.walk(f);
                else_.walk(f);
            }
            ExprKind::Call {
                func,
                args,
                keywords,
            } => {
                func.walk(f);
                args.iter().for_each(|a| a.walk(f));
                keywords.iter().for_each(|k| k.value.walk(f));
            }
            ExprKind::Generator { elt, clauses, .. } => {
                for c in clauses {
                    c.iter.walk(f);
                    c.ifs.iter().for_each(|e| e.walk(f));
                }
                elt.walk(f);
            }
            ExprKind::Lambda { body, .. } => body.walk(f),
        }
    }
}

impl FunctionDef {
    /// The names Python makes locals of the function: its parameters and
    /// every name the body assigns anywhere (a target of `=`, of an
    /// augmented assignment, of a `for` loop), each as the source writes
    /// it (a renamed web, `name#rK`, is `name`). A read of one never finds
    /// a global of that name, even before its first assignment (Python's
    /// `UnboundLocalError`). A generator's targets are its own.
    pub fn python_locals(&self) -> std::collections::BTreeSet<String> {
        fn target(t: &Expr, out: &mut std::collections::BTreeSet<String>) {
            match &t.kind {
                ExprKind::Name(n) => {
                    out.insert(source_name(n).to_string());
                }
                ExprKind::Tuple(ts) => ts.iter().for_each(|t| target(t, out)),
                _ => {}
            }
        }
        let mut out: std::collections::BTreeSet<String> =
            self.params.iter().map(|p| p.name.clone()).collect();
        for_each_stmt(&self.body, &mut |s| match &s.kind {
            StmtKind::Assign { targets, .. } => targets.iter().for_each(|t| target(t, &mut out)),
            StmtKind::AugAssign {
                target: t, rebind, ..
            } => {
                target(t, &mut out);
                out.extend(rebind.iter().map(|n| source_name(n).to_string()));
            }
            StmtKind::For { var, unpack, .. } => {
                out.insert(source_name(var).to_string());
                out.extend(unpack.iter().map(|(n, _)| source_name(n).to_string()));
            }
            _ => {}
        });
        out
    }

    /// The names the body reads that are neither parameters nor assigned in
    /// it (Python's globals and free variables of the function), each with
    /// the span of its first read, in source order.
    pub fn global_reads(&self) -> Vec<(&str, Span)> {
        fn assigned<'s>(t: &'s Expr, out: &mut Vec<&'s str>) {
            match &t.kind {
                ExprKind::Name(n) => out.push(source_name(n)),
                ExprKind::Tuple(ts) => ts.iter().for_each(|t| assigned(t, out)),
                _ => {}
            }
        }
        fn stmts<'s>(b: &'s [Stmt], locals: &mut Vec<&'s str>, reads: &mut Vec<&'s Expr>) {
            for s in b {
                let mut read = |e: &'s Expr| e.walk(&mut |x| reads.push(x));
                match &s.kind {
                    StmtKind::Assign { targets, value } => {
                        for t in targets {
                            assigned(t, locals);
                            // the indices and array of `x[i] = ...` are read
                            if !matches!(t.kind, ExprKind::Name(_) | ExprKind::Tuple(_)) {
                                read(t);
                            } else if let ExprKind::Tuple(ts) = &t.kind {
                                ts.iter()
                                    .filter(|t| !matches!(t.kind, ExprKind::Name(_)))
                                    .for_each(&mut read);
                            }
                        }
                        read(value);
                    }
                    StmtKind::AugAssign { target, value, .. } => {
                        assigned(target, locals);
                        read(target);
                        read(value);
                    }
                    StmtKind::For {
                        var,
                        unpack,
                        iter,
                        body,
                        orelse,
                        ..
                    } => {
                        locals.push(source_name(var));
                        locals.extend(unpack.iter().map(|(n, _)| source_name(n)));
                        read(iter);
                        stmts(body, locals, reads);
                        stmts(orelse, locals, reads);
                    }
                    StmtKind::While { cond, body, orelse } => {
                        read(cond);
                        stmts(body, locals, reads);
                        stmts(orelse, locals, reads);
                    }
                    StmtKind::If {
                        cond,
                        then_body,
                        else_body,
                    } => {
                        read(cond);
                        stmts(then_body, locals, reads);
                        stmts(else_body, locals, reads);
                    }
                    StmtKind::With { ctx, body } => {
                        read(ctx);
                        stmts(body, locals, reads);
                    }
                    StmtKind::Assert { test, values, .. } => {
                        read(test);
                        values.iter().for_each(&mut read);
                    }
                    StmtKind::Return(Some(e)) | StmtKind::Expr(e) => read(e),
                    StmtKind::Return(None)
                    | StmtKind::Pass
                    | StmtKind::Break
                    | StmtKind::Continue => {}
                }
            }
        }
        let mut locals: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        let mut reads = vec![];
        stmts(&self.body, &mut locals, &mut reads);
        // the targets of generator expressions are their own locals
        for e in &reads {
            if let ExprKind::Generator { clauses, .. } = &e.kind {
                clauses.iter().for_each(|c| locals.extend(c.targets()));
            }
        }
        let mut names: Vec<(&str, Span)> = reads
            .into_iter()
            .filter_map(|e| match &e.kind {
                ExprKind::Name(n) if !locals.contains(&source_name(n)) => {
                    Some((n.as_str(), e.span))
                }
                _ => None,
            })
            .collect();
        names.sort_by_key(|(_, s)| s.lo);
        let mut out: Vec<(&str, Span)> = vec![];
        for (n, s) in names {
            if out.iter().all(|(m, _)| *m != n) {
                out.push((n, s));
            }
        }
        out
    }

    /// The parameters (bit i: parameter i, the first 64) the body stores
    /// into itself: the array of an element or slice assignment (`y[i] =
    /// v`, `y[:] += v`) or of an augmented assignment (`y += v`). (The
    /// binding names the written one of an array passed twice by it.)
    pub fn stored_params(&self) -> u64 {
        let mut stored: Vec<&str> = vec![];
        fn root(e: &Expr) -> Option<&str> {
            match &e.kind {
                ExprKind::Name(n) => Some(n),
                ExprKind::Subscript { value, .. } | ExprKind::Attr { value, .. } => root(value),
                _ => None,
            }
        }
        walk_stmts(&self.body, &mut |s| match &s.kind {
            StmtKind::Assign { targets, .. } => {
                let mut stack: Vec<&Expr> = targets.iter().collect();
                while let Some(t) = stack.pop() {
                    match &t.kind {
                        ExprKind::Tuple(ts) => stack.extend(ts),
                        ExprKind::Subscript { value, .. } => stored.extend(root(value)),
                        _ => {}
                    }
                }
            }
            StmtKind::AugAssign { target, .. } => stored.extend(root(target)),
            _ => {}
        });
        let mut mask = 0u64;
        for (i, p) in self.params.iter().enumerate().take(64) {
            if stored.contains(&p.name.as_str()) {
                mask |= 1 << i;
            }
        }
        mask
    }

    /// The parameters (bit i: parameter i, the first 64) whose 0-d array
    /// argument the function may write or index: it updates the name in
    /// place (`z += v`), indexes it (`z[()] = v`, `z[...] += v`, `z[()]`)
    /// or passes it to a function it calls (`helper(z)`, which may write
    /// it). Python writes the caller's array then, so such a 0-d array is
    /// passed as an array; at any other parameter it is read as a number
    /// (specialized on its value). A parameter the body also assigns (`z =
    /// ...`, a loop target) is a local from there on in Python, and one
    /// annotated as a number (`alpha: T`) is one: left out.
    pub fn in_place_params(&self) -> u64 {
        // (NumPy's, math's and parpy's functions are called through a
        // module: `np.sqrt(z)`)
        const MODULES: &[&str] = &["np", "numpy", "math", "parpy"];
        let base = |e: &Expr| match &e.kind {
            ExprKind::Name(n) => Some(n.clone()),
            _ => None,
        };
        let mut written: Vec<String> = vec![];
        let mut assigned: Vec<String> = vec![];
        walk_stmts(&self.body, &mut |s| match &s.kind {
            StmtKind::Assign { targets, .. } => {
                let mut stack: Vec<&Expr> = targets.iter().collect();
                while let Some(t) = stack.pop() {
                    match &t.kind {
                        ExprKind::Name(n) => assigned.push(n.clone()),
                        ExprKind::Tuple(ts) => stack.extend(ts),
                        ExprKind::Subscript { value, .. } => written.extend(base(value)),
                        _ => {}
                    }
                }
            }
            StmtKind::AugAssign { target, .. } => match &target.kind {
                ExprKind::Subscript { value, .. } => written.extend(base(value)),
                _ => written.extend(base(target)),
            },
            StmtKind::For { var, unpack, .. } => {
                assigned.push(var.clone());
                assigned.extend(unpack.iter().map(|(n, _)| n.clone()));
            }
            _ => {}
        });
        let mut calls = vec![];
        walk_stmt_exprs(&self.body, &mut |e| e.walk(&mut |x| calls.push(x)));
        for c in calls {
            // (`z[()]` reads a 0-d array: a number has no items)
            if let ExprKind::Subscript { value, .. } = &c.kind {
                written.extend(base(value));
            }
            let ExprKind::Call {
                func,
                args,
                keywords,
            } = &c.kind
            else {
                continue;
            };
            let numeric = match func.dotted_path() {
                Some(p) if p.len() == 1 => {
                    PYTHON_BUILTINS.contains(&p[0]) || p[0] == "print" || p[0] == LIST
                }
                Some(p) => MODULES.contains(&p[0]),
                None => false,
            };
            if !numeric {
                let vals = args.iter().chain(keywords.iter().map(|k| &k.value));
                written.extend(vals.filter_map(base));
            }
        }
        // (a parameter annotated as a number, `alpha: T` or `k: I32`, is one;
        // an array's annotation is a call, `buffer(T, [N])`)
        let number = |p: &Param| {
            p.annotation
                .as_ref()
                .is_some_and(|a| !matches!(a.kind, ExprKind::Call { .. }))
        };
        let mut mask = 0u64;
        for (i, p) in self.params.iter().enumerate().take(64) {
            if written.contains(&p.name) && !assigned.contains(&p.name) && !number(p) {
                mask |= 1 << i;
            }
        }
        mask
    }
}

impl Expr {
    /// Calls `f` on every expression inside this one, then on this one
    /// (children first: a rewrite of `f` sees rewritten arguments).
    pub fn walk_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        self.children_mut(&mut |c| c.walk_mut(f));
        f(self);
    }

    /// Calls `f` on each expression directly inside this one, in
    /// Python's order of evaluation (a generator's clauses before its
    /// element).
    pub fn children_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        match &mut self.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::None
            | ExprKind::Ellipsis
            | ExprKind::Name(_) => {}
            ExprKind::Attr { value, .. }
            | ExprKind::Unary { arg: value, .. }
            | ExprKind::Starred(value) => f(value),
            ExprKind::Subscript { value, indices } => {
                f(value);
                indices.iter_mut().for_each(f);
            }
            ExprKind::Slice { lo, hi, step } => {
                for b in [lo, hi, step].into_iter().flatten() {
                    f(b);
                }
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            ExprKind::Compare { first, rest } => {
                f(first);
                rest.iter_mut().for_each(|(_, e)| f(e));
            }
            ExprKind::BoolOp { values, .. } | ExprKind::Tuple(values) => {
                values.iter_mut().for_each(f);
            }
            ExprKind::IfExp { cond, then, else_ } => {
                f(cond);
                f(then);
                f(else_);
            }
            ExprKind::Call {
                func,
                args,
                keywords,
            } => {
                f(func);
                args.iter_mut().for_each(&mut *f);
                keywords.iter_mut().for_each(|k| f(&mut k.value));
            }
            ExprKind::Generator { elt, clauses, .. } => {
                for c in clauses {
                    f(&mut c.iter);
                    c.ifs.iter_mut().for_each(&mut *f);
                }
                f(elt);
            }
            ExprKind::Lambda { body, .. } => f(body),
        }
    }
}

/// Calls `f` on every statement of `stmts`, nested blocks included
/// (a statement before the statements inside it).
pub fn walk_stmts<'s>(stmts: &'s [Stmt], f: &mut dyn FnMut(&'s Stmt)) {
    for s in stmts {
        f(s);
        match &s.kind {
            StmtKind::For { body, orelse, .. } | StmtKind::While { body, orelse, .. } => {
                walk_stmts(body, f);
                walk_stmts(orelse, f);
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                walk_stmts(then_body, f);
                walk_stmts(else_body, f);
            }
            StmtKind::With { body, .. } => walk_stmts(body, f),
            _ => {}
        }
    }
}

/// Calls `f` on the top expressions of every statement of `stmts`
/// (targets, values, conditions, iterators), nested blocks included.
pub fn walk_stmt_exprs<'s>(stmts: &'s [Stmt], f: &mut dyn FnMut(&'s Expr)) {
    walk_stmts(stmts, &mut |s| match &s.kind {
        StmtKind::Assign { targets, value } => {
            targets.iter().for_each(&mut *f);
            f(value);
        }
        StmtKind::AugAssign { target, value, .. } => {
            f(target);
            f(value);
        }
        StmtKind::For { iter, .. } => f(iter),
        StmtKind::While { cond, .. } | StmtKind::If { cond, .. } => f(cond),
        StmtKind::With { ctx, .. } => f(ctx),
        StmtKind::Assert { test, values, .. } => {
            f(test);
            values.iter().for_each(&mut *f);
        }
        StmtKind::Return(Some(e)) | StmtKind::Expr(e) => f(e),
        StmtKind::Return(None) | StmtKind::Pass | StmtKind::Break | StmtKind::Continue => {}
    });
}

/// Calls [`Expr::walk_mut`] with `f` on every expression of `stmts`
/// (targets, values, conditions, iterators), nested blocks included.
pub fn walk_stmts_mut(stmts: &mut [Stmt], f: &mut dyn FnMut(&mut Expr)) {
    for s in stmts {
        match &mut s.kind {
            StmtKind::Assign { targets, value } => {
                targets.iter_mut().for_each(|t| t.walk_mut(f));
                value.walk_mut(f);
            }
            StmtKind::AugAssign { target, value, .. } => {
                target.walk_mut(f);
                value.walk_mut(f);
            }
            StmtKind::For {
                iter, body, orelse, ..
            } => {
                iter.walk_mut(f);
                walk_stmts_mut(body, f);
                walk_stmts_mut(orelse, f);
            }
            StmtKind::While { cond, body, orelse } => {
                cond.walk_mut(f);
                walk_stmts_mut(body, f);
                walk_stmts_mut(orelse, f);
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                cond.walk_mut(f);
                walk_stmts_mut(then_body, f);
                walk_stmts_mut(else_body, f);
            }
            StmtKind::With { ctx, body } => {
                ctx.walk_mut(f);
                walk_stmts_mut(body, f);
            }
            StmtKind::Assert { test, values, .. } => {
                test.walk_mut(f);
                values.iter_mut().for_each(|v| v.walk_mut(f));
            }
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => e.walk_mut(f),
            StmtKind::Return(None) | StmtKind::Pass | StmtKind::Break | StmtKind::Continue => {}
        }
    }
}

/// A name as the source spells it: a renamed web (`name#rK`,
/// [`crate::diag::WEB_MARK`]) is `name`.
pub fn source_name(n: &str) -> &str {
    n.split(crate::diag::WEB_MARK).next().unwrap_or(n)
}

/// Calls `f` on every statement of `stmts` and of the blocks nested in
/// them, each before the statements inside it.
pub fn for_each_stmt<'s>(stmts: &'s [Stmt], f: &mut dyn FnMut(&'s Stmt)) {
    for s in stmts {
        f(s);
        match &s.kind {
            StmtKind::For { body, orelse, .. } | StmtKind::While { body, orelse, .. } => {
                for_each_stmt(body, f);
                for_each_stmt(orelse, f);
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                for_each_stmt(then_body, f);
                for_each_stmt(else_body, f);
            }
            StmtKind::With { body, .. } => for_each_stmt(body, f),
            _ => {}
        }
    }
}

/// [`for_each_stmt`] that may change each statement (before the blocks
/// nested in it are visited).
pub fn for_each_stmt_mut(stmts: &mut [Stmt], f: &mut dyn FnMut(&mut Stmt)) {
    for s in stmts {
        f(s);
        match &mut s.kind {
            StmtKind::For { body, orelse, .. } | StmtKind::While { body, orelse, .. } => {
                for_each_stmt_mut(body, f);
                for_each_stmt_mut(orelse, f);
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                for_each_stmt_mut(then_body, f);
                for_each_stmt_mut(else_body, f);
            }
            StmtKind::With { body, .. } => for_each_stmt_mut(body, f),
            _ => {}
        }
    }
}

impl Stmt {
    /// The expressions of this statement itself (not of nested blocks).
    pub fn own_exprs(&self) -> Vec<&Expr> {
        match &self.kind {
            StmtKind::Assign { targets, value } => targets.iter().chain([value]).collect(),
            StmtKind::AugAssign { target, value, .. } => vec![target, value],
            StmtKind::For { iter, .. } => vec![iter],
            StmtKind::While { cond, .. } | StmtKind::If { cond, .. } => vec![cond],
            StmtKind::With { ctx, .. } => vec![ctx],
            StmtKind::Assert { test, values, .. } => [test].into_iter().chain(values).collect(),
            StmtKind::Return(Some(e)) | StmtKind::Expr(e) => vec![e],
            StmtKind::Return(None) | StmtKind::Pass | StmtKind::Break | StmtKind::Continue => {
                vec![]
            }
        }
    }
}
