//! GPU backends only, right after `outline_kernels`: a parallel level of a
//! kernel gets no more workers than its loops have iterations, where every
//! loop of the level has a trip count known when compiling (its largest,
//! at least 1). A strided loop over `n` workers with `n` above its trip
//! count runs each iteration on worker `i`, the others none: with as many
//! workers as iterations it runs the same iterations on the same workers.
//! A reduction's extra workers only add the identity, and the tree
//! reductions combine the other values in the same pattern
//! (`gpu_grid` still rounds a reduction's block up to whole warps).
//! `parpy.threads(10**6)` over `range(3)` launched a million blocks.

use crate::ir::{Kernel, Program, Stmt, StmtKind};
use crate::passes::outline_kernels::launch_levels;
use crate::passes::util::for_loops_at;

pub fn run(p: &mut Program) {
    for k in &mut p.kernels {
        clamp_kernel(k);
    }
}

fn clamp_kernel(k: &mut Kernel) {
    let mut changed = false;
    for depth in 0..k.launch.levels.len() {
        // the largest trip count of the level's loops, if all are known
        let mut most = Some(0i64);
        for_loops_at(&mut k.func.body, depth, &mut |l| {
            most = most.zip(l.trip_count()).map(|(m, t)| m.max(t));
        });
        let Some(cap) = most.map(|m| m.max(1)) else {
            continue;
        };
        for_loops_at(&mut k.func.body, depth, &mut |l| {
            if let Some(p) = l.par.as_mut().filter(|p| p.threads > cap) {
                p.threads = cap;
                changed = true;
            }
        });
    }
    if changed {
        if let Some(top) = k.func.body.iter().find(|s| is_par(s)) {
            k.launch.levels = launch_levels(top).0;
        }
    }
}

fn is_par(s: &Stmt) -> bool {
    matches!(&s.kind, StmtKind::For(l) if l.par.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::ir::verify::verify_program;
    use crate::ir::LoopPar;
    use crate::passes::outline_kernels;
    use crate::passes::testutil::*;
    use crate::types::ElemTy;

    /// for i in 0..3 par(ti) { for j in 0..m par(tj) { y[i, j] = x[i, j] } }
    /// (`m` < 0: a bound known only at run time, the scalar `M`)
    fn nest(ti: i64, tj: i64, m: i64) -> String {
        let mut b = FnBuilder::new("nest");
        let x = b.array("x", ElemTy::F32, &[3, 5]);
        let y = b.array("y", ElemTy::F32, &[3, 5]);
        let big_m = b.scalar("M", ElemTy::I64, None);
        let i = b.index_var("i");
        let j = b.index_var("j");
        let f = &b.f;
        let ij = || vec![var_e(f, i), var_e(f, j)];
        let mut inner = for_loop(
            j,
            0,
            m.max(0),
            &["j"],
            vec![store(y, ij(), idx(f, x, ij()))],
        );
        if m < 0 {
            inner.hi = var_e(f, big_m);
        }
        inner.par = Some(LoopPar {
            threads: tj,
            tpb: 1024,
        });
        let mut outer = for_loop(i, 0, 3, &["i"], vec![for_stmt(inner)]);
        outer.par = Some(LoopPar {
            threads: ti,
            tpb: 1024,
        });
        b.push(for_stmt(outer));
        let mut p = program(b.f);
        outline_kernels::run(&mut p);
        run(&mut p);
        assert_eq!(verify_program(&p), Ok(()));
        program_to_string(&p)
    }

    #[test]
    fn levels_get_at_most_their_trip_counts() {
        let text = nest(1_000_000, 1_000_000, 5);
        assert!(text.contains("launch(levels=[3, 5]"), "{text}");
        assert!(text.contains("par(threads=3, tpb=1024)"), "{text}");
        assert!(text.contains("par(threads=5, tpb=1024)"), "{text}");
    }

    #[test]
    fn fewer_workers_and_unknown_counts_stay() {
        let text = nest(2, 4, 5);
        assert!(text.contains("launch(levels=[2, 4]"), "{text}");
        // the inner level's count is known only at run time
        let text = nest(64, 64, -1);
        assert!(text.contains("launch(levels=[3, 64]"), "{text}");
    }
}
