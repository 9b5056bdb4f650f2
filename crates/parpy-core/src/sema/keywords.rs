//! Keyword arguments and parameter defaults.
//!
//! Before a function body is lowered, [`positional`] rewrites every call
//! that names an argument (`np.round(v, decimals=2)`, `h(a, eps=1e-6)`,
//! `x[i, :].var(ddof=1)`) or leaves out a helper's parameter that has a
//! default into a call with positional arguments only, in the order of the
//! callee's Python signature; a parameter left out before one given by name
//! gets its default (`np.var(s, ddof=1)` is `np.var(s, None, None, None,
//! 1)`). The rest of sema sees positional calls only, but for the NumPy
//! allocations, whose keywords `local_arrays` reads (`np.zeros(3,
//! dtype=np.int32)`).
//!
//! Builtins and NumPy methods take their Python signatures from one table
//! ([`builtin_signature`], [`method_signature`]); [`Lowerer::compact`] then
//! checks every argument of a parameter parpy supports only at its default
//! (`out=None`, `dtype=None`; `axis` and `keepdims` go to the reduction) and hands a builtin the
//! arguments it uses. A jit helper takes its own parameter names; a default
//! it fills in must be a literal, since the expression is read where the
//! helper is called.

use std::sync::Arc;

use crate::diag::{Diagnostic, Span};
use crate::resolve::{Builtin, Resolved, Resolver};
use crate::syntax::ast::{self, Expr, ExprKind, FunctionDef};

use super::Lowerer;

/// A parameter's default, as a literal.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Dflt {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'static str),
}

impl Dflt {
    fn expr(self, span: Span) -> Expr {
        let kind = match self {
            Dflt::None => ExprKind::None,
            Dflt::Bool(b) => ExprKind::Bool(b),
            Dflt::Int(v) => ExprKind::Int(v),
            Dflt::Float(v) => ExprKind::Float(v),
            Dflt::Str(s) => ExprKind::Str(s.to_string()),
        };
        Expr { kind, span }
    }

    /// Whether `e` is this default written out (`False` and `0` are one
    /// value in Python).
    fn matches(self, e: &Expr) -> bool {
        match (self, &e.kind) {
            (Dflt::None, ExprKind::None) => true,
            (Dflt::Bool(b), ExprKind::Bool(c)) => b == *c,
            (Dflt::Bool(b), ExprKind::Int(v)) => i64::from(b) == *v,
            (Dflt::Int(v), ExprKind::Int(w)) => v == *w,
            (Dflt::Int(v), ExprKind::Bool(c)) => v == i64::from(*c),
            (Dflt::Float(v), ExprKind::Float(w)) => v == *w,
            (Dflt::Str(s), ExprKind::Str(t)) => s == t,
            _ => false,
        }
    }

    fn text(self) -> String {
        match self {
            Dflt::None => "None".to_string(),
            Dflt::Bool(b) => if b { "True" } else { "False" }.to_string(),
            Dflt::Int(v) => v.to_string(),
            Dflt::Float(v) => format!("{v:?}"),
            Dflt::Str(s) => format!("'{s}'"),
        }
    }
}

/// How a builtin's parameter is passed and what parpy does with it.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum How {
    /// Required, by position only (`np.sqrt(x, /)`).
    PosOnly,
    /// Required, by position or by name.
    Req,
    /// Optional; the builtin uses its value (`decimals`, `ddof`, `start`).
    Opt(Dflt),
    /// Optional; parpy supports its default value only (`out=None`).
    Fixed(Dflt),
    /// Optional; read by the reduction (`axis`, `keepdims`): `compact`
    /// hands it over through `Lowerer::reduction_args` unless it is the
    /// default.
    Reduction(Dflt),
    /// Any number of positional arguments (a ufunc's operands); the
    /// parameters after it are keyword-only.
    Rest,
    /// Keyword-only after `Rest`: one of these values, none of which
    /// changes what parpy computes (`np.einsum`'s `optimize=`).
    Choice(&'static [Dflt]),
}

/// Argument `k` of a call `keywords` has bound, when it was passed as
/// something other than `None` (a parameter whose default is `None` and
/// that the builtin reads itself).
pub(super) fn given(args: &[Expr], k: usize) -> Option<&Expr> {
    args.get(k).filter(|a| !matches!(a.kind, ExprKind::None))
}

/// One parameter of a Python signature.
pub(super) type Param = (&'static str, How);

const AXIS: Param = ("axis", How::Reduction(Dflt::None));
const DTYPE: Param = ("dtype", How::Fixed(Dflt::None));
const OUT: Param = ("out", How::Fixed(Dflt::None));
const KEEPDIMS: Param = ("keepdims", How::Reduction(Dflt::Bool(false)));
const DDOF: Param = ("ddof", How::Opt(Dflt::Int(0)));
/// (`calls.rs` `reduction_with_initial`)
const INITIAL: Param = ("initial", How::Opt(Dflt::None));
/// (`calls.rs` `reduction_with_initial`: a mask of the elements reduced)
const WHERE: Param = ("where", How::Opt(Dflt::Bool(true)));
const OFFSET: Param = ("offset", How::Opt(Dflt::Int(0)));
const AXIS1: Param = ("axis1", How::Opt(Dflt::Int(0)));
const AXIS2: Param = ("axis2", How::Opt(Dflt::Int(1)));

/// The Python signature of a builtin, as far as parpy reads it: `None` when
/// the builtin takes no keyword arguments (`range`, `min`, `np.where`).
pub(super) fn builtin_signature(b: Builtin) -> Option<&'static [Param]> {
    use crate::ir::{MathFn, ReduceOp};
    const A: Param = ("a", How::Req);
    const ARRAY: Param = ("array", How::Req);
    Some(match b {
        Builtin::Reduce(ReduceOp::Sum) => &[A, AXIS, DTYPE, OUT, KEEPDIMS, INITIAL, WHERE],
        Builtin::Reduce(ReduceOp::Prod) => &[A, AXIS, DTYPE, OUT, KEEPDIMS],
        Builtin::Reduce(ReduceOp::Max | ReduceOp::Min) => &[A, AXIS, OUT, KEEPDIMS, INITIAL, WHERE],
        Builtin::Any
        | Builtin::All
        | Builtin::ArgMax
        | Builtin::ArgMin
        | Builtin::NanArgMax
        | Builtin::NanArgMin => &[A, AXIS, OUT, KEEPDIMS],
        Builtin::Mean | Builtin::NanMean | Builtin::NanReduce(ReduceOp::Sum | ReduceOp::Prod) => {
            &[A, AXIS, DTYPE, OUT, KEEPDIMS]
        }
        Builtin::NanReduce(_) | Builtin::Ptp => &[A, AXIS, OUT, KEEPDIMS],
        Builtin::Average => &[
            A,
            AXIS,
            ("weights", How::Opt(Dflt::None)),
            ("returned", How::Fixed(Dflt::Bool(false))),
            KEEPDIMS,
        ],
        Builtin::Var | Builtin::Std | Builtin::NanVar | Builtin::NanStd => {
            &[A, AXIS, DTYPE, OUT, DDOF, KEEPDIMS]
        }
        Builtin::CountNonzero => &[A, AXIS, KEEPDIMS],
        Builtin::Norm => &[
            ("x", How::Req),
            ("ord", How::Opt(Dflt::None)),
            AXIS,
            KEEPDIMS,
        ],
        Builtin::Dot | Builtin::Outer => &[A, ("b", How::Req), OUT],
        Builtin::Einsum => &[
            ("operands", How::Rest),
            OUT,
            DTYPE,
            ("order", How::Fixed(Dflt::Str("K"))),
            ("casting", How::Fixed(Dflt::Str("safe"))),
            (
                "optimize",
                How::Choice(&[
                    Dflt::Bool(false),
                    Dflt::Bool(true),
                    Dflt::Str("greedy"),
                    Dflt::Str("optimal"),
                ]),
            ),
        ],
        Builtin::Inner => &[("a", How::PosOnly), ("b", How::PosOnly)],
        Builtin::Flip(None) => &[("m", How::Req), ("axis", How::Opt(Dflt::None))],
        Builtin::Flip(Some(_)) => &[("m", How::Req)],
        Builtin::Diagonal(false) => &[A, OFFSET, AXIS1, AXIS2],
        Builtin::Diagonal(true) => &[("v", How::Req), ("k", How::Opt(Dflt::Int(0)))],
        Builtin::Trace => &[A, OFFSET, AXIS1, AXIS2, DTYPE, OUT],
        Builtin::Median => &[
            A,
            ("axis", How::Fixed(Dflt::None)),
            OUT,
            ("overwrite_input", How::Fixed(Dflt::Bool(false))),
            ("keepdims", How::Fixed(Dflt::Bool(false))),
        ],
        Builtin::Quantile(_) => &[
            A,
            ("q", How::Req),
            ("axis", How::Fixed(Dflt::None)),
            OUT,
            ("overwrite_input", How::Fixed(Dflt::Bool(false))),
            ("method", How::Fixed(Dflt::Str("linear"))),
            ("keepdims", How::Fixed(Dflt::Bool(false))),
            ("weights", How::Opt(Dflt::None)),
        ],
        Builtin::Sort(_) => &[
            A,
            ("axis", How::Opt(Dflt::Int(-1))),
            ("kind", How::Opt(Dflt::None)),
            ("order", How::Opt(Dflt::None)),
            ("stable", How::Opt(Dflt::None)),
        ],
        Builtin::Convolve => &[
            ("a", How::Req),
            ("v", How::Req),
            ("mode", How::Opt(Dflt::Str("full"))),
        ],
        Builtin::SearchSorted => &[
            A,
            ("v", How::Req),
            ("side", How::Opt(Dflt::Str("left"))),
            ("sorter", How::Fixed(Dflt::None)),
        ],
        Builtin::Roll => &[A, ("shift", How::Req), ("axis", How::Opt(Dflt::None))],
        // (NumPy's `**kwargs`, those its modes read, in `pad.rs`' order;
        // `pad.rs` `UNSET`: left out, so a `None` passed is told apart)
        Builtin::Pad => &[
            ARRAY,
            ("pad_width", How::Req),
            ("mode", How::Opt(Dflt::Str("constant"))),
            ("stat_length", How::Opt(Dflt::Str(super::pad::UNSET))),
            ("constant_values", How::Opt(Dflt::Str(super::pad::UNSET))),
            ("end_values", How::Opt(Dflt::Str(super::pad::UNSET))),
            ("reflect_type", How::Opt(Dflt::Str(super::pad::UNSET))),
        ],
        Builtin::Cross => &[
            A,
            ("b", How::Req),
            ("axisa", How::Fixed(Dflt::Int(-1))),
            ("axisb", How::Fixed(Dflt::Int(-1))),
            ("axisc", How::Fixed(Dflt::Int(-1))),
            ("axis", How::Fixed(Dflt::None)),
        ],
        Builtin::Diff => &[
            A,
            ("n", How::Opt(Dflt::Int(1))),
            ("axis", How::Opt(Dflt::Int(-1))),
            ("prepend", How::Fixed(Dflt::None)),
            ("append", How::Fixed(Dflt::None)),
        ],
        Builtin::NanToNum => &[
            ("x", How::Req),
            ("copy", How::Fixed(Dflt::Bool(true))),
            ("nan", How::Opt(Dflt::Float(0.0))),
            ("posinf", How::Opt(Dflt::None)),
            ("neginf", How::Opt(Dflt::None)),
        ],
        // (`start` keyword-only in Python)
        Builtin::MathProd => &[("iterable", How::Req), ("start", How::Opt(Dflt::Int(1)))],
        Builtin::MathDist => &[("p", How::Req), ("q", How::Req)],
        Builtin::MathFsum => &[("seq", How::PosOnly)],
        // (`assume_unique` only lets NumPy skip its own `np.unique`: read
        // and dropped by `membership.rs` `isin`; `kind` picks NumPy's
        // algorithm, parpy's is the search)
        Builtin::IsIn => &[
            ("element", How::Req),
            ("test_elements", How::Req),
            ("assume_unique", How::Opt(Dflt::Bool(false))),
            ("invert", How::Opt(Dflt::Bool(false))),
            ("kind", How::Fixed(Dflt::None)),
        ],
        // (keyword-only in Python)
        Builtin::MathIsClose => &[
            ("a", How::Req),
            ("b", How::Req),
            ("rel_tol", How::Opt(Dflt::Float(1e-9))),
            ("abs_tol", How::Opt(Dflt::Float(0.0))),
        ],
        Builtin::IsClose | Builtin::AllClose => &[
            A,
            ("b", How::Req),
            ("rtol", How::Opt(Dflt::Float(1e-5))),
            ("atol", How::Opt(Dflt::Float(1e-8))),
            ("equal_nan", How::Opt(Dflt::Bool(false))),
        ],
        Builtin::ArrayEqual(false) => &[
            ("a1", How::Req),
            ("a2", How::Req),
            ("equal_nan", How::Opt(Dflt::Bool(false))),
        ],
        Builtin::ArrayEqual(true) => &[("a1", How::Req), ("a2", How::Req)],
        Builtin::CopyTo => &[
            ("dst", How::Req),
            ("src", How::Req),
            ("casting", How::Fixed(Dflt::Str("same_kind"))),
            ("where", How::Fixed(Dflt::Bool(true))),
        ],
        Builtin::Cumulative(_) => &[A, ("axis", How::Opt(Dflt::None)), DTYPE, OUT],
        // (`compact` hands the reduction axis 0 when it is left out)
        Builtin::UfuncReduce(_) | Builtin::UfuncFold(_) => &[
            ARRAY,
            ("axis", How::Reduction(Dflt::Int(0))),
            DTYPE,
            OUT,
            KEEPDIMS,
            ("initial", How::Fixed(Dflt::None)),
            ("where", How::Fixed(Dflt::Bool(true))),
        ],
        Builtin::Trapezoid => &[
            ("y", How::Req),
            ("x", How::Opt(Dflt::None)),
            ("dx", How::Opt(Dflt::Float(1.0))),
            ("axis", How::Opt(Dflt::Int(-1))),
        ],
        Builtin::Polyval => &[("p", How::Req), ("x", How::Req)],
        Builtin::Cov(false) => &[
            ("m", How::Req),
            ("y", How::Opt(Dflt::None)),
            ("rowvar", How::Opt(Dflt::Bool(true))),
            ("bias", How::Opt(Dflt::Bool(false))),
            ("ddof", How::Opt(Dflt::None)),
            ("fweights", How::Fixed(Dflt::None)),
            ("aweights", How::Fixed(Dflt::None)),
            DTYPE,
        ],
        Builtin::Cov(true) => &[
            ("x", How::Req),
            ("y", How::Opt(Dflt::None)),
            ("rowvar", How::Opt(Dflt::Bool(true))),
            DTYPE,
        ],
        Builtin::Histogram => &[
            ("a", How::Req),
            ("bins", How::Opt(Dflt::Int(10))),
            ("range", How::Opt(Dflt::None)),
            ("density", How::Opt(Dflt::None)),
            ("weights", How::Opt(Dflt::None)),
        ],
        Builtin::Digitize => &[
            ("x", How::Req),
            ("bins", How::Req),
            ("right", How::Opt(Dflt::Bool(false))),
        ],
        Builtin::Interp => &[
            ("x", How::Req),
            ("xp", How::Req),
            ("fp", How::Req),
            ("left", How::Opt(Dflt::None)),
            ("right", How::Opt(Dflt::None)),
            ("period", How::Opt(Dflt::None)),
        ],
        Builtin::UfuncAccumulate(_) | Builtin::UfuncFoldScan(_) => {
            &[ARRAY, ("axis", How::Opt(Dflt::Int(0))), DTYPE, OUT]
        }
        Builtin::Math(MathFn::Round) => &[A, ("decimals", How::Opt(Dflt::Int(0))), OUT],
        Builtin::MathToInt(MathFn::Round) => {
            &[("number", How::Req), ("ndigits", How::Opt(Dflt::None))]
        }
        Builtin::Clip => &[A, ("a_min", How::Req), ("a_max", How::Opt(Dflt::None)), OUT],
        Builtin::Select => &[
            ("condlist", How::Req),
            ("choicelist", How::Req),
            ("default", How::Opt(Dflt::Int(0))),
        ],
        // Python's math functions: their operands by position
        Builtin::PyMath(_)
        | Builtin::MathGcdLcm(_)
        | Builtin::MathAngle(_)
        | Builtin::MathUlp
        | Builtin::MathInt(_) => &[("x", How::Rest)],
        // ufuncs: operands by position, `out=None` by name
        Builtin::Math(_)
        | Builtin::Abs
        | Builtin::Ufunc(_)
        | Builtin::Maximum
        | Builtin::Minimum
        | Builtin::Fmax
        | Builtin::Fmin => &[("x", How::Rest), OUT],
        Builtin::Sum => &[
            ("iterable", How::PosOnly),
            ("start", How::Fixed(Dflt::Int(0))),
        ],
        Builtin::Enumerate => &[("iterable", How::Req), ("start", How::Opt(Dflt::Int(0)))],
        Builtin::Convert => &[("e", How::Req), ("ty", How::Req)],
        Builtin::Atomic(_) => &[("a", How::Req), ("index", How::Req), ("value", How::Req)],
        _ => return None,
    })
}

/// The builtin a NumPy array method is, called with the array first:
/// `x.sum(axis=0)` is `np.sum(x, axis=0)`, `x.dot(w)` is `np.dot(x, w)`.
pub(super) fn method_builtin(attr: &str) -> Option<Builtin> {
    use crate::ir::{MathFn, ReduceOp};
    Some(match attr {
        "sum" => Builtin::Reduce(ReduceOp::Sum),
        "prod" => Builtin::Reduce(ReduceOp::Prod),
        "max" => Builtin::Reduce(ReduceOp::Max),
        "min" => Builtin::Reduce(ReduceOp::Min),
        "mean" => Builtin::Mean,
        "var" => Builtin::Var,
        "std" => Builtin::Std,
        "any" => Builtin::Any,
        "all" => Builtin::All,
        "argmax" => Builtin::ArgMax,
        "argmin" => Builtin::ArgMin,
        "cumsum" => Builtin::Cumulative(ReduceOp::Sum),
        "cumprod" => Builtin::Cumulative(ReduceOp::Prod),
        "argsort" => Builtin::Sort(true),
        // (in place: `stmt.rs` rewrites the statement `s.sort(...)`)
        "sort" => Builtin::Sort(false),
        "searchsorted" => Builtin::SearchSorted,
        "dot" => Builtin::Dot,
        "clip" => Builtin::Clip,
        "round" => Builtin::Math(MathFn::Round),
        "diagonal" => Builtin::Diagonal(false),
        "trace" => Builtin::Trace,
        _ => return None,
    })
}

/// The signature of a NumPy array method (without `self`): its builtin's
/// less the array; `None` for methods parpy does not know.
pub(super) fn method_signature(attr: &str) -> Option<&'static [Param]> {
    match attr {
        "astype" => Some(&[
            ("dtype", How::Req),
            ("order", How::Fixed(Dflt::Str("K"))),
            ("casting", How::Fixed(Dflt::Str("unsafe"))),
            ("subok", How::Fixed(Dflt::Bool(true))),
            ("copy", How::Fixed(Dflt::Bool(true))),
        ]),
        // `x.item()`: the number, as a Python number
        "item" => Some(&[]),
        // `x.swapaxes(a, b)` (`permute.rs`)
        "swapaxes" => Some(&[("axis1", How::Req), ("axis2", How::Req)]),
        // `x.fill(v)`: a statement (`stmt.rs`)
        "fill" => Some(&[("value", How::Req)]),
        // `x.clip(min, max)`: the method names its bounds as NumPy 2.1's
        // `np.clip` also does
        "clip" => Some(&[
            ("min", How::Opt(Dflt::None)),
            ("max", How::Opt(Dflt::None)),
            OUT,
        ]),
        _ => builtin_signature(method_builtin(attr)?).map(|sig| &sig[1..]),
    }
}

/// The Python signature of a NumPy function that permutes axes
/// (`permute.rs` reads its arguments by position).
fn permute_signature(f: crate::resolve::PermuteFn) -> &'static [Param] {
    use crate::resolve::PermuteFn as P;
    match f {
        P::Transpose | P::PermuteDims => &[("a", How::Req), ("axes", How::Opt(Dflt::None))],
        P::SwapAxes => &[("a", How::Req), ("axis1", How::Req), ("axis2", How::Req)],
        P::MoveAxis => &[
            ("a", How::Req),
            ("source", How::Req),
            ("destination", How::Req),
        ],
        P::MatrixTranspose => &[("x", How::PosOnly)],
    }
}

/// `def`'s body with every call's arguments positional (see the module
/// doc); errors go to `diags` and give `None`.
pub(super) fn positional(
    def: &FunctionDef,
    resolver: &dyn Resolver,
    diags: &mut Vec<Diagnostic>,
) -> Option<FunctionDef> {
    let mut locals: Vec<String> = def.params.iter().map(|p| p.name.clone()).collect();
    super::assign::assigned_names(&def.body, &mut locals);
    let mut out = def.clone();
    let before = diags.len();
    ast::walk_stmts_mut(&mut out.body, &mut |e| {
        let ExprKind::Call { func, args, .. } = &mut e.kind else {
            return;
        };
        spread_literals(args);
        // (`f(*v)` of an array: sema spreads it once it knows the length,
        // and binds the call then)
        if args.iter().any(|a| matches!(a.kind, ExprKind::Starred(_))) {
            return;
        }
        let local = func
            .dotted_path()
            .is_some_and(|p| locals.iter().any(|l| l == p[0]));
        bind_call(e, local, resolver, diags);
    });
    (diags.len() == before).then_some(out)
}

/// `f(*(a, b), c)` as `f(a, b, c)`: a starred tuple or list literal's
/// items in its place.
fn spread_literals(args: &mut Vec<Expr>) {
    let literal = |a: &Expr| match &a.kind {
        ExprKind::Starred(v) => matches!(v.kind, ExprKind::Tuple(_)),
        _ => false,
    };
    if !args.iter().any(literal) {
        return;
    }
    let mut out = Vec::with_capacity(args.len());
    for a in std::mem::take(args) {
        match a.kind {
            ExprKind::Starred(v) if matches!(v.kind, ExprKind::Tuple(_)) => {
                if let ExprKind::Tuple(items) = v.kind {
                    out.extend(items);
                }
            }
            kind => out.push(Expr { kind, span: a.span }),
        }
    }
    *args = out;
}

/// The call `e` with its arguments positional (see the module doc);
/// `local`: its function is a name the function assigns. Errors go to
/// `diags`.
pub(super) fn bind_call(
    e: &mut Expr,
    local: bool,
    resolver: &dyn Resolver,
    diags: &mut Vec<Diagnostic>,
) {
    let ExprKind::Call {
        func,
        args,
        keywords,
    } = &mut e.kind
    else {
        return;
    };
    let callee = Callee::of(func, local, resolver);
    if let Callee::Sig(sig, true) = callee {
        tuples_as_lists(sig, args, keywords);
    }
    if keywords.is_empty() && !matches!(callee, Callee::Helper(_))
        || matches!(callee, Callee::Allocates | Callee::Unknown)
    {
        return;
    }
    // (Python's `max(a, b, key=abs)`: the key stays for `calls.rs`
    // `keyed_extreme`; `sorted(t, key=f, reverse=True)`'s for
    // `sorted.rs`)
    if let Callee::Keyed(names) = &callee {
        if keywords.iter().all(|k| names.contains(&k.name.as_str())) {
            return;
        }
    }
    let kws = std::mem::take(keywords);
    // (a method of a value that is no name, `x[i, :].min`: `.min`)
    let name = func
        .dotted_path()
        .map(|p| p.join("."))
        .or_else(|| match &func.kind {
            ExprKind::Attr { attr, .. } => Some(format!(".{attr}")),
            _ => None,
        })
        .unwrap_or_else(|| "this function".to_string());
    let bound = match callee {
        Callee::Helper(def) => bind_helper(&def, std::mem::take(args), kws, e.span, diags),
        Callee::Sig(sig, _) => bind(&name, sig, std::mem::take(args), kws, e.span, diags),
        Callee::Allocates | Callee::Unknown | Callee::Other | Callee::Keyed(_) => {
            let k = &kws[0];
            diags.push(
                Diagnostic::error(format!(
                    "`{name}` takes no keyword arguments in parpy functions"
                ))
                .at(k.span, format!("keyword argument `{}`", k.name))
                .help("pass the arguments by position"),
            );
            None
        }
    };
    if let (ExprKind::Call { args, .. }, Some(b)) = (&mut e.kind, bound) {
        *args = b;
    }
}

/// The parameters of NumPy's functions that take an array-like, which a
/// tuple literal is as a list literal is (`np.max((a, 0.5))`).
const ARRAY_LIKE: [&str; 13] = [
    "a",
    "array",
    "x",
    "b",
    "m",
    "v",
    "y",
    "xp",
    "fp",
    "p",
    "bins",
    "element",
    "test_elements",
];

/// The tuple literals (of no tuples) that a call of a NumPy function
/// with signature `sig` passes for an array-like parameter: list
/// literals (`Expr::tuple_list`), as NumPy reads a tuple as it reads a
/// list.
fn tuples_as_lists(sig: &[Param], args: &mut [Expr], keywords: &mut [ast::Keyword]) {
    let rest = sig.iter().position(|(_, h)| *h == How::Rest);
    let to_list = |e: &mut Expr| {
        if let ExprKind::Tuple(items) = &e.kind {
            if !items.iter().any(|i| matches!(i.kind, ExprKind::Tuple(_))) {
                *e = Expr::tuple_list(items.clone(), e.span);
            }
        }
    };
    for (k, a) in args.iter_mut().enumerate() {
        let param = sig.get(rest.map_or(k, |r| k.min(r)));
        if param.is_some_and(|(n, _)| ARRAY_LIKE.contains(n)) {
            to_list(a);
        }
    }
    for kw in keywords.iter_mut() {
        let param = sig
            .iter()
            .take(rest.unwrap_or(sig.len()))
            .find(|(n, _)| *n == kw.name);
        if param.is_some_and(|(n, _)| ARRAY_LIKE.contains(n)) {
            to_list(&mut kw.value);
        }
    }
}

/// What a call calls, as far as its arguments are concerned.
enum Callee {
    Helper(Arc<FunctionDef>),
    /// A builtin's signature; true for NumPy's functions and methods,
    /// whose array-like parameters take tuple literals as lists
    Sig(&'static [Param], bool),
    /// `np.zeros(3, dtype=np.int32)`: `sema::local_arrays` reads its
    /// keywords
    Allocates,
    /// Python's `max` / `min`, whose `key=` `calls.rs` reads, and
    /// `sorted`, whose `key=` and `reverse=` `sorted.rs` reads: the
    /// keywords left in place
    Keyed(&'static [&'static str]),
    /// A name jit code cannot call, or none: the call's own error says so
    /// (`np.unique(x, axis=0)` is "cannot call `np.unique`", not an error
    /// about its keyword)
    Unknown,
    Other,
}

impl Callee {
    fn of(func: &Expr, local: bool, resolver: &dyn Resolver) -> Callee {
        match func.dotted_path() {
            Some(p) if !local => match resolver.resolve(&p) {
                Resolved::Function { def, .. } => Callee::Helper(def),
                Resolved::Builtin(Builtin::Max | Builtin::Min) => {
                    Callee::Keyed(&["key", "default"])
                }
                Resolved::Builtin(Builtin::Sorted) => Callee::Keyed(&["key", "reverse"]),
                Resolved::Builtin(b) => {
                    builtin_signature(b).map_or(Callee::Other, |s| Callee::Sig(s, false))
                }
                Resolved::NumPy(b) => {
                    builtin_signature(b).map_or(Callee::Other, |s| Callee::Sig(s, true))
                }
                Resolved::Allocates(_) => Callee::Allocates,
                Resolved::Permute(f) => Callee::Sig(permute_signature(f), false),
                Resolved::Unsupported(_) | Resolved::NotFound => Callee::Unknown,
                _ => Callee::Other,
            },
            // a method of a value: `x.sum(...)`, `x[i, :].var(...)`
            _ => match &func.kind {
                ExprKind::Attr { attr, .. } => {
                    method_signature(attr).map_or(Callee::Other, |s| Callee::Sig(s, true))
                }
                _ => Callee::Other,
            },
        }
    }
}

/// The positional arguments of a call of `name` with signature `sig`.
fn bind(
    name: &str,
    sig: &'static [Param],
    args: Vec<Expr>,
    kws: Vec<ast::Keyword>,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<Expr>> {
    if let Some(rest) = sig.iter().position(|(_, h)| *h == How::Rest) {
        // operands by position; the keyword-only parameters after them
        // are checked (`compact` would not see them) and dropped
        let mut ok = true;
        for k in &kws {
            match sig[rest + 1..].iter().find(|(n, _)| *n == k.name) {
                Some(&(_, How::Fixed(d))) if d.matches(&k.value) => {}
                Some(&(_, How::Choice(ds))) if ds.iter().any(|d| d.matches(&k.value)) => {}
                Some(&(_, How::Choice(ds))) => {
                    ok = false;
                    let values: Vec<String> = ds.iter().map(|d| d.text()).collect();
                    diags.push(
                        Diagnostic::error(format!(
                            "`{name}` takes `{}=` as one of {} in parpy functions",
                            k.name,
                            values.join(", ")
                        ))
                        .at(k.value.span, "not one of these literals")
                        .note("the choice does not change the result parpy computes"),
                    );
                }
                Some(&(_, How::Fixed(d))) => {
                    ok = false;
                    diags.push(only_default(name, k.name.as_str(), d, k.value.span));
                }
                _ => {
                    ok = false;
                    diags.push(
                        Diagnostic::error(format!(
                            "`{name}` takes no keyword argument `{}`: its operands go by position",
                            k.name
                        ))
                        .at(k.span, format!("keyword argument `{}`", k.name))
                        .help("pass the arguments by position"),
                    );
                }
            }
        }
        return ok.then_some(args);
    }
    let names: Vec<&str> = sig.iter().map(|(n, _)| *n).collect();
    let defaults: Vec<Option<Expr>> = sig
        .iter()
        .map(|(_, h)| match h {
            How::Opt(d) | How::Fixed(d) | How::Reduction(d) => Some(d.expr(span)),
            _ => None,
        })
        .collect();
    let by_name: Vec<bool> = sig.iter().map(|(_, h)| *h != How::PosOnly).collect();
    fill(
        name, &names, &by_name, &defaults, false, args, kws, span, diags,
    )
}

/// The positional arguments of a call of the jit helper `def`.
fn bind_helper(
    def: &FunctionDef,
    args: Vec<Expr>,
    kws: Vec<ast::Keyword>,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<Expr>> {
    let positional = def.params.iter().filter(|p| !p.kw_only).count();
    if positional < def.params.len() && args.len() > positional {
        let n = positional;
        diags.push(
            Diagnostic::error(format!(
                "`{}` takes {n} positional argument{} but {} were given",
                def.name,
                if n == 1 { "" } else { "s" },
                args.len()
            ))
            .at(span, "in this call")
            .help(format!(
                "the parameters after `*` go by name: `{}=...`",
                def.params[n].name
            )),
        );
        return None;
    }
    if args.len() >= def.params.len() && kws.is_empty() {
        // nothing left out (too many is the arity error sema reports)
        return Some(args);
    }
    let names: Vec<&str> = def.params.iter().map(|p| p.name.as_str()).collect();
    let mut defaults = vec![];
    for p in &def.params {
        defaults.push(match &p.default {
            Some(k) if is_literal(&k.value) => Some(k.value.clone()),
            Some(k) => {
                // read where the helper is called, a non-literal could name
                // something else there: it must be passed
                let given = args.len() > defaults.len() || kws.iter().any(|w| w.name == p.name);
                if !given {
                    diags.push(
                        Diagnostic::error(format!(
                            "the default value of `{}` in `{}` is not a literal, so a call from jit code must pass it",
                            p.name, def.name
                        ))
                        .at(span, format!("`{}` left out here", p.name))
                        .at(k.value.span, "this default")
                        .help(format!("pass `{}=...` in the call, or make the default a number, a bool or None", p.name)),
                    );
                    return None;
                }
                None
            }
            None => None,
        });
    }
    let by_name: Vec<bool> = def.params.iter().map(|p| !p.pos_only).collect();
    fill(
        &def.name, &names, &by_name, &defaults, true, args, kws, span, diags,
    )
}

/// Python's binding of positional and keyword arguments to `names`
/// (`by_name[k]`: the parameter may be named); parameters left out take
/// `defaults[k]`, up to the last one given unless `all`. Errors as Python
/// words them.
#[allow(clippy::too_many_arguments)]
fn fill(
    func: &str,
    names: &[&str],
    by_name: &[bool],
    defaults: &[Option<Expr>],
    all: bool,
    args: Vec<Expr>,
    kws: Vec<ast::Keyword>,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<Expr>> {
    if args.len() > names.len() {
        // sema reports the arity with the builtin's own wording
        if let Some(k) = kws.first() {
            diags.push(unknown_keyword_in(func, k, names));
            return None;
        }
        return Some(args);
    }
    let mut slots: Vec<Option<Expr>> = args.into_iter().map(Some).collect();
    slots.resize(names.len(), None);
    let mut ok = true;
    for k in kws {
        let Some(i) = names.iter().position(|n| *n == k.name) else {
            diags.push(unknown_keyword_in(func, &k, names));
            ok = false;
            continue;
        };
        if !by_name[i] {
            diags.push(
                Diagnostic::error(format!("`{func}` takes `{}` by position only", k.name))
                    .at(k.span, "given by name")
                    .help("pass it by position"),
            );
            ok = false;
        } else if slots[i].is_some() {
            diags.push(
                Diagnostic::error(format!(
                    "`{func}` got multiple values for argument `{}`",
                    k.name
                ))
                .at(k.span, "given again here"),
            );
            ok = false;
        } else {
            slots[i] = Some(k.value);
        }
    }
    if !ok {
        return None;
    }
    let last = slots.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
    let mut out = vec![];
    for (i, s) in slots.into_iter().enumerate() {
        match s.or_else(|| defaults[i].clone()) {
            Some(e) if all || i < last => out.push(e),
            Some(_) => {}
            None => {
                diags.push(
                    Diagnostic::error(format!("`{func}` is missing the argument `{}`", names[i]))
                        .at(span, "in this call"),
                );
                return None;
            }
        }
    }
    Some(out)
}

/// Numbers, bools, strings and None, with a sign.
fn is_literal(e: &Expr) -> bool {
    e.is_number_literal() || matches!(e.kind, ExprKind::Str(_) | ExprKind::None)
}

fn unknown_keyword_in(func: &str, k: &ast::Keyword, names: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!(
        "`{func}` has no parameter `{}` that parpy functions support",
        k.name
    ))
    .at(k.span, "unknown keyword argument");
    let near = names
        .iter()
        .map(|n| (super::scope::edit_distance(n, &k.name), *n))
        .filter(|(d, n)| *d <= 2 && *d < n.len())
        .min();
    if let Some((_, n)) = near {
        return d.help(format!("did you mean `{n}`?"));
    }
    if names.is_empty() {
        d.help("pass the arguments by position")
    } else {
        let ps: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        d.help(format!("its parameters are {}", ps.join(", ")))
    }
}

fn only_default(func: &str, param: &str, d: Dflt, span: Span) -> Diagnostic {
    Diagnostic::error(format!(
        "`{func}` supports only `{param}={}` in parpy functions",
        d.text()
    ))
    .at(span, "another value")
}

impl Lowerer<'_, '_> {
    /// The arguments of a builtin (or method, without its value) that the
    /// builtin uses: each argument of a parameter parpy supports only at
    /// its default is checked and dropped, and optional parameters at their
    /// default after the last argument that is not are dropped too. A
    /// reduction's `axis` and `keepdims` other than their defaults go to
    /// `self.reduction_args`. Builtins without a signature take `args` as
    /// they are.
    pub(super) fn compact(
        &mut self,
        name: &str,
        sig: Option<&'static [Param]>,
        args: &[Expr],
    ) -> Option<Vec<Expr>> {
        let Some(sig) = sig.filter(|s| !s.iter().any(|(_, h)| *h == How::Rest)) else {
            return Some(args.to_vec());
        };
        if args.len() > sig.len() {
            // the builtin's own arity error
            return Some(args.to_vec());
        }
        let mut used: Vec<(Expr, Option<Dflt>)> = vec![];
        let mut ok = true;
        // a reduction's axis with a default other than `None` (a ufunc's
        // `reduce`: 0) is handed over also when it is left out
        let span = args.first().map_or(Span::default(), |a| a.span);
        let left_out = sig[args.len()..]
            .iter()
            .filter_map(|(param, how)| match how {
                How::Reduction(d @ Dflt::Int(_)) => Some((*param, d.expr(span))),
                _ => None,
            });
        let left_out: Vec<_> = left_out.collect();
        for (a, (param, how)) in args.iter().zip(sig) {
            match how {
                How::Fixed(d) if d.matches(a) => {}
                How::Fixed(d) => {
                    self.error(only_default(name, param, *d, a.span));
                    ok = false;
                }
                How::Reduction(d) if d.matches(a) && !matches!(d, Dflt::Int(_)) => {}
                How::Reduction(_) => self.reduction_args.push((param, a.clone())),
                How::Opt(d) => used.push((a.clone(), Some(*d))),
                _ => used.push((a.clone(), None)),
            }
        }
        for (param, a) in left_out {
            self.reduction_args.push((param, a));
        }
        while used
            .last()
            .is_some_and(|(a, d)| d.is_some_and(|d| d.matches(a)))
        {
            used.pop();
        }
        ok.then(|| used.into_iter().map(|(a, _)| a).collect())
    }
}
