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
//!
//! NumPy's whole reduction of one subscript of more dimensions
//! (`img[i0:i1, j0:j1].mean()`, `RtSlices::flat`) reads its elements as
//! one run in row-major order over one counter (`slices.rs`
//! `flat_slices`), ended at the product of the slices' counts.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, Expr, ExprKind, Place, Stmt, StmtKind, Type, VarId, VarKind};
use crate::resolve::Builtin;
use crate::syntax::ast;

use super::masks::span_text;
use super::slices::IndexSlot;
use super::{Lowerer, TExpr};

/// A slice statement's loop nests, and the counter, the count of a
/// run-time slice (if any) and the extent of each of its dimensions.
pub(super) type StatementLoops = (Vec<Stmt>, Vec<(VarId, Option<VarId>, i64)>);

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
    /// A slice statement's (`y[i, a:b] = x[i, a:b] * 2.0`, `slices.rs`
    /// `slice_assign`), whose `SliceCtx::runtime` has the counts of its
    /// dimensions: `slices.rs` `map_slices` checks each operand's length
    /// against them at run time (a slot of another context, a reduction's
    /// that does not end at a run-time count, is an error).
    pub(super) statement: bool,
    /// A scan's statement (`slices.rs` `cumulative_assign`): `map_slices`
    /// records in `scan_lengths` how long each operand is along each
    /// dimension of the target, so the scan knows where its operand is of
    /// one element, which NumPy scans and then broadcasts (each element
    /// the first one's scan, never a running sum of copies).
    pub(super) scan: bool,
    pub(super) scan_lengths: Vec<(usize, Along)>,
    /// A whole reduction of one subscript of more dimensions
    /// (`img[i0:i1, j0:j1].mean()`): `slices.rs` `map_slices` reads it as
    /// one run of its elements in row-major order (NumPy's buffer of
    /// them), counted by `flat_count`, the product of its counts.
    pub(super) flat: bool,
    pub(super) flat_count: Option<(VarId, i64)>,
}

/// How long an operand of a scan's statement is along a dimension of its
/// target (`RtSlices::scan_lengths`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Along {
    /// One element, known when compiling.
    One,
    /// A slice with run-time bounds of this count.
    Count(VarId),
    /// More elements, known when compiling.
    Long,
}

impl RtSlices {
    /// The context of a slice statement's run-time slices.
    pub(super) fn statement() -> RtSlices {
        RtSlices {
            statement: true,
            ..RtSlices::default()
        }
    }
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
        let ctx = self.rt_slices.as_ref()?;
        let e = &ctx.entries[k];
        let count = ctx.flat_count.map_or(e.count, |c| c.0);
        Some(Expr::var(count, Type::Scalar(self.opts.int_type), e.span))
    }

    /// Whether the reduction being lowered reads its operand of more
    /// dimensions as one run of its elements (`RtSlices::flat`).
    pub(super) fn flat_runtime_reduction(&self) -> bool {
        self.rt_slices.as_ref().is_some_and(|c| c.flat)
    }

    /// The count of the elements of a flat run (`RtSlices::flat`) of
    /// `extent` at most: the product of `counts`, computed before the
    /// statement.
    pub(super) fn flat_runtime_count(
        &mut self,
        counts: Vec<Expr>,
        extent: i64,
        span: Span,
    ) -> Expr {
        let it = Type::Scalar(self.opts.int_type);
        // (the operand lowered again, `np.nanmean`'s sum and count: its
        // count still there)
        let assigned = |v: VarId| {
            let assigns = |s: &Stmt| matches!(&s.kind, StmtKind::Assign { dst: Place::Var(d), .. } if *d == v);
            self.pre.iter().any(assigns)
        };
        let old = self.rt_slices.as_ref().and_then(|c| c.flat_count);
        if let Some((v, _)) = old.filter(|&(v, n)| n == extent && assigned(v)) {
            return Expr::var(v, it, span);
        }
        let product = counts
            .into_iter()
            .reduce(|a, b| Expr::binary(BinOp::Mul, a, b, it.clone(), span))
            .expect("a slice");
        let total = self.new_var("count", it.clone(), VarKind::Local, span);
        self.pre.push(Stmt::assign_var(total, product, span));
        if let Some(c) = &mut self.rt_slices {
            c.flat_count = Some((total, extent));
        }
        Expr::var(total, it, span)
    }

    /// The count of the elements of the slice with run-time bounds whose
    /// slot starts at `lo`, when it is one.
    pub(super) fn runtime_slot_count(&self, lo: &Expr) -> Option<VarId> {
        let ExprKind::Var(v) = lo.kind else {
            return None;
        };
        let ctx = self.rt_slices.as_ref()?;
        ctx.entries.iter().find(|e| e.lo == v).map(|e| e.count)
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
        // them only when their lengths agree (a statement's, checked where
        // `map_slices` places them)
        let ctx = self.rt_slices.as_mut()?;
        let reduced = !ctx.statement && !ctx.flat;
        if let Some(other) = live.first().map(|&k| &ctx.entries[k]).filter(|_| reduced) {
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
                | Builtin::CountNonzero
                | Builtin::ArgMax
                | Builtin::ArgMin
                | Builtin::NanReduce(_)
                | Builtin::NanMean
                | Builtin::Norm,
                [_],
            )
            | (Builtin::Var | Builtin::Std | Builtin::NanVar | Builtin::NanStd, [_] | [_, _]) => {
                &args[..1]
            }
            _ => return None,
        };
        // (1-D operands, reduced whole: the loop over their elements is the
        // reduction's one loop; in another, such a slice is an error, not
        // one of a reduction around it)
        let outer = self.rt_slices.take();
        // (or NumPy's whole reduction of one subscript of an array, of
        // more dimensions, read as one run of its elements:
        // `RtSlices::flat`; Python's `sum`, `any` and `all` walk its rows)
        let python = matches!(name, "sum" | "any" | "all");
        let flat = !python
            && matches!(
                (b, arrays),
                (
                    Builtin::Reduce(_)
                        | Builtin::Mean
                        | Builtin::Var
                        | Builtin::Std
                        | Builtin::ArgMax
                        | Builtin::ArgMin
                        | Builtin::Any
                        | Builtin::All
                        | Builtin::CountNonzero
                        | Builtin::NanReduce(_)
                        | Builtin::NanMean
                        | Builtin::NanVar
                        | Builtin::NanStd,
                    [ast::Expr { kind: ast::ExprKind::Subscript { value, .. }, .. }],
                ) if matches!(value.kind, ast::ExprKind::Name(_))
            )
            && self.axis.is_none()
            && self.rank(&arrays[0]) > 1;
        if !flat && (self.axis.is_some() || arrays.iter().any(|a| self.rank(a) != 1)) {
            let r = self.builtin_call_plain(b, name, args, span);
            self.rt_slices = outer;
            return Some(r);
        }
        self.rt_slices = Some(RtSlices {
            flat,
            ..RtSlices::default()
        });
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
        // (a flat run: its count, and the length of its slot, the product
        // of its dimensions')
        let (counted, n) = match ctx.flat_count {
            Some(c) => c,
            None if flat => {
                self.unsupported(name, span);
                return Some(None);
            }
            None => (e.count, e.extent),
        };
        let count = || Expr::var(counted, it.clone(), span);
        // NumPy's max and min (and Python's) of no elements raise, once the
        // lengths are checked
        if let Some(check) = super::masks::nonempty_check(b, count(), int_ty, span) {
            let at = live
                .iter()
                .map(|&k| ctx.entries[k].end)
                .max()
                .unwrap_or(e.end);
            // (after a flat run's count)
            let assigns = |s: &Stmt| matches!(&s.kind, StmtKind::Assign { dst: Place::Var(v), .. } if *v == counted);
            let at = match self.pre.iter().rposition(assigns) {
                Some(k) => at.max(k + 1),
                None => at,
            };
            self.pre.insert(at, check);
        }
        // the loop over the slot's length ends at the count (`min(count,
        // n)`, which it is)
        let end = Expr::binary(BinOp::Min, count(), Expr::int(n, int_ty, span), it, span);
        // (every loop that reads the slice: `np.var`'s two, `np.nanmean`'s
        // sum and count)
        let reads = |s: &Stmt| {
            let (mut used, mut assigned) = (Default::default(), Default::default());
            crate::ir::visit::stmt_uses(s, &mut used, &mut assigned);
            let used: std::collections::BTreeSet<VarId> = used;
            matches!(s.kind, StmtKind::For(_)) && used.contains(&e.lo)
        };
        let loops = self.pre[from..].iter().filter(|s| reads(s)).count();
        if loops == 0 || super::slices::end_loop_at(&mut self.pre[from..], e.lo, n, end) != loops {
            self.unsupported(name, span);
            return Some(None);
        }
        Some(Some(r))
    }

    /// Whether the operand of the scan being lowered is of one element
    /// along dimension `axis` of its target (NumPy's scan of it is that
    /// element, broadcast): every operand of one element there, known
    /// when compiling or where it runs (`RtSlices::scan_lengths`; an
    /// operand without that dimension is of one). `None` where one is
    /// longer when compiling.
    pub(super) fn scan_of_one(&self, axis: usize, span: Span) -> Option<Expr> {
        let ctx = self.rt_slices.as_ref()?;
        let it = Type::Scalar(self.opts.int_type);
        let mut single = Expr::new(
            ExprKind::Bool(true),
            Type::Scalar(crate::ir::ElemTy::Bool),
            span,
        );
        for (_, along) in ctx.scan_lengths.iter().filter(|(d, _)| *d == axis) {
            let count = match along {
                Along::Long => return None,
                Along::One => continue,
                Along::Count(c) => Expr::var(*c, it.clone(), span),
            };
            let one = Expr::compare(
                BinOp::Eq,
                count,
                Expr::int(1, self.opts.int_type, span),
                span,
            );
            single = match single.kind {
                ExprKind::Bool(true) => one,
                _ => Expr::binary(
                    BinOp::And,
                    single,
                    one,
                    Type::Scalar(crate::ir::ElemTy::Bool),
                    span,
                ),
            };
        }
        Some(single)
    }

    /// The check, before the statement, that the run-time slice of
    /// `count` elements has `want` (an operand of a slice statement of
    /// the target's length), or one element where `one` (an operand,
    /// which NumPy broadcasts): NumPy's ValueError. With `shapes` (a 1-D
    /// operand of a 1-D target: whether `count` is the operand's, else the
    /// target's) NumPy's message, "could not broadcast input array from
    /// shape (2,) into shape (3,)", the lengths where it runs.
    pub(super) fn runtime_length_check(
        &mut self,
        count: VarId,
        want: Expr,
        one: bool,
        shapes: Option<bool>,
        span: Span,
    ) {
        let int_ty = self.opts.int_type;
        let c = || Expr::var(count, Type::Scalar(int_ty), span);
        let mut same = Expr::compare(BinOp::Eq, c(), want.clone(), span);
        if one {
            let single = Expr::compare(BinOp::Eq, c(), Expr::int(1, int_ty, span), span);
            same = Expr::binary(
                BinOp::Or,
                same,
                single,
                Type::Scalar(crate::ir::ElemTy::Bool),
                span,
            );
        }
        let check = match shapes {
            Some(operand) => {
                let message = "could not broadcast input array from shape ({0},) into shape ({1},)";
                let (from, into) = match operand {
                    true => (c(), want),
                    false => (want, c()),
                };
                let values = vec![(from, true), (into, true)];
                Expr::assert_noting(
                    same,
                    Some(message.to_string()),
                    values,
                    "ValueError",
                    false,
                    span,
                )
            }
            None => {
                let text = span_text(span).unwrap_or_else(|| "an operand".to_string());
                let message = format!(
                    "could not broadcast input array from the shape of `{text}` into the shape of the target: their lengths differ"
                );
                Expr::assert(same, Some(message), "ValueError", span)
            }
        };
        self.pre.push(Stmt::new(StmtKind::Expr(check), span));
    }

    /// The error for a slice with run-time bounds in a slice statement
    /// where parpy cannot end its loop at the run-time count (inside a
    /// function that lowers its argument to a length known when
    /// compiling: `np.median(x[a:b])`, `np.flip(x[a:b])`).
    pub(super) fn runtime_slice_unsupported(&mut self, span: Span) {
        self.error(
            Diagnostic::error("this use of a slice with run-time bounds is not supported in parpy functions")
                .at(span, "a slice with run-time bounds")
                .note("parpy stores into a slice with run-time bounds, reads such slices elementwise, or reduces a 1-D one (`np.sum(x[a:b])`)")
                .help("give the slice bounds known when compiling, or write the loop (`for k in range(a, b):`)"),
        );
    }

    /// A slice statement (`y[i, a:b] = x[i, a:b] * 2.0`): `lower` (which
    /// makes its loops) with the statement's run-time slices taken, the
    /// loop over each dimension of a run-time slice in the target then
    /// ended at its count. The statements before the loops (`pre` from
    /// `from`) must not read the slices' starts but to check them.
    pub(super) fn with_runtime_slices(
        &mut self,
        from: usize,
        span: Span,
        lower: impl FnOnce(&mut Self) -> Option<StatementLoops>,
    ) -> Option<Vec<Stmt>> {
        let outer = self.rt_slices.replace(RtSlices::statement());
        let r = lower(self);
        let ctx = std::mem::replace(&mut self.rt_slices, outer)?;
        let (mut out, ends) = r?;
        if !ctx.seen {
            return Some(out);
        }
        let starts: Vec<VarId> = ctx.entries.iter().map(|e| e.lo).collect();
        let own = |s: &Stmt| match &s.kind {
            StmtKind::Assign {
                dst: Place::Var(v), ..
            } => starts.contains(v) || ctx.entries.iter().any(|e| e.count == *v),
            StmtKind::Expr(e) => matches!(e.kind, ExprKind::Assert { .. }),
            _ => false,
        };
        let reads_start = |s: &Stmt| {
            let (mut used, mut assigned) = (Default::default(), Default::default());
            crate::ir::visit::stmt_uses(s, &mut used, &mut assigned);
            let used: std::collections::BTreeSet<VarId> = used;
            starts.iter().any(|v| used.contains(v))
        };
        if self.pre[from..].iter().any(|s| !own(s) && reads_start(s)) {
            self.runtime_slice_unsupported(span);
            return None;
        }
        let it = Type::Scalar(self.opts.int_type);
        for (var, count, n) in ends {
            let Some(count) = count else {
                continue;
            };
            let c = Expr::var(count, it.clone(), span);
            let end = Expr::binary(
                BinOp::Min,
                c,
                Expr::int(n, self.opts.int_type, span),
                it.clone(),
                span,
            );
            end_loops_over(&mut out, var, &end);
        }
        Some(out)
    }

    /// `len(s)` (and `s.shape[0]`) of a subscript `s` whose first
    /// dimension is a slice with run-time bounds (`len(x[i, a:b])`): the
    /// count of its elements, computed before the statement. `None` when
    /// `s` has no such first dimension (its length is known when
    /// compiling, `calls.rs` `leading_dim`), `Some(None)` after an error.
    pub(super) fn runtime_len(&mut self, s: &ast::Expr) -> Option<Option<TExpr>> {
        let ast::ExprKind::Subscript { indices, .. } = &s.kind else {
            return None;
        };
        // (scalar indices and slices only: the first slice is the first
        // dimension)
        let slices = indices
            .iter()
            .filter(|ix| matches!(ix.kind, ast::ExprKind::Slice { .. }))
            .count();
        let other =
            |ix: &ast::Expr| matches!(ix.kind, ast::ExprKind::None | ast::ExprKind::Ellipsis);
        if slices == 0 || indices.iter().any(other) || self.rank(s) != slices {
            return None;
        }
        let (from, before) = (self.pre.len(), self.sh.diags.len());
        let outer = self.rt_slices.replace(RtSlices::default());
        let n = self.leading_dim(s);
        let ctx = std::mem::replace(&mut self.rt_slices, outer)?;
        if self.sh.diags.len() != before {
            return Some(None);
        }
        let Some(e) = ctx.entries.first().filter(|_| ctx.seen && n.is_some()) else {
            self.pre.truncate(from);
            return None;
        };
        let it = Type::Scalar(self.opts.int_type);
        Some(Some(TExpr {
            e: Expr::var(e.count, it, e.span),
            weak: true,
        }))
    }

    /// `s.shape[0]` as `len(s)` (`runtime_len`).
    pub(super) fn runtime_shape(&mut self, e: &ast::Expr) -> Option<Option<TExpr>> {
        let ast::ExprKind::Subscript { value, indices } = &e.kind else {
            return None;
        };
        let ast::ExprKind::Attr { value: s, attr } = &value.kind else {
            return None;
        };
        let zero = matches!(
            indices[..],
            [ast::Expr {
                kind: ast::ExprKind::Int(0),
                ..
            }]
        );
        if attr != "shape" || !zero {
            return None;
        }
        self.runtime_len(s)
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

/// Ends every loop of `stmts` (nested ones too) over `var` at `end`.
fn end_loops_over(stmts: &mut [Stmt], var: VarId, end: &Expr) {
    for s in stmts {
        if let StmtKind::For(l) = &mut s.kind {
            if l.var == var {
                l.hi = end.clone();
            }
        }
        for b in crate::ir::visit::sub_blocks_mut(s) {
            end_loops_over(b, var, end);
        }
    }
}
