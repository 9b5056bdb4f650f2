//! Boolean masks, the last index of a store or the index of a reduced
//! read.
//!
//! Stores: `t[t < 0] = 0.0`, `y[i, x[i, :] > 0.5] = 1.0`, `y[i, m] += 1`.
//! NumPy stores the value into the elements where the mask is true. With
//! one value (a number) that is `y[i, :] = np.where(m, v, y[i, :])`
//! (`y[i, :] = np.where(m, y[i, :] + 1, y[i, :])` for `+=`), which this
//! module writes before the statement is lowered: the mask stands for as
//! many full slices as it has dimensions. A mask elsewhere than last, or
//! an array of values (NumPy packs them into the true elements in order),
//! is refused with what to write.
//!
//! Reductions of a masked read: `np.sum(s[m])`, `x[i, x[i, :] > 0].mean()`,
//! `np.max(s[m])`, `len(s[m])`. NumPy's `s[m]` is a new 1-D array of the
//! elements where `m` is true, in row-major order; its sum is pairwise
//! over that many elements. So here: a loop packs them into a local array
//! and counts them, and the reduction runs over the count, a loop whose
//! end is known at run time (`passes::pairwise_sums` adds it as NumPy
//! does). `np.max` / `np.min` of no elements raise NumPy's `ValueError`.

use crate::diag::{Diagnostic, Span};
use crate::ir::{BinOp, ElemTy, Expr, Place, ReduceOp, Stmt, StmtKind, Type, VarKind};
use crate::resolve::Builtin;
use crate::syntax::ast;

use super::scope::Binding;
use super::{Lowerer, TExpr};

impl Lowerer<'_, '_> {
    /// `s` as the `np.where` store it is when its target has a boolean
    /// mask; `Some(None)` after an error, `None` for other statements.
    pub(super) fn mask_store(&mut self, s: &ast::Stmt) -> Option<Option<ast::Stmt>> {
        let (target, op, value) = match &s.kind {
            ast::StmtKind::Assign { targets, value } if targets.len() == 1 => {
                (&targets[0], None, value)
            }
            ast::StmtKind::AugAssign {
                target, op, value, ..
            } => (target, Some(*op), value),
            _ => return None,
        };
        let ast::ExprKind::Subscript {
            value: base,
            indices,
        } = &target.kind
        else {
            return None;
        };
        let at = self.array_index(indices)?;
        let mask = &indices[at];
        let Some(dims) = self.mask_dims(mask) else {
            return Some(None);
        };
        if at + 1 != indices.len() {
            self.error(
                Diagnostic::error("a boolean mask is supported as the last index of a store in parpy functions")
                    .at(mask.span, "a mask followed by more indices")
                    .also(target.span, "this store")
                    .help("put the mask last (`y[i, m] = v`), or store with `np.where` over the whole slice"),
            );
            return Some(None);
        }
        if self.rank(value) > 0 {
            self.error(
                Diagnostic::error("a masked store takes one value in parpy functions")
                    .at(value.span, "an array of values")
                    .note("NumPy stores the values of an array, in order, into the elements where the mask is true")
                    .help("store one number (`t[t < 0] = 0.0`), or write the whole slice with `np.where(mask, values, t)`"),
            );
            return Some(None);
        }
        let slice = unmasked(base, indices, (at, dims.len()), target.span);
        let new = match op {
            None => value.clone(),
            Some(op) => ast::Expr {
                kind: ast::ExprKind::Binary {
                    op,
                    lhs: Box::new(slice.clone()),
                    rhs: Box::new(value.clone()),
                },
                span: s.span,
            },
        };
        let func = ast::Expr {
            kind: ast::ExprKind::Attr {
                value: Box::new(ast::Expr::name(crate::resolve::NUMPY_ROOT, s.span)),
                attr: "where".to_string(),
            },
            span: s.span,
        };
        let select = ast::Expr::call(func, vec![mask.clone(), new, slice.clone()], s.span);
        Some(Some(ast::Stmt {
            kind: ast::StmtKind::Assign {
                targets: vec![slice],
                value: select,
            },
            span: s.span,
        }))
    }

    /// The position of the first index of `indices` that is an array (a
    /// boolean mask, or an array of integers, which parpy refuses).
    fn array_index(&self, indices: &[ast::Expr]) -> Option<usize> {
        indices.iter().position(|i| {
            !matches!(
                i.kind,
                ast::ExprKind::Slice { .. } | ast::ExprKind::Ellipsis | ast::ExprKind::None
            ) && self.rank(i) > 0
        })
    }

    /// Whether `e` is an array of integers (an index that gathers).
    pub(super) fn integer_array(&mut self, e: &ast::Expr) -> bool {
        let (from, diags) = (self.pre.len(), self.sh.diags.len());
        let saved = self.slice.take();
        let t = self.array_shape_of(e);
        self.slice = saved;
        self.pre.truncate(from);
        self.sh.diags.truncate(diags);
        matches!(t, Some((Some(_), elem)) if elem.is_int())
    }

    /// The shape of the boolean mask `mask`; `None` after an error (an
    /// array of another type).
    fn mask_dims(&mut self, mask: &ast::Expr) -> Option<Vec<i64>> {
        let (dims, elem) = self.shape_of(mask, "a mask")?;
        if elem != ElemTy::Bool {
            self.error(
                Diagnostic::error("an array of indices is not supported as an index in parpy functions")
                    .at(mask.span, format!("an array of {}", elem.numpy_name()))
                    .note("parpy indexes with numbers, slices and boolean masks")
                    .help("index inside a loop over the indices (`for k in range(len(idx)): y[idx[k]] = v`)"),
            );
            return None;
        }
        Some(dims)
    }

    /// `b(arg)` of a masked read `arg` (`np.sum(s[m])`: see the module
    /// doc), or of an elementwise expression of masked reads through one
    /// mask (`np.sum(s[m] * w[m])`, `np.count_nonzero(s[m] > t)`): the
    /// expression's elements where the mask is true. `None` when `arg`
    /// reads through no mask or `b` is no reduction this module packs for,
    /// `Some(None)` after an error.
    pub(super) fn masked_reduction(
        &mut self,
        b: Builtin,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Option<TExpr>> {
        // (`np.var(s[m], ddof)`: the other arguments go with the packed
        // array)
        let (arg, rest) = match (b, args) {
            (_, [a]) | (Builtin::Var | Builtin::Std, [a, _]) => (a, &args[1..]),
            _ => return None,
        };
        if !matches!(
            b,
            Builtin::Reduce(_)
                | Builtin::Mean
                | Builtin::Var
                | Builtin::Std
                | Builtin::Len
                | Builtin::Sum
                | Builtin::Max
                | Builtin::Min
                | Builtin::Any
                | Builtin::All
                | Builtin::CountNonzero
        ) {
            return None;
        }
        let mut masks = vec![];
        let source = self.unmasked_reads(arg, &mut masks, false);
        let (mask, _) = masks.first()?.clone();
        // arrays of integers gather (`np.sum(x[idx] * 2.0)`: an
        // elementwise read, `Lowerer::index_slots`)
        if masks.iter().any(|(m, _)| self.integer_array(m)) {
            return None;
        }
        // every array of the expression read through the mask
        if self.rank(&self.unmasked_reads(arg, &mut vec![], true)) > 0 {
            self.error(
                Diagnostic::error(format!("`{name}` combines a masked read with an array read without the mask"))
                    .at(arg.span, "a masked read and a whole array")
                    .note("NumPy's masked read is a 1-D array of the selected elements: it does not broadcast with the other array")
                    .help("read every array of the expression through the mask (`s[m] * w[m]`)"),
            );
            return Some(None);
        }
        Some(self.packed_reduction(b, name, (&source, &mask, &masks), rest, arg.span, span))
    }

    /// `e` with each masked read outside the reductions in it (`s[m]`)
    /// replaced by the array it selects from (`s`); its masks and where
    /// they are go on `masks`.
    /// (`number`: each replaced by the number 0, to tell whether arrays
    /// other than masked reads remain.)
    fn unmasked_reads(
        &self,
        e: &ast::Expr,
        masks: &mut Vec<(ast::Expr, Span)>,
        number: bool,
    ) -> ast::Expr {
        self.replace_reads(e, &mut |this, e| {
            let ast::ExprKind::Subscript { value, indices } = &e.kind else {
                return None;
            };
            let at = this.array_index(indices)?;
            masks.push((indices[at].clone(), e.span));
            if number {
                return Some(ast::Expr::float(0.0, e.span));
            }
            // (a mask alone selects from the whole value: a computed
            // array takes no slices)
            let dims = this.rank(&indices[at]);
            Some(match indices.len() {
                1 => (**value).clone(),
                _ => unmasked(value, indices, (at, dims), e.span),
            })
        })
    }

    /// `e` with each part outside the reductions in it that `f` replaces
    /// (gives `Some` for) replaced, the operands of its elementwise
    /// operators and calls walked (`unmasked_reads`; `runtime_slices.rs`
    /// finds the arrays other than its slices so).
    pub(super) fn replace_reads(
        &self,
        e: &ast::Expr,
        f: &mut dyn FnMut(&Self, &ast::Expr) -> Option<ast::Expr>,
    ) -> ast::Expr {
        use ast::ExprKind as K;
        if let Some(r) = f(self, e) {
            return r;
        }
        let mut out = e.clone();
        match &mut out.kind {
            K::Unary { arg, .. } => **arg = self.replace_reads(arg, f),
            K::Binary { lhs, rhs, .. } => {
                **lhs = self.replace_reads(lhs, f);
                **rhs = self.replace_reads(rhs, f);
            }
            K::Compare { first, rest } => {
                **first = self.replace_reads(first, f);
                for (_, r) in rest.iter_mut() {
                    *r = self.replace_reads(r, f);
                }
            }
            K::BoolOp { values, .. } => {
                for v in values.iter_mut() {
                    *v = self.replace_reads(v, f);
                }
            }
            K::IfExp { cond, then, else_ } => {
                **cond = self.replace_reads(cond, f);
                **then = self.replace_reads(then, f);
                **else_ = self.replace_reads(else_, f);
            }
            // an elementwise call (`np.abs(s[m])`), not a reduction
            K::Call { func, args, .. } if !self.reduces(func, args.len()) => {
                if let K::Attr { value, .. } = &mut func.kind {
                    **value = self.replace_reads(value, f);
                }
                for a in args.iter_mut() {
                    *a = self.replace_reads(a, f);
                }
            }
            _ => {}
        }
        out
    }

    /// Whether the call of `func` with `n` arguments reduces its array to
    /// a number (`np.sum`, `.mean()`, `len`, Python's `max(s)`).
    fn reduces(&self, func: &ast::Expr, n: usize) -> bool {
        let b = match &func.kind {
            ast::ExprKind::Attr { value, attr } if self.is_local_value(value) => {
                super::keywords::method_builtin(attr)
            }
            _ => self.builtin_of(func),
        };
        b.is_some_and(|b| {
            b.numpy_reduction()
                || b == Builtin::Len
                || matches!(b, Builtin::Sum | Builtin::Max | Builtin::Min) && n == 1
        })
    }

    fn packed_reduction(
        &mut self,
        b: Builtin,
        name: &str,
        (source, mask, masks): (&ast::Expr, &ast::Expr, &[(ast::Expr, Span)]),
        rest: &[ast::Expr],
        at_span: Span,
        span: Span,
    ) -> Option<TExpr> {
        // one mask: its text the same everywhere (an expression reads no
        // array it writes)
        let text = span_text;
        if let Some((m, _)) = masks.iter().find(|(m, _)| text(m.span) != text(mask.span)) {
            self.error(
                Diagnostic::error(format!("`{name}` reads through two different masks"))
                    .at(m.span, "this mask")
                    .also(mask.span, "and this one")
                    .note(
                        "NumPy's two selections may have different lengths, which do not broadcast",
                    )
                    .help("name the mask (`m = s > 0`) and read both arrays through it"),
            );
            return None;
        }
        let dims = self.mask_dims(mask)?;
        // (the label of another reduction of the statement: this one, and
        // those after it, run in order)
        if self.red_labels_used {
            self.red_labels = None;
        }
        if self.axis.is_some() || self.red_labels.as_ref().is_some_and(|l| !l.is_empty()) {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of a masked read takes no axis or label in parpy functions"
                ))
                .at(span, "an axis or a label")
                .note("the elements a mask selects are packed into a 1-D array first, as NumPy does, and reduced in order")
                .help("reduce the selected elements of one row (`np.sum(x[i, m])`)"),
            );
            return None;
        }
        let rank = self.rank(source);
        if rank != dims.len() {
            self.error(
                Diagnostic::error("a masked read with other slices is not supported in parpy functions")
                    .at(at_span, format!("{rank} dimension{} where the mask has {}", if rank == 1 { "" } else { "s" }, dims.len()))
                    .note("NumPy's masked read is a 1-D array of the selected elements: it does not broadcast with other arrays")
                    .help("index the other dimensions with numbers (`x[i, m]`), and read every array of the expression through the mask"),
            );
            return None;
        }
        // the source and the mask, element by element over the mask's
        // shape
        let from = self.pre.len();
        let mut ctx = super::slices::SliceCtx::default();
        self.init_ctx(&mut ctx, dims.clone(), span);
        let saved = self.slice.replace(ctx);
        let e = self.lower_expr(source);
        let m = self.lower_expr(mask);
        let ctx = std::mem::replace(&mut self.slice, saved)?;
        let (e, m) = (e?, self.truthy(m?)?);
        let et = self.scalar_elem(&e)?;
        let inner = self.sink_dependent(from, ctx.vars());
        let n: i64 = dims.iter().product();
        let bytes = n.saturating_mul(et.size() as i64);
        if bytes > super::local_arrays::MAX_LOCAL_ARRAY_BYTES {
            self.error(
                Diagnostic::error(format!(
                    "a masked read of {n} elements takes {bytes} bytes, more than the {} a parpy function may allocate",
                    super::local_arrays::MAX_LOCAL_ARRAY_BYTES
                ))
                .at(at_span, "NumPy's new array of the selected elements")
                .note("parpy packs the selected elements into a local array, on the stack or in a GPU thread's memory")
                .help("reduce `np.where(m, s, 0.0)` instead where the order of the sum does not matter"),
            );
            return None;
        }
        // pack: `for k: if m(k): buf[count] = e(k); count += 1`
        let int_ty = self.opts.int_type;
        let it = Type::Scalar(int_ty);
        let array = Type::Array {
            elem: et,
            shape: vec![n],
        };
        let buf = self.new_var("masked", array, VarKind::Local, span);
        let count = self.new_var("count", it.clone(), VarKind::Local, span);
        let count_e = || Expr::var(count, it.clone(), span);
        self.pre
            .push(Stmt::assign_var(count, Expr::int(0, int_ty, span), span));
        let bump = Expr::binary(
            BinOp::Add,
            count_e(),
            Expr::int(1, int_ty, span),
            it.clone(),
            span,
        );
        let mut body = inner;
        body.push(Stmt::new(
            StmtKind::If {
                cond: m,
                then_body: vec![
                    Stmt::new(
                        StmtKind::Assign {
                            dst: Place::Index {
                                array: buf,
                                indices: vec![count_e()],
                            },
                            value: e.e,
                        },
                        span,
                    ),
                    Stmt::assign_var(count, bump, span),
                ],
                else_body: vec![],
            },
            span,
        ));
        let nest = super::slices::loop_nest(ctx.vars(), &dims, body, vec![], None, int_ty, span);
        self.pre.extend(nest);
        if b == Builtin::Len {
            return Some(TExpr {
                e: count_e(),
                weak: true,
            });
        }
        // NumPy's max and min of no elements raise
        self.pre.extend(nonempty_check(b, count_e(), int_ty, span));
        // the reduction of the packed array `buf[:]`, its loop then ending
        // at the count
        let hidden = format!("{name}.masked@{}", span.lo);
        self.scope.bind(
            &hidden,
            Binding {
                var: buf,
                weak: false,
            },
        );
        // (its count, for the reductions that divide by it: `packed_count`)
        self.scope.bind(
            &format!("{hidden}{COUNT}"),
            Binding {
                var: count,
                weak: false,
            },
        );
        let packed = ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(ast::Expr::name(&hidden, at_span)),
                indices: vec![ast::Expr::full_slice(at_span)],
            },
            span: at_span,
        };
        let from = self.pre.len();
        let all: Vec<ast::Expr> = std::iter::once(packed)
            .chain(rest.iter().cloned())
            .collect();
        let r = self.builtin_call_with(b, name, &all, span)?;
        // (`min(count, n)`, which it is: `ir::range` proves the reads of
        // `buf` in range)
        let end = Expr::binary(BinOp::Min, count_e(), Expr::int(n, int_ty, span), it, span);
        // (one reduction; `np.var`'s mean and sum of squares two)
        let loops = match b {
            Builtin::Var | Builtin::Std => 2,
            _ => 1,
        };
        if super::slices::end_loop_at(&mut self.pre[from..], buf, n, end) != loops {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of a masked read is not supported in parpy functions"
                ))
                .at(
                    span,
                    "a reduction parpy cannot end at the count of selected elements",
                ),
            );
            return None;
        }
        Some(r)
    }
}

/// The suffix of the hidden name bound to the count of a packed array.
const COUNT: &str = ".count";

impl Lowerer<'_, '_> {
    /// The number of elements of `arg` known only at run time: the count
    /// of a packed masked read (`packed[:]`, see `packed_reduction`), as
    /// an integer, or of the slices with run-time bounds of the reduction
    /// being lowered (`runtime_slices.rs`); `None` for other values, whose
    /// shape says it.
    pub(super) fn packed_count(&self, arg: &ast::Expr) -> Option<Expr> {
        if let Some(count) = self.runtime_count() {
            return Some(count);
        }
        let ast::ExprKind::Subscript { value, .. } = &arg.kind else {
            return None;
        };
        let ast::ExprKind::Name(n) = &value.kind else {
            return None;
        };
        let b = self.scope.get(&format!("{n}{COUNT}"))?;
        Some(Expr::var(b.var, Type::Scalar(self.opts.int_type), arg.span))
    }
}

/// The source text at `span` (`None` where it is not known).
pub(super) fn span_text(span: Span) -> Option<String> {
    crate::diag::source(span.file).and_then(|f| {
        f.text
            .get(span.lo as usize..span.hi as usize)
            .map(str::to_string)
    })
}

/// `base[indices]` with the mask at `at` replaced by `dims` full slices:
/// the array the mask selects from.
fn unmasked(
    base: &ast::Expr,
    indices: &[ast::Expr],
    (at, dims): (usize, usize),
    span: Span,
) -> ast::Expr {
    let mut whole = indices.to_vec();
    whole.splice(
        at..=at,
        std::iter::repeat_n(ast::Expr::full_slice(indices[at].span), dims),
    );
    ast::Expr {
        kind: ast::ExprKind::Subscript {
            value: Box::new(base.clone()),
            indices: whole,
        },
        span,
    }
}

/// What NumPy's max and min (`Builtin::Reduce`) and argmax and argmin, or
/// Python's max and min (`Builtin::Max` / `Min` of a slice), raise for no
/// elements: a `ValueError` with these
/// words (`None`: the builtin has an answer for none).
pub(super) fn empty_extreme_message(b: Builtin) -> Option<&'static str> {
    match b {
        Builtin::Reduce(ReduceOp::Max) => {
            Some("zero-size array to reduction operation maximum which has no identity")
        }
        Builtin::Reduce(ReduceOp::Min) => {
            Some("zero-size array to reduction operation minimum which has no identity")
        }
        Builtin::NanReduce(ReduceOp::Max) => {
            Some("zero-size array to reduction operation fmax which has no identity")
        }
        Builtin::NanReduce(ReduceOp::Min) => {
            Some("zero-size array to reduction operation fmin which has no identity")
        }
        Builtin::ArgMax => Some("attempt to get argmax of an empty sequence"),
        Builtin::ArgMin => Some("attempt to get argmin of an empty sequence"),
        Builtin::Max => Some("max() iterable argument is empty"),
        Builtin::Min => Some("min() iterable argument is empty"),
        _ => None,
    }
}

/// The check that the `count` elements of a max or min `b` (of a masked
/// read, or of a slice with run-time bounds) are some: NumPy's
/// `ValueError` (`empty_extreme_message`) where there are none. `None`
/// for builtins with an answer for none.
pub(super) fn nonempty_check(b: Builtin, count: Expr, int_ty: ElemTy, span: Span) -> Option<Stmt> {
    let message = empty_extreme_message(b)?;
    let some = Expr::compare(BinOp::Gt, count, Expr::int(0, int_ty, span), span);
    let check = Expr::assert(some, Some(message.to_string()), "ValueError", span);
    Some(Stmt::new(StmtKind::Expr(check), span))
}
