//! Slice statements and reductions to loops.
//!
//! `y[i, :] = x[i, :] / s` becomes an elementwise loop nest over the sliced
//! dimensions; `parpy.operators.sum(x[i, :])` becomes an accumulator, a
//! reduction loop nest hoisted before the statement, and a read of the
//! accumulator. Operand slice shapes are checked at compile time (NumPy
//! broadcasting: right-aligned, 1-long dimensions broadcast).

use crate::diag::{Diagnostic, Span};
use crate::ir::{
    BinOp, Block, ElemTy, Expr, ExprKind, ForLoop, Place, ReduceOp, Reduction, Stmt, StmtKind,
    Type, VarId, VarKind,
};
use crate::syntax::ast;

use super::expr::Sub;
use super::types::{const_int, convert};
use super::{Lowerer, TExpr};

/// One index position of a subscript before slices are mapped to loops.
pub(super) enum IndexSlot {
    Scalar(Expr),
    /// `lo:lo+extent`
    Slice {
        lo: Expr,
        extent: i64,
    },
}

/// The elementwise context of one slice statement or reduction: the loop
/// extents (fixed by the first sliced operand) and their index variables.
#[derive(Default)]
pub(super) struct SliceCtx {
    extents: Option<Vec<i64>>,
    vars: Vec<VarId>,
    def_span: Span,
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
fn loop_nest(
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

/// Replaces every read of `var` in `e` by `by`.
fn substitute(e: &mut Expr, var: VarId, by: &Expr) {
    if e.kind == ExprKind::Var(var) {
        *e = by.clone();
        return;
    }
    for c in e.children_mut() {
        substitute(c, var, by);
    }
}

/// The identity of a reduction over `ty`.
fn identity(op: ReduceOp, ty: ElemTy, span: Span) -> Expr {
    let t = Type::Scalar(ty);
    if ty.is_float() {
        let v = match op {
            ReduceOp::Sum => 0.0,
            ReduceOp::Prod => 1.0,
            ReduceOp::Max => f64::NEG_INFINITY,
            ReduceOp::Min => f64::INFINITY,
        };
        return Expr::new(ExprKind::Float(v), t, span);
    }
    if ty == ElemTy::Bool {
        let v = matches!(op, ReduceOp::Prod | ReduceOp::Min);
        return Expr::new(ExprKind::Bool(v), t, span);
    }
    let (min, max) = match ty {
        ElemTy::I8 => (i8::MIN as i64, i8::MAX as i64),
        ElemTy::I16 => (i16::MIN as i64, i16::MAX as i64),
        ElemTy::I32 => (i32::MIN as i64, i32::MAX as i64),
        ElemTy::U8 => (0, u8::MAX as i64),
        ElemTy::U16 => (0, u16::MAX as i64),
        ElemTy::U32 => (0, u32::MAX as i64),
        ElemTy::U64 => (0, i64::MAX),
        _ => (i64::MIN, i64::MAX),
    };
    let v = match op {
        ReduceOp::Sum => 0,
        ReduceOp::Prod => 1,
        ReduceOp::Max => min,
        ReduceOp::Min => max,
    };
    Expr::int(v, ty, span)
}

/// `(flat / stride) % n`: the index of one dimension in a flattened nest
/// (the division left out for the innermost, the modulo for the outermost; indices are non-negative, so C's `/` and `%` agree
/// with Python's).
fn flat_index(flat: VarId, stride: i64, n: i64, outermost: bool, ty: ElemTy, span: Span) -> Expr {
    let t = Type::Scalar(ty);
    let bin = |op, lhs: Expr, rhs: i64| {
        Expr::new(
            ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(Expr::int(rhs, ty, span)),
            },
            t.clone(),
            span,
        )
    };
    let mut e = Expr::var(flat, t.clone(), span);
    if stride > 1 {
        e = bin(BinOp::FloorDiv, e, stride);
    }
    if outermost {
        e
    } else {
        bin(BinOp::Mod, e, n)
    }
}

impl Lowerer<'_, '_> {
    /// Bounds of `lo:hi` in a dimension of size `dim` (constants needed).
    pub(super) fn slice_bounds(
        &mut self,
        lo: Option<&ast::Expr>,
        hi: Option<&ast::Expr>,
        dim: i64,
        span: Span,
    ) -> Option<IndexSlot> {
        let bound = |this: &mut Self, e: Option<&ast::Expr>, default: i64| -> Option<i64> {
            let Some(e) = e else {
                return Some(default);
            };
            let t = this.lower_expr(e)?;
            let i = this.index_value(t, "a slice bound")?;
            match const_int(&i) {
                Some(c) => Some(if c < 0 { (c + dim).max(0) } else { c.min(dim) }),
                None => {
                    this.error(
                        Diagnostic::error("slice bounds must be compile-time constants")
                            .at(e.span, "not a constant")
                            .note("the length of every slice must be known when compiling")
                            .help("use constants, shapes (`x.shape[0]`) or specialized scalar arguments"),
                    );
                    None
                }
            }
        };
        let l = bound(self, lo, 0);
        let h = bound(self, hi, dim);
        let (l, h) = (l?, h?);
        Some(IndexSlot::Slice {
            lo: Expr::int(l, self.opts.int_type, span),
            extent: (h - l).max(0),
        })
    }

    /// Replaces the slice slots of one operand by indices over the loop
    /// variables of the active elementwise context.
    pub(super) fn map_slices(&mut self, slots: Vec<IndexSlot>, span: Span) -> Option<Vec<Expr>> {
        let shape: Vec<i64> = slots
            .iter()
            .filter_map(|s| match s {
                IndexSlot::Slice { extent, .. } => Some(*extent),
                IndexSlot::Scalar(_) => None,
            })
            .collect();
        if shape.is_empty() {
            return Some(
                slots
                    .into_iter()
                    .filter_map(|s| match s {
                        IndexSlot::Scalar(e) => Some(e),
                        IndexSlot::Slice { .. } => None,
                    })
                    .collect(),
            );
        }
        let Some(mut ctx) = self.slice.take() else {
            self.error(
                Diagnostic::error("slices can only be used in slice assignments and reductions")
                    .at(span, "slice used here")
                    .help("assign to a slice (`y[i, :] = x[i, :]`) or reduce it (`parpy.operators.sum(x[i, :])`)"),
            );
            return None;
        };
        let int_ty = self.opts.int_type;
        let extents = match &ctx.extents {
            Some(e) => e.clone(),
            None => {
                ctx.vars = shape
                    .iter()
                    .map(|_| self.new_var("j", Type::Scalar(int_ty), VarKind::LoopIndex, span))
                    .collect();
                ctx.extents = Some(shape.clone());
                ctx.def_span = span;
                shape.clone()
            }
        };
        let (n, m) = (extents.len(), shape.len());
        let mismatch = m > n
            || shape
                .iter()
                .enumerate()
                .any(|(j, e)| *e != 1 && *e != extents[n - m + j]);
        if mismatch {
            self.error(
                Diagnostic::error(format!(
                    "slice shapes do not match: {} and {}",
                    shape_str(&extents),
                    shape_str(&shape)
                ))
                .at(ctx.def_span, format!("this has shape {}", shape_str(&extents)))
                .also(span, format!("this operand has shape {}", shape_str(&shape)))
                .note("the shapes of all slices in a statement must match (dimensions of length 1 broadcast)"),
            );
            self.slice = Some(ctx);
            return None;
        }
        let mut out = vec![];
        let mut j = 0;
        for s in slots {
            match s {
                IndexSlot::Scalar(e) => out.push(e),
                IndexSlot::Slice { lo, extent } => {
                    let d = n - m + j;
                    j += 1;
                    if extent == 1 && extents[d] != 1 {
                        out.push(lo);
                        continue;
                    }
                    let v = Expr::var(ctx.vars[d], Type::Scalar(int_ty), span);
                    if const_int(&lo) == Some(0) {
                        out.push(v);
                    } else {
                        out.push(Expr::new(
                            ExprKind::Binary {
                                op: BinOp::Add,
                                lhs: Box::new(lo),
                                rhs: Box::new(v),
                            },
                            Type::Scalar(int_ty),
                            span,
                        ));
                    }
                }
            }
        }
        self.slice = Some(ctx);
        Some(out)
    }

    /// `target[... : ...] = value` as an elementwise loop nest.
    pub(super) fn slice_assign(
        &mut self,
        target: &ast::Expr,
        value: &ast::Expr,
        labels: &[(String, Span)],
        span: Span,
    ) -> Option<Vec<Stmt>> {
        let saved = self.slice.replace(SliceCtx::default());
        let t = self.lower_subscript(target);
        let v = self.lower_expr(value);
        let ctx = std::mem::replace(&mut self.slice, saved)?;
        let (t, v) = (t?, v?);
        let Sub::Elem {
            array,
            indices,
            elem,
        } = t
        else {
            self.error(
                Diagnostic::error("cannot assign to a shape").at(target.span, "not assignable"),
            );
            return None;
        };
        let value = self.store_convert(v, elem, target.span)?;
        let extents = ctx.extents?;
        // The last label to the innermost sliced dimension, the one before
        // it to the next dimension outwards, and so on.
        if labels.len() > extents.len() {
            let n = extents.len();
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
        let mut per_dim = vec![vec![]; extents.len() - labels.len()];
        per_dim.extend(labels.iter().map(|l| vec![l.0.clone()]));
        let body = vec![Stmt::new(
            StmtKind::Assign {
                dst: Place::Index { array, indices },
                value,
            },
            span,
        )];
        Some(loop_nest(
            &ctx.vars,
            &extents,
            body,
            per_dim,
            None,
            self.opts.int_type,
            span,
        ))
    }

    /// `parpy.operators.<op>(arg)`: accumulator + hoisted reduction loops.
    pub(super) fn reduction(&mut self, op: ReduceOp, arg: &ast::Expr, span: Span) -> Option<TExpr> {
        let saved = self.slice.replace(SliceCtx::default());
        let elem = self.lower_expr(arg);
        let ctx = std::mem::replace(&mut self.slice, saved)?;
        let elem = elem?;
        let et = self.scalar_elem(&elem)?;
        let Some(extents) = ctx.extents else {
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
        // like NumPy, sums and products of bools and of 8/16-bit integers
        // accumulate in the default integer (unsigned ones in the unsigned
        // integer of its width)
        let small = matches!(et, ElemTy::I8 | ElemTy::I16 | ElemTy::U8 | ElemTy::U16);
        let acc_ty =
            if (et == ElemTy::Bool || small) && matches!(op, ReduceOp::Sum | ReduceOp::Prod) {
                match (et, self.opts.int_type) {
                    (ElemTy::U8 | ElemTy::U16, ElemTy::I32) => ElemTy::U32,
                    (ElemTy::U8 | ElemTy::U16, _) => ElemTy::U64,
                    (_, t) => t,
                }
            } else {
                et
            };
        let acc = self.new_var("acc", Type::Scalar(acc_ty), VarKind::Local, span);
        let acc_e = Expr::var(acc, Type::Scalar(acc_ty), span);
        let bop = match op {
            ReduceOp::Sum => BinOp::Add,
            ReduceOp::Prod => BinOp::Mul,
            ReduceOp::Max => BinOp::Max,
            ReduceOp::Min => BinOp::Min,
        };
        let update = Expr::new(
            ExprKind::Binary {
                op: bop,
                lhs: Box::new(acc_e.clone()),
                rhs: Box::new(convert(elem.e, acc_ty)),
            },
            Type::Scalar(acc_ty),
            span,
        );
        let mut body = vec![Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(acc),
                value: update,
            },
            span,
        )];
        // A reduction takes zero or one label, which covers all the
        // dimensions it reduces: a labelled reduction over several
        // dimensions is one loop over their product.
        let labels = self.red_labels.take().unwrap_or_default();
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
        let (vars, extents) = if labels.is_empty() || extents.len() < 2 {
            (ctx.vars, extents)
        } else {
            let int_ty = self.opts.int_type;
            let flat = self.new_var("j", Type::Scalar(int_ty), VarKind::LoopIndex, span);
            let mut stride = 1;
            for (d, (v, n)) in ctx.vars.iter().zip(&extents).enumerate().rev() {
                let idx = flat_index(flat, stride, *n, d == 0, int_ty, span);
                for s in &mut body {
                    if let StmtKind::Assign { value, .. } = &mut s.kind {
                        substitute(value, *v, &idx);
                    }
                }
                stride *= n;
            }
            (vec![flat], vec![stride])
        };
        let labels = vec![labels.into_iter().map(|l| l.0).collect()];
        self.pre.push(Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(acc),
                value: identity(op, acc_ty, span),
            },
            span,
        ));
        let nest = loop_nest(
            &vars,
            &extents,
            body,
            labels,
            Some(Reduction { op, acc }),
            self.opts.int_type,
            span,
        );
        self.pre.extend(nest);
        Some(TExpr {
            e: acc_e,
            weak: false,
        })
    }
}
