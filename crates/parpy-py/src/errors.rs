//! The Python exception classes and the conversions of Rust errors into
//! them. A mistake in the program is `CompileError`, a bug in parpy
//! `InternalError`, a failure of the environment (compiler, disk, cache
//! directory) `BuildError`, a `RuntimeError`.

use parpy_core::CompileError;
use pyo3::prelude::*;

/// The Python exception classes (their `__module__` is `parpy`).
pub mod exc {
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

pub use exc::{CompileError as CompileErrorPy, InternalError, ParpyWarning};

pub fn compile_error_to_py(e: CompileError) -> PyErr {
    match e {
        CompileError::User(_) => CompileErrorPy::new_err(e.to_string()),
        CompileError::Internal(m) => internal_error(&m),
    }
}

pub fn internal_error(details: &str) -> PyErr {
    InternalError::new_err(format!(
        "internal compiler error: this is a bug in parpy; please report it with this message.\n{details}"
    ))
}

/// Runs `f`, turning a Rust panic into `InternalError`.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    parpy_core::catch_panic(f, |msg| internal_error(&format!("panic: {msg}")))
}

/// Writes `s` to Python's `sys.stderr`.
pub fn stderr_write(py: Python<'_>, s: &str) -> PyResult<()> {
    let err = py.import("sys")?.getattr("stderr")?;
    err.call_method1("write", (s,))?;
    Ok(())
}

/// Emits `msg` as a `ParpyWarning`.
pub fn warn(py: Python<'_>, msg: &str) -> PyResult<()> {
    let msg = std::ffi::CString::new(msg.replace('\0', " "))
        .unwrap_or_else(|_| c"parpy warning".to_owned());
    let cat = py.get_type::<ParpyWarning>();
    PyErr::warn(py, cat.as_any(), &msg, 1)
}
