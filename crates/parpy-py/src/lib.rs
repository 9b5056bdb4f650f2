//! `parpy._native`: the pyo3 binding. The Python package `parpy` re-exports
//! what users need; see `python/parpy/_native.pyi` for the interface.

mod args;
mod backend;
mod cstring;
mod cuda;
mod cuda_args;
mod jit;
mod options;
mod resolver;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use parpy_core::CompileError;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// The Python exception classes (their `__module__` is `parpy`).
pub(crate) mod exc {
    pyo3::create_exception!(
        parpy,
        CompileError,
        pyo3::exceptions::PyException,
        "A mistake in a parpy program or its options, found by the compiler."
    );
    pyo3::create_exception!(
        parpy,
        InternalError,
        pyo3::exceptions::PyException,
        "A bug in parpy (please report it with the message)."
    );
    pyo3::create_exception!(
        parpy,
        ParpyWarning,
        pyo3::exceptions::PyUserWarning,
        "A warning from the parpy compiler."
    );
}

pub(crate) use exc::{CompileError as CompileErrorPy, InternalError, ParpyWarning};

static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Bumped by `clear_cache`; in-memory caches compare it on lookup.
#[inline]
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

fn cache_dirs() -> &'static Mutex<BTreeSet<PathBuf>> {
    static DIRS: OnceLock<Mutex<BTreeSet<PathBuf>>> = OnceLock::new();
    DIRS.get_or_init(|| Mutex::new(BTreeSet::new()))
}

/// Remembers a disk cache directory used in this process (for clear_cache).
pub(crate) fn note_cache_dir(dir: &Path) {
    let mut d = cache_dirs().lock().unwrap_or_else(|e| e.into_inner());
    if !d.contains(dir) {
        d.insert(dir.to_path_buf());
    }
}

pub(crate) fn compile_error_to_py(e: CompileError) -> PyErr {
    match e {
        CompileError::User(_) => CompileErrorPy::new_err(e.to_string()),
        CompileError::Internal(m) => internal_error(&m),
    }
}

pub(crate) fn internal_error(details: &str) -> PyErr {
    InternalError::new_err(format!(
        "internal compiler error: this is a bug in parpy; please report it with this message.\n{details}"
    ))
}

/// Runs `f`, turning a Rust panic into `InternalError`.
pub(crate) fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    parpy_core::catch_panic(f, |msg| internal_error(&format!("panic: {msg}")))
}

pub(crate) fn stderr_write(py: Python<'_>, s: &str) -> PyResult<()> {
    let err = py.import("sys")?.getattr("stderr")?;
    err.call_method1("write", (s,))?;
    Ok(())
}

/// `parpy.print_compiled(fn, args, opts)`: the generated code, no cache.
#[pyfunction]
#[pyo3(signature = (fun, args, opts=None))]
fn print_compiled(
    py: Python<'_>,
    fun: &Bound<'_, PyAny>,
    args: &Bound<'_, PyAny>,
    opts: Option<&Bound<'_, options::CompileOptions>>,
) -> PyResult<String> {
    guard(|| {
        let (def, resolver, name, params) = jit::def_and_resolver(fun)?;
        let data = opts.map(|o| o.get().snapshot()).unwrap_or_default();
        backend::refuse_python(data.backend, "print_compiled")?;
        let items: Vec<Bound<'_, PyAny>> = args
            .try_iter()
            .map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(
                    "print_compiled(fn, args, opts): `args` must be a list of the arguments",
                )
            })?
            .collect::<PyResult<_>>()?;
        if items.len() != params.len() {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "{name}() takes {} positional arguments ({}) but {} were given to print_compiled",
                params.len(),
                params.join(", "),
                items.len()
            )));
        }
        let ctx = args::ArgCtx {
            func: &name,
            params: &params,
        };
        let mut types = vec![];
        for (i, a) in items.iter().enumerate() {
            types.push(args::arg_type(a, i, data.specialize_scalars, &ctx)?);
        }
        let (backend, why) = backend::resolve(data.backend);
        if data.verbose_backend_resolution {
            stderr_write(py, &format!("parpy: {}\n", why.join("\nparpy: ")))?;
        }
        let options = data.to_core(backend)?;
        Ok(jit::run_compile(py, &def, &types, &resolver, &options)?.code)
    })
}

/// Drops every in-memory specialization and the disk cache entries.
#[pyfunction]
fn clear_cache() -> PyResult<()> {
    guard(|| {
        GENERATION.fetch_add(1, Ordering::AcqRel);
        let mut dirs: BTreeSet<PathBuf> = cache_dirs()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        dirs.insert(parpy_runtime::default_cache_dir());
        for d in dirs {
            parpy_runtime::cache::clear(&d)
                .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))?;
        }
        Ok(())
    })
}

/// The disk cache directory used when `CompileOptions.cache_dir` is unset.
#[pyfunction]
fn default_cache_dir() -> PathBuf {
    parpy_runtime::default_cache_dir()
}

/// `(usable, sentence)` for one backend.
#[pyfunction]
fn backend_explain(b: options::CompileBackend) -> (bool, String) {
    if b == options::CompileBackend::Python {
        return (true, backend::PYTHON_SENTENCE.to_string());
    }
    match b.core() {
        Some(c) => backend::explain(c),
        None => {
            let (c, lines) = backend::resolve(b);
            (backend::is_enabled(c), lines.join("\n"))
        }
    }
}

#[pyfunction]
fn backend_is_enabled(b: options::CompileBackend) -> bool {
    if b == options::CompileBackend::Python {
        return true;
    }
    match b.core() {
        Some(c) => backend::is_enabled(c),
        None => true,
    }
}

#[pyfunction]
fn backend_available(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list: Vec<options::CompileBackend> = backend::available()
        .into_iter()
        .map(|b| match b {
            parpy_core::Backend::Cpu => options::CompileBackend::Cpu,
            parpy_core::Backend::Cuda => options::CompileBackend::Cuda,
            parpy_core::Backend::Metal => options::CompileBackend::Metal,
        })
        .collect();
    PyList::new(py, list)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CompileError", py.get_type::<CompileErrorPy>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("ParpyWarning", py.get_type::<ParpyWarning>())?;
    m.add("__version__", parpy_core::VERSION)?;
    // Loads NumPy's C API now (rust-numpy does it on first use, and it
    // checks NumPy's version with a regex: ~0.5 ms that otherwise lands on
    // the first call of the process).
    let _ = numpy::PyArrayDescr::of::<f64>(py);
    m.add_class::<options::LoopPar>()?;
    m.add_class::<options::CompileBackend>()?;
    m.add_class::<options::CompileOptions>()?;
    m.add_class::<jit::JitFunction>()?;
    m.add_class::<cstring::CompiledString>()?;
    m.add_function(wrap_pyfunction!(options::threads_fn, m)?)?;
    m.add_function(wrap_pyfunction!(options::reduce_marker, m)?)?;
    m.add_function(wrap_pyfunction!(options::par, m)?)?;
    m.add_function(wrap_pyfunction!(print_compiled, m)?)?;
    m.add_function(wrap_pyfunction!(cstring::compile_string, m)?)?;
    m.add_function(wrap_pyfunction!(clear_cache, m)?)?;
    m.add_function(wrap_pyfunction!(default_cache_dir, m)?)?;
    m.add_function(wrap_pyfunction!(backend_explain, m)?)?;
    m.add_function(wrap_pyfunction!(backend_is_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(backend_available, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::_cuda_nvrtc_compile, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::_cuda_nvrtc_version, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::_cuda_dry_run, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::_cuda_nvrtc_loaded, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_args::_cuda_arg_kind, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::_cuda_sync, m)?)?;
    Ok(())
}
