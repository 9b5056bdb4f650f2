//! Reading call arguments, in two ways:
//! - [`observe`] (every call): the specialization key words (dtype, shape,
//!   scalar bits) and the data pointer or scalar slot, without allocating;
//! - [`inspect`] (a cache miss, once per argument): an [`ArgRecord`] with
//!   the core's `ArgType` and, for a device array, what the Cuda backend
//!   needs ([`device::DevArg`]).
//!
//! NumPy arrays and scalars are read here; device arrays (torch, CuPy,
//! DLPack) in [`device`].

pub mod device;
pub mod dicts;

use std::ffi::c_void;

use numpy::npyffi::{_PyArray_GET_ITEM_DATA, _PyDataType_GET_ITEM_DATA};
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use parpy_core::types::f16_value;
use parpy_core::{ArgType, ElemTy, ScalarValue};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyFloat, PyInt, PyType};

/// The most parameters a parpy function may take (bit masks are u64).
pub const MAX_ARGS: usize = 64;

const NPY_ARRAY_C_CONTIGUOUS: i32 = 0x0001;
const NPY_ARRAY_ALIGNED: i32 = 0x0100;
pub const NPY_ARRAY_WRITEABLE: i32 = 0x0400;

const TAG_ARRAY: u64 = 1;
const TAG_BOOL: u64 = 2;
const TAG_INT: u64 = 3;
const TAG_FLOAT: u64 = 4;
const TAG_NPSCALAR: u64 = 5;
/// A Python int of 2**63 .. 2**64 - 1, specialized (its bits follow).
const TAG_WIDE_INT: u64 = 10;
/// A torch tensor in host memory (tags 6-8 are device arrays, `device.rs`).
const TAG_TORCH_HOST: u64 = 9;

/// A specialization key built without allocating for small calls.
pub struct KeyBuf {
    len: usize,
    /// The first `min(len, 48)` words are initialized (not zeroed when
    /// made: every cached call makes one).
    inline: [std::mem::MaybeUninit<u64>; 48],
    heap: Vec<u64>,
}

impl KeyBuf {
    #[inline]
    pub fn new() -> KeyBuf {
        KeyBuf {
            len: 0,
            inline: [std::mem::MaybeUninit::uninit(); 48],
            heap: Vec::new(),
        }
    }

    #[inline]
    pub fn push(&mut self, v: u64) {
        if self.len < self.inline.len() {
            self.inline[self.len] = std::mem::MaybeUninit::new(v);
        } else {
            if self.heap.is_empty() {
                let words = init_words(&self.inline, self.len);
                self.heap.extend_from_slice(words);
            }
            self.heap.push(v);
        }
        self.len += 1;
    }

    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
        self.heap.clear();
    }

    /// The initialized inline words.
    #[inline]
    fn initialized(&self) -> &[u64] {
        init_words(&self.inline, self.len)
    }

    #[inline]
    pub fn as_slice(&self) -> &[u64] {
        if self.len <= self.inline.len() {
            self.initialized()
        } else {
            &self.heap
        }
    }
}

/// The first `len` words of a [`KeyBuf`]'s inline store (all of them
/// when `len` is larger).
#[inline]
fn init_words(inline: &[std::mem::MaybeUninit<u64>; 48], len: usize) -> &[u64] {
    let n = len.min(inline.len());
    // SAFETY: `KeyBuf::push` wrote the first `n` words; MaybeUninit<u64>
    // has u64's layout.
    unsafe { std::slice::from_raw_parts(inline.as_ptr().cast::<u64>(), n) }
}

/// `obj` as a NumPy array (an `ndarray` or a subclass), checked against
/// the array type fetched once (rust-numpy's check asks NumPy's API table
/// for it on every call).
#[inline]
pub fn as_ndarray<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, PyUntypedArray>> {
    static ARRAY_TYPE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let at = *ARRAY_TYPE.get_or_init(|| {
        <PyUntypedArray as pyo3::type_object::PyTypeInfo>::type_object_raw(obj.py()) as usize
    }) as *mut pyo3::ffi::PyTypeObject;
    // SAFETY: `obj` is a live object (its type is valid while we hold it);
    // `at` is NumPy's array type, alive as long as NumPy is loaded (for
    // good once imported).
    let is = unsafe {
        let t = pyo3::ffi::Py_TYPE(obj.as_ptr());
        t == at || pyo3::ffi::PyType_IsSubtype(t, at) != 0
    };
    // SAFETY: checked just above.
    is.then(|| unsafe { obj.cast_unchecked::<PyUntypedArray>() })
}

/// A NumPy masked array (`numpy.ma`) is refused: compiled code reads its
/// data, the masked elements too, where NumPy's operations skip them.
/// (Only an array of a subclass of `ndarray` is looked at.)
fn reject_masked(a: &Bound<'_, PyUntypedArray>, i: usize, ctx: &ArgCtx<'_>) -> PyResult<()> {
    let py = a.py();
    let exact = <PyUntypedArray as pyo3::type_object::PyTypeInfo>::type_object_raw(py);
    // SAFETY: `a` is a live object; its type is valid while we hold it.
    if unsafe { pyo3::ffi::Py_TYPE(a.as_ptr()) } == exact {
        return Ok(());
    }
    static MASKED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    if a.is_instance(MASKED.import(py, "numpy.ma", "MaskedArray")?)? {
        let n = ctx.name(i);
        return Err(PyTypeError::new_err(format!(
            "argument `{n}` of `{}` is a masked array (numpy.ma), whose mask compiled code \
             would not see; pass {n}.filled(value), or np.asarray({n}) for all its data",
            ctx.func
        )));
    }
    Ok(())
}

/// Who an argument belongs to, for error messages.
pub struct ArgCtx<'a> {
    pub func: &'a str,
    pub params: &'a [String],
    /// The parameters whose 0-d array is passed as an array (bit i:
    /// parameter i; `FunctionDef::in_place_params`): elsewhere a 0-d array
    /// is read as a number.
    pub in_place: u64,
}

impl ArgCtx<'_> {
    /// Whether a 0-d array at parameter `i` is passed as an array.
    #[inline]
    pub fn zero_d_array(&self, i: usize) -> bool {
        i < 64 && self.in_place >> i & 1 != 0
    }

    pub fn name(&self, i: usize) -> String {
        self.params
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("#{i}"))
    }

    /// The `TypeError` for a call with `n` positional arguments.
    pub fn arity_error(&self, n: usize) -> PyErr {
        PyTypeError::new_err(format!(
            "{}() takes {} positional argument{} ({}) but {n} {} given",
            self.func,
            self.params.len(),
            if self.params.len() == 1 { "" } else { "s" },
            self.params.join(", "),
            if n == 1 { "was" } else { "were" }
        ))
    }

    /// The Python int `obj` (argument `i`) as an `i64`, and whether it is
    /// one of 2**63 .. 2**64 - 1 (`wide`: its bits), which only a call
    /// specialized on its value takes (sema reads it as its literal; at
    /// run time parpy's Python ints are int64s).
    fn int_arg(&self, obj: &Bound<'_, PyAny>, i: usize, specialize: bool) -> PyResult<(i64, bool)> {
        if let Ok(v) = obj.extract::<i64>() {
            return Ok((v, false));
        }
        let (n, f) = (self.name(i), self.func);
        match obj.extract::<u64>() {
            Ok(u) if specialize => Ok((u as i64, true)),
            Ok(u) => Err(PyOverflowError::new_err(format!(
                "argument `{n}` of `{f}` is {u}, past int64: parpy passes a Python int that it \
                 does not specialize on (specialize_scalars = False, or after 4 other values) \
                 as an int64; pass np.uint64({n}) for a uint64"
            ))),
            Err(_) => Err(PyOverflowError::new_err(format!(
                "argument `{n}` of `{f}` does not fit in a 64-bit integer"
            ))),
        }
    }
}

/// Why the entry takes an int scalar argument as a narrower int than the
/// argument's own type (see [`NarrowInt`]).
#[derive(Clone, Debug)]
pub enum Narrowing {
    /// The parameter's annotation (its text: `I32`), which sema converts to.
    Annotation(String),
    /// `force_int_size` (a Python int, parpy's int64, as an int32).
    ForceIntSize,
    /// `compile_string`'s code, whose parameter has that type.
    Code,
}

/// An int scalar argument (`arg`, of type `from`: a Python int is an
/// int64, or a uint64 of 2**63 and up) that the entry takes as `to`, whose
/// range does not hold every `from` (`jit::Compiled::narrow_ints`): its
/// value is checked at each call, since one the entry cannot hold would
/// wrap. (A value known when compiling is refused by sema.)
#[derive(Clone, Debug)]
pub struct NarrowInt {
    pub arg: usize,
    pub from: ElemTy,
    pub to: ElemTy,
    /// A Python int (a weak scalar), not a NumPy one.
    pub python: bool,
    pub why: Narrowing,
}

impl NarrowInt {
    /// The check of argument `arg` of type `from` taken as `to`, when
    /// `to` cannot hold every value of `from`.
    pub fn new(arg: usize, from: ElemTy, to: ElemTy, python: bool, why: Narrowing) -> Option<Self> {
        let (flo, fhi) = from.int_range()?;
        let (tlo, thi) = to.int_range()?;
        (flo < tlo || fhi > thi).then_some(NarrowInt {
            arg,
            from,
            to,
            python,
            why,
        })
    }

    /// The argument's value from its 8-byte slot ([`slot_bits`]: a
    /// uint64's bits, other ints sign- or zero-extended to int64).
    #[inline]
    fn value(&self, bits: u64) -> i128 {
        match self.from {
            ElemTy::U64 => bits as i128,
            _ => bits as i64 as i128,
        }
    }

    /// The `OverflowError` of an argument of `func` whose value (`bits`,
    /// its slot) the entry's parameter type cannot hold, as NumPy's
    /// `np.int32(2**40)` raises; `name` gives the argument's name, asked
    /// only then (a cached call makes no string).
    #[inline]
    pub fn check(&self, bits: u64, name: impl FnOnce() -> String, func: &str) -> PyResult<()> {
        let v = self.value(bits);
        match self.to.int_range() {
            Some((lo, hi)) if !(lo..=hi).contains(&v) => Err(self.error(v, &name(), func)),
            _ => Ok(()),
        }
    }

    #[cold]
    fn error(&self, v: i128, name: &str, func: &str) -> PyErr {
        let t = self.to.numpy_name();
        let what = match self.python {
            true => "Python integer".to_string(),
            false => format!("NumPy {} value", self.from.numpy_name()),
        };
        let (why, fix) = match &self.why {
            Narrowing::Annotation(a) => (
                format!("its annotation `{a}`"),
                format!("pass a value that {t} holds, or annotate `{name}` with a wider type"),
            ),
            Narrowing::ForceIntSize => (
                "`force_int_size`".to_string(),
                format!(
                    "pass a NumPy integer that holds it (`np.int64({name})`), or leave \
                     `force_int_size` unset"
                ),
            ),
            Narrowing::Code => (
                "the type of the code's parameter".to_string(),
                format!("pass a value that {t} holds, or print the code for a wider type"),
            ),
        };
        let a = if t.starts_with('i') { "an" } else { "a" };
        PyOverflowError::new_err(format!(
            "{what} {v} out of bounds for {t}: the argument `{name}` of `{func}` is passed as \
             {a} {t} ({why}), which would wrap it; {fix}"
        ))
    }
}

fn np_generic(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    static GENERIC: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    GENERIC.import(py, "numpy", "generic")
}

pub fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Observes argument `i` for the fast path: pushes its key words, stores the
/// array data pointer or the scalar's 8-byte slot in `val`, notes a device
/// array in `devs`, and returns (is_array, writeable, element count).
///
/// The key holds each device array's device; a call without device arrays
/// runs where `opts.device` says (device 0 when unset), which the options'
/// fingerprint at the key's start holds.
#[inline]
pub fn observe(
    obj: &Bound<'_, PyAny>,
    i: usize,
    specialize: bool,
    key: &mut KeyBuf,
    val: &mut u64,
    devs: &mut Vec<device::DevSeen>,
    ctx: &ArgCtx<'_>,
) -> PyResult<(bool, bool, usize)> {
    if let Some(a) = as_ndarray(obj) {
        reject_masked(a, i, ctx)?;
        // SAFETY: `a` is a NumPy array; its fields and descriptor are valid
        // while we hold the reference and the GIL.
        let (flags, nd, dims, data, type_num, kind, byteorder) = unsafe {
            let f = &*_PyArray_GET_ITEM_DATA(a.as_array_ptr());
            let d = &*_PyDataType_GET_ITEM_DATA(f.descr);
            (
                f.flags,
                f.nd,
                f.dimensions,
                f.data,
                d.type_num,
                d.kind as u8,
                d.byteorder as u8,
            )
        };
        if flags & NPY_ARRAY_C_CONTIGUOUS == 0 || flags & NPY_ARRAY_ALIGNED == 0 {
            let n = ctx.name(i);
            // (np.ascontiguousarray keeps a contiguous array that is not
            // aligned as it is; a copy is aligned)
            return Err(PyValueError::new_err(layout_error(
                &n,
                ctx.func,
                flags & NPY_ARRAY_C_CONTIGUOUS != 0,
            )));
        }
        let nd = nd.max(0) as usize;
        if nd == 0 && !ctx.zero_d_array(i) {
            let elem = dtype_elem(a.dtype().as_any(), i, ctx)?;
            // SAFETY: a 0-d array holds one element of its dtype at `data`.
            let v = unsafe { zero_d_value(elem, data as *const u8) };
            push_scalar_key(key, elem, v, specialize, val);
            return Ok((false, false, 0));
        }
        key.push(
            TAG_ARRAY
                | ((type_num as u32 as u64) << 8)
                | ((kind as u64) << 32)
                | ((byteorder as u64) << 40)
                | ((nd as u64) << 48),
        );
        let mut count: usize = 1;
        for k in 0..nd {
            // SAFETY: `dimensions` has `nd` entries.
            let d = unsafe { *dims.add(k) };
            key.push(d as u64);
            count = count.saturating_mul(d.max(0) as usize);
        }
        *val = data as usize as u64;
        return Ok((true, flags & NPY_ARRAY_WRITEABLE != 0, count));
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        let v = b.is_true();
        key.push(TAG_BOOL);
        if specialize {
            key.push(v as u64);
        }
        *val = v as u64;
        return Ok((false, false, 0));
    }
    if obj.is_instance_of::<PyInt>() {
        let (v, wide) = ctx.int_arg(obj, i, specialize)?;
        key.push(if wide { TAG_WIDE_INT } else { TAG_INT });
        if specialize {
            key.push(v as u64);
        }
        *val = v as u64;
        return Ok((false, false, 0));
    }
    // np.float64 is a subclass of float but a strong NumPy scalar (below)
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return Ok(push_python_float(key, f.value(), specialize, val));
    }
    let py = obj.py();
    if obj.is_instance(np_generic(py)?)? {
        let (elem, value) = numpy_scalar(obj, i, ctx)?;
        push_scalar_key(key, elem, value, specialize, val);
        return Ok((false, false, 0));
    }
    // a subclass of float that is not NumPy's: a Python float (as a
    // subclass of int is a Python int)
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(push_python_float(key, f.value(), specialize, val));
    }
    if let Some(t) = device::torch_host(obj, i, ctx)? {
        if t.shape.is_empty() && !ctx.zero_d_array(i) {
            // SAFETY: a 0-d tensor in host memory holds one element at `ptr`.
            let v = unsafe { zero_d_value(t.elem, t.ptr as usize as *const u8) };
            push_scalar_key(key, t.elem, v, specialize, val);
            return Ok((false, false, 0));
        }
        key.push(TAG_TORCH_HOST | ((t.elem as u64) << 8) | ((t.shape.len() as u64) << 48));
        let mut count = 1usize;
        for &d in &t.shape {
            key.push(d as u64);
            count = count.saturating_mul(d.max(0) as usize);
        }
        *val = t.ptr;
        // (not writeable here: a call that writes it asks whether it
        // requires grad, `device::torch_write`)
        return Ok((true, false, count));
    }
    if let Some(r) = device::observe(obj, i, key, val, devs, ctx)? {
        return Ok(r);
    }
    if let Some(a) = host_buffer(obj)? {
        return observe(&a, i, specialize, key, val, devs, ctx);
    }
    Err(unsupported_object(obj, i, ctx))
}

/// The key words and slot of a Python float `v` ([`observe`]'s answer).
#[inline]
fn push_python_float(
    key: &mut KeyBuf,
    v: f64,
    specialize: bool,
    val: &mut u64,
) -> (bool, bool, usize) {
    key.push(TAG_FLOAT);
    if specialize {
        key.push(v.to_bits());
    }
    *val = v.to_bits();
    (false, false, 0)
}

/// The key words and slot of a typed scalar (a NumPy scalar or a 0-d array).
#[inline]
pub fn push_scalar_key(
    key: &mut KeyBuf,
    elem: ElemTy,
    value: ScalarValue,
    specialize: bool,
    val: &mut u64,
) {
    key.push(TAG_NPSCALAR | ((elem as u64) << 8));
    let bits = slot_bits(value);
    if specialize {
        key.push(bits);
    }
    *val = bits;
}

/// A NumPy view of a host-memory array that is not a NumPy array (a torch
/// tensor on the CPU, a `parpy.buffer`), sharing its memory; `None` for
/// other objects. For checks written against NumPy arrays (compile_string).
pub fn host_numpy_view<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = obj.py();
    if device::is_torch(obj)? {
        let dev: i64 = obj
            .call_method0(pyo3::intern!(py, "get_device"))?
            .extract()?;
        if dev < 0 {
            let t = obj.call_method0(pyo3::intern!(py, "detach"))?;
            return Ok(Some(t.call_method0(pyo3::intern!(py, "numpy"))?));
        }
        return Ok(None);
    }
    host_buffer(obj)
}

/// The NumPy array behind a `parpy.buffer` in host memory (its
/// `__parpy_host_array__`), or `None` for other objects.
fn host_buffer<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    match obj.getattr(pyo3::intern!(obj.py(), "__parpy_host_array__")) {
        Ok(a) if a.cast::<PyUntypedArray>().is_ok() => Ok(Some(a)),
        _ => Ok(None),
    }
}

pub fn unsupported_object(obj: &Bound<'_, PyAny>, i: usize, ctx: &ArgCtx<'_>) -> PyErr {
    crate::errors::call_type_error(format!(
        "argument `{}` of `{}` has type {}, which parpy cannot pass to compiled code \
         (expected a NumPy array, a torch tensor, a CUDA array (CuPy, \
         __cuda_array_interface__, DLPack), or a bool, int or float)",
        ctx.name(i),
        ctx.func,
        type_name(obj)
    ))
}

/// The 8-byte slot of a scalar: `int64_t` for ints and bools, `double` for floats.
pub fn slot_bits(v: ScalarValue) -> u64 {
    match v {
        ScalarValue::Bool(b) => b as u64,
        ScalarValue::Int(i) => i as u64,
        ScalarValue::Float(f) => f.to_bits(),
    }
}

/// The memory of one array argument, for [`overlapping`].
#[derive(Clone, Copy)]
pub struct Extent {
    pub arg: usize,
    pub ptr: u64,
    pub bytes: u64,
    /// The function writes it.
    pub written: bool,
}

/// The first pair of arrays that share memory where one of them is
/// written, the written one second: `(read or written, written)`. `at(k)`
/// is the `k`-th of `n` arrays (no allocation: this runs on every call).
pub fn overlapping(n: usize, at: impl Fn(usize) -> Extent) -> Option<(usize, usize)> {
    for i in 0..n {
        let a = at(i);
        if a.bytes == 0 {
            continue;
        }
        for j in i + 1..n {
            let b = at(j);
            let apart =
                a.ptr.saturating_add(a.bytes) <= b.ptr || b.ptr.saturating_add(b.bytes) <= a.ptr;
            if !apart && b.bytes > 0 && (a.written || b.written) {
                return Some(if b.written {
                    (a.arg, b.arg)
                } else {
                    (b.arg, a.arg)
                });
            }
        }
    }
    None
}

/// The `ValueError` for arguments `a` and `b` (written) of `func` that
/// overlap in memory.
/// The error of an array argument that is not C-contiguous (or, when
/// `contiguous`, not aligned): what to pass instead. The fix is a copy, so
/// it says how the results of a function that writes the argument get back.
pub fn layout_error(n: &str, func: &str, contiguous: bool) -> String {
    let (why, what, copy) = match contiguous {
        false => (
            "is not C-contiguous",
            "a C-contiguous array",
            format!("np.ascontiguousarray({n})"),
        ),
        true => ("is not aligned", "an aligned array", format!("{n}.copy()")),
    };
    format!(
        "argument `{n}` of `{func}` {why}; pass {what}: {copy} is one, but a copy, so where \
         `{func}` writes `{n}` its results go to the copy: pass `t = {copy}`, then copy them \
         back with `{n}[...] = t`"
    )
}

pub fn overlap_error(func: &str, a: &str, b: &str) -> PyErr {
    PyValueError::new_err(format!(
        "arguments `{a}` and `{b}` of `{func}` overlap in memory (views of one buffer), and \
         `{func}` writes `{b}`: Python would see each write through both names, while the \
         compiled code assumes an array it writes overlaps no other argument (the same array \
         passed twice is compiled as one array; partly overlapping views are not). Pass a copy \
         (`{a}.copy()`)"
    ))
}

/// Maps a NumPy dtype kind and item size to our element type.
pub fn elem_of(kind: u8, itemsize: usize) -> Option<ElemTy> {
    Some(match (kind, itemsize) {
        (b'b', 1) => ElemTy::Bool,
        (b'i', 1) => ElemTy::I8,
        (b'i', 2) => ElemTy::I16,
        (b'i', 4) => ElemTy::I32,
        (b'i', 8) => ElemTy::I64,
        (b'u', 1) => ElemTy::U8,
        (b'u', 2) => ElemTy::U16,
        (b'u', 4) => ElemTy::U32,
        (b'u', 8) => ElemTy::U64,
        (b'f', 2) => ElemTy::F16,
        (b'f', 4) => ElemTy::F32,
        (b'f', 8) => ElemTy::F64,
        _ => return None,
    })
}

fn supported_list() -> String {
    ElemTy::ALL
        .iter()
        .map(|t| t.numpy_name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The element type of a dtype object (`arr.dtype`), or a TypeError naming
/// argument `i`.
pub fn dtype_elem(dtype: &Bound<'_, PyAny>, i: usize, ctx: &ArgCtx<'_>) -> PyResult<ElemTy> {
    let py = dtype.py();
    // called on every call with a NumPy scalar (and by compile_string's
    // wrapper): a dtype object's fields are read directly, nothing allocates
    // on success
    let (kind, itemsize, byteorder) = match dtype.cast::<numpy::PyArrayDescr>() {
        Ok(d) => {
            use numpy::PyArrayDescrMethods;
            (d.kind() as char, d.itemsize(), d.byteorder() as char)
        }
        Err(_) => (
            dtype.getattr(pyo3::intern!(py, "kind"))?.extract()?,
            dtype.getattr(pyo3::intern!(py, "itemsize"))?.extract()?,
            dtype.getattr(pyo3::intern!(py, "byteorder"))?.extract()?,
        ),
    };
    let err = |extra: &str| {
        let name = dtype
            .str()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        PyTypeError::new_err(format!(
            "argument `{}` of `{}` has dtype {name}, which parpy does not support{extra} \
             (supported: {})",
            ctx.name(i),
            ctx.func,
            supported_list()
        ))
    };
    let native = if cfg!(target_endian = "little") {
        '<'
    } else {
        '>'
    };
    if byteorder != '=' && byteorder != '|' && byteorder != native {
        return Err(err(" (non-native byte order)"));
    }
    let kind = if kind.is_ascii() { kind as u8 } else { 0 };
    elem_of(kind, itemsize).ok_or_else(|| err(""))
}

/// A NumPy scalar's element type and value, read through NumPy's C API
/// (`PyArray_DescrFromScalar`, `PyArray_ScalarAsCtype`): no Python-level
/// calls, since this runs on every cached call that passes one.
fn numpy_scalar(
    obj: &Bound<'_, PyAny>,
    i: usize,
    ctx: &ArgCtx<'_>,
) -> PyResult<(ElemTy, ScalarValue)> {
    use numpy::npyffi::PY_ARRAY_API;
    let py = obj.py();
    // SAFETY: `obj` is an instance of np.generic; the call returns a new
    // reference to its dtype, or null with an exception set.
    let descr = unsafe {
        let d = PY_ARRAY_API.PyArray_DescrFromScalar(py, obj.as_ptr());
        Bound::from_owned_ptr_or_err(py, d as *mut pyo3::ffi::PyObject)?
    };
    let elem = dtype_elem(&descr, i, ctx)?;
    // every supported type fits in 8 bytes (checked by dtype_elem)
    let mut buf = [0u8; 16];
    // SAFETY: copies the scalar's value (elem.size() <= 8 bytes) into `buf`.
    unsafe {
        PY_ARRAY_API.PyArray_ScalarAsCtype(py, obj.as_ptr(), buf.as_mut_ptr() as *mut c_void)
    };
    Ok((elem, decode_scalar(elem, &buf)))
}

/// The value of a 0-d array (NumPy or a torch tensor on the CPU): the
/// element at `data`, passed as a scalar of its type (ParPy passes
/// `torch.tensor(0.5)` as a scalar).
///
/// # Safety
/// `data` points to one readable element of type `elem`.
pub unsafe fn zero_d_value(elem: ElemTy, data: *const u8) -> ScalarValue {
    let mut buf = [0u8; 16];
    // SAFETY: the caller guarantees `elem.size()` (<= 8) readable bytes.
    unsafe { std::ptr::copy_nonoverlapping(data, buf.as_mut_ptr(), elem.size()) };
    decode_scalar(elem, &buf)
}

/// A scalar of type `elem` from its native-endian bytes.
fn decode_scalar(elem: ElemTy, buf: &[u8; 16]) -> ScalarValue {
    let b8 = |n: usize| {
        let mut a = [0u8; 8];
        a[..n].copy_from_slice(&buf[..n]);
        a
    };
    match elem {
        ElemTy::Bool => ScalarValue::Bool(buf[0] != 0),
        ElemTy::I8 => ScalarValue::Int(buf[0] as i8 as i64),
        ElemTy::I16 => ScalarValue::Int(i16::from_ne_bytes([buf[0], buf[1]]) as i64),
        ElemTy::I32 => {
            ScalarValue::Int(i32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]) as i64)
        }
        ElemTy::I64 => ScalarValue::Int(i64::from_ne_bytes(b8(8))),
        ElemTy::U8 => ScalarValue::Int(buf[0] as i64),
        ElemTy::U16 => ScalarValue::Int(u16::from_ne_bytes([buf[0], buf[1]]) as i64),
        ElemTy::U32 => {
            ScalarValue::Int(u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]) as i64)
        }
        // (its bits: a value of 2**63 and up is a negative i64 that the
        // code converts to uint64, as it converts every int literal)
        ElemTy::U64 => ScalarValue::Int(u64::from_ne_bytes(b8(8)) as i64),
        ElemTy::F32 => {
            ScalarValue::Float(f32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]) as f64)
        }
        ElemTy::F64 => ScalarValue::Float(f64::from_ne_bytes(b8(8))),
        ElemTy::F16 => ScalarValue::Float(f16_value(u16::from_ne_bytes([buf[0], buf[1]]))),
    }
}

/// What the miss path knows about one argument.
pub struct ArgRecord {
    /// The core's view (element type and shape, or scalar type and value
    /// when scalars are specialized).
    pub ty: ArgType,
    /// A device array (torch, `__cuda_array_interface__`, DLPack).
    pub device: Option<device::DevArg>,
}

impl ArgRecord {
    pub fn is_array(&self) -> bool {
        matches!(self.ty, ArgType::Array { .. })
    }
}

/// Inspects argument `i` once on a cache miss.
pub fn inspect(
    obj: &Bound<'_, PyAny>,
    i: usize,
    specialize: bool,
    ctx: &ArgCtx<'_>,
) -> PyResult<ArgRecord> {
    // `weak`: a Python scalar (NumPy's weak promotion), not a NumPy one
    // (a uint64 of 2**63 and up is passed at run time: the compiler's
    // constants are i64, which would fold `k > 5` as a negative number)
    let scalar = |elem: ElemTy, v: ScalarValue, weak: bool| ArgRecord {
        ty: ArgType::Scalar {
            elem,
            value: (specialize
                && !(elem == ElemTy::U64 && matches!(v, ScalarValue::Int(i) if i < 0)))
            .then_some(v),
            weak,
        },
        device: None,
    };
    if let Ok(a) = obj.cast::<PyUntypedArray>() {
        reject_masked(a, i, ctx)?;
        let elem = dtype_elem(a.dtype().as_any(), i, ctx)?;
        if a.ndim() == 0 && !ctx.zero_d_array(i) {
            // SAFETY: a 0-d array holds one element of its dtype; it is
            // strong like a NumPy scalar (NEP 50)
            let data = unsafe { (*_PyArray_GET_ITEM_DATA(a.as_array_ptr())).data };
            let v = unsafe { zero_d_value(elem, data as *const u8) };
            return Ok(scalar(elem, v, false));
        }
        if !a.is_c_contiguous() {
            return Err(PyValueError::new_err(layout_error(
                &ctx.name(i),
                ctx.func,
                false,
            )));
        }
        let shape = a.shape().iter().map(|&d| d as i64).collect();
        return Ok(ArgRecord {
            ty: ArgType::Array { elem, shape },
            device: None,
        });
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(scalar(ElemTy::Bool, ScalarValue::Bool(b.is_true()), true));
    }
    if obj.is_instance_of::<PyInt>() {
        let (v, wide) = ctx.int_arg(obj, i, specialize)?;
        if wide {
            // (its bits as a weak uint64, specialized: sema reads its literal)
            return Ok(ArgRecord {
                ty: ArgType::Scalar {
                    elem: ElemTy::U64,
                    value: Some(ScalarValue::Int(v)),
                    weak: true,
                },
                device: None,
            });
        }
        return Ok(scalar(ElemTy::I64, ScalarValue::Int(v), true));
    }
    // np.float64 is a subclass of float but a strong NumPy scalar
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return Ok(scalar(ElemTy::F64, ScalarValue::Float(f.value()), true));
    }
    if obj.is_instance(np_generic(obj.py())?)? {
        let (elem, v) = numpy_scalar(obj, i, ctx)?;
        return Ok(scalar(elem, v, false));
    }
    // a subclass of float that is not NumPy's: a Python float
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(scalar(ElemTy::F64, ScalarValue::Float(f.value()), true));
    }
    if let Some(t) = device::torch_host(obj, i, ctx)? {
        if t.shape.is_empty() && !ctx.zero_d_array(i) {
            // SAFETY: a 0-d tensor in host memory holds one element at `ptr`.
            let v = unsafe { zero_d_value(t.elem, t.ptr as usize as *const u8) };
            return Ok(scalar(t.elem, v, false));
        }
        return Ok(ArgRecord {
            ty: ArgType::Array {
                elem: t.elem,
                shape: t.shape,
            },
            device: None,
        });
    }
    if let Some(d) = device::inspect(obj, i, ctx)? {
        return Ok(ArgRecord {
            ty: d.ty.clone(),
            device: Some(d),
        });
    }
    if let Some(a) = host_buffer(obj)? {
        return inspect(&a, i, specialize, ctx);
    }
    Err(unsupported_object(obj, i, ctx))
}

/// [`inspect`] for every argument.
pub fn inspect_all<'py>(
    args: impl IntoIterator<Item = Bound<'py, PyAny>>,
    specialize: u64,
    ctx: &ArgCtx<'_>,
) -> PyResult<Vec<ArgRecord>> {
    args.into_iter()
        .enumerate()
        .map(|(i, a)| inspect(&a, i, specialize >> i & 1 != 0, ctx))
        .collect()
}

/// A call's arguments as a miss sees them: one record per leaf (an
/// argument, or an array or scalar inside a dict argument), the leaves'
/// names, and the core's type of each parameter.
pub struct Inspected {
    pub records: Vec<ArgRecord>,
    pub names: Vec<String>,
    pub types: Vec<ArgType>,
}

/// [`inspect`] for a call's arguments, dicts flattened ([`dicts::Flat`]).
/// `specialize`: bit i set, leaf i is specialized on its value.
pub fn inspect_call<'py>(
    args: Vec<Bound<'py, PyAny>>,
    specialize: u64,
    ctx: &ArgCtx<'_>,
) -> PyResult<Inspected> {
    if !dicts::any_dict(&args) {
        let records = inspect_all(args, specialize, ctx)?;
        let types = records.iter().map(|r| r.ty.clone()).collect();
        return Ok(Inspected {
            records,
            names: ctx.params.to_vec(),
            types,
        });
    }
    let flat = dicts::Flat::new(args, ctx)?;
    let leaf_ctx = ArgCtx {
        func: ctx.func,
        params: &flat.names,
        in_place: flat.leaf_mask(ctx.in_place),
    };
    let records = inspect_all(flat.objs.iter().cloned(), specialize, &leaf_ctx)?;
    let types = flat.assemble(records.iter().map(|r| r.ty.clone()).collect());
    Ok(Inspected {
        records,
        names: flat.names,
        types,
    })
}

/// A data pointer or a pointer to a slot, as the entry ABI wants.
#[inline]
pub fn as_arg(is_array: bool, val: &mut u64) -> *mut c_void {
    if is_array {
        *val as usize as *mut c_void
    } else {
        val as *mut u64 as *mut c_void
    }
}
