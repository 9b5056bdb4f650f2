//! The module-level functions of `parpy._native` (the classes live in
//! `jit.rs`, `cstring.rs` and `options.rs`): `print_compiled`,
//! `clear_cache`, backend queries, and the internal `_cuda_*` helpers the
//! tests and the GPU check use.

use parpy_core::{Backend, CompileOutput};
use parpy_runtime::cuda::cubin;
use parpy_runtime::cuda::driver;
use parpy_runtime::cuda::nvrtc;
use parpy_runtime::DiskCache;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::path::PathBuf;

use crate::args::{self, device::DevKind, ArgCtx};
use crate::backend;
use crate::errors::{guard, internal_error};
use crate::jit;
use crate::options::{CompileBackend, CompileOptions, OptData};
use crate::service;
use crate::toolchain;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(print_compiled, m)?)?;
    m.add_function(wrap_pyfunction!(clear_cache, m)?)?;
    m.add_function(wrap_pyfunction!(_clear_cache_dir, m)?)?;
    m.add_function(wrap_pyfunction!(_raise_bounds_failure, m)?)?;
    m.add_function(wrap_pyfunction!(set_max_loaded, m)?)?;
    m.add_function(wrap_pyfunction!(_loaded_specializations, m)?)?;
    m.add_function(wrap_pyfunction!(default_cache_dir, m)?)?;
    m.add_function(wrap_pyfunction!(backend_explain, m)?)?;
    m.add_function(wrap_pyfunction!(backend_is_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(backend_available, m)?)?;
    m.add_function(wrap_pyfunction!(_nvrtc_path, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_nvrtc_compile, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_nvrtc_version, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_dry_run, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_nvrtc_loaded, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_arg_kind, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_sync, m)?)?;
    m.add_function(wrap_pyfunction!(_scalar_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(_observe_ns, m)?)?;
    Ok(())
}

/// `(int, float)`: the `parpy.types` element types of Python ints and
/// floats under `opts` (what ParPy calls `ScalarSizes`).
#[pyfunction]
fn _scalar_sizes<'py>(
    py: Python<'py>,
    opts: &Bound<'py, CompileOptions>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let d = opts.get().snapshot();
    let (backend, _) = backend::resolve(d.backend);
    let (i, f) = d.scalar_types(backend);
    Ok((
        crate::options::elem_type_object(py, i)?,
        crate::options::elem_type_object(py, f)?,
    ))
}

/// Compiles `fun` (a jit or plain function) for `args` on `backend`, with
/// no cache; also returns the function's name.
/// The parameters `items` leaves out, from the function's defaults as a
/// call fills them in (`__defaults__` for the positional ones,
/// `__kwdefaults__` for those after `*`), up to the first without one.
fn fill_defaults<'py>(
    py_func: &Bound<'py, PyAny>,
    def: &parpy_core::syntax::ast::FunctionDef,
    items: &mut Vec<Bound<'py, PyAny>>,
) -> PyResult<()> {
    if items.len() >= def.params.len() {
        return Ok(());
    }
    let defaults = py_func.getattr("__defaults__")?;
    let defaults: Vec<Bound<'_, PyAny>> = if defaults.is_none() {
        vec![]
    } else {
        defaults.try_iter()?.collect::<PyResult<_>>()?
    };
    let kw_defaults = py_func.getattr("__kwdefaults__")?;
    let positional = def.params.iter().filter(|p| !p.kw_only).count();
    let first_default = positional.saturating_sub(defaults.len());
    for (i, p) in def.params.iter().enumerate().skip(items.len()) {
        let default = if i < positional {
            i.checked_sub(first_default).map(|d| defaults[d].clone())
        } else if kw_defaults.is_none() {
            None
        } else {
            kw_defaults.get_item(&p.name).ok()
        };
        match default {
            Some(d) => items.push(d),
            None => break,
        }
    }
    Ok(())
}

fn compile_with<'py>(
    py: Python<'py>,
    fun: &Bound<'py, PyAny>,
    mut items: Vec<Bound<'py, PyAny>>,
    data: &OptData,
    backend: Backend,
) -> PyResult<(CompileOutput, String)> {
    let (def, resolver, name, params) = jit::def_and_resolver(fun)?;
    let py_func = match fun.cast::<jit::JitFunction>() {
        Ok(j) => j.getattr("py_func")?,
        Err(_) => fun.clone(),
    };
    fill_defaults(&py_func, &def, &mut items)?;
    if items.len() != params.len() {
        return Err(PyTypeError::new_err(format!(
            "{name}() takes {} positional arguments ({}) but {} were given",
            params.len(),
            params.join(", "),
            items.len()
        )));
    }
    let ctx = ArgCtx {
        func: &name,
        params: &params,
        in_place: def.in_place_params(),
    };
    let tuple = pyo3::types::PyTuple::new(py, &items)?;
    let symbols = crate::resolver::check_value_annotations(&py_func, tuple.as_any())?;
    let spec = if data.specialize_scalars { u64::MAX } else { 0 };
    let addrs: Vec<Option<u64>> = items.iter().map(data_address).collect();
    let ins = args::inspect_call(items, spec, &ctx)?;
    let types = ins.types;
    let mut options = data.to_core(backend)?;
    // the same array passed twice compiles as one, by the call's rule (not
    // in a dict argument, whose leaves the call does not compare either)
    let n = addrs.len();
    if ins.records.len() == n && n <= args::MAX_ARGS {
        let (mut vals, mut scalars) = ([0u64; args::MAX_ARGS], 0u64);
        for (i, (a, r)) in addrs.iter().zip(&ins.records).enumerate() {
            match a.filter(|_| r.is_array()) {
                Some(a) => vals[i] = a,
                None => scalars |= 1 << i,
            }
        }
        let mut same = vec![];
        jit::same_arrays(n, scalars, &vals, &mut same);
        options.same_arrays = jit::one_array_pairs(&same, &ins.records);
    }
    if data.implicit_shape_labels {
        options.implicit_labels = symbols.names.clone();
    }
    let out = service::run_compile(py, &def, &types, resolver.as_ref(), &options)?;
    Ok((out, name))
}

/// The address of an array argument's data (NumPy's array interface,
/// a torch tensor's `data_ptr()`), where it has one.
fn data_address(obj: &Bound<'_, PyAny>) -> Option<u64> {
    if let Ok(ai) = obj.getattr("__array_interface__") {
        return ai.get_item("data").ok()?.get_item(0).ok()?.extract().ok();
    }
    obj.call_method0("data_ptr").ok()?.extract().ok()
}

/// `parpy.print_compiled(fn, args, opts)`: the generated code, no cache.
#[pyfunction]
#[pyo3(signature = (fun, args, opts=None))]
fn print_compiled(
    py: Python<'_>,
    fun: &Bound<'_, PyAny>,
    args: &Bound<'_, PyAny>,
    opts: Option<&Bound<'_, CompileOptions>>,
) -> PyResult<String> {
    guard(|| {
        let data = opts.map(|o| o.get().snapshot()).unwrap_or_default();
        // (a dict iterates over its keys: its strings were "arguments")
        if args.is_instance_of::<pyo3::types::PyDict>() {
            return Err(PyTypeError::new_err(
                "print_compiled(fn, args, opts): `args` must be a list of the arguments, not a dict",
            ));
        }
        let items: Vec<Bound<'_, PyAny>> = args
            .try_iter()
            .map_err(|_| {
                PyTypeError::new_err(
                    "print_compiled(fn, args, opts): `args` must be a list of the arguments",
                )
            })?
            .collect::<PyResult<_>>()?;
        backend::refuse_python(data.backend, "print_compiled")?;
        let backend = service::resolve_backend(py, &data)?;
        Ok(compile_with(py, fun, items, &data, backend)
            .map_err(|e| {
                // the arity message names print_compiled
                if e.is_instance_of::<PyTypeError>(py)
                    && e.value(py).to_string().contains("positional arguments")
                {
                    PyTypeError::new_err(format!("{} to print_compiled", e.value(py)))
                } else {
                    e
                }
            })?
            .0
            .code)
    })
}

/// Drops every in-memory specialization and the disk cache entries.
#[pyfunction]
fn clear_cache() -> PyResult<()> {
    guard(service::clear_cache)
}

/// Removes the complete disk cache entries of one directory (and its
/// builds' stale temporaries), as `clear_cache` does for each directory it
/// clears; nothing else (`python -m parpy cache clear --dir DIR`). Returns
/// how many files went.
#[pyfunction]
fn _clear_cache_dir(dir: PathBuf) -> PyResult<usize> {
    guard(|| {
        parpy_runtime::cache::clear(&dir)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))
    })
}

/// Raises what the bounds record `record` (`RECORD_LEN` int64s) read after
/// a call of the generated `code` of `name` tells, as a call of the jit
/// function raises it (`_cuda_emu.run`); nothing when no check failed.
#[pyfunction]
fn _raise_bounds_failure(name: &str, code: &str, record: Vec<i64>) -> PyResult<()> {
    let sites = parpy_runtime::header::parse_bounds(code);
    match parpy_runtime::bounds_error(name, &sites, &record) {
        Some(f) => Err(crate::jit::check_failure(f)),
        None => Ok(()),
    }
}

/// Sets how many specializations (over all jit functions) stay loaded in
/// memory, at least 1; returns the previous bound. Past it the least
/// recently used one is dropped: its library is unloaded once no call runs
/// it, and a later call loads it again from the disk cache. The default is
/// 256, or `$PARPY_MAX_LOADED`.
#[pyfunction]
fn set_max_loaded(n: &Bound<'_, PyAny>) -> PyResult<usize> {
    // (a negative or non-int bound was pyo3's "can't convert negative int
    // to unsigned")
    // (not an int at all: a TypeError, as Python's own functions raise)
    if !n.is_instance_of::<pyo3::types::PyInt>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "set_max_loaded(n): n must be an int, got {} ({})",
            n.repr()?,
            crate::args::type_name(n)
        )));
    }
    match n.extract::<i64>() {
        Ok(k) if k >= 1 => Ok(crate::loaded::set_limit(k as usize)),
        _ => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "set_max_loaded(n): n must be an int of at least 1, got {}",
            n.repr()?
        ))),
    }
}

/// How many specializations are loaded in memory now (tests).
#[pyfunction]
fn _loaded_specializations() -> usize {
    crate::loaded::count()
}

/// The disk cache directory used when `CompileOptions.cache_dir` is unset.
#[pyfunction]
fn default_cache_dir() -> PathBuf {
    parpy_runtime::default_cache_dir()
}

/// `(usable, sentence)` for one backend.
#[pyfunction]
fn backend_explain(b: CompileBackend) -> (bool, String) {
    if b == CompileBackend::Python {
        return (true, backend::PYTHON_SENTENCE.to_string());
    }
    match b.core() {
        Some(c) => backend::explain(c),
        None => {
            let (c, lines) = backend::resolve(b);
            (backend::is_enabled(c), lines.join("\n"))
        }
    }
}

#[pyfunction]
fn backend_is_enabled(b: CompileBackend) -> bool {
    if b == CompileBackend::Python {
        return true;
    }
    match b.core() {
        Some(c) => backend::is_enabled(c),
        None => true,
    }
}

#[pyfunction]
fn backend_available(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list: Vec<CompileBackend> = backend::available()
        .into_iter()
        .map(|b| match b {
            Backend::Cpu => CompileBackend::Cpu,
            Backend::Cuda => CompileBackend::Cuda,
            Backend::Metal => CompileBackend::Metal,
        })
        .collect();
    PyList::new(py, list)
}

/// `_native._nvrtc_path()`: the `libnvrtc.so.13` parpy would load
/// (`$PARPY_NVRTC_PATH`, else the wheel's), or None.
#[pyfunction]
fn _nvrtc_path(py: Python<'_>) -> PyResult<Option<String>> {
    Ok(toolchain::nvrtc_path(py)?.map(|p| p.to_string_lossy().into_owned()))
}

/// `_native._cuda_arg_kind(obj)`: how the Cuda backend takes `obj`:
/// `"torch"`, `"cai"` or `"dlpack"` (in place), or `None` (a NumPy array
/// or a scalar, staged). Internal; lets the tests check the classification
/// without a GPU.
#[pyfunction]
fn _cuda_arg_kind(obj: &Bound<'_, PyAny>) -> PyResult<Option<&'static str>> {
    guard(|| {
        let params = vec!["x".to_string()];
        let ctx = ArgCtx {
            func: "_cuda_arg_kind",
            params: &params,
            in_place: 0,
        };
        Ok(args::device::inspect(obj, 0, &ctx)?.map(|d| match d.kind {
            DevKind::Torch => "torch",
            DevKind::Cai => "cai",
            DevKind::DlPack => "dlpack",
        }))
    })
}

/// `_native._observe_ns(args, n)`: what the cached-call fast path reads
/// of `args` (each specialized on its value): `(nanoseconds per reading of
/// all of them, averaged over n readings; the key words)`. Internal; for
/// measuring the fast path (device arrays without a GPU among them) and
/// checking its keys.
#[pyfunction]
fn _observe_ns(args: Vec<Bound<'_, PyAny>>, n: usize) -> PyResult<(f64, Vec<u64>)> {
    guard(|| {
        let params: Vec<String> = (0..args.len()).map(|i| format!("a{i}")).collect();
        let ctx = ArgCtx {
            func: "_observe_ns",
            params: &params,
            in_place: 0,
        };
        let mut key = args::KeyBuf::new();
        let mut vals = [0u64; args::MAX_ARGS];
        let mut devs = Vec::new();
        let started = std::time::Instant::now();
        for _ in 0..n.max(1) {
            key.clear();
            devs.clear();
            for (i, a) in args.iter().enumerate().take(args::MAX_ARGS) {
                std::hint::black_box(args::observe(
                    a,
                    i,
                    true,
                    &mut key,
                    &mut vals[i],
                    &mut devs,
                    &ctx,
                )?);
            }
        }
        let ns = started.elapsed().as_nanos() as f64 / n.max(1) as f64;
        Ok((ns, key.as_slice().to_vec()))
    })
}

/// `_native._cuda_nvrtc_compile(code, name, arch)`: NVRTC from the wheel,
/// code to a cubin (for tests and CI; no GPU needed).
#[pyfunction]
#[pyo3(signature = (code, name, arch=90, options=vec![]))]
fn _cuda_nvrtc_compile<'py>(
    py: Python<'py>,
    code: &str,
    name: &str,
    arch: u32,
    options: Vec<String>,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    guard(|| {
        let n = toolchain::nvrtc(py)?;
        let cache = DiskCache::default_location();
        let cubin = py
            .detach(|| cubin::compile(n, code, name, arch, &options, &cache))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(pyo3::types::PyBytes::new(py, &cubin))
    })
}

/// `_native._cuda_nvrtc_version()`: `"13.5"`.
#[pyfunction]
fn _cuda_nvrtc_version(py: Python<'_>) -> PyResult<String> {
    guard(|| Ok(toolchain::nvrtc(py)?.version_string()))
}

/// `_native._cuda_dry_run(fn, args, opts, arch=90)`: the whole Cuda miss
/// path except the GPU: compile for the Cuda backend, build the launch plan
/// and check it against a device of compute capability `arch` (device 0),
/// NVRTC the device code to a cubin (through the disk cache). Returns
/// `(kernel names, [(grid, block)], cubin size)`; with `details=True` a
/// dict with also each kernel's `clusters` (dimensions or None) and
/// `graph_blocker` (why the launches cannot be a CUDA graph, or None).
#[pyfunction]
#[pyo3(signature = (fun, args, opts=None, arch=90, details=false))]
fn _cuda_dry_run(
    py: Python<'_>,
    fun: &Bound<'_, PyAny>,
    args: Vec<Bound<'_, PyAny>>,
    opts: Option<&Bound<'_, CompileOptions>>,
    arch: u32,
    details: bool,
) -> PyResult<Py<PyAny>> {
    guard(|| {
        let data = opts.map(|o| o.get().snapshot()).unwrap_or_default();
        let (out, name) = compile_with(py, fun, args, &data, Backend::Cuda)?;
        let Some(code) = &out.device_code else {
            return Err(internal_error("no device code for the Cuda backend"));
        };
        let plan = crate::cuda::plan_for(&out, arch, 0)?;
        let n = toolchain::nvrtc_source(py)?;
        let cache = service::cache_for(py, &data)?;
        let (bin, _) = service::cubin(py, &n, code, &name, arch, &cache, &data.includes)
            .map_err(|e| crate::cuda::cubin_error(&name, &out, e))?;
        let launches: Vec<([u32; 3], [u32; 3])> =
            plan.kernels().iter().map(|k| (k.grid, k.block)).collect();
        if !details {
            return Ok((out.kernel_names.clone(), launches, bin.len())
                .into_pyobject(py)?
                .into_any()
                .unbind());
        }
        let d = pyo3::types::PyDict::new(py);
        d.set_item("names", out.kernel_names.clone())?;
        d.set_item("launches", launches)?;
        let clusters: Vec<Option<[u32; 3]>> = plan.kernels().iter().map(|k| k.cluster).collect();
        d.set_item("clusters", clusters)?;
        d.set_item("graph_blocker", plan.graph_blocker())?;
        d.set_item("size", bin.len())?;
        Ok(d.into_any().unbind())
    })
}

/// `_native._cuda_nvrtc_loaded()`: whether this process has loaded NVRTC
/// (a warm disk cache never needs to).
#[pyfunction]
fn _cuda_nvrtc_loaded() -> bool {
    nvrtc::loaded().is_some()
}

/// `_native._cuda_sync()`: waits for the GPUs parpy used (`parpy.sync()`);
/// an error from earlier asynchronous work surfaces here.
#[pyfunction]
fn _cuda_sync(py: Python<'_>) -> PyResult<()> {
    guard(|| {
        py.detach(driver::sync_all).map_err(|e| {
            PyRuntimeError::new_err(format!(
                "parpy.sync(): the GPU reported an error from earlier asynchronous work: {e}"
            ))
        })
    })
}
