//! Calls: parpy and Python builtins (reductions, math, conversions, min/max,
//! len) and other jit functions (specialized into `Program.helpers`).

use std::sync::Arc;

use crate::diag::{Diagnostic, Span};
use crate::ir::{
    BinOp, ElemTy, Expr, ExprKind, MathFn, Place, ReduceOp, Stmt, StmtKind, Type, VarKind,
};
use crate::resolve::{Builtin, Resolved, Resolver};
use crate::signature::ArgType;
use crate::syntax::{ast, FunctionDef};

use super::expr::bool_binary;
use super::slices::{AccRule, IndexSlot};
use super::types::{convert, promote};
use super::{helper_for, Lowerer, TExpr};

impl Lowerer<'_, '_> {
    pub(super) fn arity_error(&mut self, name: &str, expected: &str, got: usize, span: Span) {
        self.error(
            Diagnostic::error(format!(
                "`{name}` takes {expected} but {got} {} given",
                if got == 1 { "was" } else { "were" }
            ))
            .at(span, "wrong number of arguments"),
        );
    }

    /// The builtin a call target denotes, if any (used for labels, `range`
    /// and `with parpy.gpu`).
    pub(super) fn builtin_of(&self, func: &ast::Expr) -> Option<Builtin> {
        if self.is_local_root(func) {
            return None;
        }
        let path = func.dotted_path()?;
        self.resolve_path(&path).builtin()
    }

    /// What the global `path` denotes: the resolver's answer, but for
    /// sema's own paths under [`NUMPY_ROOT`](crate::resolve::NUMPY_ROOT).
    pub(super) fn resolve_path(&self, path: &[&str]) -> Resolved {
        match path {
            [crate::resolve::NUMPY_ROOT, t] if ElemTy::from_numpy_name(t).is_some() => {
                ElemTy::from_numpy_name(t).map_or(Resolved::NotFound, Resolved::Dtype)
            }
            [crate::resolve::PYTHON_ROOT, name] => {
                Builtin::from_name(name).map_or(Resolved::NotFound, Resolved::Builtin)
            }
            [crate::resolve::PYTHON_ROOT, "math", name] => {
                crate::resolve::math_module_builtin(name)
                    .map_or(Resolved::NotFound, Resolved::Builtin)
            }
            [crate::resolve::NUMPY_ROOT, f] if crate::resolve::numpy_allocates(f) => {
                Resolved::Allocates(format!("numpy.{f}"))
            }
            [crate::resolve::NUMPY_ROOT, rest @ ..] => {
                crate::resolve::numpy_builtin(&rest.join("."))
                    .map_or(Resolved::NotFound, Resolved::NumPy)
            }
            _ => self.resolver.resolve(path),
        }
    }

    /// The call `#np.<name>(args)`: NumPy's `name` whatever the module
    /// calls NumPy.
    pub(super) fn numpy_call(name: &str, args: Vec<ast::Expr>, span: Span) -> ast::Expr {
        rooted_call(crate::resolve::NUMPY_ROOT, name, args, span)
    }

    /// The call `#py.<path>(args)`: Python's builtin `path` (`int`), or a
    /// function of its `math` module (`math.gcd`), whatever the function
    /// names them.
    pub(super) fn python_call(path: &str, args: Vec<ast::Expr>, span: Span) -> ast::Expr {
        let (module, name) = path.rsplit_once('.').unwrap_or(("", path));
        let root = match module {
            "" => crate::resolve::PYTHON_ROOT.to_string(),
            m => format!("{}.{m}", crate::resolve::PYTHON_ROOT),
        };
        rooted_call(&root, name, args, span)
    }

    /// The call `func(args, keywords)` with each `*v` spread, as Python
    /// spreads it: the elements of an array `v` of a length known when
    /// compiling, `v[0], v[1], ...` (the rows of a 2-D one), or the items
    /// of a tuple value (`x.shape`, `divmod(a, b)`); then bound
    /// as every call is before lowering (`keywords::bind_call`). A `*`
    /// of a number, or of an array too long to spell out, is an error.
    fn spread_starred(
        &mut self,
        func: &ast::Expr,
        args: &[ast::Expr],
        keywords: &[ast::Keyword],
        span: Span,
    ) -> Option<(ast::Expr, Vec<ast::Expr>, Vec<ast::Keyword>)> {
        let mut spread = vec![];
        for a in args {
            let ast::ExprKind::Starred(v) = &a.kind else {
                spread.push(a.clone());
                continue;
            };
            if self.rank(v) == 0 {
                // a tuple value: `*x.shape`, `*divmod(a, b)`, a helper's
                // pair; its items kept in hidden locals, in order
                if let Some(values) = self.unpacked_values(v) {
                    for (value, at) in values {
                        let name = self.stash_value("spread", value?, at);
                        spread.push(ast::Expr::name(&name, at));
                    }
                    continue;
                }
            }
            let n = match self.rank(v) {
                0 => None,
                _ => self.array_shape(v)?.and_then(|s| s.first().copied()),
            };
            let number = matches!(
                v.kind,
                ast::ExprKind::Name(_)
                    | ast::ExprKind::Subscript { .. }
                    | ast::ExprKind::Int(_)
                    | ast::ExprKind::Float(_)
                    | ast::ExprKind::Bool(_)
                    | ast::ExprKind::Binary { .. }
                    | ast::ExprKind::Unary { .. }
            );
            match n {
                Some(n) if n <= MAX_SPREAD => {
                    spread.extend((0..n).map(|k| super::assign::item(v, k)));
                }
                None if number && self.rank(v) == 0 => {
                    self.error(
                        Diagnostic::error(
                            "`*` of a number: it is not iterable (a TypeError in Python)",
                        )
                        .at(a.span, "a number")
                        .type_error(),
                    );
                    return None;
                }
                _ => {
                    let why = match n {
                        Some(n) => format!(
                            "an array of {n} elements (parpy spells out at most {MAX_SPREAD})"
                        ),
                        None => "no array whose length parpy knows when compiling".to_string(),
                    };
                    self.error(
                        Diagnostic::error("`*` spreads a tuple literal or an array of known length in parpy functions")
                            .at(a.span, why)
                            .help("pass the elements, or the array itself to a function that takes one"),
                    );
                    return None;
                }
            }
        }
        let mut call = ast::Expr {
            kind: ast::ExprKind::Call {
                func: Box::new(func.clone()),
                args: spread,
                keywords: keywords.to_vec(),
            },
            span,
        };
        let local = self.is_local_root(func);
        let mut diags = vec![];
        super::keywords::bind_call(&mut call, local, self.resolver, &mut diags);
        if !diags.is_empty() {
            diags.into_iter().for_each(|d| self.error(d));
            return None;
        }
        match call.kind {
            ast::ExprKind::Call {
                func,
                args,
                keywords,
            } => Some((*func, args, keywords)),
            _ => None,
        }
    }

    /// The call `range(args)` of Python's `range`, whatever the function
    /// names `range`.
    pub(super) fn range_call(args: Vec<ast::Expr>, span: Span) -> ast::Expr {
        rooted_call(crate::resolve::PYTHON_ROOT, "range", args, span)
    }

    pub(super) fn lower_call(
        &mut self,
        func: &ast::Expr,
        (args, keywords): (&[ast::Expr], &[ast::Keyword]),
        span: Span,
    ) -> Option<TExpr> {
        if args
            .iter()
            .any(|a| matches!(a.kind, ast::ExprKind::Starred(_)))
        {
            let (func, args, keywords) = self.spread_starred(func, args, keywords, span)?;
            return self.lower_call(&func, (&args, &keywords), span);
        }
        if self.slice.is_some() {
            if let Some(r) = self.reshape_of(func, args) {
                return self.reshaped(r, span);
            }
        }
        if let Some(r) = self.method_call(func, args, span) {
            return r;
        }
        if let ast::ExprKind::Name(n) = &func.kind {
            if n == ast::LIST {
                return self.array_literal(args, span);
            }
            if n == ast::CONTAINS {
                return self.membership(args, span);
            }
            if n == ast::IS_NONE {
                return self.is_none_test(args, span);
            }
        }
        let name = func
            .dotted_path()
            .map(|p| p.join("."))
            .unwrap_or_else(|| "this expression".to_string());
        if self.is_local_value(func) {
            self.error(
                Diagnostic::error(format!("`{name}` is not a function"))
                    .at(func.span, "cannot be called"),
            );
            return None;
        }
        match self.resolve_global(func)? {
            Resolved::Builtin(b)
                if self.slice.is_some()
                    && b.takes_python_numbers(args.len())
                    && args.iter().any(|a| self.rank(a) >= 1) =>
            {
                self.error(
                    Diagnostic::error(format!("`{name}` takes Python numbers, not arrays"))
                        .at(span, "called with an array inside a slice statement")
                        .note("Python raises here for an array of more than one element (`float`, `int`, `bool`, `math.*` and Python's `max` / `min` of several arguments take numbers); parpy would apply it to each element")
                        .help("use NumPy's elementwise function (`np.sqrt`, `np.floor`, `np.maximum(a, b)`, `np.minimum`, `v.astype(np.float64)`), or write a loop over the elements"),
                );
                None
            }
            Resolved::Builtin(b @ (Builtin::Max | Builtin::Min)) if !keywords.is_empty() => {
                self.keyed_call(b, &name, args, keywords, span)
            }
            Resolved::Builtin(b) => self.builtin_call(b, &name, args, span),
            // (`np.allclose`, `np.array_equal` and `np.array_equiv` give a
            // Python bool; `np.real(v)` is `v.real`,
            // of a Python number that number, not a NumPy value: `x16[i] *
            // np.real(2.0)` is a float16)
            Resolved::NumPy(b @ (Builtin::AllClose | Builtin::Real | Builtin::ArrayEqual(_))) => {
                self.builtin_call(b, &name, args, span)
            }
            // (NumPy makes Python numbers alone NumPy values first:
            // `np.exp(True)` is a bool's, float16; `math_call`)
            Resolved::NumPy(b @ (Builtin::Math(_) | Builtin::Abs)) => {
                self.numpy_math = true;
                let r = self.builtin_call(b, &name, args, span);
                self.numpy_math = false;
                numpy_value(r)
            }
            Resolved::NumPy(b) => numpy_value(self.builtin_call(b, &name, args, span)),
            Resolved::Function { def, globals } => {
                self.helper_call(&def, &globals, args, span, false)
            }
            Resolved::Dtype(t) => self.dtype_call(t, &name, args, span),
            Resolved::External { name, decls } => self.external_call(&name, &decls, args, span),
            Resolved::Callback { .. } => {
                self.error(
                    Diagnostic::error(format!(
                        "the callback `{name}` returns nothing: call it as a statement of its own"
                    ))
                    .at(span, "its value is used here"),
                );
                None
            }
            Resolved::Unsupported(desc) => {
                let help = match name.as_str() {
                    // (debugging output: the plain-Python run prints)
                    "print" => "compiled code does not print: run the same call as plain Python to see the values (`opts.backend = parpy.CompileBackend.Python`), where `print` and debuggers work",
                    _ => "only parpy builtins, the `math` and NumPy functions listed in the README, `@parpy.jit` functions and plain Python functions defined with `def` can be called",
                };
                self.error(
                    Diagnostic::error(format!("cannot call `{name}` ({desc}) in a parpy function"))
                        .at(func.span, "not callable from jit code")
                        .help(help),
                );
                None
            }
            Resolved::Permute(_) => {
                // (a view of an array or a subscript of one is `x.T` or
                // the array itself: `stmt.rs`, `permute.rs`)
                let call = ast::Expr {
                    kind: ast::ExprKind::Call {
                        func: Box::new(func.clone()),
                        args: args.to_vec(),
                        keywords: keywords.to_vec(),
                    },
                    span,
                };
                let d = self.permutation_error(&call).unwrap_or_else(|| {
                    Diagnostic::error(format!(
                        "`{name}` takes an array argument or a subscript of one in parpy functions"
                    ))
                    .at(span, "not an array or a subscript of one")
                    .help("transpose the arrays of the expression instead (`np.transpose(x + 1.0)` is `x.T + 1.0`)")
                });
                self.error(d);
                None
            }
            // `np.array(v)`, `np.asarray(v)`, `np.copy(v)` of a number: a
            // 0-d array of it (`local_arrays.rs` `copy_of` leaves these)
            Resolved::Allocates(what)
                if copies_a_number(&what, args, keywords, |e| self.rank(e)) =>
            {
                let v = self.lower_expr(&args[0])?;
                self.scalar_elem(&v)?;
                numpy_value(Some(v))
            }
            // (read where an array expression reads it)
            Resolved::Allocates(what) if what == "numpy.arange" && self.slice.is_some() => {
                if let Some(k) = keywords.first() {
                    self.error(
                        Diagnostic::error("`np.arange` takes its bounds by position in jit code")
                            .at(k.value.span, format!("keyword argument `{}`", k.name))
                            .note("its type follows its bounds: integers give the default integer, a float bound a float")
                            .help("convert the expression instead (`np.arange(8) * 1.0`, `.astype(...)`)"),
                    );
                    return None;
                }
                self.arange(args, span)
            }
            Resolved::Allocates(what) if what == "numpy.linspace" && self.slice.is_some() => {
                self.linspace((args, keywords), span)
            }
            Resolved::Allocates(what)
                if self.slice.is_some()
                    && matches!(
                        what.as_str(),
                        "numpy.eye" | "numpy.identity" | "numpy.tri" | "numpy.triu" | "numpy.tril"
                    ) =>
            {
                self.triangle(&what["numpy.".len()..], (args, keywords), span)
            }
            Resolved::Allocates(what)
                if self.slice.is_some()
                    && super::local_arrays::allocation(&what["numpy.".len()..]).is_some() =>
            {
                self.filled_array(&what["numpy.".len()..], (args, keywords), func.span, span)
            }
            Resolved::Allocates(what) if self.slice.is_none() && what != "numpy.empty" => {
                // (one parpy computes where an array expression reads it)
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` makes an array, where a number is expected"
                    ))
                    .at(span, "an array")
                    .note("parpy computes NumPy's new array where an array expression reads it: a slice assignment (`y[i, :] = ...`), a local array (`t = ...`), a reduction (`np.sum(...)`) or an element (`...[0]`)")
                    .help("store it into a slice of the same shape, or reduce it to a number")
                    .type_error(),
                );
                None
            }
            Resolved::Allocates(what) => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` allocates a new array, which jit code cannot do"
                    ))
                    .at(func.span, format!("`{what}` allocates"))
                    .note("jit code makes a new array as `name = np.zeros(shape)` (or `np.ones`, `np.empty`, `np.full` and their `_like` forms), its shape known when compiling, and reads those and the NumPy constructors the user guide lists in array expressions")
                    .help("allocate the array in Python before the call and pass it as an argument")
                    .help("for a running value, use a local scalar (`acc = 0.0`)"),
                );
                None
            }
            _ => {
                self.error(
                    Diagnostic::error(format!("`{name}` is not a function"))
                        .at(func.span, "cannot be called"),
                );
                None
            }
        }
    }

    /// Python's `max` / `min` with `key=` or `default=`: of one iterable
    /// `keyed_search`, of two or more numbers `keyed_extreme` (without
    /// `default=`, Python's TypeError).
    fn keyed_call(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[ast::Expr],
        keywords: &[ast::Keyword],
        span: Span,
    ) -> Option<TExpr> {
        let kw = |n: &str| keywords.iter().find(|k| k.name == n).map(|k| &k.value);
        let (key, default) = (kw("key"), kw("default"));
        if let [iterable] = args {
            let iterates = matches!(iterable.kind, ast::ExprKind::Generator { .. })
                || self.rank(iterable) > 0
                || matches!(&iterable.kind, ast::ExprKind::Tuple(_))
                || matches!(&iterable.kind, ast::ExprKind::Call { func, .. }
                    if self.builtin_of(func) == Some(Builtin::Range));
            if iterates {
                return self.keyed_search(b, name, iterable, (key, default), span);
            }
        }
        if let (Some(d), true) = (default, args.len() != 1) {
            self.error(
                Diagnostic::error(format!(
                    "Cannot specify a default for {name}() with multiple positional arguments"
                ))
                .at(d.span, "a default")
                .note("Python raises TypeError")
                .type_error(),
            );
            return None;
        }
        match key {
            Some(key) if args.len() >= 2 => self.keyed_extreme(b, name, args, key, span),
            _ => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` with `key=` or `default=` takes an iterable or two or more numbers in parpy functions"
                    ))
                    .at(span, "not an iterable")
                    .help(format!(
                        "pass a `range`, a 1-D slice, a generator expression, or the numbers themselves: `{name}(range(n), key=f)`, `{name}(a, b, key=abs)`"
                    )),
                );
                None
            }
        }
    }

    /// Python's `max(a, b, ..., key=f)` / `min(...)` of numbers: each item
    /// evaluated once, then `f` of each in turn; an item replaces the best
    /// so far only when its key is greater (less), so the first of equal
    /// keys wins, and a NaN key never replaces nor is replaced, as
    /// CPython's comparisons of the keys. Items and keys are held in
    /// hidden locals (`stash_value`); the choice
    /// is a chain of conditional expressions of them, typed as `a if c
    /// else b` is.
    fn keyed_extreme(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[ast::Expr],
        key: &ast::Expr,
        span: Span,
    ) -> Option<TExpr> {
        if args.len() < 2 || args.iter().any(|a| self.rank(a) > 0) {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` with `key=` takes two or more numbers in parpy functions"
                ))
                .at(span, "not numbers")
                .help(format!(
                    "pass the numbers themselves: `{name}(a, b, key=abs)`"
                )),
            );
            return None;
        }
        let hold = |this: &mut Self, v: &ast::Expr, what: &str| -> Option<ast::Expr> {
            let t = this.lower_expr(v)?;
            this.scalar_elem(&t)?;
            let hidden = this.stash_value(&format!("{name}_{what}"), t, v.span);
            Some(ast::Expr::name(&hidden, v.span))
        };
        let mut items = vec![];
        for a in args {
            items.push(hold(self, a, "item")?);
        }
        let mut keys = vec![];
        for item in &items {
            keys.push(hold(self, &key_call(key, item.clone()), "key")?);
        }
        let op = match b {
            Builtin::Max => BinOp::Gt,
            _ => BinOp::Lt,
        };
        let (mut best, mut best_key) = (items[0].clone(), keys[0].clone());
        for (item, k) in items.into_iter().zip(keys).skip(1) {
            let better = ast::Expr {
                kind: ast::ExprKind::Compare {
                    first: Box::new(k.clone()),
                    rest: vec![(op, best_key.clone())],
                },
                span,
            };
            let choose = |a: ast::Expr, b: ast::Expr| ast::Expr {
                kind: ast::ExprKind::IfExp {
                    cond: Box::new(better.clone()),
                    then: Box::new(a),
                    else_: Box::new(b),
                },
                span,
            };
            best = hold(self, &choose(item, best), "best")?;
            best_key = hold(self, &choose(k, best_key), "best_key")?;
        }
        self.lower_expr(&best)
    }

    /// The operand of NumPy's `np.sum(s, where=m)` / `np.max(s, initial=v,
    /// where=m)` / `np.min` (`initial` the parameter's argument, `None`
    /// when left out) and the initial value: `np.where(m, s, f)`, `f` a value of `s`'s type that
    /// changes no result, 0 for a sum, the type's lowest (highest) value
    /// for a max (min), which `reduction_with_initial` then reduces from
    /// its initial value (a sum's 0 when none is given: NumPy adds the
    /// masked elements to the identity, `-0.0` alone gives `0.0`). A max
    /// or min with `where=` and no `initial=` is NumPy's ValueError, a
    /// located error. Without a mask, `s` and `initial` themselves.
    fn masked_operand(
        &mut self,
        op: ReduceOp,
        name: &str,
        (a, initial, mask): (&ast::Expr, &ast::Expr, Option<&ast::Expr>),
        axis: bool,
        span: Span,
    ) -> Option<(ast::Expr, ast::Expr)> {
        let Some(mask) = mask else {
            return Some((a.clone(), initial.clone()));
        };
        if axis {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` with `where=` takes an array or a slice, without `axis`"
                ))
                .at(span, "with `axis`")
                .help("reduce each line in a loop: `np.sum(x[i, :], where=m[i, :])`"),
            );
            return None;
        }
        let no_initial = matches!(initial.kind, ast::ExprKind::None);
        if no_initial && op != ReduceOp::Sum {
            let what = if op == ReduceOp::Max {
                "maximum"
            } else {
                "minimum"
            };
            self.error(
                Diagnostic::error(format!(
                    "`{name}` with `where=` needs `initial=`"
                ))
                .at(span, "no `initial=`")
                .note(format!("NumPy raises ValueError: reduction operation '{what}' does not have an identity, so to use a where mask one has to specify 'initial'"))
                .help(format!("give the value of no elements: `np.{}(s, initial=v, where=m)`", &what[..3])),
            );
            return None;
        }
        let initial = match no_initial {
            true => ast::Expr::int(0, span),
            false => initial.clone(),
        };
        let Some((_, elem)) = self.array_shape_of(a) else {
            return Some((a.clone(), initial));
        };
        let at = mask.span;
        let fill = match (op, elem) {
            (ReduceOp::Sum, _) => ast::Expr::int(0, at),
            (_, ElemTy::Bool) => ast::Expr {
                kind: ast::ExprKind::Bool(op == ReduceOp::Min),
                span: at,
            },
            (_, t) if t.is_float() => {
                let inf = ast::Expr::float(f64::INFINITY, at);
                let inf = match op {
                    ReduceOp::Max => ast::Expr {
                        kind: ast::ExprKind::Unary {
                            op: crate::ir::UnOp::Neg,
                            arg: Box::new(inf),
                        },
                        span: at,
                    },
                    _ => inf,
                };
                Self::numpy_call(t.numpy_name(), vec![inf], at)
            }
            (_, t) => {
                let (lo, hi) = t.int_range()?;
                let v = if op == ReduceOp::Max { lo } else { hi };
                let v = match u64::try_from(v) {
                    Ok(u) => ast::Expr::int_literal(u, at),
                    Err(_) => ast::Expr::int(v as i64, at),
                };
                Self::numpy_call(t.numpy_name(), vec![v], at)
            }
        };
        let masked = Self::numpy_call("where", vec![mask.clone(), a.clone(), fill], span);
        Some((masked, initial))
    }

    /// NumPy's `np.sum(s, initial=v)`, `np.max(s, initial=v)`, `np.min`
    /// (and the methods) of a slice whose length is known when compiling:
    /// `v` cast to the reduction's type (as NumPy casts it, a C cast), then
    /// `v + np.sum(s)` (NumPy adds the pairwise sum of the elements to the
    /// initial value), `np.maximum(v, np.max(s))`, `np.minimum(...)`; of
    /// an empty slice, `v` itself.
    fn reduction_with_initial(
        &mut self,
        op: ReduceOp,
        name: &str,
        (a, initial): (&ast::Expr, &ast::Expr),
        axis: bool,
        span: Span,
    ) -> Option<TExpr> {
        let shape = match self.array_shape_of(a) {
            Some((Some(shape), _)) if !axis && self.rank(a) >= 1 => shape,
            _ => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` with `initial=` takes an array or a slice whose length is known when compiling, without `axis`"
                    ))
                    .at(span, "not such an array")
                    .help(format!(
                        "combine the value yourself: `{}`",
                        match op {
                            ReduceOp::Sum => "v + np.sum(s)",
                            ReduceOp::Max => "np.maximum(v, np.max(s))",
                            _ => "np.minimum(v, np.min(s))",
                        }
                    )),
                );
                return None;
            }
        };
        let v = self.lower_expr(initial)?;
        self.scalar_elem(&v)?;
        let b = Builtin::Reduce(op);
        let (r, empty) = match shape.iter().product::<i64>() {
            // (the type of NumPy's reduction of the elements: a zero-size
            // sum's, or the elements' own)
            0 => match op {
                ReduceOp::Sum => (
                    self.builtin_call_with(b, name, std::slice::from_ref(a), span)?,
                    true,
                ),
                _ => {
                    let elem = self.array_shape_of(a)?.1;
                    let zero = Expr::new(ExprKind::Int(0), Type::Scalar(elem), span);
                    (
                        TExpr {
                            e: zero,
                            weak: false,
                        },
                        true,
                    )
                }
            },
            _ => (
                self.builtin_call_with(b, name, std::slice::from_ref(a), span)?,
                false,
            ),
        };
        let ty = self.scalar_elem(&r)?;
        // (a Python int the reduction's integer type cannot hold is
        // NumPy's OverflowError, where the cast would wrap it)
        if ty.is_int() {
            self.python_int_fits(&v, ty)?;
        }
        let v = TExpr {
            e: convert(v.e, ty),
            weak: false,
        };
        if empty {
            return Some(v);
        }
        match op {
            ReduceOp::Sum => self.binary(BinOp::Add, v, r, span),
            ReduceOp::Max => self.numpy_extreme(BinOp::Max, v, r, span),
            _ => self.numpy_extreme(BinOp::Min, v, r, span),
        }
    }

    fn builtin_call(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        // `np.sum(a, dtype=T)`: `T(np.sum(a.astype(T)))`
        let mut cast = None;
        if let [a, rest @ ..] = args {
            if let Some((a, rest, t)) = self.reduction_dtype(b, name, a, rest)? {
                cast = Some(([vec![a], rest].concat(), t));
            }
        }
        let (args, result) = match &cast {
            Some((all, t)) => (&all[..], Some(*t)),
            None => (args, None),
        };
        let args = self.compact(name, super::keywords::builtin_signature(b), args);
        let axis = self.axis_value()?;
        let args = args?;
        if let (Builtin::Reduce(op), [a, initial, mask @ ..]) = (b, &args[..]) {
            let (a, initial) =
                self.masked_operand(op, name, (a, initial, mask.first()), axis.is_some(), span)?;
            return self.reduction_with_initial(op, name, (&a, &initial), axis.is_some(), span);
        }
        self.axis = axis;
        let r = self.builtin_call_with(b, name, &args, span);
        // a builtin that reduces nothing leaves it
        self.axis = None;
        // Python's `any` and `all` give a Python bool (`all(m) + all(m)` is
        // 2), NumPy's a NumPy bool
        let r = match (b, name) {
            (Builtin::Any | Builtin::All, "any" | "all") => r.map(|t| TExpr { weak: true, ..t }),
            _ => r,
        };
        in_dtype(r, result)
    }

    /// The axes of the `axis=` argument `compact` took, with its
    /// `keepdims=` (`Some(None)` when there was no axis, `None` after an
    /// error): an integer or a tuple of integers and a bool, known when
    /// compiling; the reduction normalizes the axes. (`keepdims` alone
    /// keeps every dimension at length 1: the number broadcasts the same.)
    fn axis_value(&mut self) -> Option<Option<super::slices::Axes>> {
        let mut axis = None;
        let mut keepdims = false;
        for (param, a) in std::mem::take(&mut self.reduction_args) {
            let items: Vec<ast::Expr> = match &a.kind {
                ast::ExprKind::Tuple(items) if param == "axis" => items.clone(),
                _ => vec![a.clone()],
            };
            let mut values = vec![];
            for it in &items {
                let v = self.lower_expr(it)?;
                let ok = match v.e.ty.elem() {
                    Some(ElemTy::Bool) => param == "keepdims",
                    Some(t) => t.is_int() && param == "axis",
                    None => false,
                };
                match self.known_int(&v.e).filter(|_| ok) {
                    Some(k) => values.push(k),
                    None => {
                        let what = if param == "axis" {
                            "`axis` must be an integer or a tuple of integers known when compiling"
                        } else {
                            "`keepdims` must be True or False, known when compiling"
                        };
                        self.error(
                            Diagnostic::error(what)
                                .at(it.span, "not a constant of that kind")
                                .type_error(),
                        );
                        return None;
                    }
                }
            }
            match param {
                "axis" => axis = Some((values, a.span)),
                _ => keepdims = values == [1],
            }
        }
        Some(axis.map(|(axes, span)| super::slices::Axes {
            axes,
            keepdims,
            span,
        }))
    }

    /// `builtin_call` once `compact` has read the arguments.
    pub(super) fn builtin_call_with(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        // a reduction of a masked read: of the selected elements, packed
        if let Some(r) = self.masked_reduction(b, name, args, span) {
            return r;
        }
        // of a slice with run-time bounds: up to its run-time count
        if let Some(r) = self.runtime_slice_reduction(b, name, args, span) {
            return r;
        }
        self.builtin_call_plain(b, name, args, span)
    }

    /// `builtin_call_with` of arguments with no masked read and, for a
    /// reduction, no slice with run-time bounds.
    pub(super) fn builtin_call_plain(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        // NumPy's reduction of a number (`np.sum(x[i, 0])`) is that of the
        // 0-d array, whose one element the list `[v]` holds: its type and
        // value (`np.sum` of an int32 is an int64, `np.mean` a float64)
        if let (true, Some(v), None) = (b.numpy_reduction(), args.first(), &self.axis) {
            // (NumPy's functions and methods: `np.sum`, `.sum()`; not
            // Python's `any(v)` or parpy's operators, which take arrays)
            if name.contains('.')
                && !name.starts_with("parpy.")
                && self.rank(v) == 0
                && v.list_items().is_none()
                && !matches!(v.kind, ast::ExprKind::Generator { .. })
            {
                let mut all = args.to_vec();
                all[0] = ast::Expr::list(vec![v.clone()], v.span);
                return self.builtin_call_with(b, name, &all, span);
            }
        }
        // Python's `min((a, b, c))` is `min(a, b, c)`, of one item that item;
        // `sum((a, b))` is `0 + a + b`; `any`, `all` of a tuple read it as a
        // list
        if let [ast::Expr {
            kind: ast::ExprKind::Tuple(items),
            span: at,
        }] = args
        {
            match (b, items.as_slice()) {
                (Builtin::Min | Builtin::Max, []) => {
                    self.error(
                        Diagnostic::error(format!("`{name}` of an empty tuple"))
                            .at(*at, "no items")
                            .note("Python raises ValueError here"),
                    );
                    return None;
                }
                (Builtin::Min | Builtin::Max, [one]) => return self.lower_expr(one),
                (Builtin::Min | Builtin::Max, _) => {
                    return self.builtin_call_with(b, name, items, span)
                }
                // (Python adds the items to 0, one at a time)
                (Builtin::Sum, _) => {
                    let sum = items.iter().fold(ast::Expr::int(0, *at), |acc, item| {
                        ast::Expr::binary(crate::ops::BinOp::Add, acc, item.clone(), span)
                    });
                    return self.lower_expr(&sum);
                }
                (Builtin::Any | Builtin::All, _) => {
                    let list = [ast::Expr::list(items.clone(), *at)];
                    return self.builtin_call_with(b, name, &list, span);
                }
                _ => {}
            }
        }
        // Python's `sum`, `min`, `max` of a list read its items as they are
        if let (Builtin::Sum | Builtin::Min | Builtin::Max, [list]) = (b, args) {
            if let Some(items) = list.list_items() {
                let weak = self.python_list(list, &format!("`{name}` reads"))??;
                if weak && !items.is_empty() {
                    // (of Python numbers, one or more: a Python number, as
                    // of the tuple: `sum([3.0, 0.1])` is `0 + 3.0 + 0.1`)
                    let tuple = ast::Expr {
                        kind: ast::ExprKind::Tuple(items.to_vec()),
                        span: list.span,
                    };
                    return self.builtin_call_with(b, name, &[tuple], span);
                }
            }
        }
        if let [g @ ast::Expr {
            kind: ast::ExprKind::Generator { .. },
            ..
        }] = args
        {
            if let Some(a) = self.axis.take() {
                self.error(
                    Diagnostic::error(format!("`{name}` of a generator takes no `axis`"))
                        .at(a.span, "an axis")
                        .help("a generator yields numbers: reduce a slice to use an axis"),
                );
                return None;
            }
            return self.generator_call(b, name, g, None, span);
        }
        match b {
            Builtin::Reduce(op) => {
                if args.len() != 1 {
                    self.arity_error(name, "1 argument", args.len(), span);
                    return None;
                }
                self.reduction(op, &args[0], span)
            }
            // `np.round(x, d)` / `round(x, d)`: NumPy's decimal rounding;
            // Python's `round` of a Python float known when compiling is
            // Python's (the exact decimal value rounded, `round(2.675, 2)`
            // is 2.67 where NumPy's is 2.68)
            Builtin::Math(MathFn::Round) | Builtin::MathToInt(MathFn::Round) if args.len() == 2 => {
                let python = matches!(b, Builtin::MathToInt(_));
                self.round_decimals(&args[0], &args[1], python, span)
            }
            Builtin::Math(f) => self.math_call(f, name, args, span),
            // (of any number of coordinates: CPython's `vector_norm`)
            Builtin::PyMath(MathFn::Hypot) => self.python_hypot(args, span),
            Builtin::PyMath(f) => {
                // (Python's `math` computes on a Python float, float64,
                // and returns one: `math.sqrt(x32)` is a double)
                self.python_math = true;
                let r = self.math_call(f, name, args, span);
                self.python_math_errors(f, args, r?, span)
            }
            Builtin::MathToInt(f) => {
                // Python's `math.floor`, `math.ceil` and `round(x)` return an int.
                let mut vals = self.operands(name, f.arity(), args, span)?;
                if f == MathFn::Round && vals[0].e.ty.elem() == Some(ElemTy::Bool) {
                    let v = vals.remove(0);
                    vals.insert(0, self.round_of_bool(v, None, true, span)?);
                }
                let mut t = self.math_of_values(f, name, vals, span)?;
                if f == MathFn::Trunc {
                    self.python_trunc_applies(&t, args.first()?)?;
                }
                // a NumPy int64 / uint64 has no `__floor__`: Python's
                // `math.floor` takes its float (2**53 + 1 is 2**53, 2**63 - 1
                // an OverflowError); narrower ones are exact in a float
                let wide = matches!(t.e.ty.elem(), Some(ElemTy::I64 | ElemTy::U64));
                if matches!(f, MathFn::Floor | MathFn::Ceil) && wide && !t.weak {
                    t.e = convert(t.e, ElemTy::F64);
                }
                let t = self.python_int_of(t, args.first()?, span);
                let mut e = convert(t, self.opts.int_type);
                e.span = span;
                Some(TExpr { e, weak: true })
            }
            Builtin::Abs => self.math_call(MathFn::Abs, name, args, span),
            Builtin::Min
            | Builtin::Max
            | Builtin::Minimum
            | Builtin::Maximum
            | Builtin::Fmin
            | Builtin::Fmax => {
                if let ([s], Builtin::Min | Builtin::Max) = (args, b) {
                    if self.rank(s) == 1 {
                        // Python's `min(s)` of a 1-D slice: its least number
                        // as Python folds it (`reduction_mapped`)
                        let op = match b {
                            Builtin::Min => ReduceOp::Min,
                            _ => ReduceOp::Max,
                        };
                        self.python_extreme = true;
                        return self.reduction(op, s, span);
                    }
                }
                if args.len() < 2 {
                    self.arity_error(name, "at least 2 arguments", args.len(), span);
                    return None;
                }
                // each with its NaN rule (`ops::NanRule`): builtin `min` /
                // `max` are NumPy's `minimum` / `maximum`
                let op = match b {
                    Builtin::Min | Builtin::Minimum => BinOp::Min,
                    Builtin::Max | Builtin::Maximum => BinOp::Max,
                    Builtin::Fmin => BinOp::FMin,
                    _ => BinOp::FMax,
                };
                let vals: Vec<Option<TExpr>> = args.iter().map(|a| self.lower_expr(a)).collect();
                // (Python's `max` keeps the first of a tie, `max(-0.0, 0.0)`
                // is -0.0; NumPy's `maximum` and the IR's give the second)
                let python = matches!(b, Builtin::Min | Builtin::Max);
                let mut acc: Option<TExpr> = None;
                for v in vals {
                    let v = v?;
                    acc = Some(match acc {
                        None => v,
                        Some(a) if python => {
                            let m = self.binary(op, v, a, span)?;
                            self.python_extreme_of_floats(m, span)
                        }
                        Some(a) => self.numpy_extreme(op, a, v, span)?,
                    });
                }
                acc
            }
            // Python's conversions; `bool` is a number's truth (NaN is true)
            Builtin::Float | Builtin::Int | Builtin::Bool => {
                if args.len() != 1 {
                    self.arity_error(name, "1 argument", args.len(), span);
                    return None;
                }
                if let (ast::ExprKind::Str(text), false) = (&args[0].kind, b == Builtin::Bool) {
                    return self.float_of_string(b, text, span);
                }
                let v = self.lower_expr(&args[0])?;
                self.scalar_elem(&v)?;
                let ty = match b {
                    Builtin::Float => self.opts.float_type,
                    Builtin::Int => self.opts.int_type,
                    _ => ElemTy::Bool,
                };
                self.python_float_fits(&v, ty, false)?;
                let mut e = match b {
                    Builtin::Int => convert(self.python_int_of(v, &args[0], span), ty),
                    _ => self.convert_exact(v, ty),
                };
                e.span = span;
                Some(TExpr { e, weak: true })
            }
            Builtin::Convert => {
                if args.len() != 2 {
                    self.arity_error(name, "2 arguments (a value and a type)", args.len(), span);
                    return None;
                }
                let v = self.lower_expr(&args[0]);
                let ty = self.dtype_arg(&args[1]);
                let (v, ty) = (v?, ty?);
                self.scalar_elem(&v)?;
                let inner = v.e;
                let e = if inner.ty == Type::Scalar(ty) {
                    inner
                } else {
                    Expr::new(
                        ExprKind::Convert {
                            arg: Box::new(inner),
                        },
                        Type::Scalar(ty),
                        span,
                    )
                };
                Some(TExpr { e, weak: false })
            }
            Builtin::Where => {
                let [c, a, b] = args else {
                    self.arity_error(
                        name,
                        "3 arguments (a condition and two values)",
                        args.len(),
                        span,
                    );
                    return None;
                };
                // (elementwise: an array condition is NumPy's mask)
                let c = self.lower_expr(c).and_then(|c| self.truthy(c));
                let (a, b) = (self.lower_expr(a), self.lower_expr(b));
                let (c, a, b) = (c?, a?, b?);
                // NumPy promotes the two values (since NumPy 2.5 a Python
                // int the other's type cannot hold raises OverflowError,
                // as in arithmetic; 2.4 cast it); the result is a 0-d
                // array (`numpy_value`)
                let (a, b, ty, weak) = self.unify(a, b)?;
                let e = Expr::select_as(c, a, b, Type::Scalar(ty), span);
                Some(TExpr { e, weak })
            }
            Builtin::Select => self.select(name, args, span),
            Builtin::Clip => {
                // `np.clip(x, lo)`: no upper bound (NumPy 2.1)
                let none = ast::Expr {
                    kind: ast::ExprKind::None,
                    span,
                };
                let (x, lo, hi) = match args {
                    [x, lo, hi] => (x, lo, hi),
                    [x, lo] => (x, lo, &none),
                    _ => {
                        self.arity_error(
                            name,
                            "3 arguments (a value, a lower and an upper bound)",
                            args.len(),
                            span,
                        );
                        return None;
                    }
                };
                // a bound of None is none (not both: NumPy refuses that)
                let bound = |l: &mut Self, e: &ast::Expr| match e.kind {
                    ast::ExprKind::None => Some(None),
                    _ => l.lower_expr(e).map(Some),
                };
                if matches!(
                    (&lo.kind, &hi.kind),
                    (ast::ExprKind::None, ast::ExprKind::None)
                ) {
                    self.error(
                        Diagnostic::error(format!("`{name}` needs a lower or an upper bound"))
                            .at(span, "both bounds are None"),
                    );
                    return None;
                }
                let (x, lo, hi) = (self.lower_expr(x), bound(self, lo), bound(self, hi));
                let (mut x, lo, hi) = (x?, lo?, hi?);
                // NumPy's clip: `x` wins ties (the max and min of the IR
                // give their second operand then: -0.0 clipped at 0.0 stays
                // -0.0), a NaN value or bound gives NaN; a Python int
                // beyond `x`'s integer range on its own side is dropped
                // (with one bound, NumPy's clip is `np.maximum(x, lo)` or
                // `np.minimum(x, hi)`: the bound wins ties)
                let one_sided = lo.is_none() || hi.is_none();
                if let Some(lo) = lo.and_then(|b| Self::clip_bound(&x, b, false)) {
                    x = match one_sided {
                        true => self.numpy_extreme(BinOp::Max, x, lo, span)?,
                        false => self.binary(BinOp::Max, lo, x, span)?,
                    };
                }
                match hi.and_then(|b| Self::clip_bound(&x, b, true)) {
                    Some(hi) if one_sided => self.numpy_extreme(BinOp::Min, x, hi, span),
                    Some(hi) => self.binary(BinOp::Min, hi, x, span),
                    None => Some(x),
                }
            }
            Builtin::Ufunc(u) => self.ufunc_call(u, name, args, span),
            Builtin::NanToNum => self.nan_to_num(name, args, span),
            Builtin::IsClose => self.isclose(name, args, span),
            Builtin::MathIsClose => self.math_isclose(name, args, span),
            Builtin::MathGcdLcm(f) => self.math_gcd_lcm(f, name, args, span),
            Builtin::MathAngle(to_rad) => self.math_angle(to_rad, name, args, span),
            Builtin::Real => self.real_part(name, args, span),
            Builtin::MathUlp => self.math_ulp(name, args, span),
            Builtin::MathProd => self.math_prod(name, args, span),
            Builtin::MathFsum => self.math_fsum(name, args, span),
            Builtin::IsIn => self.isin(name, args, span),
            Builtin::MathDist => self.math_dist(args, span),
            Builtin::MathInt(f) => self.math_int(f, name, args, span),
            // `np.all(np.isclose(...))`, a Python bool
            Builtin::AllClose => {
                let close = Self::numpy_call("isclose", args.to_vec(), span);
                let all = Self::numpy_call("all", vec![close], span);
                let t = self.lower_expr(&all)?;
                Some(TExpr { e: t.e, weak: true })
            }
            Builtin::Var | Builtin::Std if args.len() == 2 => {
                self.variance(&args[0], Some(&args[1]), b == Builtin::Std, span)
            }
            Builtin::NanVar | Builtin::NanStd if args.len() == 2 => {
                self.nan_variance(&args[0], Some(&args[1]), b == Builtin::NanStd, span)
            }
            Builtin::Norm if args.len() == 2 => self.norm_ord(&args[0], &args[1], span),
            Builtin::Mean
            | Builtin::Var
            | Builtin::Std
            | Builtin::Norm
            | Builtin::Any
            | Builtin::All
            | Builtin::CountNonzero
            | Builtin::ArgMax
            | Builtin::ArgMin
            | Builtin::NanArgMax
            | Builtin::NanArgMin
            | Builtin::NanReduce(_)
            | Builtin::NanMean
            | Builtin::NanVar
            | Builtin::NanStd
            | Builtin::Ptp
            | Builtin::Average => {
                if let (Builtin::Average, [a, weights]) = (b, args) {
                    return self.weighted_average(a, weights, span);
                }
                let [a] = args else {
                    self.arity_error(
                        name,
                        "1 argument (use a slice for an axis)",
                        args.len(),
                        span,
                    );
                    return None;
                };
                self.of_slice(b, a, span)
            }
            // (`compact` has read its axis, 0 unless told)
            Builtin::UfuncReduce(inner) => self.builtin_call_with(*inner, name, args, span),
            Builtin::UfuncFold(ufunc) => {
                let [a] = args else {
                    self.arity_error(name, "1 argument", args.len(), span);
                    return None;
                };
                self.ufunc_fold(ufunc, name, a, span)
            }
            Builtin::Cumulative(_) | Builtin::UfuncAccumulate(_) | Builtin::UfuncFoldScan(_) => {
                self.cumulative_outside_a_slice(name, span);
                None
            }
            Builtin::Sort(_) | Builtin::Convolve => {
                self.sort_outside_a_slice(name, span);
                None
            }
            Builtin::SearchSorted => self.searchsorted(name, args, span),
            Builtin::Interp => self.interp(name, args, span),
            Builtin::Trapezoid => self.trapezoid(name, args, span),
            Builtin::ArrayEqual(equiv) => self.array_equal(equiv, name, args, span),
            Builtin::Polyval => self.polyval(name, args, span),
            Builtin::Cov(corr) => self.cov_value(corr, args, span),
            Builtin::Digitize => self.digitize(name, args, span),
            Builtin::Histogram => self.histogram_elsewhere(span),
            Builtin::CopyTo => {
                self.statement_only(&format!("`{name}`"), span);
                None
            }
            Builtin::Flip(axis) => self.flip(name, args, axis, span),
            Builtin::Diff => self.diff(name, args, span),
            Builtin::Diagonal(_) | Builtin::Trace => self.diagonal(b, name, args, span),
            Builtin::Roll => self.roll(name, args, span),
            Builtin::Pad => self.pad(name, args, span),
            Builtin::Cross => self.cross(name, args, span),
            Builtin::Median => {
                let [a] = args else {
                    self.arity_error(name, "1 argument", args.len(), span);
                    return None;
                };
                self.median(name, a, span)
            }
            Builtin::Quantile(percent) => {
                let [a, q] = args else {
                    self.arity_error(name, "2 arguments", args.len(), span);
                    return None;
                };
                self.quantile(name, a, q, percent, span)
            }
            Builtin::Einsum => self.einsum(name, args, span),
            Builtin::Dot | Builtin::Outer | Builtin::Inner => {
                let [x, y] = args else {
                    self.arity_error(name, "2 arguments", args.len(), span);
                    return None;
                };
                match b {
                    Builtin::Dot => self.dot(x, y, name, span),
                    Builtin::Inner => {
                        // (NumPy's of more dimensions is not `np.dot`'s:
                        // `a @ b.T` for inner, of the flattened for vdot)
                        if let Some(v) = [x, y].into_iter().find(|v| self.rank(v) != 1) {
                            self.error(
                                Diagnostic::error(format!("`{name}` takes two 1-D operands in parpy functions"))
                                    .at(v.span, format!("{} dimensions", self.rank(v)))
                                    .help("write the product as a reduction, e.g. `np.sum(a[i, :] * b[j, :])`"),
                            );
                            return None;
                        }
                        self.dot(x, y, name, span)
                    }
                    _ => self.outer(x, y, name, span),
                }
            }
            Builtin::Sum => {
                let [a] = args else {
                    self.arity_error(
                        name,
                        "1 argument (a start value is not supported)",
                        args.len(),
                        span,
                    );
                    return None;
                };
                // (Python's `sum([])`, `sum(())`: the int 0)
                let empty = match &a.kind {
                    ast::ExprKind::Tuple(items) => items.is_empty(),
                    _ => a.list_items().is_some_and(|items| items.is_empty()),
                };
                if empty {
                    return Some(self.weak_int(0, span));
                }
                self.vector_sum(name, a, false, span)
            }
            Builtin::Len => {
                let before = self.sh.diags.len();
                let n = match args {
                    // (a list or tuple literal: its items)
                    [a] => match (&a.kind, a.list_items()) {
                        (ast::ExprKind::Tuple(items), _) => Some(items.len() as i64),
                        (_, Some(items)) => Some(items.len() as i64),
                        // (a slice with run-time bounds: its count when it
                        // runs, `runtime_slices.rs`; else any array
                        // expression, lowered for its shape: `len(x[i][0])`,
                        // `len(x[i] * 2)`)
                        _ => match self.runtime_len(a) {
                            Some(n) => return n,
                            None => self.leading_dim(a).or_else(|| {
                                let quiet = self.sh.diags.len() == before;
                                let (shape, _) = quiet.then(|| self.shape_of(a, "len"))??;
                                shape.first().copied()
                            }),
                        },
                    },
                    _ => None,
                };
                if n.is_none() && self.sh.diags.len() == before {
                    self.error(
                        Diagnostic::error(
                            "`len` takes one array, or a slice or row of one, or a list",
                        )
                        .at(span, "invalid `len` call"),
                    );
                }
                Some(self.weak_int(n?, span))
            }
            Builtin::Label => {
                self.error(
                    Diagnostic::error("`parpy.label` must be a statement of its own")
                        .at(span, "label used inside an expression")
                        .help("write `parpy.label('name')` on the line before the loop or statement it labels"),
                );
                None
            }
            // Python's `pow(a, b)` is `a ** b`
            Builtin::Pow => match args {
                [a, b] => {
                    let power = ast::Expr::binary(BinOp::Pow, a.clone(), b.clone(), span);
                    self.lower_expr(&power)
                }
                [_, _, _] => self.math_int(crate::resolve::IntFn::PowMod, name, args, span),
                _ => {
                    self.arity_error(name, "2 or 3 arguments", args.len(), span);
                    None
                }
            },
            Builtin::RavelMultiIndex => self.ravel_multi_index(args, span),
            Builtin::Divmod
            | Builtin::FloatParts { .. }
            | Builtin::UnravelIndex
            | Builtin::Sorted => {
                let (what, fix) = match b {
                    Builtin::Divmod => ("divmod", "q, r = divmod(a, b)"),
                    Builtin::Sorted => (
                        "sorted",
                        "a, b, c = sorted((x, y, z))` or `sorted((x, y, z))[0]",
                    ),
                    Builtin::FloatParts { frexp, python } => match (frexp, python) {
                        (false, false) => ("np.modf", "f, w = np.modf(x)"),
                        (false, true) => ("math.modf", "f, w = math.modf(x)"),
                        (true, false) => ("np.frexp", "m, e = np.frexp(x)"),
                        (true, true) => ("math.frexp", "m, e = math.frexp(x)"),
                    },
                    _ => ("np.unravel_index", "r, c = np.unravel_index(k, dims)"),
                };
                let gives = match b {
                    Builtin::Sorted if self.sorted_literal(args).is_none() => {
                        self.sorted_argument_error(args, span);
                        return None;
                    }
                    Builtin::Sorted => "a list of its items: unpack or index it",
                    _ => "a pair: unpack it",
                };
                self.error(
                    Diagnostic::error(format!("`{what}` gives {gives} where it is called"))
                        .at(span, "a tuple value")
                        .help(format!("write `{fix}`")),
                );
                None
            }
            Builtin::Range | Builtin::Enumerate | Builtin::Zip | Builtin::Reversed => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` can only be used as the iterator of a `for` loop"
                    ))
                    .at(span, "not in a `for` loop"),
                );
                None
            }
            Builtin::Inline => {
                let call = match args {
                    [a] => match &a.kind {
                        ast::ExprKind::Call { func, args, .. } if !self.is_local_root(func) => func
                            .dotted_path()
                            .and_then(|_| self.resolve_global(func))
                            .and_then(|r| match r {
                                Resolved::Function { def, globals } => Some((def, globals, args)),
                                _ => None,
                            }),
                        _ => None,
                    },
                    _ => None,
                };
                let Some((def, globals, args)) = call else {
                    self.error(
                        Diagnostic::error(
                            "`parpy.builtin.inline` takes one call of a jit function",
                        )
                        .at(span, "nothing to inline")
                        .help("write `parpy.builtin.inline(f(x, y))`"),
                    );
                    return None;
                };
                self.helper_call(&def, &globals, args, span, true)
            }
            Builtin::StaticBackendEq => {
                let b = match args {
                    [a] if a.dotted_path().is_some() && !self.is_local_root(a) => {
                        match self.resolve_global(a) {
                            Some(Resolved::Backend(b)) => Some(b),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                let Some(b) = b else {
                    self.error(
                        Diagnostic::error("`static_backend_eq` takes one backend")
                            .at(span, "not a backend")
                            .help("write `parpy.builtin.static_backend_eq(parpy.CompileBackend.Cuda)`"),
                    );
                    return None;
                };
                let eq = b == Some(self.opts.backend);
                Some(TExpr {
                    e: Expr::new(ExprKind::Bool(eq), Type::Scalar(ElemTy::Bool), span),
                    weak: false,
                })
            }
            Builtin::StaticTypesEq => {
                if args.len() != 2 {
                    self.arity_error(name, "2 arguments (types or values)", args.len(), span);
                    return None;
                }
                let a = self.type_of_arg(&args[0]);
                let b = self.type_of_arg(&args[1]);
                let eq = a? == b?;
                Some(TExpr {
                    e: Expr::new(ExprKind::Bool(eq), Type::Scalar(ElemTy::Bool), span),
                    weak: false,
                })
            }
            Builtin::StaticFail => {
                let msg = match args {
                    [ast::Expr {
                        kind: ast::ExprKind::Str(m),
                        ..
                    }] => m.clone(),
                    _ => "static_fail was reached".to_string(),
                };
                self.error(
                    Diagnostic::error(msg)
                        .at(span, super::STATIC_FAIL_LABEL)
                        .note(format!(
                            "compiling for the {} backend",
                            self.opts.backend.name()
                        )),
                );
                None
            }
            Builtin::Atomic(op) => {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` updates an array element and has no value: call it as a statement of its own"
                    ))
                    .at(span, "its value is used here")
                    .help(format!("write `parpy.atomic.{}(a, i, v)` on a line of its own", op.name())),
                );
                None
            }
            Builtin::Gpu | Builtin::Inf | Builtin::AtomicBlock => {
                self.error(
                    Diagnostic::error(format!("`{name}` is not callable"))
                        .at(span, "cannot be called"),
                );
                None
            }
        }
    }

    /// The element type a type variable stands for in this function (its
    /// parameter annotations bind it), else an error.
    fn type_var(&mut self, id: u64, name: &str, span: Span) -> Option<ElemTy> {
        if let Some(t) = self.type_vars.get(&id) {
            return Some(*t);
        }
        self.error(
            Diagnostic::error("Found unresolved type variable where an element type is expected")
                .at(span, format!("`{name}` is not bound by an annotation"))
                .help(format!(
                    "annotate a parameter of this function with `{name}` (for example \
                     `parpy.types.buffer({name}, [N])`), or use a type such as `parpy.types.F32`"
                )),
        );
        None
    }

    /// `np.finfo(t).attr` / `np.iinfo(t).attr` (`t` a dtype or `x.dtype`):
    /// the constant NumPy gives, typed as NumPy types it (a float of `t`
    /// for `finfo`'s values, a Python int for `iinfo`'s and for `bits`).
    /// `None` when `call` is not such a call (nothing reported),
    /// `Some(None)` after an error.
    pub(super) fn type_info(
        &mut self,
        call: &ast::Expr,
        attr: &str,
        span: Span,
    ) -> Option<Option<TExpr>> {
        let ast::ExprKind::Call { func, args, .. } = &call.kind else {
            return None;
        };
        let path = func.dotted_path().filter(|_| !self.is_local_root(func))?;
        let float = match path.as_slice() {
            ["np" | "numpy", "finfo"] => true,
            ["np" | "numpy", "iinfo"] => false,
            _ => return None,
        };
        let name = if float { "finfo" } else { "iinfo" };
        let [arg] = args.as_slice() else {
            self.arity_error(&format!("np.{name}"), "1 argument", args.len(), call.span);
            return Some(None);
        };
        let Some(t) = self.dtype_arg(arg) else {
            return Some(None);
        };
        let fail = |this: &mut Self, msg: String, label: &str| {
            this.error(Diagnostic::error(msg).at(span, label.to_string()));
            Some(None)
        };
        if float != t.is_float() {
            let kind = if float { "an inexact" } else { "an integer" };
            return fail(
                self,
                format!("`np.{name}` takes {kind} type, not {}", t.numpy_name()),
                "NumPy raises a ValueError",
            );
        }
        if attr == "bits" {
            return Some(Some(self.weak_int(8 * t.size() as i64, span)));
        }
        if !float {
            let (lo, hi) = t.int_bounds().expect("an integer type");
            let v = match attr {
                "min" => lo,
                "max" => hi,
                _ => {
                    return fail(
                        self,
                        format!("`np.iinfo` has no attribute `{attr}` here"),
                        "use `min`, `max` or `bits`",
                    )
                }
            };
            // a Python int; uint64's maximum does not fit one of ours
            return Some(Some(match i64::try_from(v) {
                Ok(v) => self.weak_int(v, span),
                Err(_) => TExpr {
                    e: Expr::new(ExprKind::Int(v as i64), Type::Scalar(t), span),
                    weak: false,
                },
            }));
        }
        // (mantissa bits, minimum exponent, decimal precision)
        let (m, emin, digits) = match t {
            ElemTy::F16 => (10, -14, 3),
            ElemTy::F32 => (23, -126, 6),
            _ => (52, -1022, 15),
        };
        let two = |k: i32| 2f64.powi(k);
        let v = match attr {
            "eps" => two(-m),
            "epsneg" => two(-m - 1),
            "max" => t.max_finite(),
            "min" => -t.max_finite(),
            "tiny" | "smallest_normal" => two(emin),
            "smallest_subnormal" => two(emin - m),
            "resolution" => 10f64.powi(-digits),
            _ => {
                return fail(
                    self,
                    format!("`np.finfo` has no attribute `{attr}` here"),
                    "use `eps`, `epsneg`, `max`, `min`, `tiny`, `smallest_normal`, `smallest_subnormal`, `resolution` or `bits`",
                )
            }
        };
        Some(Some(TExpr {
            e: super::expr::literal(crate::ir::ScalarValue::Float(v), t, span),
            weak: false,
        }))
    }

    /// The element type named by a dtype argument (`parpy.types.F32`).
    pub(super) fn dtype_arg(&mut self, e: &ast::Expr) -> Option<ElemTy> {
        // `x.dtype` of an array
        if let ast::ExprKind::Attr { value, attr } = &e.kind {
            if let (Some((_, Type::Array { elem, .. })), "dtype") =
                (self.array_arg(value), attr.as_str())
            {
                return Some(elem);
            }
        }
        if let Some(path) = e.dotted_path().filter(|_| !self.is_local_root(e)) {
            match self.resolve_global(e)? {
                Resolved::Dtype(t) => return Some(t),
                Resolved::TypeVar(id) => return self.type_var(id, &path.join("."), e.span),
                Resolved::Unsupported(desc) => {
                    // "Found unresolved type variable ..." (ParPy's words).
                    let what = desc
                        .strip_prefix("an ")
                        .or_else(|| desc.strip_prefix("a "))
                        .unwrap_or(&desc);
                    self.error(
                        Diagnostic::error(format!(
                            "Found {what} where an element type is expected"
                        ))
                        .at(e.span, format!("`{}` is not a type", path.join(".")))
                        .help("use a type such as `parpy.types.F32` or `np.float32`"),
                    );
                    return None;
                }
                _ => {}
            }
        }
        self.error(
            Diagnostic::error("expected an element type")
                .at(e.span, "not a type")
                .help("use a type such as `parpy.types.F32` or `np.float32`"),
        );
        None
    }

    /// Python's `math.prod(items, start)`: of a tuple or list literal
    /// `start * items[0] * ...`; of a generator or a 1-D slice the same
    /// product taken in a loop (`generators.rs`; `keywords.rs` gives
    /// `start`, 1 by default).
    fn math_prod(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let one = ast::Expr::int(1, span);
        let (seq, start) = match args {
            [seq] => (seq, &one),
            [seq, start] => (seq, start),
            _ => {
                self.arity_error(name, "1 or 2 arguments", args.len(), span);
                return None;
            }
        };
        let items = match &seq.kind {
            ast::ExprKind::Tuple(items) => Some(items.as_slice()),
            _ => seq.list_items(),
        };
        if let Some(items) = items {
            let prod = items.iter().fold(start.clone(), |acc, item| {
                ast::Expr::binary(crate::ops::BinOp::Mul, acc, item.clone(), span)
            });
            return self.lower_expr(&prod);
        }
        let gen = match &seq.kind {
            ast::ExprKind::Generator { .. } => seq.clone(),
            // (`math.prod(s)` is `math.prod(item for item in s)`)
            _ if self.rank(seq) == 1 => {
                let item = self.fresh_name("item");
                let clause = ast::Clause::over(&item, seq.clone());
                ast::Expr {
                    kind: ast::ExprKind::Generator {
                        elt: Box::new(ast::Expr::name(&item, seq.span)),
                        clauses: vec![clause],
                        list: false,
                    },
                    span: seq.span,
                }
            }
            _ => {
                let help = "multiply a row at a time (`math.prod(x[i, :])`), or use `np.prod(x)` for NumPy's product of an array";
                return self.not_a_sequence(name, seq, help);
            }
        };
        self.generator_call(Builtin::MathProd, name, &gen, Some(start), span)
    }

    /// The error of a Python function of items (`math.prod`, `math.fsum`)
    /// given `seq`, which is none of the things it takes.
    pub(super) fn not_a_sequence<T>(
        &mut self,
        name: &str,
        seq: &ast::Expr,
        help: &str,
    ) -> Option<T> {
        let what = match self.rank(seq) {
            0 => "a number".to_string(),
            r => format!("{r} dimensions"),
        };
        self.error(
            Diagnostic::error(format!(
                "`{name}` takes a 1-D slice, a tuple or list literal or a generator expression"
            ))
            .at(seq.span, what)
            .help(help),
        );
        None
    }

    /// The `n` operands of a function call, lowered (all of them, for
    /// their errors); `None` after an error.
    pub(super) fn operands(
        &mut self,
        name: &str,
        n: usize,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Vec<TExpr>> {
        if args.len() != n {
            let expected = match n {
                1 => "1 argument".to_string(),
                _ => format!("{n} arguments"),
            };
            self.arity_error(name, &expected, args.len(), span);
            return None;
        }
        let vals: Vec<Option<TExpr>> = args.iter().map(|a| self.lower_expr(a)).collect();
        vals.into_iter().collect()
    }

    fn math_call(
        &mut self,
        f: MathFn,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        // (the operands are lowered as any other expression)
        let python = std::mem::take(&mut self.python_math);
        let numpy = std::mem::take(&mut self.numpy_math);
        // `math.log(x, base)`: Python's `log(x) / log(base)`
        if let (MathFn::Log, "math.log", [x, base]) = (f, name, args) {
            // with the errors of each `log` (`log(0.0, 2)`: ValueError)
            // and of the division (`log(2.0, 1)`: ZeroDivisionError)
            let log = |l: &mut Self, a: &ast::Expr| {
                l.python_math = python;
                let r = l.math_call(f, name, std::slice::from_ref(a), span)?;
                l.python_math_errors(f, std::slice::from_ref(a), r, span)
            };
            let num = log(self, x)?;
            let den = log(self, base)?;
            let d = den.e.clone();
            let (tn, td) = (num.e.ty.elem(), den.e.ty.elem());
            let q = self.binary(BinOp::Div, num, den, span)?;
            self.python_zero_division(BinOp::Div, d, tn, td, span);
            return Some(q);
        }
        let mut vals = self.operands(name, f.arity(), args, span)?;
        // NumPy's function of Python numbers alone computes on NumPy
        // values (`np.exp(True)` in a bool's float16 loop, as the ufuncs'
        // `ufunc_call`); next to a NumPy value they stay weak (NEP 50)
        if numpy && vals.iter().all(|v| v.weak) {
            vals.iter_mut().for_each(|v| v.weak = false);
        }
        self.python_math = python;
        self.math_of_values(f, name, vals, span)
    }

    /// `f` of the lowered `vals` (`math_call`'s types and rules).
    fn math_of_values(
        &mut self,
        f: MathFn,
        name: &str,
        mut vals: Vec<TExpr>,
        span: Span,
    ) -> Option<TExpr> {
        let python = std::mem::take(&mut self.python_math);
        let mut ty = self.scalar_elem(&vals[0])?;
        let mut weak = vals[0].weak;
        for v in &vals[1..] {
            let t = self.scalar_elem(v)?;
            (ty, weak) = promote((ty, weak), (t, v.weak), self.opts);
        }
        // NumPy keeps an integer as it is (a bool too, but `np.round`
        // has no bool loop: float16), as `abs` keeps a NumPy bool (of a
        // Python bool it is an int, `abs(True)` is 1)
        let keeps = match f {
            MathFn::Floor | MathFn::Ceil | MathFn::Trunc => !ty.is_float(),
            MathFn::Round => !ty.is_float() && ty != ElemTy::Bool,
            MathFn::Abs => ty == ElemTy::Bool && !weak,
            _ => false,
        };
        if keeps {
            return Some(vals.remove(0));
        }
        if f == MathFn::Sign && ty == ElemTy::Bool {
            self.error(
                Diagnostic::error(format!("`{name}` of a bool is not defined in NumPy"))
                    .at(vals[0].e.span, "this is a bool")
                    .help("convert it to an integer first: `int(b)`")
                    .type_error(),
            );
            return None;
        }
        if !matches!(f, MathFn::Abs | MathFn::Sign) {
            // (`ldexp`: of its float operand)
            let floats = if f == MathFn::Ldexp {
                &vals[..1]
            } else {
                &vals[..]
            };
            ty = self.float_loop_type(floats)?;
        }
        if f == MathFn::Abs && ty == ElemTy::Bool {
            ty = self.opts.int_type;
        }
        if python {
            (ty, weak) = (self.opts.float_type, true);
        }
        if f.is_predicate() {
            // (one argument: `operands` checked the arity)
            return Some(TExpr {
                e: predicate(f, vals.remove(0).e, ty, span),
                weak: python,
            });
        }
        if f == MathFn::Ldexp {
            // (Python's `math.ldexp` takes a Python int exponent only)
            let e = vals.pop()?;
            if python && !e.weak {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` takes a Python int exponent: Expected an int as second argument to ldexp (a TypeError in Python)"
                    ))
                    .at(e.e.span, "a NumPy value")
                    .help("convert it: `int(e)`")
                    .type_error(),
                );
                return None;
            }
            let e = self.ldexp_exponent(e, name, span)?;
            let x = convert(vals.pop()?.e, ty);
            return Some(TExpr {
                e: Expr::math(f, vec![x, e], ty, span),
                weak,
            });
        }
        let args: Vec<Expr> = vals.drain(..).map(|v| convert(v.e, ty)).collect();
        Some(TExpr {
            e: Expr::new(ExprKind::Math { func: f, args }, Type::Scalar(ty), span),
            weak,
        })
    }

    /// Python's `math.trunc(v)` (`t`: `v` truncated, in `v`'s type) calls
    /// `type(v).__trunc__`, which a Python number has and NumPy's float64
    /// (a subclass of Python's float), but no other NumPy type: Python's
    /// TypeError (`math.trunc(np.float32(1.5))`), refused when compiling.
    fn python_trunc_applies(&mut self, t: &TExpr, arg: &ast::Expr) -> Option<()> {
        let ty = self.scalar_elem(t)?;
        if t.weak || ty == ElemTy::F64 {
            return Some(());
        }
        self.error(
            Diagnostic::error(format!(
                "`math.trunc` of a NumPy {} raises TypeError in Python",
                ty.numpy_name()
            ))
            .at(arg.span, format!("a NumPy {}", ty.numpy_name()))
            .note(format!(
                "Python's `math.trunc` calls the type's `__trunc__`, which `numpy.{}` does not define (NumPy's float64 does, a Python float)",
                ty.numpy_name()
            ))
            .help("use `np.trunc(x)` (the truncated value in `x`'s type) or `int(x)` (a Python int)")
            .type_error(),
        );
        None
    }

    /// `r`, the value of Python's `math.f(args)`, where Python raises
    /// instead of giving NaN from numbers (`ValueError: math domain error`:
    /// `sqrt(-1.0)`, `log(0.0)`, `acos(2.0)`, `fmod(x, 0.0)`) or an
    /// infinity from finite numbers (`OverflowError: math range error`:
    /// `exp(1000.0)`, `pow(10.0, 400.0)`; `ValueError` where the function
    /// has a pole there, `log(0.0)`, `pow(0.0, -1.0)`): the value is kept
    /// in a local and checked as an `assert` is (in float64, as Python
    /// computes: `Lowerer::python_math`).
    fn python_math_errors(
        &mut self,
        f: MathFn,
        args: &[ast::Expr],
        r: TExpr,
        span: Span,
    ) -> Option<TExpr> {
        // (`math.hypot` of finite numbers gives inf past the largest
        // float, as C's does: CPython does not raise there)
        let never = matches!(
            f,
            MathFn::Abs
                | MathFn::Atan2
                | MathFn::Copysign
                | MathFn::Erf
                | MathFn::Erfc
                | MathFn::Hypot
                | MathFn::NextAfter
        );
        let Some(t) = r.e.ty.elem().filter(|t| t.is_float()) else {
            return Some(r);
        };
        if never
            || f.is_predicate()
            || args.len() != f.arity()
            || args.iter().any(|a| self.rank(a) > 0)
        {
            return Some(r);
        }
        let mut ins = vec![];
        for a in args {
            let v = self.lower_expr(a)?;
            ins.push(convert(v.e, t));
        }
        let value = self.stash(r.e, span);
        let test = |g: MathFn, e: &Expr| predicate(g, e.clone(), e.elem(), span);
        let any = |es: Vec<Expr>| {
            es.into_iter()
                .reduce(|a, b| bool_binary(BinOp::Or, a, b, span))
        };
        let all = |es: Vec<Expr>| {
            es.into_iter()
                .reduce(|a, b| bool_binary(BinOp::And, a, b, span))
        };
        let not = |e: Expr| Expr::not(e, span);
        let mut checks = vec![];
        // NaN from numbers
        let nan_in = any(ins.iter().map(|a| test(MathFn::IsNan, a)).collect())?;
        checks.push((
            bool_binary(BinOp::Or, not(test(MathFn::IsNan, &value)), nan_in, span),
            "math domain error",
            "ValueError",
        ));
        if t == ElemTy::F64 {
            let finite_in = all(ins.iter().map(|a| test(MathFn::IsFinite, a)).collect())?;
            let inf_from_finite =
                bool_binary(BinOp::And, test(MathFn::IsInf, &value), finite_in, span);
            let overflows = matches!(
                f,
                MathFn::Exp
                    | MathFn::Exp2
                    | MathFn::Expm1
                    | MathFn::Cosh
                    | MathFn::Sinh
                    | MathFn::Pow
                    | MathFn::Ldexp
            );
            if f == MathFn::Pow {
                // 0.0 ** negative is a pole: ValueError; else overflow
                let zero = Expr::new(ExprKind::Float(0.0), Type::Scalar(t), span);
                let at_zero = Expr::compare(BinOp::Eq, ins[0].clone(), zero, span);
                let pole = bool_binary(BinOp::And, inf_from_finite.clone(), at_zero.clone(), span);
                checks.push((not(pole), "math domain error", "ValueError"));
                let over = bool_binary(BinOp::And, inf_from_finite, not(at_zero), span);
                checks.push((not(over), "math range error", "OverflowError"));
            } else if overflows {
                checks.push((not(inf_from_finite), "math range error", "OverflowError"));
            } else {
                checks.push((not(inf_from_finite), "math domain error", "ValueError"));
            }
        }
        self.raise_unless(checks, span);
        Some(TExpr {
            e: value,
            weak: r.weak,
        })
    }

    /// NumPy's `maximum(a, b)` / `minimum(a, b)` (`op`: the IR's `Max` /
    /// `Min`, which give `b` of a tie): NumPy's float16 loops give `a`
    /// (`np.maximum(f16(-0.0), f16(0.0))` is -0.0), its others `b`.
    fn numpy_extreme(&mut self, op: BinOp, a: TExpr, b: TExpr, span: Span) -> Option<TExpr> {
        let mut m = self.binary(op, a, b, span)?;
        if m.e.ty.elem() == Some(ElemTy::F16) {
            if let ExprKind::Binary { lhs, rhs, .. } = &mut m.e.kind {
                std::mem::swap(lhs, rhs);
            }
        }
        Some(m)
    }

    /// Python's `max(a, b)` / `min(a, b)` of floats from NumPy's `m`
    /// (`maximum(b, a)`, the operands promoted): `b if b > a else a`, so
    /// the first of a tie (`max(0.0, -0.0)` is 0.0) and `a` where either
    /// is NaN (`max(1.0, nan)` is 1.0, `max(nan, 1.0)` NaN), as Python
    /// compares them.
    fn python_extreme_of_floats(&mut self, m: TExpr, span: Span) -> TExpr {
        let ExprKind::Binary { op, lhs, rhs } = &m.e.kind else {
            return m;
        };
        let cmp = match op {
            BinOp::Max => BinOp::Gt,
            BinOp::Min => BinOp::Lt,
            _ => return m,
        };
        if !m.e.ty.elem().is_some_and(|t| t.is_float()) {
            return m;
        }
        let (ty, weak) = (m.e.ty.clone(), m.weak);
        // (an earlier `max` of the chain, `max(a, b, c)`, is read twice:
        // kept in a local, else each argument would double the code)
        let mut once = |e: &Expr| match crate::ir::visit::is_pure(e)
            && !matches!(e.kind, ExprKind::Select { .. })
        {
            true => e.clone(),
            false => self.stash(e.clone(), span),
        };
        // (the earlier argument first, in Python's order)
        let a = once(rhs);
        let b = once(lhs);
        let e = Expr::select_as(
            Expr::compare(cmp, b.clone(), a.clone(), span),
            b,
            a,
            ty,
            span,
        );
        TExpr { e, weak }
    }

    /// `e` kept in a hidden local assigned before the statement (whose
    /// checks read it): a read of that local.
    pub(super) fn stash(&mut self, e: Expr, span: Span) -> Expr {
        let ty = e.ty.clone();
        // (the file's id is left out: it depends on what the process compiled
        // before, and the printed code must not; the writer makes names unique)
        let name = format!("value@{}", span.lo);
        let id = self.new_var(&name, ty.clone(), VarKind::Local, span);
        self.pre.push(Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(id),
                value: e,
            },
            span,
        ));
        Expr::new(ExprKind::Var(id), ty, span)
    }

    /// The methods of numbers: a Python int's `n.bit_length()`
    /// (`int_math.rs`) and a float's `v.is_integer()` (finite and
    /// whole; of an integer, as NumPy's and Python 3.12's, true), a Python
    /// bool. NumPy's integers have no `bit_length`, its bools neither
    /// method: Python's `AttributeError`, a compile error here.
    fn number_method(&mut self, attr: &str, value: &ast::Expr, span: Span) -> Option<TExpr> {
        let v = self.lower_expr(value)?;
        let t = self.scalar_elem(&v)?;
        let has = match attr {
            "bit_length" => v.weak && !t.is_float(),
            _ => v.weak || t != ElemTy::Bool,
        };
        if !has {
            let what = if v.weak {
                "float".to_string()
            } else {
                format!("numpy.{}", t.numpy_name())
            };
            self.error(
                Diagnostic::error(format!(
                    "'{what}' object has no attribute '{attr}' (an AttributeError in Python)"
                ))
                .at(value.span, format!("a {what}"))
                .help(match attr {
                    "bit_length" => "`int(v).bit_length()` of a NumPy integer",
                    _ => "compare with `np.floor(v) == v`",
                }),
            );
            return None;
        }
        if attr == "bit_length" {
            let arg = ast::Expr::name(&self.stash_named("bit_length_of", v.e, span), span);
            return self.math_int(
                crate::resolve::IntFn::BitLength,
                "int.bit_length",
                &[arg],
                span,
            );
        }
        let yes = Expr::new(ExprKind::Bool(true), Type::Scalar(ElemTy::Bool), span);
        if !t.is_float() {
            return Some(TExpr { e: yes, weak: true });
        }
        let x = self.stash(v.e, span);
        let ft = if t == ElemTy::F16 { ElemTy::F32 } else { t };
        let x = convert(x, ft);
        let finite = predicate(MathFn::IsFinite, x.clone(), ft, span);
        let floor = Expr::math(MathFn::Floor, vec![x.clone()], ft, span);
        let whole = Expr::compare(BinOp::Eq, floor, x, span);
        let e = super::expr::bool_binary(BinOp::And, finite, whole, span);
        Some(TExpr { e, weak: true })
    }

    /// `e` stashed in a hidden local (see [`Self::stash`]) that the
    /// fresh name `base_k` it returns reads, a Python number.
    pub(super) fn stash_named(&mut self, base: &str, e: Expr, span: Span) -> String {
        self.stash_value(base, TExpr { e, weak: true }, span)
    }

    /// [`Self::stash_named`] of a value whose reads keep its weakness (a
    /// Python number stays one).
    pub(super) fn stash_value(&mut self, base: &str, t: TExpr, span: Span) -> String {
        let stashed = self.stash(t.e, span);
        let hidden = self.fresh_name(base);
        if let ExprKind::Var(var) = stashed.kind {
            self.scope
                .bind(&hidden, super::scope::Binding { var, weak: t.weak });
        }
        hidden
    }

    /// `np.select(condlist, choicelist, default)` of list or tuple
    /// literals: the value of the first condition that holds, else the
    /// default, elementwise; NumPy's type of all the values (Python numbers
    /// weak, NEP 50), each condition a bool (NumPy's TypeError otherwise).
    fn select(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let zero = ast::Expr {
            kind: ast::ExprKind::Int(0),
            span,
        };
        let (conds, choices, default) = match args {
            [c, v] => (c, v, &zero),
            [c, v, d] => (c, v, d),
            _ => {
                self.arity_error(name, "2 or 3 arguments", args.len(), span);
                return None;
            }
        };
        fn listed<'e>(name: &str, e: &'e ast::Expr) -> Result<&'e [ast::Expr], Diagnostic> {
            select_items(e).ok_or_else(|| {
                Diagnostic::error(format!("`{name}` takes a list or tuple literal here"))
                    .at(e.span, "not a list or tuple written out")
                    .help("write the conditions and the values as `[a, b]`")
            })
        }
        let (conds, choices) = match (listed(name, conds), listed(name, choices)) {
            (Ok(c), Ok(v)) => (c, v),
            (Err(d), _) | (_, Err(d)) => {
                self.error(d);
                return None;
            }
        };
        let problem = if conds.len() != choices.len() {
            Some("list of cases must be same length as list of conditions")
        } else if conds.is_empty() {
            Some("select with an empty condition list is not possible")
        } else {
            None
        };
        if let Some(message) = problem {
            self.error(
                Diagnostic::error(format!("`{name}`: {message}"))
                    .at(
                        span,
                        format!("{} conditions, {} values", conds.len(), choices.len()),
                    )
                    .raises("ValueError"),
            );
            return None;
        }
        let mut acc = self.lower_expr(default);
        for (k, (c, v)) in conds.iter().zip(choices).enumerate().rev() {
            let (c, v) = (self.lower_expr(c), self.lower_expr(v));
            let c = c.and_then(|c| {
                let ty = self.scalar_elem(&c)?;
                if ty != ElemTy::Bool {
                    self.error(
                        Diagnostic::error(format!(
                            "invalid entry {k} in condlist: should be boolean ndarray"
                        ))
                        .at(conds[k].span, format!("a condition of {ty}"))
                        .help("compare it (`c != 0`)")
                        .type_error(),
                    );
                    return None;
                }
                Some(c.e)
            });
            let (c, v, rest) = (c?, v?, acc?);
            let (v, rest, ty, weak) = self.unify(v, rest)?;
            acc = Some(TExpr {
                e: Expr::select_as(c, v, rest, Type::Scalar(ty), span),
                weak,
            });
        }
        acc
    }

    /// Python's raise of `exception` with `message` where each condition
    /// is false, checked before the statement as an `assert` is.
    pub(super) fn raise_unless(&mut self, checks: Vec<(Expr, &str, &str)>, span: Span) {
        for (cond, message, exception) in checks {
            let check = Expr::assert(cond, Some(message.to_string()), exception, span);
            self.pre.push(Stmt::new(StmtKind::Expr(check), span));
        }
    }

    /// Python's `math.floor` / `ceil` / `trunc` and `round(x)` of a float
    /// `t`, an int: NaN raises `ValueError`, an infinity `OverflowError`
    /// (C's conversion gives INT64_MIN). A float known when compiling is
    /// left to that value's checks. Of a uint64 (`int(u)`, an operand of
    /// `math.gcd`), one past 2**63 - 1 raises `OverflowError`.
    pub(super) fn python_int_of(&mut self, t: TExpr, arg: &ast::Expr, span: Span) -> Expr {
        let unsigned = t.e.ty.elem() == Some(ElemTy::U64);
        if unsigned && self.rank(arg) == 0 && super::types::const_scalar(&t.e).is_none() {
            // (a uint64 past 2**63 - 1 is a Python int, but no int64)
            let value = self.stash(t.e, span);
            let limit = Expr::new(ExprKind::Int(i64::MAX), Type::Scalar(ElemTy::U64), span);
            let fits = Expr::compare(BinOp::Le, value.clone(), limit, span);
            let message = "the int of this uint64 does not fit in an int64 (parpy's Python int)";
            self.raise_unless(vec![(fits, message, "OverflowError")], span);
            return value;
        }
        let ty = t.e.ty.elem().filter(|t| t.is_float());
        if ty.is_none() || self.rank(arg) > 0 || super::types::const_scalar(&t.e).is_some() {
            return t.e;
        }
        let value = self.stash(t.e, span);
        let mut checks = nan_and_infinity_checks(&value, span);
        // (a Python int is parpy's int64: the integer of a float at or past
        // 2**63 in size is Python's, but no int64's)
        if let Some(fty @ (ElemTy::F32 | ElemTy::F64)) = ty {
            let bound = |f: f64| Expr::new(ExprKind::Float(f), Type::Scalar(fty), span);
            let limit = 2f64.powi(63);
            let within = |op: BinOp, f: f64| Expr::compare(op, value.clone(), bound(f), span);
            let message = "the int of this float does not fit in an int64 (parpy's Python int)";
            checks.push((within(BinOp::Ge, -limit), message, "OverflowError"));
            checks.push((within(BinOp::Lt, limit), message, "OverflowError"));
        }
        self.raise_unless(checks, span);
        value
    }

    /// The float type of the NumPy loop that a math function of `vals`
    /// runs: NumPy takes the first loop (float16, float32, float64) that
    /// every operand casts to safely, which is the largest of the operands'
    /// own float types (`float_type_for`; `atan2(int8, uint8)` is float16,
    /// where the operands' common type int16 would give float32). A Python
    /// number counts as the type it takes next to the others (NEP 50: a
    /// Python int next to an int8 is an int8, next to a bool an int64);
    /// Python numbers alone give the default float.
    pub(super) fn float_loop_type(&mut self, vals: &[TExpr]) -> Option<ElemTy> {
        let mut common = (self.scalar_elem(vals.first()?)?, vals[0].weak);
        for v in &vals[1..] {
            common = promote(common, (self.scalar_elem(v)?, v.weak), self.opts);
        }
        if common.1 {
            return Some(self.float_type_for(common.0, true));
        }
        let mut out: Option<ElemTy> = None;
        for v in vals {
            let own = if v.weak {
                common.0
            } else {
                self.scalar_elem(v)?
            };
            let f = self.float_type_for(own, false);
            out = Some(out.map_or(f, |o| promote((o, false), (f, false), self.opts).0));
        }
        out
    }

    /// The float type NumPy computes a math function of a `ty` value in:
    /// `ty` itself when it is a float, else the smallest float that holds
    /// every value of the type (float16 for bool and 8-bit, float32 for
    /// 16-bit integers; a Python number: the default float).
    pub(super) fn float_type_for(&self, ty: ElemTy, weak: bool) -> ElemTy {
        if ty.is_float() {
            return ty;
        }
        match (weak, ty.size()) {
            (false, 1) => ElemTy::F16,
            (false, 2) => ElemTy::F32,
            _ => self.opts.float_type,
        }
    }

    /// The element type an argument of `static_types_eq` denotes: a type
    /// (`parpy.types.F32`, `np.float32`), an array (its element type) or a
    /// scalar value (its type).
    fn type_of_arg(&mut self, e: &ast::Expr) -> Option<ElemTy> {
        if let Some(path) = e.dotted_path().filter(|_| !self.is_local_root(e)) {
            match self.resolve_global(e) {
                Some(Resolved::Dtype(t)) => return Some(t),
                Some(Resolved::TypeVar(id)) => return self.type_var(id, &path.join("."), e.span),
                _ => {}
            }
        }
        if let Some((_, ty)) = self.array_arg(e) {
            return ty.elem();
        }
        let v = self.lower_expr(e)?;
        self.scalar_elem(&v)
    }

    /// An array argument or a re-bound array name: its variable (the array,
    /// or the selector of `sema::alias`).
    pub(super) fn array_or_alias_arg(&self, e: &ast::Expr) -> Option<crate::ir::VarId> {
        if let Some((v, _)) = self.array_arg(e) {
            return Some(v);
        }
        match &e.kind {
            ast::ExprKind::Name(n) => self
                .scope
                .get(n)
                .filter(|b| self.alias_of(b.var).is_some())
                .map(|b| b.var),
            _ => None,
        }
    }

    /// `np.float32(x)`, `parpy.types.F32(x)`: a conversion to that type.
    fn dtype_call(
        &mut self,
        t: ElemTy,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        if args.len() != 1 {
            self.arity_error(name, "1 argument", args.len(), span);
            return None;
        }
        // `np.float32('nan')`: NumPy parses the string as `float()` does
        let v = match (&args[0].kind, t.is_float()) {
            (ast::ExprKind::Str(text), true) => self.float_of_string(Builtin::Float, text, span)?,
            _ => self.lower_expr(&args[0])?,
        };
        self.scalar_elem(&v)?;
        self.python_int_fits(&v, t)?;
        self.python_float_fits(&v, t, true)?;
        let mut e = self.convert_exact(v, t);
        e.span = span;
        Some(TExpr { e, weak: false })
    }

    /// `float('inf')`, `float('-inf')`, `float('nan')`: Python's spellings
    /// of the special values (case and surrounding blanks ignored, a sign
    /// allowed, `infinity` too), as a weak float; a number in a string is
    /// a constant of the code, so it is asked for as a literal.
    fn float_of_string(&mut self, b: Builtin, text: &str, span: Span) -> Option<TExpr> {
        let t = text.trim().to_ascii_lowercase();
        let (neg, word) = match t.strip_prefix('-') {
            Some(w) => (true, w),
            None => (false, t.strip_prefix('+').unwrap_or(&t)),
        };
        let v = match word {
            "inf" | "infinity" => f64::INFINITY,
            "nan" => f64::NAN,
            _ => {
                let hint = match text.trim().parse::<f64>() {
                    Ok(_) => format!("write the number itself: `{}`", text.trim()),
                    Err(_) => "`float('inf')`, `float('-inf')` and `float('nan')` are the strings jit code converts".to_string(),
                };
                self.error(
                    Diagnostic::error(format!(
                        "cannot convert the string {text:?} in a parpy function"
                    ))
                    .at(span, "a string converted to a number")
                    .help(hint),
                );
                return None;
            }
        };
        if b == Builtin::Int {
            self.error(
                Diagnostic::error(format!("`int({text:?})` is not a number Python can make"))
                    .at(span, "int() of a string")
                    .help(
                        "`int` of a string that names infinity or NaN raises ValueError in Python",
                    ),
            );
            return None;
        }
        let v = if neg { -v } else { v };
        let e = Expr::new(ExprKind::Float(v), Type::Scalar(self.opts.float_type), span);
        Some(TExpr { e, weak: true })
    }

    /// A NumPy function of one slice (or its method: `s.mean()`).
    fn of_slice(&mut self, b: Builtin, arg: &ast::Expr, span: Span) -> Option<TExpr> {
        match b {
            Builtin::Mean | Builtin::Average => self.mean(arg, span),
            Builtin::NanReduce(op) => self.nan_reduction(op, arg, span),
            Builtin::NanMean => self.nan_mean(arg, span),
            Builtin::Ptp => self.ptp(arg, span),
            Builtin::Var | Builtin::Std => self.variance(arg, None, b == Builtin::Std, span),
            Builtin::NanVar | Builtin::NanStd => {
                self.nan_variance(arg, None, b == Builtin::NanStd, span)
            }
            Builtin::Norm => self.norm(arg, span),
            // of a number: its truth (a NumPy bool)
            Builtin::Any | Builtin::All if self.rank(arg) == 0 && self.axis.is_none() => {
                let t = self.lower_expr(arg)?;
                let e = self.truthy(t)?;
                Some(TExpr { e, weak: false })
            }
            Builtin::Any => self.nonzero(arg, ReduceOp::Max, span),
            Builtin::All => self.nonzero(arg, ReduceOp::Min, span),
            Builtin::CountNonzero => self.nonzero(arg, ReduceOp::Sum, span),
            Builtin::NanArgMax | Builtin::NanArgMin => {
                self.arg_extreme(b == Builtin::NanArgMax, true, arg, span)
            }
            _ => self.arg_extreme(b == Builtin::ArgMax, false, arg, span),
        }
    }

    /// The `ddof` of `np.var` and its kin: 0 unless given, a number known
    /// when compiling.
    pub(super) fn ddof(&mut self, ddof: Option<&ast::Expr>) -> Option<f64> {
        match ddof {
            None => Some(0.0),
            Some(d) => self.known_number(d, "`ddof`"),
        }
    }

    /// The value of `e` when it is a number known when compiling (`ddof`).
    pub(super) fn known_number(&mut self, e: &ast::Expr, what: &str) -> Option<f64> {
        let t = self.lower_expr(e)?;
        if let Some(v) = self.known_int(&t.e) {
            return Some(v as f64);
        }
        if let ExprKind::Float(v) = t.e.kind {
            return Some(v);
        }
        self.error(
            Diagnostic::error(format!("{what} must be a number known when compiling"))
                .at(e.span, "not a constant"),
        );
        None
    }

    /// `np.round(x, d)` (and `round(x, d)` of a NumPy number) as NumPy
    /// computes it (Python's `round`, `python`, of a Python float known when
    /// compiling as Python does: `python_round`), in `x`'s float type: `rint(x * 10**d) / 10**d`, or for
    /// `d < 0` `rint(x / 10**-d) * 10**-d`; an integer with `d >= 0` is
    /// itself.
    fn round_decimals(
        &mut self,
        x: &ast::Expr,
        d: &ast::Expr,
        python: bool,
        span: Span,
    ) -> Option<TExpr> {
        // (a bool is NumPy's either way: `round_of_bool`)
        self.numpy_math = false;
        let Some(d) = self.lower_expr(d).and_then(|t| self.known_int(&t.e)) else {
            self.error(
                Diagnostic::error("the number of decimals of `round` must be an integer constant")
                    .at(d.span, "not an integer constant"),
            );
            return None;
        };
        let mut v = self.lower_expr(x)?;
        if v.e.ty.elem() == Some(ElemTy::Bool) {
            v = self.round_of_bool(v, Some(d), python, span)?;
            if !python {
                return Some(v);
            }
        }
        // Python's `round` of a Python float known when compiling
        if let (true, true, ExprKind::Float(c)) = (python, v.weak, &v.e.kind) {
            if let Some(r) = python_round(*c, d) {
                let e = Expr::new(ExprKind::Float(r), Type::Scalar(self.opts.float_type), span);
                return Some(TExpr { e, weak: true });
            }
        }
        let ty = self.scalar_elem(&v)?;
        if !ty.is_float() && d >= 0 {
            return Some(v);
        }
        // Python's `round` of a Python int known when compiling: exact
        if let (true, Some(c)) = (python, self.exact_python_int(&v)) {
            let p = 10i128.checked_pow(d.unsigned_abs().min(64) as u32);
            let r = p.map_or(0, |p| {
                let (q, r) = (c.div_euclid(p), c.rem_euclid(p));
                let up = 2 * r > p || (2 * r == p && q % 2 != 0);
                (q + i128::from(up)) * p
            });
            if let Ok(r) = i64::try_from(r) {
                let e = Expr::int(r, self.opts.int_type, span);
                return Some(TExpr { e, weak: true });
            }
            self.error(
                Diagnostic::error(format!(
                    "this Python int is {r}, which does not fit in 64 bits"
                ))
                .at(span, "Python rounds this exactly")
                .note("parpy computes integers in at most 64 bits"),
            );
            return None;
        }
        // an integer to negative decimals: NumPy's, computed in float64
        // (`x / 10**-d`, rounded half to even, times `10**-d`) and
        // converted back, wrapping as its cast does (`round(np.uint8(255),
        // -1)` is 4); a Python int at run time the same way (exact below
        // 2**53)
        let int_back = (!ty.is_float()).then_some((ty, v.weak));
        let v = match int_back {
            Some(_) => TExpr {
                e: convert(v.e, self.opts.float_type),
                weak: false,
            },
            None => v,
        };
        let scale = TExpr {
            e: Expr::new(
                ExprKind::Float(10f64.powi(d.unsigned_abs().min(400) as i32)),
                Type::Scalar(self.opts.float_type),
                span,
            ),
            weak: true,
        };
        let (into, back) = if d >= 0 {
            (BinOp::Mul, BinOp::Div)
        } else {
            (BinOp::Div, BinOp::Mul)
        };
        let weak = v.weak;
        let y = self.binary(into, v, scale.clone(), span)?;
        let rounded = TExpr {
            weak,
            ..math_of(MathFn::Round, y, span)
        };
        let r = self.binary(back, rounded, scale, span)?;
        Some(match int_back {
            Some((ty, weak)) => TExpr {
                e: convert(r.e, ty),
                weak,
            },
            None => r,
        })
    }

    /// `round(b, d)` / `np.round(b, d)` (`d` `None` for `round(b)`) of a
    /// bool `b`: Python's of a Python bool rounds the int it is
    /// (`round(True, 1)` is 1, not a bool); a NumPy bool has no
    /// `__round__` (Python's TypeError); NumPy's rounds it in its float16
    /// loop to 0 decimals, and to others its multiply / divide by `10**d`
    /// has no bool output (NumPy's UFuncTypeError). The int for Python's,
    /// `np.round(b)` in float16 for NumPy's, `None` after reporting.
    fn round_of_bool(
        &mut self,
        v: TExpr,
        d: Option<i64>,
        python: bool,
        span: Span,
    ) -> Option<TExpr> {
        let at = v.e.span;
        if python && v.weak {
            let e = convert(v.e, self.opts.int_type);
            return Some(TExpr { e, weak: true });
        }
        if python {
            self.error(
                Diagnostic::error("type numpy.bool doesn't define __round__ method")
                    .at(at, "a NumPy bool")
                    .note("Python's `round` calls the type's `__round__`, which `numpy.bool` does not define: Python raises TypeError")
                    .help("round an int: `round(int(b))`, or `np.round(b)` (NumPy's, a float16)")
                    .type_error(),
            );
            return None;
        }
        match d {
            None | Some(0) => {
                let e = convert(v.e, ElemTy::F16);
                Some(math_of(MathFn::Round, TExpr { e, weak: false }, span))
            }
            Some(d) => {
                let op = if d > 0 { "multiply" } else { "divide" };
                self.error(
                    Diagnostic::error(format!(
                        "`np.round` of a bool to {d} decimals raises UFuncTypeError in NumPy"
                    ))
                    .at(at, "a bool")
                    .note(format!("NumPy rounds to decimals by `{op}` with `10**{}` into the bool's type: Cannot cast ufunc '{op}' output from dtype('float64') to dtype('bool') with casting rule 'same_kind'", d.unsigned_abs()))
                    .help("round a number: `np.round(b * 1.0, d)`, or to 0 decimals: `np.round(b)` (a float16)")
                    .type_error(),
                );
                None
            }
        }
    }

    /// `np.var(s)` / `np.std(s)` as NumPy computes them: the mean `m`
    /// (`np.mean`'s types), then the sum of `(s - m) * (s - m)` divided by
    /// the count; `std` is its square root.
    pub(super) fn variance(
        &mut self,
        arg: &ast::Expr,
        ddof: Option<&ast::Expr>,
        std: bool,
        span: Span,
    ) -> Option<TExpr> {
        let ddof = self.ddof(ddof)?;
        // the mean and the sum of squares reduce the same axes
        let axes = self.axis.clone();
        let m = self.mean_with(arg, AccRule::VarMean, span)?;
        self.axis = axes;
        let mt = m.e.ty.clone();
        // the mean, computed once, under a name no program can write
        let hidden = "(mean)";
        let mv = self.new_var("mean", mt.clone(), VarKind::Local, span);
        self.pre.push(crate::ir::Stmt::new(
            crate::ir::StmtKind::Assign {
                dst: crate::ir::Place::Var(mv),
                value: m.e,
            },
            span,
        ));
        let prev = self.scope.bind(
            hidden,
            super::scope::Binding {
                var: mv,
                weak: false,
            },
        );
        let d = ast::Expr::binary(BinOp::Sub, arg.clone(), ast::Expr::name(hidden, span), span);
        let sq = ast::Expr::binary(BinOp::Mul, d.clone(), d, span);
        let sum = self.reduction_with(ReduceOp::Sum, &sq, span, AccRule::NumPy);
        match prev {
            Some(p) => {
                self.scope.bind(hidden, p);
            }
            None => self.scope.unbind(hidden),
        }
        let (sum, _, extents) = sum?;
        let n: i64 = extents.iter().product();
        // NumPy divides by `max(n - ddof, 0)` (of a masked read, `n` its
        // count at run time)
        let ft = Type::Scalar(self.opts.float_type);
        let float = |v: f64| Expr::new(ExprKind::Float(v), ft.clone(), span);
        let e = match self.packed_count(arg) {
            Some(k) => {
                let k = convert(k, self.opts.float_type);
                let rest = Expr::binary(BinOp::Sub, k, float(ddof), ft.clone(), span);
                Expr::binary(BinOp::Max, rest, float(0.0), ft.clone(), span)
            }
            None => float((n as f64 - ddof).max(0.0)),
        };
        // NumPy divides the float16 or float32 sum by its integer count in
        // float64 and rounds once (a count float16 cannot hold, 2049, is
        // not rounded first)
        let narrow = sum
            .e
            .ty
            .elem()
            .filter(|t| t.is_float() && *t != ElemTy::F64);
        let var = match narrow {
            Some(t) if self.opts.float_type == ElemTy::F64 => {
                let wide = TExpr {
                    e: convert(sum.e, ElemTy::F64),
                    weak: false,
                };
                let q = self.binary(BinOp::Div, wide, TExpr { e, weak: false }, span)?;
                TExpr {
                    e: convert(q.e, t),
                    weak: false,
                }
            }
            _ => self.binary(BinOp::Div, sum, TExpr { e, weak: true }, span)?,
        };
        Some(if std {
            math_of(MathFn::Sqrt, var, span)
        } else {
            var
        })
    }

    /// `np.any(s)` / `np.all(s)` / `np.count_nonzero(s)`: the max / min /
    /// sum reduction of `s != 0` (a bool, or for the count NumPy's sum of
    /// bools in the default integer; NaN counts as non-zero, as in NumPy).
    fn nonzero(&mut self, arg: &ast::Expr, op: crate::ir::ReduceOp, span: Span) -> Option<TExpr> {
        let nonzero = ast::Expr {
            kind: ast::ExprKind::Compare {
                first: Box::new(arg.clone()),
                rest: vec![(BinOp::Ne, ast::Expr::int(0, span))],
            },
            span,
        };
        self.truth_reduction = true;
        self.reduction(op, &nonzero, span)
    }

    /// `np.linalg.norm(v)` of a 1-D vector: `sqrt(dot(v, v))`, integers
    /// and bools as float64 (NumPy converts them first); of a matrix, the
    /// vector of its elements'; with `axis=`, the square root of
    /// `np.sum(v * v, axis)`.
    /// `np.linalg.norm(v, ord)` of a vector, `ord` a number known when
    /// compiling: NumPy's formula for it (2: the dot product's; 1: the
    /// sum of `abs`; inf / -inf: the max / min of `abs`; 0: the count of
    /// non-zeros, in the float type; otherwise the sum of `abs(v) ** ord`
    /// to the power `1 / ord` computed in the float type).
    fn norm_ord(&mut self, v: &ast::Expr, ord: &ast::Expr, span: Span) -> Option<TExpr> {
        let p = self.known_number(ord, "the `ord` of `np.linalg.norm`")?;
        if self.axis.is_some() || self.rank(v) != 1 {
            self.error(
                Diagnostic::error("`np.linalg.norm` with an `ord` is supported for vectors only")
                    .at(ord.span, "an `ord`")
                    .help("take the norm of one row at a time (`np.linalg.norm(x[i, :], ord)`)"),
            );
            return None;
        }
        if p == 2.0 {
            return self.norm(v, span);
        }
        // NumPy converts integers to float64 first
        let v = ast::Expr::binary(BinOp::Mul, v.clone(), ast::Expr::float(1.0, span), span);
        let abs = |_: &mut Self, e: TExpr| Some(math_of(MathFn::Abs, e, span));
        let rule = super::slices::AccRule::NumPy;
        let op = match p {
            f64::INFINITY => ReduceOp::Max,
            f64::NEG_INFINITY => ReduceOp::Min,
            _ => ReduceOp::Sum,
        };
        let (sum, _, _) = match p {
            0.0 => self.reduction_mapped(op, &v, span, rule, &|_, e| {
                let ty = e.e.ty.elem()?;
                let zero = convert(
                    Expr::new(ExprKind::Float(0.0), Type::Scalar(ElemTy::F64), span),
                    ty,
                );
                let nonzero = Expr::binary(BinOp::Ne, e.e, zero, Type::Scalar(ElemTy::Bool), span);
                Some(TExpr {
                    e: convert(nonzero, ty),
                    weak: false,
                })
            })?,
            _ if p == 1.0 || p.is_infinite() => self.reduction_mapped(op, &v, span, rule, &abs)?,
            _ => self.reduction_mapped(op, &v, span, rule, &|this, e| {
                let ty = e.e.ty.elem()?;
                let pw = TExpr {
                    e: convert(
                        Expr::new(ExprKind::Float(p), Type::Scalar(ElemTy::F64), span),
                        ty,
                    ),
                    weak: false,
                };
                this.binary(BinOp::Pow, math_of(MathFn::Abs, e, span), pw, span)
            })?,
        };
        if matches!(p, 0.0 | 1.0) || p.is_infinite() {
            return Some(sum);
        }
        // `ret **= np.reciprocal(ord, dtype=ret.dtype)`
        let ty = self.scalar_elem(&sum)?;
        let f = |v: f64| {
            convert(
                Expr::new(ExprKind::Float(v), Type::Scalar(ElemTy::F64), span),
                ty,
            )
        };
        let recip = Expr::binary(BinOp::Div, f(1.0), f(p), Type::Scalar(ty), span);
        self.binary(
            BinOp::Pow,
            sum,
            TExpr {
                e: recip,
                weak: false,
            },
            span,
        )
    }

    fn norm(&mut self, v: &ast::Expr, span: Span) -> Option<TExpr> {
        // (without an axis, NumPy's norm of a matrix, the Frobenius norm,
        // is that of its elements in a row: `x.ravel()`)
        let v = match self.axis.is_none() && self.rank(v) > 1 {
            true => ast::Expr::method(v, "ravel", vec![], span, span),
            false => v.clone(),
        };
        // `v * 1.0`: exact for floats, float64 for integers (NEP 50)
        let v = ast::Expr::binary(BinOp::Mul, v, ast::Expr::float(1.0, span), span);
        let sq = if self.axis.is_some() {
            // with an axis, NumPy adds the squares as `np.sum` does
            let sq = ast::Expr::binary(BinOp::Mul, v.clone(), v, span);
            self.reduction(ReduceOp::Sum, &sq, span)?
        } else {
            self.dot(&v, &v, "np.linalg.norm", span)?
        };
        Some(math_of(MathFn::Sqrt, sq, span))
    }

    /// `np.dot(a, b)` and `a @ b`: of 1-D vectors, the sum of `a * b`; of a
    /// matrix and a vector, that sum along the last axis; of a vector or a
    /// matrix and a matrix, `np.sum(a[..., None] * b, axis=-2)`. Each element
    /// is added in order in the elements' type, as NumPy's integer matmul
    /// does (its float matmul calls BLAS, whose order varies).
    pub(super) fn dot(
        &mut self,
        a: &ast::Expr,
        b: &ast::Expr,
        name: &str,
        span: Span,
    ) -> Option<TExpr> {
        let (ra, rb) = (self.rank(a), self.rank(b));
        if ra == 0 || rb == 0 {
            // NumPy's `dot` of a number is the product; `@` refuses one
            if name == "@" || name.ends_with("matmul") {
                self.error(
                    Diagnostic::error(format!("`{name}` of a number"))
                        .at(if ra == 0 { a.span } else { b.span }, "0 dimensions")
                        .note("NumPy's matmul raises ValueError: its operands need at least 1 dimension")
                        .help("multiply by a number with `*`"),
                );
                return None;
            }
            return self.lower_expr(&ast::Expr::binary(BinOp::Mul, a.clone(), b.clone(), span));
        }
        if ra <= 2 && rb <= 2 {
            if let Some(d) = self.core_mismatch(a, b, name) {
                self.error(d);
                return None;
            }
        }
        if ra <= 2 && rb <= 2 && self.half_operands(a, b) {
            // NumPy's float16 dot and matmul multiply and add in float32,
            // in order, and round the result to float16 once
            let wide = |x: &ast::Expr| super::local_arrays::astype_to(x, ElemTy::F32, x.span);
            let product = ast::Expr::binary(BinOp::MatMul, wide(a), wide(b), span);
            return self.lower_expr(&super::local_arrays::astype_to(&product, ElemTy::F16, span));
        }
        if ra <= 1 && rb <= 1 {
            let product = ast::Expr::binary(BinOp::Mul, a.clone(), b.clone(), span);
            // NumPy's `dot` / `inner` of one-element float32 / float64
            // vectors is their product (BLAS's caller `cblas_matrixproduct`
            // takes them as scalars: `np.dot([-0.0], [1.0])` is -0.0),
            // where a sum from 0.0 (`matmul`, `vdot`, longer vectors)
            // loses the sign of a -0.0: the one element, as `max` of it
            if name != "@" && !name.ends_with("matmul") && !name.ends_with("vdot") {
                if let Some((Some(shape), ElemTy::F32 | ElemTy::F64)) =
                    self.array_shape_of(&product)
                {
                    // (not a slice with run-time bounds, of 0 or 1 elements)
                    if shape == [1] && !self.runtime_sliced() {
                        return self.reduction(ReduceOp::Max, &product, span);
                    }
                }
            }
            return self.vector_sum(name, &product, true, span);
        }
        if ra > 2 || rb > 2 {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of {ra}- and {rb}-dimensional operands is not supported in parpy functions"
                ))
                .at(span, "more than 2 dimensions")
                .help("multiply one matrix at a time: index the leading dimensions (`a[k, :, :] @ b[k, :, :]`)"),
            );
            return None;
        }
        // a matrix times a vector: the vector broadcasts along the rows
        let (product, axis) = if rb == 1 {
            (
                ast::Expr::binary(BinOp::Mul, a.clone(), b.clone(), span),
                -1,
            )
        } else {
            let Some(column) = self.with_new_axis(a) else {
                let d = Diagnostic::error(format!(
                    "`{name}` with a matrix on the right takes a left operand built elementwise from arrays"
                ));
                // (a local naming a product, `t = a[i] @ b[i]`, is written
                // elsewhere: the use first)
                let inside =
                    a.span.file == span.file && span.lo <= a.span.lo && a.span.hi <= span.hi;
                let d = match inside {
                    true => d.at(a.span, "not elementwise"),
                    false => d
                        .at(span, "the left operand is not built elementwise")
                        .also(a.span, "the left operand"),
                };
                self.error(d.help("compute the left operand into an array first (an array argument, or a local one: `t = np.empty((n, m))`, then `t[:, :] = ...`), then multiply that"));
                return None;
            };
            (ast::Expr::binary(BinOp::Mul, column, b.clone(), span), -2)
        };
        self.axis = Some(super::slices::Axes {
            axes: vec![axis],
            keepdims: false,
            span,
        });
        let (sum, et, _) = self.reduction_with(ReduceOp::Sum, &product, span, AccRule::Element)?;
        if et == ElemTy::Bool {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of bool arrays is not supported in parpy functions"
                ))
                .at(
                    span,
                    "NumPy's product of bool matrices is a bool matrix (any pair both true)",
                )
                .help("convert the operands to an integer type"),
            );
            return None;
        }
        Some(sum)
    }

    /// NumPy's error of `dot` / `matmul` of operands of 1 or 2
    /// dimensions whose core dimensions (the last of `a`, the first of
    /// `b`) differ, when their shapes are known.
    fn core_mismatch(&mut self, a: &ast::Expr, b: &ast::Expr, name: &str) -> Option<Diagnostic> {
        // (the shapes only: the operands' own errors come when they are
        // lowered)
        let (from, diags) = (self.pre.len(), self.sh.diags.len());
        let (sa, sb) = (self.array_shape(a).flatten(), self.array_shape(b).flatten());
        self.pre.truncate(from);
        self.sh.diags.truncate(diags);
        let (sa, sb) = (sa?, sb?);
        let (&ka, &kb) = (sa.last()?, sb.first()?);
        if ka == kb {
            return None;
        }
        let tuple = |s: &[i64]| match s {
            [d] => format!("({d},)"),
            _ => format!(
                "({})",
                s.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        };
        let message = if name == "@" || name.ends_with("matmul") {
            format!(
                "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc \
                 signature (n?,k),(k,m?)->(n?,m?) (size {kb} is different from {ka})"
            )
        } else {
            format!(
                "shapes {} and {} not aligned: {ka} (dim {}) != {kb} (dim 0)",
                tuple(&sa),
                tuple(&sb),
                sa.len() - 1
            )
        };
        Some(
            Diagnostic::error(message)
                .at(a.span, format!("shape {}: its last dimension is {ka}", tuple(&sa)))
                .also(b.span, format!("shape {}: its first dimension is {kb}", tuple(&sb)))
                .note("NumPy raises ValueError: the last dimension of the left operand must equal the first of the right one"),
        )
    }

    /// Whether NumPy multiplies the arrays `a` and `b` as float16 (both
    /// float16, or one float16 and the other of a type float16 holds).
    fn half_operands(&mut self, a: &ast::Expr, b: &ast::Expr) -> bool {
        match (self.reduced_elem(a), self.reduced_elem(b)) {
            (Some(x), Some(y)) => super::types::promote_strong(x, y) == ElemTy::F16,
            _ => false,
        }
    }

    /// A call that is a statement of its own (`x.fill(v)`,
    /// `np.copyto(dst, src)`) used as a value, or of something other than
    /// an array.
    fn statement_only(&mut self, what: &str, span: Span) {
        self.error(
            Diagnostic::error(format!("{what} is a statement of its own"))
                .at(span, "used here as a value, or not of an array")
                .help("write it on a line of its own with an array or a slice as the destination: `y[i, :].fill(0.0)`, `np.copyto(y[i, :], x[i, :])`"),
        );
    }

    /// `np.outer(a, b)` of 1-D operands: `a[:, None] * b` (NumPy flattens
    /// others, which parpy does not).
    fn outer(&mut self, a: &ast::Expr, b: &ast::Expr, name: &str, span: Span) -> Option<TExpr> {
        for x in [a, b] {
            let r = self.rank(x);
            if r != 1 {
                self.error(
                    Diagnostic::error(format!("`{name}` takes 1-D operands in parpy functions"))
                        .at(x.span, format!("this has {r} dimensions"))
                        .help("take a 1-D slice, or write the product with new axes: `a[:, None] * b[None, :]`"),
                );
                return None;
            }
        }
        let Some(column) = self.with_new_axis(a) else {
            self.error(
                Diagnostic::error(format!("`{name}` of this operand is not supported"))
                    .at(a.span, "not elementwise")
                    .help("assign the operand to a local array first"),
            );
            return None;
        };
        self.lower_expr(&ast::Expr::binary(BinOp::Mul, column, b.clone(), span))
    }

    /// `a[..., None]`: `a` with a new last axis, given to each of its
    /// arrays (`(x[i, :] + 1.0)[..., None]` is `x[i, :, None] + 1.0`), which
    /// NumPy's right-aligned broadcasting keeps right; `None` for an
    /// expression that is not elementwise (a reduction inside).
    pub(super) fn with_new_axis(&self, a: &ast::Expr) -> Option<ast::Expr> {
        let mut layout = vec![true; self.rank(a)];
        layout.push(false);
        self.with_axes(a, &layout)
    }

    /// `a` with new axes where `layout` is false (its dimensions, in
    /// order, where it is true), given to each of its arrays: an array of
    /// fewer dimensions, which NumPy aligns on the right, takes the end of
    /// `layout` from its first dimension (`(x[i, :, :] + v)` with a new
    /// middle axis is `x[i, :, None, :] + v[None, :]`, written
    /// `v[None, :]` only where a new axis falls inside its dimensions);
    /// `None` for an expression that is not elementwise (a reduction
    /// inside).
    pub(super) fn with_axes(&self, a: &ast::Expr, layout: &[bool]) -> Option<ast::Expr> {
        use ast::ExprKind as K;
        let rank = self.rank(a);
        if rank == 0 {
            return Some(a.clone());
        }
        // (the part of `layout` from this expression's first dimension)
        let from = layout
            .iter()
            .enumerate()
            .filter(|(_, &d)| d)
            .nth_back(rank - 1)
            .map_or(0, |(k, _)| k);
        let layout = &layout[from..];
        let kind = match &a.kind {
            K::Subscript { .. } | K::Name(_) | K::Attr { .. } => {
                return self.array_with_axes(a, rank, layout)
            }
            K::Unary { op, arg } => K::Unary {
                op: *op,
                arg: Box::new(self.with_axes(arg, layout)?),
            },
            K::Binary { op, lhs, rhs } if *op != BinOp::MatMul => K::Binary {
                op: *op,
                lhs: Box::new(self.with_axes(lhs, layout)?),
                rhs: Box::new(self.with_axes(rhs, layout)?),
            },
            K::Compare { first, rest } => K::Compare {
                first: Box::new(self.with_axes(first, layout)?),
                rest: rest
                    .iter()
                    .map(|(op, x)| Some((*op, self.with_axes(x, layout)?)))
                    .collect::<Option<_>>()?,
            },
            K::IfExp { cond, then, else_ } => K::IfExp {
                cond: Box::new(self.with_axes(cond, layout)?),
                then: Box::new(self.with_axes(then, layout)?),
                else_: Box::new(self.with_axes(else_, layout)?),
            },
            K::Call {
                func,
                args,
                keywords,
            } if self.builtin_of(func).is_some_and(super::alias::elementwise) => K::Call {
                func: func.clone(),
                args: args
                    .iter()
                    .map(|x| self.with_axes(x, layout))
                    .collect::<Option<_>>()?,
                keywords: keywords.clone(),
            },
            _ => return None,
        };
        Some(ast::Expr { kind, span: a.span })
    }

    /// `with_axes` of an array or a subscript of one (`rank`
    /// dimensions): `layout`'s new axes as `None` indices among its
    /// slices.
    fn array_with_axes(&self, a: &ast::Expr, rank: usize, layout: &[bool]) -> Option<ast::Expr> {
        let full = || ast::Expr::full_slice(a.span);
        let new_axis = || ast::Expr {
            kind: ast::ExprKind::None,
            span: a.span,
        };
        let (value, mut indices) = match &a.kind {
            ast::ExprKind::Subscript { value, indices } => (value.clone(), indices.clone()),
            ast::ExprKind::Name(_) | ast::ExprKind::Attr { .. } => {
                (Box::new(a.clone()), (0..rank).map(|_| full()).collect())
            }
            _ => return None,
        };
        // the dimensions a subscript leaves out are full slices (`x.T`
        // has `x`'s number of them)
        let array = super::expr::transpose_of(&value).unwrap_or(&value);
        let (_, Type::Array { shape, .. }) = self.array_arg(array)? else {
            return None;
        };
        let given = indices.iter().filter(|i| !self.is_new_axis(i)).count();
        indices.extend((given..shape.len()).map(|_| full()));
        if indices.iter().any(|i| self.is_new_axis(i)) {
            // (its own new axes: only more after them all)
            if layout.iter().take(rank).any(|&d| !d) {
                return None;
            }
            indices.extend(layout[rank..].iter().map(|_| new_axis()));
        } else {
            // each dimension of the subscript is one of its slices (an
            // integer index takes none): a new axis before the next slice
            let mut out = vec![];
            let mut slots = layout.iter();
            for i in indices {
                let is_slice = matches!(i.kind, ast::ExprKind::Slice { .. });
                if !is_slice && self.rank(&i) > 0 {
                    // (an array of indices: NumPy's advanced indexing)
                    return None;
                }
                if is_slice {
                    for d in slots.by_ref() {
                        if *d {
                            break;
                        }
                        out.push(new_axis());
                    }
                }
                out.push(i);
            }
            out.extend(slots.map(|_| new_axis()));
            indices = out;
        }
        Some(ast::Expr {
            kind: ast::ExprKind::Subscript { value, indices },
            span: a.span,
        })
    }

    /// `np.mean(s)` / `s.mean()`: NumPy's sum in its accumulator type (float64
    /// for integers and bools, float32 for float16) divided by the count,
    /// float16 rounded back.
    pub(super) fn mean(&mut self, arg: &ast::Expr, span: Span) -> Option<TExpr> {
        self.mean_with(arg, AccRule::Mean, span)
    }

    /// The mean by `rule` (`Mean`, or `VarMean` inside `np.var`: a float16
    /// sum rounded to float16, then divided in float16).
    fn mean_with(&mut self, arg: &ast::Expr, rule: AccRule, span: Span) -> Option<TExpr> {
        let (sum, et, extents) = self.reduction_with(ReduceOp::Sum, arg, span, rule)?;
        let acc = sum.e.ty.elem()?;
        let n: i64 = extents.iter().product();
        let count = match self.packed_count(arg) {
            Some(k) => convert(k, acc),
            None => Expr::new(ExprKind::Float(n as f64), Type::Scalar(acc), span),
        };
        let e = Expr::binary(BinOp::Div, sum.e, count, Type::Scalar(acc), span);
        let e = if et.is_float() && acc != et {
            convert(e, et)
        } else {
            e
        };
        Some(TExpr { e, weak: false })
    }

    /// Python's `sum(v)` and `np.dot(a, b)` (`v` = `a * b`) of 1-D vectors:
    /// the elements added in their own type, as NumPy scalars add.
    fn vector_sum(&mut self, name: &str, v: &ast::Expr, dot: bool, span: Span) -> Option<TExpr> {
        let rule = if dot {
            AccRule::Element
        } else {
            AccRule::InOrder
        };
        let (sum, et, extents) = self.reduction_with(ReduceOp::Sum, v, span, rule)?;
        if et == ElemTy::Bool && dot {
            self.error(
                Diagnostic::error(format!("`{name}` of bool vectors is not supported in parpy functions"))
                    .at(span, "NumPy's dot of bools is a bool (any pair both true)")
                    .help("write `parpy.operators.max(a[...] & b[...])` for that, or convert the vectors to an integer type"),
            );
            return None;
        }
        if extents.len() != 1 {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of a {}-dimensional slice is not a number in Python",
                    extents.len()
                ))
                .at(span, format!("this gives a {}-D result", extents.len() - 1))
                .help("reduce every element with `np.sum(...)` / `parpy.sum(...)`, or take a 1-D slice"),
            );
            return None;
        }
        Some(sum)
    }

    /// `x[i, :].max()`, `x.sum()`: a reduction written as a method; `None`
    /// when `func` is not a method of a local value.
    fn method_call(
        &mut self,
        func: &ast::Expr,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Option<TExpr>> {
        let ast::ExprKind::Attr { value, attr } = &func.kind else {
            return None;
        };
        if !self.is_local_value(value) {
            return None;
        }
        let name = format!(".{attr}()");
        // `a.sum(dtype=T)`: `T(a.astype(T).sum())`
        let mut cast = None;
        if let Some(b) = super::keywords::method_builtin(attr) {
            match self.reduction_dtype(b, &name, value, args) {
                None => return Some(None),
                Some(Some((a, rest, t))) => {
                    let func = ast::Expr {
                        kind: ast::ExprKind::Attr {
                            value: Box::new(a.clone()),
                            attr: attr.clone(),
                        },
                        span: func.span,
                    };
                    cast = Some((a, func, rest, t));
                }
                Some(None) => {}
            }
        }
        let (value, func, args, result) = match &cast {
            Some((a, f, rest, t)) => (a, f, &rest[..], Some(*t)),
            None => (&**value, func, args, None),
        };
        let args = self.compact(&name, super::keywords::method_signature(attr), args);
        let Some(axis) = self.axis_value() else {
            return Some(None);
        };
        let Some(args) = args else {
            return Some(None);
        };
        if let (Some(Builtin::Reduce(op)), [initial, mask @ ..]) =
            (super::keywords::method_builtin(attr), &args[..])
        {
            let masked = self.masked_operand(
                op,
                &name,
                (value, initial, mask.first()),
                axis.is_some(),
                span,
            );
            let Some((value, initial)) = masked else {
                return Some(None);
            };
            let r =
                self.reduction_with_initial(op, &name, (&value, &initial), axis.is_some(), span);
            return Some(in_dtype(r, result));
        }
        self.axis = axis;
        let r = self.method_of(func, value, attr, &name, &args, span);
        self.axis = None;
        Some(in_dtype(r, result))
    }

    /// Reduction `b` of array `a` with the arguments `rest` after it
    /// (`axis`, `dtype`, ...) when its `dtype` is given: the array in that
    /// type, `a.astype(T)`, which NumPy's cast elements are, `rest` with
    /// `dtype=None`, and `T`, the type NumPy reduces in: `np.sum`'s wider
    /// accumulator of a narrow integer converted back to it wraps as
    /// NumPy's sum in it does (`Some(None)` without a `dtype`, or for a
    /// builtin other than `np.sum`, `np.prod` and `np.mean`; `None` after an
    /// error). NumPy casts in buffers of 8192 elements, each summed
    /// pairwise: a float sum of more cast elements is refused.
    fn reduction_dtype(
        &mut self,
        b: Builtin,
        name: &str,
        a: &ast::Expr,
        rest: &[ast::Expr],
    ) -> Option<Option<(ast::Expr, Vec<ast::Expr>, ElemTy)>> {
        let Some(dtype) = rest.get(1) else {
            return Some(None);
        };
        let mean = match b {
            _ if matches!(dtype.kind, ast::ExprKind::None) => return Some(None),
            Builtin::Reduce(ReduceOp::Sum | ReduceOp::Prod) => false,
            Builtin::Mean => true,
            _ => return Some(None),
        };
        let t = self.allocation_dtype(dtype)?;
        let (shape, et) = self.shape_of(a, name)?;
        let n: i64 = shape.iter().product();
        let sum = mean || matches!(b, Builtin::Reduce(ReduceOp::Sum));
        let why = match () {
            _ if mean && !matches!(t, ElemTy::F32 | ElemTy::F64) => Some(
                "NumPy's mean in an integer or float16 type rounds its sum and quotient in ways parpy does not follow".to_string(),
            ),
            _ if sum && t.is_float() && t != et && n > super::slices::NUMPY_BUFFER => Some(format!(
                "NumPy casts the {n} elements in buffers of {} and sums each buffer pairwise",
                super::slices::NUMPY_BUFFER
            )),
            _ => None,
        };
        if let Some(why) = why {
            self.error(
                Diagnostic::error(format!("`{name}` with this `dtype` is not supported here"))
                    .at(dtype.span, "this dtype")
                    .note(why)
                    .help(
                        "convert the elements first (`a.astype(T)`), whose sum NumPy adds pairwise",
                    ),
            );
            return None;
        }
        let cast = super::local_arrays::astype_of(a, dtype.clone(), dtype.span, a.span);
        let mut rest = rest.to_vec();
        rest[1].kind = ast::ExprKind::None;
        Some(Some((cast, rest, t)))
    }

    /// `method_call` once `compact` has read the arguments.
    fn method_of(
        &mut self,
        func: &ast::Expr,
        value: &ast::Expr,
        attr: &str,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        // `x.astype(T)` is `T(x)` (`int`, `float`, `bool`: NumPy's int64,
        // float64, bool)
        if let ("astype", [ty]) = (attr, args) {
            let t = self.allocation_dtype(ty)?;
            return self.dtype_call(t, name, std::slice::from_ref(value), span);
        }
        if attr == "fill" {
            self.statement_only("`.fill(v)`", span);
            return None;
        }
        if let ("bit_length" | "is_integer", []) = (attr, args) {
            return self.number_method(attr, value, span);
        }
        // `x.item()` of an element: the number, a Python number
        if attr == "item" {
            if let Some(element) = self.item_of(value, args, span) {
                let v = self.lower_expr(&element?)?;
                return Some(TExpr { e: v.e, weak: true });
            }
            let v = self.lower_expr(value)?;
            self.scalar_elem(&v)?;
            return Some(TExpr { e: v.e, weak: true });
        }
        // `s.mean()` is `np.mean(s)`, `s.var(ddof=1)` is `np.var(s, ddof=1)`
        // and so on (`compact` read the method's own signature)
        let Some(b) = super::keywords::method_builtin(attr) else {
            let call = ast::Expr::method(value, attr, args.to_vec(), func.span, span);
            if let Some(d) = self.permutation_error(&call) {
                self.error(d);
                return None;
            }
            self.error(
                Diagnostic::error(format!("method `{attr}` is not supported in parpy functions"))
                    .at(func.span, "unknown method")
                    .help("the supported methods are `.astype(T)`, `.item()`, `.dot(b)`, `.clip(lo, hi)`, `.round(d)`, `.cumsum()`, `.cumprod()`, `.diagonal()`, `.trace()` and the reductions `.sum()`, `.prod()`, `.max()`, `.min()`, `.mean()`, `.var()`, `.std()`, `.any()`, `.all()`, `.argmax()` and `.argmin()` of an array or a slice; `.sort()` and `.fill(v)` as statements; `.bit_length()` of a Python int and `.is_integer()` of a number"),
            );
            return None;
        };
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(value.clone());
        all.extend_from_slice(args);
        self.builtin_call_with(b, name, &all, span)
    }

    /// `a.item(k)` / `a.item(j, k)` / `a.item((j, k))` of an array or a
    /// slice (`rank` above 0), and `a.item()` of one element: NumPy's
    /// element, `a[k]` (`a.ravel()[k]`, the flat index, of more
    /// dimensions) or `a[j, k]`, whose reads check the indices (`Some(None)`
    /// after an error); `None` for `.item()` of a number.
    fn item_of(
        &mut self,
        value: &ast::Expr,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Option<ast::Expr>> {
        let rank = self.rank(value);
        let indices = match args {
            [ast::Expr {
                kind: ast::ExprKind::Tuple(items),
                ..
            }] => items.as_slice(),
            _ => args,
        };
        let subscript = |value: ast::Expr, indices: Vec<ast::Expr>| ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(value),
                indices,
            },
            span,
        };
        let problem = match (rank, indices.len()) {
            (0, 0) => return None,
            (0, _) => {
                self.error(
                    Diagnostic::error("parpy takes `.item()` of a number without indices")
                        .at(span, "an index of a number")
                        .help("write `.item()`"),
                );
                return Some(None);
            }
            (1, 0) if self.leading_dim(value) == Some(1) => {
                return Some(Some(subscript(
                    value.clone(),
                    vec![ast::Expr::int(0, span)],
                )));
            }
            (_, 0) => "can only convert an array of size 1 to a Python scalar",
            (_, 1) if rank > 1 => {
                let flat = ast::Expr::method(value, "ravel", vec![], span, span);
                return Some(Some(subscript(flat, indices.to_vec())));
            }
            (r, n) if r == n => return Some(Some(subscript(value.clone(), indices.to_vec()))),
            _ => "incorrect number of indices for array",
        };
        self.error(
            Diagnostic::error(problem.to_string())
                .at(
                    span,
                    format!("`.item` of {rank} dimensions, {} indices", indices.len()),
                )
                .raises("ValueError"),
        );
        Some(None)
    }

    /// The length of the first dimension of array `e`, of a slice of one
    /// (`x[i, 1:]`: the first sliced dimension) or of a row (`x[i]`).
    pub(super) fn leading_dim(&mut self, e: &ast::Expr) -> Option<i64> {
        let (value, indices) = match &e.kind {
            ast::ExprKind::Subscript { value, indices } => (&**value, indices.as_slice()),
            _ => (e, &[][..]),
        };
        let (_, Type::Array { shape, .. }) = self.array_arg(value)? else {
            return None;
        };
        for (k, ix) in indices.iter().enumerate() {
            if let ast::ExprKind::Slice { lo, hi, step } = &ix.kind {
                let parts = (lo.as_deref(), hi.as_deref(), step.as_deref());
                return match self.slice_bounds(parts, *shape.get(k)?, ix.span)? {
                    IndexSlot::Slice { extent, .. } => Some(extent),
                    _ => None,
                };
            }
        }
        shape.get(indices.len()).copied()
    }

    /// An array argument: a name bound to an array variable.
    pub(super) fn array_arg(&self, e: &ast::Expr) -> Option<(crate::ir::VarId, Type)> {
        if let ast::ExprKind::Name(n) = &e.kind {
            let b = self.scope.get(n)?;
            let ty = self.func.var(b.var).ty.clone();
            if ty.is_array() {
                return Some((b.var, ty));
            }
        }
        None
    }

    fn helper_call(
        &mut self,
        def: &Arc<FunctionDef>,
        globals: &Arc<dyn Resolver>,
        args: &[ast::Expr],
        span: Span,
        force_inline: bool,
    ) -> Option<TExpr> {
        if args.len() != def.params.len() {
            let n = def.params.len();
            self.arity_error(
                &def.name,
                &format!("{n} argument{}", if n == 1 { "" } else { "s" }),
                args.len(),
                span,
            );
            return None;
        }
        // in a slice statement: per element, or its one expression
        match self.mapped_helper(def, globals, args, span) {
            Some(Ok(e)) => return self.lower_expr(&e),
            Some(Err(())) => return None,
            None => {}
        }
        // inlined: when asked, when the helper holds labels (its loops take
        // the caller's parallel spec), when it returns a tuple (its values
        // are the caller's locals), when it is passed a row `x[i]` or
        // another view (`x[i, 1:]`), and when it is passed one array for
        // two parameters (`h(a, a)`: a write through one shows in the
        // other, which a function of its own would not know)
        let arrays: Vec<_> = args
            .iter()
            .filter_map(|a| self.array_or_alias_arg(a))
            .collect();
        let twice = arrays
            .iter()
            .enumerate()
            .any(|(k, v)| arrays[..k].contains(v));
        // and in host code on a GPU backend, whose launch plan runs the
        // host's statements but calls no functions
        let host_on_gpu = self.opts.backend != crate::options::Backend::Cpu
            && self.device_depth == 0
            && self.slice.is_none();
        if force_inline
            || twice
            || host_on_gpu
            || super::inline::has_labels(&def.body, globals.as_ref())
            || super::inline::returns_tuple(def, globals.as_ref())
            || args.iter().any(|a| self.view_argument(a).is_some())
            || args.iter().any(|a| self.reshape_view(a).is_some())
            || args
                .iter()
                .any(|a| self.array_or_alias_arg(a).is_some() && self.array_arg(a).is_none())
        {
            return self.inline_call(def, globals, args, span);
        }
        let mut types = vec![];
        let mut weak = vec![];
        let mut exprs = vec![];
        let mut ok = true;
        for a in args {
            // None (a default, or a parameter passed None): the helper is
            // specialized for it (`none_args`), the call passes nothing
            if matches!(a.kind, ast::ExprKind::None) {
                types.push(ArgType::Unusable("NoneType".into()));
                weak.push(false);
                continue;
            }
            // a whole dict: the helper is specialized for its type (the
            // leaves' values are not), the call passes its leaves
            if let Some((_, ty)) = self.dict_arg(a) {
                types.push(ty.map_leaves(&|l| match l {
                    ArgType::Scalar { elem, weak, .. } => ArgType::Scalar {
                        elem: *elem,
                        value: None,
                        weak: *weak,
                    },
                    other => other.clone(),
                }));
                weak.push(false);
                for leaf in self.expand_dict_args(std::slice::from_ref(a)) {
                    match self.array_arg(&leaf) {
                        Some((v, ty)) => exprs.push(Expr::var(v, ty, a.span)),
                        None => match self.lower_expr(&leaf) {
                            Some(t) => exprs.push(t.e),
                            None => ok = false,
                        },
                    }
                }
                continue;
            }
            if let Some((v, ty)) = self.array_arg(a) {
                if let Type::Array { elem, shape } = &ty {
                    types.push(ArgType::Array {
                        elem: *elem,
                        shape: shape.clone(),
                    });
                }
                exprs.push(Expr::var(v, ty, a.span));
                weak.push(false);
                continue;
            }
            let Some(t) = self.lower_expr(a) else {
                ok = false;
                continue;
            };
            let Some(elem) = self.scalar_elem(&t) else {
                ok = false;
                continue;
            };
            types.push(ArgType::Scalar {
                elem,
                value: None,
                weak: t.weak,
            });
            weak.push(t.weak);
            exprs.push(t.e);
        }
        if !ok {
            return None;
        }
        let fid = helper_for(self.sh, def, globals, &types, &weak, span)?;
        let h = &self.sh.helpers[fid.0 as usize];
        let ret = h.func.ret.clone();
        let ret_weak = h.ret_weak;
        Some(TExpr {
            e: Expr::new(
                ExprKind::Call {
                    func: fid,
                    args: exprs,
                },
                ret,
                span,
            ),
            weak: ret_weak,
        })
    }
}

/// The call `root.name(args)` of a path only sema writes (`#np`, `#py`).
/// (`root` may be dotted: `#py.math`.)
fn rooted_call(root: &str, name: &str, args: Vec<ast::Expr>, span: Span) -> ast::Expr {
    let mut parts = root.split('.');
    let first = ast::Expr::name(parts.next().unwrap_or(root), span);
    let func = parts
        .chain(std::iter::once(name))
        .fold(first, |value, attr| ast::Expr {
            kind: ast::ExprKind::Attr {
                value: Box::new(value),
                attr: attr.to_string(),
            },
            span,
        });
    ast::Expr::call(func, args, span)
}

/// `f(x)` of one argument in `x`'s type, weak if `x` is.
pub(super) fn math_of(f: MathFn, x: TExpr, span: Span) -> TExpr {
    let ty = x.e.ty.clone();
    TExpr {
        e: Expr::new(
            ExprKind::Math {
                func: f,
                args: vec![x.e],
            },
            ty,
            span,
        ),
        weak: x.weak,
    }
}

/// `f(e)` of the predicate `f` (`isnan`, `isinf`, `isfinite`), a bool, of
/// the float `e` converted to `ty`: a float16 read as a float32 (the same
/// answer; CUDA has no `isnan` / `isinf` / `isfinite` of a `__half`, and
/// the IR verifier refuses a float16 argument). Every predicate sema
/// builds goes through here.
/// The most elements `*v` spells out as arguments (`calls.rs`
/// `spread_starred`).
const MAX_SPREAD: i64 = 64;

pub(super) fn predicate(f: MathFn, e: Expr, ty: ElemTy, span: Span) -> Expr {
    let arg = match ty {
        ElemTy::F16 => convert(convert(e, ty), ElemTy::F32),
        _ => convert(e, ty),
    };
    Expr::math(f, vec![arg], ElemTy::Bool, span)
}

/// A reduction's result `r` in the `dtype` it was called with, if any
/// (`calls.rs` `reduction_dtype`).
/// `r`, the value of a NumPy function, as NumPy gives it: a NumPy value (a NumPy scalar or a 0-d array), never a
/// Python number, Python numbers alone too (NumPy makes them arrays
/// first): `np.maximum(1, 2)`, `np.abs(-2)`, `np.clip(5, 0, 2)`,
/// `np.floor(2)` are int64s, `np.sqrt(2.0)` a float64, so `x8[i] *
/// np.maximum(1, 2)` computes in int64 and `x32[i] * np.sqrt(2.0)` in
/// float64 (a Python number would take the array's type); `np.array(2)`
/// is a 0-d int64 array. The rule of every NumPy function but
/// `np.allclose` (a Python bool); a parpy builtin (`parpy.math.sqrt(2.0)`)
/// or a Python one (`abs(-2)`) keeps a Python number.
/// The items of `np.select`'s list or tuple literal.
pub(super) fn select_items(e: &ast::Expr) -> Option<&[ast::Expr]> {
    match &e.kind {
        ast::ExprKind::Tuple(items) => Some(items),
        _ => e.list_items(),
    }
}

fn numpy_value(r: Option<TExpr>) -> Option<TExpr> {
    r.map(|t| TExpr { weak: false, ..t })
}

/// Whether the call `what(args, keywords)` (an allocating NumPy
/// function) is `np.array(v)`, `np.asarray(v)` or `np.copy(v)` of a
/// number `v` (`rank` 0), without keywords: a 0-d array of `v`.
pub(super) fn copies_a_number(
    what: &str,
    args: &[ast::Expr],
    keywords: &[ast::Keyword],
    rank: impl Fn(&ast::Expr) -> usize,
) -> bool {
    matches!(
        what,
        "numpy.array" | "numpy.asarray" | "numpy.asanyarray" | "numpy.copy"
    ) && keywords.is_empty()
        && matches!(args, [v] if rank(v) == 0
            && v.list_items().is_none()
            && !matches!(v.kind, ast::ExprKind::Tuple(_)))
}

fn in_dtype(r: Option<TExpr>, dtype: Option<ElemTy>) -> Option<TExpr> {
    match (r, dtype) {
        (Some(r), Some(t)) => Some(TExpr {
            e: convert(r.e, t),
            weak: false,
        }),
        (r, _) => r,
    }
}

/// Python's `round(x, d)` of a float for `0 <= d <= 350` (and of an
/// infinity or NaN, itself): the exact
/// decimal value of `x` rounded to `d` places, ties to even, read back as
/// the nearest float (Rust's formatting rounds the exact value as
/// CPython's `float.__round__` does). `None` for other `d`.
fn python_round(x: f64, d: i64) -> Option<f64> {
    if !x.is_finite() {
        return Some(x);
    }
    let d = usize::try_from(d).ok().filter(|d| *d <= 350)?;
    format!("{x:.d$}").parse().ok()
}

/// Python's errors for `int(v)` of the float `v` that is NaN
/// (`ValueError`) or an infinity (`OverflowError`): the conditions that
/// must hold, for `raise_unless`.
pub(super) fn nan_and_infinity_checks(
    v: &Expr,
    span: Span,
) -> Vec<(Expr, &'static str, &'static str)> {
    let not = |g: MathFn| Expr::not(predicate(g, v.clone(), v.elem(), span), span);
    vec![
        (
            not(MathFn::IsNan),
            "cannot convert float NaN to integer",
            "ValueError",
        ),
        (
            not(MathFn::IsInf),
            "cannot convert float infinity to integer",
            "OverflowError",
        ),
    ]
}

/// `key(item)`, the key of an item of Python's `max` / `min`: of a
/// lambda (`ast::ExprKind::Lambda`, one parameter, the converter checks)
/// its body with the item in place of its parameter.
pub(super) fn key_call(key: &ast::Expr, item: ast::Expr) -> ast::Expr {
    match &key.kind {
        ast::ExprKind::Lambda { params, body } => {
            let mut body = (**body).clone();
            let by: Vec<_> = params.iter().map(|p| (p.clone(), item.clone())).collect();
            super::inline::subst_expr(&mut body, &by);
            body
        }
        _ => ast::Expr::call(key.clone(), vec![item], key.span),
    }
}
