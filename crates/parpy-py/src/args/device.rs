//! Device arrays as call arguments: torch CUDA tensors (read through cheap
//! calls: `data_ptr()`, `shape`, `dtype`, `is_contiguous()`,
//! `get_device()`; never `__cuda_array_interface__`, which costs ~2 µs on
//! torch) and any object with `__cuda_array_interface__` (CuPy, Numba, ...).
//!
//! Each one's device is part of the cached-call key (a CAI array's is its
//! pointer's), and the fast path notes, per device argument, where its
//! stream comes from ([`DevSeen`]): torch's or CuPy's current stream, the
//! CAI `stream` field, or the legacy default stream to wait for (DLPack).
//!
//! torch and CuPy are never imported: an object can only be a torch tensor
//! (a CuPy array) when `"torch"` (`"cupy"`) is in `sys.modules`, and
//! `torch.Tensor` (`cupy.ndarray`) is fetched from there.

use parpy_core::{ArgType, ElemTy};
use parpy_runtime::cuda::placement::{self, StreamUse};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::args::{elem_of, ArgCtx, KeyBuf};

const TAG_TORCH: u64 = 6;
const TAG_CAI: u64 = 7;
const TAG_DLPACK: u64 = 8;

/// What a device argument is, for the miss path.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DevKind {
    Torch,
    Cai,
    DlPack,
}

/// Where a device argument's stream comes from, for each call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StreamSrc {
    /// torch's current stream on the tensor's device.
    Torch,
    /// CuPy's current stream on the array's device.
    CuPy,
    /// What the object said (the CAI `stream` field; DLPack: ready for
    /// the legacy default stream).
    Said(StreamUse),
}

/// A device argument of a call, as the fast path saw it (in argument order).
#[derive(Clone, Copy, Debug)]
pub struct DevSeen {
    /// Its CUDA device (-1: unknown, a CAI pointer the driver does not know).
    pub device: i64,
    pub stream: StreamSrc,
}

/// A device array seen on the miss path.
pub struct DevArg {
    pub ty: ArgType,
    pub kind: DevKind,
    /// The CUDA device index (torch), or `None` when only the pointer knows.
    pub device: Option<i64>,
    pub ptr: u64,
}

/// `sys.modules`, fetched once (asked on every call with a device array
/// while torch is not imported).
fn sys_modules(py: Python<'_>) -> PyResult<&Bound<'_, PyDict>> {
    static MODULES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    let m = MODULES.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
        Ok(py
            .import("sys")?
            .getattr("modules")?
            .cast_into::<PyDict>()?
            .unbind())
    })?;
    Ok(m.bind(py))
}

fn torch_tensor_type(py: Python<'_>) -> PyResult<Option<&Bound<'_, PyType>>> {
    static TENSOR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    if let Some(t) = TENSOR.get(py) {
        return Ok(Some(t.bind(py)));
    }
    let Some(torch) = sys_modules(py)?.get_item(pyo3::intern!(py, "torch"))? else {
        return Ok(None);
    };
    let Ok(t) = torch.getattr("Tensor") else {
        return Ok(None);
    };
    let t = t.cast_into::<PyType>()?;
    let _ = TENSOR.set(py, t.unbind());
    Ok(TENSOR.get(py).map(|t| t.bind(py)))
}

/// `cupy.ndarray`, once CuPy is imported.
fn cupy_array_type(py: Python<'_>) -> PyResult<Option<&Bound<'_, PyType>>> {
    static NDARRAY: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    if let Some(t) = NDARRAY.get(py) {
        return Ok(Some(t.bind(py)));
    }
    let Some(cupy) = sys_modules(py)?.get_item(pyo3::intern!(py, "cupy"))? else {
        return Ok(None);
    };
    let Ok(t) = cupy.getattr("ndarray") else {
        return Ok(None);
    };
    let Ok(t) = t.cast_into::<PyType>() else {
        return Ok(None);
    };
    let _ = NDARRAY.set(py, t.unbind());
    Ok(NDARRAY.get(py).map(|t| t.bind(py)))
}

/// Whether `obj` is a CuPy array (without importing CuPy).
fn is_cupy(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    match cupy_array_type(obj.py())? {
        Some(t) => obj.is_instance(t),
        None => Ok(false),
    }
}

/// Whether `obj` is a torch tensor (without importing torch).
pub fn is_torch(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    match torch_tensor_type(obj.py())? {
        Some(t) => obj.is_instance(t),
        None => Ok(false),
    }
}

/// The layout of a torch tensor that is not strided (`torch.sparse_csr`):
/// it has no data pointer (torch raises for `data_ptr()`).
pub fn torch_sparse_layout(obj: &Bound<'_, PyAny>) -> Option<String> {
    if !is_torch(obj).unwrap_or(false) {
        return None;
    }
    let layout: String = obj.getattr("layout").ok()?.str().ok()?.extract().ok()?;
    (layout != "torch.strided").then_some(layout)
}

/// torch dtype name (`torch.float32`) to our element type.
fn torch_elem(name: &str) -> Option<ElemTy> {
    Some(match name {
        "torch.bool" => ElemTy::Bool,
        "torch.int8" => ElemTy::I8,
        "torch.int16" => ElemTy::I16,
        "torch.int32" => ElemTy::I32,
        "torch.int64" => ElemTy::I64,
        "torch.uint8" => ElemTy::U8,
        "torch.uint16" => ElemTy::U16,
        "torch.uint32" => ElemTy::U32,
        "torch.uint64" => ElemTy::U64,
        "torch.float16" => ElemTy::F16,
        "torch.float32" => ElemTy::F32,
        "torch.float64" => ElemTy::F64,
        _ => return None,
    })
}

/// The element type of a torch dtype object. torch's dtypes are
/// singletons that live as long as torch: each one's address is
/// remembered with its type, so a call reads no name (`str(dtype)`).
fn torch_dtype_elem(dtype: &Bound<'_, PyAny>) -> PyResult<Option<ElemTy>> {
    static SEEN: std::sync::Mutex<Vec<(usize, Option<ElemTy>)>> = std::sync::Mutex::new(Vec::new());
    let addr = dtype.as_ptr() as usize;
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, e)) = seen.iter().find(|(a, _)| *a == addr) {
        return Ok(e);
    }
    let name: String = dtype.str()?.extract()?;
    let e = torch_elem(&name);
    // (only torch's own dtypes, a bounded set, are remembered)
    if seen.len() < 64 && name.starts_with("torch.") {
        seen.push((addr, e));
    }
    Ok(e)
}

fn not_contiguous(i: usize, ctx: &ArgCtx<'_>, fix: &str) -> PyErr {
    let n = ctx.name(i);
    crate::errors::call_value_error(format!(
        "argument `{n}` of `{}` is not contiguous; pass {n}.{fix}",
        ctx.func
    ))
}

/// A torch tensor with its negative bit set (`is_neg()`: a lazy negation,
/// as `t._neg_view()` or the imaginary part of a conjugated complex tensor
/// give) is refused: its memory holds the values negated, which compiled
/// code would read and write as they are. (One method call per tensor and
/// call: the bit is not in the key.)
#[inline]
fn reject_neg(obj: &Bound<'_, PyAny>, i: usize, ctx: &ArgCtx<'_>) -> PyResult<()> {
    // (an object that only looks like a tensor may have no `is_neg`: then
    // it has no negative bit)
    let Ok(is_neg) = obj.getattr(pyo3::intern!(obj.py(), "is_neg")) else {
        return Ok(());
    };
    let neg = is_neg.call0()?;
    // SAFETY: `Py_True` is the immortal `True` object.
    if neg.as_ptr() == unsafe { pyo3::ffi::Py_True() } {
        return Err(neg_error(i, ctx));
    }
    Ok(())
}

#[cold]
fn neg_error(i: usize, ctx: &ArgCtx<'_>) -> PyErr {
    let n = ctx.name(i);
    let f = ctx.func;
    crate::errors::call_value_error(format!(
        "argument `{n}` of `{f}` is a torch tensor with its negative bit set ({n}.is_neg(): \
         a lazy negation, as `_neg_view()` or the `.imag` of a conjugated tensor give), whose \
         memory holds its values negated; pass {n}.resolve_neg(), a copy, so where `{f}` \
         writes `{n}` its results go to the copy: pass `t = {n}.resolve_neg()`, then copy \
         them back with `{n}.copy_(t)`"
    ))
}

/// Whether a torch tensor requires grad (read on every call for the
/// tensors a function may write: [`grad_write_error`]).
#[inline]
pub fn requires_grad(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    // (no `requires_grad`: an object that only looks like a tensor)
    let Ok(r) = obj.getattr(pyo3::intern!(obj.py(), "requires_grad")) else {
        return Ok(false);
    };
    // SAFETY: `Py_True` is the immortal `True` object.
    Ok(r.as_ptr() == unsafe { pyo3::ffi::Py_True() })
}

/// The `RuntimeError` (torch's type for the same refusal) of a write by
/// `func` into its argument `name`, a torch tensor that requires grad:
/// the write would bypass autograd (no version bump, no graph node).
#[cold]
pub fn grad_write_error(name: &str, func: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "argument `{name}` of `{func}` is a torch tensor that requires grad, and `{func}` \
         writes to it: autograd would not see the write (torch refuses an in-place operation \
         on a leaf that requires grad, and records one on other tensors); pass \
         `{name}.detach()` (the same memory, outside autograd: what `torch.no_grad()` does for \
         torch's own in-place updates), or a tensor that does not require grad"
    ))
}

/// `compile_string`'s checks of a torch tensor argument (`written`: the
/// code writes it): its negative bit, and a write into one that requires
/// grad.
pub fn check_torch(
    obj: &Bound<'_, PyAny>,
    i: usize,
    ctx: &ArgCtx<'_>,
    written: bool,
) -> PyResult<()> {
    if !is_torch(obj)? {
        return Ok(());
    }
    reject_neg(obj, i, ctx)?;
    if written && requires_grad(obj)? {
        return Err(grad_write_error(&ctx.name(i), ctx.func));
    }
    Ok(())
}

/// A torch tensor that a call writes: the fast path reports torch tensors
/// as not writeable (`observe`), and the call asks this of each one its
/// function writes, so only those are asked whether they require grad.
/// `Ok(true)`: a torch tensor that may be written; `Ok(false)`: not a
/// torch tensor (a read-only array); an error for one that requires grad.
pub fn torch_write(
    obj: &Bound<'_, PyAny>,
    name: impl FnOnce() -> String,
    func: &str,
) -> PyResult<bool> {
    if !is_torch(obj)? {
        return Ok(false);
    }
    if requires_grad(obj)? {
        return Err(grad_write_error(&name(), func));
    }
    Ok(true)
}

/// A torch tensor in host memory, taken in place like a NumPy array (the
/// Cpu backend reads and writes it; the Cuda backend stages it, copying
/// back only what the function writes). A 0-d tensor is a scalar.
pub struct HostTensor {
    pub elem: ElemTy,
    pub shape: Vec<i64>,
    pub ptr: u64,
}

/// `obj` as a torch tensor in host memory, with NumPy's checks (a
/// supported dtype, C-contiguous, aligned); `None` for anything else.
pub fn torch_host(
    obj: &Bound<'_, PyAny>,
    i: usize,
    ctx: &ArgCtx<'_>,
) -> PyResult<Option<HostTensor>> {
    let py = obj.py();
    if !is_torch(obj)? {
        return Ok(None);
    }
    let dev: i64 = obj
        .call_method0(pyo3::intern!(py, "get_device"))?
        .extract()?;
    if dev >= 0 {
        return Ok(None);
    }
    let dtype = obj.getattr(pyo3::intern!(py, "dtype"))?;
    let elem = match torch_dtype_elem(&dtype)? {
        Some(e) => e,
        None => {
            return Err(PyTypeError::new_err(format!(
                "argument `{}` of `{}` has dtype {}, which parpy does not support",
                ctx.name(i),
                ctx.func,
                dtype.str()?
            )))
        }
    };
    let shape: Vec<i64> = obj.getattr(pyo3::intern!(py, "shape"))?.extract()?;
    let ptr: u64 = match obj.call_method0(pyo3::intern!(py, "data_ptr")) {
        Ok(p) => p.extract()?,
        // (a sparse tensor has no data pointer: torch's RuntimeError named
        // no argument)
        Err(e) => match torch_sparse_layout(obj) {
            Some(layout) => {
                return Err(PyTypeError::new_err(format!(
                    "argument `{}` of `{}` is a sparse torch tensor ({layout}); parpy takes \
                     dense (strided) tensors: pass its parts (`values()`, `crow_indices()`, \
                     `col_indices()`) or `to_dense()`",
                    ctx.name(i),
                    ctx.func
                )))
            }
            None => return Err(e),
        },
    };
    let count: i64 = shape.iter().product();
    if count > 0 && ptr == 0 {
        return Err(PyValueError::new_err(format!(
            "argument `{}` of `{}` is a torch tensor without data in memory (device {})",
            ctx.name(i),
            ctx.func,
            obj.getattr("device")?.str()?
        )));
    }
    reject_neg(obj, i, ctx)?;
    if shape.is_empty() {
        // a 0-d tensor: one element at `ptr`, read as a scalar by the caller
        return Ok(Some(HostTensor { elem, shape, ptr }));
    }
    if !obj
        .call_method0(pyo3::intern!(py, "is_contiguous"))?
        .is_truthy()?
    {
        return Err(not_contiguous(i, ctx, "contiguous()"));
    }
    if !ptr.is_multiple_of(elem.size() as u64) {
        let n = ctx.name(i);
        return Err(PyValueError::new_err(format!(
            "argument `{n}` of `{}` is not aligned; pass {n}.clone()",
            ctx.func
        )));
    }
    Ok(Some(HostTensor { elem, shape, ptr }))
}

/// `typestr` like `<f4` to an element type.
fn typestr_elem(s: &str) -> Option<ElemTy> {
    let b = s.as_bytes();
    if b.len() < 3 {
        return None;
    }
    let native = if cfg!(target_endian = "little") {
        b'<'
    } else {
        b'>'
    };
    if b[0] != native && b[0] != b'|' {
        return None;
    }
    // `get`: a typestr from Python may hold any characters.
    let size: usize = s.get(2..)?.parse().ok()?;
    elem_of(b[1], size)
}

fn pack_str(s: &str) -> u64 {
    let mut v = 0u64;
    for (k, b) in s.bytes().take(8).enumerate() {
        v |= (b as u64) << (8 * k);
    }
    v
}

/// The fast-path observation of a device array: pushes the key (with the
/// device), stores the device pointer in `val`, notes the argument in
/// `devs`; `None` when `obj` is not a device array.
#[inline]
pub fn observe(
    obj: &Bound<'_, PyAny>,
    i: usize,
    key: &mut KeyBuf,
    val: &mut u64,
    devs: &mut Vec<DevSeen>,
    ctx: &ArgCtx<'_>,
) -> PyResult<Option<(bool, bool, usize)>> {
    let py = obj.py();
    if is_torch(obj)? {
        let dev: i64 = obj
            .call_method0(pyo3::intern!(py, "get_device"))?
            .extract()?;
        if dev < 0 {
            // in host memory: the caller takes it (`torch_host`)
            return Ok(None);
        }
        if !obj
            .call_method0(pyo3::intern!(py, "is_contiguous"))?
            .is_truthy()?
        {
            return Err(not_contiguous(i, ctx, "contiguous()"));
        }
        reject_neg(obj, i, ctx)?;
        let dtype = obj.getattr(pyo3::intern!(py, "dtype"))?;
        let shape = obj.getattr(pyo3::intern!(py, "shape"))?;
        let shape = shape.cast::<PyTuple>()?;
        key.push(TAG_TORCH | ((dev as u64 & 0xffff) << 8) | ((shape.len() as u64) << 48));
        // torch dtypes are interned singletons: their address identifies them.
        key.push(dtype.as_ptr() as usize as u64);
        let mut count = 1usize;
        for d in shape.iter() {
            let d: i64 = d.extract()?;
            key.push(d as u64);
            count = count.saturating_mul(d.max(0) as usize);
        }
        let ptr: u64 = obj.call_method0(pyo3::intern!(py, "data_ptr"))?.extract()?;
        *val = ptr;
        devs.push(DevSeen {
            device: dev,
            stream: StreamSrc::Torch,
        });
        // (not writeable here: a call that writes it asks whether it
        // requires grad: `torch_write`)
        return Ok(Some((true, false, count)));
    }
    let Ok(cai) = obj.getattr(pyo3::intern!(py, "__cuda_array_interface__")) else {
        let Some(d) = dlpack(obj, i, ctx)? else {
            return Ok(None);
        };
        key.push(TAG_DLPACK | ((d.device as u64 & 0xffff) << 8) | ((d.shape.len() as u64) << 48));
        key.push(d.dtype as u64);
        let mut count = 1usize;
        for &n in &d.shape {
            key.push(n as u64);
            count = count.saturating_mul(n.max(0) as usize);
        }
        *val = d.ptr;
        devs.push(DevSeen {
            device: d.device,
            // `__dlpack__()` without a stream: the producer made the
            // array ready for the legacy default stream
            stream: StreamSrc::Said(StreamUse::After(placement::STREAM_LEGACY)),
        });
        return Ok(Some((true, true, count)));
    };
    let c = parse_cai(&cai, i, ctx)?;
    // one driver call on a machine with several GPUs (none with one)
    let dev = parpy_runtime::cuda::driver::pointer_device_or_unknown(c.ptr);
    key.push(TAG_CAI | ((dev as u64 & 0xffff) << 8) | ((c.shape.len() as u64) << 48));
    key.push(c.elem_key);
    let mut count = 1usize;
    for &d in &c.shape {
        key.push(d as u64);
        count = count.saturating_mul(d.max(0) as usize);
    }
    *val = c.ptr;
    let stream = if is_cupy(obj)? {
        StreamSrc::CuPy
    } else {
        StreamSrc::Said(c.stream)
    };
    devs.push(DevSeen {
        device: dev,
        stream,
    });
    Ok(Some((true, !c.readonly, count)))
}

/// What parpy reads of a `__cuda_array_interface__` dict.
struct Cai {
    /// The typestr, packed into a key word.
    elem_key: u64,
    shape: Vec<i64>,
    ptr: u64,
    readonly: bool,
    stream: StreamUse,
}

/// A `__cuda_array_interface__` dict read and checked: non-contiguous
/// strides and stream 0 are errors.
fn parse_cai(cai: &Bound<'_, PyAny>, i: usize, ctx: &ArgCtx<'_>) -> PyResult<Cai> {
    let py = cai.py();
    let bad = |what: &str| {
        PyTypeError::new_err(format!(
            "argument `{}` of `{}` has an invalid __cuda_array_interface__ ({what})",
            ctx.name(i),
            ctx.func
        ))
    };
    let d = cai.cast::<PyDict>().map_err(|_| bad("not a dict"))?;
    let shape: Vec<i64> = d
        .get_item(pyo3::intern!(py, "shape"))?
        .ok_or_else(|| bad("no shape"))?
        .extract()
        .map_err(|_| bad("shape is not a tuple of ints"))?;
    let typestr: String = d
        .get_item(pyo3::intern!(py, "typestr"))?
        .ok_or_else(|| bad("no typestr"))?
        .extract()
        .map_err(|_| bad("typestr is not a str"))?;
    let (ptr, readonly): (u64, bool) = d
        .get_item(pyo3::intern!(py, "data"))?
        .ok_or_else(|| bad("no data"))?
        .extract()
        .map_err(|_| bad("data is not (pointer, readonly)"))?;
    if let Some(strides) = d.get_item(pyo3::intern!(py, "strides"))? {
        if !strides.is_none() {
            let strides: Vec<i64> = strides.extract().map_err(|_| bad("bad strides"))?;
            let size = typestr
                .get(2..)
                .and_then(|t| t.parse::<i64>().ok())
                .ok_or_else(|| bad("bad typestr"))?;
            let mut want = size;
            for (k, &n) in shape.iter().enumerate().rev() {
                if n > 1 && strides.get(k) != Some(&want) {
                    return Err(not_contiguous(i, ctx, "copy()"));
                }
                want = want.saturating_mul(n.max(1));
            }
        }
    }
    let stream = match d.get_item(pyo3::intern!(py, "stream"))? {
        Some(s) if !s.is_none() => Some(
            s.extract::<u64>()
                .map_err(|_| bad("stream is not a CUstream handle or None"))?,
        ),
        _ => None,
    };
    let stream = placement::cai_stream(stream).map_err(|why| {
        PyValueError::new_err(format!(
            "argument `{}` of `{}` has an invalid __cuda_array_interface__: {why}",
            ctx.name(i),
            ctx.func
        ))
    })?;
    Ok(Cai {
        elem_key: pack_str(&typestr),
        shape,
        ptr,
        readonly,
        stream,
    })
}

/// The miss-path view of a device array, or `None` when `obj` is not one.
pub fn inspect(obj: &Bound<'_, PyAny>, i: usize, ctx: &ArgCtx<'_>) -> PyResult<Option<DevArg>> {
    let py = obj.py();
    let unsupported = |what: String| {
        PyTypeError::new_err(format!(
            "argument `{}` of `{}` has dtype {what}, which parpy does not support",
            ctx.name(i),
            ctx.func
        ))
    };
    if is_torch(obj)? {
        let dev: i64 = obj.call_method0("get_device")?.extract()?;
        if dev < 0 {
            // in host memory: staged like NumPy (`torch_host`)
            return Ok(None);
        }
        reject_neg(obj, i, ctx)?;
        let dtype: String = obj.getattr("dtype")?.str()?.extract()?;
        let elem = torch_elem(&dtype).ok_or_else(|| unsupported(dtype.clone()))?;
        let shape: Vec<i64> = obj.getattr("shape")?.extract()?;
        let ptr: u64 = obj.call_method0("data_ptr")?.extract()?;
        return Ok(Some(DevArg {
            ty: ArgType::Array { elem, shape },
            kind: DevKind::Torch,
            device: Some(dev),
            ptr,
        }));
    }
    let Ok(cai) = obj.getattr(pyo3::intern!(py, "__cuda_array_interface__")) else {
        let Some(d) = dlpack(obj, i, ctx)? else {
            return Ok(None);
        };
        let (code, bits, lanes) = (d.dtype & 0xff, (d.dtype >> 8) & 0xff, d.dtype >> 16);
        let kind = match code {
            0 => b'i',
            1 => b'u',
            2 => b'f',
            6 => b'b',
            _ => 0,
        };
        let elem = (lanes == 1)
            .then(|| elem_of(kind, (bits / 8) as usize))
            .flatten()
            .ok_or_else(|| {
                unsupported(format!("DLPack (code {code}, {bits} bits, {lanes} lanes)"))
            })?;
        return Ok(Some(DevArg {
            ty: ArgType::Array {
                elem,
                shape: d.shape,
            },
            kind: DevKind::DlPack,
            device: Some(d.device),
            ptr: d.ptr,
        }));
    };
    let c = parse_cai(&cai, i, ctx)?;
    let typestr: String = cai.get_item("typestr")?.extract()?;
    let elem = typestr_elem(&typestr).ok_or_else(|| unsupported(typestr.clone()))?;
    Ok(Some(DevArg {
        ty: ArgType::Array {
            elem,
            shape: c.shape,
        },
        kind: DevKind::Cai,
        device: None,
        ptr: c.ptr,
    }))
}

/// torch's current raw stream on `device` (`torch._C._cuda_getCurrentRawStream`).
pub fn torch_stream(py: Python<'_>, device: i64) -> PyResult<u64> {
    static GET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = GET.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let torch = sys_modules(py)?
            .get_item("torch")?
            .ok_or_else(|| PyRuntimeError::new_err("torch is not imported"))?;
        Ok(torch
            .getattr("_C")?
            .getattr("_cuda_getCurrentRawStream")?
            .unbind())
    })?;
    f.bind(py).call1((device,))?.extract()
}

/// CuPy's current stream on `device` (`cupy.cuda.get_current_stream`);
/// its null stream (pointer 0) is the legacy default stream.
pub fn cupy_stream(py: Python<'_>, device: i64) -> PyResult<u64> {
    static GET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = GET.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let cupy = sys_modules(py)?
            .get_item("cupy")?
            .ok_or_else(|| PyRuntimeError::new_err("cupy is not imported"))?;
        Ok(cupy
            .getattr("cuda")?
            .getattr("get_current_stream")?
            .unbind())
    })?;
    let f = f.bind(py);
    // (an older CuPy takes no device: its current device's stream)
    let s = match f.call1((device,)) {
        Err(e) if e.is_instance_of::<PyTypeError>(py) => f.call0()?,
        r => r?,
    };
    let ptr: u64 = s.getattr(pyo3::intern!(py, "ptr"))?.extract()?;
    Ok(if ptr == 0 {
        placement::STREAM_LEGACY
    } else {
        ptr
    })
}

/// `DLDevice` + `DLDataType` + the fields parpy reads of a `DLTensor`
/// (DLPack's stable C ABI).
#[repr(C)]
struct DlTensor {
    data: *mut std::ffi::c_void,
    device_type: i32,
    device_id: i32,
    ndim: i32,
    dtype_code: u8,
    dtype_bits: u8,
    dtype_lanes: u16,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

const DL_CUDA: i32 = 2;
const DL_CUDA_MANAGED: i32 = 13;

/// A device array read through `__dlpack__()`.
struct DlArg {
    ptr: u64,
    device: i64,
    shape: Vec<i64>,
    /// code | bits << 8 | lanes << 16
    dtype: u32,
}

/// Reads an object's `__dlpack__()` capsule (the capsule keeps its name,
/// so its destructor calls the producer's deleter when it is dropped; the
/// argument itself keeps the memory alive during the call).
/// NumPy arrays (which have `__dlpack__` since NumPy 1.22, on the CPU) and
/// `parpy.buffer`s in host memory are not device arrays: `None`, so the
/// caller stages them.
fn dlpack(obj: &Bound<'_, PyAny>, i: usize, ctx: &ArgCtx<'_>) -> PyResult<Option<DlArg>> {
    if obj.cast::<numpy::PyUntypedArray>().is_ok() {
        return Ok(None);
    }
    let py = obj.py();
    let Ok(f) = obj.getattr(pyo3::intern!(py, "__dlpack__")) else {
        return Ok(None);
    };
    // (a `parpy.buffer` in host memory exports NumPy's DLPack: the caller
    // takes its `__parpy_host_array__`)
    if obj.hasattr(pyo3::intern!(py, "__parpy_host_array__"))? {
        return Ok(None);
    }
    let cap = f.call0()?;
    let cap = cap.cast::<pyo3::types::PyCapsule>().map_err(|_| {
        PyTypeError::new_err(format!(
            "argument `{}` of `{}`: __dlpack__() did not return a capsule",
            ctx.name(i),
            ctx.func
        ))
    })?;
    use pyo3::types::PyCapsuleMethods;
    let p = cap.pointer_checked(Some(c"dltensor"))?;
    // SAFETY: a "dltensor" capsule holds a DLManagedTensor, whose first
    // member is the DLTensor; it lives as long as the capsule.
    let t = unsafe { &*(p.as_ptr() as *const DlTensor) };
    let n = ctx.name(i);
    if t.device_type != DL_CUDA && t.device_type != DL_CUDA_MANAGED {
        return Err(PyValueError::new_err(format!(
            "argument `{n}` of `{}` is a DLPack array on a non-CUDA device (type {}); the Cuda \
             backend takes CUDA arrays or NumPy arrays",
            ctx.func, t.device_type
        )));
    }
    let nd = t.ndim.max(0) as usize;
    // SAFETY: `shape` has `ndim` entries; `strides` too when not null.
    let shape: Vec<i64> = (0..nd).map(|k| unsafe { *t.shape.add(k) }).collect();
    if !t.strides.is_null() {
        let mut want = 1i64;
        for k in (0..nd).rev() {
            // SAFETY: as above.
            let st = unsafe { *t.strides.add(k) };
            if shape[k] > 1 && st != want {
                return Err(not_contiguous(i, ctx, "contiguous()"));
            }
            want = want.saturating_mul(shape[k].max(1));
        }
    }
    Ok(Some(DlArg {
        ptr: (t.data as usize as u64).wrapping_add(t.byte_offset),
        device: t.device_id as i64,
        shape,
        dtype: t.dtype_code as u32 | (t.dtype_bits as u32) << 8 | (t.dtype_lanes as u32) << 16,
    }))
}
