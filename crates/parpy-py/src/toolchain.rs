//! The NVIDIA tools that come as Python wheels: NVRTC (`libnvrtc.so.13`)
//! and nvcc, found by `parpy._cuda` on `sys.path` (`$PARPY_NVRTC_PATH`,
//! read by the runtime, overrides the NVRTC search).

use std::path::PathBuf;

use parpy_runtime::cuda::cubin::NvrtcSource;
use parpy_runtime::cuda::nvrtc::{self, Nvrtc};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The wheel's `libnvrtc.so.13` (`parpy._cuda.wheel_nvrtc_path()`).
fn wheel_nvrtc(py: Python<'_>) -> PyResult<Option<PathBuf>> {
    let p = py.import("parpy._cuda")?.call_method0("wheel_nvrtc_path")?;
    if p.is_none() {
        Ok(None)
    } else {
        Ok(Some(PathBuf::from(p.extract::<String>()?)))
    }
}

/// `$PARPY_NVRTC_PATH`, else the wheel's NVRTC.
pub fn nvrtc_path(py: Python<'_>) -> PyResult<Option<PathBuf>> {
    match parpy_runtime::env::nvrtc_path() {
        Some(p) => Ok(Some(p)),
        None => wheel_nvrtc(py),
    }
}

fn cuda_err(e: parpy_runtime::cuda::CudaError) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// Where NVRTC comes from, without loading it.
pub fn nvrtc_source(py: Python<'_>) -> PyResult<NvrtcSource> {
    let mut failed = None;
    let found = NvrtcSource::locate(|| {
        wheel_nvrtc(py).unwrap_or_else(|e| {
            failed = Some(e);
            None
        })
    });
    if let Some(e) = failed {
        return Err(e);
    }
    found.map_err(cuda_err)
}

/// NVRTC, loaded once.
pub fn nvrtc(py: Python<'_>) -> PyResult<&'static Nvrtc> {
    if let Some(n) = nvrtc::loaded() {
        return Ok(n);
    }
    let path = nvrtc_path(py)?;
    nvrtc::load(path.as_deref()).map_err(cuda_err)
}

/// Whether NVRTC can be loaded, with a sentence (for backend resolution).
/// The library file is only looked for here, not loaded.
pub fn nvrtc_status(py: Python<'_>) -> (bool, String) {
    if let Some(n) = nvrtc::loaded() {
        return (true, describe(n));
    }
    match nvrtc_path(py) {
        Ok(Some(p)) if p.is_file() => (true, format!("NVRTC {}", p.display())),
        Ok(Some(p)) => (false, format!("{} does not exist", p.display())),
        Ok(None) => match nvrtc(py) {
            Ok(n) => (true, describe(n)),
            Err(e) => (false, e.value(py).to_string()),
        },
        Err(e) => (false, e.value(py).to_string()),
    }
}

fn describe(n: &Nvrtc) -> String {
    format!(
        "NVRTC {} ({})",
        n.version_string(),
        n.path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "system library".into())
    )
}

/// nvcc and the wheel roots to pass it (`-I`/`-L`), or `None`.
pub fn nvcc(py: Python<'_>) -> PyResult<Option<(PathBuf, Vec<PathBuf>)>> {
    let cuda = py.import("parpy._cuda")?;
    let path: Option<String> = cuda.call_method0("nvcc_path")?.extract()?;
    let Some(path) = path else { return Ok(None) };
    let roots = cuda
        .call_method0("nvcc_dirs")?
        .extract::<Vec<String>>()?
        .into_iter()
        .map(Into::into)
        .collect();
    Ok(Some((path.into(), roots)))
}

/// nvcc, ready to build; `needs` says what asked for it (the error when
/// there is none: "`needs` needs nvcc, and none was found ...").
pub fn require_nvcc(py: Python<'_>, needs: &str) -> PyResult<parpy_runtime::cuda::nvcc::Nvcc> {
    let Some((path, roots)) = nvcc(py)? else {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "{needs} needs nvcc, and none was found: not on PATH, not in $CUDA_HOME/bin, and \
             the nvidia-cuda-nvcc wheel is not installed (pip install nvidia-cuda-nvcc \
             nvidia-cuda-runtime nvidia-cuda-cccl)"
        )));
    };
    parpy_runtime::cuda::nvcc::Nvcc::new(&path, &roots)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
}
