//! `CompileError` and the panic guards every entry point runs under.

use std::fmt;

use crate::diag::{self, Diagnostic};

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

impl CompileError {
    /// Whether the first error is a type error (`Diagnostic::type_error`).
    pub fn is_type_error(&self) -> bool {
        match self {
            CompileError::User(d) => d
                .iter()
                .find(|d| d.is_error())
                .is_some_and(|d| d.type_error),
            CompileError::Internal(_) => false,
        }
    }

    /// Whether the first error is a name error (`Diagnostic::name_error`).
    pub fn is_name_error(&self) -> bool {
        match self {
            CompileError::User(d) => d
                .iter()
                .find(|d| d.is_error())
                .is_some_and(|d| d.name_error),
            CompileError::Internal(_) => false,
        }
    }

    /// The Python exception the first error stands for
    /// (`Diagnostic::exception`).
    pub fn python_exception(&self) -> Option<&'static str> {
        match self {
            CompileError::User(d) => d.iter().find(|d| d.is_error())?.exception,
            CompileError::Internal(_) => None,
        }
    }
}

impl From<Vec<Diagnostic>> for CompileError {
    fn from(d: Vec<Diagnostic>) -> CompileError {
        CompileError::User(d)
    }
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
