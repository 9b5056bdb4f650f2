//! The compile driver: source text -> parsed function (at decoration), and
//! one specialization -> generated code (sema, passes, back end).

use std::time::Instant;

use crate::diag::{Diagnostic, SourceFile};
use crate::error::CompileError;
use crate::options::{Backend, Options};
use crate::resolve::Resolver;
use crate::signature::{ArgType, ParamInfo};
use crate::{back, ir, passes, sema, syntax};

/// The result of compiling one specialization.
#[derive(Clone, Debug)]
pub struct CompileOutput {
    /// The complete generated source file for the backend.
    pub code: String,
    /// Symbol of the uniform entry point: `int32_t SYM(void **args)`, where
    /// `args[i]` is the data pointer of array parameter i, or a pointer to an
    /// 8-byte slot holding an `int64_t` (ints and bools) or a `double`.
    pub entry_symbol: String,
    pub params: Vec<ParamInfo>,
    /// Warnings (for example a label in the spec that matches no statement).
    pub warnings: Vec<Diagnostic>,
    /// The IR after each pass, with timings, when `debug_print` is set.
    pub debug_log: String,
    /// Seconds spent in each phase of this compile: `lower` (names, types,
    /// specialization), `passes`, `codegen`.
    pub phases: Vec<(&'static str, f64)>,
    /// GPU backends: the device-only translation unit (kernels, helpers and
    /// prelude; `extern "C" __global__` kernels, no host code) for NVRTC.
    pub device_code: Option<String>,
    /// The emitted (unmangled) name of each kernel, indexed by `KernelId`.
    pub kernel_names: Vec<String>,
    /// The final IR: its host function (scalar code, loops, `Launch`
    /// statements, device temporaries) is the launch plan a GPU runtime
    /// interprets; each kernel's `LaunchInfo` gives its grid.
    pub program: ir::Program,
}

/// Parses a function's source at decoration time. Unsupported constructs are
/// reported here, all of them, with spans.
pub fn parse_function(file: SourceFile) -> Result<syntax::FunctionDef, Vec<Diagnostic>> {
    syntax::parse_function(file)
}

/// Compiles one specialization of `def` for `args` under `options`.
pub fn compile(
    def: &syntax::FunctionDef,
    args: &[ArgType],
    resolver: &dyn Resolver,
    options: &Options,
) -> Result<CompileOutput, CompileError> {
    let mut log = String::new();
    if options.backend == Backend::Metal {
        let errors = back::metal::check::check_args(def, args, options);
        if !errors.is_empty() {
            // A `static_fail` the program reaches for these arguments is
            // its own verdict on them (`else: static_fail("not for this
            // type")` after the branches of the types it serves): that
            // message, rather than the float64 arguments it was written for.
            if let Err(CompileError::User(d)) = sema::lower(def, args, resolver, options) {
                let reached: Vec<Diagnostic> = d.into_iter().filter(sema::is_static_fail).collect();
                if !reached.is_empty() {
                    return Err(CompileError::User(reached));
                }
            }
            return Err(CompileError::User(errors));
        }
    }
    let mut phases = Vec::with_capacity(3);
    let t = Instant::now();
    let program = sema::lower(def, args, resolver, options)?;
    phases.push(("lower", t.elapsed().as_secs_f64()));
    let t = Instant::now();
    let (program, mut warnings) = passes::run_pipeline(program, options, &mut log)?;
    if options.backend == Backend::Cuda && options.use_cuda_graphs {
        if let Some((s, why)) = ir::visit::host_transfer(&program.host.body) {
            warnings.push(
                Diagnostic::warning(format!(
                    "`use_cuda_graphs`: the host code of `{}` {why}, so its kernels are \
                     launched one by one instead of as a CUDA graph",
                    program.host.name
                ))
                .at(s.span, "here")
                .note(
                    "a CUDA graph replays a fixed sequence of launches; the host code may only \
                     compute scalars, loop, branch and launch kernels",
                ),
            );
        }
    }
    phases.push(("passes", t.elapsed().as_secs_f64()));
    let t = Instant::now();
    let code = back::emit(&program, options)?;
    phases.push(("codegen", t.elapsed().as_secs_f64()));
    Ok(CompileOutput {
        code: code.text,
        entry_symbol: code.entry_symbol,
        params: code.params,
        warnings,
        debug_log: log,
        phases,
        device_code: code.device_text,
        kernel_names: code.kernel_names,
        program,
    })
}
