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
        pyo3::exceptions::PyRuntimeError,
        "A mistake in a parpy program or its options, found by the compiler (a RuntimeError)."
    );
    pyo3::create_exception!(
        parpy,
        InternalError,
        pyo3::exceptions::PyException,
        "A bug in parpy (please report it with the message)."
    );
    pyo3::create_exception!(
        parpy,
        BuildError,
        pyo3::exceptions::PyRuntimeError,
        "The environment failed a build: the C compiler could not run or failed without \
         a diagnostic on the generated code, a file could not be written or loaded (full \
         disk, permissions, a cache cleared under it). The message says what and where."
    );
    pyo3::create_exception!(
        parpy,
        ParpyWarning,
        pyo3::exceptions::PyUserWarning,
        "A warning from the parpy compiler."
    );
}

pub use exc::{BuildError, CompileError as CompileErrorPy, InternalError, ParpyWarning};

/// What to check when the environment fails a build.
const BUILD_HINT: &str = "check that the C compiler ($CC, else cc/gcc/clang on PATH) runs, that \
     the disk has room and the cache directory is writable; `python -m parpy info` shows the \
     compiler and the cache directory";

/// A failed build or load. `user_code`: the code (or the flags) are the
/// user's, so a compiler diagnostic is a `CompileError`. A compiler that
/// fails with diagnostics on the generated file is a parpy bug; one that
/// fails without any (CC=/bin/false, a full disk, a crash) is the
/// environment's: `BuildError`.
pub fn build_error_to_py(e: parpy_runtime::RuntimeError, user_code: bool) -> PyErr {
    use parpy_runtime::RuntimeError as R;
    match &e {
        R::CompileFailed {
            stderr,
            source_path,
            ..
        } => {
            let file = std::path::Path::new(source_path)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let diagnoses_source = !file.is_empty()
                && stderr.contains(&format!("{file}:"))
                && !stderr.contains("No space left on device");
            if diagnoses_source && user_code {
                CompileErrorPy::new_err(e.to_string())
            } else if diagnoses_source {
                internal_error(&format!("the generated code does not compile: {e}"))
            } else {
                BuildError::new_err(format!("{e}\n{BUILD_HINT}"))
            }
        }
        R::NonZero { .. } => pyo3::exceptions::PyRuntimeError::new_err(e.to_string()),
        // what the signal handler raised (KeyboardInterrupt for Ctrl-C)
        R::Interrupted => PENDING_INTERRUPT
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err(e.to_string())),
        R::Load { .. } => BuildError::new_err(format!("{e}\n{LOAD_HINT}")),
        _ => BuildError::new_err(format!("{e}\n{BUILD_HINT}")),
    }
}

/// What to check when the system loader refuses a library parpy built.
const LOAD_HINT: &str = "the system's loader refused the library (its reason above): check the \
     libraries of CompileOptions.libs and the loader's path; `python -m parpy cache clear` \
     empties the disk cache";

std::thread_local! {
    /// The exception a signal handler raised in [`interrupt_check`], until
    /// `build_error_to_py` raises it; or one that Python code the compiler
    /// called raised and that must stop the compile ([`hold_if_stop`]),
    /// until `service::run_compile` raises it.
    static PENDING_INTERRUPT: std::cell::RefCell<Option<PyErr>> =
        const { std::cell::RefCell::new(None) };
}

/// Keeps `e` for [`take_held`] when it must stop the compile rather than
/// be reported as a fact about the program: a `KeyboardInterrupt` (Ctrl-C
/// while a module's `__getattr__` ran, which consumed the signal) or any
/// other `BaseException` that is not an `Exception` (`SystemExit`). Says
/// whether it did.
pub fn hold_if_stop(py: Python<'_>, e: &PyErr) -> bool {
    let stop = !e.is_instance_of::<pyo3::exceptions::PyException>(py);
    if stop {
        PENDING_INTERRUPT.with(|p| {
            p.borrow_mut().get_or_insert_with(|| e.clone_ref(py));
        });
    }
    stop
}

/// The exception [`hold_if_stop`] kept, taken.
pub fn take_held() -> Option<PyErr> {
    PENDING_INTERRUPT.with(|p| p.borrow_mut().take())
}

/// The runtime's interrupt check while the C compiler runs
/// (`parpy_runtime::cc::set_interrupt_check`): runs Python's signal
/// handlers (they run on the main thread only), and says stop when one
/// raised, keeping its exception.
pub fn interrupt_check() -> bool {
    Python::attach(|py| match py.check_signals() {
        Ok(()) => false,
        Err(e) => {
            PENDING_INTERRUPT.with(|p| *p.borrow_mut() = Some(e));
            true
        }
    })
}

/// The cell of one exception class made at first use.
type ErrorType = pyo3::sync::PyOnceLock<Py<pyo3::types::PyType>>;

/// The class `parpy.<name>` with bases `CompileError` and Python's
/// `base`, made once in `cell` (`create_exception!` takes one base).
fn dual_error_type<'py>(
    py: Python<'py>,
    cell: &'static ErrorType,
    name: &str,
    base: Bound<'py, pyo3::types::PyType>,
    doc: &str,
) -> PyResult<&'py Bound<'py, pyo3::types::PyType>> {
    cell.get_or_try_init(py, || {
        let bases = (py.get_type::<CompileErrorPy>(), base);
        let ns = pyo3::types::PyDict::new(py);
        ns.set_item("__module__", "parpy")?;
        ns.set_item("__doc__", doc)?;
        let t = py
            .get_type::<pyo3::types::PyType>()
            .call1((name, bases, ns))?;
        Ok(t.cast_into::<pyo3::types::PyType>()?.unbind())
    })
    .map(|t| t.bind(py))
}

/// `parpy.CompileTypeError`: a `CompileError` that is also a `TypeError`
/// (a value of the wrong type; ParPy programs catch `TypeError`). Built at
/// import with both bases, which `create_exception!` cannot express.
pub fn compile_type_error(py: Python<'_>) -> PyResult<&Bound<'_, pyo3::types::PyType>> {
    static T: ErrorType = ErrorType::new();
    dual_error_type(
        py,
        &T,
        "CompileTypeError",
        py.get_type::<pyo3::exceptions::PyTypeError>(),
        "A type error in a parpy program: both a CompileError and a TypeError.",
    )
}

/// A `CompileTypeError` with `msg`: a mistake in how a jit function is
/// called (an unknown keyword, `opts=` of the wrong type, an argument of a
/// kind parpy cannot pass) is a `TypeError` as Python's own, and a
/// `RuntimeError` as ParPy raises it.
pub fn call_type_error(msg: String) -> PyErr {
    Python::attach(|py| match compile_type_error(py) {
        Ok(t) => PyErr::from_type(t.clone(), msg),
        Err(e) => e,
    })
}

/// A `CompileValueError` with `msg`: an argument of a call a jit function
/// cannot take as it is (a non-contiguous tensor) is a `ValueError` as in
/// Python, and a `RuntimeError` as ParPy raises it.
pub fn call_value_error(msg: String) -> PyErr {
    Python::attach(|py| match compile_value_error(py) {
        Ok(t) => PyErr::from_type(t.clone(), msg),
        Err(e) => e,
    })
}

/// `parpy.CompileNameError`: a `CompileError` that is also a `NameError`
/// (a name with no value where it is read, as Python raises it).
pub fn compile_name_error(py: Python<'_>) -> PyResult<&Bound<'_, pyo3::types::PyType>> {
    static T: ErrorType = ErrorType::new();
    dual_error_type(
        py,
        &T,
        "CompileNameError",
        py.get_type::<pyo3::exceptions::PyNameError>(),
        "A name without a value where a parpy program reads it: both a CompileError \
             and a NameError.",
    )
}

/// `parpy.CompileValueError`: a `CompileError` that is also a `ValueError`
/// (an option given a value it cannot take: Python's class for a bad value,
/// and a `RuntimeError` as ParPy raises it).
pub fn compile_value_error(py: Python<'_>) -> PyResult<&Bound<'_, pyo3::types::PyType>> {
    static T: ErrorType = ErrorType::new();
    dual_error_type(
        py,
        &T,
        "CompileValueError",
        py.get_type::<pyo3::exceptions::PyValueError>(),
        "An option given a value it cannot take: both a CompileError and a ValueError.",
    )
}

/// `parpy.CompileIndexError`: a `CompileError` that is also an
/// `IndexError` (an index that the program certainly uses out of bounds,
/// found when compiling: the class Python raises there).
pub fn compile_index_error(py: Python<'_>) -> PyResult<&Bound<'_, pyo3::types::PyType>> {
    static T: ErrorType = ErrorType::new();
    dual_error_type(
        py,
        &T,
        "CompileIndexError",
        py.get_type::<pyo3::exceptions::PyIndexError>(),
        "An index out of bounds that a statement certain to run uses, found when \
             compiling: both a CompileError and an IndexError.",
    )
}

/// `parpy.CompileOverflowError`: a `CompileError` that is also an
/// `OverflowError` (a Python int a NumPy integer cannot hold, or an
/// infinity made an int, in a statement certain to run).
pub fn compile_overflow_error(py: Python<'_>) -> PyResult<&Bound<'_, pyo3::types::PyType>> {
    static T: ErrorType = ErrorType::new();
    dual_error_type(
        py,
        &T,
        "CompileOverflowError",
        py.get_type::<pyo3::exceptions::PyOverflowError>(),
        "A value out of a type's range that a statement certain to run makes, found \
             when compiling: both a CompileError and an OverflowError.",
    )
}

/// A `ValueError` of an option's value as `CompileValueError` (same
/// message); other errors unchanged.
pub fn option_value_error(py: Python<'_>, e: PyErr) -> PyErr {
    if !e.is_instance_of::<pyo3::exceptions::PyValueError>(py) {
        return e;
    }
    match compile_value_error(py) {
        Ok(t) => PyErr::from_type(t.clone(), e.value(py).to_string()),
        Err(err) => err,
    }
}

pub fn compile_error_to_py(e: CompileError) -> PyErr {
    match e {
        CompileError::User(_) if e.is_type_error() => {
            Python::attach(|py| match compile_type_error(py) {
                Ok(t) => PyErr::from_type(t.clone(), e.to_string()),
                Err(err) => err,
            })
        }
        CompileError::User(_) if e.is_name_error() => {
            Python::attach(|py| match compile_name_error(py) {
                Ok(t) => PyErr::from_type(t.clone(), e.to_string()),
                Err(err) => err,
            })
        }
        CompileError::User(_) if e.python_exception().is_some() => Python::attach(|py| {
            let class = match e.python_exception() {
                Some("IndexError") => compile_index_error(py),
                Some("OverflowError") => compile_overflow_error(py),
                _ => compile_value_error(py),
            };
            match class {
                Ok(t) => PyErr::from_type(t.clone(), e.to_string()),
                Err(err) => err,
            }
        }),
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

/// The builtin exception `exception` (one of `parpy_core::ops::RAISABLE`)
/// with `message`.
pub(crate) fn raised(exception: &str, message: String) -> PyErr {
    use pyo3::exceptions as e;
    match exception {
        "ArithmeticError" => e::PyArithmeticError::new_err(message),
        "AssertionError" => e::PyAssertionError::new_err(message),
        "FloatingPointError" => e::PyFloatingPointError::new_err(message),
        "IndexError" => e::PyIndexError::new_err(message),
        "KeyError" => e::PyKeyError::new_err(message),
        "LookupError" => e::PyLookupError::new_err(message),
        "NotImplementedError" => e::PyNotImplementedError::new_err(message),
        "OverflowError" => e::PyOverflowError::new_err(message),
        "RuntimeError" => e::PyRuntimeError::new_err(message),
        "TypeError" => e::PyTypeError::new_err(message),
        "UnboundLocalError" => e::PyUnboundLocalError::new_err(message),
        "ValueError" => e::PyValueError::new_err(message),
        "ZeroDivisionError" => e::PyZeroDivisionError::new_err(message),
        _ => e::PyException::new_err(message),
    }
}

/// The builtin exception `exception` whose message is Python's
/// `template.format(*values)` (a failed assertion's f-string or
/// `str.format` message; `template % values` when `printf`):
/// each value as the undecorated function has it, a Python int, float or
/// bool or a NumPy scalar (`parpy_core::ir::noted_type`), so the text is
/// what its f-string gives. A format that Python cannot apply (`{x:d}`
/// of a float) raises Python's error of that format, as the f-string
/// itself would.
pub(crate) fn formatted(
    exception: &str,
    template: &str,
    values: &[parpy_runtime::Noted],
    printf: bool,
) -> PyErr {
    Python::attach(|py| {
        let text = (|| -> PyResult<String> {
            let mut objs: Vec<Bound<'_, PyAny>> = vec![];
            for v in values {
                let float = f64::from_bits(v.bits as u64);
                let np = || py.import("numpy");
                let obj = match v.dtype.as_str() {
                    "bool" => (v.bits != 0).into_pyobject(py)?.to_owned().into_any(),
                    "int" => v.bits.into_pyobject(py)?.into_any(),
                    "float" => float.into_pyobject(py)?.into_any(),
                    "bool_" => np()?.getattr("bool_")?.call1((v.bits != 0,))?,
                    "uint64" => np()?.getattr("uint64")?.call1((v.bits as u64,))?,
                    d if d.starts_with("float") => np()?.getattr(d)?.call1((float,))?,
                    d => np()?.getattr(d)?.call1((v.bits,))?,
                };
                objs.push(obj);
            }
            let args = pyo3::types::PyTuple::new(py, objs)?;
            let template = pyo3::types::PyString::new(py, template);
            if printf {
                template.call_method1("__mod__", (args,))?.extract()
            } else {
                template.call_method1("format", args)?.extract()
            }
        })();
        match text {
            Ok(message) => raised(exception, message),
            Err(e) => e,
        }
    })
}
