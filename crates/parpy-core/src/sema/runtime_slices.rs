//! Reductions of 1-D slices whose bounds are known only at run time:
//! `np.sum(x[i, :i])`, `max(x[lo:hi])`, `np.dot(L[i, :j], L[j, :j])`.
//!
//! While the argument of a reduction is lowered
//! (`runtime_slice_reduction`, asked by `calls.rs` `builtin_call_with`),
//! `slices.rs` `slice_bounds` hands a slice whose bounds are not
//! constants to `runtime_slice`: Python's `slice.indices` computed where
//! the statement runs, into a local `lo` (the first element's index) and
//! `count` (the number of elements), and a slot of the dimension's whole
//! length from `lo`. The reduction's loop over that length then ends at
//! `count` (`slices.rs` `end_loop_at`, as a masked read's loop does), so a
//! float sum keeps NumPy's pairwise order over a run-time count
//! (`passes::cpu_pairwise_sums`); `np.mean` and `np.var` divide by
//! `count` (`masks.rs` `packed_count`). The reads `x[lo + k*step]` are
//! inside the array for every `k < count`; the bounds checks check those
//! `ir::range` does not prove.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, Expr, Place, Stmt, StmtKind, Type, VarId, VarKind};
use crate::resolve::Builtin;
use crate::syntax::ast;

use super::masks::span_text;
use super::slices::IndexSlot;
use super::{Lowerer, TExpr};

/// The slices with run-time bounds met while the argument of a reduction
/// is lowered.
#[derive(Default)]
pub(super) struct RtSlices {
    entries: Vec<Entry>,
    /// The span of each such slice index (`a:b` of `x[i, a:b]`), each
    /// time one is lowered.
    indices: Vec<Span>,
    /// Whether one was met, its statements since dropped or not (a probe
    /// of the argument's shape, as `calls.rs` `dot` makes).
    seen: bool,
}

/// The start and count of a slice's elements, one per text of its bounds.
struct Entry {
    /// The source text of the bounds, the step and the dimension.
    key: (String, i64, i64),
    lo: VarId,
    count: VarId,
    /// Where the assignment of `lo` is among the lowerer's `pre`, and
    /// the position after its statements.
    at: usize,
    end: usize,
    /// The length of the slot (the most elements there can be).
    extent: i64,
    span: Span,
}

impl Lowerer<'_, '_> {
    /// The entries of the active reduction whose statements are still
    /// there (a probe of the argument's shape drops what it lowered).
    fn live_entries(&self) -> Vec<usize> {
        let Some(ctx) = &self.rt_slices else {
            return vec![];
        };
        let live = |e: &Entry| {
            self.pre.get(e.at).is_some_and(
                |s| matches!(&s.kind, StmtKind::Assign { dst: Place::Var(v), .. } if *v == e.lo),
            )
        };
        (0..ctx.entries.len())
            .filter(|&k| live(&ctx.entries[k]))
            .collect()
    }

    /// The run-time count of the elements of the slices with run-time
    /// bounds of the reduction being lowered (its divisor in `np.mean`).
    pub(super) fn runtime_count(&self) -> Option<Expr> {
        let k = *self.live_entries().first()?;
        let e = &self.rt_slices.as_ref()?.entries[k];
        Some(Expr::var(e.count, Type::Scalar(self.opts.int_type), e.span))
    }

    /// Whether the argument of the reduction being lowered (or probed)
    /// has a slice with run-time bounds.
    pub(super) fn runtime_sliced(&self) -> bool {
        self.rt_slices.as_ref().is_some_and(|c| c.seen)
    }

    /// The slot of the slice `lo:hi:step` of a dimension of `dim`
    /// elements, a bound known only at run time (`bounds`: each written
    /// one with its value; `step` a constant): Python's `slice.indices`
    /// into locals before the statement, `lo + k*step` for `k` in
    /// `0..count`, of a slot as long as the dimension.
    pub(super) fn runtime_slice(
        &mut self,
        bounds: [Option<(&ast::Expr, Expr)>; 2],
        step: i64,
        dim: i64,
        span: Span,
    ) -> Option<IndexSlot> {
        let int_ty = self.opts.int_type;
        let it = Type::Scalar(int_ty);
        // (a bound without source text, written by parpy, is its own)
        let text = |b: &Option<(&ast::Expr, Expr)>| match b {
            None => String::new(),
            Some((e, _)) => span_text(e.span).unwrap_or_else(|| format!("@{}", e.span.lo)),
        };
        let key = (
            format!("{}:{}", text(&bounds[0]), text(&bounds[1])),
            step,
            dim,
        );
        let extent = (dim + step.abs() - 1) / step.abs();
        let live = self.live_entries();
        let ctx = self.rt_slices.as_mut()?;
        ctx.seen = true;
        ctx.indices.push(span);
        let slot = |lo: VarId| IndexSlot::Slice {
            lo: Expr::var(lo, it.clone(), span),
            extent,
            step,
            rot: 0,
        };
        // (the same bounds again: `L[i, :j] * L[j, :j]`, or a reduction
        // that lowers its argument twice, `np.var`)
        if let Some(e) = live.iter().map(|&k| &ctx.entries[k]).find(|e| e.key == key) {
            return Some(slot(e.lo));
        }
        let int = |v: i64| Expr::int(v, int_ty, span);
        let bin = |op: BinOp, a: Expr, b: Expr| Expr::binary(op, a, b, it.clone(), span);
        // a bound counts from the end when negative, and is clamped to the
        // first and last positions a walk in the step's direction can take
        let (first, last) = if step > 0 { (0, dim) } else { (-1, dim - 1) };
        let clamp = |b: Expr| {
            let negative = Expr::compare(BinOp::Lt, b.clone(), int(0), span);
            let from_end = bin(BinOp::Max, bin(BinOp::Add, b.clone(), int(dim)), int(first));
            Expr::select(negative, from_end, bin(BinOp::Min, b, int(last)))
        };
        let [l, h] = bounds.map(|b| b.map(|(_, e)| clamp(e)));
        let l = l.unwrap_or_else(|| int(if step > 0 { 0 } else { dim - 1 }));
        let h = h.unwrap_or_else(|| int(if step > 0 { dim } else { -1 }));
        let lo = self.new_var("lo", it.clone(), VarKind::Local, span);
        let count = self.new_var("count", it.clone(), VarKind::Local, span);
        let lo_e = Expr::var(lo, it.clone(), span);
        // `ceil((hi - lo) / step)` elements, none where the walk ends
        // before it starts
        let (from, to) = if step > 0 { (lo_e, h) } else { (h, lo_e) };
        let len = bin(BinOp::Max, bin(BinOp::Sub, to, from), int(0));
        let s = step.abs();
        let n = match s {
            1 => len,
            _ => bin(BinOp::FloorDiv, bin(BinOp::Add, len, int(s - 1)), int(s)),
        };
        let at = self.pre.len();
        self.pre.push(Stmt::assign_var(lo, l, span));
        self.pre.push(Stmt::assign_var(count, n, span));
        // slices of other bounds in the same expression: NumPy broadcasts
        // them only when their lengths agree
        let ctx = self.rt_slices.as_mut()?;
        if let Some(other) = live.first().map(|&k| &ctx.entries[k]) {
            let same = Expr::compare(
                BinOp::Eq,
                Expr::var(count, it.clone(), span),
                Expr::var(other.count, it.clone(), span),
                span,
            );
            let message = "operands could not be broadcast together: slices of different lengths";
            let check = Expr::assert(same, Some(message.to_string()), "ValueError", span);
            self.pre.push(Stmt::new(StmtKind::Expr(check), span));
        }
        let end = self.pre.len();
        self.rt_slices.as_mut()?.entries.push(Entry {
            key,
            lo,
            count,
            at,
            end,
            extent,
            span,
        });
        Some(slot(lo))
    }

    /// A reduction `b` (its name `name`) of an argument with slices whose
    /// bounds are known only at run time (`np.sum(x[i, :i])`): lowered as
    /// any reduction, each such slice as long as its dimension
    /// (`runtime_slice`), its loop then ended at their count. `None` when
    /// `b` takes no such argument or it has no such slice (lowered then by
    /// `builtin_call_plain`), `Some(None)` after an error.
    pub(super) fn runtime_slice_reduction(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Option<TExpr>> {
        // (the arrays reduced: `np.var(x[:j], ddof)` reduces its first
        // argument, `np.dot` both)
        let arrays = match (b, args) {
            (Builtin::Dot | Builtin::Inner, [_, _]) => args,
            (
                Builtin::Reduce(_)
                | Builtin::Mean
                | Builtin::Sum
                | Builtin::Max
                | Builtin::Min
                | Builtin::Any
                | Builtin::All
                | Builtin::CountNonzero,
                [_],
            )
            | (Builtin::Var | Builtin::Std, [_] | [_, _]) => &args[..1],
            _ => return None,
        };
        // (1-D operands, reduced whole: the loop over their elements is the
        // reduction's one loop; in another, such a slice is an error, not
        // one of a reduction around it)
        let outer = self.rt_slices.take();
        if self.axis.is_some() || arrays.iter().any(|a| self.rank(a) != 1) {
            let r = self.builtin_call_plain(b, name, args, span);
            self.rt_slices = outer;
            return Some(r);
        }
        self.rt_slices = Some(RtSlices::default());
        let from = self.pre.len();
        let r = self.builtin_call_plain(b, name, args, span);
        let live = self.live_entries();
        let ctx = std::mem::replace(&mut self.rt_slices, outer)?;
        if !ctx.seen {
            return Some(r);
        }
        // (an error: reported, not lowered again without the slices)
        let Some(r) = r else {
            return Some(None);
        };
        let Some(&first) = live.first() else {
            // (lowered, its slices not among the statements)
            self.unsupported(name, span);
            return Some(None);
        };
        // every array of the argument one of its slices: NumPy broadcasts
        // a slice with one of another length only where the lengths agree
        for a in arrays {
            let rest = self.replace_reads(a, &mut |_, e| {
                let ast::ExprKind::Subscript { indices, .. } = &e.kind else {
                    return None;
                };
                indices
                    .iter()
                    .any(|ix| ctx.indices.contains(&ix.span))
                    .then(|| ast::Expr::float(0.0, e.span))
            });
            if self.rank(&rest) > 0 {
                self.error(
                    Diagnostic::error(format!("`{name}` combines a slice with run-time bounds with an array of a length known when compiling"))
                        .at(a.span, "a slice with run-time bounds and a whole array")
                        .note("NumPy broadcasts them only where the slice has the array's length at run time")
                        .help("slice each array of the expression with run-time bounds of the same length (`x[a:b] * w[a:b]`)"),
                );
                return Some(None);
            }
        }
        let e = &ctx.entries[first];
        let int_ty = self.opts.int_type;
        let it = Type::Scalar(int_ty);
        let count = || Expr::var(e.count, it.clone(), span);
        // NumPy's max and min (and Python's) of no elements raise, once the
        // lengths are checked
        if let Some(check) = super::masks::nonempty_check(b, count(), int_ty, span) {
            let at = live
                .iter()
                .map(|&k| ctx.entries[k].end)
                .max()
                .unwrap_or(e.end);
            self.pre.insert(at, check);
        }
        // the loop over the slot's length ends at the count (`min(count,
        // n)`, which it is)
        let n = e.extent;
        let end = Expr::binary(BinOp::Min, count(), Expr::int(n, int_ty, span), it, span);
        let loops = match b {
            Builtin::Var | Builtin::Std => 2,
            _ => 1,
        };
        if super::slices::end_loop_at(&mut self.pre[from..], e.lo, n, end) != loops {
            self.unsupported(name, span);
            return Some(None);
        }
        Some(Some(r))
    }

    /// The error for a reduction of a slice with run-time bounds that does
    /// not lower to one loop over its elements.
    fn unsupported(&mut self, name: &str, span: Span) {
        self.error(
            Diagnostic::error(format!(
                "`{name}` of this slice with run-time bounds is not supported in parpy functions"
            ))
            .at(span, "a reduction parpy cannot end at the slice's run-time length")
            .note("parpy reduces a 1-D slice with run-time bounds, or an elementwise expression of such slices, in one loop over its elements")
            .help("reduce a 1-D slice (`np.sum(x[i, a:b])`), or write the loop (`for k in range(a, b):`)"),
        );
    }
}
