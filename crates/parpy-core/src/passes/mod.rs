//! The pass pipeline, in order:
//!
//! 1. `schedule::apply` — the parallel spec onto labelled loops.
//! 2. [`check_parallel_structure`] — one thread count per level of a nest.
//! 3. [`lower_reductions`] — `par_reduction()` loops to reduction loops.
//! 4. [`fold_constants`] — literal arithmetic, Python semantics.
//! 5. [`check_host_device`] — GPU backends only: host code may not touch
//!    device arrays (the combine step of a top-level `par_reduction()` moves
//!    to the device).
//! 6. [`outline_kernels`] — parallel nests and `OnDevice` blocks to kernels.
//! 7. [`gpu_host_reads`] — GPU backends only: host reads of device
//!    temporaries become explicit copies `v = tmp[i]`.
//! 8. [`gpu_two_stage`] — GPU backends only: a reduction over more threads
//!    than one block holds becomes two kernels (per-block partials, then
//!    their reduction).
//! 9. [`gpu_reductions`] — GPU backends only: parallel reductions to tree
//!    reductions (warp reductions, block-shared memory, barriers).
//! 10. [`gpu_grid`] — GPU backends only: parallel levels onto the grid
//!     (thread and block indices, strided loops, `LaunchInfo.blocks/threads`).
//!
//! The IR is verified after every pass in tests and debug builds; with
//! `debug_print` the IR after each pass is appended to the log with the time
//! the pass took.

pub mod check_host_device;
pub mod check_parallel_structure;
pub mod fold_constants;
pub mod gpu_grid;
pub mod gpu_host_reads;
pub mod gpu_reductions;
pub mod gpu_register_rows;
pub mod gpu_two_stage;
pub mod lower_reductions;
pub mod outline_kernels;
pub mod util;

#[cfg(test)]
pub(crate) mod testutil;

use std::time::Instant;

use crate::diag::Diagnostic;
use crate::error::CompileError;
use crate::ir::print::program_to_string;
use crate::ir::verify::verify_program;
use crate::ir::Program;
use crate::options::{Backend, Options};

struct Run<'a> {
    options: &'a Options,
    log: &'a mut String,
}

impl Run<'_> {
    fn after(&mut self, pass: &str, p: &Program, started: Instant) -> Result<(), CompileError> {
        let elapsed = started.elapsed();
        if cfg!(debug_assertions) {
            if let Err(e) = verify_program(p) {
                return Err(CompileError::Internal(format!(
                    "the IR after pass `{pass}` is invalid: {e}\n{}",
                    program_to_string(p)
                )));
            }
        }
        if self.options.debug_print {
            self.log.push_str(&format!(
                "=== after {pass} ({:.3} ms) ===\n{}\n",
                elapsed.as_secs_f64() * 1000.0,
                program_to_string(p)
            ));
        }
        Ok(())
    }
}

/// Runs every pass in order. Returns the rewritten program and the warnings,
/// or all the errors of the first phase that found some.
pub fn run_pipeline(
    mut program: Program,
    options: &Options,
    log: &mut String,
) -> Result<(Program, Vec<Diagnostic>), CompileError> {
    let mut r = Run { options, log };
    if options.debug_print {
        r.log
            .push_str(&format!("=== input ===\n{}\n", program_to_string(&program)));
    }

    let t = Instant::now();
    let mut warnings = crate::schedule::apply(&mut program, options).map_err(CompileError::User)?;
    r.after("schedule", &program, t)?;

    let t = Instant::now();
    let mut errors = check_parallel_structure::run(&program, options);
    r.after("check_parallel_structure", &program, t)?;

    let t = Instant::now();
    errors.extend(lower_reductions::run(&mut program));
    if !errors.is_empty() {
        return Err(CompileError::User(errors));
    }
    r.after("lower_reductions", &program, t)?;

    let t = Instant::now();
    fold_constants::run(&mut program);
    r.after("fold_constants", &program, t)?;

    let gpu = matches!(options.backend, Backend::Cuda | Backend::Metal);
    if gpu {
        let t = Instant::now();
        let errors = check_host_device::run(&mut program, options.backend);
        if !errors.is_empty() {
            return Err(CompileError::User(errors));
        }
        r.after("check_host_device", &program, t)?;
    }

    let t = Instant::now();
    outline_kernels::run(&mut program);
    r.after("outline_kernels", &program, t)?;

    if gpu {
        let t = Instant::now();
        gpu_host_reads::run(&mut program);
        r.after("gpu_host_reads", &program, t)?;

        let t = Instant::now();
        warnings.extend(gpu_two_stage::run(&mut program));
        r.after("gpu_two_stage", &program, t)?;

        let t = Instant::now();
        let errors = gpu_reductions::run(&mut program);
        if !errors.is_empty() {
            return Err(CompileError::User(errors));
        }
        r.after("gpu_reductions", &program, t)?;

        let t = Instant::now();
        let errors = gpu_grid::run(&mut program);
        if !errors.is_empty() {
            return Err(CompileError::User(errors));
        }
        r.after("gpu_grid", &program, t)?;

        let t = Instant::now();
        gpu_register_rows::run(&mut program);
        r.after("gpu_register_rows", &program, t)?;
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
