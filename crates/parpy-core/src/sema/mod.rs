//! Name resolution, typing and specialization: syntax AST -> typed IR.
//!
//! One [`Lowerer`] builds one IR function (the entry or a helper
//! specialization); the [`Shared`] state holds what is common to all of them
//! (diagnostics, the helper table, the call stack used to detect recursion).
//! The work is split by concern: `scope.rs` (names), `types.rs` (promotion,
//! conversions, stores), `expr.rs`, `stmt.rs`, `slices.rs` (slice statements
//! and reductions to loops) and `calls.rs` (builtins and helper functions).

mod alias;
mod arange;
mod array_equal;
mod assign;
mod atomic;
mod average;
mod callback;
mod calls;
mod chains;
mod concatenate;
mod convolve;
mod cov;
mod dicts;
mod digitize;
mod einsum;
mod expr;
mod external;
mod eye;
mod folds;
mod fsum;
mod generators;
mod gradient;
mod histogram;
mod hoist;
mod hypot;
mod inline;
mod int_math;
mod interp;
mod keyed_search;
mod keywords;
mod linspace;
mod lists;
mod local_arrays;
mod mapped;
mod masks;
mod membership;
mod nan_reductions;
mod none_args;
mod order_stats;
mod out_args;
mod pad;
mod permute;
mod polyval;
mod reshape;
mod runtime_slices;
mod scope;
mod slices;
mod sort;
mod sorted;
mod stmt;
mod trapezoid;
mod types;
mod ufuncs;
mod unbound;
mod unravel;
mod views;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diag::{Diagnostic, Span};
use crate::error::CompileError;
use crate::ir::{Block, Expr, FuncId, Function, Program, Type, Var, VarKind};
use crate::options::Options;
use crate::resolve::Resolver;
use crate::signature::ArgType;
use crate::syntax::ast as ast_expr;
use crate::syntax::FunctionDef;

use scope::Scope;
use slices::SliceCtx;

/// A typed expression plus its "weakness" (NEP 50): Python literals and
/// Python scalar values adapt to the other operand's type.
#[derive(Clone, Debug)]
pub(crate) struct TExpr {
    pub e: Expr,
    pub weak: bool,
}

/// One lowered helper specialization.
struct HelperEntry {
    def_ptr: usize,
    /// The Python name of the function (specializations get `_1`, `_2`).
    base: String,
    args: Vec<ArgType>,
    /// Which scalar arguments were weak (Python literals) at the call.
    weak: Vec<bool>,
    func: Function,
    /// Every `return e` returned a weak value.
    ret_weak: bool,
}

/// State shared by the lowering of the entry and of all helpers.
pub(crate) struct Shared<'o> {
    opts: &'o Options,
    diags: Vec<Diagnostic>,
    helpers: Vec<HelperEntry>,
    /// The jit functions being lowered (identity of their `FunctionDef`).
    stack: Vec<usize>,
    /// Callback calls lowered so far (the next one's `site`).
    callback_sites: usize,
    /// The external functions called so far (`Program::externals`).
    externals: Vec<crate::signature::ExtDecl>,
    /// Integer locals re-bound to a wider integer type (`pred = state`
    /// after `pred = convert(0, I16)`): first-assignment span -> the join
    /// of every type assigned to them (`assign::widen_local`). Python
    /// re-binds the name; one variable of the join type holds every value
    /// exactly.
    widened: std::collections::HashMap<Span, crate::ir::ElemTy>,
    /// Bumped whenever `widened` changes: a function lowered while it
    /// changed is lowered again.
    widen_gen: u32,
    /// No more lowering passes: a re-binding that needs a wider type is
    /// the narrowing-store error again.
    widen_frozen: bool,
    /// Local arrays of a Python list or tuple (by their first binding's
    /// span) bound to Python numbers and elsewhere to NumPy values of
    /// those numbers' NumPy type: their items read as that type from the
    /// first binding on (`lists.rs` `note_python_list`; a change bumps
    /// `widen_gen`, as `widened` does).
    strong_lists: std::collections::HashSet<Span>,
    /// NumPy bool locals (by their first assignment's span) joined with an
    /// int (`assign::join_bool_local`): `~` of one is refused, as NumPy's
    /// `~np.True_` is False where the int's `~1` is -2.
    bool_joined: std::collections::HashSet<Span>,
}

impl Shared<'_> {
    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// Notes that the expression at `at` lowered to nothing (`expr.rs`
    /// `lower_expr`). Every `None` must come with an error: one without
    /// any lost code, so a program that ends without errors but with such
    /// a note is an internal error pointing at it (`lower`), never a
    /// silently dropped statement. The note is a diagnostic of its own
    /// (not an error), so the probes and passes whose diagnostics are
    /// dropped drop it too.
    fn note_silent_none(&mut self, at: Span) {
        if !self
            .diags
            .iter()
            .any(|d| d.is_error() || d.message == SILENT_NONE)
        {
            self.diags
                .push(Diagnostic::warning(SILENT_NONE).at(at, "dropped here"));
        }
    }
}

/// The message of [`Shared::note_silent_none`]'s note.
const SILENT_NONE: &str = "this expression was lowered to nothing without a reason";

/// Builds one IR function from one `FunctionDef`.
pub(crate) struct Lowerer<'a, 'o> {
    sh: &'a mut Shared<'o>,
    /// The function's globals (its Python locals hidden: `scope::Globals`).
    resolver: &'a scope::Globals<'a>,
    opts: &'o Options,
    func: Function,
    scope: Scope,
    /// The entry function (helpers may return values).
    is_entry: bool,
    /// Labels may be used: in the entry and in helpers inlined into it.
    labels_ok: bool,
    /// Lowering a helper's body inlined at a call (`sema::inline`).
    inlined: bool,
    /// The name of the helper whose body is inlined (the errors of its
    /// early returns name it, not the hidden `return#value`).
    inlined_from: Option<String>,
    /// The loops around the statement being lowered, counted from the
    /// function's start or the innermost `with parpy.gpu:` block (a
    /// `break` / `continue` may not leave that block).
    loops: u32,
    /// The loops mapped to threads (labels of the parallel spec) and
    /// `with parpy.gpu:` blocks around the statement being lowered: 0 in
    /// host code, where a GPU backend's launch plan runs the statements
    /// (and inlines helper calls, `calls.rs` `helper_call`).
    device_depth: u32,
    /// Statements hoisted before the statement being lowered (reductions).
    pre: Vec<crate::ir::Stmt>,
    /// The active elementwise context when lowering a slice statement or a
    /// reduction argument.
    slice: Option<SliceCtx>,
    /// Labels for the next reduction loop of the current statement: each
    /// reduction of a labelled statement takes them (`max(x[:]) +
    /// min(x[:])`: both loops), not one inside another's argument.
    red_labels: Option<Vec<(String, Span)>>,
    /// Whether a reduction of the current statement took `red_labels`
    /// (they stay for the reductions after it).
    red_labels_used: bool,
    /// The `axis=` and `keepdims=` arguments `compact` took from the call
    /// being lowered.
    reduction_args: Vec<(&'static str, ast_expr::Expr)>,
    /// The axes of the next reduction (`axis=`), taken by it before its
    /// argument is lowered.
    axis: Option<slices::Axes>,
    /// `np.flip` / `np.diff` / `np.diagonal`: how the subscript at this
    /// span changes its slices (not the subscripts in its indices).
    view_op: Option<(crate::diag::Span, slices::ViewOp)>,
    /// Weakness of each parameter's argument.
    arg_weak: Vec<bool>,
    /// Types of the values of the `return e` statements seen so far; the
    /// helper returns their promoted type.
    #[allow(clippy::type_complexity)]
    returns: Vec<(
        crate::ir::ElemTy,
        bool,
        Option<crate::types::ScalarValue>,
        Span,
    )>,
    /// A bare `return` was seen.
    bare_return: Option<Span>,
    /// The expression being lowered is read for its truth only (an `if`
    /// or `while` condition, `not`, a conditional expression's test): an
    /// `and` / `or` in it need not give the deciding operand's value.
    condition: bool,
    /// The range of each loop counter (indices that cannot be negative need
    /// no wrap).
    loop_ranges: crate::ir::range::Ranges,
    /// Re-bound array names: selector variable -> the arrays it can refer
    /// to (`sema::alias`).
    aliases: BTreeMap<crate::ir::VarId, Vec<crate::ir::VarId>>,
    /// Name -> the arrays it is assigned in this body (`plan_aliases`).
    alias_plan: BTreeMap<String, Vec<crate::ir::VarId>>,
    /// Locals first assigned a weak literal, with that literal and the
    /// (type, weak) of every value stored into them later.
    /// Third: the types of the values stored that are weak only because
    /// they read the local itself (`t = t * 100`).
    #[allow(clippy::type_complexity)]
    acc_uses: std::collections::HashMap<
        crate::ir::VarId,
        (Expr, Vec<(crate::ir::ElemTy, bool)>, Vec<crate::ir::ElemTy>),
    >,
    /// The conditional expression at this span is the value an element
    /// store converts to this type (the destination's span last): each
    /// side is converted as if stored alone (`expr.rs`, `IfExp`).
    stored_select: Option<(Span, crate::ir::ElemTy, Span)>,
    /// The slices with run-time bounds of the argument of the reduction
    /// being lowered (`runtime_slices.rs`): `None` outside one, where
    /// such a slice is an error.
    rt_slices: Option<runtime_slices::RtSlices>,
    /// The next reduction is Python's `max` / `min` of a slice (its words
    /// when there are no elements: `slices.rs` `reduction_mapped`).
    python_extreme: bool,
    /// The next reduction is `np.any` / `np.all` (a max / min of truths):
    /// of no elements it is False / True, its identity, not an error.
    truth_reduction: bool,
    /// Lowering the operands of an operator of number literals whose value
    /// was checked to fit 64 bits (`expr.rs` `python_constant_fits`): an
    /// operand beyond 64 bits (`2 ** 70` in `2 ** 70 // 2 ** 10`) is fine.
    in_python_constant: bool,
    /// Operators of number literals whose value is in 2**63 .. 2**64 (a
    /// uint64 holds it, the lowered expression keeps its 64 bits): their
    /// spans and values, for `python_int_fits`.
    wide_constants: Vec<(Span, i128)>,
    /// The statement being lowered may not run when its function does
    /// (the number of branches, loops not known to run, conditional
    /// operands and earlier statements that may leave the block around
    /// it): a Python error it certainly raises (an index out of bounds, a
    /// Python int a NumPy integer cannot hold) is then a check where it
    /// runs, not an error when compiling (`certain`).
    unsure: u32,
    /// Scalar parameters of the entry function that a use converts to a
    /// NumPy integer type that may not hold them (`types.rs`
    /// `python_int_argument`), with the first such use.
    param_checks: Vec<(crate::ir::VarId, crate::ir::ElemTy, Span)>,
    /// Names of loop variables whose loop has ended with no other binding
    /// (a read after the loop is explained: `expr.rs` `not_defined`).
    ended_loop_vars: std::collections::BTreeSet<String>,
    /// Locals holding the last value of a loop's variable after the loop
    /// (`stmt.rs` `for_loop`): a later loop over the same name binds it
    /// anew, as when the name was unbound.
    loop_last: std::collections::BTreeSet<crate::ir::VarId>,
    /// The scalar locals the body's own names bind (not sema's hidden
    /// ones): `unbound.rs` guards their reads that may come before any
    /// assignment.
    user_locals: std::collections::BTreeSet<crate::ir::VarId>,
    /// Lowering a call of Python's `math` (`calls.rs`): computed in
    /// float64, a Python float (or bool) as Python's `math` returns.
    python_math: bool,
    /// Lowering a call of NumPy's math function or `np.abs` (`calls.rs`
    /// `math_call`): Python numbers alone become NumPy values first.
    numpy_math: bool,
    /// Locals a loop of unknown trips assigns its counter in each
    /// iteration, Python's name after the loop (`stmt.rs` `for_loop`).
    carries: std::collections::BTreeSet<crate::ir::VarId>,
    /// Reads of names the function assigns only further down, inside a
    /// loop (`if i > 0: d[i] = x[i] - prev` before `prev = x[i]`): a
    /// later iteration reads the earlier one's value. The next lowering
    /// declares them first (`forward`), or they are reported.
    forward_reads: Vec<(String, Span)>,
    /// A float stored into a local first assigned a Python int (`total =
    /// 0`, then `total += x[i]`): the error, reported unless
    /// `assign::typed_by_use` types the local (its first assignment's
    /// span) as that float.
    int_rebinds: Vec<(Span, Diagnostic)>,
    /// Types found by a first lowering of the function: the local first
    /// assigned at this span holds this (strong) type (see
    /// `assign::typed_by_use`).
    retype: std::collections::HashMap<Span, crate::ir::ElemTy>,
    /// Names that stand for a whole dict argument (`sema::dicts`) -> its
    /// type; their leaves are parameters of their own.
    dicts: BTreeMap<String, ArgType>,
    /// The element types the parameter annotations of this function bind
    /// to type variables (`Resolved::TypeVar`, by identity).
    type_vars: BTreeMap<u64, crate::types::ElemTy>,
    /// The name (and its span) the value being lowered is assigned to, in
    /// `name = value` (a slice there has no dimensions to go to).
    name_target: Option<(String, Span)>,
    /// The size each shape symbol of this function's `parpy.types.buffer`
    /// annotations has in this call, with the parameter that fixed it.
    shape_syms: BTreeMap<u64, (i64, String)>,
    /// The locals of this body assigned once, and the integer each holds
    /// where that assignment stored a constant (`assign::known_int`).
    once: assign::AssignedOnce,
    /// Names bound to a row of an array (`r = x[i]`), with the subscript
    /// they stand for (`x[r_i_1]`, its indices copied when assigned): see
    /// `alias::row_assign`.
    rows: Vec<(String, ast_expr::Expr)>,
    /// Local arrays of a Python list (`c = [0.25, 0.5]`), with the type
    /// (and weakness) of its items when they share one (`None`: they do
    /// not): an item read is of that type, a Python number weak, as
    /// Python reads it, and an item stored must be of it (`lists.rs`).
    python_lists: std::collections::HashMap<crate::ir::VarId, lists::PythonList>,
}

impl<'a, 'o> Lowerer<'a, 'o> {
    /// A lowerer of a helper's body into `func` with `scope`; the callers
    /// set what differs (the entry function's, an inlined body's).
    fn new(
        sh: &'a mut Shared<'o>,
        resolver: &'a scope::Globals<'a>,
        opts: &'o Options,
        func: Function,
        scope: Scope,
    ) -> Self {
        Lowerer {
            sh,
            resolver,
            opts,
            func,
            scope,
            is_entry: false,
            labels_ok: false,
            inlined: false,
            inlined_from: None,
            loops: 0,
            device_depth: 0,
            pre: vec![],
            slice: None,
            red_labels: None,
            red_labels_used: false,
            reduction_args: vec![],
            axis: None,
            view_op: None,
            arg_weak: vec![],
            returns: vec![],
            bare_return: None,
            condition: false,
            loop_ranges: Default::default(),
            aliases: BTreeMap::new(),
            alias_plan: BTreeMap::new(),
            acc_uses: Default::default(),
            stored_select: None,
            in_python_constant: false,
            wide_constants: vec![],
            python_extreme: false,
            rt_slices: None,
            truth_reduction: false,
            unsure: 0,
            param_checks: vec![],
            ended_loop_vars: Default::default(),
            loop_last: Default::default(),
            int_rebinds: vec![],
            retype: Default::default(),
            dicts: Default::default(),
            type_vars: BTreeMap::new(),
            shape_syms: BTreeMap::new(),
            name_target: None,
            once: Default::default(),
            rows: vec![],
            python_lists: Default::default(),
            user_locals: Default::default(),
            python_math: false,
            numpy_math: false,
            carries: Default::default(),
            forward_reads: vec![],
        }
    }

    fn error(&mut self, d: Diagnostic) {
        self.sh.error(d);
    }

    /// Drops the assignments of the locals that hold a loop variable's
    /// last value (`stmt.rs` `for_loop`) where nothing reads them: most
    /// loop variables are not read after their loop, and a statement
    /// between two sibling parallel loops would keep them in one kernel.
    fn drop_unread_loop_lasts(&mut self) {
        if self.loop_last.is_empty() {
            return;
        }
        let mut read = std::collections::BTreeSet::new();
        crate::ir::visit::walk_stmts(&self.func.body, &mut |s| {
            for e in crate::ir::visit::stmt_exprs(s) {
                crate::ir::visit::expr_uses(e, &mut read);
            }
        });
        let dead: std::collections::BTreeSet<_> =
            self.loop_last.difference(&read).copied().collect();
        fn drop(b: &mut Block, dead: &std::collections::BTreeSet<crate::ir::VarId>) {
            b.retain(|s| {
                !matches!(&s.kind, crate::ir::StmtKind::Assign { dst: crate::ir::Place::Var(v), .. } if dead.contains(v))
            });
            for s in b.iter_mut() {
                for sub in crate::ir::visit::sub_blocks_mut(s) {
                    drop(sub, dead);
                }
            }
        }
        drop(&mut self.func.body, &dead);
    }

    fn new_var(&mut self, name: &str, ty: Type, kind: VarKind, span: Span) -> crate::ir::VarId {
        self.func.add_var(Var {
            name: name.to_string(),
            ty,
            kind,
            value: None,
            span,
        })
    }
}

/// The label of the error a reached `parpy.builtin.static_fail` gives.
const STATIC_FAIL_LABEL: &str = "`parpy.builtin.static_fail` reached when compiling";

/// Is `d` the error of a `parpy.builtin.static_fail` the program reached
/// (its message is the program's own)?
pub fn is_static_fail(d: &Diagnostic) -> bool {
    d.is_error()
        && d.labels
            .iter()
            .any(|l| l.primary && l.message == STATIC_FAIL_LABEL)
}

/// Lowers `def` specialized for `args` into a program whose host function is
/// the entry and whose helpers are the jit functions it calls.
pub fn lower(
    def: &FunctionDef,
    args: &[ArgType],
    resolver: &dyn Resolver,
    options: &Options,
) -> Result<Program, CompileError> {
    let mut sh = Shared {
        opts: options,
        diags: vec![],
        helpers: vec![],
        stack: vec![def as *const FunctionDef as usize],
        callback_sites: 0,
        externals: vec![],
        widened: Default::default(),
        widen_gen: 0,
        widen_frozen: false,
        bool_joined: Default::default(),
        strong_lists: Default::default(),
    };
    // Python bools, ints and floats passed to the entry are weak scalars;
    // NumPy scalars are strong.
    let weak: Vec<bool> = args
        .iter()
        .map(|a| matches!(a, ArgType::Scalar { weak: true, .. }))
        .collect();
    // (inside a dict too: each leaf keeps its own weakness)
    // Python's `float` and `int` (float64 and int64 as the binding reports
    // them) take the options' float and int types (`force_float_size`,
    // `force_int_size`, 32-bit on Metal); NumPy scalars keep theirs.
    // (a Python int the options' int type cannot hold would wrap: `2**40`
    // as an int32 is 0; refused, naming the argument)
    for (k, a) in args.iter().enumerate() {
        let ArgType::Scalar {
            elem: crate::ir::ElemTy::I64,
            value: Some(crate::types::ScalarValue::Int(v)),
            weak: true,
        } = a
        else {
            continue;
        };
        let held = options
            .int_type
            .int_bounds()
            .is_some_and(|(lo, hi)| (lo..=hi).contains(&i128::from(*v)));
        if held {
            continue;
        }
        let name = def.params.get(k).map_or("?", |p| p.name.as_str());
        // (`def NAME`)
        let def_end = def.span.lo + 4 + def.name.len() as u32;
        let def_line = Span::new(def.span.file, def.span.lo, def_end.min(def.span.hi));
        let t = options.int_type.numpy_name();
        sh.diags.push(
            Diagnostic::error(format!(
                "Python integer {v} out of bounds for {t}: the argument `{name}` of `{}`",
                def.name
            ))
            .at(def_line, format!("`{name}` is a Python int, passed as an {t}"))
            .note(format!(
                "a Python int argument is an {t} here (`force_int_size`, or Metal's 32-bit scalars), which would wrap it"
            ))
            .help(format!(
                "pass a NumPy integer that holds it (`np.int64({name})`), or leave `force_int_size` unset"
            )),
        );
    }
    let args: Vec<ArgType> = args
        .iter()
        .map(|a| {
            a.map_leaves(&|a| match a {
                ArgType::Scalar {
                    elem: crate::ir::ElemTy::F64,
                    value,
                    weak: true,
                } => ArgType::Scalar {
                    elem: options.float_type,
                    value: *value,
                    weak: true,
                },
                ArgType::Scalar {
                    elem: crate::ir::ElemTy::I64,
                    value,
                    weak: true,
                } => ArgType::Scalar {
                    elem: options.int_type,
                    value: *value,
                    weak: true,
                },
                other => other.clone(),
            })
        })
        .collect();
    let args = &args[..];
    let host = lower_function(&mut sh, def, args, &weak, resolver, true, &def.name).map(|(f, _)| f);
    let silent: Vec<Diagnostic> = sh
        .diags
        .iter()
        .filter(|d| d.message == SILENT_NONE)
        .cloned()
        .collect();
    let errors = cap_repeats(sh.diags.into_iter().filter(|d| d.is_error()).collect());
    if !errors.is_empty() {
        return Err(CompileError::User(errors));
    }
    if !silent.is_empty() {
        return Err(CompileError::Internal(crate::diag::render_all(&silent)));
    }
    let host = host.ok_or_else(|| {
        CompileError::Internal("lowering failed without a diagnostic".to_string())
    })?;
    let helpers = std::mem::take(&mut sh.helpers)
        .into_iter()
        .map(|h| h.func)
        .collect();
    Ok(Program {
        host,
        kernels: vec![],
        helpers,
        bounds: None,
        externals: sh.externals,
    })
}

/// At most this many errors with the same message are shown.
const MAX_REPEATS: usize = 3;

/// Keeps the first [`MAX_REPEATS`] errors of each message; the last one
/// kept says how many more were left out.
fn cap_repeats(errors: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut count: std::collections::HashMap<String, usize> = Default::default();
    for d in &errors {
        *count.entry(d.message.clone()).or_default() += 1;
    }
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    let mut out = vec![];
    for d in errors {
        let n = seen.entry(d.message.clone()).or_default();
        *n += 1;
        let total = count[&d.message];
        if *n < MAX_REPEATS || (*n == MAX_REPEATS && total == MAX_REPEATS) {
            out.push(d);
        } else if *n == MAX_REPEATS {
            let more = total - MAX_REPEATS;
            out.push(d.note(format!(
                "{more} more error{} with this message {} not shown",
                if more == 1 { "" } else { "s" },
                if more == 1 { "is" } else { "are" }
            )));
        }
    }
    out
}

/// Lowers one function; `None` when errors were reported. Also returns
/// whether the returned value is weak.
fn lower_function(
    sh: &mut Shared<'_>,
    def: &FunctionDef,
    args: &[ArgType],
    weak: &[bool],
    resolver: &dyn Resolver,
    is_entry: bool,
    name: &str,
) -> Option<(Function, bool)> {
    let opts = sh.opts;
    let before = sh.diags.len();
    let globals = scope::Globals::of(def, resolver);
    let resolver = &globals;
    // `f(x, out=y)` as the store into `y`; keyword arguments and
    // defaults: positional calls only
    let stored = out_args::rewrite(def, resolver);
    let def = stored.as_ref().unwrap_or(def);
    let positional = keywords::positional(def, resolver, &mut sh.diags)?;
    let def = &positional;
    // `None` arguments: no parameter, their `is None` tests decided
    let dropped = none_args::drop_none_params(def, args, weak, &mut sh.diags).ok()?;
    let (def, args, weak) = match &dropped {
        Some(d) => (&d.def, &d.args[..], &d.weak[..]),
        None => (def, args, weak),
    };
    // dict arguments: one parameter per leaf, the body rewritten
    let flat =
        if args.len() == def.params.len() && args.iter().any(|a| matches!(a, ArgType::Dict(_))) {
            Some(dicts::flatten(def, args, weak, &mut sh.diags)?)
        } else {
            None
        };
    let (def, args, weak) = match &flat {
        Some(f) => (&f.def, &f.args[..], &f.weak[..]),
        None => (def, args, weak),
    };
    let mut retype = std::collections::HashMap::new();
    // (names read before their assignment in a loop: `forward_reads`)
    let mut forward: Vec<(String, crate::ir::ElemTy, bool, Span)> = vec![];
    let mut pass = 0;
    loop {
        pass += 1;
        let gen = sh.widen_gen;
        let frozen = sh.widen_frozen;
        sh.widen_frozen |= pass >= MAX_PASSES;
        let func = Function {
            name: name.to_string(),
            params: vec![],
            vars: vec![],
            body: vec![],
            ret: Type::Void,
            span: def.span,
        };
        let mut l = Lowerer {
            is_entry,
            labels_ok: is_entry,
            arg_weak: weak.to_vec(),
            retype: std::mem::take(&mut retype),
            dicts: flat.as_ref().map(|f| f.dicts.clone()).unwrap_or_default(),
            ..Lowerer::new(&mut *sh, resolver, opts, func, Scope::default())
        };
        if args.len() != def.params.len() {
            let d = Diagnostic::error(format!(
                "`{}` takes {} argument{} but {} were given",
                def.name,
                def.params.len(),
                if def.params.len() == 1 { "" } else { "s" },
                args.len()
            ))
            .at(def.span, "defined here");
            l.error(d);
            return None;
        }
        for (k, (p, a)) in def.params.iter().zip(args).enumerate() {
            let same = (is_entry.then_some(&opts.same_arrays[..]))
                .and_then(|same| same.iter().find(|s| s.0 == k));
            if let Some(b) = same.and_then(|&(_, first)| l.scope.get(&def.params[first].name)) {
                // the array of an earlier parameter, passed again
                l.scope.bind(&p.name, b);
                l.scope.params.push(p.name.clone());
                continue;
            }
            let w = l.arg_weak.get(k).copied().unwrap_or(false);
            l.bind_param(p, a, w);
        }
        let body = lists::global_tuples(l.resolver, &l.scope.params, &def.body);
        let body = body.as_deref().unwrap_or(&def.body);
        let body = l.local_tuples(body).unwrap_or_else(|| body.to_vec());
        let body = body.as_slice();
        l.check_list_operators(body);
        // (before the analyses: the hidden names are names as any other)
        let source = l.hoist_stored_arrays(body);
        l.plan_aliases(&source);
        l.once = assign::AssignedOnce::of(&source);
        let groups = l.aliased_params();
        l.once.share_stores(&groups);
        let mut body: Block = l.copy_assigned_params(&source);
        for (name, ty, weak, span) in &forward {
            let var = l.new_var(name, Type::Scalar(*ty), VarKind::Local, *span);
            l.user_locals.insert(var);
            l.scope.bind(name, scope::Binding { var, weak: *weak });
        }
        let lowered = l.lower_block(&source);
        body.extend(l.entry_checks());
        body.extend(lowered);
        l.guard_unbound_reads(&mut body);
        l.check_device_returns(&body);
        l.func.body = body;
        l.drop_unread_loop_lasts();
        let ret_weak = l.finish_returns();
        let widened = l.sh.widen_gen != gen;
        l.sh.widen_frozen = frozen;
        // Accumulators typed by use, and locals re-bound to a wider
        // integer type: lower once more with their types.
        let found = if l.retype.is_empty() {
            l.typed_by_use()
        } else {
            Default::default()
        };
        for (first, d) in std::mem::take(&mut l.int_rebinds) {
            if !found.contains_key(&first) {
                l.error(d);
            }
        }
        // Names read before their assignment further down a loop: the
        // type the assignment gave them, declared from the start next time
        let mut declare = vec![];
        for (name, span) in std::mem::take(&mut l.forward_reads) {
            let bound = l.scope.get(&name).filter(|_| pass < MAX_PASSES);
            let var = bound.map(|b| (l.func.var(b.var), b.weak));
            match var {
                Some((v, weak)) if v.kind == VarKind::Local && !v.ty.is_array() => {
                    let ty = v.ty.elem().unwrap_or(crate::ir::ElemTy::I64);
                    if !declare.iter().any(|d: &(String, _, _, _)| d.0 == name) {
                        declare.push((name, ty, weak, span));
                    }
                }
                _ => l.report_not_defined(&name, span),
            }
        }
        // (errors with accumulators typed by use: lowered once more, as
        // an error may come of the first pass's type, a weak float64 `s`
        // whose `np.sqrt(s)` cannot be stored into a float32 array, and
        // the second pass reports what remains)
        if l.sh.diags[before..].iter().any(|d| d.is_error()) && found.is_empty() {
            return None;
        }
        if found.is_empty() && !widened && declare.is_empty() {
            return Some((l.func, ret_weak));
        }
        forward.extend(declare);
        let kept = std::mem::take(&mut l.retype);
        drop(l);
        sh.diags.truncate(before);
        // (a Python int's accumulator typed by use holds the NumPy
        // integer it is updated with, not the wider join that a store of
        // that integer into parpy's Python int asked for: `s = 0; s +=
        // x_u32[j]` with 32-bit Python ints is a uint32, not an int64)
        for first in found.keys() {
            sh.widened.remove(first);
        }
        retype = if found.is_empty() { kept } else { found };
    }
}

/// Lowering passes of one function before a re-binding that still needs
/// a wider type is reported (each pass widens at least one local, along
/// chains like `a = b` with `b` widened the pass before).
const MAX_PASSES: u32 = 8;

/// Identity of a jit function definition (for the helper table and the
/// recursion check; never reaches generated code).
fn def_id(def: &Arc<FunctionDef>) -> usize {
    Arc::as_ptr(def) as usize
}

/// Pushes `def` on the stack of jit functions being lowered, or reports the
/// recursion (or the runaway nesting) and returns false.
fn enter_helper(sh: &mut Shared<'_>, def: &Arc<FunctionDef>, call_span: Span) -> bool {
    let id = def_id(def);
    if sh.stack.contains(&id) {
        sh.error(
            Diagnostic::error(format!(
                "recursive call of `{}`: recursion is not supported",
                def.name
            ))
            .at(call_span, "recursive call")
            .help("rewrite the recursion as a loop"),
        );
        return false;
    }
    // A resolver that hands out a new definition at each call (so the check
    // above cannot see the cycle) still ends here instead of overflowing the
    // stack.
    if sh.stack.len() >= MAX_CALL_DEPTH {
        sh.error(
            Diagnostic::error(format!(
                "calls nested more than {MAX_CALL_DEPTH} deep at `{}`: is it recursive?",
                def.name
            ))
            .at(call_span, "call nested too deeply")
            .help("recursion is not supported; rewrite it as a loop"),
        );
        return false;
    }
    sh.stack.push(id);
    true
}

/// How deeply helper calls may nest while lowering.
const MAX_CALL_DEPTH: usize = 64;

/// Looks up or lowers the specialization of helper `def` for `args`.
fn helper_for(
    sh: &mut Shared<'_>,
    def: &Arc<FunctionDef>,
    globals: &Arc<dyn Resolver>,
    args: &[ArgType],
    weak: &[bool],
    call_span: Span,
) -> Option<FuncId> {
    let id = def_id(def);
    if !enter_helper(sh, def, call_span) {
        return None;
    }
    if let Some(i) = sh
        .helpers
        .iter()
        .position(|h| h.def_ptr == id && h.args == args && h.weak == weak)
    {
        sh.stack.pop();
        return Some(FuncId(i as u32));
    }
    // The specialization gets its index and name once lowered, after the
    // helpers it calls: `Program.helpers` is in dependency order (callees
    // first), so every backend prints them in that order without prototypes.
    let f = lower_function(sh, def, args, weak, globals.as_ref(), false, &def.name);
    sh.stack.pop();
    let (mut f, ret_weak) = f?;
    let same_name = sh.helpers.iter().filter(|h| h.base == def.name).count();
    if same_name > 0 {
        f.name = format!("{}_{}", def.name, same_name);
    }
    sh.helpers.push(HelperEntry {
        def_ptr: id,
        base: def.name.clone(),
        args: args.to_vec(),
        weak: weak.to_vec(),
        func: f,
        ret_weak,
    });
    Some(FuncId(sh.helpers.len() as u32 - 1))
}
