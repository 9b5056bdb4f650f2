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

/// Wraps `body` in one loop per variable, outermost first; the innermost
/// loop gets the labels and the reduction.
fn loop_nest(
    vars: &[VarId],
    extents: &[i64],
    body: Block,
    labels: Vec<String>,
    reduction: Option<Reduction>,
    int_ty: ElemTy,
    span: Span,
) -> Vec<Stmt> {
    let mut body = body;
    let mut labels = Some(labels);
    let mut reduction = reduction;
    for (v, n) in vars.iter().zip(extents).rev() {
        let l = ForLoop {
            var: *v,
            lo: Expr::int(0, int_ty, span),
            hi: Expr::int(*n, int_ty, span),
            step: 1,
            body,
            labels: labels.take().unwrap_or_default(),
            par: None,
            reduction: reduction.take(),
            wants_reduction: false,
            unroll: false,
        };
        body = vec![Stmt::new(StmtKind::For(Box::new(l)), span)];
    }
    body
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
        labels: Vec<String>,
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
            labels,
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
        let body = vec![Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(acc),
                value: update,
            },
            span,
        )];
        let labels = self.red_labels.take().unwrap_or_default();
        self.pre.push(Stmt::new(
            StmtKind::Assign {
                dst: Place::Var(acc),
                value: identity(op, acc_ty, span),
            },
            span,
        ));
        let nest = loop_nest(
            &ctx.vars,
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
