//! `parpy._native`: the pyo3 binding. The Python package `parpy` re-exports
//! what users need; see `python/parpy/_native.pyi` for the interface.
//!
//! Modules, lowest first (each names only those above it in this list):
//! `errors` (exception classes), `options`, `args` (argument inspection),
//! `resolver` (globals and closure), `toolchain` (NVRTC and nvcc from the
//! wheels), `backend` (which backends run here), `service` (the compile
//! service: core compiler, disk cache, builds), `callbacks` (the registry of
//! `parpy.callback` functions and their calls from generated code), `cuda`
//! (the Cuda call),
//! `devmem` (device memory of Cuda buffers),
//! `jit` (`JitFunction`), `classify` (Python objects to `Resolved`),
//! `cstring` (`compile_string`), `api` (module-level functions).

mod api;
mod args;
mod backend;
mod callbacks;
mod classify;
mod cstring;
mod cuda;
mod devmem;
mod errors;
mod jit;
mod loaded;
mod options;
mod resolver;
mod service;
mod toolchain;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CompileError", py.get_type::<errors::CompileErrorPy>())?;
    m.add("CompileTypeError", errors::compile_type_error(py)?)?;
    m.add("CompileValueError", errors::compile_value_error(py)?)?;
    m.add("CompileNameError", errors::compile_name_error(py)?)?;
    m.add("CompileIndexError", errors::compile_index_error(py)?)?;
    m.add("CompileOverflowError", errors::compile_overflow_error(py)?)?;
    m.add("InternalError", py.get_type::<errors::InternalError>())?;
    m.add("BuildError", py.get_type::<errors::BuildError>())?;
    m.add("ParpyWarning", py.get_type::<errors::ParpyWarning>())?;
    m.add("__version__", parpy_core::VERSION)?;
    // how a `// parpy-bounds:` line of an assertion starts (`_cuda_emu`)
    m.add("RECORD_LEN", parpy_core::ir::RECORD_LEN)?;
    // Loads NumPy's C API now (rust-numpy does it on first use, and it
    // checks NumPy's version with a regex: ~0.5 ms that otherwise lands on
    // the first call of the process).
    let _ = numpy::PyArrayDescr::of::<f64>(py);
    // Ctrl-C while the C compiler runs stops it (KeyboardInterrupt)
    parpy_runtime::cc::set_interrupt_check(errors::interrupt_check);
    m.add_class::<options::LoopPar>()?;
    m.add_class::<options::CompileBackend>()?;
    m.add_class::<options::CompileOptions>()?;
    m.add_class::<jit::JitFunction>()?;
    m.add_class::<cstring::CompiledString>()?;
    m.add_class::<devmem::DeviceMemory>()?;
    m.add_function(wrap_pyfunction!(options::threads_fn, m)?)?;
    m.add_function(wrap_pyfunction!(options::reduce_marker, m)?)?;
    m.add_function(wrap_pyfunction!(options::par, m)?)?;
    m.add_function(wrap_pyfunction!(cstring::compile_string, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::cuda_emulator, m)?)?;
    m.add_function(wrap_pyfunction!(cuda::cuda_emulator_headers, m)?)?;
    api::register(m)
}
