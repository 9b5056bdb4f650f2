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
        super::expr::subscript_of_a_slice(target)?;
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
        let inner = match super::expr::subscript_of_a_slice(value) {
            Some(_) => self.composed_subscript(value)?,
            None => (**value).clone(),
        };
        let (base, first) = super::expr::flatten_subscript(&inner);
        let refuse = |this: &mut Self, why: &str| {
            this.error(
                Diagnostic::error("indexing a slice again is not supported here")
                    .at(value.span, "a slice")
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
        let odd = |this: &Self, i: &ast::Expr| {
            matches!(i.kind, ast::ExprKind::Ellipsis) || this.is_new_axis(i)
        };
        if first
            .iter()
            .copied()
            .chain(indices.iter())
            .any(|i| odd(self, i))
        {
            return refuse(self, "a chain with `...` or `None` is not rewritten");
        }
        let mut out: Vec<ast::Expr> = first.into_iter().cloned().collect();
        if out.len() > shape.len() {
            // the error for too many indices comes from lowering it
            return Some(inner);
        }
        while out.len() < shape.len() {
            out.push(ast::Expr::full_slice(value.span));
        }
        let sliced: Vec<usize> = (0..out.len())
            .filter(|&k| matches!(out[k].kind, ast::ExprKind::Slice { .. }))
            .collect();
        if indices.len() > sliced.len() {
            self.error(
                Diagnostic::error(format!(
                    "too many indices: this slice has {}, indexed with {}",
                    counted(sliced.len() as i64, "dimension"),
                    indices.len()
                ))
                .at(e.span, "indexed again here")
                .note("NumPy raises an IndexError"),
            );
            return None;
        }
        for (ix, &k) in indices.iter().zip(&sliced) {
            let Some(run) = self.slice_run(&out[k], shape[k])? else {
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
        Some(ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(base.clone()),
                indices: out,
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
