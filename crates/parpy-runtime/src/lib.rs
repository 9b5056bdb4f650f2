//! parpy-runtime: turns generated C into a callable entry point.
//!
//! - [`cc`]: finds the C compiler (`$CC`, then `cc`, `gcc`, `clang`) and
//!   builds a shared library with the fixed flags plus the user's options.
//! - [`cache`]: the disk cache of shared libraries, keyed by code, compiler
//!   identity, flags and parpy version; atomic writes, verified loads.
//! - [`library`]: loads a shared library and calls its entry
//!   (`int32_t SYM(void **args)`).
//!
//! - [`cuda`]: NVRTC, the CUDA driver and the launch plan (dynamically
//!   loaded: builds and runs on machines without CUDA).
//!
//! No Python objects here; the binding (`parpy-py`) drives this crate.

pub mod cache;
pub mod cc;
pub mod cuda;
pub mod env;
pub mod hash;
pub mod header;
pub mod library;

use std::path::PathBuf;

pub use cache::{default_cache_dir, DiskCache, Outcome};
pub use cc::{BuildFlags, Compiler};
pub use library::{CallbackFn, EntryFn, LoadedEntry};

/// Everything that can go wrong while building, caching or running code.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("no C compiler found: set $CC or install cc, gcc or clang (tried: {tried})")]
    NoCompiler { tried: String },
    #[error("the C compiler {compiler} failed (exit status {status}) on {source_path}:\n{stderr}")]
    CompileFailed {
        compiler: String,
        status: String,
        source_path: String,
        stderr: String,
    },
    /// The compiler itself fails, not the code it was given: it cannot
    /// build a minimal C file, fails only with the arguments that came with
    /// `$CC`, writes no library or is a C++ compiler.
    #[error("the C compiler `{command}` is not usable: {why}")]
    CompilerUnusable { command: String, why: String },
    #[error("I/O error on {path}: {err}")]
    Io {
        path: PathBuf,
        #[source]
        err: std::io::Error,
    },
    #[error("could not load the shared library {path}: {msg}")]
    Load { path: PathBuf, msg: String },
    #[error("the shared library {path} has no entry symbol `{symbol}`: {msg}")]
    Symbol {
        path: PathBuf,
        symbol: String,
        msg: String,
    },
    #[error("the compiled function `{symbol}` returned the error code {code}")]
    NonZero { symbol: String, code: i32 },
    /// The interrupt check ([`cc::set_interrupt_check`]) said to stop while
    /// the C compiler ran: the compiler was killed.
    #[error("interrupted while the C compiler ran (it was stopped)")]
    Interrupted,
}

impl RuntimeError {
    pub(crate) fn io(path: impl Into<PathBuf>, err: std::io::Error) -> RuntimeError {
        RuntimeError::Io {
            path: path.into(),
            err,
        }
    }
}

/// Builds (or fetches from the disk cache) the shared library for `code` and
/// loads `symbol` from it: the whole miss path of the binding in one call.
pub fn build_and_load(
    code: &str,
    symbol: &str,
    flags: &BuildFlags,
    cache: &DiskCache,
) -> Result<LoadedEntry, RuntimeError> {
    build_and_load_outcome(code, symbol, flags, cache).map(|(e, _)| e)
}

/// `build_and_load`, also saying whether the library came from the disk
/// cache or was built.
pub fn build_and_load_outcome(
    code: &str,
    symbol: &str,
    flags: &BuildFlags,
    cache: &DiskCache,
) -> Result<(LoadedEntry, Outcome), RuntimeError> {
    let compiler = Compiler::find()?;
    let (loaded, outcome) = load_through_cache(code, symbol, flags, cache, &compiler)?;
    match loaded {
        // An entry that verifies (its metadata matches its bytes) but that
        // the loader refuses (a library truncated before its metadata was
        // written, or broken by hand): built again, once.
        Err(RuntimeError::Load { .. }) if outcome == Outcome::Hit => {
            cache.invalidate(code, &compiler, flags);
            let (again, _) = load_through_cache(code, symbol, flags, cache, &compiler)?;
            match again {
                Ok(e) => Ok((e, Outcome::Rebuilt)),
                Err(RuntimeError::Load { path, msg }) => Err(RuntimeError::Load {
                    path,
                    msg: format!(
                        "{msg} (the disk cache held a library the loader refused; it was \
                         built again, and the new one is refused too)"
                    ),
                }),
                Err(e) => Err(e),
            }
        }
        // a C++ compiler (CC=g++) mangles the entry's name
        Err(e @ RuntimeError::Symbol { .. }) if compiler.compiles_cplusplus(flags) => {
            Err(RuntimeError::CompilerUnusable {
                command: compiler.command(),
                why: format!(
                    "it compiles C++, not C (parpy's code is C: set $CC to a C compiler, \
                     cc, gcc or clang): {e}"
                ),
            })
        }
        r => r.map(|e| (e, outcome)),
    }
}

/// The library of `code` from the disk cache (built on a miss), loaded;
/// the outcome of the lookup also when the load fails.
fn load_through_cache(
    code: &str,
    symbol: &str,
    flags: &BuildFlags,
    cache: &DiskCache,
    compiler: &Compiler,
) -> Result<(Result<LoadedEntry, RuntimeError>, Outcome), RuntimeError> {
    // A `clear_cache()` in another thread or process may remove the entry
    // between its verification and the load: the library is loaded through
    // a private hard link made before that (see `get_or_build_pinned`).
    let (so, pinned, outcome) = cache.get_or_build_pinned(code, compiler, flags)?;
    let Some(pinned) = pinned else {
        return Ok((LoadedEntry::load(&so, symbol), outcome));
    };
    let r = LoadedEntry::load(&pinned, symbol);
    let _ = std::fs::remove_file(&pinned);
    let r = r.map_err(|e| match e {
        RuntimeError::Load { msg, .. } => RuntimeError::Load { path: so, msg },
        RuntimeError::Symbol { symbol, msg, .. } => RuntimeError::Symbol {
            path: so,
            symbol,
            msg,
        },
        e => e,
    });
    Ok((r, outcome))
}

/// A run-time check that failed in a call, with its message.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckFailure {
    /// An index out of bounds: an `IndexError` in Python.
    Index(String),
    /// An `assert` whose condition was false (`exception` is
    /// `AssertionError`), or a `raise` that ran: the builtin exception
    /// `exception` (one of `parpy_core::ops::RAISABLE`) with `message`.
    Raised { exception: String, message: String },
    /// The same, whose message is Python's `template.format(*values)`
    /// (an f-string message: the caller formats it, as Python would), or
    /// `template % tuple(values)` when `printf`.
    Formatted {
        exception: String,
        template: String,
        values: Vec<Noted>,
        printf: bool,
    },
}

/// A value the message of a failed assertion names: its NumPy type
/// (`int64`, `float32`, `bool`, ...) and its bits as recorded (integers
/// and bools as an int64, floats as a float64).
#[derive(Debug, Clone, PartialEq)]
pub struct Noted {
    pub dtype: String,
    pub bits: i64,
}

/// The failure a bounds record read after a call of `name` tells:
/// `record` is `[site + 1, index, values...]` (`[0, ..]`: no check
/// failed, `None`; see `parpy_core::ir::Bounds`); `sites[k]` says what
/// site `k` checks (`BoundsSite::describe` in the core, the
/// `// parpy-bounds:` lines of a generated file), an assertion when it
/// starts with `ASSERT_SITE`, one whose message names values with
/// `FORMAT_SITE`.
pub fn bounds_error(name: &str, sites: &[String], record: &[i64]) -> Option<CheckFailure> {
    if record.first().is_none_or(|&s| s == 0) {
        return None;
    }
    let what = usize::try_from(record[0] - 1)
        .ok()
        .and_then(|k| sites.get(k))
        .map(String::as_str)
        .unwrap_or("is out of bounds");
    let raised = |exception: &str, message: &str| CheckFailure::Raised {
        exception: exception.to_string(),
        message: format!("`{name}`: {message}"),
    };
    if let Some(message) = what.strip_prefix(parpy_core::ir::ASSERT_SITE) {
        return Some(raised("AssertionError", message));
    }
    // `format E int64,float32: template` (`printf E ...`)
    let printf = what.starts_with(parpy_core::ir::PRINTF_SITE);
    if let Some((exception, dtypes, template)) = what
        .strip_prefix(parpy_core::ir::FORMAT_SITE)
        .or_else(|| what.strip_prefix(parpy_core::ir::PRINTF_SITE))
        .and_then(|r| r.split_once(": "))
        .and_then(|(head, t)| head.split_once(' ').map(|(e, d)| (e, d, t)))
        .filter(|(e, _, _)| parpy_core::ops::RAISABLE.contains(e))
    {
        let values = dtypes
            .split(',')
            .zip(record.iter().skip(2))
            .map(|(dtype, &bits)| Noted {
                dtype: dtype.to_string(),
                bits,
            })
            .collect();
        return Some(CheckFailure::Formatted {
            exception: exception.to_string(),
            // (the name is text of the template)
            template: format!(
                "`{}`: {template}",
                parpy_core::ir::template_text(name, printf)
            ),
            values,
            printf,
        });
    }
    if let Some((exception, message)) = what
        .strip_prefix(parpy_core::ir::RAISE_SITE)
        .and_then(|r| r.split_once(": "))
        .filter(|(e, _)| parpy_core::ops::RAISABLE.contains(e))
    {
        return Some(raised(exception, message));
    }
    Some(CheckFailure::Index(format!(
        "`{name}`: index {} {what}",
        record.get(1).copied().unwrap_or_default()
    )))
}
