//! GPU backends only, right after `schedule`: a parallel reduction loop
//! whose body holds parallel loops (`acc += parpy.sum(x[i, r, :])` with
//! the `r` loop a `par_reduction()` and the slice's label mapped too) keeps
//! one of the two parallel, with a warning.
//!
//! On a GPU the innermost parallel level is the threads of a block and the
//! levels above it are thread blocks, which cannot combine a reduction
//! inside one kernel. So:
//!
//! - inside a parallel loop, the reduction runs in order in every thread
//!   of the levels inside it (the inner reductions are tree reductions
//!   whose result every thread holds), which gives Python's value, as the
//!   Cpu backend's nested reduction does;
//! - at the top level (host code), the loops inside run in order instead:
//!   the reduction is then the kernel's one level, a tree reduction, where
//!   demoting it would launch a kernel and copy a value back per iteration.
//!
//! Doing it before `check_parallel_structure` means the nest's levels are
//! counted without the demoted loops.
use crate::diag::Diagnostic;
use crate::ir::visit::{has_parallel_loop, sub_blocks_mut};
use crate::ir::{Block, Program, StmtKind};
use crate::options::Options;
use crate::passes::check_parallel_structure::loop_name;

pub fn run(p: &mut Program, options: &Options) -> Vec<Diagnostic> {
    let mut warnings = vec![];
    demote_block(&mut p.host.body, false, options, &mut warnings);
    for h in &mut p.helpers {
        // a helper's body is inlined into parallel code or called from it
        demote_block(&mut h.body, true, options, &mut warnings);
    }
    warnings
}

const NOTE: &str = "thread blocks cannot combine a reduction within one kernel, so a GPU reduction and the parallel loops in its body cannot all run in parallel";

/// `in_par`: `b` runs inside a parallel loop.
fn demote_block(b: &mut Block, in_par: bool, options: &Options, warnings: &mut Vec<Diagnostic>) {
    for s in b.iter_mut() {
        let span = s.span;
        if let StmtKind::For(l) = &mut s.kind {
            let reduction = l.wants_reduction || l.reduction.is_some();
            if l.par.is_some() && reduction && has_parallel_loop(&l.body) {
                let name = loop_name(l, options);
                if in_par {
                    warnings.push(
                        Diagnostic::warning(format!(
                            "the parallel reduction `{name}` runs sequentially on the GPU: its body holds parallel loops"
                        ))
                        .at(span, "reduced in order by every thread of the parallel loops inside")
                        .note(NOTE)
                        .help("to reduce in parallel over both, compute each iteration's value into an array in one loop nest and reduce that array in another; to silence this, leave this loop out of the parallel spec"),
                    );
                    l.par = None;
                } else {
                    warnings.push(
                        Diagnostic::warning(format!(
                            "the parallel loops inside the parallel reduction `{name}` run sequentially on the GPU"
                        ))
                        .at(span, "each thread of this reduction runs the loops inside in order")
                        .note(NOTE)
                        .help("to silence this, leave the labels of the loops inside out of the parallel spec"),
                    );
                    sequential(&mut l.body);
                }
            }
            let inner = in_par || l.par.is_some();
            demote_block(&mut l.body, inner, options, warnings);
            continue;
        }
        for body in sub_blocks_mut(s) {
            demote_block(body, in_par, options, warnings);
        }
    }
}

/// Every loop of `b`, at any depth, runs in order.
fn sequential(b: &mut Block) {
    for s in b.iter_mut() {
        if let StmtKind::For(l) = &mut s.kind {
            l.par = None;
        }
        for body in sub_blocks_mut(s) {
            sequential(body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BinOp, ForLoop, ReduceOp, Reduction, StmtKind};
    use crate::passes::testutil::*;
    use crate::types::ElemTy;

    /// for r in 0..8 par reduce(sum -> acc) { t = 0; for k in 0..64 par
    /// reduce(sum -> t) { t = t + x[r, k] }; acc = acc + t }
    fn nested(outer_par: bool, in_par: bool) -> Program {
        let mut b = FnBuilder::new("n");
        let x = b.array("x", ElemTy::F64, &[8, 64]);
        let r = b.index_var("r");
        let k = b.index_var("k");
        let acc = b.local("acc", ElemTy::F64);
        let t = b.local("t", ElemTy::F64);
        let f = &b.f;
        let mut inner = for_loop(
            k,
            0,
            64,
            &["k"],
            vec![assign(
                t,
                bin(
                    BinOp::Add,
                    var_e(f, t),
                    idx(f, x, vec![var_e(f, r), var_e(f, k)]),
                ),
            )],
        );
        inner.par = par(64);
        inner.reduction = Some(Reduction::new(ReduceOp::Sum, t));
        let mut outer = for_loop(
            r,
            0,
            8,
            &["r"],
            vec![
                assign(t, float(0.0, ElemTy::F64)),
                for_stmt(inner),
                assign(acc, bin(BinOp::Add, var_e(f, acc), var_e(f, t))),
            ],
        );
        outer.par = if outer_par { par(8) } else { None };
        outer.wants_reduction = true;
        if in_par {
            let i = b.index_var("i");
            let mut top = for_loop(i, 0, 4, &["i"], vec![for_stmt(outer)]);
            top.par = par(4);
            b.push(for_stmt(top));
        } else {
            b.push(for_stmt(outer));
        }
        program(b.f)
    }

    /// The `r` loop and the `k` loop inside it.
    fn loops(p: &Program, in_par: bool) -> (&ForLoop, &ForLoop) {
        let mut b = &p.host.body;
        if in_par {
            let StmtKind::For(top) = &b[0].kind else {
                unreachable!()
            };
            b = &top.body;
        }
        let StmtKind::For(r) = &b[0].kind else {
            unreachable!()
        };
        let StmtKind::For(k) = &r.body[1].kind else {
            unreachable!()
        };
        (r, k)
    }

    #[test]
    fn inside_a_parallel_loop_the_reduction_runs_sequentially() {
        let mut p = nested(true, true);
        let w = run(&mut p, &Options::default());
        assert_eq!(w.len(), 1);
        assert!(!w[0].is_error());
        assert!(
            w[0].message.contains("`r` runs sequentially"),
            "{}",
            w[0].message
        );
        let (r, k) = loops(&p, true);
        assert!(r.par.is_none() && k.par.is_some());
    }

    #[test]
    fn at_the_top_level_the_loops_inside_run_sequentially() {
        let mut p = nested(true, false);
        let w = run(&mut p, &Options::default());
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message.contains("inside the parallel reduction `r`"),
            "{}",
            w[0].message
        );
        let (r, k) = loops(&p, false);
        assert!(r.par.is_some() && k.par.is_none());
    }

    #[test]
    fn a_sequential_outer_loop_is_left_alone() {
        for in_par in [false, true] {
            let mut p = nested(false, in_par);
            assert!(run(&mut p, &Options::default()).is_empty());
        }
    }
}
