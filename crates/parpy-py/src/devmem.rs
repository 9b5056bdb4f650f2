//! `_native.DeviceMemory`: CUDA device memory owned by a Python object,
//! the storage of `parpy.buffer` buffers on the Cuda backend
//! (python/parpy/buffer.py). Buffers pass it to jit functions through
//! `__cuda_array_interface__`, so calls take it in place like a torch
//! tensor. Every copy waits for its stream before returning, so a buffer
//! is usable from any stream once a method returns.

use parpy_runtime::cuda::driver::{self, Context};
use parpy_runtime::cuda::CudaError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::args::as_ndarray;

fn runtime_err(what: &str, e: CudaError) -> PyErr {
    crate::cuda::gpu_error(&format!("parpy.buffer: {what}"), e)
}

/// `bytes` bytes of device memory on device `device`.
#[pyclass(module = "parpy._native", name = "DeviceMemory", frozen)]
pub struct DeviceMemory {
    ctx: &'static Context,
    ptr: u64,
    bytes: usize,
    device: i64,
}

/// `(data pointer, size in bytes, writeable)` of a C-contiguous NumPy array.
fn host_range(a: &Bound<'_, PyAny>, what: &str) -> PyResult<(u64, usize, bool)> {
    if as_ndarray(a).is_none() {
        return Err(PyValueError::new_err(format!(
            "parpy.buffer: {what} takes a NumPy array"
        )));
    }
    let flags: (bool, bool) = (
        a.getattr("flags")?.getattr("c_contiguous")?.extract()?,
        a.getattr("flags")?.getattr("writeable")?.extract()?,
    );
    if !flags.0 {
        return Err(PyValueError::new_err(format!(
            "parpy.buffer: {what} takes a C-contiguous array"
        )));
    }
    let nbytes: usize = a.getattr("nbytes")?.extract()?;
    let ptr: u64 = a.getattr("ctypes")?.getattr("data")?.extract()?;
    Ok((ptr, nbytes, flags.1))
}

impl DeviceMemory {
    fn check_range(&self, offset: usize, n: usize, what: &str) -> PyResult<()> {
        match offset.checked_add(n) {
            Some(end) if end <= self.bytes => Ok(()),
            _ => Err(PyValueError::new_err(format!(
                "parpy.buffer: {what}: bytes {offset}..{} are outside the buffer's {} bytes",
                offset.saturating_add(n),
                self.bytes
            ))),
        }
    }

    fn bind(&self, what: &str) -> PyResult<()> {
        self.ctx.bind().map_err(|e| runtime_err(what, e))
    }
}

#[pymethods]
impl DeviceMemory {
    /// Allocates `nbytes` bytes on CUDA device `device`.
    #[new]
    fn new(py: Python<'_>, nbytes: usize, device: i64) -> PyResult<DeviceMemory> {
        if device < 0 {
            return Err(PyValueError::new_err(format!(
                "parpy.buffer: device must be >= 0, got {device}"
            )));
        }
        let ctx = crate::cuda::context(device)?;
        let what = "allocating device memory";
        py.detach(|| {
            ctx.bind()?;
            let ptr = ctx.alloc(nbytes, 0)?;
            // stream-ordered: usable from every stream once this is done
            driver::sync(0)?;
            Ok(ptr)
        })
        .map(|ptr| DeviceMemory {
            ctx,
            ptr,
            bytes: nbytes,
            device,
        })
        .map_err(|e| runtime_err(what, e))
    }

    #[getter]
    fn ptr(&self) -> u64 {
        self.ptr
    }

    #[getter]
    fn nbytes(&self) -> usize {
        self.bytes
    }

    #[getter]
    fn device(&self) -> i64 {
        self.device
    }

    /// Copies the NumPy array `src` (C-contiguous) to byte `offset`.
    fn write(&self, py: Python<'_>, offset: usize, src: &Bound<'_, PyAny>) -> PyResult<()> {
        let what = "copying to the device";
        let (host, n, _) = host_range(src, what)?;
        self.check_range(offset, n, what)?;
        self.bind(what)?;
        let dst = self.ptr + offset as u64;
        py.detach(|| {
            // SAFETY: `src` (alive: the caller holds it) has `n` bytes at
            // `host`; the range was checked; the copy ends before the sync.
            unsafe { driver::copy_htod(dst, host as usize as *const _, n, 0)? };
            driver::sync(0)
        })
        .map_err(|e| runtime_err(what, e))
    }

    /// Copies bytes from `offset` into the NumPy array `dst` (C-contiguous,
    /// writeable; as many bytes as it holds).
    fn read(&self, py: Python<'_>, offset: usize, dst: &Bound<'_, PyAny>) -> PyResult<()> {
        let what = "copying from the device";
        let (host, n, writeable) = host_range(dst, what)?;
        if !writeable {
            return Err(PyValueError::new_err(
                "parpy.buffer: copying from the device needs a writeable array",
            ));
        }
        self.check_range(offset, n, what)?;
        self.bind(what)?;
        let src = self.ptr + offset as u64;
        py.detach(|| {
            // SAFETY: `dst` (alive: the caller holds it) has `n` writable
            // bytes; the range was checked; the copy ends before the sync.
            unsafe { driver::copy_dtoh(host as usize as *mut _, src, n, 0)? };
            driver::sync(0)
        })
        .map_err(|e| runtime_err(what, e))
    }

    /// Copies `nbytes` bytes from `src` at `src_offset` to `offset`.
    fn copy_from(
        &self,
        py: Python<'_>,
        offset: usize,
        src: &DeviceMemory,
        src_offset: usize,
        nbytes: usize,
    ) -> PyResult<()> {
        let what = "copying between buffers";
        self.check_range(offset, nbytes, what)?;
        src.check_range(src_offset, nbytes, what)?;
        self.bind(what)?;
        let (d, s) = (self.ptr + offset as u64, src.ptr + src_offset as u64);
        py.detach(|| {
            // SAFETY: both ranges were checked against their allocations.
            unsafe { driver::copy_dtod(d, s, nbytes, 0)? };
            driver::sync(0)
        })
        .map_err(|e| runtime_err(what, e))
    }

    /// Sets `nbytes` bytes from `offset` to zero.
    fn zero(&self, py: Python<'_>, offset: usize, nbytes: usize) -> PyResult<()> {
        let what = "zeroing device memory";
        self.check_range(offset, nbytes, what)?;
        self.bind(what)?;
        let d = self.ptr + offset as u64;
        py.detach(|| {
            // SAFETY: the range was checked against the allocation.
            unsafe { driver::zero(d, nbytes, 0)? };
            driver::sync(0)
        })
        .map_err(|e| runtime_err(what, e))
    }

    fn __repr__(&self) -> String {
        format!(
            "DeviceMemory({} bytes on cuda:{} at {:#x})",
            self.bytes, self.device, self.ptr
        )
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        // Work queued on other streams may still use it: wait for the
        // device before giving the memory back (errors cannot be reported
        // from a destructor).
        let _ = driver::sync_all();
        if self.ctx.bind().is_ok() {
            driver::free(self.ptr, 0);
        }
    }
}
