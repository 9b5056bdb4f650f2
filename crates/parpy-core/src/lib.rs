//! parpy-core: the compiler. Pure Rust, no Python objects.
//!
//! Pipeline (see ARCHITECTURE.md):
//!
//! ```text
//! source text --syntax::parse_function--> syntax::FunctionDef (at decoration)
//!   --sema::lower--> ir::Program (typed, specialized on the argument types)
//!   --passes::run_pipeline--> ir::Program (scheduled, reductions, kernels)
//!   --back::emit--> generated source text for the backend
//! ```

pub mod back;
pub mod diag;
pub mod ir;
pub mod options;
pub mod passes;
pub mod resolve;
pub mod schedule;
pub mod sema;
pub mod syntax;
pub mod types;

use std::fmt;

pub use diag::{Diagnostic, SourceFile, Span};
pub use options::{Backend, Options, ParSpec};
pub use resolve::{Builtin, Resolved, Resolver, StaticResolver};
pub use types::{ElemTy, ScalarValue};

/// The version baked into cache keys.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The type of one call argument, as the binding observed it.
#[derive(Clone, PartialEq, Debug)]
pub enum ArgType {
    /// A contiguous array (NumPy or other) with its element type and shape.
    Array { elem: ElemTy, shape: Vec<i64> },
    /// A Python scalar: `bool` -> Bool, `int` -> I64, `float` -> F64 (the
    /// options may narrow them). `value` is set when scalars are specialized.
    Scalar {
        elem: ElemTy,
        value: Option<ScalarValue>,
    },
}

/// Why a compilation failed.
#[derive(Clone, Debug)]
pub enum CompileError {
    /// Mistakes in the user's program or options, with spans.
    User(Vec<Diagnostic>),
    /// A bug in parpy: the message says so and carries the IR dump.
    Internal(String),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::User(d) => f.write_str(&diag::render_all(d)),
            CompileError::Internal(m) => write!(f, "internal compiler error (a bug in parpy): {m}"),
        }
    }
}

impl From<Vec<Diagnostic>> for CompileError {
    fn from(d: Vec<Diagnostic>) -> CompileError {
        CompileError::User(d)
    }
}

/// The description of one entry-point parameter, for the runtime and for
/// `compile_string`'s argument checks.
#[derive(Clone, PartialEq, Debug)]
pub struct ParamInfo {
    pub name: String,
    pub ty: ArgType,
    /// The function may write this array (NumPy arrays are copied back from
    /// a device only when this is set).
    pub written: bool,
}

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
            return Err(CompileError::User(errors));
        }
    }
    let program = sema::lower(def, args, resolver, options)?;
    let (program, warnings) = passes::run_pipeline(program, options, &mut log)?;
    let code = back::emit(&program, options)?;
    Ok(CompileOutput {
        code: code.text,
        entry_symbol: code.entry_symbol,
        params: code.params,
        warnings,
        debug_log: log,
        device_code: code.device_text,
        kernel_names: code.kernel_names,
        program,
    })
}

/// Runs `f`, turning a panic into an internal error so no Rust panic can
/// reach the caller (the binding uses this around every entry point).
pub fn catch_internal<T>(f: impl FnOnce() -> Result<T, CompileError>) -> Result<T, CompileError> {
    catch_panic(f, CompileError::Internal)
}

/// Runs `f`; a panic becomes the error `on_panic` makes of its message
/// (`unknown panic` when the payload is not a string).
pub fn catch_panic<T, E>(
    f: impl FnOnce() -> Result<T, E>,
    on_panic: impl FnOnce(String) -> E,
) -> Result<T, E> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(e) => {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(on_panic(msg))
        }
    }
}
