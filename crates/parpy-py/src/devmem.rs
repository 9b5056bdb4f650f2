//! `_native.DeviceMemory`: CUDA device memory owned by a Python object,
//! the storage of `parpy.buffer` buffers on the Cuda backend
//! (python/parpy/buffer.py). Buffers pass it to jit functions through
//! `__cuda_array_interface__`, so calls take it in place like a torch
//! tensor. Every copy waits for its stream before returning, so a buffer
//! is usable from any stream once a method returns.

use parpy_runtime::cuda::call::Gpu;
use parpy_runtime::cuda::driver::{self, Context};
use parpy_runtime::cuda::emu::EmuGpu;
use parpy_runtime::cuda::CudaError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::args::as_ndarray;

fn runtime_err(what: &str, e: CudaError) -> PyErr {
    crate::cuda::gpu_error(&format!("parpy.buffer: {what}"), e)
}

/// Where the memory lives: a GPU (its context), or the CUDA emulator's
/// device (host memory), while it is installed.
#[derive(Clone, Copy)]
enum Dev {
    Gpu(&'static Context),
    Emu(&'static EmuGpu),
}

impl Dev {
    fn of(device: i64) -> PyResult<Dev> {
        match parpy_runtime::cuda::emu::installed() {
            Some(emu) => Ok(Dev::Emu(emu)),
            None => crate::cuda::context(device).map(Dev::Gpu),
        }
    }

    fn bind(self) -> Result<(), CudaError> {
        match self {
            Dev::Gpu(ctx) => ctx.bind(),
            Dev::Emu(_) => Ok(()),
        }
    }

    /// Stream-ordered allocation, usable from every stream when it returns.
    fn alloc(self, bytes: usize) -> Result<u64, CudaError> {
        match self {
            Dev::Gpu(ctx) => {
                ctx.bind()?;
                let ptr = ctx.alloc(bytes, 0)?;
                driver::sync(0)?;
                Ok(ptr)
            }
            Dev::Emu(emu) => emu.alloc(bytes, 0),
        }
    }

    /// A copy of `n` bytes, done when it returns.
    ///
    /// # Safety
    /// Both ranges hold `n` bytes: `to`/`from` on the host side are a
    /// NumPy array's, on the device side inside an allocation.
    unsafe fn copy(self, kind: Copy, dst: u64, src: u64, n: usize) -> Result<(), CudaError> {
        match self {
            Dev::Gpu(_) => {
                // SAFETY: the caller's ranges; the copy ends before the sync
                unsafe {
                    match kind {
                        Copy::ToDevice => driver::copy_htod(dst, src as usize as *const _, n, 0)?,
                        Copy::ToHost => driver::copy_dtoh(dst as usize as *mut _, src, n, 0)?,
                        Copy::OnDevice => driver::copy_dtod(dst, src, n, 0)?,
                    }
                }
                driver::sync(0)
            }
            Dev::Emu(_) => {
                // SAFETY: the caller's ranges (device memory is host memory)
                unsafe { std::ptr::copy(src as usize as *const u8, dst as usize as *mut u8, n) };
                Ok(())
            }
        }
    }

    /// Zeroes `n` bytes at `dst`, done when it returns.
    ///
    /// # Safety
    /// `dst` holds `n` bytes of an allocation.
    unsafe fn zero(self, dst: u64, n: usize) -> Result<(), CudaError> {
        match self {
            Dev::Gpu(_) => {
                // SAFETY: the caller's range
                unsafe { driver::zero(dst, n, 0)? };
                driver::sync(0)
            }
            Dev::Emu(_) => {
                // SAFETY: the caller's range
                unsafe { std::ptr::write_bytes(dst as usize as *mut u8, 0, n) };
                Ok(())
            }
        }
    }

    /// Gives `ptr` back once the work queued on the device is done.
    fn free(self, ptr: u64) {
        match self {
            Dev::Gpu(ctx) => {
                let _ = driver::sync_all();
                if ctx.bind().is_ok() {
                    driver::free(ptr, 0);
                }
            }
            Dev::Emu(emu) => emu.free(ptr, 0),
        }
    }
}

/// The direction of a copy.
#[derive(Clone, Copy)]
enum Copy {
    ToDevice,
    ToHost,
    OnDevice,
}

/// `bytes` bytes of device memory on device `device`.
#[pyclass(module = "parpy._native", name = "DeviceMemory", frozen)]
pub struct DeviceMemory {
    dev: Dev,
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
        self.dev.bind().map_err(|e| runtime_err(what, e))
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
        let dev = Dev::of(device)?;
        let what = "allocating device memory";
        py.detach(|| dev.alloc(nbytes))
            .map(|ptr| DeviceMemory {
                dev,
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
        let dev = self.dev;
        // SAFETY: `src` (alive: the caller holds it) has `n` bytes at
        // `host`; the range was checked.
        py.detach(|| unsafe { dev.copy(Copy::ToDevice, dst, host, n) })
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
        let dev = self.dev;
        // SAFETY: `dst` (alive: the caller holds it) has `n` writable
        // bytes; the range was checked.
        py.detach(|| unsafe { dev.copy(Copy::ToHost, host, src, n) })
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
        let dev = self.dev;
        // SAFETY: both ranges were checked against their allocations.
        py.detach(|| unsafe { dev.copy(Copy::OnDevice, d, s, nbytes) })
            .map_err(|e| runtime_err(what, e))
    }

    /// Sets `nbytes` bytes from `offset` to zero.
    fn zero(&self, py: Python<'_>, offset: usize, nbytes: usize) -> PyResult<()> {
        let what = "zeroing device memory";
        self.check_range(offset, nbytes, what)?;
        self.bind(what)?;
        let d = self.ptr + offset as u64;
        let dev = self.dev;
        // SAFETY: the range was checked against the allocation.
        py.detach(|| unsafe { dev.zero(d, nbytes) })
            .map_err(|e| runtime_err(what, e))
    }

    /// A DLPack capsule (`"dltensor"`, DLPack's unversioned
    /// `DLManagedTensor`) of a C-contiguous array of `shape` at byte
    /// `offset`, elements of DLPack type `code` (0 int, 1 uint, 2 float,
    /// 6 bool) and `bits` bits, on `kDLCUDA` device `self.device`: the
    /// `__dlpack__` of a Cuda buffer. The tensor keeps this memory alive
    /// until its consumer calls the deleter (or the capsule, never
    /// consumed, is collected).
    fn dlpack<'py>(
        slf: &Bound<'py, Self>,
        offset: usize,
        shape: Vec<i64>,
        code: u8,
        bits: u8,
    ) -> PyResult<Bound<'py, PyAny>> {
        let me = slf.get();
        let count = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?));
        let bytes = count.and_then(|n| n.checked_mul(bits as usize / 8));
        match bytes {
            Some(n) if bits.is_multiple_of(8) && bits > 0 => {
                me.check_range(offset, n, "__dlpack__")?
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "parpy.buffer: __dlpack__: bad shape {shape:?} or element size {bits}"
                )))
            }
        }
        dlpack::capsule(
            slf.py(),
            slf.clone().into_any().unbind(),
            me.ptr + offset as u64,
            me.device as i32,
            shape,
            code,
            bits,
        )
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
        self.dev.free(self.ptr);
    }
}

/// DLPack's unversioned C ABI (`dlpack.h`): a capsule named `"dltensor"`
/// holding a `DLManagedTensor`, renamed `"used_dltensor"` by the consumer
/// that takes it over (and calls its deleter).
mod dlpack {
    use pyo3::prelude::*;
    use std::ffi::{c_char, c_void};

    /// (every capsule made here is device memory)
    const KDL_CUDA: i32 = 2;

    #[repr(C)]
    struct DlTensor {
        data: *mut c_void,
        device_type: i32,
        device_id: i32,
        ndim: i32,
        code: u8,
        bits: u8,
        lanes: u16,
        shape: *mut i64,
        strides: *mut i64,
        byte_offset: u64,
    }

    #[repr(C)]
    struct Managed {
        dl_tensor: DlTensor,
        manager_ctx: *mut c_void,
        deleter: Option<unsafe extern "C" fn(*mut Managed)>,
    }

    /// What `manager_ctx` owns: the object keeping the memory alive and
    /// the shape the tensor points into.
    struct Ctx {
        _owner: Py<PyAny>,
        _shape: Vec<i64>,
    }

    const NAME: &std::ffi::CStr = c"dltensor";

    /// The deleter: frees the tensor and drops its owner, attached to the
    /// interpreter (a consumer may call it from any thread, with or without
    /// the GIL).
    unsafe extern "C" fn deleter(m: *mut Managed) {
        if m.is_null() {
            return;
        }
        // SAFETY: `m` and its context were made by `capsule` below with
        // `Box::into_raw`; a consumer calls the deleter once.
        let ctx = unsafe {
            let m = Box::from_raw(m);
            Box::from_raw(m.manager_ctx as *mut Ctx)
        };
        // (after the interpreter's end the owner is left, not dropped)
        let _ = Python::try_attach(move |_| drop(ctx));
    }

    /// The capsule's destructor: a tensor no consumer took is freed here.
    unsafe extern "C" fn destructor(cap: *mut pyo3::ffi::PyObject) {
        // SAFETY: `cap` is a capsule; a name other than "dltensor" (a
        // consumer renamed it) means the consumer owns the tensor now.
        unsafe {
            if pyo3::ffi::PyCapsule_IsValid(cap, NAME.as_ptr()) == 0 {
                return;
            }
            let m = pyo3::ffi::PyCapsule_GetPointer(cap, NAME.as_ptr()) as *mut Managed;
            if let Some(d) = (*m).deleter {
                d(m);
            }
        }
    }

    /// A `"dltensor"` capsule of a C-contiguous array of `shape` at `ptr`
    /// on kDLCUDA device `device_id`, elements of type `code`, `bits`;
    /// `owner` stays alive until the tensor is deleted.
    pub fn capsule<'py>(
        py: Python<'py>,
        owner: Py<PyAny>,
        ptr: u64,
        device_id: i32,
        shape: Vec<i64>,
        code: u8,
        bits: u8,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut ctx = Box::new(Ctx {
            _owner: owner,
            _shape: shape,
        });
        let m = Box::new(Managed {
            dl_tensor: DlTensor {
                data: ptr as usize as *mut c_void,
                device_type: KDL_CUDA,
                device_id,
                ndim: ctx._shape.len() as i32,
                code,
                bits,
                lanes: 1,
                shape: ctx._shape.as_mut_ptr(),
                // (null: C-contiguous)
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(deleter),
        });
        let m = Box::into_raw(m);
        // SAFETY: `m` is a valid pointer we own until the deleter runs.
        unsafe { (*m).manager_ctx = Box::into_raw(ctx) as *mut c_void };
        // SAFETY: a capsule over `m` with the destructor above; on failure
        // nobody else saw `m`, so it is freed here.
        unsafe {
            let cap = pyo3::ffi::PyCapsule_New(
                m as *mut c_void,
                NAME.as_ptr() as *const c_char,
                Some(destructor),
            );
            if cap.is_null() {
                deleter(m);
                return Err(PyErr::fetch(py));
            }
            Ok(Bound::from_owned_ptr(py, cap))
        }
    }
}
