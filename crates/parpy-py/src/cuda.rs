//! The CUDA backend's runtime side in the binding: NVRTC from the wheel,
//! cubins through the disk cache, modules, and the cached call (inspect
//! arguments, look up, launch).

use std::path::PathBuf;
use std::sync::OnceLock;

use parpy_core::{ArgType, CompileOutput};
use parpy_runtime::cuda::driver::{self, Context, Launcher, Module, Stream};
use parpy_runtime::cuda::nvrtc::{self, Nvrtc};
use parpy_runtime::cuda::plan::Plan;
use parpy_runtime::cuda::CudaError;
use parpy_runtime::DiskCache;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::args::MAX_ARGS;
use crate::cuda_args::{self, DevKind};

/// The NVRTC library path that the Python side finds
/// (`parpy._cuda.nvrtc_path()`: `$PARPY_NVRTC_PATH` or the wheel).
fn nvrtc_path(py: Python<'_>) -> PyResult<Option<PathBuf>> {
    let p = py.import("parpy._cuda")?.call_method0("nvrtc_path")?;
    if p.is_none() {
        Ok(None)
    } else {
        Ok(Some(PathBuf::from(p.extract::<String>()?)))
    }
}

/// NVRTC, loaded once.
pub fn nvrtc(py: Python<'_>) -> PyResult<&'static Nvrtc> {
    if let Some(n) = nvrtc::loaded() {
        return Ok(n);
    }
    let path = nvrtc_path(py)?;
    nvrtc::load(path.as_deref()).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Whether NVRTC can be loaded, with a sentence (for backend resolution).
/// The wheel's library is only looked for here, not loaded (a warm disk
/// cache never needs it).
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

/// Device `ordinal`'s context, or a RuntimeError.
pub fn context(ordinal: i64) -> PyResult<&'static Context> {
    driver::context(ordinal).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Include directories with NVRTC's bundled headers (`cuda_fp16.h`...),
/// extracted once into the cache directory.
fn header_dirs(n: &Nvrtc, cache: &DiskCache) -> Result<Vec<PathBuf>, CudaError> {
    static DIRS: OnceLock<Result<Vec<PathBuf>, CudaError>> = OnceLock::new();
    DIRS.get_or_init(|| {
        n.install_headers(
            &cache
                .dir
                .join(format!("nvrtc-headers-{}", n.version_string())),
        )
    })
    .clone()
}

/// Where NVRTC comes from and what identifies it in cache keys, found
/// without loading it (loading costs ~30 ms, which a warm disk cache must
/// not pay): the wheel's file path, size and modification time, or the
/// version of an NVRTC found on the system path (which must be loaded).
pub struct NvrtcSource {
    path: Option<PathBuf>,
    identity: String,
}

/// The wheel's NVRTC as found by the first miss of the process (a file
/// path with its identity): looking again costs a `stat` per `sys.path`
/// entry, which is slow under sandboxes such as gVisor and lands on every
/// miss, including a warm disk cache's first call.
/// Also keyed by `$PARPY_NVRTC_PATH`, which overrides the search.
static WHEEL_NVRTC: std::sync::OnceLock<(Option<String>, PathBuf, String)> =
    std::sync::OnceLock::new();

pub fn nvrtc_source(py: Python<'_>) -> PyResult<NvrtcSource> {
    let env = std::env::var("PARPY_NVRTC_PATH").ok();
    if let Some((e, p, id)) = WHEEL_NVRTC.get() {
        if *e == env && nvrtc::loaded().is_none_or(|n| n.path.as_deref() == Some(p.as_path())) {
            return Ok(NvrtcSource {
                path: Some(p.clone()),
                identity: id.clone(),
            });
        }
    }
    let s = find_nvrtc_source(py)?;
    if let Some(p) = &s.path {
        let _ = WHEEL_NVRTC.set((env, p.clone(), s.identity.clone()));
    }
    Ok(s)
}

fn find_nvrtc_source(py: Python<'_>) -> PyResult<NvrtcSource> {
    let path = match nvrtc::loaded() {
        Some(n) => n.path.clone(),
        None => nvrtc_path(py)?,
    };
    let identity = match &path {
        Some(p) => {
            let m = std::fs::metadata(p).map_err(|e| {
                PyRuntimeError::new_err(format!("NVRTC is not available: {}: {e}", p.display()))
            })?;
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            format!("{}|{}|{mtime}", p.display(), m.len())
        }
        None => format!("system nvrtc {}", nvrtc(py)?.version_string()),
    };
    Ok(NvrtcSource { path, identity })
}

/// The cubin of `code` for `sm_{arch}`, through the disk cache (keyed by the
/// code, the NVRTC identity, the architecture and the options). NVRTC is
/// loaded only on a miss.
pub fn cubin(
    src: &NvrtcSource,
    code: &str,
    name: &str,
    arch: u32,
    cache: &DiskCache,
) -> Result<Vec<u8>, CudaError> {
    let arch_s = arch.to_string();
    // extra NVRTC options for experiments (`PARPY_NVRTC_OPTIONS`, split at
    // whitespace); the last part of the key
    let extra_s = std::env::var("PARPY_NVRTC_OPTIONS").unwrap_or_default();
    let extra: Vec<String> = extra_s.split_whitespace().map(String::from).collect();
    let key = DiskCache::blob_key(&[
        b"cubin",
        code.as_bytes(),
        src.identity.as_bytes(),
        arch_s.as_bytes(),
        extra.join(" ").as_bytes(),
    ]);
    let (path, _) = cache.get_or_build_blob(&key, "cubin", || {
        let n = nvrtc::load(src.path.as_deref())?;
        let includes = if nvrtc::needs_headers(code) {
            header_dirs(n, cache)?
        } else {
            vec![]
        };
        n.compile_cubin(code, name, arch, &includes, &extra)
    })?;
    std::fs::read(&path).map_err(|e| CudaError::Plan(format!("{}: {e}", path.display())))
}

/// How one entry parameter is passed on a call.
#[derive(Clone, Copy, Debug)]
enum Pass {
    Scalar,
    /// A torch / `__cuda_array_interface__` array: its pointer, in place.
    Device,
    /// A NumPy array: copied to a device buffer of `bytes`, and back when
    /// the function writes it.
    Host {
        bytes: usize,
        written: bool,
    },
}

/// One compiled CUDA specialization.
pub struct CudaFn {
    name: String,
    ctx: &'static Context,
    module: Module,
    plan: Plan,
    /// Per host parameter: (argument index, how it is passed).
    params: Vec<(usize, Pass)>,
    /// The Python name of each argument (for errors).
    arg_names: Vec<String>,
    /// Some torch tensor is passed: run on torch's current stream.
    torch_device: Option<i64>,
}

fn device_err(name: &str, e: CudaError) -> PyErr {
    let msg = e.to_string();
    if msg.contains("CUDA_ERROR_OUT_OF_MEMORY") {
        return pyo3::exceptions::PyMemoryError::new_err(format!(
            "`{name}` on the GPU: out of device memory: {msg}"
        ));
    }
    PyRuntimeError::new_err(format!("`{name}` on the GPU: {msg}"))
}

impl CudaFn {
    /// The miss path after the core compiled `out` for the Cuda backend.
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        py: Python<'_>,
        ctx_args: &crate::args::ArgCtx<'_>,
        out: &CompileOutput,
        args: &[Bound<'_, PyAny>],
        types: &[ArgType],
        device: i64,
        cache: &DiskCache,
        param_index: &[usize],
    ) -> PyResult<CudaFn> {
        let name = ctx_args.func;
        let Some(code) = &out.device_code else {
            return Err(crate::internal_error(&format!(
                "the Cuda backend produced no device code for `{name}`"
            )));
        };
        let ctx = context(device)?;
        let n = nvrtc_source(py)?;
        // check the device arguments: right device, and which ones are torch
        let mut torch_device = None;
        let mut pass = Vec::with_capacity(out.params.len());
        for (p, &ai) in out.params.iter().zip(param_index) {
            let a = &args[ai];
            let kind = if !matches!(p.ty, ArgType::Array { .. }) {
                Pass::Scalar
            } else if let Some(d) = cuda_args::arg_type(a, ai, ctx_args)? {
                let dev = match d.device {
                    Some(dev) => dev,
                    None => {
                        ctx.bind().map_err(|e| device_err(name, e))?;
                        ctx.pointer_device(d.ptr).map(|o| o as i64).map_err(|_| {
                            PyValueError::new_err(format!(
                                "argument `{}` of `{name}`: its __cuda_array_interface__ \
                                 pointer is not CUDA device memory",
                                p.name
                            ))
                        })?
                    }
                };
                if dev != device {
                    return Err(PyValueError::new_err(format!(
                        "argument `{}` of `{name}` is on CUDA device {dev}, but the function \
                         runs on device {device} (opts.device); move it with .to('cuda:{device}') \
                         or set device={dev}",
                        p.name
                    )));
                }
                if d.kind == DevKind::Torch {
                    torch_device = Some(dev);
                }
                Pass::Device
            } else {
                let bytes = match &types[ai] {
                    ArgType::Array { elem, shape } => {
                        elem.size() * shape.iter().map(|&d| d.max(0) as usize).product::<usize>()
                    }
                    _ => 0,
                };
                Pass::Host {
                    bytes,
                    written: p.written,
                }
            };
            pass.push((ai, kind));
        }
        let arch = ctx.arch;
        let cubin = py
            .detach(|| cubin(&n, code, name, arch, cache))
            .map_err(|e| match e {
                CudaError::NvrtcCompile { .. } => crate::internal_error(&format!(
                    "the generated CUDA code of `{name}` does not compile: {e}"
                )),
                e => PyRuntimeError::new_err(e.to_string()),
            })?;
        let shared = vec![0u32; out.kernel_names.len()];
        let module = ctx
            .load_module(&cubin, &out.kernel_names, &shared)
            .map_err(|e| device_err(name, e))?;
        let plan = Plan::new(&out.program, &out.kernel_names, &shared)
            .map_err(|e| crate::internal_error(&e.to_string()))?;
        Ok(CudaFn {
            name: name.to_string(),
            ctx,
            module,
            plan,
            params: pass,
            arg_names: (0..args.len())
                .map(|i| ctx_args.name(i).to_string())
                .collect(),
            torch_device,
        })
    }

    /// One call: `vals[i]` holds argument i's data pointer (device pointer
    /// or NumPy host pointer) or scalar slot.
    pub fn call(&self, py: Python<'_>, vals: &[u64; MAX_ARGS]) -> PyResult<()> {
        let stream: Stream = match self.torch_device {
            Some(d) => cuda_args::torch_stream(py, d)?,
            None => 0,
        };
        self.check_host_overlap(vals)?;
        self.ctx.bind().map_err(|e| device_err(&self.name, e))?;
        let mut args = [0u64; MAX_ARGS];
        // (device copy, host pointer, bytes, written)
        let mut staged: Vec<(u64, u64, usize, bool)> = Vec::new();
        let result = (|| -> Result<(), CudaError> {
            for (j, &(ai, pass)) in self.params.iter().enumerate() {
                args[j] = match pass {
                    Pass::Scalar | Pass::Device => vals[ai],
                    Pass::Host { bytes, written } => {
                        // the same NumPy array passed twice shares one copy
                        let same = staged.iter().position(|e| e.1 == vals[ai] && e.2 == bytes);
                        if let Some(k) = same {
                            staged[k].3 |= written;
                            args[j] = staged[k].0;
                            continue;
                        }
                        let d = self.ctx.alloc(bytes, stream)?;
                        staged.push((d, vals[ai], bytes, written));
                        // SAFETY: the NumPy array (kept alive by the caller)
                        // holds `bytes` bytes; pageable copies complete
                        // before returning.
                        unsafe {
                            driver::copy_htod(d, vals[ai] as usize as *const _, bytes, stream)?
                        };
                        d
                    }
                };
            }
            let launcher = Launcher {
                ctx: self.ctx,
                module: &self.module,
                stream,
            };
            self.plan.run(&launcher, &args[..self.params.len()])?;
            for &(d, host, bytes, written) in &staged {
                if written {
                    // SAFETY: a writeable NumPy array of `bytes` bytes; the
                    // stream is synchronised below before returning.
                    unsafe { driver::copy_dtoh(host as usize as *mut _, d, bytes, stream)? };
                }
            }
            if !staged.is_empty() {
                driver::sync(stream).map_err(|e| {
                    let names: Vec<&str> = self
                        .plan
                        .kernels()
                        .iter()
                        .map(|k| k.symbol.as_str())
                        .collect();
                    CudaError::Plan(format!(
                        "{e} (raised while running the kernels {})",
                        names.join(", ")
                    ))
                })?;
            }
            Ok(())
        })();
        for &(d, ..) in &staged {
            driver::free(d, stream);
        }
        result.map_err(|e| device_err(&self.name, e))
    }
}

impl CudaFn {
    /// NumPy arguments are copied to the GPU one by one, so two that share
    /// memory without being the same array (overlapping views) cannot keep
    /// their aliasing there: a clear error instead of silently different
    /// results. The same array passed twice shares one copy.
    fn check_host_overlap(&self, vals: &[u64; MAX_ARGS]) -> PyResult<()> {
        let hosts: Vec<(usize, u64, usize)> = self
            .params
            .iter()
            .filter_map(|&(ai, p)| match p {
                Pass::Host { bytes, .. } => Some((ai, vals[ai], bytes)),
                _ => None,
            })
            .collect();
        for (n, &(a, pa, ba)) in hosts.iter().enumerate() {
            for &(b, pb, bb) in &hosts[n + 1..] {
                let same = pa == pb && ba == bb;
                let overlap =
                    pa < pb.saturating_add(bb as u64) && pb < pa.saturating_add(ba as u64);
                if overlap && !same {
                    return Err(PyValueError::new_err(format!(
                        "arguments `{}` and `{}` of `{}` are NumPy arrays that overlap in \
                         memory; the Cuda backend copies NumPy arguments to the GPU one by \
                         one, so pass arrays that do not overlap (e.g. `{}.copy()`), or \
                         device arrays",
                        self.arg_names[a], self.arg_names[b], self.name, self.arg_names[b]
                    )));
                }
            }
        }
        Ok(())
    }
}

/// `_native._cuda_nvrtc_compile(code, name, arch)`: NVRTC from the wheel,
/// code to a cubin (for tests and CI; no GPU needed).
#[pyfunction]
#[pyo3(signature = (code, name, arch=90, options=vec![]))]
pub fn _cuda_nvrtc_compile<'py>(
    py: Python<'py>,
    code: &str,
    name: &str,
    arch: u32,
    options: Vec<String>,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    crate::guard(|| {
        let n = nvrtc(py)?;
        let cache = DiskCache::default_location();
        let includes = if nvrtc::needs_headers(code) {
            header_dirs(n, &cache).map_err(|e| PyRuntimeError::new_err(e.to_string()))?
        } else {
            vec![]
        };
        let cubin = py
            .detach(|| n.compile_cubin(code, name, arch, &includes, &options))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(pyo3::types::PyBytes::new(py, &cubin))
    })
}

/// `_native._cuda_nvrtc_version()`: `"13.5"`.
#[pyfunction]
pub fn _cuda_nvrtc_version(py: Python<'_>) -> PyResult<String> {
    crate::guard(|| Ok(nvrtc(py)?.version_string()))
}

/// `_native._cuda_dry_run(fn, args, opts, arch=90)`: the whole Cuda miss
/// path except the GPU: compile for the Cuda backend, NVRTC the device code
/// to a cubin (through the disk cache) and build the launch plan. Returns
/// `(kernel names, [(grid, block)], cubin size)`.
#[pyfunction]
#[pyo3(signature = (fun, args, opts=None, arch=90))]
#[allow(clippy::type_complexity)]
pub fn _cuda_dry_run(
    py: Python<'_>,
    fun: &Bound<'_, PyAny>,
    args: Vec<Bound<'_, PyAny>>,
    opts: Option<&Bound<'_, crate::options::CompileOptions>>,
    arch: u32,
) -> PyResult<(Vec<String>, Vec<([u32; 3], [u32; 3])>, usize)> {
    crate::guard(|| {
        let (def, resolver, name, params) = crate::jit::def_and_resolver(fun)?;
        let data = opts.map(|o| o.get().snapshot()).unwrap_or_default();
        let ctx = crate::args::ArgCtx {
            func: &name,
            params: &params,
        };
        let mut types = vec![];
        for (i, a) in args.iter().enumerate() {
            types.push(crate::args::arg_type(a, i, data.specialize_scalars, &ctx)?);
        }
        let options = data.to_core(parpy_core::Backend::Cuda)?;
        let out = crate::jit::run_compile(py, &def, &types, &resolver, &options)?;
        let Some(code) = &out.device_code else {
            return Err(crate::internal_error("no device code for the Cuda backend"));
        };
        let n = nvrtc_source(py)?;
        let cache = crate::jit::cache_for(&data);
        let bin = py
            .detach(|| cubin(&n, code, &name, arch, &cache))
            .map_err(|e| crate::internal_error(&e.to_string()))?;
        let shared = vec![0u32; out.kernel_names.len()];
        let plan = Plan::new(&out.program, &out.kernel_names, &shared)
            .map_err(|e| crate::internal_error(&e.to_string()))?;
        let launches = plan.kernels().iter().map(|k| (k.grid, k.block)).collect();
        Ok((out.kernel_names.clone(), launches, bin.len()))
    })
}

/// `_native._cuda_nvrtc_loaded()`: whether this process has loaded NVRTC
/// (a warm disk cache never needs to).
#[pyfunction]
pub fn _cuda_nvrtc_loaded() -> bool {
    nvrtc::loaded().is_some()
}

/// `_native._cuda_sync()`: waits for the GPUs parpy used (`parpy.sync()`);
/// an error from earlier asynchronous work surfaces here.
#[pyfunction]
pub fn _cuda_sync(py: Python<'_>) -> PyResult<()> {
    crate::guard(|| {
        py.detach(driver::sync_all).map_err(|e| {
            PyRuntimeError::new_err(format!(
                "parpy.sync(): the GPU reported an error from earlier asynchronous work: {e}"
            ))
        })
    })
}
