//! Subscripts of slices: `x[i, 1:][j]`, `x[2:8][1:3]`, `x[:, k][i]`,
//! `x.T[1:][0]`, and the views that make them (`r = x[i, 1:]`, then
//! `r[j]`).
//!
//! NumPy indexes a slice's own dimensions: `x[1:][0]` is `x[1]`. Such a
//! chain is rewritten into the one subscript of the array it reads, each
//! later index taking the place of the next sliced dimension: an index
//! `j` of a slice `lo:hi:s` is `lo + s * j`, a slice of a slice is a slice
//! with composed bounds; a window's start stays as written (`w = x[i, j:j +
//! 3]`, then `w[1]` is `x[i, j + 1]`). NumPy raises an `IndexError` for an index outside
//! the slice even where the array has an element, so an index must be
//! known to stay inside the slice: a constant is checked when compiling, a
//! run-time index must be proven in range by the loops around it
//! (`ir::range`), or the chain is refused with the subscript to write.

use crate::diag::{Diagnostic, Span};
use crate::ir::Type;
use crate::syntax::ast;

use super::slices::IndexSlot;
use super::Lowerer;

impl Run {
    /// The first index of a slice inside a slice (`1` of `w[1:]`), which
    /// `slice_bounds` has made a number.
    fn lo_int(&self) -> Option<i64> {
        match self.lo.kind {
            ast::ExprKind::Int(c) => Some(c),
            _ => None,
        }
    }
}

/// `1 element`, `4 elements`.
fn counted(n: i64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn int(v: i64, span: Span) -> Box<ast::Expr> {
    Box::new(ast::Expr::int(v, span))
}

/// The slice `lo, lo + step, ...` of `extent` elements as Python writes it
/// (a stop that would be negative is left out: `-1` counts from the end).
/// No elements is `0:0`: the first index of an empty slice of a slice is
/// no element's (`x[:0][::-1]` would start at `-1`, the last).
fn slice_expr(lo: i64, extent: i64, step: i64, span: Span) -> ast::Expr {
    let (lo, step) = if extent > 0 { (lo, step) } else { (0, 1) };
    let hi = lo + step * extent;
    ast::Expr {
        kind: ast::ExprKind::Slice {
            lo: Some(int(lo, span)),
            hi: (hi >= 0).then(|| int(hi, span)),
            step: (step != 1).then(|| int(step, span)),
        },
        span,
    }
}

/// `lo + c`, folded where `lo` is a number.
fn plus(lo: &ast::Expr, c: i64, span: Span) -> ast::Expr {
    match lo.kind {
        ast::ExprKind::Int(v) => ast::Expr::int(v + c, span),
        _ if c == 0 => lo.clone(),
        _ => ast::Expr::binary(crate::ir::BinOp::Add, lo.clone(), *int(c, span), span),
    }
}

/// The elements a slice selects: its first index (a number, or a window's
/// start as written: `j` of `x[j:j + 3]`), step and length.
struct Run {
    lo: ast::Expr,
    step: i64,
    extent: i64,
}

impl Lowerer<'_, '_> {
    /// A subscript of a view (`x[1:3][0]`, `x[idx][0]`, `x[None][0]`): the
    /// inner subscript's span. NumPy indexes the view's own dimensions, so
    /// such a chain is not the one subscript of all its indices (`x[1:3,
    /// 0]`); a chain of numbers only (`x[i][j]`) is.
    pub(super) fn subscript_of_a_view(&self, e: &ast::Expr) -> Option<Span> {
        let ast::ExprKind::Subscript { value, .. } = &e.kind else {
            return None;
        };
        match &value.kind {
            ast::ExprKind::Subscript { indices, .. }
                if indices.iter().any(|i| {
                    matches!(
                        i.kind,
                        ast::ExprKind::Slice { .. } | ast::ExprKind::Ellipsis
                    ) || self.is_new_axis(i)
                        || self.rank(i) > 0
                }) =>
            {
                Some(value.span)
            }
            _ => self.subscript_of_a_view(value),
        }
    }

    /// The elements the slice `s` of a dimension of `dim` elements selects:
    /// `Some(None)` when `s` is not a slice, `None` after an error.
    fn slice_run(&mut self, s: &ast::Expr, dim: i64) -> Option<Option<Run>> {
        let ast::ExprKind::Slice { lo, hi, step } = &s.kind else {
            return Some(None);
        };
        let parts = (lo.as_deref(), hi.as_deref(), step.as_deref());
        let IndexSlot::Slice {
            lo: first,
            extent,
            step,
            rot: 0,
        } = self.slice_bounds(parts, dim, s.span)?
        else {
            return Some(None);
        };
        let lo = match (super::types::const_int(&first), lo) {
            (Some(c), _) => ast::Expr::int(c, s.span),
            // a window (`slice_bounds` has checked it stays inside)
            (None, Some(l)) => (**l).clone(),
            (None, None) => return Some(None),
        };
        Some(Some(Run { lo, step, extent }))
    }

    /// `s` with its store target rewritten when that is a subscript of a
    /// slice (`x[i, 1:][j] = v`, `x[2:][:3] += 1`): `None` when it is not,
    /// `Some(None)` after an error.
    pub(super) fn composed_target(&mut self, s: &ast::Stmt) -> Option<Option<ast::Stmt>> {
        let mut c = s.clone();
        let target = match &mut c.kind {
            ast::StmtKind::Assign { targets, .. } if targets.len() == 1 => &mut targets[0],
            ast::StmtKind::AugAssign { target, .. } => target,
            _ => return None,
        };
        self.subscript_of_a_view(target)?;
        *target = match self.composed_subscript(target) {
            Some(t) => t,
            None => return Some(None),
        };
        Some(Some(c))
    }

    /// `e` (a subscript of a slice, `x[i, 1:][j]`) as the one subscript of
    /// the array it reads; `None` after an error.
    pub(super) fn composed_subscript(&mut self, e: &ast::Expr) -> Option<ast::Expr> {
        let ast::ExprKind::Subscript { value, indices } = &e.kind else {
            return Some(e.clone());
        };
        let inner = match self.subscript_of_a_view(value) {
            Some(_) => self.composed_subscript(value)?,
            None => (**value).clone(),
        };
        let (base, first) = super::expr::flatten_subscript(&inner);
        let what = match &value.kind {
            ast::ExprKind::Subscript { indices, .. }
                if !indices
                    .iter()
                    .any(|i| matches!(i.kind, ast::ExprKind::Slice { .. })) =>
            {
                "a view"
            }
            _ => "a slice",
        };
        let refuse = |this: &mut Self, why: &str| {
            this.error(
                Diagnostic::error(format!("indexing {what} again is not supported here"))
                    .at(value.span, what)
                    .also(e.span, "indexed again here")
                    .note(why.to_string())
                    .help("write the element or slice of the array in one subscript (`x[1:3][0]` as `x[1]`, `x[2:][1:]` as `x[3:]`)"),
            );
            None
        };
        // (of `x.T`, the dimensions reversed: `x[i].T[0, :]`, which
        // `stmt.rs` has made `x.T[:, :, i][0, :]`, is `x.T[0, :, i]`)
        let (array, transposed) = match super::expr::transpose_of(base) {
            Some(x) => (x, true),
            None => (base, false),
        };
        let shape = match self.array_arg(array) {
            Some((_, Type::Array { mut shape, .. }))
                if matches!(array.kind, ast::ExprKind::Name(_)) =>
            {
                if transposed {
                    shape.reverse();
                }
                shape
            }
            _ => {
                return refuse(
                    self,
                    "only a slice of an array argument or a view of one can be indexed again",
                )
            }
        };
        if first
            .iter()
            .copied()
            .chain(indices.iter())
            .any(|i| matches!(i.kind, ast::ExprKind::Ellipsis))
        {
            return refuse(self, "a chain with `...` is not rewritten");
        }
        let mut out: Vec<ast::Expr> = first.into_iter().cloned().collect();
        let new_axis: Vec<bool> = out.iter().map(|i| self.is_new_axis(i)).collect();
        let given = new_axis.iter().filter(|n| !**n).count();
        if given > shape.len() {
            // the error for too many indices comes from lowering it
            return Some(inner);
        }
        for _ in given..shape.len() {
            out.push(ast::Expr::full_slice(value.span));
        }
        let new_axis: Vec<bool> = out.iter().map(|i| self.is_new_axis(i)).collect();
        // the array dimension each index of `out` indexes
        let dim_of = |new_axis: &[bool], k: usize| new_axis[..k].iter().filter(|n| !**n).count();
        // the arrays among the indices (NumPy's advanced indexing)
        let arrays: Vec<usize> = (0..out.len())
            .filter(|&k| {
                !new_axis[k]
                    && !matches!(out[k].kind, ast::ExprKind::Slice { .. })
                    && self.rank(&out[k]) > 0
            })
            .collect();
        for &k in &arrays {
            if !self.integer_array(&out[k]) {
                return refuse(self, "a masked read (`s[m]`) is not indexed again");
            }
        }
        if arrays.len() > 1 {
            return refuse(
                self,
                "a gather through several arrays of indices is not indexed again",
            );
        }
        let gather = arrays.first().map(|&p| (p, self.rank(&out[p])));
        // the result's dimensions in NumPy's order: the index whose slice
        // or new axis each is, or (`None`) the gathered ones
        let basic = |out: &[ast::Expr], new_axis: &[bool]| -> Vec<usize> {
            (0..out.len())
                .filter(|&k| new_axis[k] || matches!(out[k].kind, ast::ExprKind::Slice { .. }))
                .collect()
        };
        let order = |out: &[ast::Expr], new_axis: &[bool], gather: Option<(usize, usize)>| {
            let b = basic(out, new_axis);
            let mut dims: Vec<Option<usize>> = b.iter().map(|&k| Some(k)).collect();
            if let Some((_, r)) = gather {
                let advanced: Vec<usize> = (0..out.len()).filter(|k| !b.contains(k)).collect();
                let at = match super::expr::gathered_at(&advanced) {
                    Some(f) => b.iter().filter(|&&k| k < f).count(),
                    None => 0,
                };
                for _ in 0..r {
                    dims.insert(at, None);
                }
            }
            dims
        };
        let dims = order(&out, &new_axis, gather);
        if indices.len() > dims.len() {
            self.error(
                Diagnostic::error(format!(
                    "too many indices: this slice has {}, indexed with {}",
                    counted(dims.len() as i64, "dimension"),
                    indices.len()
                ))
                .at(e.span, "indexed again here")
                .note("NumPy raises an IndexError"),
            );
            return None;
        }
        // the indices of the gathered dimensions, for the array of indices
        let mut of_gather: Vec<ast::Expr> = vec![];
        // new axes of the outer subscript, inserted before an index of `out`
        let mut inserted: Vec<usize> = vec![];
        let mut cursor = 0;
        let mut sliced: Vec<(&ast::Expr, usize)> = vec![];
        let mut dropped: Vec<usize> = vec![];
        // which of the result's dimensions are gathered ones, in order
        let mut expected: Vec<bool> = vec![];
        for ix in indices.iter() {
            if self.is_new_axis(ix) {
                if gather.is_some() {
                    return refuse(self, "a new axis of a gather is not rewritten");
                }
                inserted.push(dims.get(cursor).map_or(out.len(), |d| d.unwrap_or(0)));
                continue;
            }
            let d = dims[cursor];
            cursor += 1;
            if matches!(ix.kind, ast::ExprKind::Slice { .. }) {
                expected.push(d.is_none());
            }
            match d {
                None => of_gather.push(ix.clone()),
                Some(k) if new_axis[k] => {
                    match &ix.kind {
                        ast::ExprKind::Slice {
                            lo: None,
                            hi: None,
                            step: None,
                        } => {}
                        ast::ExprKind::Slice { .. } => {
                            return refuse(
                                self,
                                "a slice of a new axis other than `:` is not rewritten",
                            )
                        }
                        _ => {
                            let c = self.lower_expr(ix).and_then(|t| self.known_int(&t.e));
                            match c {
                                Some(0 | -1) => dropped.push(k),
                                Some(c) => {
                                    self.error(
                                        Diagnostic::error(format!(
                                        "index {c} is out of bounds for a new axis of 1 element"
                                    ))
                                        .at(ix.span, "out of bounds")
                                        .also(e.span, "this subscript")
                                        .note("NumPy raises an IndexError"),
                                    );
                                    return None;
                                }
                                None => return refuse(
                                    self,
                                    "a new axis (`None`) is indexed again only with the number 0",
                                ),
                            }
                        }
                    }
                }
                Some(_) if !matches!(ix.kind, ast::ExprKind::Slice { .. }) && self.rank(ix) > 0 => {
                    return refuse(self, "an array of indices into a slice is not rewritten")
                }
                Some(k) => sliced.push((ix, k)),
            }
        }
        if let (Some((p, _)), false) = (gather, of_gather.is_empty()) {
            out[p] = ast::Expr {
                kind: ast::ExprKind::Subscript {
                    value: Box::new(out[p].clone()),
                    indices: of_gather,
                },
                span: e.span,
            };
        }
        for (ix, k) in sliced {
            let Some(run) = self.slice_run(&out[k], shape[dim_of(&new_axis, k)])? else {
                return refuse(self, "the slice's bounds are not rewritten");
            };
            out[k] = match &ix.kind {
                ast::ExprKind::Slice { .. } => {
                    let Some(inner) = self.slice_run(ix, run.extent)? else {
                        return refuse(self, "the slice's bounds are not rewritten");
                    };
                    // the first element: a number, or a window's start
                    // (`x[i, 2:9][j:j + 3]` starts at `2 + j`)
                    let lo = match (inner.lo_int(), run.step) {
                        (Some(first), _) => plus(&run.lo, run.step * first, ix.span),
                        (None, s) => {
                            let scaled = match s {
                                1 => inner.lo.clone(),
                                s => ast::Expr::binary(
                                    crate::ir::BinOp::Mul,
                                    *int(s, ix.span),
                                    inner.lo.clone(),
                                    ix.span,
                                ),
                            };
                            match run.lo.kind {
                                ast::ExprKind::Int(0) => scaled,
                                _ => ast::Expr::binary(
                                    crate::ir::BinOp::Add,
                                    run.lo.clone(),
                                    scaled,
                                    ix.span,
                                ),
                            }
                        }
                    };
                    let step = run.step * inner.step;
                    match lo.kind {
                        ast::ExprKind::Int(c) => slice_expr(c, inner.extent, step, ix.span),
                        // a window (a positive step), stopped right after
                        // its last element (which the array has)
                        _ if step > 0 => ast::Expr {
                            kind: ast::ExprKind::Slice {
                                hi: Some(Box::new(plus(
                                    &lo,
                                    step * (inner.extent - 1) + 1,
                                    ix.span,
                                ))),
                                lo: Some(Box::new(lo)),
                                step: (step != 1).then(|| int(step, ix.span)),
                            },
                            span: ix.span,
                        },
                        _ => return refuse(self, "a window walked backwards is not rewritten"),
                    }
                }
                _ => self.index_into_slice(ix, &run, e.span)?,
            };
        }
        // the new axes indexed away go, those of the outer subscript come
        let mut kept = vec![];
        for (k, ix) in out.into_iter().enumerate() {
            for _ in inserted.iter().filter(|&&at| at == k) {
                kept.push(ast::Expr {
                    kind: ast::ExprKind::None,
                    span: e.span,
                });
            }
            if !dropped.contains(&k) {
                kept.push(ix);
            }
        }
        let n = kept.len();
        for _ in inserted.iter().filter(|&&at| at >= n) {
            kept.push(ast::Expr {
                kind: ast::ExprKind::None,
                span: e.span,
            });
        }
        // a gather whose dimensions NumPy would now put elsewhere (its
        // advanced indices adjacent once slices between became numbers)
        if gather.is_some() {
            expected.extend(dims[cursor..].iter().map(Option::is_none));
            let new_axis: Vec<bool> = kept.iter().map(|i| self.is_new_axis(i)).collect();
            let p = (0..kept.len()).find(|&k| {
                !new_axis[k]
                    && !matches!(kept[k].kind, ast::ExprKind::Slice { .. })
                    && self.rank(&kept[k]) > 0
            });
            let now: Vec<bool> = match p {
                Some(p) => order(&kept, &new_axis, Some((p, self.rank(&kept[p]))))
                    .iter()
                    .map(Option::is_none)
                    .collect(),
                None => basic(&kept, &new_axis).iter().map(|_| false).collect(),
            };
            if now != expected {
                return refuse(
                    self,
                    "the gathered dimensions would move (NumPy puts those of arrays of indices not adjacent first)",
                );
            }
        }
        Some(ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(base.clone()),
                indices: kept,
            },
            span: e.span,
        })
    }

    /// The array index of element `ix` of the slice `lo, lo + step, ...` of
    /// `extent` elements (Python's negative indices count from its end).
    fn index_into_slice(&mut self, ix: &ast::Expr, run: &Run, at: Span) -> Option<ast::Expr> {
        let Run { lo, step, extent } = run;
        let (step, extent) = (*step, *extent);
        let span = ix.span;
        let t = self.lower_expr(ix)?;
        let i = self.element_index(t, "an index")?;
        let bin = |op, l, r| ast::Expr::binary(op, l, r, span);
        use crate::ir::BinOp::{Add, Mul};
        if let Some(c) = self.known_int(&i) {
            let k = if c < 0 { c + extent } else { c };
            if !(0..extent).contains(&k) {
                self.error(
                    Diagnostic::error(format!(
                        "index {c} is out of bounds for a slice of {}",
                        counted(extent, "element")
                    ))
                    .at(span, "out of bounds")
                    .also(at, "this slice")
                    .note("NumPy raises an IndexError"),
                );
                return None;
            }
            return Some(plus(lo, step * k, span));
        }
        let r = self.range(&i);
        let (j, shift) = match r {
            Some(r) if r.lo >= 0 && r.hi < extent as i128 => (ix.clone(), 0),
            Some(r) if r.lo >= -(extent as i128) && r.hi < 0 => (ix.clone(), extent),
            _ => {
                self.error(
                    Diagnostic::error(format!(
                        "this index is not known to stay inside the slice it indexes (of {})",
                        counted(extent, "element")
                    ))
                    .at(span, "an index of a slice")
                    .also(at, "the subscript")
                    .note("NumPy raises an IndexError for an index outside the slice, even where the array has an element there")
                    .help(format!(
                        "index the array itself (the element `j` of `lo:hi:s` is `lo + s * j`), or loop over `range({extent})`"
                    )),
                );
                return None;
            }
        };
        // lo + step * (j + shift)
        let scaled = match step {
            1 => j,
            s => bin(Mul, *int(s, span), j),
        };
        Some(match plus(lo, step * shift, span) {
            ast::Expr {
                kind: ast::ExprKind::Int(0),
                ..
            } => scaled,
            start => bin(Add, start, scaled),
        })
    }
}
