//! `np.histogram(a, bins, range, density, weights)` with a number of
//! equal bins known when compiling, as statements that store its result:
//! `h[i, :] = np.histogram(x[i, :], 8, (lo, hi))[0]` (or `[1]`, the
//! edges), `counts, edges = np.histogram(x[i, :])` (names or stores).
//! `stmt.rs` asks `histogram_store`, which writes NumPy's Python code
//! (`numpy/lib/_histograms_impl.py`) out as statements, lowered as the
//! user's own would be:
//!
//! * `_get_outer_edges`: the `range` pair (its ValueErrors where `first >
//!   last` or an edge is not finite) or `a.min()`, `a.max()` (its
//!   ValueError where they are not finite; `0, 1` of no elements), each
//!   edge moved by 0.5 where they are equal (an int edge then a float:
//!   the statements run in one branch of `if first == last` each);
//! * `bin_edges = np.linspace(first, last, n + 1, endpoint=True,
//!   dtype=bin_type)`, `bin_type` NumPy's `result_type(first, last, a)`
//!   (float64 for ints), and its ValueError where two edges are not
//!   increasing ("Too many bins");
//! * the count, one element after another: an element outside `[first,
//!   last]` (or NaN) is dropped, else `f = ((t - first) / norm_denom) * n`
//!   of `t` the element in `bin_type` and `norm_denom` NumPy's
//!   `_unsigned_subtract(last, first)` (in their result type, an int one
//!   made unsigned), its index `intp(f)`, `n` moved to `n - 1`, then one
//!   down where `t < bin_edges[index]` and one up where `t >=
//!   bin_edges[index + 1]` but for the last bin; the counts are int64,
//!   or of `weights` NumPy's `np.bincount(indices, weights)` (the float64
//!   sum of each bin) `.astype(weights.dtype)` (one block: at most 65536
//!   elements).
//!
//! The counts and edges are local arrays of the statement (inside a
//! parallel loop, each iteration has its own). A bool `a` counts as uint8
//! (NumPy converts it).

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy};
use crate::ops::UnOp;
use crate::resolve::Builtin;
use crate::syntax::ast;

use super::generators::{assign, for_in, if_, stmt};
use super::keywords::given;
use super::local_arrays::astype_to;
use super::types::promote;
use super::Lowerer;

/// NumPy's `BLOCK`: the elements counted at once.
const BLOCK: i64 = 65536;

/// What a statement stores of a call of `np.histogram`.
struct Outputs<'s> {
    counts: Option<&'s ast::Expr>,
    edges: Option<&'s ast::Expr>,
}

/// An edge of the range: its expression, and its type (weak: a Python
/// number).
#[derive(Clone)]
struct Edge {
    e: ast::Expr,
    ty: (ElemTy, bool),
}

/// `np.<name>` (a dtype).
fn np_attr(name: &str, span: Span) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Attr {
            value: Box::new(ast::Expr::name(crate::resolve::NUMPY_ROOT, span)),
            attr: name.to_string(),
        },
        span,
    }
}

/// `np.<ty>(e)`: `e` converted to `ty`, a NumPy scalar.
fn np_scalar(ty: ElemTy, e: ast::Expr, span: Span) -> ast::Expr {
    ast::Expr::call(np_attr(ty.numpy_name(), span), vec![e], span)
}

fn subscript(value: ast::Expr, index: ast::Expr, span: Span) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Subscript {
            value: Box::new(value),
            indices: vec![index],
        },
        span,
    }
}

fn and(values: Vec<ast::Expr>, span: Span) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::BoolOp {
            op: BinOp::And,
            values,
        },
        span,
    }
}

fn not(e: ast::Expr, span: Span) -> ast::Expr {
    ast::Expr {
        kind: ast::ExprKind::Unary {
            op: UnOp::Not,
            arg: Box::new(e),
        },
        span,
    }
}

/// `assert cond, message.format(values)`, raising ValueError.
fn value_error(cond: ast::Expr, message: &str, values: Vec<ast::Expr>, span: Span) -> ast::Stmt {
    stmt(
        ast::StmtKind::Assert {
            test: cond,
            msg: Some(message.to_string()),
            values,
            exception: "ValueError".to_string(),
            printf: false,
        },
        span,
    )
}

/// `name = np.zeros(len, dtype=ty)`.
fn zeros(name: &str, len: i64, ty: ElemTy, span: Span) -> ast::Stmt {
    let call = ast::Expr {
        kind: ast::ExprKind::Call {
            func: Box::new(np_attr("zeros", span)),
            args: vec![ast::Expr::int(len, span)],
            keywords: vec![ast::Keyword {
                name: "dtype".to_string(),
                value: np_attr(ty.numpy_name(), span),
                span,
            }],
        },
        span,
    };
    assign(name, call, span)
}

/// A number literal's value (`-1.5` too).
fn literal(e: &ast::Expr) -> Option<f64> {
    match &e.kind {
        ast::ExprKind::Int(v) => Some(*v as f64),
        ast::ExprKind::Float(v) => Some(*v),
        ast::ExprKind::Unary { op: UnOp::Neg, arg } => literal(arg).map(|v| -v),
        _ => None,
    }
}

impl Lowerer<'_, '_> {
    /// The call `e` of `np.histogram`: its arguments.
    fn histogram_call<'e>(&self, e: &'e ast::Expr) -> Option<&'e [ast::Expr]> {
        let ast::ExprKind::Call { func, args, .. } = &e.kind else {
            return None;
        };
        match self.builtin_of(func)? {
            Builtin::Histogram => Some(args),
            _ => None,
        }
    }

    /// `np.histogram(...)` read anywhere but as a statement's whole value
    /// (or its `[0]` / `[1]`): a located error.
    pub(super) fn histogram_elsewhere(&mut self, span: Span) -> Option<super::TExpr> {
        self.error(
            Diagnostic::error("`np.histogram` is supported as the value of an assignment")
                .at(span, "used inside an expression")
                .help("store it: `counts, edges = np.histogram(x[i, :], 8)` or `h[i, :] = np.histogram(x[i, :], 8, (lo, hi))[0]`"),
        );
        None
    }

    /// A statement that stores `np.histogram(...)` (see the module doc):
    /// the statements NumPy's code runs; `None` for other statements,
    /// `Some(None)` after an error.
    pub(super) fn histogram_store(&mut self, s: &ast::Stmt) -> Option<Option<Vec<ast::Stmt>>> {
        let ast::StmtKind::Assign { targets, value } = &s.kind else {
            return None;
        };
        let [target] = targets.as_slice() else {
            return None;
        };
        let (call, outputs) = match (&value.kind, &target.kind) {
            (ast::ExprKind::Subscript { value: v, indices }, _) => {
                let _ = self.histogram_call(v)?;
                let which = match indices.as_slice() {
                    [i] => literal(i).filter(|_| matches!(i.kind, ast::ExprKind::Int(_))),
                    _ => None,
                };
                let outputs = match which {
                    Some(w) if w == 0.0 || w == -2.0 => Outputs {
                        counts: Some(target),
                        edges: None,
                    },
                    Some(w) if w == 1.0 || w == -1.0 => Outputs {
                        counts: None,
                        edges: Some(target),
                    },
                    _ => {
                        self.error(
                            Diagnostic::error(
                                "`np.histogram` returns a pair: index it by 0 (the counts) or 1 (the edges)",
                            )
                            .at(value.span, "another index"),
                        );
                        return Some(None);
                    }
                };
                (&**v, outputs)
            }
            (ast::ExprKind::Call { .. }, ast::ExprKind::Tuple(names)) => {
                let _ = self.histogram_call(value)?;
                let [c, e] = names.as_slice() else {
                    self.error(
                        Diagnostic::error(format!(
                            "`np.histogram` returns 2 values (counts, edges), not {}",
                            names.len()
                        ))
                        .at(target.span, "unpacked here")
                        .note("Python raises ValueError"),
                    );
                    return Some(None);
                };
                let outputs = Outputs {
                    counts: Some(c),
                    edges: Some(e),
                };
                (value, outputs)
            }
            (ast::ExprKind::Call { .. }, _) => {
                let _ = self.histogram_call(value)?;
                self.error(
                    Diagnostic::error("`np.histogram` returns a pair (counts, edges)")
                        .at(value.span, "a pair")
                        .help("unpack it (`counts, edges = np.histogram(...)`) or take one (`np.histogram(...)[0]`)"),
                );
                return Some(None);
            }
            _ => return None,
        };
        let args = self.histogram_call(call)?;
        let stmts = self.histogram_stmts(args, outputs, call.span);
        if stmts.is_none() {
            // (the names count as defined: no further error about them)
            let names = match &target.kind {
                ast::ExprKind::Tuple(names) => names.clone(),
                _ => vec![target.clone()],
            };
            self.mark_failed_targets(&names);
        }
        Some(stmts)
    }

    /// The statements of a histogram stored into `outputs`.
    fn histogram_stmts(
        &mut self,
        args: &[ast::Expr],
        outputs: Outputs,
        span: Span,
    ) -> Option<Vec<ast::Stmt>> {
        let Some(a) = args.first() else {
            self.arity_error(
                "np.histogram",
                "1 to 5 arguments (a, bins, range, density, weights)",
                0,
                span,
            );
            return None;
        };
        let (shape, elem) = match self.array_shape_of(a)? {
            (Some(shape), elem) => (shape, elem),
            (None, _) => {
                self.error(
                    Diagnostic::error(
                        "`np.histogram` of a number is not supported in parpy functions",
                    )
                    .at(a.span, "not an array")
                    .help("pass a slice: `np.histogram(x[i, :], 8)`"),
                );
                return None;
            }
        };
        // NumPy converts bool data to uint8
        let bools = elem == ElemTy::Bool;
        let elem = if bools { ElemTy::U8 } else { elem };
        let a = a.clone();
        let n = match given(args, 1) {
            None => 10,
            Some(b) => self.histogram_bins(b)?,
        };
        if let Some(d) = given(args, 3) {
            if !matches!(d.kind, ast::ExprKind::Bool(false)) {
                self.error(
                    Diagnostic::error(
                        "`density` of `np.histogram` is not supported in parpy functions",
                    )
                    .at(d.span, "density")
                    .help("divide the counts yourself: `counts / np.diff(edges) / np.sum(counts)`"),
                );
                return None;
            }
        }
        let size: i64 = shape.iter().product();
        // NumPy's counts: `np.bincount(indices, weights)` (float64 sums)
        // `.astype(weights.dtype)`, once a block of 65536 elements
        let weights = match given(args, 4) {
            None => None,
            Some(w) => {
                let (w_shape, w_elem) = self.array_shape_of(w)?;
                if w_shape.as_deref() != Some(shape.as_slice()) {
                    self.error(
                        Diagnostic::error("weights should have the same shape as a.")
                            .at(w.span, "another shape")
                            .also(a.span, "a")
                            .note("NumPy raises ValueError"),
                    );
                    return None;
                }
                if size > BLOCK {
                    self.error(
                        Diagnostic::error(format!(
                            "`weights` of `np.histogram` of more than {BLOCK} elements is not supported in parpy functions"
                        ))
                        .at(w.span, "weights")
                        .note("NumPy sums the weights of each block of 65536 elements apart"),
                    );
                    return None;
                }
                Some((w.clone(), w_elem))
            }
        };
        let mut body = vec![];
        // `_get_outer_edges`
        let (lo, hi) = match given(args, 2) {
            Some(r) => {
                let items = match &r.kind {
                    ast::ExprKind::Tuple(items) => Some(items.as_slice()),
                    _ => r.list_items(),
                };
                let Some([r0, r1]) = items else {
                    self.error(
                        Diagnostic::error(
                            "`range` of `np.histogram` is a pair `(lo, hi)` in parpy functions",
                        )
                        .at(r.span, "not a pair written out"),
                    );
                    return None;
                };
                let lo = self.histogram_edge(r0, "hist_lo", &mut body)?;
                let hi = self.histogram_edge(r1, "hist_hi", &mut body)?;
                let greater = ast::Expr::compare(BinOp::Gt, lo.e.clone(), hi.e.clone(), span);
                body.push(value_error(
                    not(greater, span),
                    "max must be larger than min in range parameter.",
                    vec![],
                    span,
                ));
                body.push(self.finite_edges(&lo, &hi, "supplied", span));
                (lo, hi)
            }
            None if size == 0 => {
                let int = |v| Edge {
                    e: ast::Expr::int(v, span),
                    ty: (ElemTy::I64, true),
                };
                (int(0), int(1))
            }
            None => {
                let mut edge = |f: &str, base: &str| {
                    let name = self.fresh_name(base);
                    let mut e = Self::numpy_call(f, vec![a.clone()], span);
                    if bools {
                        e = np_scalar(ElemTy::U8, e, span);
                    }
                    body.push(assign(&name, e, span));
                    Edge {
                        e: ast::Expr::name(&name, span),
                        ty: (elem, false),
                    }
                };
                let lo = edge("min", "hist_min");
                let hi = edge("max", "hist_max");
                body.push(self.finite_edges(&lo, &hi, "autodetected", span));
                (lo, hi)
            }
        };
        // NumPy's `result_type(first, last, a)`, float64 for ints (the
        // same for the edges moved by 0.5)
        let ends = promote(lo.ty, hi.ty, self.opts);
        let bin_type = match promote(ends, (elem, false), self.opts).0 {
            t if t.is_float() => t,
            _ => ElemTy::F64,
        };
        let counts = self.histogram_local(outputs.counts, "hist_counts");
        let edges = self.histogram_local(outputs.edges, "hist_edges");
        let ntype = weights.as_ref().map_or(ElemTy::I64, |w| w.1);
        body.push(zeros(&counts, n, ntype, span));
        let sums = weights.as_ref().map(|_| self.fresh_name("hist_sums"));
        if let Some(sums) = &sums {
            body.push(zeros(sums, n, ElemTy::F64, span));
        }
        body.push(zeros(&edges, n + 1, bin_type, span));
        let count = Count {
            a: &a,
            weights: weights.as_ref().map(|w| &w.0),
            sums: sums.as_deref(),
            bools,
            shape: &shape,
            size,
            n,
            bin_type,
            counts: &counts,
            edges: &edges,
            span,
        };
        let moved =
            |e: &Edge, op| ast::Expr::binary(op, e.e.clone(), ast::Expr::float(0.5, span), span);
        // (an int edge moved by 0.5 is a float)
        let wide_ty = |t: (ElemTy, bool)| match t.0.is_float() {
            true => t,
            false => (ElemTy::F64, t.1),
        };
        match (literal(&lo.e), literal(&hi.e)) {
            (Some(l), Some(h)) => {
                // (known when compiling)
                let (first, last, tys) = match l == h {
                    true => (
                        moved(&lo, BinOp::Sub),
                        moved(&hi, BinOp::Add),
                        (wide_ty(lo.ty), wide_ty(hi.ty)),
                    ),
                    false => (lo.e.clone(), hi.e.clone(), (lo.ty, hi.ty)),
                };
                body.extend(count.stmts(self, first, last, tys, ""));
            }
            _ => {
                let equal = ast::Expr::compare(BinOp::Eq, lo.e.clone(), hi.e.clone(), span);
                let wide = count.stmts(
                    self,
                    moved(&lo, BinOp::Sub),
                    moved(&hi, BinOp::Add),
                    (wide_ty(lo.ty), wide_ty(hi.ty)),
                    "w",
                );
                let apart = count.stmts(self, lo.e.clone(), hi.e.clone(), (lo.ty, hi.ty), "");
                body.push(stmt(
                    ast::StmtKind::If {
                        cond: equal,
                        then_body: wide,
                        else_body: apart,
                    },
                    span,
                ));
            }
        }
        if let Some(sums) = &sums {
            let all = subscript(
                ast::Expr::name(&counts, span),
                ast::Expr::full_slice(span),
                span,
            );
            let sums = astype_to(&ast::Expr::name(sums, span), ntype, span);
            body.push(stmt(
                ast::StmtKind::Assign {
                    targets: vec![all],
                    value: sums,
                },
                span,
            ));
        }
        for (target, local) in [(outputs.counts, &counts), (outputs.edges, &edges)] {
            if let Some(t) = target.filter(|t| !matches!(t.kind, ast::ExprKind::Name(_))) {
                body.push(stmt(
                    ast::StmtKind::Assign {
                        targets: vec![t.clone()],
                        value: ast::Expr::name(local, span),
                    },
                    span,
                ));
            }
        }
        Some(body)
    }

    /// `bins` of `np.histogram`: a positive count known when compiling.
    fn histogram_bins(&mut self, b: &ast::Expr) -> Option<i64> {
        if self.rank(b) > 0 {
            self.error(
                Diagnostic::error("`bins` of `np.histogram` as an array of edges is not supported in parpy functions")
                    .at(b.span, "an array of edges")
                    .help("give the number of equal bins and `range=(lo, hi)`, or count with `np.digitize(x, edges)`"),
            );
            return None;
        }
        let t = self.lower_expr(b)?;
        match self.known_int(&t.e) {
            Some(v) if v >= 1 && t.e.ty.elem().is_some_and(|e| e.is_int()) => Some(v),
            Some(_) if t.e.ty.elem().is_some_and(|e| e.is_int()) => {
                self.error(
                    Diagnostic::error("`bins` must be positive, when an integer")
                        .at(b.span, "not positive")
                        .note("NumPy raises ValueError"),
                );
                None
            }
            _ => {
                self.error(
                    Diagnostic::error(
                        "`bins` of `np.histogram` must be an integer known when compiling",
                    )
                    .at(b.span, "not a known integer")
                    .note("the length of every array must be known when compiling"),
                );
                None
            }
        }
    }

    /// An edge of `range`: a literal as it is, else in a fresh local.
    fn histogram_edge(
        &mut self,
        r: &ast::Expr,
        base: &str,
        body: &mut Vec<ast::Stmt>,
    ) -> Option<Edge> {
        let (t, ctx) = self.lower_reduced(r);
        let was_array = ctx.is_some_and(|c| c.extents().is_some());
        let t = t?;
        let elem = match t.e.ty.elem() {
            Some(e) if !was_array && matches!(t.e.ty, crate::ir::Type::Scalar(_)) => e,
            _ => {
                self.error(
                    Diagnostic::error("an edge of `range` of `np.histogram` is a number")
                        .at(r.span, "not a number"),
                );
                return None;
            }
        };
        if literal(r).is_some() {
            return Some(Edge {
                e: r.clone(),
                ty: (elem, t.weak),
            });
        }
        let name = self.fresh_name(base);
        body.push(assign(&name, r.clone(), r.span));
        Some(Edge {
            e: ast::Expr::name(&name, r.span),
            ty: (elem, t.weak),
        })
    }

    /// NumPy's ValueError where an edge of the range is not finite.
    fn finite_edges(&self, lo: &Edge, hi: &Edge, how: &str, span: Span) -> ast::Stmt {
        let finite = |e: &Edge| Self::numpy_call("isfinite", vec![e.e.clone()], span);
        value_error(
            and(vec![finite(lo), finite(hi)], span),
            &format!("{how} range of [{{}}, {{}}] is not finite"),
            vec![lo.e.clone(), hi.e.clone()],
            span,
        )
    }

    /// The name of a result's local array: the target's own name, else a
    /// fresh one.
    fn histogram_local(&mut self, target: Option<&ast::Expr>, base: &str) -> String {
        match target.map(|t| &t.kind) {
            Some(ast::ExprKind::Name(n)) => n.clone(),
            _ => self.fresh_name(base),
        }
    }
}

/// The statements of NumPy's count, given the edges.
struct Count<'c> {
    a: &'c ast::Expr,
    /// the weights (of `a`'s shape), summed into `sums` in float64
    weights: Option<&'c ast::Expr>,
    sums: Option<&'c str>,
    /// (`a` of bools, counted as uint8)
    bools: bool,
    shape: &'c [i64],
    size: i64,
    n: i64,
    bin_type: ElemTy,
    counts: &'c str,
    edges: &'c str,
    span: Span,
}

impl Count<'_> {
    /// The edges `bin_edges[:] = np.linspace(...)`, NumPy's check that
    /// they increase, and the count of the elements; `first` and `last`
    /// of types `tys`; `tag` makes the locals' names this branch's own.
    fn stmts(
        &self,
        low: &mut Lowerer,
        first: ast::Expr,
        last: ast::Expr,
        tys: ((ElemTy, bool), (ElemTy, bool)),
        tag: &str,
    ) -> Vec<ast::Stmt> {
        let span = self.span;
        let (n, int) = (self.n, |v| ast::Expr::int(v, span));
        let name = |e: &str| ast::Expr::name(e, span);
        let bin = |op, l, r| ast::Expr::binary(op, l, r, span);
        let cmp = |op, l, r| ast::Expr::compare(op, l, r, span);
        let at = |arr: &str, i| subscript(name(arr), i, span);
        let mut out = vec![];
        let linspace = Lowerer::numpy_call(
            "linspace",
            vec![
                first.clone(),
                last.clone(),
                int(n + 1),
                ast::Expr {
                    kind: ast::ExprKind::Bool(true),
                    span,
                },
                ast::Expr {
                    kind: ast::ExprKind::None,
                    span,
                },
                np_attr(self.bin_type.numpy_name(), span),
            ],
            span,
        );
        out.push(stmt(
            ast::StmtKind::Assign {
                targets: vec![subscript(
                    name(self.edges),
                    ast::Expr::full_slice(span),
                    span,
                )],
                value: linspace,
            },
            span,
        ));
        let k = low.fresh_name(&format!("hist_k{tag}"));
        let increasing = not(
            cmp(
                BinOp::Ge,
                at(self.edges, name(&k)),
                at(self.edges, bin(BinOp::Add, name(&k), int(1))),
            ),
            span,
        );
        let message = format!("Too many bins for data range. Cannot create {n} finite-sized bins.");
        out.push(for_in(
            &k,
            Lowerer::range_call(vec![int(n)], span),
            vec![value_error(increasing, &message, vec![], span)],
            span,
        ));
        if self.size == 0 {
            return out;
        }
        // `norm_denom = _unsigned_subtract(last, first)`, in their type
        // (made strong; an int one unsigned)
        let dt = promote(tys.0, tys.1, low.opts).0;
        let denom = match dt {
            ElemTy::I8 | ElemTy::I16 | ElemTy::I32 | ElemTy::I64 => {
                let u = match dt {
                    ElemTy::I8 => ElemTy::U8,
                    ElemTy::I16 => ElemTy::U16,
                    ElemTy::I32 => ElemTy::U32,
                    _ => ElemTy::U64,
                };
                let wrapped = |e: ast::Expr| np_scalar(u, np_scalar(dt, e, span), span);
                bin(BinOp::Sub, wrapped(last.clone()), wrapped(first.clone()))
            }
            _ => bin(
                BinOp::Sub,
                np_scalar(dt, last.clone(), span),
                np_scalar(dt, first.clone(), span),
            ),
        };
        let den = low.fresh_name(&format!("hist_denom{tag}"));
        out.push(assign(&den, denom, span));
        let [v, t, f, ix] =
            ["hist_v", "hist_t", "hist_f", "hist_i"].map(|b| low.fresh_name(&format!("{b}{tag}")));
        let keep = and(
            vec![
                cmp(BinOp::Ge, name(&v), first.clone()),
                cmp(BinOp::Le, name(&v), last.clone()),
            ],
            span,
        );
        let f_indices = bin(
            BinOp::Mul,
            bin(BinOp::Div, bin(BinOp::Sub, name(&t), first), name(&den)),
            int(n),
        );
        let step = |op, by| assign(&ix, bin(op, name(&ix), int(by)), span);
        let counted = vec![
            assign(&t, np_scalar(self.bin_type, name(&v), span), span),
            assign(&f, f_indices, span),
            assign(&ix, np_scalar(ElemTy::I64, name(&f), span), span),
            if_(
                cmp(BinOp::Eq, name(&ix), int(n)),
                vec![step(BinOp::Sub, 1)],
                span,
            ),
            if_(
                cmp(BinOp::Lt, name(&t), at(self.edges, name(&ix))),
                vec![step(BinOp::Sub, 1)],
                span,
            ),
            if_(
                and(
                    vec![
                        cmp(
                            BinOp::Ge,
                            name(&t),
                            at(self.edges, bin(BinOp::Add, name(&ix), int(1))),
                        ),
                        cmp(BinOp::Ne, name(&ix), int(n - 1)),
                    ],
                    span,
                ),
                vec![step(BinOp::Add, 1)],
                span,
            ),
        ];
        let w = low.fresh_name(&format!("hist_w{tag}"));
        let (into, one) = match self.sums {
            Some(sums) => (sums, np_scalar(ElemTy::F64, name(&w), span)),
            None => (self.counts, int(1)),
        };
        let mut counted = counted;
        counted.push(stmt(
            ast::StmtKind::AugAssign {
                target: at(into, name(&ix)),
                op: BinOp::Add,
                value: one,
                rebind: None,
            },
            span,
        ));
        let each = vec![if_(keep, counted, span)];
        // the elements in NumPy's order (`a.ravel()`)
        if let ([_], false, None) = (self.shape, self.bools, self.weights) {
            out.push(for_in(&v, self.a.clone(), each, span));
            return out;
        }
        let ks: Vec<String> = (0..self.shape.len())
            .map(|d| low.fresh_name(&format!("hist_d{d}{tag}")))
            .collect();
        let element = ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(self.a.clone()),
                indices: ks.iter().map(|k| name(k)).collect(),
            },
            span,
        };
        let element = match self.bools {
            true => np_scalar(ElemTy::U8, element, span),
            false => element,
        };
        let mut nest = vec![assign(&v, element, span)];
        if let Some(weights) = self.weights {
            let weight = ast::Expr {
                kind: ast::ExprKind::Subscript {
                    value: Box::new(weights.clone()),
                    indices: ks.iter().map(|k| name(k)).collect(),
                },
                span,
            };
            nest.push(assign(&w, weight, span));
        }
        nest.extend(each);
        for (k, extent) in ks.iter().zip(self.shape.iter()).rev() {
            nest = vec![for_in(
                k,
                Lowerer::range_call(vec![int(*extent)], span),
                nest,
                span,
            )];
        }
        out.extend(nest);
        out
    }
}
