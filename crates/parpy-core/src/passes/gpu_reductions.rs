//! GPU backends only, after `outline_kernels` and before `gpu_grid`: turns
//! each parallel reduction loop of the innermost parallel level of a kernel
//! into a block-wide tree reduction.
//!
//! ```text
//! for j ... par(..) reduce(op -> acc) { acc = acc op e }
//! ```
//! becomes (`p` a new per-thread partial, `NW` the warps of the block)
//! ```text
//! p = identity(op)
//! for j ... par(..) { p = p op e }         (strided by gpu_grid)
//! p = warp_op(p)                           (shuffles within each warp)
//! if lane == 0 { shm[warp] = p }           (only when NW > 1)
//! barrier
//! p = warp_op(shm[lane] if lane < NW else identity(op))
//! barrier                                  (shm may be reused)
//! acc = acc op p                           (every thread has the result)
//! ```
//! The partial starts from the identity, so the value `acc` held before the
//! loop is combined exactly once. Every thread of the block ends with the
//! same result. `shm` is one block-shared array per element type.
//!
//! A reduction level with more threads than fit in one block was split into
//! two kernels by `gpu_two_stage` when the kernel has the shape that pass
//! handles; otherwise it runs in one block (each thread covers more
//! iterations). A parallel reduction whose body holds parallel loops was
//! made sequential by `gpu_nested_reductions`; one at an outer level only
//! because a sibling nest is deeper runs sequentially in each thread (a
//! warning), as the other code at that level does.

use std::collections::BTreeMap;

use crate::diag::{Diagnostic, Span};
use crate::ir::{
    BinOp, Block, Expr, ExprKind, Function, GpuIndex, Kernel, Place, Program, ReduceOp, Stmt,
    StmtKind, Type, Var, VarId, VarKind, WARP_SIZE,
};
use crate::passes::gpu_grid::block_threads;
use crate::passes::util::{assign_var, binary, i64e};
use crate::types::ElemTy;

pub fn run(p: &mut Program) -> Vec<Diagnostic> {
    let mut errors = vec![];
    for k in &mut p.kernels {
        lower_kernel(k, &mut errors);
    }
    errors
}

fn lower_kernel(k: &mut Kernel, errors: &mut Vec<Diagnostic>) {
    let Some(&inner) = k.launch.levels.last() else {
        return;
    };
    let threads = block_threads(inner, k.launch.tpb, true);
    let mut l = Lower {
        f: &mut k.func,
        innermost: k.launch.levels.len() - 1,
        warps: (threads + WARP_SIZE - 1) / WARP_SIZE,
        shared: BTreeMap::new(),
        errors,
    };
    let body = std::mem::take(&mut l.f.body);
    let body = l.block(body, 0);
    k.func.body = body;
}

struct Lower<'a> {
    f: &'a mut Function,
    innermost: usize,
    warps: i64,
    shared: BTreeMap<ElemTy, VarId>,
    errors: &'a mut Vec<Diagnostic>,
}

fn warp(op: ReduceOp, arg: Expr) -> Expr {
    let (ty, span) = (arg.ty.clone(), arg.span);
    Expr::new(
        ExprKind::WarpReduce {
            op,
            arg: Box::new(arg),
        },
        ty,
        span,
    )
}

impl Lower<'_> {
    fn shared_array(&mut self, e: ElemTy, span: Span) -> VarId {
        if let Some(v) = self.shared.get(&e) {
            return *v;
        }
        let v = self.f.add_var(Var {
            name: format!("shm_{}", e.short_name()),
            ty: Type::Array {
                elem: e,
                shape: vec![self.warps],
            },
            kind: VarKind::Shared,
            value: None,
            span,
        });
        self.shared.insert(e, v);
        v
    }

    /// `d` is the number of enclosing parallel loops.
    fn block(&mut self, b: Block, d: usize) -> Block {
        let mut out = vec![];
        for s in b {
            let span = s.span;
            match s.kind {
                StmtKind::For(mut l) => {
                    let par = l.par.is_some();
                    let inner_d = if par { d + 1 } else { d };
                    l.body = self.block(std::mem::take(&mut l.body), inner_d);
                    match (par, l.reduction) {
                        (true, Some(r)) if d == self.innermost => {
                            let e = match self.f.var(r.acc).ty.elem() {
                                Some(e) => e,
                                None => {
                                    out.push(Stmt::new(StmtKind::For(l), span));
                                    continue;
                                }
                            };
                            let ty = Type::Scalar(e);
                            let p = self.f.add_var(Var {
                                name: "partial".into(),
                                ty: ty.clone(),
                                kind: VarKind::Local,
                                value: None,
                                span,
                            });
                            l.reduction = None;
                            l.wants_reduction = false;
                            crate::passes::util::subst_block(&mut l.body, r.acc, p);
                            out.push(assign_var(p, Expr::reduce_identity(r.op, e, span), span));
                            out.push(Stmt::new(StmtKind::For(l), span));
                            let pe = Expr::var(p, ty.clone(), span);
                            out.push(assign_var(p, warp(r.op, pe.clone()), span));
                            if self.warps > 1 {
                                let shm = self.shared_array(e, span);
                                let lane = i64e(ExprKind::GpuIndex(GpuIndex::Lane), span);
                                let wid = i64e(ExprKind::GpuIndex(GpuIndex::Warp), span);
                                let bool_t = Type::Scalar(ElemTy::Bool);
                                out.push(Stmt::new(
                                    StmtKind::If {
                                        cond: binary(
                                            BinOp::Eq,
                                            lane.clone(),
                                            i64e(ExprKind::Int(0), span),
                                            bool_t.clone(),
                                        ),
                                        then_body: vec![Stmt::new(
                                            StmtKind::Assign {
                                                dst: Place::Index {
                                                    array: shm,
                                                    indices: vec![wid],
                                                },
                                                value: pe.clone(),
                                            },
                                            span,
                                        )],
                                        else_body: vec![],
                                    },
                                    span,
                                ));
                                out.push(Stmt::new(StmtKind::Barrier, span));
                                let read = Expr::new(
                                    ExprKind::Select {
                                        cond: Box::new(binary(
                                            BinOp::Lt,
                                            lane.clone(),
                                            i64e(ExprKind::Int(self.warps), span),
                                            bool_t,
                                        )),
                                        then: Box::new(Expr::new(
                                            ExprKind::Index {
                                                array: shm,
                                                indices: vec![lane],
                                            },
                                            ty.clone(),
                                            span,
                                        )),
                                        else_: Box::new(Expr::reduce_identity(r.op, e, span)),
                                    },
                                    ty.clone(),
                                    span,
                                );
                                out.push(assign_var(p, warp(r.op, read), span));
                                out.push(Stmt::new(StmtKind::Barrier, span));
                            }
                            let acc = Expr::var(r.acc, ty.clone(), span);
                            out.push(assign_var(r.acc, binary(r.op.combine(), acc, pe, ty), span));
                        }
                        (true, Some(_)) => {
                            // Beside a deeper nest, this level maps to thread
                            // blocks, which cannot combine a reduction: the
                            // loop runs sequentially in every thread of the
                            // level below (as the code around it does; its
                            // stores are guarded to one thread), which gives
                            // the same value.
                            let deeper = self.innermost - d;
                            self.errors.push(
                                Diagnostic::warning(
                                    "this parallel reduction runs sequentially on the GPU: a sibling loop nest makes its parallel level one of thread blocks",
                                )
                                .at(span, "reduced sequentially in each thread")
                                .note(format!(
                                    "another loop of the same nest goes {deeper} parallel level{} deeper; thread blocks cannot combine a reduction",
                                    if deeper == 1 { "" } else { "s" }
                                ))
                                .help("to reduce in parallel, move this loop to a loop nest of its own; to silence this, leave it out of the parallel spec"),
                            );
                            l.par = None;
                            l.reduction = None;
                            l.wants_reduction = false;
                            out.push(Stmt::new(StmtKind::For(l), span));
                        }
                        _ => out.push(Stmt::new(StmtKind::For(l), span)),
                    }
                }
                StmtKind::While { cond, body } => {
                    let body = self.block(body, d);
                    out.push(Stmt::new(StmtKind::While { cond, body }, span));
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    let then_body = self.block(then_body, d);
                    let else_body = self.block(else_body, d);
                    out.push(Stmt::new(
                        StmtKind::If {
                            cond,
                            then_body,
                            else_body,
                        },
                        span,
                    ));
                }
                kind => out.push(Stmt::new(kind, span)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::ir::verify::verify_program;
    use crate::ir::Reduction;
    use crate::passes::outline_kernels;
    use crate::passes::testutil::assign;
    use crate::passes::testutil::*;

    /// acc = 5; for i in 0..100 par(n) reduce(max -> acc) { acc = max(acc, x[i]) }; y[0] = acc
    /// inside `for r in 0..1 par(1)` so the result is stored by the kernel.
    fn max_program(n: i64) -> Program {
        let mut b = FnBuilder::new("m");
        let x = b.array("x", ElemTy::F64, &[100]);
        let y = b.array("y", ElemTy::F64, &[1]);
        let r = b.index_var("r");
        let i = b.index_var("i");
        let acc = b.local("acc", ElemTy::F64);
        let f = &b.f;
        let mut l = for_loop(
            i,
            0,
            100,
            &["i"],
            vec![assign(
                acc,
                bin(BinOp::Max, var_e(f, acc), idx(f, x, vec![var_e(f, i)])),
            )],
        );
        l.par = par(n);
        l.reduction = Some(Reduction::new(ReduceOp::Max, acc));
        let mut outer = for_loop(
            r,
            0,
            1,
            &["r"],
            vec![
                assign(acc, float(5.0, ElemTy::F64)),
                for_stmt(l),
                store(y, vec![int(0)], var_e(f, acc)),
            ],
        );
        outer.par = par(1);
        b.push(for_stmt(outer));
        let mut p = program(b.f);
        outline_kernels::run(&mut p);
        p
    }

    #[test]
    fn tree_reduction_before_grid_mapping() {
        let mut p = max_program(100);
        assert!(run(&mut p).is_empty());
        assert_eq!(verify_program(&p), Ok(()));
        let text = program_to_string(&p);
        assert!(
            text.starts_with(
                "\
kernel m_r(x: f64[100], y: f64[1]) launch(levels=[1, 100], tpb=1024, blocks=[1, 1, 1], threads=[1, 1, 1]) {
  shared shm_f64: f64[4]
  for r in 0..1 step 1 [r] par(threads=1, tpb=1024) {
    acc: f64 = 5.0
    partial: f64 = -inf
    for i in 0..100 step 1 [i] par(threads=100, tpb=1024) {
      partial = max(partial, x[i])
    }
    partial = warp_max(partial)
    if (lane == 0) {
      shm_f64[warp] = partial
    }
    barrier
    partial = warp_max((shm_f64[lane] if (lane < 4) else -inf))
    barrier
    acc = max(acc, partial)
    y[0] = acc
  }
}
"
            ),
            "{text}"
        );
    }

    #[test]
    fn one_warp_needs_no_shared_memory() {
        let mut p = max_program(32);
        assert!(run(&mut p).is_empty());
        let text = program_to_string(&p);
        assert!(!text.contains("shared"), "{text}");
        assert!(!text.contains("barrier"), "{text}");
        assert!(
            text.contains("    partial = warp_max(partial)\n    acc = max(acc, partial)\n"),
            "{text}"
        );
    }

    #[test]
    fn reduction_beside_a_deeper_nest_runs_sequentially() {
        // for i par { for j par { for k par { y[j] = 0 } }; for r par reduce(sum -> acc) { acc += 1 } }
        let mut b = FnBuilder::new("sibling");
        let y = b.array("y", ElemTy::F64, &[8]);
        let i = b.index_var("i");
        let j = b.index_var("j");
        let k = b.index_var("k");
        let r = b.index_var("r");
        let acc = b.local("acc", ElemTy::F64);
        let f = &b.f;
        let mut kl = for_loop(
            k,
            0,
            4,
            &["k"],
            vec![store(y, vec![var_e(f, j)], float(0.0, ElemTy::F64))],
        );
        kl.par = par(4);
        let mut jl = for_loop(j, 0, 8, &["j"], vec![for_stmt(kl)]);
        jl.par = par(8);
        let mut rl = for_loop(
            r,
            0,
            5,
            &["r"],
            vec![assign(
                acc,
                bin(BinOp::Add, var_e(f, acc), float(1.0, ElemTy::F64)),
            )],
        );
        rl.par = par(5);
        rl.reduction = Some(Reduction::new(ReduceOp::Sum, acc));
        let mut il = for_loop(
            i,
            0,
            2,
            &["i"],
            vec![
                for_stmt(jl),
                assign(acc, float(0.0, ElemTy::F64)),
                for_stmt(rl),
            ],
        );
        il.par = par(2);
        b.push(for_stmt(il));
        let mut p = program(b.f);
        outline_kernels::run(&mut p);
        let diags = run(&mut p);
        assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
        let text = crate::diag::render_all(&diags);
        assert!(text.contains("runs sequentially on the GPU"), "{text}");
        assert!(text.contains("goes 1 parallel level deeper"), "{text}");
        assert_eq!(verify_program(&p), Ok(()));
        let text = program_to_string(&p);
        // the r loop is a plain loop now: no partial, no warp reduction
        assert!(text.contains("for r in 0..5 step 1 [r] {"), "{text}");
        assert!(!text.contains("warp_sum"), "{text}");
    }
}
