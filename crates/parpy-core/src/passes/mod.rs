//! The pass pipeline, in order:
//!
//! 1. `schedule::apply` — the parallel spec onto labelled loops.
//!    Then [`host_call_loops`] — a parallel loop that calls host code (a
//!    callback, a `Target.Host` external) as a statement runs in order in
//!    host code (ParPy's rule). Then [`gpu_nested_reductions`] — GPU backends only: a parallel
//!    reduction whose body holds parallel loops runs sequentially (warning).
//! 2. [`split_parallel_nests`] — a nest of only parallel loops whose
//!    siblings ask for different thread counts becomes one nest per loop.
//! 3. [`check_parallel_structure`] — one thread count per level of a nest.
//! 4. [`lower_reductions`] — `par_reduction()` loops to reduction loops.
//! 5. [`fold_constants`] — literal arithmetic, Python semantics.
//!    Then [`drop_unread_locals`] — a store of a scalar local nothing
//!    reads goes when its value cannot fail (no call, array read or
//!    assert). Then [`check_races`] — data races of parallel loops that are
//!    provable at compile time (the same element written by every
//!    iteration, an update at an index two iterations may share, a read of
//!    what another iteration writes, a shared scalar) are errors; then
//!    [`privatize_scalars`] — a scalar each iteration assigns first and
//!    whose value after the loop is dead, but that the function also uses
//!    elsewhere, gets a variable of its own inside the loop.
//! 6. [`check_host_device`] — GPU backends only: host code may not touch
//!    device arrays (the combine step of a top-level `par_reduction()` moves
//!    to the device).
//! 7. [`check_bounds`] — indices not proven in range are checked at run
//!    time (a record the caller reads). Then [`cpu_blocked_sums`] — Cpu
//!    only: a float16/32 sum accumulated in float64 adds blocks of 128
//!    elements in float32 (NumPy's accuracy at float32 speed). Then
//!    [`cpu_unroll_jam`] — Cpu only: a sequential loop with independent
//!    iterations around an inner loop with a loop-carried scalar runs
//!    16 (or 8) iterations side by side (bit-identical, SIMD lanes).
//!    Then [`cpu_skew_fuse`] — Cpu only: two sibling parallel loops, the
//!    second reading near index `i` what the first writes at `i`, run
//!    fused over one chunk per thread, the second a few iterations behind
//!    (a Jacobi step moves each array through memory once, not twice);
//!    rows that read each other's neighbours run in pairs
//!    ([`lanes::jammed_pair`]: elements both read are loaded once). Then
//!    [`cpu_jam_rows`] — Cpu only: the same pairs of rows in a parallel
//!    loop that did not fuse.
//! 8. [`outline_kernels`] — parallel nests and `OnDevice` blocks to kernels;
//!    then [`pairwise_sums`] — every backend: a sequential 1-D float
//!    sum that sema marked with NumPy's order calls a recursive helper
//!    that adds as NumPy's pairwise summation does (NumPy's result bit for
//!    bit; on the GPUs, without recursion, the halves are split when
//!    compiling); then [`gpu_clamp_levels`] — GPU backends only: a parallel level
//!    gets no more workers than its loops' iterations, where their counts
//!    are known when compiling; then [`gpu_block_levels`] — GPU backends only: a parallel level whose
//!    surrounding code reads what it writes stays inside one block (a
//!    middle level runs sequentially, the innermost within one block).
//! 9. [`gpu_host_reads`] — GPU backends only: host reads of device
//!    temporaries become explicit copies `v = tmp[i]`.
//! 10. [`gpu_two_stage`] — GPU backends only: a reduction over more threads
//!     than one block holds becomes two kernels (per-block partials, then
//!     their reduction).
//! 11. [`gpu_reductions`] — GPU backends only: parallel reductions to tree
//!     reductions (warp reductions, block-shared memory, barriers).
//!     Then [`gpu_cooperative_externals`] — GPU backends only: a kernel
//!     that calls an external declared with `parallelize=threads(P)` gets
//!     an innermost level of `P` threads that call it together.
//! 12. [`gpu_grid`] — GPU backends only: parallel levels onto the grid
//!     (thread and block indices, strided loops, `LaunchInfo.blocks/threads`).
//! 13. [`gpu_register_rows`] — GPU backends only: a thread's share of a row
//!     stays in registers across the loops that walk it.
//!
//! [`PASSES`] is this list as a table: every pass has one signature
//! ([`PassFn`]). The IR is verified after every pass in tests and debug
//! builds; with `debug_print` the IR after each pass is appended to the log
//! with the time the pass took.

pub mod check_bounds;
pub mod check_exits;
pub mod check_host_device;
pub mod check_parallel_structure;
pub mod check_races;
pub mod cpu_blocked_sums;
pub mod cpu_jam_rows;
pub mod cpu_skew_fuse;
pub mod cpu_unroll_jam;
pub mod drop_unread_locals;
pub mod fold_constants;
pub mod gpu_block_levels;
pub mod gpu_clamp_levels;
pub mod gpu_cooperative_externals;
pub mod gpu_grid;
pub mod gpu_host_reads;
pub mod gpu_nested_reductions;
pub mod gpu_reductions;
pub mod gpu_register_rows;
pub mod gpu_two_stage;
pub mod host_call_loops;
pub mod lanes;
pub mod lower_reductions;
pub mod outline_kernels;
pub mod pairwise_sums;
pub mod privatize_scalars;
pub mod split_parallel_nests;
pub mod util;

#[cfg(test)]
pub(crate) mod testutil;

use std::time::Instant;

use crate::diag::Diagnostic;
use crate::error::CompileError;
use crate::ir::print::program_to_string;
use crate::ir::verify::{render, verify_program};
use crate::ir::Program;
use crate::options::{Backend, Options};

/// What every pass is: it rewrites (or only inspects) the program and
/// returns its diagnostics, errors and warnings told apart by severity.
pub type PassFn = fn(&mut Program, &Options) -> Vec<Diagnostic>;

/// One entry of the pipeline.
pub struct Pass {
    pub name: &'static str,
    /// Runs only for the GPU backends (Cuda, Metal).
    pub gpu_only: bool,
    /// Errors stop the pipeline after this pass (`false`: the next pass
    /// runs and its errors join the same report).
    pub stops_on_error: bool,
    pub run: PassFn,
}

const fn pass(name: &'static str, gpu_only: bool, run: PassFn) -> Pass {
    Pass {
        name,
        gpu_only,
        stops_on_error: true,
        run,
    }
}

/// The pipeline, in order (see the module documentation).
pub const PASSES: &[Pass] = &[
    pass("schedule", false, |p, o| {
        match crate::schedule::apply(p, o) {
            Ok(warnings) => warnings,
            Err(errors) => errors,
        }
    }),
    pass("host_call_loops", false, host_call_loops::run),
    pass("gpu_nested_reductions", true, gpu_nested_reductions::run),
    pass("split_parallel_nests", false, split_parallel_nests::run),
    Pass {
        stops_on_error: false,
        ..pass("check_parallel_structure", false, |p, o| {
            check_parallel_structure::run(p, o)
        })
    },
    pass("lower_reductions", false, |p, _| lower_reductions::run(p)),
    pass("fold_constants", false, |p, _| {
        fold_constants::run(p);
        vec![]
    }),
    pass("drop_unread_locals", false, |p, _| {
        drop_unread_locals::run(p);
        vec![]
    }),
    pass("check_races", false, check_races::run_pass),
    pass("privatize_scalars", false, |p, _| {
        privatize_scalars::run(p);
        vec![]
    }),
    pass("check_host_device", true, |p, o| {
        check_host_device::run(p, o.backend)
    }),
    pass("check_bounds", false, |p, o| {
        check_bounds::run(p, o);
        vec![]
    }),
    pass("cpu_blocked_sums", false, |p, o| {
        cpu_blocked_sums::run(p, o);
        vec![]
    }),
    pass("cpu_unroll_jam", false, |p, o| {
        cpu_unroll_jam::run(p, o);
        vec![]
    }),
    pass("cpu_skew_fuse", false, |p, o| {
        cpu_skew_fuse::run(p, o);
        vec![]
    }),
    pass("cpu_jam_rows", false, |p, o| {
        cpu_jam_rows::run(p, o);
        vec![]
    }),
    pass("outline_kernels", false, |p, _| {
        outline_kernels::run(p);
        vec![]
    }),
    pass("pairwise_sums", false, |p, o| {
        pairwise_sums::run(p, o);
        vec![]
    }),
    pass("gpu_clamp_levels", true, |p, _| {
        gpu_clamp_levels::run(p);
        vec![]
    }),
    pass("gpu_block_levels", true, |p, _| {
        gpu_block_levels::run(p);
        vec![]
    }),
    pass("gpu_host_reads", true, |p, _| {
        gpu_host_reads::run(p);
        vec![]
    }),
    pass("gpu_two_stage", true, gpu_two_stage::run),
    pass("gpu_reductions", true, |p, _| gpu_reductions::run(p)),
    pass("gpu_cooperative_externals", true, |p, _| {
        gpu_cooperative_externals::run(p)
    }),
    pass("gpu_grid", true, |p, _| gpu_grid::run(p)),
    pass("gpu_register_rows", true, |p, o| {
        gpu_register_rows::run(p, o.max_unroll_count);
        vec![]
    }),
];

/// Runs every pass in order. Returns the rewritten program and the warnings,
/// or all the errors of the first phase that found some.
pub fn run_pipeline(
    mut program: Program,
    options: &Options,
    log: &mut String,
) -> Result<(Program, Vec<Diagnostic>), CompileError> {
    if options.debug_print {
        log.push_str(&format!("=== input ===\n{}\n", program_to_string(&program)));
    }
    let gpu = matches!(options.backend, Backend::Cuda | Backend::Metal);
    let mut warnings = vec![];
    let mut errors = vec![];
    for pass in PASSES.iter().filter(|p| gpu || !p.gpu_only) {
        let started = Instant::now();
        let (e, w): (Vec<_>, Vec<_>) = (pass.run)(&mut program, options)
            .into_iter()
            .partition(|d| d.is_error());
        errors.extend(e);
        warnings.extend(w);
        if pass.stops_on_error && !errors.is_empty() {
            return Err(CompileError::User(errors));
        }
        let elapsed = started.elapsed();
        if cfg!(debug_assertions) {
            if let Err(e) = verify_program(&program) {
                return Err(CompileError::Internal(format!(
                    "the IR after pass `{}` is invalid:\n{}\n{}",
                    pass.name,
                    render(&e),
                    program_to_string(&program)
                )));
            }
        }
        if options.debug_print {
            log.push_str(&format!(
                "=== after {} ({:.3} ms) ===\n{}\n",
                pass.name,
                elapsed.as_secs_f64() * 1000.0,
                program_to_string(&program)
            ));
        }
    }
    Ok((program, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::print::program_to_string;
    use crate::options::ParSpec;
    use crate::passes::testutil::*;

    fn opts(spec: &[(&str, i64)]) -> Options {
        let mut o = Options::default();
        for (l, t) in spec {
            o.parallelize.insert(
                l.to_string(),
                ParSpec {
                    threads: *t,
                    tpb: None,
                    reduction: false,
                },
            );
        }
        o
    }

    #[test]
    fn the_log_follows_the_table() {
        let mut log = String::new();
        let mut o = opts(&[("outer", 100)]);
        o.debug_print = true;
        run_pipeline(sum_rows_program(), &o, &mut log).unwrap();
        let ran: Vec<&str> = log
            .lines()
            .filter_map(|l| l.strip_prefix("=== after "))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        let cpu: Vec<&str> = PASSES
            .iter()
            .filter(|p| !p.gpu_only)
            .map(|p| p.name)
            .collect();
        assert_eq!(ran, cpu);
        assert_eq!(PASSES.len(), 26);
    }

    #[test]
    fn sum_rows_pipeline() {
        let mut log = String::new();
        let mut o = opts(&[("outer", 100)]);
        o.debug_print = true;
        let (p, w) = run_pipeline(sum_rows_program(), &o, &mut log).unwrap();
        assert!(w.is_empty());
        assert_eq!(
            program_to_string(&p),
            "\
kernel sum_rows_outer(x: f32[100, 1024], y: f32[100]) launch(levels=[100], tpb=1024, blocks=[1, 1, 1], threads=[1, 1, 1]) {
  for i in 0..100 step 1 [outer] par(threads=100, tpb=1024) {
    acc: f32 = 0.0
    for j in 0..1024 step 1 [] reduce(sum -> acc) {
      acc = (acc + x[i, j])
    }
    y[i] = acc
  }
}

fn sum_rows(x: f32[100, 1024], y: f32[100], N: i64 = 100) {
  launch sum_rows_outer(x, y)
}
"
        );
        assert!(log.contains("=== after schedule ("), "{log}");
        assert!(log.contains("=== after outline_kernels ("), "{log}");
    }

    #[test]
    fn cuda_pipeline_runs_the_gpu_passes() {
        let mut log = String::new();
        let mut o = opts(&[("outer", 100)]);
        o.backend = Backend::Cuda;
        o.debug_print = true;
        let (p, _) = run_pipeline(sum_rows_program(), &o, &mut log).unwrap();
        for pass in [
            "check_host_device",
            "outline_kernels",
            "gpu_host_reads",
            "gpu_two_stage",
            "gpu_reductions",
            "gpu_grid",
        ] {
            assert!(
                log.contains(&format!("=== after {pass} (")),
                "{pass}: {log}"
            );
        }
        assert_eq!(p.kernels[0].launch.threads, [100, 1, 1]);
        // The CPU pipeline does not run them.
        let mut log = String::new();
        let mut o = opts(&[("outer", 100)]);
        o.debug_print = true;
        run_pipeline(sum_rows_program(), &o, &mut log).unwrap();
        assert!(!log.contains("gpu_grid"), "{log}");
    }

    #[test]
    fn errors_stop_the_pipeline() {
        let mut log = String::new();
        let o = opts(&[("outer", 0)]);
        let r = run_pipeline(sum_rows_program(), &o, &mut log);
        assert!(matches!(r, Err(CompileError::User(_))));
    }
}
