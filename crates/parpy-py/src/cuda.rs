//! The CUDA backend's call side in the binding: a compiled function's
//! module and launch plan ([`CudaFn::build`], after the compile service
//! produced the cubin) and the cached call (stage NumPy arguments, launch,
//! copy back).

use parpy_core::{ArgType, CompileOutput};
use parpy_runtime::cuda::driver::{self, Context, Launcher, Module, Stream};
use parpy_runtime::cuda::plan::Plan;
use parpy_runtime::cuda::CudaError;
use parpy_runtime::DiskCache;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::args::device::{self, DevKind};
use crate::args::{ArgCtx, ArgRecord, MAX_ARGS};
use crate::errors::internal_error;
use crate::service;

/// Device `ordinal`'s context, or a RuntimeError.
pub fn context(ordinal: i64) -> PyResult<&'static Context> {
    driver::context(ordinal).map_err(|e| PyRuntimeError::new_err(e.to_string()))
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
    /// Whether the cubin came from the disk cache (for `specializations()`).
    pub origin: parpy_runtime::Outcome,
    /// The callback calls of the host code.
    callbacks: Option<crate::callbacks::Sites>,
}

fn device_err(name: &str, e: CudaError) -> PyErr {
    if let CudaError::IndexOutOfBounds(msg) = e {
        return pyo3::exceptions::PyIndexError::new_err(msg);
    }
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
        ctx_args: &ArgCtx<'_>,
        out: &CompileOutput,
        records: &[ArgRecord],
        device: i64,
        cache: &DiskCache,
        param_index: &[usize],
        includes: &[String],
    ) -> PyResult<CudaFn> {
        let name = ctx_args.func;
        let Some(code) = &out.device_code else {
            return Err(internal_error(&format!(
                "the Cuda backend produced no device code for `{name}`"
            )));
        };
        let ctx = context(device)?;
        let n = crate::toolchain::nvrtc_source(py)?;
        // check the device arguments: right device, and which ones are torch
        let mut torch_device = None;
        let mut pass = Vec::with_capacity(out.params.len());
        for (p, &ai) in out.params.iter().zip(param_index) {
            let rec = &records[ai];
            let kind = if !matches!(p.ty, ArgType::Array { .. }) {
                Pass::Scalar
            } else if let Some(d) = &rec.device {
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
                let bytes = match &rec.ty {
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
        let code = &(service::header_stamp(&out.program, includes) + code);
        let (cubin, origin) =
            service::cubin(py, &n, code, name, arch, cache, includes).map_err(|e| match e {
                CudaError::NvrtcCompile { .. } if !out.program.externals.is_empty() => {
                    crate::errors::CompileErrorPy::new_err(format!(
                        "the CUDA code of `{name}` with its external functions does not \
                         compile (check their headers, opts.includes and declarations): {e}"
                    ))
                }
                CudaError::NvrtcCompile { .. } => internal_error(&format!(
                    "the generated CUDA code of `{name}` does not compile: {e}"
                )),
                e => PyRuntimeError::new_err(e.to_string()),
            })?;
        let shared = vec![0u32; out.kernel_names.len()];
        let module = ctx
            .load_module(&cubin, &out.kernel_names, &shared)
            .map_err(|e| device_err(name, e))?;
        let plan = Plan::new(&out.program, &out.kernel_names, &shared)
            .map_err(|e| internal_error(&e.to_string()))?;
        Ok(CudaFn {
            name: name.to_string(),
            ctx,
            module,
            plan,
            params: pass,
            arg_names: (0..records.len())
                .map(|i| ctx_args.name(i).to_string())
                .collect(),
            torch_device,
            origin,
            callbacks: crate::callbacks::sites(&out.program),
        })
    }

    /// One call: `vals[i]` holds argument i's data pointer (device pointer
    /// or NumPy host pointer) or scalar slot.
    pub fn call(&self, py: Python<'_>, vals: &[u64; MAX_ARGS]) -> PyResult<()> {
        let stream: Stream = match self.torch_device {
            Some(d) => device::torch_stream(py, d)?,
            None => 0,
        };
        self.check_host_overlap(vals)?;
        self.ctx.bind().map_err(|e| device_err(&self.name, e))?;
        let mut args = [0u64; MAX_ARGS];
        // (device copy, host pointer, bytes, written)
        let mut staged: Vec<(u64, u64, usize, bool)> = Vec::new();
        let raised = std::cell::RefCell::new(None);
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
            match &self.callbacks {
                // views of the device arrays are copied to host buffers
                // around each call (after the work queued before it)
                Some(sites) => self.plan.run_calling(
                    &launcher,
                    &args[..self.params.len()],
                    &|site, vals| {
                        crate::callbacks::call_device(py, sites, site, vals, &launcher, &raised)
                    },
                )?,
                None => self.plan.run(&launcher, &args[..self.params.len()])?,
            }
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
        if let Some(e) = raised.into_inner() {
            return Err(e);
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
