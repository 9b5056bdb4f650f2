//! The CUDA runtime: NVRTC (device code to a cubin, in-process), the driver
//! API (contexts, modules, memory, launches) and the launch plan that runs a
//! compiled function's host side.
//!
//! Everything goes through cudarc with dynamic loading, so this crate builds
//! and its users import on machines without CUDA. cudarc panics when a
//! library or a symbol is missing; every call into it here is preceded by a
//! presence check and wrapped in [`no_panic`].
//!
//! - [`nvrtc`]: loads `libnvrtc.so.13` by absolute path (the PyPI wheel),
//!   compiles to a cubin for `sm_XY`, installs the bundled headers.
//! - [`cubin`]: cubins through the disk cache (NVRTC identity, key).
//! - [`driver`]: the driver (`libcuda.so.1`): probe, primary contexts,
//!   modules, memory, launches, and error names.
//! - [`plan`]: the host function of a compiled program as a launch plan,
//!   run against a [`plan::Device`] (the driver, or a mock in tests).
//! - [`placement`]: which device and stream a call runs on (pure rules).
//! - [`call`]: a specialization loaded on one device and its call, over
//!   the [`call::Gpu`] trait (the driver's contexts, or a fake in tests).
//! - [`emu`]: the CUDA emulator as a [`call::Gpu`] (kernels compiled for
//!   the CPU, one fiber per GPU thread): a developer tool for testing the
//!   whole call path without a GPU.

pub mod call;
pub mod cubin;
pub mod driver;
pub mod emu;
pub mod nvcc;
pub mod nvrtc;
pub mod placement;
pub mod plan;

/// What can go wrong on the CUDA path.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CudaError {
    #[error("NVRTC is not available: {0}")]
    NoNvrtc(String),
    // ParPy's words first ("Compilation of generated CUDA code failed")
    #[error("Compilation of generated CUDA code failed: NVRTC could not compile `{name}` for sm_{arch}:\n{log}")]
    NvrtcCompile {
        name: String,
        arch: u32,
        log: String,
    },
    #[error("NVRTC failed in {call}: {msg}")]
    Nvrtc { call: &'static str, msg: String },
    #[error("the CUDA driver is not usable: {0}")]
    NoDriver(String),
    #[error("{call} failed: {name} ({msg})")]
    Driver {
        call: String,
        name: String,
        msg: String,
        code: u32,
    },
    #[error("{0}")]
    Plan(String),
    /// A run-time index check failed (the message names the index, the
    /// array, its shape and the source line): an `IndexError` in Python.
    #[error("{0}")]
    IndexOutOfBounds(String),
    /// An `assert` failed or a `raise` ran (the message and the source
    /// line): the builtin exception `exception` in Python.
    #[error("{exception}: {message}")]
    Raised { exception: String, message: String },
    /// The same whose message is Python's `template.format(*values)`
    /// (`template % tuple(values)` when `printf`).
    #[error("{exception}: {template}")]
    Formatted {
        exception: String,
        template: String,
        values: Vec<crate::Noted>,
        printf: bool,
    },
}

impl From<crate::CheckFailure> for CudaError {
    fn from(f: crate::CheckFailure) -> CudaError {
        match f {
            crate::CheckFailure::Index(m) => CudaError::IndexOutOfBounds(m),
            crate::CheckFailure::Raised { exception, message } => {
                CudaError::Raised { exception, message }
            }
            crate::CheckFailure::Formatted {
                exception,
                template,
                values,
                printf,
            } => CudaError::Formatted {
                exception,
                template,
                values,
                printf,
            },
        }
    }
}

impl From<crate::RuntimeError> for CudaError {
    fn from(e: crate::RuntimeError) -> CudaError {
        CudaError::Plan(e.to_string())
    }
}

/// Runs `f`, turning a panic (cudarc's "library not found" or "missing
/// symbol") into an error naming `what`.
pub fn no_panic<T>(what: &str, f: impl FnOnce() -> Result<T, CudaError>) -> Result<T, CudaError> {
    parpy_core::catch_panic(f, |msg| CudaError::Plan(format!("{what}: {msg}")))
}

/// Opens a shared library by path or name, globally (so that cudarc's later
/// lookup by soname finds this copy) and never unloaded.
pub(crate) fn open_global(path: &std::ffi::OsStr) -> Result<libloading::Library, String> {
    #[cfg(unix)]
    {
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        #[cfg(any(target_os = "macos", target_os = "ios"))]
        const RTLD_NODELETE: std::os::raw::c_int = 0x80;
        #[cfg(not(any(target_os = "macos", target_os = "ios")))]
        const RTLD_NODELETE: std::os::raw::c_int = 0x1000;
        // SAFETY: NVIDIA's libraries (NVRTC, the driver); their initialisers
        // have no preconditions.
        unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE) }
            .map(libloading::Library::from)
            .map_err(|e| e.to_string())
    }
    #[cfg(not(unix))]
    {
        // SAFETY: as above.
        unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())
    }
}
