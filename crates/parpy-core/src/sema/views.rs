//! NumPy's views saved in a local name, and the subscripts of a reshaped
//! view.
//!
//! `t = y.T` (every spelling of a transpose `stmt.rs` `rewrite_views`
//! makes `y.T`, and `x[i].T`, which it makes `x.T[:, :, i]`), `f =
//! np.flip(m)` / `np.fliplr` / `np.flipud` (NumPy's `m[::-1, ...]`, which
//! is what `f` stands for), `r = m.reshape(...)` / `np.reshape` /
//! `m.ravel()` / `np.ravel` where NumPy's result is a view of `m` (`m`
//! C-contiguous, or `_attempt_nocopy_reshape` succeeds; parpy's arrays
//! are C-contiguous, so this is known when compiling), and `d =
//! m.diagonal()` / `np.diagonal` / `np.diag` of a matrix: `name` stands
//! for the view where later statements read it (`alias.rs` `rows`, as a
//! row `r = x[i]` does), its scalar indices copied first (`named_view`).
//! Writes through the name reach the array, and writes to the array show
//! through the name, as in NumPy. Where NumPy copies (a reshape of a
//! transposed matrix, `ravel` of a column) the name is the copy
//! `local_arrays.rs` makes.
//!
//! A subscript of a reshaped view (`r[0, 1] = v`, `r[:, 1]`, written or
//! read) is the operand's element at the same row-major position
//! (`reshape_subscript`); a store into a diagonal is the error NumPy's
//! read-only view raises.

use crate::diag::Diagnostic;
use crate::ir::{BinOp, ElemTy, Expr, Stmt, Type};
use crate::resolve::Builtin;
use crate::syntax::ast;

use super::expr::{flatten_subscript, transpose_of, Sub};
use super::slices::{substitute, IndexSlot, SliceCtx};
use super::Lowerer;

/// A reshape: its operand and new shape (as written; `None`: flattened).
type Reshape<'e> = (&'e ast::Expr, Option<Vec<&'e ast::Expr>>);

/// Whether an array of `shape` and `strides` (in elements) is
/// C-contiguous as NumPy's flag says (dimensions of length 1 ignored, an
/// empty array contiguous).
fn c_contiguous(shape: &[i64], strides: &[i64]) -> bool {
    let mut sd = 1;
    for (d, s) in shape.iter().zip(strides).rev() {
        if *d == 0 {
            return true;
        }
        if *d != 1 {
            if *s != sd {
                return false;
            }
            sd *= d;
        }
    }
    true
}

/// NumPy's `_attempt_nocopy_reshape` (C order): whether an array of
/// `shape` and `strides` can be seen as `new` without a copy.
fn nocopy_reshape(shape: &[i64], strides: &[i64], new: &[i64]) -> bool {
    let (old, olds): (Vec<i64>, Vec<i64>) = shape
        .iter()
        .zip(strides)
        .filter(|(d, _)| **d != 1)
        .map(|(d, s)| (*d, *s))
        .unzip();
    let (mut oi, mut oj, mut ni, mut nj) = (0, 1, 0, 1);
    while ni < new.len() && oi < old.len() {
        let (mut np, mut op) = (new[ni], old[oi]);
        while np != op {
            if np < op {
                if nj >= new.len() {
                    return false;
                }
                np *= new[nj];
                nj += 1;
            } else {
                if oj >= old.len() {
                    return false;
                }
                op *= old[oj];
                oj += 1;
            }
        }
        for ok in oi..oj - 1 {
            if olds[ok] != old[ok + 1] * olds[ok + 1] {
                return false;
            }
        }
        ni = nj;
        nj += 1;
        oi = oj;
        oj += 1;
    }
    true
}

impl Lowerer<'_, '_> {
    /// The builtin a call makes and its arguments, a method's array first
    /// (`y.diagonal()`); `None` for other expressions.
    pub(super) fn view_builtin_call<'e>(
        &self,
        e: &'e ast::Expr,
    ) -> Option<(Builtin, Vec<&'e ast::Expr>)> {
        let ast::ExprKind::Call {
            func,
            args,
            keywords,
        } = &e.kind
        else {
            return None;
        };
        if !keywords.is_empty() {
            return None;
        }
        if let ast::ExprKind::Attr { value, attr } = &func.kind {
            if self.is_local_value(value) {
                let b = super::keywords::method_builtin(attr)?;
                return Some((b, std::iter::once(&**value).chain(args).collect()));
            }
        }
        Some((self.builtin_of(func)?, args.iter().collect()))
    }

    /// Whether `e` is an array parameter's view parpy indexes: the array
    /// (`y`), its transpose (`y.T`) or a subscript of one of them.
    fn array_view(&self, e: &ast::Expr) -> bool {
        let (base, _) = flatten_subscript(e);
        let base = transpose_of(base).unwrap_or(base);
        matches!(base.kind, ast::ExprKind::Name(_)) && self.array_arg(base).is_some()
    }

    /// The reshape `e` is, when NumPy's result is a view of an array
    /// parameter's view (`None` for a copy, another expression, or when
    /// that is not known).
    pub(super) fn reshape_view<'e>(&mut self, e: &'e ast::Expr) -> Option<Reshape<'e>> {
        let ast::ExprKind::Call { func, args, .. } = &e.kind else {
            return None;
        };
        let (a, dims) = self.reshape_of(func, args)?;
        if !self.array_view(a) {
            return None;
        }
        let flatten = match &func.kind {
            ast::ExprKind::Attr { attr, .. } => attr == "flatten",
            _ => false,
        };
        // (`flatten` always copies)
        if flatten {
            return None;
        }
        let (shape, strides) = self.view_layout(a)?;
        let view = match &dims {
            // `ravel`: a view of a C-contiguous array only
            None => c_contiguous(&shape, &strides),
            Some(d) => {
                let diags = self.sh.diags.len();
                let new = self.reshape_shape(&shape, Some(d.clone()), e.span);
                self.sh.diags.truncate(diags);
                let new = new?;
                new == shape
                    || shape.iter().product::<i64>() <= 1
                    || c_contiguous(&shape, &strides)
                    || nocopy_reshape(&shape, &strides, &new)
            }
        };
        view.then_some((a, dims))
    }

    /// The shape and the strides (in elements) of an array parameter's
    /// view `e` (`array_view`); `None` where a slice is not known when
    /// compiling.
    fn view_layout(&mut self, e: &ast::Expr) -> Option<(Vec<i64>, Vec<i64>)> {
        let flat;
        let e = match self.subscript_of_a_view(e) {
            Some(_) => {
                let diags = self.sh.diags.len();
                let f = self.composed_subscript(e);
                self.sh.diags.truncate(diags);
                flat = f?;
                &flat
            }
            None => e,
        };
        let (base, idx) = flatten_subscript(e);
        let (array, transposed) = match transpose_of(base) {
            Some(x) => (x, true),
            None => (base, false),
        };
        let (_, Type::Array { shape, .. }) = self.array_arg(array)? else {
            return None;
        };
        let mut strides = vec![1i64; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * shape[k + 1];
        }
        let mut shape = shape;
        if transposed {
            shape.reverse();
            strides.reverse();
        }
        if idx.len() > shape.len() {
            return None;
        }
        let (mut out_shape, mut out_strides) = (vec![], vec![]);
        let from = self.pre.len();
        let diags = self.sh.diags.len();
        for (k, d) in shape.iter().enumerate() {
            match idx.get(k).map(|i| &i.kind) {
                None => {
                    out_shape.push(*d);
                    out_strides.push(strides[k]);
                }
                Some(ast::ExprKind::Slice { lo, hi, step }) => {
                    let parts = (lo.as_deref(), hi.as_deref(), step.as_deref());
                    match self.slice_bounds(parts, *d, e.span) {
                        Some(IndexSlot::Slice { extent, step, .. }) => {
                            out_shape.push(extent);
                            out_strides.push(strides[k] * step);
                        }
                        _ => {
                            self.pre.truncate(from);
                            self.sh.diags.truncate(diags);
                            return None;
                        }
                    }
                }
                Some(ast::ExprKind::Ellipsis) => return None,
                Some(_) if self.is_new_axis(idx[k]) => return None,
                Some(_) => {}
            }
        }
        self.pre.truncate(from);
        self.sh.diags.truncate(diags);
        Some((out_shape, out_strides))
    }

    /// `name = value` of one of NumPy's views (see the module doc): the
    /// statements that copy its scalar indices (`Some(None)` after an
    /// error); `None` when `value` is no such view or `name` is bound
    /// elsewhere too.
    pub(super) fn view_assign(
        &mut self,
        name: &str,
        value: &ast::Expr,
    ) -> Option<Option<Vec<Stmt>>> {
        if !self.once.binds_once(name) || self.scope.get(name).is_some() {
            return None;
        }
        // `t = y.T`: nothing to copy
        if transpose_of(value).is_some_and(|x| self.array_arg(x).is_some()) {
            self.rows.push((name.to_string(), value.clone()));
            return Some(Some(vec![]));
        }
        let span = value.span;
        // `s = r[2:4]` of `r = y.ravel()`: a view of the reshaped view, its
        // scalar indices copied
        if let ast::ExprKind::Subscript {
            value: base,
            indices,
        } = &value.kind
        {
            if matches!(base.kind, ast::ExprKind::Call { .. })
                && self.rank(value) > 0
                && self.reshape_view(base).is_some()
            {
                let mut stmts = vec![];
                let mut idx = vec![];
                for ix in indices {
                    if matches!(ix.kind, ast::ExprKind::Slice { .. }) {
                        if let Some(moving) = self.changing_name(ix) {
                            self.error(
                                Diagnostic::error(format!(
                                    "`{name}` would be a view whose bounds read `{moving}`, which changes"
                                ))
                                .at(ix.span, format!("reads `{moving}`"))
                                .help("copy the bound first (`lo = j` assigned once)"),
                            );
                            self.scope.mark_failed(name);
                            return Some(None);
                        }
                        idx.push(ix.clone());
                        continue;
                    }
                    let copy = ast::Expr::name(&self.fresh_name(&format!("{name}_i")), ix.span);
                    match self.scalar_assign(&copy, super::stmt::Value::Ast(ix)) {
                        Some(k) => stmts.push(Stmt::new(k, ix.span)),
                        None => return Some(None),
                    }
                    idx.push(copy);
                }
                let view = ast::Expr {
                    kind: ast::ExprKind::Subscript {
                        value: base.clone(),
                        indices: idx,
                    },
                    span,
                };
                self.rows.push((name.to_string(), view));
                return Some(Some(stmts));
            }
        }
        if let Some((a, dims)) = self.reshape_view(value) {
            let (stmts, a) = match self.operand_view(name, a)? {
                Some(v) => v,
                None => return Some(None),
            };
            let args = match dims {
                None => vec![],
                Some(d) => d.into_iter().cloned().collect(),
            };
            let func = ast::Expr {
                kind: ast::ExprKind::Attr {
                    value: Box::new(a),
                    attr: "reshape".into(),
                },
                span,
            };
            let view = match args.is_empty() {
                true => ast::Expr::call(func, vec![ast::Expr::int(-1, span)], span),
                false => ast::Expr::call(func, args, span),
            };
            self.rows.push((name.to_string(), view));
            return Some(Some(stmts));
        }
        let (b, args) = self.view_builtin_call(value)?;
        let m = *args.first()?;
        if !self.array_view(m) {
            return None;
        }
        match b {
            Builtin::Flip(axis) => {
                let flipped = self.flipped(m, axis, &args[1..], span)?;
                let (stmts, view) = match self.named_view(name, &flipped)? {
                    Some(v) => v,
                    None => return Some(None),
                };
                self.rows.push((name.to_string(), view));
                Some(Some(stmts))
            }
            Builtin::Diagonal(diag) => {
                if diag && self.rank(m) != 2 {
                    return None;
                }
                let (stmts, m) = match self.operand_view(name, m)? {
                    Some(v) => v,
                    None => return Some(None),
                };
                let func = ast::Expr {
                    kind: ast::ExprKind::Attr {
                        value: Box::new(ast::Expr::name(crate::resolve::NUMPY_ROOT, span)),
                        attr: "diagonal".into(),
                    },
                    span,
                };
                let rest = args[1..].iter().map(|a| (*a).clone());
                let view = ast::Expr::call(func, std::iter::once(m).chain(rest).collect(), span);
                self.rows.push((name.to_string(), view));
                Some(Some(stmts))
            }
            _ => None,
        }
    }

    /// `np.flip(m, axis)` of a view `m` as NumPy's subscript of it
    /// (`m[::-1, :]`); `None` when the axis is not known or is not one.
    fn flipped(
        &mut self,
        m: &ast::Expr,
        axis: Option<i64>,
        rest: &[&ast::Expr],
        span: crate::diag::Span,
    ) -> Option<ast::Expr> {
        let rank = self.rank(m);
        let axes: Vec<usize> = match (axis, rest) {
            (Some(k), []) if (k as usize) < rank => vec![k as usize],
            (None, []) => (0..rank).collect(),
            (None, [a]) => {
                let diags = self.sh.diags.len();
                let k = self.known_axis(a, "np.flip");
                self.sh.diags.truncate(diags);
                let k = k?;
                let r = rank as i64;
                if !(-r..r).contains(&k) {
                    return None;
                }
                vec![k.rem_euclid(r) as usize]
            }
            _ => return None,
        };
        let minus_one = ast::Expr {
            kind: ast::ExprKind::Unary {
                op: crate::ops::UnOp::Neg,
                arg: Box::new(ast::Expr::int(1, span)),
            },
            span,
        };
        let indices = (0..rank)
            .map(|d| match axes.contains(&d) {
                true => ast::Expr {
                    kind: ast::ExprKind::Slice {
                        lo: None,
                        hi: None,
                        step: Some(Box::new(minus_one.clone())),
                    },
                    span,
                },
                false => ast::Expr::full_slice(span),
            })
            .collect();
        Some(ast::Expr {
            kind: ast::ExprKind::Subscript {
                value: Box::new(m.clone()),
                indices,
            },
            span,
        })
    }

    /// A reshaped view of an array name passed to a helper: the reshape of
    /// the array bound in the helper's `scope` as `NAME{suffix}`, its new
    /// shape in numbers (`Some(None)` after an error); `None` for other
    /// arguments.
    pub(super) fn reshaped_argument(
        &mut self,
        a: &ast::Expr,
        suffix: &str,
        scope: &mut super::scope::Scope,
    ) -> Option<Option<ast::Expr>> {
        let (m, dims) = self.reshape_view(a)?;
        let ast::ExprKind::Name(n) = &m.kind else {
            return None;
        };
        let (var, _) = self.array_arg(m)?;
        let span = a.span;
        let Some((from, _)) = self.view_layout(m) else {
            return Some(None);
        };
        let Some(shape) = self.reshape_shape(&from, dims, span) else {
            return Some(None);
        };
        let name = format!("{n}{suffix}");
        scope.bind(&name, super::scope::Binding { var, weak: false });
        let func = ast::Expr {
            kind: ast::ExprKind::Attr {
                value: Box::new(ast::Expr::name(&name, m.span)),
                attr: "reshape".into(),
            },
            span,
        };
        let dims = shape.iter().map(|d| ast::Expr::int(*d, span)).collect();
        Some(Some(ast::Expr::call(func, dims, span)))
    }

    /// The operand of a named view, its scalar indices copied (`named_view`):
    /// the statements and the view (`Some(None)` after an error).
    #[allow(clippy::type_complexity)]
    fn operand_view(
        &mut self,
        name: &str,
        m: &ast::Expr,
    ) -> Option<Option<(Vec<Stmt>, ast::Expr)>> {
        if !matches!(m.kind, ast::ExprKind::Subscript { .. }) {
            return Some(Some((vec![], m.clone())));
        }
        self.named_view(name, m)
    }

    /// A subscript `e` of a view call `base` with indices `idx`, as a store
    /// target or read: a reshaped view's element (`reshape_subscript`), a
    /// diagonal's store refused; `None` for other calls.
    pub(super) fn view_subscript(
        &mut self,
        e: &ast::Expr,
        base: &ast::Expr,
        idx: &[&ast::Expr],
    ) -> Option<Option<Sub>> {
        if let Some((Builtin::Diagonal(_), _)) = self.view_builtin_call(base) {
            self.error(
                Diagnostic::error("the diagonal of an array is read-only in NumPy")
                    .at(e.span, "a store into a diagonal")
                    .note("NumPy's `diagonal` / `np.diag` of a matrix is a read-only view: Python raises `ValueError: assignment destination is read-only`")
                    .help("store into the array's elements (`y[k, k] = v`), or copy the diagonal first (`d = np.diagonal(y).copy()`)"),
            );
            return Some(None);
        }
        // `np.flip(y)[0] = v`: NumPy's subscript of `y`
        if let Some((Builtin::Flip(axis), args)) = self.view_builtin_call(base) {
            let m = *args.first()?;
            if !self.array_view(m) {
                return None;
            }
            let flipped = self.flipped(m, axis, &args[1..], e.span)?;
            let sub = ast::Expr {
                kind: ast::ExprKind::Subscript {
                    value: Box::new(flipped),
                    indices: idx.iter().map(|i| (*i).clone()).collect(),
                },
                span: e.span,
            };
            return Some(self.lower_subscript(&sub));
        }
        let r = self.reshape_view(base)?;
        Some(self.reshape_subscript(e, r, idx))
    }

    /// The element `idx` of the reshape `(a, dims)` of a view: `a`'s
    /// element at the same row-major position (see the module doc).
    fn reshape_subscript(
        &mut self,
        e: &ast::Expr,
        (a, dims): Reshape<'_>,
        idx: &[&ast::Expr],
    ) -> Option<Sub> {
        let span = e.span;
        let (from, _) = self.view_layout(a)?;
        let shape = self.reshape_shape(&from, dims, span)?;
        let name = match &flatten_subscript(a).0.kind {
            ast::ExprKind::Name(n) => format!("{n}.reshape(...)"),
            _ => "the reshaped array".to_string(),
        };
        let slots = self.index_slots(idx, &shape, &name, span)?;
        // (the view as its index errors name it: `x.reshape(2, 3)`)
        let view = match &flatten_subscript(a).0.kind {
            ast::ExprKind::Name(n) => format!(
                "{n}.reshape({})",
                shape
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => "the reshaped array".to_string(),
        };
        // a run-time index inside its dimension: Python's IndexError
        let dims = slots
            .iter()
            .filter(|s| !matches!(s, IndexSlot::NewAxis | IndexSlot::Gather(_)));
        for (axis, (s, n)) in dims.zip(&shape).enumerate() {
            let IndexSlot::Scalar(i) = s else {
                continue;
            };
            if self
                .range(i)
                .is_some_and(|r| r.lo >= 0 && r.hi < *n as i128)
            {
                continue;
            }
            let ok = Expr::binary(
                BinOp::And,
                Expr::compare(BinOp::Ge, i.clone(), Expr::int(0, i.elem(), span), span),
                Expr::compare(BinOp::Lt, i.clone(), Expr::int(*n, i.elem(), span), span),
                Type::Scalar(ElemTy::Bool),
                span,
            );
            let of = crate::ir::IndexOf {
                array: view.clone(),
                axis,
                shape: shape.clone(),
            };
            let check = Expr::assert_index(ok, of, span);
            self.pre
                .push(Stmt::new(crate::ir::StmtKind::Expr(check), span));
        }
        let at = self.map_slices(slots, false, span)?;
        // the operand's element at that position
        let own = super::reshape::reshaped_indices(at, &shape, &from, self.opts.int_type, span);
        let sub = match &a.kind {
            ast::ExprKind::Subscript { .. } => a.clone(),
            _ => ast::Expr {
                kind: ast::ExprKind::Subscript {
                    value: Box::new(a.clone()),
                    indices: vec![],
                },
                span: a.span,
            },
        };
        let saved = self.slice.replace(SliceCtx::default());
        let inner = self.lower_subscript(&sub);
        let ctx = std::mem::replace(&mut self.slice, saved)?;
        let Sub::Elem {
            array,
            mut indices,
            elem,
            alias,
        } = inner?
        else {
            return None;
        };
        if ctx.vars().len() != own.len() {
            return None;
        }
        for (v, i) in ctx.vars().iter().zip(&own) {
            indices.iter_mut().for_each(|x| substitute(x, *v, i));
        }
        Some(Sub::Elem {
            array,
            indices,
            elem,
            alias,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{c_contiguous, nocopy_reshape};

    #[test]
    fn reshape_views_follow_numpy() {
        // `y[:, :2].reshape(6)` of a 3x4 `y`: a copy; `.reshape(3, 2, 1)`:
        // a view; `a[::2].reshape(5, 1)`: a view
        assert!(!c_contiguous(&[3, 2], &[4, 1]));
        assert!(!nocopy_reshape(&[3, 2], &[4, 1], &[6]));
        assert!(nocopy_reshape(&[3, 2], &[4, 1], &[3, 2, 1]));
        assert!(nocopy_reshape(&[5], &[2], &[5, 1]));
        // `y.T.reshape(2, 6)` of a 3x4 `y`: a copy
        assert!(!nocopy_reshape(&[4, 3], &[1, 4], &[2, 6]));
        // `y[:1].T`, shape (4, 1): C-contiguous
        assert!(c_contiguous(&[4, 1], &[1, 4]));
    }
}
