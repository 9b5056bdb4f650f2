//! `np.<ufunc>.reduce` of the binary ufuncs that are no NumPy reduction
//! of their own (`np.subtract.reduce`, `np.logaddexp.reduce`,
//! `np.bitwise_or.reduce`, ...: [`crate::resolve::FOLDED_UFUNCS`]): NumPy's
//! left fold `r = op(r, a[k])` from `r = a[0]`, in order, each step the
//! ufunc's one elementwise rule (`np.<ufunc>(r, v)` of two hidden locals,
//! lowered as the call is anywhere else). The accumulator has the type of
//! `op(a[0], a[0])`, NumPy's loop for the operand's type (`np.divide` of
//! integers: float64; `np.logaddexp` of int8: float16).

use crate::diag::{Diagnostic, Span};
use crate::ir::{ElemTy, Expr, ExprKind, ForLoop, Stmt, StmtKind, Type, VarId, VarKind};
use crate::syntax::ast;

use super::scope::Binding;
use super::slices::{loop_nest, substitute, substitute_stmts};
use super::types::convert;
use super::{Lowerer, TExpr};

/// NumPy's `ufunc.identity` of `ufunc`, in type `ty`: the value of an empty
/// reduction (`None`: NumPy's ValueError). Only a ufunc with one reduces
/// several axes at once (NumPy's "reorderable").
fn identity(ufunc: &str, ty: ElemTy, span: Span) -> Option<Expr> {
    let t = Type::Scalar(ty);
    let int = |v: i64| match ty {
        ElemTy::Bool => Expr::new(ExprKind::Bool(v != 0), t.clone(), span),
        _ if ty.is_float() => Expr::new(ExprKind::Float(v as f64), t.clone(), span),
        // (-1 of an unsigned type is its bit pattern, all ones)
        _ => Expr::int(v, ty, span),
    };
    Some(match ufunc {
        "bitwise_or" | "bitwise_xor" | "logical_xor" | "hypot" | "gcd" => int(0),
        "bitwise_and" => int(-1),
        "logaddexp" | "logaddexp2" => Expr::new(ExprKind::Float(f64::NEG_INFINITY), t, span),
        _ => return None,
    })
}

/// Why NumPy's reduce (`scan`: accumulate) of `ufunc` in type `ty` is not
/// the plain fold of its elementwise loop, which parpy then refuses:
/// NumPy's float16 `subtract` / `divide` reduce keeps the running value in
/// float32 along a run of memory, and its float32 / float64 `power` /
/// `arctan2` reduce and accumulate through SIMD loops whose answer depends
/// on the machine (on AVX-512, a short row's reduce is `op(a[0], a[-1])`).
fn unlike_a_fold(ufunc: &str, ty: ElemTy, scan: bool) -> Option<&'static str> {
    match (ufunc, ty) {
        ("subtract" | "divide", ElemTy::F16) if !scan => {
            Some("NumPy keeps a float16 fold in float32 along each run of memory, rounding once")
        }
        ("power" | "arctan2", ElemTy::F32 | ElemTy::F64) => Some(
            "NumPy reduces it with SIMD loops whose answer is not the fold and depends on the machine",
        ),
        _ => None,
    }
}

/// The hidden names the step `np.<ufunc>(acc, v)` reads.
const STEP_NAMES: [&str; 2] = ["(fold.acc)", "(fold.v)"];

impl Lowerer<'_, '_> {
    /// A fold's first value, element `e` in the accumulator's type `ty`: a
    /// bool is the element's truth, as the ufunc takes it (`logical_xor`).
    fn fold_start(&mut self, e: Expr, ty: ElemTy) -> Option<Expr> {
        match ty {
            ElemTy::Bool => self.truthy(TExpr { e, weak: false }),
            _ => Some(convert(e, ty)),
        }
    }

    /// `np.<ufunc>(l, r)` of locals `l` and `r`, through the ufunc's
    /// elementwise rule: the statements it needs first and its value.
    pub(super) fn ufunc_step(
        &mut self,
        ufunc: &str,
        (l, r): (VarId, VarId),
        span: Span,
    ) -> Option<(Vec<Stmt>, TExpr)> {
        let prev: Vec<_> = STEP_NAMES
            .iter()
            .zip([l, r])
            .map(|(n, var)| self.scope.bind(n, Binding { var, weak: false }))
            .collect();
        let args = STEP_NAMES.map(|n| ast::Expr::name(n, span)).to_vec();
        let call = Self::numpy_call(ufunc, args, span);
        let pre = std::mem::take(&mut self.pre);
        let (slice, labels) = (self.slice.take(), self.red_labels.take());
        let step = self.lower_expr(&call);
        (self.slice, self.red_labels) = (slice, labels);
        let before = std::mem::replace(&mut self.pre, pre);
        for (n, p) in STEP_NAMES.iter().zip(prev) {
            match p {
                Some(p) => {
                    self.scope.bind(n, p);
                }
                None => self.scope.unbind(n),
            }
        }
        Some((before, step?))
    }

    /// The type NumPy folds `ufunc` in over elements of type `et` (`scan`:
    /// for `accumulate`): that of `op(a, a)`; a comparison's bool of other
    /// types is NumPy's TypeError; where NumPy's loop is no plain fold
    /// (`unlike_a_fold`), a located error.
    pub(super) fn fold_type(
        &mut self,
        ufunc: &str,
        et: ElemTy,
        name: &str,
        scan: bool,
        span: Span,
    ) -> Option<ElemTy> {
        let v = self.new_var("v", Type::Scalar(et), VarKind::Local, span);
        let (_, step) = self.ufunc_step(ufunc, (v, v), span)?;
        let rt = self.scalar_elem(&step)?;
        let logical = ufunc.starts_with("logical_");
        if rt == ElemTy::Bool && et != ElemTy::Bool && !logical {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of {} values: NumPy has no loop that folds them (a TypeError)",
                    et.numpy_name()
                ))
                .at(
                    span,
                    format!("`np.{ufunc}` of two {} values is a bool", et.numpy_name()),
                )
                .help("NumPy reduces a comparison of bools only")
                .type_error(),
            );
            return None;
        }
        if let Some(why) = unlike_a_fold(ufunc, rt, scan) {
            self.error(
                Diagnostic::error(format!(
                    "`{name}` of {} values is not supported",
                    et.numpy_name()
                ))
                .at(span, format!("folded in {}", rt.numpy_name()))
                .note(why)
                .help(format!(
                    "write the loop (`r = a[0]`, then `r = np.{ufunc}(r, a[k])`)"
                )),
            );
            return None;
        }
        Some(rt)
    }

    /// `np.<ufunc>.reduce(arg)` (its axis, 0 unless told, in
    /// `self.axis`): NumPy's left fold along the axis, sequential.
    pub(super) fn ufunc_fold(
        &mut self,
        ufunc: &'static str,
        name: &str,
        arg: &ast::Expr,
        span: Span,
    ) -> Option<TExpr> {
        let axes = self.axis.take();
        let from = self.pre.len();
        let (elem, ctx) = self.lower_reduced(arg);
        let ctx = ctx?;
        let mut elem = elem?;
        let et = self.scalar_elem(&elem)?;
        let Some(all) = ctx.extents().map(<[i64]>::to_vec) else {
            self.error(
                Diagnostic::error(format!("the argument of `{name}` contains no slice"))
                    .at(arg.span, "nothing to reduce")
                    .help(format!("pass a 1-D slice or array, e.g. `{name}(x[i, :])`")),
            );
            return None;
        };
        let mut inner = self.sink_dependent(from, ctx.vars());
        let (vars, dims, _) = self.apply_axes(
            axes,
            (ctx.vars(), &all),
            (&mut elem.e, &mut inner),
            name,
            span,
        )?;
        let acc_ty = self.fold_type(ufunc, et, name, false, span)?;
        let empty = identity(ufunc, acc_ty, span);
        // several axes: NumPy's "reorderable" ufuncs only (those with an
        // identity), folded here in row-major order, which gives NumPy's
        // answer where the order cannot change it
        if vars.len() > 1 && (empty.is_none() || acc_ty.is_float()) {
            let why = match empty {
                None => format!("NumPy's `{ufunc}` is not reorderable (a ValueError)"),
                Some(_) => "NumPy's order over several axes of floats follows the memory layout"
                    .to_string(),
            };
            self.error(
                Diagnostic::error(format!("`{name}` of several axes at once is not supported"))
                    .at(span, "several axes reduced")
                    .note(why)
                    .help("reduce one axis at a time (`axis=0`, the default)"),
            );
            return None;
        }
        let n: i64 = dims.iter().product();
        if n == 0 {
            return Some(TExpr {
                e: match empty {
                    Some(v) => v,
                    None => {
                        // NumPy's ValueError when it runs, as `np.max`'s
                        let message = format!(
                            "zero-size array to reduction operation {ufunc} which has no identity"
                        );
                        let never =
                            Expr::new(ExprKind::Bool(false), Type::Scalar(ElemTy::Bool), span);
                        let check = Expr::assert(never, Some(message), "ValueError", span);
                        self.pre.push(Stmt::new(StmtKind::Expr(check), span));
                        Expr::int(0, acc_ty, span)
                    }
                },
                weak: false,
            });
        }
        self.sequential_only(name)?;
        let acc_t = Type::Scalar(acc_ty);
        let acc = self.new_var("acc", acc_t.clone(), VarKind::Local, span);
        let v = self.new_var("v", Type::Scalar(et), VarKind::Local, span);
        let (step_pre, step) = self.ufunc_step(ufunc, (acc, v), span)?;
        let int_ty = self.opts.int_type;
        let zero = Expr::int(0, int_ty, span);
        let mut first = elem.e.clone();
        let mut first_inner = inner.clone();
        for j in &vars {
            substitute(&mut first, *j, &zero);
            substitute_stmts(&mut first_inner, *j, &zero);
        }
        let mut body = inner;
        body.push(Stmt::assign_var(v, elem.e, span));
        body.extend(step_pre);
        body.push(Stmt::assign_var(acc, convert(step.e, acc_ty), span));
        // from the second element (more axes: all of them, the first
        // skipped by its flat index)
        let fold = match vars[..] {
            [j] => {
                let l = ForLoop::sequential(
                    j,
                    Expr::int(1, int_ty, span),
                    Expr::int(n, int_ty, span),
                    body,
                );
                vec![Stmt::new(StmtKind::For(Box::new(l)), span)]
            }
            _ => {
                let mut not_first = None;
                for j in &vars {
                    let nonzero = Expr::compare(
                        crate::ops::BinOp::Ne,
                        Expr::var(*j, Type::Scalar(int_ty), span),
                        zero.clone(),
                        span,
                    );
                    not_first = Some(match not_first {
                        None => nonzero,
                        Some(c) => Expr::binary(
                            crate::ops::BinOp::Or,
                            c,
                            nonzero,
                            Type::Scalar(ElemTy::Bool),
                            span,
                        ),
                    });
                }
                let skip = Stmt::new(
                    StmtKind::If {
                        cond: not_first?,
                        then_body: body,
                        else_body: vec![],
                    },
                    span,
                );
                loop_nest(&vars, &dims, vec![skip], vec![], None, int_ty, span)
            }
        };
        let first = self.fold_start(first, acc_ty)?;
        self.pre.extend(first_inner);
        self.pre.push(Stmt::assign_var(acc, first, span));
        self.pre.extend(fold);
        Some(TExpr {
            e: Expr::var(acc, acc_t, span),
            weak: false,
        })
    }

    /// One step of `np.<ufunc>.accumulate` (`slices.rs`
    /// `cumulative_assign`, which stores `acc` after it): `acc = a[j]` at
    /// the start of a line (`at_start`; at every element where the operand
    /// has one element along the axis, `one`: NumPy broadcasts it), else
    /// `acc = op(acc, a[j])`.
    pub(super) fn fold_scan_step(
        &mut self,
        ufunc: &str,
        acc: VarId,
        elem: TExpr,
        at_start: Expr,
        one: Option<Expr>,
        span: Span,
    ) -> Option<Vec<Stmt>> {
        let et = self.scalar_elem(&elem)?;
        let acc_ty = self.func.var(acc).ty.elem()?;
        let v = self.new_var("v", Type::Scalar(et), VarKind::Local, span);
        let (mut then, step) = self.ufunc_step(ufunc, (acc, v), span)?;
        then.push(Stmt::assign_var(acc, convert(step.e, acc_ty), span));
        let bool_ty = Type::Scalar(ElemTy::Bool);
        let start = match one {
            None => at_start,
            Some(one) => Expr::binary(crate::ops::BinOp::Or, at_start, one, bool_ty, span),
        };
        let v_e = Expr::var(v, Type::Scalar(et), span);
        let first = self.fold_start(v_e, acc_ty)?;
        Some(vec![
            Stmt::assign_var(v, elem.e, span),
            Stmt::new(
                StmtKind::If {
                    cond: start,
                    then_body: vec![Stmt::assign_var(acc, first, span)],
                    else_body: then,
                },
                span,
            ),
        ])
    }
}
