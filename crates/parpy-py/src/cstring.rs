//! `compile_string`: compile hand-written (or printed and edited) C and call
//! it with checked arguments.
//!
//! The code must carry the header lines that the C backend writes; see
//! `parpy_runtime::header` for the format.

use std::ffi::c_void;

use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use parpy_core::{ElemTy, ScalarValue};
use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyTuple};

use crate::args::{self, ArgCtx};
use crate::errors::{guard, internal_error, CompileErrorPy};
use crate::options::CompileOptions;
use crate::service;
use parpy_core::ArgType;
use parpy_runtime::cuda::driver;
use parpy_runtime::header::{parse_backend, parse_bounds, parse_header, HeaderParam, HeaderTy};
use parpy_runtime::LoadedEntry;

#[pyclass(frozen, module = "parpy", name = "CompiledFunction")]
pub struct CompiledString {
    name: String,
    names: Vec<String>,
    /// The parameters of the function the code was printed from: each
    /// with its header parameters (by position) and, for a dict, the keys
    /// that lead to each (`A['w']` is parameter `A`, key `w`).
    logical: Vec<Logical>,
    params: Vec<HeaderParam>,
    /// The `// parpy-bounds:` lines: when there are some, the entry takes
    /// a bounds record last.
    bounds: Vec<String>,
    entry: LoadedEntry,
    /// Cuda: the CUDA device the entry runs on (arrays are device pointers;
    /// NumPy arguments are copied there and back).
    cuda_device: Option<i64>,
}

/// One parameter of the printed function (see `CompiledString::logical`).
struct Logical {
    name: String,
    /// `(header parameter, keys)`; one with no keys for a plain parameter.
    leaves: Vec<(usize, Vec<String>)>,
}

impl Logical {
    fn is_dict(&self) -> bool {
        self.leaves.iter().any(|(_, keys)| !keys.is_empty())
    }
}

/// The header's parameters grouped by the parameter of the printed
/// function they come from (a dict's entries are consecutive, depth first:
/// `A['w']`, `A['k']` are `A`).
fn logical_params(params: &[HeaderParam]) -> Vec<Logical> {
    let mut out: Vec<Logical> = vec![];
    for (i, p) in params.iter().enumerate() {
        let (base, keys) = parpy_core::signature::split_entry_name(&p.name)
            .map(|(b, k)| (b.to_string(), k))
            .unwrap_or_else(|| (p.name.clone(), vec![]));
        match out.last_mut() {
            Some(l) if !keys.is_empty() && l.is_dict() && l.name == base => {
                l.leaves.push((i, keys))
            }
            _ => out.push(Logical {
                name: base,
                leaves: vec![(i, keys)],
            }),
        }
    }
    out
}

impl CompiledString {
    /// A call that names arguments: Python's binding to the printed
    /// function's parameters (`fn(x, y=y, N=4)`; the code has no defaults:
    /// every parameter needs a value).
    fn bind_named<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        kwargs: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let names: Vec<&str> = self.logical.iter().map(|l| l.name.as_str()).collect();
        let signature = format!("{}({})", self.name, names.join(", "));
        let n = names.len();
        if args.len() > n {
            let ctx = ArgCtx {
                func: &self.name,
                params: &self
                    .logical
                    .iter()
                    .map(|l| l.name.clone())
                    .collect::<Vec<_>>(),
                in_place: 0,
            };
            return Err(ctx.arity_error(args.len()));
        }
        let mut slots: Vec<Option<Bound<'py, PyAny>>> = args.iter().map(Some).collect();
        slots.resize(n, None);
        for (k, v) in kwargs.iter() {
            let k: String = k.extract()?;
            let Some(i) = names.iter().position(|p| *p == k) else {
                return Err(PyTypeError::new_err(format!(
                    "{}() got an unexpected keyword argument `{k}`: {signature}",
                    self.name
                )));
            };
            if slots[i].is_some() {
                return Err(PyTypeError::new_err(format!(
                    "{}() got multiple values for argument `{k}`: {signature}",
                    self.name
                )));
            }
            slots[i] = Some(v);
        }
        let missing: Vec<String> = names
            .iter()
            .zip(&slots)
            .filter(|(_, s)| s.is_none())
            .map(|(p, _)| format!("`{p}`"))
            .collect();
        if !missing.is_empty() {
            return Err(PyTypeError::new_err(format!(
                "{}() missing required argument{} {}: {signature}",
                self.name,
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", ")
            )));
        }
        PyTuple::new(args.py(), slots.into_iter().flatten().collect::<Vec<_>>())
    }

    /// The call's arguments as the header's parameters: a dict argument
    /// (the printed function's, `fn(A, y)`) gives the entries the header
    /// lists (`A['w']`, `A['k']`); the entries one by one (`fn(A['w'],
    /// A['k'], y)`) are taken too.
    fn flatten<'py>(&self, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyTuple>> {
        if !self.logical.iter().any(Logical::is_dict) {
            return Ok(args.clone());
        }
        let n = args.len();
        let whole = n == self.logical.len()
            && self
                .logical
                .iter()
                .zip(args.iter())
                .all(|(l, a)| !l.is_dict() || a.is_instance_of::<PyDict>());
        if !whole {
            if n == self.params.len() {
                return Ok(args.clone());
            }
            let names: Vec<String> = self.logical.iter().map(|l| l.name.clone()).collect();
            let ctx = ArgCtx {
                func: &self.name,
                params: &names,
                in_place: 0,
            };
            return Err(ctx.arity_error(n));
        }
        let mut out = Vec::with_capacity(self.params.len());
        for (l, a) in self.logical.iter().zip(args.iter()) {
            if !l.is_dict() {
                out.push(a);
                continue;
            }
            for (i, keys) in &l.leaves {
                let mut v = a.clone();
                let mut path = l.name.clone();
                for key in keys {
                    let d = v.cast::<PyDict>().map_err(|_| {
                        PyTypeError::new_err(format!(
                            "argument `{path}` of `{}` must be a dict (the code reads `{}`), \
                             got {}",
                            self.name,
                            self.params[*i].name,
                            args::type_name(&v)
                        ))
                    })?;
                    let next = d.get_item(key)?.ok_or_else(|| {
                        PyKeyError::new_err(format!(
                            "argument `{path}` of `{}` has no key '{key}', which the code \
                             reads (parameter `{}`)",
                            self.name, self.params[*i].name
                        ))
                    })?;
                    path = parpy_core::signature::entry_name(&path, key);
                    v = next;
                }
                out.push(v);
            }
        }
        PyTuple::new(args.py(), out)
    }

    fn call_inner(&self, args: &Bound<'_, PyTuple>) -> PyResult<()> {
        let args = &self.flatten(args)?;
        let n = args.len();
        let ctx = ArgCtx {
            func: &self.name,
            params: &self.names,
            in_place: 0,
        };
        if n != self.params.len() {
            return Err(ctx.arity_error(n));
        }
        let mut vals = vec![0u64; n];
        let mut is_arr = vec![false; n];
        let mut extents: Vec<args::Extent> = vec![];
        for (i, (a, p)) in args.iter().zip(&self.params).enumerate() {
            let pname = &p.name;
            match &p.ty {
                HeaderTy::Array {
                    elem,
                    shape,
                    written,
                } => {
                    args::device::check_torch(&a, i, &ctx, *written)?;
                    if self.cuda_device.is_some() && a.cast::<PyUntypedArray>().is_err() {
                        if let Some(d) = args::device::inspect(&a, i, &ctx)? {
                            let ArgType::Array {
                                elem: got,
                                shape: ashape,
                            } = &d.ty
                            else {
                                return Err(internal_error("a device array without a shape"));
                            };
                            if got != elem
                                || ashape.len() != shape.len()
                                || !ashape
                                    .iter()
                                    .zip(shape)
                                    .all(|(&d, s)| s.is_none_or(|s| s == d))
                            {
                                return Err(PyValueError::new_err(format!(
                                    "argument `{pname}` of `{}` is a {} array of shape {}, but \
                                     the code expects a {} array of shape {}",
                                    self.name,
                                    got.numpy_name(),
                                    shape_str(ashape.iter().map(|d| d.to_string())),
                                    elem.numpy_name(),
                                    expected_shape(shape)
                                )));
                            }
                            if let Some(device) = self.cuda_device {
                                let on = match d.device {
                                    Some(dev) => dev,
                                    None => parpy_runtime::cuda::driver::pointer_device(d.ptr)
                                        .map_err(|e| {
                                            PyValueError::new_err(format!(
                                                "argument `{pname}` of `{}`: its \
                                                 __cuda_array_interface__ pointer is not CUDA \
                                                 device memory ({e})",
                                                self.name
                                            ))
                                        })?,
                                };
                                if on != device {
                                    return Err(PyValueError::new_err(format!(
                                        "argument `{pname}` of `{}` is on CUDA device {on}, but \
                                         this compiled code runs on device {device} \
                                         (opts.device when it was compiled); move it with \
                                         .to('cuda:{device}') or compile with opts.device = {on}",
                                        self.name
                                    )));
                                }
                            }
                            vals[i] = d.ptr;
                            is_arr[i] = true;
                            extents.push(args::Extent {
                                arg: i,
                                ptr: d.ptr,
                                bytes: ashape.iter().product::<i64>() as u64 * elem.size() as u64,
                                written: *written,
                            });
                            continue;
                        }
                    }
                    let a = args::host_numpy_view(&a)?.unwrap_or(a);
                    let arr = a.cast::<PyUntypedArray>().map_err(|_| {
                        PyTypeError::new_err(format!(
                            "argument `{pname}` of `{}` must be a NumPy array of {}, got {}",
                            self.name,
                            elem.numpy_name(),
                            args::type_name(&a)
                        ))
                    })?;
                    let got = args::dtype_elem(arr.dtype().as_any(), i, &ctx)?;
                    if got != *elem {
                        return Err(PyTypeError::new_err(format!(
                            "argument `{pname}` of `{}` has dtype {}, but the code expects {}",
                            self.name,
                            got.numpy_name(),
                            elem.numpy_name()
                        )));
                    }
                    let ashape = arr.shape();
                    let ok = ashape.len() == shape.len()
                        && ashape
                            .iter()
                            .zip(shape)
                            .all(|(&d, s)| s.is_none_or(|s| s == d as i64));
                    if !ok {
                        return Err(PyValueError::new_err(format!(
                            "argument `{pname}` of `{}` has shape {}, but the code expects {}",
                            self.name,
                            shape_str(ashape.iter().map(|d| d.to_string())),
                            expected_shape(shape)
                        )));
                    }
                    if !arr.is_c_contiguous() {
                        return Err(PyValueError::new_err(args::layout_error(
                            pname, &self.name, false,
                        )));
                    }
                    // SAFETY: reading the flags and data pointer of a live array.
                    let (flags, data) = unsafe {
                        let f = &*numpy::npyffi::_PyArray_GET_ITEM_DATA(arr.as_array_ptr());
                        (f.flags, f.data)
                    };
                    if *written && flags & args::NPY_ARRAY_WRITEABLE == 0 {
                        return Err(PyValueError::new_err(format!(
                            "argument `{pname}` of `{}` is read-only, but the code writes to it",
                            self.name
                        )));
                    }
                    vals[i] = data as usize as u64;
                    is_arr[i] = true;
                    extents.push(args::Extent {
                        arg: i,
                        ptr: vals[i],
                        bytes: (arr.len() * elem.size()) as u64,
                        written: *written,
                    });
                }
                HeaderTy::Scalar(elem) => {
                    let v = scalar_value(&a, *elem).ok_or_else(|| {
                        PyTypeError::new_err(format!(
                            "argument `{pname}` of `{}` must be a scalar of type {}, got {}",
                            self.name,
                            elem.numpy_name(),
                            args::type_name(&a)
                        ))
                    })?;
                    if let Some(fixed) = p.fixed.filter(|f| !f.same_as(v)) {
                        return Err(PyValueError::new_err(format!(
                            "argument `{pname}` of `{}` is {}, but the code was specialized \
                             for {pname} = {} (see its `// parpy-param` lines) and would run as \
                             if it were; print the code again with this value, or with \
                             opts.specialize_scalars = False so that `{pname}` is read at run time",
                            self.name,
                            v.header_text(),
                            fixed.header_text(),
                        )));
                    }
                    if let ScalarValue::Int(k) = v {
                        let python = a.is_instance_of::<PyInt>();
                        let narrow = args::NarrowInt::new(
                            i,
                            ElemTy::I64,
                            *elem,
                            python,
                            args::Narrowing::Code,
                        );
                        if let Some(n) = narrow {
                            n.check(k as u64, || pname.clone(), &self.name)?;
                        }
                    }
                    vals[i] = args::slot_bits(v);
                }
            }
        }
        // (printed code was compiled for separate arrays, even where the
        // function was called with one array twice)
        if let Some((a, b)) = args::overlapping(extents.len(), |k| extents[k]) {
            return Err(args::overlap_error(
                &self.name,
                &self.names[a],
                &self.names[b],
            ));
        }
        let mut staged: Vec<(u64, u64, usize, bool)> = Vec::new();
        if let Some(device) = self.cuda_device {
            let ctx_dev = crate::cuda::context(device)?;
            ctx_dev
                .bind()
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            for (i, (a, p)) in args.iter().zip(&self.params).enumerate() {
                let HeaderTy::Array { elem, written, .. } = &p.ty else {
                    continue;
                };
                let Ok(arr) = a.cast::<PyUntypedArray>() else {
                    continue;
                };
                let bytes = elem.size() * arr.len();
                let r = (|| {
                    let d = ctx_dev.alloc(bytes, 0)?;
                    staged.push((d, vals[i], bytes, *written));
                    // SAFETY: the NumPy array holds `bytes` bytes and lives
                    // for the call.
                    unsafe { driver::copy_htod(d, vals[i] as usize as *const c_void, bytes, 0)? };
                    Ok::<u64, parpy_runtime::cuda::CudaError>(d)
                })();
                match r {
                    Ok(d) => vals[i] = d,
                    Err(e) => {
                        for &(d, ..) in &staged {
                            driver::free(d, 0);
                        }
                        return Err(PyRuntimeError::new_err(format!("`{}`: {e}", self.name)));
                    }
                }
            }
        }
        // [site + 1, index, values...] of the first failed check (on the
        // GPU: staged like a written array)
        const BYTES: usize = 8 * parpy_core::ir::RECORD_LEN;
        let mut record = [0i64; parpy_core::ir::RECORD_LEN];
        let rec_ptr = record.as_mut_ptr();
        let mut rec_arg = rec_ptr as u64;
        if !self.bounds.is_empty() {
            if let Some(device) = self.cuda_device {
                let ctx_dev = crate::cuda::context(device)?;
                let r = (|| {
                    let d = ctx_dev.alloc(BYTES, 0)?;
                    staged.push((d, rec_arg, BYTES, true));
                    // SAFETY: `record` holds BYTES bytes and outlives the call.
                    unsafe { driver::copy_htod(d, rec_ptr as *const c_void, BYTES, 0)? };
                    Ok::<u64, parpy_runtime::cuda::CudaError>(d)
                })();
                match r {
                    Ok(d) => rec_arg = d,
                    Err(e) => {
                        for &(d, ..) in &staged {
                            driver::free(d, 0);
                        }
                        return Err(PyRuntimeError::new_err(format!("`{}`: {e}", self.name)));
                    }
                }
            }
        }
        let mut argv: Vec<*mut c_void> = vals
            .iter_mut()
            .zip(&is_arr)
            .map(|(v, &a)| args::as_arg(a, v))
            .collect();
        if !self.bounds.is_empty() {
            argv.push(rec_arg as usize as *mut c_void);
        }
        let check = || {
            // SAFETY: `record` is alive; the entry (or the copy back) wrote it.
            let rec = unsafe { std::slice::from_raw_parts(rec_ptr, parpy_core::ir::RECORD_LEN) };
            parpy_runtime::bounds_error(&self.name, &self.bounds, rec)
                .map_or(Ok(()), |f| Err(crate::jit::check_failure(f)))
        };
        let r = self
            .entry
            .call(&mut argv)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()));
        if self.cuda_device.is_none() {
            return r.and_then(|()| check());
        }
        let back = (|| {
            for &(d, host, bytes, written) in &staged {
                if written {
                    // SAFETY: a writeable NumPy array of `bytes` bytes,
                    // synchronised below.
                    unsafe { driver::copy_dtoh(host as usize as *mut c_void, d, bytes, 0)? };
                }
            }
            driver::sync(0)
        })();
        for &(d, ..) in &staged {
            driver::free(d, 0);
        }
        r?;
        back.map_err(|e| PyRuntimeError::new_err(format!("`{}` on the GPU: {e}", self.name)))?;
        check()
    }
}

/// A header's shape, `?` for a dimension it leaves open.
fn expected_shape(shape: &[Option<i64>]) -> String {
    shape_str(
        shape
            .iter()
            .map(|s| s.map(|s| s.to_string()).unwrap_or_else(|| "?".into())),
    )
}

fn shape_str(dims: impl Iterator<Item = String>) -> String {
    let d: Vec<String> = dims.collect();
    if d.len() == 1 {
        format!("({},)", d[0])
    } else {
        format!("({})", d.join(", "))
    }
}

fn scalar_value(a: &Bound<'_, PyAny>, elem: ElemTy) -> Option<ScalarValue> {
    let is_np = a
        .py()
        .import("numpy")
        .and_then(|np| np.getattr("generic"))
        .and_then(|g| a.is_instance(&g))
        .unwrap_or(false);
    let a = if is_np {
        a.call_method0("item").ok()?
    } else {
        a.clone()
    };
    if elem.is_float() {
        if a.is_instance_of::<PyFloat>()
            || (a.is_instance_of::<PyInt>() && !a.is_instance_of::<PyBool>())
        {
            return a.extract::<f64>().ok().map(ScalarValue::Float);
        }
        return None;
    }
    if elem == ElemTy::Bool {
        return a
            .cast::<PyBool>()
            .ok()
            .map(|b| ScalarValue::Bool(b.is_true()));
    }
    if a.is_instance_of::<PyInt>() {
        return a.extract::<i64>().ok().map(ScalarValue::Int);
    }
    None
}

#[pymethods]
impl CompiledString {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        guard(|| match kwargs.filter(|k| !k.is_empty()) {
            Some(k) => self.call_inner(&self.bind_named(args, k)?),
            None => self.call_inner(args),
        })
    }

    #[getter]
    fn __name__(&self) -> &str {
        &self.name
    }

    #[getter]
    fn entry_symbol(&self) -> &str {
        self.entry.symbol()
    }

    fn __repr__(&self) -> String {
        let names: Vec<&str> = self.logical.iter().map(|l| l.name.as_str()).collect();
        format!(
            "<parpy compiled function {}({})>",
            self.name,
            names.join(", ")
        )
    }
}

/// `parpy.compile_string(fn_name, code, opts)`.
#[pyfunction]
#[pyo3(signature = (fn_name, code, opts=None))]
pub fn compile_string(
    py: Python<'_>,
    fn_name: &str,
    code: &str,
    opts: Option<&Bound<'_, CompileOptions>>,
) -> PyResult<CompiledString> {
    guard(|| {
        let data = opts.map(|o| o.get().snapshot()).unwrap_or_default();
        crate::backend::refuse_python(data.backend, "compile_string")?;
        let backend = service::resolve_backend(py, &data)?;
        check_code_for(code, backend)?;
        if backend == parpy_core::Backend::Cuda {
            return compile_cuda(py, fn_name, code, data.device.unwrap_or(0), &data);
        }
        if backend != parpy_core::Backend::Cpu || !crate::backend::is_enabled(backend) {
            let (_, why) = crate::backend::explain(backend);
            return Err(PyRuntimeError::new_err(format!(
                "compile_string cannot build code for the {} backend on this machine: {why}",
                backend.name()
            )));
        }
        let (entry_sym, params) = parse_header(code).map_err(PyValueError::new_err)?;
        check_name(fn_name, code, &entry_sym)?;
        data.to_core(backend)?; // the options are checked as for a jit call
        let (entry, _) = service::build_entry(py, &data, code, &entry_sym, true)?;
        Ok(CompiledString {
            name: fn_name.to_string(),
            names: params.iter().map(|p| p.name.clone()).collect(),
            logical: logical_params(&params),
            params,
            bounds: parse_bounds(code),
            entry,
            cuda_device: None,
        })
    })
}

/// Refuses code printed for another backend than `backend` (its first
/// line says which), and code that calls Python callbacks: a function
/// compiled from a string has none to give it (the host code would stop
/// at the first call, silently on Cpu).
fn check_code_for(code: &str, backend: parpy_core::Backend) -> PyResult<()> {
    if let Some(printed) = parse_backend(code).filter(|&b| b != backend) {
        let fix = if printed == parpy_core::Backend::Metal {
            String::new()
        } else {
            format!(
                "set opts.backend = parpy.CompileBackend.{}, or ",
                printed.name()
            )
        };
        return Err(PyValueError::new_err(format!(
            "compile_string: the code was printed for the {} backend (its first line says \
             `backend: {}`), but opts.backend compiles it for the {} backend; {fix}print \
             the code again with the {} backend's options",
            printed.name(),
            parpy_core::back::target_name(printed),
            backend.name(),
            backend.name(),
        )));
    }
    let calls_back = code
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|tok| tok == "parpy_callback");
    if calls_back {
        return Err(PyValueError::new_err(
            "compile_string: the code calls Python callbacks (`parpy.callback`) through its \
             `parpy_callback` pointer, and a function compiled from a string has no callbacks \
             to give it; call the jit function itself, or remove the `parpy_callback` \
             declaration and the blocks that call it from the code (do what the callback did \
             in Python before or after the call)",
        ));
    }
    Ok(())
}

/// `fn_name` must name something in the code: the function it was printed
/// from (the header's first line says `from <name>`), a function defined in
/// it, or the entry symbol or a part of it (`sum_rows` for `sum_rows_entry`).
/// Anything else is most likely a name meant for other code.
fn check_name(fn_name: &str, code: &str, entry: &str) -> PyResult<()> {
    let named = |tok: &str| {
        tok == fn_name
            || tok
                .strip_prefix(fn_name)
                .is_some_and(|r| r.starts_with('_'))
            || tok.strip_suffix(fn_name).is_some_and(|r| r.ends_with('_'))
    };
    if code
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(named)
    {
        return Ok(());
    }
    Err(PyValueError::new_err(format!(
        "compile_string: `{fn_name}` does not occur in the code, whose entry is `{entry}`; \
         pass the name of the function the code was printed from (its first line says \
         `from <name>`) or the entry's name"
    )))
}

/// compile_string for Cuda: nvcc builds the whole file (kernels and host
/// entry) into a shared library; arrays are passed as device pointers.
fn compile_cuda(
    py: Python<'_>,
    fn_name: &str,
    code: &str,
    device: i64,
    data: &crate::options::OptData,
) -> PyResult<CompiledString> {
    let (entry_sym, params) = parse_header(code).map_err(PyValueError::new_err)?;
    check_name(fn_name, code, &entry_sym)?;
    let nvcc = crate::toolchain::require_nvcc(py, "compile_string for the Cuda backend")?;
    // The GPU's architecture when there is one; sm_90 otherwise (the
    // library builds but cannot run without a GPU).
    let arch = parpy_runtime::cuda::driver::context(device)
        .map(|c| c.arch)
        .unwrap_or(90);
    let cache = service::cache_for(py, data)?;
    let dirs = crate::cuda::include_dirs(&data.includes);
    let so = py
        .detach(|| nvcc.build_cached(code, arch, &dirs, &cache))
        .map_err(|e| match e {
            e @ parpy_runtime::RuntimeError::CompileFailed { .. } => {
                CompileErrorPy::new_err(e.to_string())
            }
            e => PyRuntimeError::new_err(format!("compile_string for the Cuda backend: {e}")),
        })?
        .0;
    let entry = LoadedEntry::load(&so, &entry_sym).map_err(|e| {
        PyRuntimeError::new_err(format!("compile_string for the Cuda backend: {e}"))
    })?;
    Ok(CompiledString {
        name: fn_name.to_string(),
        names: params.iter().map(|p| p.name.clone()).collect(),
        logical: logical_params(&params),
        params,
        bounds: parse_bounds(code),
        entry,
        cuda_device: Some(device),
    })
}
