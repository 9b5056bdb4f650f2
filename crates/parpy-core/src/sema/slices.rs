//! Slice statements and reductions to loops.
//!
//! `y[i, :] = x[i, :] / s` becomes an elementwise loop nest over the sliced
//! dimensions; `parpy.operators.sum(x[i, :])` becomes an accumulator, a
//! reduction loop nest hoisted before the statement, and a read of the
//! accumulator. Operand slice shapes are checked at compile time (NumPy
//! broadcasting: right-aligned, 1-long dimensions broadcast).

use std::collections::BTreeSet;

use crate::diag::{Diagnostic, Span};
use crate::ir::affine::{affine, wraps_any};
use crate::ir::visit::has_effects;
use crate::ir::{
    BinOp, Block, ElemTy, Expr, ExprKind, ForLoop, MathFn, Place, ReduceOp, Reduction, Stmt,
    StmtKind, Type, VarId, VarKind,
};
use crate::resolve::Builtin;
use crate::syntax::ast;

use super::expr::Sub;
use super::types::{const_int, convert};
use super::{Lowerer, TExpr};

/// One index position of a subscript before slices are mapped to loops.
pub(super) enum IndexSlot {
    Scalar(Expr),
    /// `lo:lo+extent*step:step`: the elements `lo + k*step` for `k` in
    /// `0..extent`; rolled by `rot` (`np.roll`), the element `lo +
    /// ((k + rot) % extent)*step`
    Slice {
        lo: Expr,
        extent: i64,
        step: i64,
        rot: i64,
    },
    /// `None` / `np.newaxis`: a dimension of length 1 that indexes nothing
    NewAxis,
    /// `lo + k*step` for the counter `k` of the slice of slot `owner`
    /// (a diagonal, `np.diagonal`): no dimension of its own
    Tied {
        lo: Expr,
        step: i64,
        owner: usize,
    },
    /// NumPy's dimensions of the integer arrays of a subscript (their
    /// broadcast shape), where NumPy puts them among the result's
    /// dimensions (in place of the arrays' when those and the numbers
    /// indexing with them are adjacent, else first): they index no
    /// dimension of the array (`x[idx, :]` is `x[idx[i], j]`)
    Gather(Vec<i64>),
    /// An integer array `index` of a dimension of `dim` elements: read at
    /// the counters of the subscript's `Gather` dimensions
    Gathered {
        index: ast::Expr,
        dim: i64,
    },
}

impl IndexSlot {
    /// `0:extent`, all of a dimension.
    pub(super) fn full(extent: i64, int_ty: ElemTy, span: Span) -> IndexSlot {
        IndexSlot::Slice {
            lo: Expr::int(0, int_ty, span),
            extent,
            step: 1,
            rot: 0,
        }
    }
}

/// How `np.flip`, `np.diff`, `np.diagonal` and `np.roll` change the
/// slices of the subscript they take (`Lowerer::view_slots`); axes count
/// the view's dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ViewOp {
    /// The slices (all, or the one of `axis`) walked backwards.
    Flip(Option<i64>),
    /// The slice of `axis` from its element `from` on, `n` elements
    /// shorter: an operand of `np.diff`'s `n`-th differences.
    Window { axis: i64, from: i64, n: i64 },
    /// The elements `[.., k, .., k + offset, ..]` of the slices of `axes`,
    /// one dimension where the first of them was (`np.trace` reduces it
    /// there); `last`: NumPy's `np.diagonal`, which puts it last, so that
    /// it must be the last already.
    Diagonal {
        offset: i64,
        axes: (i64, i64),
        last: bool,
    },
    /// The slice of `axis` (`None`: of a 1-D view) rolled by `shift`
    /// (element `k` is the slice's `k - shift`, cyclically).
    Roll { shift: i64, axis: Option<i64> },
}

/// The elementwise context of one slice statement or reduction: the loop
/// extents and their index variables. A slice statement's extents are its
/// target's (its first sliced operand); a reduction's are NumPy's broadcast
/// of all its operands' shapes: when an operand's shape extends those fixed
/// so far, `grown` keeps the broadcast and the caller lowers the argument
/// again with it (`Lowerer::lower_reduced`).
#[derive(Default)]
pub(super) struct SliceCtx {
    extents: Option<Vec<i64>>,
    vars: Vec<VarId>,
    def_span: Span,
    /// a reduction's context, whose extents grow by broadcasting
    growable: bool,
    grown: bool,
    /// a slice statement's with run-time slices about (`runtime_slices.rs`
    /// `RtSlices::statement`): along each dimension, the count of the
    /// target's run-time slice there (`None`: its length known when
    /// compiling), once the target is mapped
    runtime: Option<Vec<Option<VarId>>>,
}

impl SliceCtx {
    /// The counters of the sliced dimensions (defined inside the loop nest
    /// only).
    pub(super) fn vars(&self) -> &[VarId] {
        &self.vars
    }

    /// The extents of the loops, once an operand fixed them.
    pub(super) fn extents(&self) -> Option<&[i64]> {
        self.extents.as_deref()
    }
}

/// NumPy's broadcast of two shapes (right-aligned; a dimension of length 1
/// takes the other's length), `None` when they do not broadcast.
pub(super) fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    let at = |s: &[i64], k: usize| (k + s.len()).checked_sub(n).map_or(1, |i| s[i]);
    (0..n)
        .map(|k| match (at(a, k), at(b, k)) {
            (x, y) if x == y || y == 1 => Some(x),
            (1, y) => Some(y),
            _ => None,
        })
        .collect()
}

fn shape_str(s: &[i64]) -> String {
    let parts: Vec<String> = s.iter().map(|d| d.to_string()).collect();
    if parts.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(", "))
    }
}

/// Wraps `body` in one loop per variable, outermost first. `labels[d]` are
/// the labels of the loop over dimension `d`; the innermost loop gets the
/// reduction.
pub(super) fn loop_nest(
    vars: &[VarId],
    extents: &[i64],
    body: Block,
    mut labels: Vec<Vec<String>>,
    reduction: Option<Reduction>,
    int_ty: ElemTy,
    span: Span,
) -> Vec<Stmt> {
    let mut body = body;
    let mut reduction = reduction;
    labels.resize(vars.len(), vec![]);
    for ((v, n), labels) in vars.iter().zip(extents).zip(labels).rev() {
        let l = ForLoop {
            var: *v,
            lo: Expr::int(0, int_ty, span),
            hi: Expr::int(*n, int_ty, span),
            step: 1,
            body,
            labels,
            par: None,
            reduction: reduction.take(),
            wants_reduction: false,
            unroll: false,
        };
        body = vec![Stmt::new(StmtKind::For(Box::new(l)), span)];
    }
    body
}

/// The most elements an operand whose elements need statements of their
/// own is stored into a local array to be summed in NumPy's order (1 MiB
/// of float64, on the heap); a larger one is added in order.
const MATERIALIZED_MAX: i64 = 1 << 17;

/// `lo + by` in place (nothing for `by == 0`).
fn advance(lo: &mut Expr, by: i64, int_ty: ElemTy, span: Span) {
    if by != 0 {
        let start = std::mem::replace(lo, Expr::int(0, int_ty, span));
        let by = Expr::int(by, int_ty, span);
        *lo = Expr::binary(BinOp::Add, start, by, Type::Scalar(int_ty), span);
    }
}

/// Ends the loops of `stmts` over `0..n` (or `1..n`) whose body reads `marker` at
/// `end` instead: a reduction of a masked read's packed elements
/// (`masks.rs`, `marker` the local array), or of a slice with run-time
/// bounds (`runtime_slices.rs`, `marker` its first element's index). A
/// sum kept pairwise in NumPy's buffers of `NUMPY_BUFFER` elements is one
/// buffer then. How many there were.
pub(super) fn end_loop_at(stmts: &mut [Stmt], marker: VarId, n: i64, end: Expr) -> usize {
    let mut found = 0;
    for s in stmts {
        let StmtKind::For(l) = &mut s.kind else {
            continue;
        };
        let mut used = std::collections::BTreeSet::new();
        let mut assigned = std::collections::BTreeSet::new();
        for b in &l.body {
            crate::ir::visit::stmt_uses(b, &mut used, &mut assigned);
        }
        // (from the second element: a search that starts from the first,
        // `arg_extreme`)
        let from = matches!(l.lo.kind, ExprKind::Int(0 | 1));
        if !from || l.hi.kind != ExprKind::Int(n) || !used.contains(&marker) {
            continue;
        }
        l.hi = end.clone();
        if let Some(r) = &mut l.reduction {
            if r.pairwise == Some(NUMPY_BUFFER) && n <= NUMPY_BUFFER {
                r.pairwise = Some(i64::MAX);
            }
        }
        found += 1;
    }
    found
}

/// Replaces every read of `var` in `e` by `by`.
pub(super) fn substitute(e: &mut Expr, var: VarId, by: &Expr) {
    if e.kind == ExprKind::Var(var) {
        *e = by.clone();
        return;
    }
    for c in e.children_mut() {
        substitute(c, var, by);
    }
}

/// [`substitute`] in every expression of `stmts`, nested blocks included.
pub(super) fn substitute_stmts(stmts: &mut [Stmt], var: VarId, by: &Expr) {
    for s in stmts {
        for e in crate::ir::visit::stmt_exprs_mut(s) {
            substitute(e, var, by);
        }
        for b in crate::ir::visit::sub_blocks_mut(s) {
            substitute_stmts(b, var, by);
        }
    }
}

/// The elements of one buffer of NumPy's reductions that convert their
/// input (`np.mean` of float16 or integers): NumPy's `BUFSIZE`.
pub(super) const NUMPY_BUFFER: i64 = 8192;

/// A 1-D slice to read at computed indices (a search's, an
/// interpolation's): its element over the counter `var`, its length and
/// its element type.
pub(super) struct Indexed {
    pub elem: Expr,
    pub var: VarId,
    pub n: i64,
    pub et: ElemTy,
}

impl Indexed {
    /// The element at `k`.
    pub fn at(&self, k: Expr) -> Expr {
        let mut e = self.elem.clone();
        substitute(&mut e, self.var, &k);
        e
    }
    /// The elements converted to `t`.
    pub fn in_type(self, t: ElemTy) -> Indexed {
        Indexed {
            elem: convert(self.elem, t),
            et: t,
            ..self
        }
    }
}

/// A scan that a slice assignment computes (`np.cumsum(s, axis)`,
/// `np.maximum.accumulate(s)`): the operation, the slice, the axis
/// argument, and whether it is a ufunc's `accumulate` (axis 0 unless
/// told; `np.cumsum` scans the flattened array).
pub(super) struct Scan<'e> {
    op: ScanOp,
    arg: &'e ast::Expr,
    axis: Option<&'e ast::Expr>,
    ufunc: bool,
}

/// What a scan combines: a reduction's operation (`np.cumsum`), or the
/// ufunc folded (`np.subtract.accumulate`, `folds.rs`).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum ScanOp {
    Reduce(ReduceOp),
    Fold(&'static str),
}

/// What a reduction's `axis=` (and `keepdims=`) say: the axes as written
/// (negative ones count from the end), and whether the reduced ones stay
/// as dimensions of length 1.
#[derive(Clone, Debug)]
pub(super) struct Axes {
    pub axes: Vec<i64>,
    pub keepdims: bool,
    pub span: Span,
}

/// The type NumPy's `sum` / `prod` (and `cumsum` / `cumprod`) of `et`
/// elements accumulate in, float16 aside: bools and integers narrower than
/// NumPy's default integer in it (unsigned ones in the unsigned integer of
/// its width), the others in their own type. NumPy's default integer is
/// the Python int type (`force_int_size`), but int64 on Metal whatever that
/// is: NumPy's on the Macs Metal runs on, where `np.sum` of int32 values is
/// an int64 (Metal's 32-bit Python ints are a choice of speed, and a sum
/// past 2**31 must not wrap).
fn numpy_sum_type(et: ElemTy, opts: &crate::options::Options) -> ElemTy {
    let int_ty = match opts.backend {
        crate::options::Backend::Metal => ElemTy::I64,
        _ => opts.int_type,
    };
    if et.is_float() || et.size() >= int_ty.size() && et != ElemTy::Bool {
        et
    } else if et.is_unsigned_int() {
        match int_ty.size() {
            4 => ElemTy::U32,
            _ => ElemTy::U64,
        }
    } else {
        int_ty
    }
}

/// The accumulator type of a reduction (see `Lowerer::reduction_with`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum AccRule {
    /// `np.sum` and the parpy reductions: narrow integers and bools in the
    /// default integer, float16 in float32 (rounded back at the end).
    NumPy,
    /// `np.dot`: the elements' own type.
    Element,
    /// Python's `sum`: the elements' own type, added in order (a float sum
    /// without a label is a sequential loop, not a reduction the C compiler
    /// may reorder: Python's `sum` of NumPy floats adds them one by one).
    InOrder,
    /// `np.mean`: integers and bools in float64, float16 in float32.
    Mean,
    /// The mean inside `np.var`: integers and bools in float64, floats as
    /// `np.sum` (a float16 sum rounds to float16 before it is divided).
    VarMean,
}

/// The loop order a slice assignment needs so that each element of its
/// destination is read before it is written.
#[derive(Debug)]
enum Order {
    /// No read of the destination meets another iteration's write.
    Any,
    /// Forward loops read every element before writing it.
    Forward,
    /// Loops walked from the end do.
    Backward,
    /// Reads in both directions, or through indices not known as offsets.
    Unknown,
}

impl Order {
    /// The order that satisfies both.
    fn join(self, other: Order) -> Order {
        match (self, other) {
            (Order::Any, o) | (o, Order::Any) => o,
            (Order::Forward, Order::Forward) => Order::Forward,
            (Order::Backward, Order::Backward) => Order::Backward,
            _ => Order::Unknown,
        }
    }
}

/// How a read index relates to the write index of the same dimension
/// (`None`: not known, so the order is unknown).
enum Dist {
    /// Never the same element.
    Disjoint,
    /// The same element in every iteration.
    Same,
    /// Read by iteration `I` of `var`, written by iteration `I + d`.
    Var(VarId, i64),
}

/// Compares write index `w` with read index `r` of one dimension; `vars`
/// are the loop counters of the slice dimensions.
fn distance(w: &Expr, r: &Expr, vars: &[VarId]) -> Option<Dist> {
    if wraps_any(w, vars) || wraps_any(r, vars) {
        return None;
    }
    let (fw, fr) = (affine(w, &|_| None), affine(r, &|_| None));
    let counter = |f: &crate::ir::affine::Affine| -> Option<Option<(VarId, i128)>> {
        let mut found = None;
        for v in vars {
            match (f.coef_of(*v), found) {
                (0, _) => {}
                (c, None) => found = Some((*v, c)),
                (_, Some(_)) => return None,
            }
        }
        Some(found)
    };
    let rest = |f: &crate::ir::affine::Affine| vars.iter().fold(f.clone(), |f, v| f.without(*v));
    // what the two indices differ by, apart from their counters
    let k = rest(&fr).minus(&rest(&fw)).as_const()?;
    match (counter(&fw)?, counter(&fr)?) {
        (None, None) if k == 0 => Some(Dist::Same),
        (None, None) => Some(Dist::Disjoint),
        // `lo + c*v` against `lo' + c*v`: `c*u + lo == c*v + lo'` when
        // `u = v + (lo' - lo) / c`
        (Some((v, c)), Some((u, c2))) if u == v && c == c2 => Some(if k % c != 0 {
            Dist::Disjoint
        } else {
            Dist::Var(v, i64::try_from(k / c).ok()?)
        }),
        _ => None,
    }
}

/// `vars[d]` runs over `0..extents[d]`.
fn overlap_order(
    array: VarId,
    dst: &[Expr],
    value: &Expr,
    vars: &[VarId],
    extents: &[i64],
) -> Order {
    let mut reads = vec![];
    // `whole`: the array itself is an operand (a helper's argument), its
    // reads unknown here
    fn collect<'e>(e: &'e Expr, array: VarId, out: &mut Vec<&'e [Expr]>, whole: &mut bool) {
        match &e.kind {
            ExprKind::Index { array: a, indices } if *a == array => out.push(indices),
            ExprKind::Var(v) if *v == array => *whole = true,
            _ => {}
        }
        e.children().for_each(|c| collect(c, array, out, whole));
    }
    let mut whole = false;
    collect(value, array, &mut reads, &mut whole);
    if whole {
        return Order::Unknown;
    }
    let (mut forward, mut backward) = (false, false);
    for r in reads {
        // the iteration distance per slice variable: read(I) is written
        // by iteration I + distance
        let mut dist: Vec<(VarId, i64)> = vec![];
        let mut disjoint = false;
        for (w, r) in dst.iter().zip(r) {
            match distance(w, r, vars) {
                Some(Dist::Var(v, d)) => dist.push((v, d)),
                Some(Dist::Disjoint) => disjoint = true,
                Some(Dist::Same) => {}
                None => return Order::Unknown,
            }
        }
        // a distance as long as the dimension: no iteration writes what
        // another reads (`y[:4] = y[4:]`)
        disjoint |= dist.iter().any(|(v, d)| {
            let n = vars
                .iter()
                .position(|u| u == v)
                .map_or(i64::MAX, |k| extents[k]);
            d.unsigned_abs() >= n as u64
        });
        if disjoint {
            continue;
        }
        // lexicographic sign in loop order (outermost first)
        let first = vars
            .iter()
            .filter_map(|v| dist.iter().find(|(u, _)| u == v).map(|(_, d)| *d))
            .find(|d| *d != 0);
        match first {
            Some(d) if d > 0 => forward = true,
            Some(_) => backward = true,
            None => {}
        }
    }
    match (forward, backward) {
        (false, false) => Order::Any,
        (true, false) => Order::Forward,
        (false, true) => Order::Backward,
        (true, true) => Order::Unknown,
    }
}

/// `(flat / stride) % n`: the index of one dimension in a flattened nest
/// (the division left out for the innermost, the modulo for the
/// outermost).
fn flat_index(flat: Expr, stride: i64, n: i64, outermost: bool, ty: ElemTy, span: Span) -> Expr {
    let bin = |op, lhs: Expr, rhs: i64| {
        Expr::binary(op, lhs, Expr::int(rhs, ty, span), Type::Scalar(ty), span)
    };
    let mut e = flat;
    if stride > 1 {
        e = bin(BinOp::FloorDiv, e, stride);
    }
    if !outermost {
        e = bin(BinOp::Mod, e, n);
    }
    e
}

/// The value of each counter of `vars` (of the `extents`, row-major) at
/// position `at` of the row-major order, and the number of positions.
fn positions(
    vars: &[VarId],
    extents: &[i64],
    at: &Expr,
    int_ty: ElemTy,
    span: Span,
) -> (Vec<(VarId, Expr)>, i64) {
    let mut stride = 1;
    let mut out = vec![];
    for (d, (v, n)) in vars.iter().zip(extents).enumerate().rev() {
        out.push((*v, flat_index(at.clone(), stride, *n, d == 0, int_ty, span)));
        stride *= n;
    }
    (out, stride)
}

/// Replaces the counters `vars` (of the `extents`, row-major) in `body`
/// by their values at position `at` of the row-major order; returns the
/// number of positions.
fn unflatten(
    body: &mut Block,
    vars: &[VarId],
    extents: &[i64],
    at: &Expr,
    int_ty: ElemTy,
    span: Span,
) -> i64 {
    let (subs, n) = positions(vars, extents, at, int_ty, span);
    for (v, by) in subs {
        substitute_stmts(body, v, &by);
    }
    n
}

/// The runs in which NumPy (2.x) adds a float sum over several dimensions
/// with no `axis`: in `blocks` of `block` elements each (in the row-major
/// order of the reduced slice), a block summed in runs of `run` elements
/// (the last one shorter), each pairwise, the runs in order into the
/// result. With `unit`, NumPy copies each run into a buffer first: a run
/// is whole units of `unit` elements, rows of the innermost dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Runs {
    pub blocks: i64,
    pub block: i64,
    pub run: i64,
    pub unit: Option<i64>,
}

/// NumPy's runs for a sum over an operand whose dimensions, once NumPy's
/// iterator has merged the ones it walks as one (`merge_dims`), are
/// `dims`. One dimension: one pairwise sum, in place. Otherwise the
/// iterator copies the operand into buffers of [`NUMPY_BUFFER`] elements
/// that hold whole rows of the innermost dimensions that fit (`core`
/// elements): a buffer holds `NUMPY_BUFFER / core` of them and stops at
/// the end of the next dimension; an innermost dimension longer than a
/// buffer is summed in place, one row at a time. A sum that converts its
/// elements (`cast`: NumPy's mean of integers or float16) sums a row, or
/// the one dimension, in runs of a buffer too. (Measured against NumPy
/// 2.4 on random shapes and slices; `tests/test_sum_runs.py` keeps
/// checking it.)
pub(super) fn numpy_runs(dims: &[i64], cast: bool) -> Runs {
    let total: i64 = dims.iter().product();
    let in_place = if cast { NUMPY_BUFFER } else { i64::MAX };
    if dims.len() < 2 {
        return Runs {
            blocks: 1,
            block: total,
            run: in_place,
            unit: None,
        };
    }
    let (mut core, mut k) = (1, 0);
    while k < dims.len() && core * dims[dims.len() - 1 - k] <= NUMPY_BUFFER {
        core *= dims[dims.len() - 1 - k];
        k += 1;
    }
    if k == 0 {
        let row = dims[dims.len() - 1];
        return Runs {
            blocks: total / row,
            block: row,
            run: in_place,
            unit: None,
        };
    }
    let block = if k == dims.len() {
        total
    } else {
        core * dims[dims.len() - 1 - k]
    };
    Runs {
        blocks: total / block,
        block,
        run: (NUMPY_BUFFER / core * core).min(block),
        unit: Some(core),
    }
}

/// The dimensions NumPy's iterator walks for `(extent, stride)` pairs in
/// row-major order: dimensions of length 1 dropped, and a dimension
/// merged into the one before it where that one steps over it exactly.
/// (A reduction keeps negative strides: NumPy walks a reversed view in
/// its own order.)
pub(super) fn merge_dims(dims: &[(i64, i64)]) -> Vec<i64> {
    let mut out: Vec<(i64, i64)> = vec![];
    for &(n, stride) in dims.iter().filter(|d| d.0 != 1) {
        match out.last_mut() {
            Some(last) if last.1 == stride * n => *last = (last.0 * n, stride),
            _ => out.push((n, stride)),
        }
    }
    out.into_iter().map(|d| d.0).collect()
}

/// The dimensions `dims` in the order NumPy's iterator walks them,
/// outermost first: by the length of their `strides` in memory, ties in
/// the order given (row-major).
fn outermost_first(strides: &[i64], dims: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut dims: Vec<usize> = dims.collect();
    dims.sort_by_key(|&d| std::cmp::Reverse(strides[d].unsigned_abs()));
    dims
}

/// How NumPy walks the dimensions of a reduction along some axes
/// (`Lowerer::axis_walk`).
struct AxisWalk {
    /// The innermost dimension in memory is kept: each result adds its
    /// elements in order.
    inner_kept: bool,
    /// The reduced dimensions' counters, outermost first.
    order: Vec<VarId>,
    /// How many of the last of `order` are the innermost dimensions in
    /// memory, with no kept dimension between them (summed in runs).
    core: usize,
}

/// How a sum in runs adds one element to its accumulator: the update's
/// value for an element.
type Update<'a> = &'a dyn Fn(Expr) -> Expr;

impl Lowerer<'_, '_> {
    /// The stride in memory of each counter of `vars` when the slice
    /// expression whose element is `e` is a view of an array (`x[i, 1:4,
    /// :]`, `x.T[:, i]`, a diagonal); `None` for anything computed (a new
    /// row-major array in NumPy), a rolled index included.
    fn view_strides(&self, e: &Expr, vars: &[VarId]) -> Option<Vec<i64>> {
        let ExprKind::Index { array, indices } = &e.kind else {
            return None;
        };
        let Type::Array { shape, .. } = &self.func.var(*array).ty else {
            return None;
        };
        if indices.iter().any(|ix| wraps_any(ix, vars)) {
            return None;
        }
        // each index's coefficient of each counter (`lo + step * j` of a
        // strided slice: `step`, negative ones too)
        let forms: Vec<_> = indices.iter().map(|ix| affine(ix, &|_| None)).collect();
        let mut strides = vec![];
        for v in vars {
            // (a diagonal's counter indexes two positions: its stride is
            // the sum of theirs)
            let mut stride = 0i64;
            for (p, f) in forms.iter().enumerate() {
                for (_, k) in f.terms.iter().filter(|(t, _)| t.kind == ExprKind::Var(*v)) {
                    let below = shape[p + 1..].iter().product::<i64>();
                    stride = stride.checked_add(i64::try_from(*k).ok()?.checked_mul(below)?)?;
                }
            }
            strides.push(stride);
        }
        Some(strides)
    }

    /// The counters and extents of a sum of `e` in the order NumPy's
    /// iterator walks them, outermost first: a view's dimensions sorted by
    /// the length of their strides in memory (a transposed view adds in
    /// the array's order), its other dimensions as they are.
    fn memory_order(&self, e: &Expr, vars: &[VarId], extents: &[i64]) -> (Vec<VarId>, Vec<i64>) {
        let order = match self.view_strides(e, vars) {
            Some(strides) => outermost_first(&strides, 0..vars.len()),
            None => (0..vars.len()).collect(),
        };
        order.into_iter().map(|d| (vars[d], extents[d])).unzip()
    }

    /// The dimensions NumPy walks when it sums the slice expression whose
    /// element is `e` over `vars` (of the `extents`, in `memory_order`): a
    /// view of an array keeps the array's layout (dimensions that step over
    /// each other merge); anything computed is a new row-major array, one
    /// dimension.
    fn view_dims(&self, e: &Expr, vars: &[VarId], extents: &[i64]) -> Vec<i64> {
        match self.view_strides(e, vars) {
            Some(strides) if !strides.contains(&0) => {
                let dims: Vec<(i64, i64)> = extents.iter().copied().zip(strides).collect();
                merge_dims(&dims)
            }
            _ => vec![extents.iter().product()],
        }
    }

    /// The order NumPy's reduction with `axes` walks the dimensions (the
    /// counters `vars` of the `extents`) of the slice expression whose
    /// element is `e`: a view's dimensions by the length of their strides
    /// (ties in row-major order), those of a computed expression as the
    /// new array NumPy computes (`computed_order`); `None` for another
    /// expression, a broadcast dimension or invalid axes.
    fn axis_walk(
        &self,
        e: &Expr,
        vars: &[VarId],
        extents: &[i64],
        axes: &Axes,
    ) -> Option<AxisWalk> {
        let rank = vars.len() as i64;
        let mut reduced = vec![false; vars.len()];
        for &a in &axes.axes {
            let d = if a < 0 { a + rank } else { a };
            *reduced.get_mut(usize::try_from(d).ok()?)? = true;
        }
        let strides = match self.view_strides(e, vars) {
            Some(s) => s,
            None => {
                // (a new array of that order: each dimension's stride the
                // product of the extents inside it)
                let order = self.computed_order(e, vars)?;
                let mut s = vec![1i64; extents.len()];
                let mut below = 1i64;
                for &d in order.iter().rev() {
                    s[d] = below;
                    below = below.checked_mul(extents[d].max(1))?;
                }
                s
            }
        };
        if strides.contains(&0) {
            return None;
        }
        // (dimensions of length 1 are walked once, outermost)
        let dims = outermost_first(&strides, (0..vars.len()).filter(|&d| extents[d] != 1));
        let inner_kept = dims.last().is_none_or(|&d| !reduced[d]);
        let core = dims.iter().rev().take_while(|&&d| reduced[d]).count();
        let ones = (0..vars.len()).filter(|&d| extents[d] == 1);
        let order = ones
            .chain(dims)
            .filter(|&d| reduced[d])
            .map(|d| vars[d])
            .collect();
        Some(AxisWalk {
            inner_kept,
            order,
            core,
        })
    }

    /// The order of the dimensions (`vars`, outermost first) of NumPy's new
    /// array of the computed slice expression `e`: that of the views it
    /// reads (NumPy keeps its operands' layout), where they agree; `None`
    /// where they do not (or one is not a view).
    fn computed_order(&self, e: &Expr, vars: &[VarId]) -> Option<Vec<usize>> {
        fn reads<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
            match &e.kind {
                ExprKind::Index { .. } => out.push(e),
                _ => e.children().for_each(|c| reads(c, out)),
            }
        }
        let mut views = vec![];
        reads(e, &mut views);
        let row_major: Vec<usize> = (0..vars.len()).collect();
        let (mut full, mut broadcast) = (None, false);
        for v in views {
            let strides = self.view_strides(v, vars)?;
            let used: Vec<u64> = strides
                .iter()
                .filter(|s| **s != 0)
                .map(|s| s.unsigned_abs())
                .collect();
            if used.len() < strides.len() {
                // (a broadcast operand: only row-major ones are read here)
                broadcast = true;
                if !used.windows(2).all(|w| w[0] >= w[1]) {
                    return None;
                }
                continue;
            }
            let order = outermost_first(&strides, 0..vars.len());
            match &full {
                Some(o) if *o != order => return None,
                _ => full = Some(order),
            }
        }
        match full {
            Some(o) if broadcast && o != row_major => None,
            Some(o) => Some(o),
            None => Some(row_major),
        }
    }

    /// The elements `elem` of a reduction over `vars` (of the `extents`),
    /// computed by the statements `inner` each, stored into a local array
    /// `tmp` in row-major order by a loop nest hoisted before the
    /// statement; `elem` becomes `tmp[j]` (`inner` empty) over the counter
    /// `j` returned.
    pub(super) fn materialize(
        &mut self,
        (vars, extents): (&[VarId], &[i64]),
        inner: &mut Block,
        elem: &mut Expr,
        et: ElemTy,
        span: Span,
    ) -> VarId {
        let n: i64 = extents.iter().product();
        let ty = Type::Array {
            elem: et,
            shape: vec![n],
        };
        let tmp = self.new_var("tmp", ty, VarKind::Local, span);
        let it = Type::Scalar(self.opts.int_type);
        let mut at = self.int_e(0, span);
        for (v, ext) in vars.iter().zip(extents) {
            let scaled = Expr::binary(BinOp::Mul, at, self.int_e(*ext, span), it.clone(), span);
            at = Expr::binary(
                BinOp::Add,
                scaled,
                Expr::var(*v, it.clone(), span),
                it.clone(),
                span,
            );
        }
        let value = std::mem::replace(elem, Expr::int(0, self.opts.int_type, span));
        let mut body = std::mem::take(inner);
        body.push(Stmt::new(
            StmtKind::Assign {
                dst: Place::Index {
                    array: tmp,
                    indices: vec![at],
                },
                value,
            },
            span,
        ));
        let nest = loop_nest(vars, extents, body, vec![], None, self.opts.int_type, span);
        self.pre.extend(nest);
        let j = self.counter("j", span);
        *elem = Expr::new(
            ExprKind::Index {
                array: tmp,
                indices: vec![Expr::var(j, it, span)],
            },
            Type::Scalar(et),
            span,
        );
        j
    }

    fn counter(&mut self, name: &str, span: Span) -> VarId {
        let it = Type::Scalar(self.opts.int_type);
        self.new_var(name, it, VarKind::LoopIndex, span)
    }

    fn int_e(&self, v: i64, span: Span) -> Expr {
        Expr::int(v, self.opts.int_type, span)
    }

    /// `a * k + b` in the index type (`b` alone for `k == 0`, no `* 1`, no
    /// `+ 0`).
    fn mul_add(&self, a: Option<VarId>, k: i64, b: Expr, span: Span) -> Expr {
        let it = Type::Scalar(self.opts.int_type);
        let Some(a) = a.filter(|_| k != 0) else {
            return b;
        };
        let mut ak = Expr::var(a, it.clone(), span);
        if k != 1 {
            ak = Expr::binary(BinOp::Mul, ak, self.int_e(k, span), it.clone(), span);
        }
        if b.kind == ExprKind::Int(0) {
            return ak;
        }
        Expr::binary(BinOp::Add, ak, b, it, span)
    }

    /// `for v in range(n): body` (the body itself, with `v` as 0, for one
    /// iteration; nothing for none).
    fn counted(&self, v: VarId, n: i64, mut body: Block, span: Span) -> Vec<Stmt> {
        match n {
            0 => vec![],
            1 => {
                substitute_stmts(&mut body, v, &self.int_e(0, span));
                body
            }
            _ => {
                let l = ForLoop::sequential(v, self.int_e(0, span), self.int_e(n, span), body);
                vec![Stmt::new(StmtKind::For(Box::new(l)), span)]
            }
        }
    }

    /// The loops of a sum in NumPy's runs `r` (`numpy_runs`) of `element`
    /// at the counters `vars` (of the `extents`) into `acc`: `body` adds
    /// the element (`update` of it) to `acc`.
    fn run_nest(
        &mut self,
        r: Runs,
        (vars, extents): (&[VarId], &[i64]),
        mut body: Block,
        (acc, update, element): (VarId, Update, &Expr),
        span: Span,
    ) -> Vec<Stmt> {
        let int_ty = self.opts.int_type;
        let it = Type::Scalar(int_ty);
        let b = self.counter("block", span);
        let Some(unit) = r.unit else {
            // in place: each block one pairwise sum (in runs)
            let j = self.counter("j", span);
            let at = self.mul_add(Some(b), r.block, Expr::var(j, it.clone(), span), span);
            unflatten(&mut body, vars, extents, &at, int_ty, span);
            let mut sum =
                ForLoop::sequential(j, self.int_e(0, span), self.int_e(r.block, span), body);
            sum.reduction = Some(Reduction {
                pairwise: Some(r.run),
                ..Reduction::new(ReduceOp::Sum, acc)
            });
            let sum = Stmt::new(StmtKind::For(Box::new(sum)), span);
            return self.counted(b, r.blocks, vec![sum], span);
        };
        // NumPy's buffered sum: each run copied into `buf` a unit (a row
        // of the innermost dimensions, `inner` of them) at a time, then
        // summed pairwise in place
        let et = element.ty.elem().expect("a scalar element");
        let buf_ty = Type::Array {
            elem: et,
            shape: vec![r.run],
        };
        let buf = self.new_var("buf", buf_ty.clone(), VarKind::Local, span);
        let mut inner = 0;
        while extents[extents.len() - inner..].iter().product::<i64>() < unit {
            inner += 1;
        }
        let lead = vars.len() - inner;
        let (full, rest) = (r.block / r.run, r.block % r.run);
        let c = self.counter("run", span);
        let mut per_block = vec![];
        for (count, len, first) in [(full, r.run, 0), (1, rest, full * r.run)] {
            if count == 0 || len == 0 {
                continue;
            }
            // the first unit of the run: block * (block / unit) + run *
            // (run / unit) + first / unit
            let start = self.mul_add(
                Some(b),
                r.block / unit,
                self.int_e(first / unit, span),
                span,
            );
            let start = self.mul_add((count > 1).then_some(c), r.run / unit, start, span);
            let u = self.counter("unit", span);
            let w = self.mul_add(Some(u), 1, start, span);
            // fresh counters for the innermost dimensions, walked in order
            let fresh: Vec<VarId> = (0..inner).map(|_| self.counter("k", span)).collect();
            let mut e = element.clone();
            for (v, by) in positions(&vars[..lead], &extents[..lead], &w, int_ty, span).0 {
                substitute(&mut e, v, &by);
            }
            // the element's place in the buffer
            let mut pos = (len > unit).then(|| Expr::var(u, it.clone(), span));
            for (k, (v, f)) in vars[lead..].iter().zip(&fresh).enumerate() {
                let f = Expr::var(*f, it.clone(), span);
                substitute(&mut e, *v, &f);
                let n = extents[lead + k];
                pos = Some(match pos {
                    None => f,
                    Some(p) => {
                        let p = Expr::binary(BinOp::Mul, p, self.int_e(n, span), it.clone(), span);
                        Expr::binary(BinOp::Add, p, f, it.clone(), span)
                    }
                });
            }
            let pos = pos.unwrap_or_else(|| self.int_e(0, span));
            let store = Stmt::new(
                StmtKind::Assign {
                    dst: Place::Index {
                        array: buf,
                        indices: vec![pos],
                    },
                    value: e,
                },
                span,
            );
            let mut copy = vec![store];
            for (k, f) in fresh.iter().enumerate().rev() {
                copy = self.counted(*f, extents[lead + k], copy, span);
            }
            let mut stmts = self.counted(u, len / unit, copy, span);
            let t = self.counter("j", span);
            let read = Expr::new(
                ExprKind::Index {
                    array: buf,
                    indices: vec![Expr::var(t, it.clone(), span)],
                },
                Type::Scalar(et),
                span,
            );
            let add = Stmt::new(
                StmtKind::Assign {
                    dst: Place::Var(acc),
                    value: update(read),
                },
                span,
            );
            let mut sum =
                ForLoop::sequential(t, self.int_e(0, span), self.int_e(len, span), vec![add]);
            sum.reduction = Some(Reduction {
                pairwise: Some(i64::MAX),
                ..Reduction::new(ReduceOp::Sum, acc)
            });
            stmts.push(Stmt::new(StmtKind::For(Box::new(sum)), span));
            per_block.extend(self.counted(c, count, stmts, span));
        }
        self.counted(b, r.blocks, per_block, span)
    }
}

impl Lowerer<'_, '_> {
    /// Gives `ctx` the extents `shape`, a counter for each, and the span of
    /// the operand that fixed them.
    pub(super) fn init_ctx(&mut self, ctx: &mut SliceCtx, shape: Vec<i64>, span: Span) {
        let int_ty = self.opts.int_type;
        ctx.vars = shape
            .iter()
            .map(|_| self.new_var("j", Type::Scalar(int_ty), VarKind::LoopIndex, span))
            .collect();
        for (v, n) in ctx.vars.iter().zip(&shape) {
            self.loop_ranges
                .set(*v, crate::ir::range::Interval::new(0, *n as i128 - 1));
        }
        ctx.extents = Some(shape);
        ctx.def_span = span;
    }

    /// `arg` lowered in a reduction's elementwise context, whose shape is
    /// NumPy's broadcast of all its operands' shapes (`np.sum(a[:, None] *
    /// b[None, :])`): lowered a second time, over that shape, when an
    /// operand extends the shape of the ones before it. The context is
    /// `None` when lowering failed.
    pub(super) fn lower_reduced(&mut self, arg: &ast::Expr) -> (Option<TExpr>, Option<SliceCtx>) {
        let (from, diags) = (self.pre.len(), self.sh.diags.len());
        let labels = self.red_labels.clone();
        let growable = SliceCtx {
            growable: true,
            ..SliceCtx::default()
        };
        let saved = self.slice.replace(growable);
        let mut elem = self.lower_expr(arg);
        let mut ctx = self.slice.take();
        if let Some(SliceCtx {
            extents: Some(shape),
            def_span,
            grown: true,
            ..
        }) = ctx
        {
            self.pre.truncate(from);
            self.sh.diags.truncate(diags);
            self.red_labels = labels;
            let mut fixed = SliceCtx::default();
            self.init_ctx(&mut fixed, shape, def_span);
            self.slice = Some(fixed);
            elem = self.lower_expr(arg);
            ctx = self.slice.take();
        }
        self.slice = saved;
        (elem, ctx)
    }

    /// Takes the statements hoisted into `self.pre` since `from` that
    /// depend on the counters `vars` of a loop nest being built (a
    /// reduction with `axis=`, one per element of its result), and those
    /// that share a variable with them: they belong inside the nest. The
    /// others stay hoisted before it.
    pub(super) fn sink_dependent(&mut self, from: usize, vars: &[VarId]) -> Vec<Stmt> {
        if vars.is_empty() || self.pre.len() <= from {
            return vec![];
        }
        let new = self.pre.split_off(from);
        // (what a statement writes: its scalars and the arrays it stores
        // into, such as a sum's buffer, which a later statement reads)
        fn writes(s: &Stmt, out: &mut BTreeSet<VarId>) {
            let u = crate::ir::visit::own_uses(s);
            out.extend(u.assigned.iter().chain(&u.stored).copied());
            for b in crate::ir::visit::sub_blocks(s) {
                b.iter().for_each(|s| writes(s, out));
            }
        }
        let uses: Vec<(BTreeSet<VarId>, BTreeSet<VarId>)> = new
            .iter()
            .map(|s| {
                let (mut used, mut assigned) = (BTreeSet::new(), BTreeSet::new());
                crate::ir::visit::stmt_uses(s, &mut used, &mut BTreeSet::new());
                writes(s, &mut assigned);
                (used, assigned)
            })
            .collect();
        let mut dep: BTreeSet<VarId> = vars.iter().copied().collect();
        let mut inside = vec![false; new.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for (k, (used, assigned)) in uses.iter().enumerate() {
                if !inside[k] && used.iter().any(|v| dep.contains(v)) {
                    inside[k] = true;
                    dep.extend(assigned);
                    changed = true;
                }
            }
        }
        let mut moved = vec![];
        for (s, m) in new.into_iter().zip(inside) {
            if m {
                moved.push(s);
            } else {
                self.pre.push(s);
            }
        }
        moved
    }

    /// The dimensions a reduction reduces, given its `axis=` (taken from
    /// `self.axis` by the caller) and the counters and extents of its
    /// argument's dimensions: their counters and extents, and when some
    /// dimensions are left, whether the last one (longer than 1) is one of
    /// them (NumPy adds in order then). The dimensions left are the result's, which
    /// take their places in the surrounding slice statement (or
    /// reduction), as an operand's slice would: their counters in `elem`
    /// and `inner` become that statement's indices.
    pub(super) fn apply_axes(
        &mut self,
        axes: Option<Axes>,
        (vars, extents): (&[VarId], &[i64]),
        (elem, inner): (&mut Expr, &mut [Stmt]),
        name: &str,
        span: Span,
    ) -> Option<(Vec<VarId>, Vec<i64>, Option<bool>)> {
        let all = Some((vars.to_vec(), extents.to_vec(), None));
        let Some(Axes {
            axes,
            keepdims,
            span: at,
        }) = axes
        else {
            return all;
        };
        let rank = extents.len() as i64;
        let mut reduced = vec![false; extents.len()];
        for a in axes {
            let d = if a < 0 { a + rank } else { a };
            let problem = if !(0..rank).contains(&d) {
                format!("axis {a} is out of bounds for array of dimension {rank}")
            } else if reduced[d as usize] {
                "repeated axis".to_string()
            } else {
                reduced[d as usize] = true;
                continue;
            };
            self.error(
                Diagnostic::error(format!("`{name}`: {problem}"))
                    .at(
                        at,
                        format!(
                            "the argument has {rank} dimension{}",
                            if rank == 1 { "" } else { "s" }
                        ),
                    )
                    .note("NumPy raises AxisError for it"),
            );
            return None;
        }
        if reduced.iter().all(|r| *r) {
            return all;
        }
        let left = reduced.iter().filter(|r| !**r).count();
        if self.slice.is_none() {
            let target = match &self.name_target {
                Some((n, _)) => format!("`{n}` is a name, without dimensions"),
                None => "it is not assigned to a slice".to_string(),
            };
            self.error(
                Diagnostic::error(format!(
                    "`{name}` with this axis leaves {left} dimension{} (an array), but {target}",
                    if left == 1 { "" } else { "s" }
                ))
                .at(span, format!("an array with {left} dimension{}", if left == 1 { "" } else { "s" }))
                .help("assign it to a slice of an array argument (`y[i, :] = ...`), or reduce every axis"),
            );
            return None;
        }
        // with `keepdims`, a reduced dimension stays, of length 1
        let dims: Vec<usize> = (0..extents.len())
            .filter(|d| keepdims || !reduced[*d])
            .collect();
        let slots = dims
            .iter()
            .map(|d| {
                let n = if reduced[*d] { 1 } else { extents[*d] };
                IndexSlot::full(n, self.opts.int_type, span)
            })
            .collect();
        let at = self.map_slices(slots, false, span)?;
        for (d, by) in dims.iter().zip(&at) {
            if !reduced[*d] {
                substitute(elem, vars[*d], by);
                substitute_stmts(inner, vars[*d], by);
            }
        }
        let last = extents.len() - 1;
        let keeps_last = !reduced[last] && extents[last] > 1;
        let (vars, extents) = (0..extents.len())
            .filter(|d| reduced[*d])
            .map(|d| (vars[d], extents[d]))
            .unzip();
        Some((vars, extents, Some(keeps_last)))
    }

    /// The elements `lo:hi:step` selects in a dimension of size `dim`, as
    /// Python's `slice.indices` gives them (constants needed, but for a
    /// window, `window`, and a reduction's slice, `runtime_slice`).
    pub(super) fn slice_bounds(
        &mut self,
        (lo, hi, step): (Option<&ast::Expr>, Option<&ast::Expr>, Option<&ast::Expr>),
        dim: i64,
        span: Span,
    ) -> Option<IndexSlot> {
        if let (Some(l), Some(h)) = (lo, hi) {
            // (a positive step known when compiling: `x[j:j + 6:2]`)
            let step = match step {
                None => Some(1),
                Some(s) => match &s.kind {
                    ast::ExprKind::Int(v) if *v > 0 => Some(*v),
                    _ => None,
                },
            };
            if let Some(window) = step.and_then(|s| self.window(l, h, s, dim)) {
                return window;
            }
        }
        // (a bound not known when compiling: the reduction of a 1-D slice
        // or of a block, or a slice statement, takes it, `runtime_slices.rs`;
        // nothing else does)
        let not_constant = |this: &mut Self, e: &ast::Expr, what: &str| {
            this.error(
                Diagnostic::error(format!("{what} must be a compile-time constant"))
                    .at(e.span, "not a constant")
                    .note("the length of a slice must be known when compiling, except in a reduction of a 1-D slice (`np.sum(x[i, :j])`, `max(x[lo:hi])`, `np.dot(a[i, :j], b[j, :j])`), a NumPy reduction without `axis=` of one subscript of more dimensions (`img[i0:i1, j0:j1].var()`), or a slice statement (`y[a:b] = x[a:b] * 2.0`)")
                    .help("use constants, shapes (`x.shape[0]`) or specialized scalar arguments, or a loop over the elements"),
            );
        };
        let index = |this: &mut Self, e: &ast::Expr, what: &str| -> Option<(Expr, Option<i64>)> {
            let t = this.lower_expr(e)?;
            let i = this.index_value(t, what)?;
            let c = this.known_int(&i);
            Some((i, c))
        };
        let step = match step {
            None => 1,
            Some(e) => match index(self, e, "a slice step")? {
                (_, None) => {
                    not_constant(self, e, "a slice step");
                    return None;
                }
                (_, Some(0)) => {
                    self.error(
                        Diagnostic::error("slice step cannot be zero")
                            .at(e.span, "a zero step")
                            .note("Python raises a ValueError for it"),
                    );
                    return None;
                }
                (_, Some(k)) => k,
            },
        };
        // a step at least as long as the dimension selects at most the first
        // element: the dimension's length does the same (and cannot overflow)
        let step = step.clamp(-dim.max(1), dim.max(1));
        let mut bounds = [None, None];
        for (b, e) in bounds.iter_mut().zip([lo, hi]) {
            if let Some(e) = e {
                *b = Some((e, index(self, e, "a slice bound")?));
            }
        }
        if let Some((e, _)) = bounds.iter().flatten().find(|(_, (_, c))| c.is_none()) {
            let e = *e;
            if self.rt_slices.is_some() {
                let [l, h] = bounds.map(|b| b.map(|(e, (i, _))| (e, i)));
                return self.runtime_slice([l, h], step, dim, span);
            }
            not_constant(self, e, "a slice bound");
            return None;
        }
        // a bound counts from the end when negative, and is clamped to the
        // first and last positions a walk in the step's direction can take
        let (first, last) = if step > 0 { (0, dim) } else { (-1, dim - 1) };
        let [l, h] = bounds.map(|b| {
            b.and_then(|(_, (_, c))| c).map(|c| {
                if c < 0 {
                    (c + dim).max(first)
                } else {
                    c.min(last)
                }
            })
        });
        let l = l.unwrap_or(if step > 0 { 0 } else { dim - 1 });
        let h = h.unwrap_or(if step > 0 { dim } else { -1 });
        Some(IndexSlot::Slice {
            lo: Expr::int(l, self.opts.int_type, span),
            extent: super::stmt::range_len(l, h, step),
            step,
            rot: 0,
        })
    }

    /// `lo:hi:step` whose bounds are known only at run time but differ by
    /// a constant (`x[i - 1:i + 2]`, a stencil's window; `step` positive):
    /// a slice of `ceil((hi - lo) / step)` elements from `lo`, when the
    /// loops around keep both bounds inside the dimension (Python would
    /// clamp them, and the length would change). `None` when the bounds
    /// are constants (or the difference is not one): `slice_bounds` takes
    /// them.
    fn window(
        &mut self,
        lo: &ast::Expr,
        hi: &ast::Expr,
        step: i64,
        dim: i64,
    ) -> Option<Option<IndexSlot>> {
        let literal = |e: &ast::Expr| match &e.kind {
            ast::ExprKind::Int(_) => true,
            ast::ExprKind::Unary { arg, .. } => matches!(arg.kind, ast::ExprKind::Int(_)),
            _ => false,
        };
        if literal(lo) || literal(hi) {
            return None;
        }
        let (l, h) = (self.lower_expr(lo), self.lower_expr(hi));
        let (Some(l), Some(h)) = (l, h) else {
            return Some(None);
        };
        let (l, h) = (
            self.index_value(l, "a slice bound"),
            self.index_value(h, "a slice bound"),
        );
        let (Some(l), Some(h)) = (l, h) else {
            return Some(None);
        };
        if self.known_int(&l).is_some() && self.known_int(&h).is_some() {
            return None;
        }
        let n = affine(&h, &|_| None)
            .minus(&affine(&l, &|_| None))
            .as_const()
            .and_then(|n| i64::try_from(n).ok())?;
        let inside = |r: Option<crate::ir::range::Interval>| {
            r.is_some_and(|r| r.lo >= 0 && r.hi <= dim as i128)
        };
        if !inside(self.range(&l)) || !inside(self.range(&h)) {
            // (a reduction's slice clamps its bounds at run time instead)
            if self.rt_slices.is_some() {
                return None;
            }
            self.error(
                Diagnostic::error(format!(
                    "the bounds of this window are not known to stay inside its dimension (of {dim})"
                ))
                .at(lo.span.to(hi.span), format!("a window of {n}"))
                .note("Python clamps a slice's bounds to the dimension (and counts negative ones from its end): the window would change length")
                .help("loop over the positions where the whole window fits (`for i in range(1, n - 1):` for `x[i - 1:i + 2]`)"),
            );
            return Some(None);
        }
        Some(Some(IndexSlot::Slice {
            lo: l,
            extent: (n.max(0) + step - 1) / step,
            step,
            rot: 0,
        }))
    }

    /// Replaces the slice slots of one operand by indices over the loop
    /// variables of the active elementwise context. The sliced dimensions
    /// of a `transposed` operand (`x.T[...]`, its slots in `x`'s order)
    /// come out last first.
    pub(super) fn map_slices(
        &mut self,
        slots: Vec<IndexSlot>,
        transposed: bool,
        span: Span,
    ) -> Option<Vec<Expr>> {
        let mut shape: Vec<i64> = slots
            .iter()
            .filter_map(|s| match s {
                IndexSlot::Slice { extent, .. } => Some(vec![*extent]),
                IndexSlot::NewAxis => Some(vec![1]),
                IndexSlot::Gather(dims) => Some(dims.clone()),
                IndexSlot::Scalar(_) | IndexSlot::Tied { .. } | IndexSlot::Gathered { .. } => None,
            })
            .flatten()
            .collect();
        // (the count of each dimension's slice with run-time bounds)
        let mut counts: Vec<Option<VarId>> = slots
            .iter()
            .filter_map(|s| match s {
                IndexSlot::Slice { lo, .. } => Some(vec![self.runtime_slot_count(lo)]),
                IndexSlot::NewAxis => Some(vec![None]),
                IndexSlot::Gather(dims) => Some(vec![None; dims.len()]),
                IndexSlot::Scalar(_) | IndexSlot::Tied { .. } | IndexSlot::Gathered { .. } => None,
            })
            .flatten()
            .collect();
        if transposed {
            shape.reverse();
            counts.reverse();
        }
        let runtime = counts.iter().any(Option::is_some);
        if runtime && shape.len() > 1 && !transposed && self.flat_runtime_reduction() {
            return self.flat_slices(slots, span);
        }
        if shape.is_empty() {
            return Some(
                slots
                    .into_iter()
                    .filter_map(|s| match s {
                        IndexSlot::Scalar(e) => Some(e),
                        _ => None,
                    })
                    .collect(),
            );
        }
        let Some(mut ctx) = self.slice.take() else {
            let d = match &self.name_target {
                // `y = x[:]`: ParPy's words, which say just that
                Some((name, at)) => Diagnostic::error(format!(
                    "Slice statements cannot have more slice dimensions than their target: \
                     `{name}` is a name, without dimensions"
                ))
                .at(
                    span,
                    format!(
                        "a slice with {} dimension{}",
                        shape.len(),
                        if shape.len() == 1 { "" } else { "s" }
                    ),
                )
                .also(*at, "the target")
                .help(format!(
                    "assign into an array (`out[:] = ...`), or reduce the slice \
                     (`{name} = parpy.operators.sum(...)`)"
                )),
                None => Diagnostic::error(
                    "slices can only be used in slice assignments and reductions",
                )
                .at(span, "slice used here")
                .help("assign to a slice (`y[i, :] = x[i, :]`) or reduce it (`parpy.operators.sum(x[i, :])`)"),
            };
            self.error(d);
            return None;
        };
        // (a run-time slice only in a statement's context, or a
        // reduction's that ends at its count)
        if ctx.runtime.is_none()
            && counts.iter().any(Option::is_some)
            && self.rt_slices.as_ref().is_some_and(|c| c.statement)
        {
            self.runtime_slice_unsupported(span);
            self.slice = Some(ctx);
            return None;
        }
        let first = ctx.extents.is_none();
        let extents = match &ctx.extents {
            Some(e) => e.clone(),
            None => {
                self.init_ctx(&mut ctx, shape.clone(), span);
                shape.clone()
            }
        };
        if first {
            if let Some(rt) = &mut ctx.runtime {
                rt.clone_from(&counts);
            }
        }
        // a value's leading dimensions of length 1 that its target lacks
        // are dropped (NumPy: `y[:, :] = x[None]`)
        let mut drop = 0;
        while !ctx.growable && !transposed && shape.len() - drop > extents.len() && shape[drop] == 1
        {
            drop += 1;
        }
        shape.drain(..drop);
        counts.drain(..drop);
        // a statement's run-time slices take the length of the dimension
        // they are in, their counts checked below: an operand's may also
        // be 1 (NumPy broadcasts it, its counter then held at its first
        // element, `broadcast_counts`)
        // (each: the count checked, the length it must have, whether it may
        // be 1, whether it is the operand's, not the target's)
        let mut checks: Vec<(VarId, Expr, bool, bool)> = vec![];
        // (a scan's operand: its length along each dimension of the target,
        // `RtSlices::scan_lengths`)
        if let Some(rt) = self.rt_slices.as_mut().filter(|c| c.scan && !first) {
            let (n, m) = (extents.len(), shape.len());
            for p in (0..m).filter(|_| m <= n) {
                let along = match counts[p] {
                    Some(c) => super::runtime_slices::Along::Count(c),
                    None if shape[p] == 1 => super::runtime_slices::Along::One,
                    None => super::runtime_slices::Along::Long,
                };
                rt.scan_lengths.push((n - m + p, along));
            }
        }
        if let (Some(rt), false) = (&ctx.runtime, first) {
            let (n, m) = (extents.len(), shape.len());
            let int_ty = self.opts.int_type;
            for p in (0..m).filter(|_| m <= n) {
                let d = n - m + p;
                let (here, there) = (counts[p], rt[d]);
                let want = |c: Option<VarId>, k: i64| match c {
                    Some(c) => Expr::var(c, Type::Scalar(int_ty), span),
                    None => Expr::int(k, int_ty, span),
                };
                match (here, there) {
                    (Some(c), t) if t != Some(c) => {
                        checks.push((c, want(t, extents[d]), true, true))
                    }
                    (None, Some(t)) if shape[p] != 1 => {
                        checks.push((t, want(None, shape[p]), false, false))
                    }
                    _ => {}
                }
                if here.is_some() || (there.is_some() && shape[p] != 1) {
                    shape[p] = extents[d];
                }
            }
        }
        let mut broadcast_counts = vec![];
        // (a 1-D operand into a 1-D target: NumPy's words, with the shapes)
        let one_d = extents.len() == 1 && shape.len() == 1;
        for (c, want, one, operand) in checks {
            self.runtime_length_check(c, want, one, one_d.then_some(operand), span);
            if one {
                broadcast_counts.push(c);
            }
        }
        let merged = broadcast(&extents, &shape);
        let Some(merged) = merged.filter(|m| *m == extents || ctx.growable) else {
            self.error(
                Diagnostic::error(format!(
                    "incompatible shapes: the slices {} and {} do not match",
                    shape_str(&extents),
                    shape_str(&shape)
                ))
                .at(ctx.def_span, format!("this has shape {}", shape_str(&extents)))
                .also(span, format!("this operand has shape {}", shape_str(&shape)))
                .note("the shapes of all slices in a statement must match (dimensions of length 1 broadcast)")
                .type_error(),
            );
            self.slice = Some(ctx);
            return None;
        };
        if merged != extents {
            // a reduction's operands broadcast to a larger shape: its
            // argument is lowered again over that shape
            let def_span = ctx.def_span;
            self.init_ctx(&mut ctx, merged, def_span);
            ctx.grown = true;
            let dummy = slots
                .into_iter()
                .filter_map(|s| match s {
                    IndexSlot::Scalar(e) => Some(e),
                    IndexSlot::Slice { lo, .. } | IndexSlot::Tied { lo, .. } => Some(lo),
                    IndexSlot::Gathered { .. } => Some(Expr::int(0, self.opts.int_type, span)),
                    IndexSlot::NewAxis | IndexSlot::Gather(_) => None,
                })
                .collect();
            self.slice = Some(ctx);
            return Some(dummy);
        }
        let int_ty = self.opts.int_type;
        let (n, m) = (extents.len(), shape.len());
        let int = Type::Scalar(int_ty);
        // `lo + step*j`, written `lo - |step|*j` for a negative step; `j`
        // rolled by `rot` of `n`: `j - (n - rot)`, wrapped as a negative
        // index (`ir::range` knows it is in `0..n`)
        let index = |lo: Expr, step: i64, var: Option<VarId>, (rot, n): (i64, i64)| {
            let Some(var) = var else {
                return lo;
            };
            let bin = |op, lhs: Expr, rhs: Expr| Expr::binary(op, lhs, rhs, int.clone(), span);
            let mut v = Expr::var(var, int.clone(), span);
            if rot != 0 {
                let back = bin(BinOp::Sub, v, Expr::int(n - rot, int_ty, span));
                v = crate::ir::range::negative_wrap(back, n);
            }
            if step.abs() != 1 {
                v = bin(BinOp::Mul, Expr::int(step.abs(), int_ty, span), v);
            }
            match const_int(&lo) {
                Some(0) if step > 0 => v,
                _ if step > 0 => bin(BinOp::Add, lo, v),
                _ => bin(BinOp::Sub, lo, v),
            }
        };
        // the counter of each slot's slice (`None`: its first element),
        // and the tied slots, indexed once their owners are known
        let mut counter: Vec<Option<VarId>> = vec![None; slots.len()];
        let mut tied = vec![];
        let mut out = vec![];
        let mut j = 0;
        // the gathered indices, read once the counters of the `Gather`
        // dimensions are known
        let mut gathered = vec![];
        let mut gather: Option<(Vec<i64>, Vec<VarId>)> = None;
        for (k, s) in slots.into_iter().enumerate() {
            if let IndexSlot::Tied { lo, step, owner } = s {
                tied.push((out.len(), lo, step, owner));
                out.push(Expr::int(0, int_ty, span));
                continue;
            }
            if let IndexSlot::Gathered { index, dim } = s {
                gathered.push((out.len(), index, dim));
                out.push(Expr::int(0, int_ty, span));
                continue;
            }
            if let IndexSlot::Gather(dims) = &s {
                // each dimension its counter: a dimension of length 1 read
                // at a longer one of the loops (NumPy broadcasting the
                // gathered values), or dropped, has none
                let mut vars = vec![];
                for &g in dims {
                    let d = n - m + if transposed { m - 1 - j } else { j };
                    j += 1;
                    if drop > 0 || (g == 1 && extents[d] != 1) || transposed {
                        let d = match transposed {
                            true => Diagnostic::error("an array of indices into a transpose (`x.T[idx]`) is not supported in parpy functions")
                                .at(span, "a transpose indexed with an array")
                                .help("index the array itself, the indices reversed (`x.T[idx]` is `x[:, idx].T`: `y[:, :] = x[:, idx].T`)"),
                            false => Diagnostic::error("an array of indices is supported here only where its dimensions are the result's")
                                .at(span, "indexed with an array")
                                .note("here a gathered dimension of length 1 is broadcast or dropped")
                                .help("index inside a loop over the indices (`for k in range(len(idx)): ...`)"),
                        };
                        self.error(d);
                        self.slice = Some(ctx);
                        return None;
                    }
                    vars.push(ctx.vars[d]);
                }
                gather = Some((dims.clone(), vars));
                continue;
            }
            if drop > 0 && !matches!(s, IndexSlot::Scalar(_)) {
                drop -= 1;
                if let IndexSlot::Slice { lo, .. } = s {
                    out.push(lo);
                }
                continue;
            }
            match s {
                IndexSlot::Scalar(e) => out.push(e),
                IndexSlot::NewAxis => j += 1,
                IndexSlot::Tied { .. } | IndexSlot::Gather(_) | IndexSlot::Gathered { .. } => {}
                IndexSlot::Slice {
                    lo,
                    extent,
                    step,
                    rot,
                } => {
                    let d = n - m + if transposed { m - 1 - j } else { j };
                    j += 1;
                    if extent != 1 || extents[d] == 1 {
                        counter[k] = Some(ctx.vars[d]);
                    }
                    let count = self.runtime_slot_count(&lo);
                    let mut at = index(lo, step, counter[k], (rot, extent));
                    // (a run-time slice that may be of one element: its
                    // counter `min(j, count - 1)`, `j` where the counts
                    // agree, its first element where it has one)
                    if let (Some(c), Some(v)) = (count, counter[k]) {
                        if broadcast_counts.contains(&c) {
                            let bin = |op, a, b| Expr::binary(op, a, b, int.clone(), span);
                            let var = Expr::var(v, int.clone(), span);
                            let last = bin(
                                BinOp::Sub,
                                Expr::var(c, int.clone(), span),
                                Expr::int(1, int_ty, span),
                            );
                            substitute(&mut at, v, &bin(BinOp::Min, var, last));
                        }
                    }
                    out.push(at);
                }
            }
        }
        for (at, lo, step, owner) in tied {
            out[at] = index(lo, step, counter[owner], (0, 0));
        }
        // each index array read at the counters of the gathered dimensions
        // (its own dimensions the last of them, as NumPy broadcasts)
        if let Some((dims, vars)) = gather {
            let sub = SliceCtx {
                extents: Some(dims),
                vars,
                def_span: span,
                growable: false,
                grown: false,
                runtime: None,
            };
            let saved = self.slice.replace(sub);
            let mut ok = true;
            for (at, index, dim) in gathered {
                let i = self
                    .lower_expr(&index)
                    .and_then(|t| self.element_index(t, "an array index"));
                match i {
                    Some(i) => out[at] = self.wrap_negative(i, dim),
                    None => ok = false,
                }
            }
            self.slice = saved;
            if !ok {
                self.slice = Some(ctx);
                return None;
            }
        }
        self.slice = Some(ctx);
        Some(out)
    }

    /// `map_slices` for an operand of more dimensions of a flat reduction
    /// (`runtime_slices.rs` `RtSlices::flat`, `img[i0:i1, j0:j1].mean()`):
    /// its elements one run in row-major order (NumPy's buffer of them)
    /// over the reduction's one counter `k`, a slice's index `lo + step *
    /// (k / inner % count)` where `inner` is the product of the counts of
    /// the slices after it; the run's count, the product of the counts,
    /// computed before the statement.
    fn flat_slices(&mut self, slots: Vec<IndexSlot>, span: Span) -> Option<Vec<Expr>> {
        let int_ty = self.opts.int_type;
        let it = Type::Scalar(int_ty);
        let plain =
            |s: &IndexSlot| matches!(s, IndexSlot::Scalar(_) | IndexSlot::Slice { rot: 0, .. });
        if !slots.iter().all(plain) {
            self.runtime_slice_unsupported(span);
            return None;
        }
        let counts: Vec<Expr> = slots
            .iter()
            .filter_map(|s| match s {
                IndexSlot::Slice { lo, extent, .. } => Some(match self.runtime_slot_count(lo) {
                    Some(c) => Expr::var(c, it.clone(), span),
                    None => Expr::int(*extent, int_ty, span),
                }),
                _ => None,
            })
            .collect();
        let extent: i64 = slots
            .iter()
            .map(|s| match s {
                IndexSlot::Slice { extent, .. } => *extent,
                _ => 1,
            })
            .product();
        self.flat_runtime_count(counts.clone(), extent, span);
        let mut ctx = self.slice.take()?;
        if ctx.extents.is_none() {
            self.init_ctx(&mut ctx, vec![extent], span);
        }
        let k = match ctx.extents.as_deref() {
            Some([n]) if *n == extent => ctx.vars[0],
            _ => {
                self.slice = Some(ctx);
                self.runtime_slice_unsupported(span);
                return None;
            }
        };
        self.slice = Some(ctx);
        let bin = |op, a: Expr, b: Expr| Expr::binary(op, a, b, it.clone(), span);
        let first = slots
            .iter()
            .position(|s| matches!(s, IndexSlot::Slice { .. }));
        let mut inner: Option<Expr> = None;
        let mut counts = counts.into_iter().rev();
        let mut out: Vec<Expr> = vec![];
        for (p, s) in slots.into_iter().enumerate().rev() {
            let (lo, step) = match s {
                IndexSlot::Slice { lo, step, .. } => (lo, step),
                IndexSlot::Scalar(e) => {
                    out.push(e);
                    continue;
                }
                _ => unreachable!("plain slots only"),
            };
            let count = counts.next().expect("one per slice");
            let k = Expr::var(k, it.clone(), span);
            let mut at = match &inner {
                None => k,
                Some(n) => bin(BinOp::FloorDiv, k, n.clone()),
            };
            if Some(p) != first {
                at = bin(BinOp::Mod, at, count.clone());
            }
            let step_at = bin(BinOp::Mul, Expr::int(step, int_ty, span), at);
            out.push(bin(BinOp::Add, lo, step_at));
            inner = Some(match inner {
                None => count,
                Some(n) => bin(BinOp::Mul, n, count),
            });
        }
        out.reverse();
        Some(out)
    }

    /// The labels of each of the `n` dimensions of a statement's loop
    /// nest: the last label to the innermost dimension, the one before it
    /// to the next dimension outwards, and so on.
    pub(super) fn labels_per_dim(
        &mut self,
        labels: &[(String, Span)],
        n: usize,
        span: Span,
    ) -> Option<Vec<Vec<String>>> {
        if labels.len() > n {
            let (extra, _) = labels.split_at(labels.len() - n);
            let mut d = Diagnostic::error(format!(
                "{} labels on a statement with {n} sliced dimension{}",
                labels.len(),
                if n == 1 { "" } else { "s" }
            ))
            .at(
                span,
                format!(
                    "this statement loops over {n} dimension{}",
                    if n == 1 { "" } else { "s" }
                ),
            );
            for (_, s) in extra {
                d = d.also(*s, "no dimension left for this label");
            }
            self.error(d.note(
                "the last label goes to the innermost sliced dimension, the one before it to the next dimension outwards",
            ));
            return None;
        }
        let mut per_dim = vec![vec![]; n - labels.len()];
        per_dim.extend(labels.iter().map(|l| vec![l.0.clone()]));
        Some(per_dim)
    }

    /// `target[... : ...] = value` as an elementwise loop nest.
    pub(super) fn slice_assign(
        &mut self,
        target: &ast::Expr,
        value: &ast::Expr,
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<Vec<Stmt>> {
        // (slices with run-time bounds: each loop of a run-time slice in
        // the target ended at its count, `runtime_slices.rs`)
        let from = self.pre.len();
        if let Some(scan) = self.cumulative_of(value) {
            return self.with_runtime_slices(from, span, |this| {
                this.cumulative_assign(target, value, scan, labels, span)
            });
        }
        if let Some((argsort, args)) = self.sort_of(value) {
            return self.sort_assign(target, argsort, &args, labels, span);
        }
        if let Some(joined) = self.concatenation_of(value) {
            return self.concatenate_assign(target, value, &joined, labels, span);
        }
        self.with_runtime_slices(from, span, |this| {
            this.slice_assign_loops(target, value, labels, span)
        })
    }

    /// `target[... : ...] = value`'s loop nests (and its dimensions).
    fn slice_assign_loops(
        &mut self,
        target: &ast::Expr,
        value: &ast::Expr,
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<super::runtime_slices::StatementLoops> {
        let from = self.pre.len();
        let (mut ctx, (array, indices, elem, alias), v) = self.slice_sides(target, value)?;
        // reductions with `axis=` compute an element of the right side each
        let mut inner = self.sink_dependent(from, &ctx.vars);
        let mut value = self.store_convert(v, elem, target.span)?;
        let mut indices = indices;
        let extents = ctx.extents.clone()?;
        let counts = ctx.runtime.clone().unwrap_or_default();
        let count = |d: usize| counts.get(d).copied().flatten();
        let mut ends: Vec<(VarId, Option<VarId>, i64)> = (0..extents.len())
            .map(|d| (ctx.vars[d], count(d), extents[d]))
            .collect();
        let per_dim = self.labels_per_dim(labels, extents.len(), span)?;
        // NumPy evaluates the right side before writing: a read of the
        // destination that another iteration writes must happen first. The
        // loop order sees to it when the loops are sequential and every read
        // is at a known distance; otherwise the right side goes through a
        // temporary (one more loop nest).
        let written: Vec<VarId> = match alias {
            Some(sel) => self.alias_of(sel).map(|c| c.to_vec()).unwrap_or_default(),
            None => vec![array],
        };
        let mut order = written
            .iter()
            .map(|a| overlap_order(*a, &indices, &value, &ctx.vars, &extents))
            .fold(Order::Any, Order::join);
        let (mut inner_used, mut inner_assigned) = (BTreeSet::new(), BTreeSet::new());
        for s in &inner {
            crate::ir::visit::stmt_uses(s, &mut inner_used, &mut inner_assigned);
        }
        if written.iter().any(|a| inner_used.contains(a)) {
            order = Order::Unknown;
        }
        // (a walk from the end of a run-time slice starts past its count)
        if matches!(order, Order::Backward) && ends.iter().any(|e| e.1.is_some()) {
            order = Order::Unknown;
        }
        let int_ty = self.opts.int_type;
        let mut out = vec![];
        match order {
            Order::Any => {}
            Order::Forward if labels.is_empty() => {}
            Order::Backward if labels.is_empty() => {
                // walk every slice dimension from its end
                for (v, n) in ctx.vars.iter().zip(&extents) {
                    let j = Expr::var(*v, Type::Scalar(int_ty), span);
                    let rev = Expr::new(
                        ExprKind::Binary {
                            op: BinOp::Sub,
                            lhs: Box::new(Expr::int(n - 1, int_ty, span)),
                            rhs: Box::new(j),
                        },
                        Type::Scalar(int_ty),
                        span,
                    );
                    indices.iter_mut().for_each(|e| substitute(e, *v, &rev));
                    substitute(&mut value, *v, &rev);
                    substitute_stmts(&mut inner, *v, &rev);
                }
            }
            _ => {
                // tmp[j...] = value; then dst[...] = tmp[j...] over fresh
                // counters (the same labels on both nests)
                let name = format!("{}_rhs", self.func.var(array).name);
                let tmp = self.new_var(
                    &name,
                    Type::Array {
                        elem,
                        shape: extents.clone(),
                    },
                    VarKind::Local,
                    span,
                );
                let at = |vars: &[VarId]| -> Vec<Expr> {
                    vars.iter()
                        .map(|v| Expr::var(*v, Type::Scalar(int_ty), span))
                        .collect()
                };
                let fill = StmtKind::Assign {
                    dst: Place::Index {
                        array: tmp,
                        indices: at(&ctx.vars),
                    },
                    value,
                };
                let mut fill_body = std::mem::take(&mut inner);
                fill_body.push(Stmt::new(fill, span));
                out.extend(loop_nest(
                    &ctx.vars,
                    &extents,
                    fill_body,
                    per_dim.clone(),
                    None,
                    int_ty,
                    span,
                ));
                let vars: Vec<VarId> = ctx
                    .vars
                    .iter()
                    .zip(&extents)
                    .map(|(_, n)| {
                        let v = self.new_var("j", Type::Scalar(int_ty), VarKind::LoopIndex, span);
                        self.loop_ranges
                            .set(v, crate::ir::range::Interval::new(0, *n as i128 - 1));
                        v
                    })
                    .collect();
                ends.extend((0..extents.len()).map(|d| (vars[d], count(d), extents[d])));
                for (old, new) in ctx.vars.iter().zip(&vars) {
                    let e = Expr::var(*new, Type::Scalar(int_ty), span);
                    indices.iter_mut().for_each(|i| substitute(i, *old, &e));
                }
                value = Expr::new(
                    ExprKind::Index {
                        array: tmp,
                        indices: at(&vars),
                    },
                    Type::Scalar(elem),
                    span,
                );
                ctx.vars = vars;
            }
        }
        let store = match alias {
            Some(sel) => self.alias_store(sel, indices, value, span),
            None => StmtKind::Assign {
                dst: Place::Index { array, indices },
                value,
            },
        };
        let mut body = inner;
        body.push(Stmt::new(store, span));
        out.extend(loop_nest(
            &ctx.vars, &extents, body, per_dim, None, int_ty, span,
        ));
        Some((out, ends))
    }

    /// The target and the right side of a slice assignment, lowered in one
    /// elementwise context: the context, the element the target stores
    /// (array, indices, element type, re-bound name), and the value.
    #[allow(clippy::type_complexity)]
    pub(super) fn slice_sides(
        &mut self,
        target: &ast::Expr,
        value: &ast::Expr,
    ) -> Option<(SliceCtx, (VarId, Vec<Expr>, ElemTy, Option<VarId>), TExpr)> {
        // (a statement's with run-time slices: their counts along its
        // dimensions)
        let fresh = SliceCtx {
            runtime: self
                .rt_slices
                .as_ref()
                .filter(|c| c.statement)
                .map(|_| vec![]),
            ..SliceCtx::default()
        };
        let saved = self.slice.replace(fresh);
        let t = self.lower_subscript(target);
        let v = self.lower_expr(value);
        let ctx = std::mem::replace(&mut self.slice, saved)?;
        let (t, v) = (t?, v?);
        let Sub::Elem {
            array,
            indices,
            elem,
            alias,
        } = t
        else {
            self.error(
                Diagnostic::error("cannot assign to a shape").at(target.span, "not assignable"),
            );
            return None;
        };
        Some((ctx, (array, indices, elem, alias), v))
    }

    /// `np.cumsum(s)` / `s.cumsum()` (and `cumprod`, and a ufunc's
    /// `accumulate`): the scan.
    pub(super) fn cumulative_of<'e>(&self, e: &'e ast::Expr) -> Option<Scan<'e>> {
        let ast::ExprKind::Call { func, args, .. } = &e.kind else {
            return None;
        };
        let op = |name: &str| match name {
            "cumsum" => Some(ScanOp::Reduce(ReduceOp::Sum)),
            "cumprod" => Some(ScanOp::Reduce(ReduceOp::Prod)),
            _ => None,
        };
        let scan = |op, ufunc| {
            Some(Scan {
                op,
                arg: args.first()?,
                axis: args.get(1),
                ufunc,
            })
        };
        // (`keywords.rs` has put the arguments in order: `a`, `axis`)
        match (&func.kind, self.builtin_of(func)) {
            // (`dtype` / `out` given: left to `compact`, which reports them)
            (
                _,
                Some(
                    Builtin::Cumulative(_)
                    | Builtin::UfuncAccumulate(_)
                    | Builtin::UfuncFoldScan(_),
                ),
            ) if args
                .iter()
                .skip(2)
                .any(|a| !matches!(a.kind, ast::ExprKind::None)) =>
            {
                None
            }
            (_, Some(Builtin::Cumulative(o))) => scan(ScanOp::Reduce(o), false),
            (_, Some(Builtin::UfuncAccumulate(o))) => scan(ScanOp::Reduce(o), true),
            (_, Some(Builtin::UfuncFoldScan(u))) => scan(ScanOp::Fold(u), true),
            (ast::ExprKind::Attr { value, attr }, None) if self.is_local_value(value) => {
                Some(Scan {
                    op: op(attr)?,
                    arg: value,
                    axis: args.first(),
                    ufunc: false,
                })
            }
            _ => None,
        }
    }

    /// The shape and element type of the array of `value` when only a
    /// slice assignment of it computes it (`np.sort(s)`, `np.argsort`,
    /// `np.cumsum(s)`, `np.concatenate`, ...): `None` for other values, `Some(None)` after an
    /// error. A name bound to one keeps it in a local array
    /// (`local_arrays.rs` `local_copy_assign`).
    pub(super) fn stored_array(&mut self, value: &ast::Expr) -> Option<Option<(Vec<i64>, ElemTy)>> {
        if let Some(scan) = self.cumulative_of(value) {
            let Some((shape, et)) = self.shape_of(scan.arg, "a scan") else {
                return Some(None);
            };
            let elem = match scan.op {
                ScanOp::Reduce(ReduceOp::Sum | ReduceOp::Prod) => numpy_sum_type(et, self.opts),
                ScanOp::Reduce(ReduceOp::Max | ReduceOp::Min) => et,
                ScanOp::Fold(u) => {
                    let name = format!("np.{u}.accumulate");
                    match self.fold_type(u, et, &name, true, value.span) {
                        Some(t) => t,
                        None => return Some(None),
                    }
                }
            };
            // (without an axis NumPy scans the flattened array)
            let flat = scan
                .axis
                .is_none_or(|a| matches!(a.kind, ast::ExprKind::None))
                && !scan.ufunc;
            let shape = match flat {
                true => vec![shape.iter().product()],
                false => shape,
            };
            return Some(Some((shape, elem)));
        }
        if let Some(joined) = self.concatenation_of(value) {
            return Some(self.concatenation_type(value, &joined));
        }
        let (argsort, args) = self.sort_of(value)?;
        let Some((shape, et)) = self.shape_of(args.first()?, "a sort") else {
            return Some(None);
        };
        Some(Some((shape, if argsort { self.opts.int_type } else { et })))
    }

    /// `np.cumsum` / `np.cumprod` where no slice assignment takes its
    /// array.
    pub(super) fn cumulative_outside_a_slice(&mut self, name: &str, span: Span) {
        self.error(
            Diagnostic::error(format!(
                "`{name}` gives an array: parpy computes it only as the whole right side of a slice assignment"
            ))
            .at(span, "an array here")
            .help("assign it to a slice of an array argument: `y[i, :] = np.cumsum(x[i, :])`"),
        );
    }

    /// `target[...] = np.cumsum(arg)` (or `np.cumprod`, or a ufunc's
    /// `accumulate`) of a slice `arg`, along one axis: one loop per line,
    /// in order, that adds (multiplies, takes the maximum of) each element
    /// into an accumulator of NumPy's type and stores the running result,
    /// as NumPy's `add.accumulate` does (a sum or product of float16 in
    /// float16, of narrow integers in the default integer; a maximum in the
    /// elements' type).
    fn cumulative_assign(
        &mut self,
        target: &ast::Expr,
        value: &ast::Expr,
        Scan {
            op,
            arg,
            axis,
            ufunc,
        }: Scan<'_>,
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<super::runtime_slices::StatementLoops> {
        let name = match (op, ufunc) {
            (ScanOp::Reduce(ReduceOp::Sum), false) => "cumsum".to_string(),
            (ScanOp::Reduce(ReduceOp::Prod), false) => "cumprod".to_string(),
            (ScanOp::Reduce(ReduceOp::Sum), true) => "np.add.accumulate".to_string(),
            (ScanOp::Reduce(ReduceOp::Prod), true) => "np.multiply.accumulate".to_string(),
            (ScanOp::Reduce(ReduceOp::Max), _) => "np.maximum.accumulate".to_string(),
            (ScanOp::Reduce(ReduceOp::Min), _) => "np.minimum.accumulate".to_string(),
            (ScanOp::Fold(u), _) => format!("np.{u}.accumulate"),
        };
        let name = name.as_str();
        let from = self.pre.len();
        if let Some(rt) = &mut self.rt_slices {
            rt.scan = true;
        }
        let (ctx, (array, indices, elem, alias), v) = self.slice_sides(target, arg)?;
        let extents = ctx.extents.clone()?;
        let counts = ctx.runtime.clone().unwrap_or_default();
        let ends = (0..extents.len())
            .map(|d| (ctx.vars[d], counts.get(d).copied().flatten(), extents[d]))
            .collect();
        // a label parallelizes the lines of a scan along an axis, never a
        // line itself
        if let Some((_, at)) = labels.first().filter(|_| extents.len() < 2) {
            self.error(
                Diagnostic::error(format!("`{name}` runs in order and takes no label"))
                    .at(*at, "this label")
                    .help("label a loop around the statement (each row's scan in parallel)"),
            );
            return None;
        }
        // the axis scanned (the only one of a 1-D slice)
        let axis = match axis.filter(|a| !matches!(a.kind, ast::ExprKind::None)) {
            Some(a) if matches!(a.kind, ast::ExprKind::Tuple(_)) => {
                self.error(
                    Diagnostic::error(format!("the `axis` of `{name}` is one integer"))
                        .at(a.span, "several axes")
                        .type_error(),
                );
                return None;
            }
            Some(a) => Some(self.one_axis(a, extents.len(), name)?),
            None => None,
        };
        let axis = match (axis, extents.len()) {
            (Some(k), _) => k,
            (None, 1) => 0,
            // (a ufunc's `accumulate` runs along axis 0 unless told)
            (None, _) if ufunc => 0,
            (None, _) => usize::MAX,
        };
        if axis == usize::MAX {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of a {}-dimensional slice is not supported",
                    extents.len()
                ))
                .at(arg.span, "not 1-D")
                .note("without an axis NumPy scans the flattened array")
                .help("scan one row at a time (`y[i, :] = np.cumsum(x[i, :])`)"),
            );
            return None;
        }
        let et = self.scalar_elem(&v)?;
        if et == ElemTy::Bool && op == ScanOp::Reduce(ReduceOp::Prod) {
            self.error(
                Diagnostic::error("`cumprod` of bools is not supported")
                    .at(arg.span, "a bool slice")
                    .help("convert it to an integer type first"),
            );
            return None;
        }
        // NumPy reads each element before it writes the running result
        // over it: a read of the destination at a later position is read
        // before it is written, one at an earlier position is not
        let written: Vec<VarId> = match alias {
            Some(sel) => self.alias_of(sel).map(|c| c.to_vec()).unwrap_or_default(),
            None => vec![array],
        };
        let order = written
            .iter()
            .map(|a| overlap_order(*a, &indices, &v.e, &ctx.vars, &extents))
            .fold(Order::Any, Order::join);
        if !matches!(order, Order::Any | Order::Forward) && labels.is_empty() {
            // (a hidden local has a length known when compiling)
            if self.runtime_sliced() {
                self.runtime_slice_unsupported(arg.span);
                return None;
            }
            // NumPy scans into a new array, then stores it: so does a
            // hidden local (`scan_1 = np.cumsum(y[:-1]); y[1:] = scan_1`)
            self.pre.truncate(from);
            let tmp = self.fresh_name("scan");
            self.once.bind_once(&tmp);
            let assign = |t: ast::Expr, v: ast::Expr| ast::Stmt {
                kind: ast::StmtKind::Assign {
                    targets: vec![t],
                    value: v,
                },
                span,
            };
            let read = ast::Expr::name(&tmp, span);
            let stmts = [
                assign(read.clone(), value.clone()),
                assign(target.clone(), read),
            ];
            return Some((self.lower_block(&stmts), vec![]));
        }
        if !matches!(order, Order::Any | Order::Forward) {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` into the array it reads, at positions it has written already"
                ))
                .at(span, "the destination overlaps the scanned slice")
                .help("scan into another array argument, or leave out the labels (the scan is then kept in a new array first, as NumPy does)"),
            );
            return None;
        }
        let scan_op = op;
        let (acc_ty, op) = match op {
            ScanOp::Reduce(o @ (ReduceOp::Sum | ReduceOp::Prod)) => {
                (numpy_sum_type(et, self.opts), o)
            }
            ScanOp::Reduce(o) => (et, o),
            // (a fold: `Max` stands for no identity, unused)
            ScanOp::Fold(u) => (self.fold_type(u, et, name, true, span)?, ReduceOp::Max),
        };
        let acc = self.new_var("acc", Type::Scalar(acc_ty), VarKind::Local, span);
        let acc_e = Expr::var(acc, Type::Scalar(acc_ty), span);
        // a float sum starts from -0.0, which every value added to it
        // keeps as it is (NumPy's first result is the first element, -0.0
        // included)
        let first = match (op, acc_ty.is_float()) {
            (ReduceOp::Sum, true) => Expr::new(ExprKind::Float(-0.0), Type::Scalar(acc_ty), span),
            _ => Expr::reduce_identity(op, acc_ty, span),
        };
        let one = self.scan_of_one(axis, span);
        // an operand of one element along the axis (`np.cumsum(x[c:c +
        // 1])` into a longer target): NumPy's scan of it is that element,
        // broadcast, each one combined with the start, not the running
        // value
        let update = match scan_op {
            ScanOp::Fold(u) => {
                let j = Expr::var(ctx.vars[axis], Type::Scalar(self.opts.int_type), span);
                let at_start =
                    Expr::compare(BinOp::Eq, j, Expr::int(0, self.opts.int_type, span), span);
                self.fold_scan_step(u, acc, v, at_start, one, span)?
            }
            ScanOp::Reduce(_) => {
                let running = match one {
                    None => acc_e.clone(),
                    Some(Expr {
                        kind: ExprKind::Bool(true),
                        ..
                    }) => first.clone(),
                    Some(one) => Expr::select(one, first.clone(), acc_e.clone()),
                };
                let update = Expr::binary(
                    op.combine(),
                    running,
                    convert(v.e, acc_ty),
                    Type::Scalar(acc_ty),
                    span,
                );
                vec![Stmt::assign_var(acc, update, span)]
            }
        };
        let value = self.store_convert(
            TExpr {
                e: acc_e,
                weak: false,
            },
            elem,
            target.span,
        )?;
        let store = match alias {
            Some(sel) => self.alias_store(sel, indices, value, span),
            None => StmtKind::Assign {
                dst: Place::Index { array, indices },
                value,
            },
        };
        let mut body = update;
        body.push(Stmt::new(store, span));
        // each line along the axis scanned in order from its own start,
        // the lines in any order (a 1-D slice: one line)
        let int_ty = self.opts.int_type;
        let scan = ForLoop::sequential(
            ctx.vars[axis],
            Expr::int(0, int_ty, span),
            Expr::int(extents[axis], int_ty, span),
            body,
        );
        let line = vec![
            Stmt::assign_var(acc, first, span),
            Stmt::new(StmtKind::For(Box::new(scan)), span),
        ];
        let (mut others, mut lengths) = (ctx.vars.clone(), extents.clone());
        others.remove(axis);
        lengths.remove(axis);
        let names = vec![labels.iter().map(|l| l.0.clone()).collect()];
        let nest = loop_nest(&others, &lengths, line, names, None, int_ty, span);
        Some((nest, ends))
    }

    /// `parpy.operators.<op>(arg)`: accumulator + hoisted reduction loops.
    pub(super) fn reduction(&mut self, op: ReduceOp, arg: &ast::Expr, span: Span) -> Option<TExpr> {
        self.reduction_with(op, arg, span, AccRule::NumPy)
            .map(|(t, _, _)| t)
    }

    /// A reduction over the slice expression `arg` whose accumulator type
    /// follows `rule`: the reduced value, the slice's element type, and the
    /// extents of the dimensions reduced.
    pub(super) fn reduction_with(
        &mut self,
        op: ReduceOp,
        arg: &ast::Expr,
        span: Span,
        rule: AccRule,
    ) -> Option<(TExpr, ElemTy, Vec<i64>)> {
        self.reduction_mapped(op, arg, span, rule, &|_, e| Some(e))
    }

    /// `reduction_with` of `map(element)` for each element of the slice
    /// expression `arg` (`np.nansum`: a NaN element as 0): `map` sees the
    /// element lowered, with its type, which the AST does not tell.
    pub(super) fn reduction_mapped(
        &mut self,
        op: ReduceOp,
        arg: &ast::Expr,
        span: Span,
        rule: AccRule,
        map: &dyn Fn(&mut Self, TExpr) -> Option<TExpr>,
    ) -> Option<(TExpr, ElemTy, Vec<i64>)> {
        let axes = self.axis.take();
        // the statement's labels are this reduction's, not those of a
        // reduction inside its argument (`np.max(np.sum(s, axis=1))`)
        let labels = self.red_labels.take();
        let python_builtin = std::mem::take(&mut self.python_extreme);
        let truths = std::mem::take(&mut self.truth_reduction);
        let from = self.pre.len();
        let (elem, ctx) = self.lower_reduced(arg);
        let ctx = ctx?;
        let mut elem = map(self, elem?)?;
        let et = self.scalar_elem(&elem)?;
        let Some(all) = ctx.extents else {
            self.error(
                Diagnostic::error(format!(
                    "the argument of the `{}` reduction contains no slice",
                    op.name()
                ))
                .at(arg.span, "nothing to reduce over")
                .help(format!(
                    "reduce over a slice or an array, e.g. `parpy.operators.{}(x[i, :])`",
                    op.name()
                )),
            );
            return None;
        };
        let mut inner = self.sink_dependent(from, &ctx.vars);
        // (the order NumPy walks the dimensions in, known before the kept
        // ones are mapped onto the statement's counters)
        let walk = axes
            .as_ref()
            .and_then(|a| self.axis_walk(&elem.e, &ctx.vars, &all, a));
        let (mut vars, mut extents, mut partial) = self.apply_axes(
            axes,
            (&ctx.vars, &all),
            (&mut elem.e, &mut inner),
            op.name(),
            span,
        )?;
        // a max or min of no elements raises, as NumPy's (and Python's) do
        // (when the kept dimensions are empty too: NumPy checks the reduced
        // ones)
        if extents.contains(&0) && !truths {
            let b = match (op, python_builtin) {
                (ReduceOp::Max, true) => Builtin::Max,
                (ReduceOp::Min, true) => Builtin::Min,
                _ => Builtin::Reduce(op),
            };
            if let Some(message) = super::masks::empty_extreme_message(b) {
                let never = Expr::new(ExprKind::Bool(false), Type::Scalar(ElemTy::Bool), span);
                let check = Expr::assert(never, Some(message.to_string()), "ValueError", span);
                self.pre.push(Stmt::new(StmtKind::Expr(check), span));
            }
        }
        // NumPy's order: the reduced dimensions outermost first in memory,
        // added in order where the innermost one is kept
        let mut core = vars.len();
        if let (Some(w), Some(_)) = (&walk, partial) {
            partial = Some(w.inner_kept);
            let mut dims: Vec<(VarId, i64)> = vars.into_iter().zip(extents).collect();
            dims.sort_by_key(|(v, _)| w.order.iter().position(|o| o == v));
            (vars, extents) = dims.into_iter().unzip();
            core = w.core;
        }
        // NumPy multiplies every element of a view in memory order
        if partial.is_none() && op == ReduceOp::Prod && rule != AccRule::InOrder {
            (vars, extents) = self.memory_order(&elem.e, &vars, &extents);
        }
        // NumPy adds along an axis that is not the last one in order, in
        // the elements' type (its inner loop runs over the result)
        let numpy_in_order = partial == Some(true) && rule != AccRule::InOrder;
        let unlabelled = labels.as_ref().is_none_or(|l| l.is_empty());
        // NumPy computes an operand whose elements need statements of their
        // own (an axis reduction inside: `np.sum(np.trace(b[i], 0, 0, 2))`)
        // into a new array, then sums that one dimension: so does the Cpu,
        // its elements in a local array first (an unlabelled float sum or
        // mean, as below)
        let n: i64 = extents.iter().product();
        if self.opts.backend == crate::options::Backend::Cpu
            && !inner.is_empty()
            && op == ReduceOp::Sum
            && unlabelled
            && partial.is_none()
            && (matches!(rule, AccRule::Mean | AccRule::VarMean)
                || rule == AccRule::NumPy && et.is_float())
            && (1..=MATERIALIZED_MAX).contains(&n)
            && !has_effects(&elem.e)
        {
            let j = self.materialize((&vars, &extents), &mut inner, &mut elem.e, et, span);
            (vars, extents) = (vec![j], vec![n]);
        }
        // an element that needs statements of its own (a reduction along an
        // axis inside) is added in order, in NumPy's accumulator type:
        // NumPy's pairwise result for fewer than 8 elements, close to it
        // for more (`passes::pairwise_sums` takes an expression)
        let stmts_per_elem = !inner.is_empty();
        // like NumPy, sums and products of bools and integers narrower than
        // the default integer accumulate in it (unsigned ones in the
        // unsigned integer of its width), float16 ones in float32, rounded
        // to float16 at the end
        let sum_or_prod = matches!(op, ReduceOp::Sum | ReduceOp::Prod);
        let int_ty = self.opts.int_type;
        // NumPy adds a 1-D float sum (`np.sum`, `np.mean`) pairwise. With
        // no label, such a sum keeps NumPy's order and accumulator type, so
        // that the Cpu backend gives NumPy's result bit for bit
        // (`passes::pairwise_sums`). NumPy's mean of float16 or integer
        // elements converts them in buffers of 8192 elements, each summed
        // pairwise, the buffers in order.
        //
        // Other float16 and float32 sums (and means) on the CPU (over
        // several dimensions, or labelled) accumulate in float64 and round
        // once at the end: the result has NumPy's type and is at least as
        // close to the exact value as NumPy's pairwise float32 sum (a long
        // float32 sum in float32, in the C compiler's order, missed it by
        // 1e-3 relative to NumPy's 1e-7). GPUs keep the narrow type.
        // Products keep it too: NumPy multiplies in order in the narrow
        // type, and a product that overflows there is inf, which float64
        // would not see.
        let buffered_mean = matches!(rule, AccRule::Mean | AccRule::VarMean) && !et.is_float();
        let pairwise = (op == ReduceOp::Sum
            && extents.len() == 1
            && unlabelled
            && !numpy_in_order
            && !stmts_per_elem
            && (matches!(rule, AccRule::Mean | AccRule::VarMean)
                || rule == AccRule::NumPy && et.is_float()))
        .then_some(
            if rule == AccRule::Mean && et == ElemTy::F16 || buffered_mean {
                NUMPY_BUFFER
            } else {
                i64::MAX
            },
        );
        // NumPy adds a float sum over several dimensions (no `axis`) in
        // runs, each pairwise, the runs in order (`numpy_runs`): the Cpu
        // keeps them, bit for bit, and so do the GPUs where the runs are
        // summed in place (no run copied into a local buffer, too large
        // for a GPU thread). A float16 sum rounds to float16 after each
        // run, as NumPy's float16 loop does.
        let cpu = self.opts.backend == crate::options::Backend::Cpu;
        // NumPy's mean converts integers, bools (to float64) and float16
        // (to float32) in its buffers
        let cast = buffered_mean || rule == AccRule::Mean && et == ElemTy::F16;
        // Along some axes whose innermost one in memory is reduced (`walk`),
        // NumPy adds the runs of the innermost reduced dimensions (the
        // `core`) the same way, for each step of the outer ones in order
        // (measured against NumPy 2.4 with casts left out)
        let outer = partial == Some(false) && walk.is_some() && !cast;
        let runs = (op == ReduceOp::Sum
            && extents.len() > 1
            && extents.iter().all(|&n| n > 0)
            && (partial.is_none() || outer)
            && unlabelled
            && !numpy_in_order
            && !stmts_per_elem
            && match rule {
                AccRule::NumPy => et.is_float(),
                AccRule::Mean | AccRule::VarMean => true,
                AccRule::Element | AccRule::InOrder => false,
            }
            && !has_effects(&elem.e))
        .then(|| {
            // (walked in memory order: the nest below too)
            let (vars, extents) = match outer {
                true => (vars.clone(), extents.clone()),
                false => self.memory_order(&elem.e, &vars, &extents),
            };
            let k = if outer { vars.len() - core } else { 0 };
            let (core_vars, core_extents) = (&vars[k..], &extents[k..]);
            let runs = numpy_runs(&self.view_dims(&elem.e, core_vars, core_extents), cast);
            (runs, vars, extents, k)
        })
        .filter(|(runs, ..)| cpu || runs.unit.is_none());
        let wide = self.opts.backend == crate::options::Backend::Cpu
            && op == ReduceOp::Sum
            && matches!(et, ElemTy::F16 | ElemTy::F32)
            && pairwise.is_none()
            && runs.is_none()
            && !numpy_in_order
            && !stmts_per_elem
            && !matches!(rule, AccRule::Element | AccRule::InOrder);
        let acc_ty = match (rule, et) {
            _ if wide => ElemTy::F64,
            // (NumPy's float16 sum: a float16 running sum, see `update`)
            (AccRule::NumPy | AccRule::VarMean, _) if runs.is_some() && et.is_float() => et,
            // (the mean inside `np.var` sums as `np.sum` does)
            (AccRule::NumPy | AccRule::VarMean, ElemTy::F16) if numpy_in_order => ElemTy::F16,
            // Python's `sum` and `np.dot` add in the elements' own type (a
            // bool counts as an int)
            (AccRule::Element | AccRule::InOrder, ElemTy::Bool) => int_ty,
            (AccRule::Element | AccRule::InOrder, _) => et,
            // `np.mean` sums integers and bools in float64, float16 in
            // float32
            (AccRule::Mean | AccRule::VarMean, ElemTy::F16) => ElemTy::F32,
            (AccRule::Mean | AccRule::VarMean, _) if !et.is_float() => ElemTy::F64,
            (AccRule::Mean | AccRule::VarMean, _) => et,
            (AccRule::NumPy, ElemTy::F16) if sum_or_prod => ElemTy::F32,
            (AccRule::NumPy, _) if !sum_or_prod => et,
            (AccRule::NumPy, _) => numpy_sum_type(et, self.opts),
        };
        // Python's `max(s)` of floats folds `v if v > m else m` from the
        // first element: NaN where that one is NaN, else the first of the
        // greatest elements, NaN ones skipped. So: the greatest with NaN
        // as -inf (no partial is NaN, ties keep the first), then the first
        // element where the rest is not greater, as Python compares.
        let python_first = (python_builtin
            && et.is_float()
            && matches!(op, ReduceOp::Max | ReduceOp::Min)
            && vars.len() == 1
            && extents[0] > 0
            && inner.is_empty()
            && crate::ir::visit::is_pure(&elem.e))
        .then(|| {
            let mut first = elem.e.clone();
            substitute(&mut first, vars[0], &Expr::int(0, int_ty, span));
            let e = &elem.e;
            let nan = super::calls::predicate(MathFn::IsNan, e.clone(), e.elem(), span);
            let none = Expr::reduce_identity(op, et, span);
            elem.e = Expr::select(nan, none, e.clone());
            first
        });
        let acc = self.new_var("acc", Type::Scalar(acc_ty), VarKind::Local, span);
        let acc_e = Expr::var(acc, Type::Scalar(acc_ty), span);
        let bop = op.combine();
        let narrow = runs.is_some() && acc_ty == ElemTy::F16;
        let update = |e: Expr| {
            if narrow {
                // NumPy's float16 sum: each run in float32, added to the
                // running float16 sum in float32 and rounded
                let f32 = |e| convert(e, ElemTy::F32);
                let sum = Expr::binary(
                    bop,
                    f32(acc_e.clone()),
                    f32(e),
                    Type::Scalar(ElemTy::F32),
                    span,
                );
                convert(sum, ElemTy::F16)
            } else if (acc_ty == ElemTy::F16 || python_first.is_some())
                && matches!(op, ReduceOp::Max | ReduceOp::Min)
            {
                // NumPy's float16 maximum keeps the first of a tie, as
                // Python's `max` does (the IR's max gives its second
                // operand, as NumPy's others do)
                Expr::binary(
                    bop,
                    convert(e, acc_ty),
                    acc_e.clone(),
                    Type::Scalar(acc_ty),
                    span,
                )
            } else {
                Expr::binary(
                    bop,
                    acc_e.clone(),
                    convert(e, acc_ty),
                    Type::Scalar(acc_ty),
                    span,
                )
            }
        };
        let element = elem.e;
        let mut body = inner;
        body.push(Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(acc),
                value: update(element.clone()),
            },
            span,
        ));
        // A reduction takes zero or one label, which covers all the
        // dimensions it reduces: a labelled reduction over several
        // dimensions is one loop over their product. The statement's next
        // reductions take the label too (`max(x[:]) + min(x[:])`).
        if labels.as_ref().is_some_and(|l| !l.is_empty()) {
            self.red_labels = labels.clone();
            self.red_labels_used = true;
        }
        let labels = labels.unwrap_or_default();
        if labels.len() > 1 {
            let mut d = Diagnostic::error(format!(
                "{} labels on a reduction: a reduction takes at most one label",
                labels.len()
            ))
            .at(span, "this reduction");
            for (_, s) in &labels[1..] {
                d = d.also(*s, "one label too many");
            }
            self.error(d.note("the label of a reduction covers all the dimensions it reduces"));
            return None;
        }
        let reduced = extents.clone();
        let (vars, extents) = if labels.is_empty() || extents.len() < 2 {
            (vars, extents)
        } else {
            let int_ty = self.opts.int_type;
            let flat = self.new_var("j", Type::Scalar(int_ty), VarKind::LoopIndex, span);
            let at = Expr::var(flat, Type::Scalar(int_ty), span);
            let n = unflatten(&mut body, &vars, &extents, &at, int_ty, span);
            (vec![flat], vec![n])
        };
        // Python's `sum` and NumPy's float products (not pairwise) add or
        // multiply in order: a sequential loop, not a reduction the C
        // compiler may reorder (a reordered float32 product can miss an
        // overflow to inf, or make one)
        let in_order =
            (rule == AccRule::InOrder || op == ReduceOp::Prod || numpy_in_order || stmts_per_elem)
                && acc_ty.is_float()
                && labels.is_empty();
        let labels = vec![labels.into_iter().map(|l| l.0).collect()];
        self.pre.push(Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(acc),
                value: Expr::reduce_identity(op, acc_ty, span),
            },
            span,
        ));
        let nest = match runs {
            Some((r, vars, extents, k)) => {
                let nest = self.run_nest(
                    r,
                    (&vars[k..], &extents[k..]),
                    body,
                    (acc, &update, &element),
                    span,
                );
                // (the outer reduced dimensions in order around the runs)
                loop_nest(&vars[..k], &extents[..k], nest, vec![], None, int_ty, span)
            }
            None => loop_nest(
                &vars,
                &extents,
                body,
                labels,
                (!in_order).then_some(Reduction {
                    op,
                    acc,
                    pairwise,
                    widened: wide,
                }),
                self.opts.int_type,
                span,
            ),
        };
        self.pre.extend(nest);
        // floats come back in their own type (the mean divides first)
        let e = if et.is_float() && acc_ty != et && rule != AccRule::Mean {
            convert(acc_e, et)
        } else {
            acc_e
        };
        let e = match python_first {
            Some(first) => {
                let cmp = match op {
                    ReduceOp::Max => BinOp::Gt,
                    _ => BinOp::Lt,
                };
                let rest_wins = Expr::compare(cmp, e.clone(), first.clone(), span);
                Expr::select(rest_wins, e, first)
            }
            None => e,
        };
        Some((TExpr { e, weak: false }, et, reduced))
    }
}

impl Lowerer<'_, '_> {
    /// `value[k0, k1, ...]` of an array-valued expression (`np.diff(u[i,
    /// :])[0]`, `a[i].sum(axis=0)[j]`, `(x[i, :] * 2)[-1]`), one integer per
    /// dimension: the expression's element there, each counter of its
    /// elementwise context replaced by its index (constants checked when
    /// compiling; a run-time index not known to be in range checked where
    /// it runs, raising Python's `IndexError`, as no array is left for the
    /// bounds checks to check it against).
    pub(super) fn element_of(
        &mut self,
        value: &ast::Expr,
        idx: &[&ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        if let Some(ix) = idx.iter().find(|ix| {
            matches!(
                ix.kind,
                ast::ExprKind::Slice { .. } | ast::ExprKind::Ellipsis
            ) || self.is_new_axis(ix)
        }) {
            self.error(
                Diagnostic::error("a computed array can only be indexed by integers")
                    .at(ix.span, "not an integer index")
                    .note("jit code does not allocate: a slice of a computed array would be a new array")
                    .help("slice the arrays the expression reads instead (`(x[i, :] * 2)[1:]` as `x[i, 1:] * 2`)"),
            );
            return None;
        }
        let mut at = vec![];
        for ix in idx {
            let t = self.lower_expr(ix)?;
            at.push((self.element_index(t, "an array index")?, ix.span));
        }
        // an item of a Python list literal (also a name of one, which
        // `alias.rs` reads as the list) is the item as Python reads it; an
        // element of `np.array([...])` a NumPy value of the array's type
        let weak = match value.list_items() {
            Some(_) => match self.list_item(value, &at, span)? {
                Ok(weak) => weak,
                Err(item) => return Some(item),
            },
            None => false,
        };
        let mut t = self.element_at(value, at, span)?;
        t.weak |= weak;
        Some(t)
    }

    /// `value[at]` of an array-valued expression, one index (and where it
    /// is written) per dimension, as `element_of`.
    pub(super) fn element_at(
        &mut self,
        value: &ast::Expr,
        at: Vec<(Expr, Span)>,
        span: Span,
    ) -> Option<TExpr> {
        let from = self.pre.len();
        let (elem, ctx) = self.lower_reduced(value);
        let (elem, ctx) = (elem?, ctx?);
        let Some(extents) = ctx.extents.clone() else {
            self.error(
                Diagnostic::error("a number cannot be indexed")
                    .at(value.span, "this is a number, not an array"),
            );
            return None;
        };
        if extents.len() != at.len() {
            self.error(
                Diagnostic::error(format!(
                    "this computed array has {} dimension{} but {} index{} given",
                    extents.len(),
                    if extents.len() == 1 { "" } else { "s" },
                    at.len(),
                    if at.len() == 1 { " was" } else { "es were" }
                ))
                .at(span, format!("shape {}", shape_str(&extents)))
                .help("give one integer per dimension: a computed array cannot be sliced"),
            );
            return None;
        }
        let mut inner = self.sink_dependent(from, &ctx.vars);
        let mut e = elem.e;
        for (axis, ((v, n), (i, ix))) in ctx.vars.iter().zip(&extents).zip(at).enumerate() {
            let i = match const_int(&i) {
                Some(c) if (-n..*n).contains(&c) => Expr::int(c.rem_euclid(*n), i.elem(), ix),
                Some(c) => {
                    self.error(
                        Diagnostic::error(format!(
                            "index {c} is out of bounds for a dimension of size {n} of this computed array"
                        ))
                        .at(ix, "out of bounds")
                        .also(value.span, format!("shape {}", shape_str(&extents))),
                    );
                    return None;
                }
                None => {
                    let written = i.clone();
                    let i = self.wrap_negative(i, *n);
                    if !self
                        .range(&i)
                        .is_some_and(|r| r.lo >= 0 && r.hi < *n as i128)
                    {
                        // checked where it runs: Python's IndexError (of an
                        // array, NumPy's, naming the index as written)
                        let what = match &value.kind {
                            _ if value.list_items().is_some() => {
                                "list index out of range".to_string()
                            }
                            ast::ExprKind::Tuple(_) => "tuple index out of range".to_string(),
                            _ => format!(
                                "index {{0}} is out of bounds for axis {axis} with size {n}"
                            ),
                        };
                        let ok = Expr::binary(
                            BinOp::And,
                            Expr::compare(BinOp::Ge, i.clone(), Expr::int(0, i.elem(), ix), ix),
                            Expr::compare(BinOp::Lt, i.clone(), Expr::int(*n, i.elem(), ix), ix),
                            Type::Scalar(ElemTy::Bool),
                            ix,
                        );
                        let check = Expr::assert_noting(
                            ok,
                            Some(what),
                            vec![(written, true)],
                            "IndexError",
                            false,
                            ix,
                        );
                        self.pre.push(Stmt::new(StmtKind::Expr(check), ix));
                    }
                    i
                }
            };
            substitute(&mut e, *v, &i);
            substitute_stmts(&mut inner, *v, &i);
        }
        self.pre.extend(inner);
        Some(TExpr { e, weak: false })
    }

    /// `np.flip(m)` / `np.flip(m, axis)` (`axis`: `np.fliplr` / `np.flipud`)
    /// of an array or a subscript: the subscript with its slices (or the
    /// one of the view's dimension `axis`) walked backwards. NumPy's
    /// `flip` is a view: nothing is computed, so a computed operand is
    /// refused with the rewrite.
    pub(super) fn flip(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        axis: Option<i64>,
        span: Span,
    ) -> Option<TExpr> {
        let (m, axis) = match (args, axis) {
            ([m], axis) => (m, axis),
            ([m, a], None) => (m, Some(self.known_axis(a, name)?)),
            _ => {
                self.arity_error(name, "1 argument and an `axis`", args.len(), span);
                return None;
            }
        };
        let sub = self.view_operand(m, name, "flip")?;
        self.lower_view(&sub, ViewOp::Flip(axis))
    }

    /// `np.diff(a, n, axis)` of an array or a subscript: `n` times the
    /// differences of neighbours along `axis` (the last by default), as
    /// NumPy computes them, `a[1:] - a[:-1]` in the elements' type (`!=`
    /// of bools); each operand a window of the subscript's slice.
    pub(super) fn diff(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let (a, n, axis) = match args {
            [a] => (a, 1, -1),
            [a, n] => (a, self.known_axis(n, name)?, -1),
            [a, n, axis] => (a, self.known_axis(n, name)?, self.known_axis(axis, name)?),
            _ => {
                self.arity_error(name, "1 argument, `n` and `axis`", args.len(), span);
                return None;
            }
        };
        if n < 0 {
            self.error(
                Diagnostic::error(format!("the order `n` of `{name}` is negative ({n})"))
                    .at(args[1].span, "negative")
                    .note("NumPy raises ValueError: order must be non-negative"),
            );
            return None;
        }
        let sub = self.view_operand(a, name, "take the differences of")?;
        self.differences(&sub, n, (axis, 0, n), span)
    }

    /// The `order`-th differences of `sub` along `axis`, from element
    /// `from` on, in windows `n` elements shorter than the slice
    /// (`ViewOp::Window`): NumPy's recursion, in its order of operations.
    fn differences(
        &mut self,
        sub: &ast::Expr,
        order: i64,
        (axis, from, n): (i64, i64, i64),
        span: Span,
    ) -> Option<TExpr> {
        if order == 0 {
            return self.lower_view(sub, ViewOp::Window { axis, from, n });
        }
        let hi = self.differences(sub, order - 1, (axis, from + 1, n), span)?;
        let lo = self.differences(sub, order - 1, (axis, from, n), span)?;
        let strong = |t: TExpr| TExpr {
            e: t.e,
            weak: false,
        };
        let bools = matches!(hi.e.ty, Type::Scalar(ElemTy::Bool));
        let op = if bools { BinOp::Ne } else { BinOp::Sub };
        self.binary(op, strong(hi), strong(lo), span)
    }

    /// `np.diagonal(a, offset, axis1, axis2)` (`a.diagonal(...)`),
    /// `np.diag(a, k)` of a 2-D view and `np.trace(a, offset, axis1,
    /// axis2)` of an array or a subscript: the view of the diagonal
    /// (`ViewOp::Diagonal`), and its sum for `trace`, reduced where the
    /// diagonal is (NumPy's sum of its last axis).
    pub(super) fn diagonal(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<TExpr> {
        let most = if b == Builtin::Diagonal(true) { 2 } else { 4 };
        let Some((a, rest)) = args.split_first().filter(|_| args.len() <= most) else {
            let what = if most == 2 {
                "1 argument and `k`"
            } else {
                "1 argument, `offset`, `axis1` and `axis2`"
            };
            self.arity_error(name, what, args.len(), span);
            return None;
        };
        let known: Vec<i64> = rest
            .iter()
            .map(|e| self.known_axis(e, name))
            .collect::<Option<_>>()?;
        let at = |k: usize, d: i64| known.get(k).copied().unwrap_or(d);
        let (offset, axes) = (at(0, 0), (at(1, 0), at(2, 1)));
        let sub = self.view_operand(a, name, "take the diagonal of")?;
        let rank = self.rank(&sub) as i64;
        if b == Builtin::Diagonal(true) && rank != 2 {
            let d = Diagnostic::error(format!("`{name}` of a {rank}-D view is not supported")).at(
                a.span,
                format!("{rank} dimension{}", if rank == 1 { "" } else { "s" }),
            );
            self.error(match rank {
                1 => d
                    .note("NumPy builds a new matrix with this vector on its diagonal")
                    .help("write the matrix: zero it (`y[i, :, :] = 0`), then `y[i, k, k] = v[k]` in a loop over `k`"),
                _ => d.note("NumPy raises ValueError: Input must be 1- or 2-d."),
            });
            return None;
        }
        let op = ViewOp::Diagonal {
            offset,
            axes,
            last: b != Builtin::Trace,
        };
        if b != Builtin::Trace {
            return self.lower_view(&sub, op);
        }
        // the view's other dimensions stay (reduced where the diagonal is)
        let norm = |a: i64| (-rank..rank).contains(&a).then(|| a.rem_euclid(rank));
        if let (true, Some(a1), Some(a2)) = (rank > 2, norm(axes.0), norm(axes.1)) {
            self.axis = Some(Axes {
                axes: vec![a1.min(a2)],
                keepdims: false,
                span,
            });
        }
        self.with_view(&sub, op, |l| l.reduction(ReduceOp::Sum, &sub, span))
    }

    /// `np.roll(a, shift, axis)` of an array or a subscript: the slice of
    /// `axis` (of a 1-D view without one) rolled, `shift` known when
    /// compiling. NumPy's copy has the same elements.
    pub(super) fn roll(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let (a, shift, axis) = match args {
            [a, s] => (a, self.known_axis(s, name)?, None),
            [a, s, ast::Expr {
                kind: ast::ExprKind::None,
                ..
            }] => (a, self.known_axis(s, name)?, None),
            [a, s, axis] => (
                a,
                self.known_axis(s, name)?,
                Some(self.known_axis(axis, name)?),
            ),
            _ => {
                self.arity_error(name, "2 arguments and an `axis`", args.len(), span);
                return None;
            }
        };
        let sub = self.view_operand(a, name, "roll")?;
        self.lower_view(&sub, ViewOp::Roll { shift, axis })
    }

    /// `np.cross(a, b)` of 3-element vectors along the last axis of two
    /// arrays or subscripts (broadcast): NumPy's products and difference,
    /// `a[1]*b[2] - a[2]*b[1]` and so on, each operand a rolled view.
    pub(super) fn cross(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<TExpr> {
        let [a, b] = args else {
            self.arity_error(name, "2 arguments", args.len(), span);
            return None;
        };
        let mut vector = |v: &ast::Expr| {
            let sub = self.view_operand(v, name, "take the cross product of")?;
            let n = *self.shape_of(&sub, name)?.0.last()?;
            if n != 3 {
                self.error(
                    Diagnostic::error(format!(
                        "`{name}` of vectors of {n} element{} is not supported",
                        if n == 1 { "" } else { "s" }
                    ))
                    .at(v.span, format!("vectors of {n} along the last axis"))
                    .note("parpy takes vectors of 3 elements (NumPy 2 deprecates those of 2, whose cross product is a number)"),
                );
                return None;
            }
            Some(sub)
        };
        let (a, b) = (vector(a), vector(b));
        let (a, b) = (a?, b?);
        let rolled = |l: &mut Self, sub: &ast::Expr, shift: i64| {
            let op = ViewOp::Roll {
                shift,
                axis: Some(-1),
            };
            l.lower_view(sub, op).map(|t| TExpr {
                e: t.e,
                weak: false,
            })
        };
        let (a1, b2) = (rolled(self, &a, -1)?, rolled(self, &b, -2)?);
        let (a2, b1) = (rolled(self, &a, -2)?, rolled(self, &b, -1)?);
        let p = self.binary(BinOp::Mul, a1, b2, span)?;
        let q = self.binary(BinOp::Mul, a2, b1, span)?;
        self.binary(BinOp::Sub, p, q, span)
    }

    /// `m` as a subscript for `np.flip` / `np.diff` (`what` they do): an
    /// array name is its whole subscript; anything else is refused.
    fn view_operand(&mut self, m: &ast::Expr, name: &str, what: &str) -> Option<ast::Expr> {
        match &m.kind {
            ast::ExprKind::Subscript { .. } => Some(m.clone()),
            ast::ExprKind::Name(n)
                if self.scope.get(n).is_some_and(|b| {
                    self.func.var(b.var).ty.is_array() || self.alias_of(b.var).is_some()
                }) =>
            {
                Some(ast::Expr {
                    kind: ast::ExprKind::Subscript {
                        value: Box::new(m.clone()),
                        indices: vec![],
                    },
                    span: m.span,
                })
            }
            // (`hoist.rs`' hidden name of a computed operand whose array
            // was refused: said there)
            ast::ExprKind::Name(n) if n.contains('@') && self.scope.get(n).is_none() => None,
            _ => {
                self.error(
                    Diagnostic::error(format!("`{name}` of a computed value is not supported"))
                        .at(m.span, "not an array or a subscript of one")
                        .help(format!(
                            "{what} the arrays it reads: `{name}(x[i, :]) * 2` for `{name}(x[i, :] * 2)`"
                        )),
                );
                None
            }
        }
    }

    /// `sub` lowered with its slices changed by `op` (`view_slots`).
    fn lower_view(&mut self, sub: &ast::Expr, op: ViewOp) -> Option<TExpr> {
        self.with_view(sub, op, |l| l.lower_expr(sub))
    }

    /// `f`, in which the subscript `sub` stands for its view by `op`
    /// (however often `f` lowers it: a reduction lowers its argument again
    /// when it broadcasts).
    fn with_view<T>(&mut self, sub: &ast::Expr, op: ViewOp, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.view_op.replace((sub.span, op));
        let r = f(self);
        self.view_op = saved;
        r
    }

    /// The axis `e` names of `nd` dimensions (an integer known when
    /// compiling, negative ones counted from the end).
    pub(super) fn one_axis(&mut self, e: &ast::Expr, nd: usize, name: &str) -> Option<usize> {
        let k = self.known_axis(e, name)?;
        let n = nd as i64;
        if !(-n..n).contains(&k) {
            self.error(
                Diagnostic::error(format!(
                    "axis {k} is out of bounds for array of dimension {n}"
                ))
                .at(e.span, "out of bounds")
                .note("NumPy raises an AxisError"),
            );
            return None;
        }
        Some(k.rem_euclid(n) as usize)
    }

    /// An integer argument known when compiling (`axis`, `n`).
    pub(super) fn known_axis(&mut self, e: &ast::Expr, name: &str) -> Option<i64> {
        let v = self.known_number(e, &format!("this argument of `{name}`"))?;
        if v.fract() != 0.0 {
            self.error(
                Diagnostic::error(format!("this argument of `{name}` is one integer"))
                    .at(e.span, "not an integer")
                    .type_error(),
            );
            return None;
        }
        Some(v as i64)
    }

    /// The slots of a subscript under `op` (its `axis`: of the view's
    /// dimensions, which come out reversed for `x.T`): `Flip`, each slice
    /// chosen walked from its last element, `lo + step * (extent - 1)`,
    /// by `-step`; `Window`, the slice from its element `from` on, `n`
    /// elements shorter.
    pub(super) fn view_slots(
        &mut self,
        slots: &mut [IndexSlot],
        op: ViewOp,
        transposed: bool,
        span: Span,
    ) -> Option<()> {
        // (a view of a slice with run-time bounds would need its count when
        // compiling)
        let runtime = |s: &IndexSlot| match s {
            IndexSlot::Slice { lo, .. } => self.runtime_slot_count(lo).is_some(),
            _ => false,
        };
        if slots.iter().any(runtime) {
            self.runtime_slice_unsupported(span);
            return None;
        }
        if slots.iter().any(|s| matches!(s, IndexSlot::Gather(_))) {
            self.error(
                Diagnostic::error("this view of a subscript with an array of indices is not supported in parpy functions")
                    .at(span, "indexed with an array")
                    .help("store the gathered elements into a local array first (`g = np.empty(...)`, `g[:] = x[idx]`)"),
            );
            return None;
        }
        let mut dims: Vec<usize> = (0..slots.len())
            .filter(|&k| !matches!(slots[k], IndexSlot::Scalar(_)))
            .collect();
        if transposed {
            dims.reverse();
        }
        let axis = match op {
            ViewOp::Flip(axis) => axis,
            ViewOp::Window { axis, .. } => Some(axis),
            ViewOp::Diagonal { offset, axes, last } => {
                return self.diagonal_slots(slots, &dims, (offset, axes, last), span);
            }
            ViewOp::Roll { axis: None, .. } if dims.len() != 1 => {
                self.error(
                    Diagnostic::error(format!(
                        "`np.roll` without an axis of a view of {} dimensions is not supported",
                        dims.len()
                    ))
                    .at(span, "this view")
                    .note("NumPy rolls the flattened array")
                    .help("give the axis to roll along (`np.roll(x[i], 1, axis=0)`)"),
                );
                return None;
            }
            ViewOp::Roll { axis, .. } => Some(axis.unwrap_or(0)),
        };
        let chosen = match axis {
            None => dims,
            Some(a) => vec![dims[self.view_axis(a, dims.len(), span)?]],
        };
        let int_ty = self.opts.int_type;
        let advance = |lo: &mut Expr, by: i64| advance(lo, by, int_ty, span);
        for k in chosen {
            match (&mut slots[k], op) {
                (
                    IndexSlot::Slice {
                        lo, extent, step, ..
                    },
                    ViewOp::Flip(_),
                ) => {
                    if *extent > 0 {
                        advance(lo, *step * (*extent - 1));
                    }
                    *step = -*step;
                }
                (
                    IndexSlot::Slice {
                        lo, extent, step, ..
                    },
                    ViewOp::Window { from, n, .. },
                ) => {
                    let len = (*extent - n).max(0);
                    if len > 0 {
                        advance(lo, *step * from);
                    }
                    *extent = len;
                }
                // element `k` is `k - shift`: `k + rot`, cyclically
                (IndexSlot::Slice { extent, rot, .. }, ViewOp::Roll { shift, .. })
                    if *extent > 0 =>
                {
                    *rot = (*extent - shift.rem_euclid(*extent)) % *extent;
                }
                // (a new axis: one element, which flips to itself; NumPy
                // takes the differences along it: none are left)
                (IndexSlot::NewAxis, ViewOp::Window { n, .. }) if n > 0 => {
                    self.error(
                        Diagnostic::error("`np.diff` along a new axis is not supported")
                            .at(span, "this view")
                            .help("take the differences along a dimension of the array"),
                    );
                    return None;
                }
                _ => {}
            }
        }
        Some(())
    }

    /// The view's dimension `a` of `n` (negative: from the end).
    fn view_axis(&mut self, a: i64, n: usize, span: Span) -> Option<usize> {
        let n = n as i64;
        if a < -n || a >= n {
            self.error(
                Diagnostic::error(format!(
                    "axis {a} is out of bounds for a view of {n} dimension{}",
                    if n == 1 { "" } else { "s" }
                ))
                .at(span, "this view")
                .note("NumPy raises AxisError"),
            );
            return None;
        }
        Some(a.rem_euclid(n) as usize)
    }

    /// `ViewOp::Diagonal` of the slots whose view dimensions are `dims`:
    /// the slice of the first of the two axes (in the view's order) walks
    /// the diagonal, the other is tied to its counter.
    fn diagonal_slots(
        &mut self,
        slots: &mut [IndexSlot],
        dims: &[usize],
        (offset, (axis1, axis2), last): (i64, (i64, i64), bool),
        span: Span,
    ) -> Option<()> {
        if dims.len() < 2 {
            self.error(
                Diagnostic::error(format!(
                    "a diagonal needs a view of at least 2 dimensions, not {}",
                    dims.len()
                ))
                .at(span, "this view")
                .note("NumPy raises ValueError: diag requires an array of at least two dimensions"),
            );
            return None;
        }
        let a1 = self.view_axis(axis1, dims.len(), span)?;
        let a2 = self.view_axis(axis2, dims.len(), span)?;
        if a1 == a2 {
            self.error(
                Diagnostic::error(format!(
                    "the two axes of a diagonal are the same ({axis1} and {axis2})"
                ))
                .at(span, "this view")
                .note("NumPy raises ValueError: axis1 and axis2 cannot be the same"),
            );
            return None;
        }
        if last && a1.min(a2) != dims.len() - 2 {
            self.error(
                Diagnostic::error(
                    "a diagonal of axes other than the last two of a view is not supported",
                )
                .at(span, format!("a view of {} dimensions", dims.len()))
                .note("NumPy puts the diagonal after the other dimensions")
                .help("take the diagonal of the last two axes (`axis1=-2, axis2=-1`), or of a subscript that leaves two dimensions"),
            );
            return None;
        }
        let slice = |s: &IndexSlot| match s {
            IndexSlot::Slice { extent, step, .. } => Some((*extent, *step)),
            _ => None,
        };
        let (Some((n1, _)), Some((n2, _))) = (slice(&slots[dims[a1]]), slice(&slots[dims[a2]]))
        else {
            self.error(
                Diagnostic::error("a diagonal along a new axis is not supported")
                    .at(span, "this view")
                    .help("take the diagonal of two dimensions of the array"),
            );
            return None;
        };
        // `offset` elements into the second axis (the first, when negative)
        let len = if offset >= 0 {
            n1.min(n2 - offset)
        } else {
            (n1 + offset).min(n2)
        }
        .max(0);
        let int_ty = self.opts.int_type;
        let start = |slot: &mut IndexSlot, skip: i64| {
            if let IndexSlot::Slice { lo, step, .. } = slot {
                if len > 0 {
                    advance(lo, *step * skip, int_ty, span);
                }
            }
        };
        start(&mut slots[dims[a1]], (-offset).max(0));
        start(&mut slots[dims[a2]], offset.max(0));
        let (owner, tied) = (dims[a1.min(a2)], dims[a1.max(a2)]);
        let tie = IndexSlot::Tied {
            lo: Expr::int(0, int_ty, span),
            step: 0,
            owner,
        };
        if let IndexSlot::Slice { lo, step, .. } = std::mem::replace(&mut slots[tied], tie) {
            slots[tied] = IndexSlot::Tied { lo, step, owner };
        }
        if let IndexSlot::Slice { extent, .. } = &mut slots[owner] {
            *extent = len;
        }
        Some(())
    }
}

impl Lowerer<'_, '_> {
    /// `arg`, a 1-D slice, to read at computed indices: its elements
    /// copied into a local array first when they need statements of their
    /// own; `not_1d` is the error for another argument.
    pub(super) fn indexed(
        &mut self,
        arg: &ast::Expr,
        not_1d: Diagnostic,
        span: Span,
    ) -> Option<Indexed> {
        let from = self.pre.len();
        let (elem, ctx) = self.lower_reduced(arg);
        let (ctx, elem) = (ctx?, elem?);
        let Some(&[n]) = ctx.extents() else {
            self.error(not_1d);
            return None;
        };
        let et = self.scalar_elem(&elem)?;
        let mut inner = self.sink_dependent(from, ctx.vars());
        let mut elem = elem.e;
        let var = match inner.is_empty() {
            true => ctx.vars()[0],
            false => self.materialize((ctx.vars(), &[n]), &mut inner, &mut elem, et, span),
        };
        Some(Indexed { elem, var, n, et })
    }

    /// `None` (and an error) when the statement's reduction is labelled:
    /// `name` (a search, `np.median`) runs sequentially.
    pub(super) fn sequential_only(&mut self, name: &str) -> Option<()> {
        // (the label of another reduction of the statement: this one, and
        // those after it, run in order)
        if self.red_labels_used {
            self.red_labels = None;
            return Some(());
        }
        if let Some(labels) = self.red_labels.take().filter(|l| !l.is_empty()) {
            self.error(
                Diagnostic::error(format!("`{name}` runs sequentially and takes no label"))
                    .at(labels[0].1, "this label")
                    .help("remove the label, or label a loop around the statement"),
            );
            return None;
        }
        Some(())
    }

    /// `np.argmax(s)` / `s.argmax()` (and `argmin`) of a slice or array:
    /// a sequential loop that keeps the first index (into the flattened
    /// slice, for more than one dimension) of the largest
    /// (smallest) element, as NumPy; a NaN counts as the extreme (NumPy
    /// gives the index of the first NaN). In the default integer type
    /// (int64 as NumPy's `intp`, unless `force_int_size` says otherwise).
    /// `np.argmax` / `np.argmin` (`max`), or `np.nanargmax` /
    /// `np.nanargmin` (`skip_nan`: NumPy's search of the values with each
    /// NaN read as -inf / inf, a ValueError where all are NaN).
    pub(super) fn arg_extreme(
        &mut self,
        max: bool,
        skip_nan: bool,
        arg: &ast::Expr,
        span: Span,
    ) -> Option<TExpr> {
        let name = match (skip_nan, max) {
            (false, true) => "argmax",
            (false, false) => "argmin",
            (true, true) => "nanargmax",
            (true, false) => "nanargmin",
        };
        let axes = self.axis.take();
        if let Some(a) = axes.as_ref().filter(|a| a.axes.len() != 1) {
            self.error(
                Diagnostic::error(format!("the `axis` of `{name}` is one integer"))
                    .at(a.span, "several axes")
                    .type_error(),
            );
            return None;
        }
        let from = self.pre.len();
        let (elem, ctx) = self.lower_reduced(arg);
        let ctx = ctx?;
        let mut elem = elem?;
        let et = self.scalar_elem(&elem)?;
        let fail = |this: &mut Self, msg: String, label: &str, help: &str| {
            this.error(
                Diagnostic::error(msg)
                    .at(arg.span, label.to_string())
                    .help(help.to_string()),
            );
            None
        };
        let mut inner = vec![];
        let (vars, extents) = match ctx.extents {
            Some(all) => {
                inner = self.sink_dependent(from, &ctx.vars);
                let (v, e, _) = self.apply_axes(
                    axes,
                    (&ctx.vars, &all),
                    (&mut elem.e, &mut inner),
                    name,
                    span,
                )?;
                (v, Some(e))
            }
            None => (vec![], None),
        };
        // (with `axis=`, the one axis searched)
        let dims = match extents {
            Some(dims) => dims,
            None => {
                return fail(
                    self,
                    format!("the argument of `{name}` contains no slice"),
                    "nothing to search",
                    &format!("pass a 1-D slice or array, e.g. `np.{name}(x[i, :])`"),
                )
            }
        };
        let n: i64 = dims.iter().product();
        // no elements: NumPy's ValueError when it runs, as `np.max`'s
        // (`reduction_with`)
        if n == 0 {
            let b = match max {
                true => Builtin::ArgMax,
                false => Builtin::ArgMin,
            };
            let message = super::masks::empty_extreme_message(b)?;
            let never = Expr::new(ExprKind::Bool(false), Type::Scalar(ElemTy::Bool), span);
            let check = Expr::assert(never, Some(message.to_string()), "ValueError", span);
            self.pre.push(Stmt::new(StmtKind::Expr(check), span));
            let e = Expr::int(0, self.opts.int_type, span);
            return Some(TExpr { e, weak: false });
        }
        self.sequential_only(name)?;
        let int_ty = self.opts.int_type;
        let et_ty = Type::Scalar(et);
        let best = self.new_var("best", et_ty.clone(), VarKind::Local, span);
        let best_index = self.new_var(name, Type::Scalar(int_ty), VarKind::Local, span);
        let v = self.new_var("v", et_ty.clone(), VarKind::Local, span);
        let var = |id| Expr::var(id, et_ty.clone(), span);
        let bool_op = |op, l, r| Expr::binary(op, l, r, Type::Scalar(ElemTy::Bool), span);
        let assign = |dst, value| Stmt::assign_var(dst, value, span);
        let zero = Expr::int(0, int_ty, span);
        let mut first = elem.e.clone();
        for j in &vars {
            substitute(&mut first, *j, &zero);
        }
        let wins = bool_op(if max { BinOp::Gt } else { BinOp::Lt }, var(v), var(best));
        // `np.nanargmax`: each value a number, a NaN the infinity that
        // never wins (NumPy's `_replace_nan`); whether any was a number
        let numbers = (skip_nan && et.is_float()).then(|| {
            let seen = self.new_var("numbers", Type::Scalar(ElemTy::Bool), VarKind::Local, span);
            let inf = if max {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            let inf = Expr::new(ExprKind::Float(inf), et_ty.clone(), span);
            let replaced = |id| {
                let nan = bool_op(BinOp::Ne, var(id), var(id));
                assign(
                    id,
                    Expr::select_as(nan, inf.clone(), var(id), et_ty.clone(), span),
                )
            };
            let seen_now = |id| bool_op(BinOp::Eq, var(id), var(id));
            let bool_var = Expr::var(seen, Type::Scalar(ElemTy::Bool), span);
            let update = assign(seen, bool_op(BinOp::Or, bool_var.clone(), seen_now(v)));
            (
                bool_var,
                [assign(seen, seen_now(best)), replaced(best)],
                [update, replaced(v)],
            )
        });
        let cond = if et.is_float() && !skip_nan {
            // a NaN wins unless the best is one already
            let nan = bool_op(BinOp::Ne, var(v), var(v));
            let best_num = bool_op(BinOp::Eq, var(best), var(best));
            bool_op(BinOp::Or, wins, bool_op(BinOp::And, nan, best_num))
        } else {
            wins
        };
        // the index into the flattened slice, NumPy's answer for more
        // than one dimension: `j0 * d1 * d2 + j1 * d2 + j2`
        let int = |k| Expr::int(k, int_ty, span);
        let int_op = |op, l, r| Expr::binary(op, l, r, Type::Scalar(int_ty), span);
        let mut index: Option<Expr> = None;
        for (k, j) in vars.iter().enumerate() {
            let stride: i64 = dims[k + 1..].iter().product();
            let mut term = Expr::var(*j, Type::Scalar(int_ty), span);
            if stride != 1 {
                term = int_op(BinOp::Mul, term, int(stride));
            }
            index = Some(match index {
                Some(sum) => int_op(BinOp::Add, sum, term),
                None => term,
            });
        }
        let index = index?;
        // what the element needs computed first (a reduction with `axis=`
        // in it): for the first element, and in the loop for the others
        let mut first_inner = inner.clone();
        for j in &vars {
            substitute_stmts(&mut first_inner, *j, &zero);
        }
        let mut body = inner;
        body.push(assign(v, elem.e));
        if let Some((_, _, in_loop)) = &numbers {
            body.extend(in_loop.iter().cloned());
        }
        body.extend([Stmt::new(
            StmtKind::If {
                cond,
                then_body: vec![assign(best, var(v)), assign(best_index, index)],
                else_body: vec![],
            },
            span,
        )]);
        // one loop from the second element; for more dimensions, nested
        // loops over all of them (the first element does not win again)
        let search = match vars[..] {
            [j] => {
                let l = ForLoop::sequential(j, int(1), int(n), body);
                vec![Stmt::new(StmtKind::For(Box::new(l)), span)]
            }
            _ => loop_nest(&vars, &dims, body, vec![], None, int_ty, span),
        };
        self.pre.extend(first_inner);
        self.pre.push(assign(best, first));
        if let Some((_, at_first, _)) = &numbers {
            self.pre.extend(at_first.iter().cloned());
        }
        self.pre.push(assign(best_index, zero));
        self.pre.extend(search);
        if let Some((any, _, _)) = numbers {
            self.raise_unless(vec![(any, "All-NaN slice encountered", "ValueError")], span);
        }
        Some(TExpr {
            e: Expr::var(best_index, Type::Scalar(int_ty), span),
            weak: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{merge_dims, numpy_runs, Runs};

    #[test]
    fn dims_that_step_over_each_other_merge() {
        // x[i] of a (.., 5, 6) array; x[i, 1:4, 1:] of it; a column x[:, 0]
        assert_eq!(merge_dims(&[(5, 6), (6, 1)]), vec![30]);
        assert_eq!(merge_dims(&[(3, 6), (5, 1)]), vec![3, 5]);
        assert_eq!(merge_dims(&[(7, 1), (1, 1), (4, 7)]), vec![7, 4]);
        assert_eq!(merge_dims(&[(1, 9), (4, 3), (3, 1)]), vec![12]);
        // x[i, ::-1, :] and x[i, :, ::-1] do not merge; x[i, ::-1] of 1-D rows does
        assert_eq!(merge_dims(&[(5, -6), (6, 1)]), vec![5, 6]);
        assert_eq!(merge_dims(&[(5, 6), (6, -1)]), vec![5, 6]);
        assert_eq!(merge_dims(&[(5, -6), (3, 2)]), vec![5, 3]);
        assert_eq!(merge_dims(&[(5, -6), (3, -2)]), vec![15]);
        assert_eq!(merge_dims(&[(5, -6), (6, -1)]), vec![30]);
    }

    #[test]
    fn runs_follow_numpys_buffers() {
        let runs = |blocks, block, run, unit| Runs {
            blocks,
            block,
            run,
            unit,
        };
        // one dimension: one pairwise sum in place
        assert_eq!(
            numpy_runs(&[100_000], false),
            runs(1, 100_000, i64::MAX, None)
        );
        // all in one buffer
        assert_eq!(numpy_runs(&[18, 18], false), runs(1, 324, 324, Some(324)));
        // rows of 98 in runs of 83 rows
        assert_eq!(
            numpy_runs(&[298, 98], false),
            runs(1, 29204, 8134, Some(98))
        );
        // planes of 29 x 39 in runs of 7 planes
        assert_eq!(
            numpy_runs(&[20, 29, 39], false),
            runs(1, 22620, 7917, Some(1131))
        );
        // rows of 399 in runs of 20 rows that stop at each plane
        assert_eq!(
            numpy_runs(&[8, 29, 399], false),
            runs(8, 11571, 7980, Some(399))
        );
        // rows longer than a buffer: one at a time, in place
        assert_eq!(
            numpy_runs(&[3, 19000], false),
            runs(3, 19000, i64::MAX, None)
        );
        // a mean that converts: the one dimension, or each long row, in
        // runs of a buffer
        assert_eq!(numpy_runs(&[100_000], true), runs(1, 100_000, 8192, None));
        assert_eq!(numpy_runs(&[3, 19000], true), runs(3, 19000, 8192, None));
        assert_eq!(numpy_runs(&[298, 98], true), numpy_runs(&[298, 98], false));
    }
}
