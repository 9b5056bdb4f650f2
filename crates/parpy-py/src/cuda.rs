//! The CUDA backend's call side in the binding: where a compiled function
//! runs ([`CudaFn::build`] places it by its device arguments and
//! `opts.device`, then loads the cubin the compile service produced in that
//! device's context) and the cached call (the streams of its device
//! arguments, then `parpy_runtime::cuda::call` stages, launches and copies
//! back).

use parpy_core::{ArgType, CompileOutput};
use parpy_runtime::cuda::call::{Gpu, Pass, Specialization};
use parpy_runtime::cuda::driver::{self, Context};
use parpy_runtime::cuda::emu::{self, EmuGpu};
use parpy_runtime::cuda::placement::{self, ArgDevice, StreamUse, Streams};
use parpy_runtime::cuda::plan::Plan;
use parpy_runtime::cuda::CudaError;
use parpy_runtime::{DiskCache, LoadedEntry};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::args::device::{self, DevSeen, StreamSrc};
use crate::args::{ArgCtx, ArgRecord, MAX_ARGS};
use crate::errors::{internal_error, CompileErrorPy};
use crate::service;

/// `_native.cuda_emulator(dir, seed)`: the Cuda backend of this process
/// runs on the CPU emulator from now on (its kernels compiled in `dir`, the
/// first call's), its threads and blocks in the order of `seed`;
/// `seed=None` turns it off for later builds (specializations built
/// emulated stay so). A developer tool (`parpy._cuda_emu.install`).
#[pyfunction]
#[pyo3(signature = (dir, seed))]
pub fn cuda_emulator(dir: std::path::PathBuf, seed: Option<u32>) {
    parpy_runtime::cuda::emu::install(&dir, seed);
}

/// The emulator's stand-in headers: (file name, text).
#[pyfunction]
pub fn cuda_emulator_headers() -> Vec<(&'static str, &'static str)> {
    parpy_runtime::cuda::emu::HEADERS.to_vec()
}

/// A specialization on a GPU, or on the emulated one.
enum Spec {
    Gpu(Specialization<Context>),
    Emu(Specialization<EmuGpu>),
}

impl Spec {
    fn params(&self) -> &[(usize, Pass)] {
        match self {
            Spec::Gpu(s) => &s.params,
            Spec::Emu(s) => &s.params,
        }
    }

    fn run(
        &self,
        vals: &[u64],
        streams: &Streams,
        callbacks: Option<parpy_runtime::cuda::call::CallbackRunner<'_>>,
    ) -> Result<(), CudaError> {
        match self {
            Spec::Gpu(s) => s.run(vals, streams, callbacks),
            Spec::Emu(s) => s.run(vals, streams, callbacks),
        }
    }
}

/// Device `ordinal`'s context, or a RuntimeError.
pub fn context(ordinal: i64) -> PyResult<&'static Context> {
    driver::context(ordinal).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// One compiled CUDA specialization, loaded on the device it runs on.
pub struct CudaFn {
    name: String,
    spec: Spec,
    /// The Python name of each argument (for errors).
    arg_names: Vec<String>,
    /// Whether the cubin came from the disk cache (for `specializations()`).
    pub origin: parpy_runtime::Outcome,
    /// The callback calls of the host code.
    callbacks: Option<crate::callbacks::Sites>,
}

fn device_err(name: &str, e: CudaError) -> PyErr {
    match e {
        CudaError::IndexOutOfBounds(msg) => return pyo3::exceptions::PyIndexError::new_err(msg),
        CudaError::Raised { exception, message } => {
            return crate::errors::raised(&exception, message)
        }
        CudaError::Formatted {
            exception,
            template,
            values,
            printf,
        } => return crate::errors::formatted(&exception, &template, &values, printf),
        _ => {}
    }
    gpu_error(&format!("`{name}` on the GPU"), e)
}

/// A driver error as Python's exception, the message after `what`: a
/// MemoryError when the device is out of memory, else a RuntimeError.
pub fn gpu_error(what: &str, e: CudaError) -> PyErr {
    let msg = e.to_string();
    if msg.contains("CUDA_ERROR_OUT_OF_MEMORY") {
        return pyo3::exceptions::PyMemoryError::new_err(format!(
            "{what}: out of device memory: {msg}"
        ));
    }
    PyRuntimeError::new_err(format!("{what}: {msg}"))
}

/// The device a Cuda call with these arguments runs on (a miss, before
/// compiling): the device of its device arrays, or `explicit`
/// (`opts.device`); arguments on different devices are a ValueError.
pub fn place(
    func: &str,
    records: &[ArgRecord],
    ctx_args: &ArgCtx<'_>,
    explicit: Option<i64>,
) -> PyResult<i64> {
    let names: Vec<String> = (0..records.len()).map(|i| ctx_args.name(i)).collect();
    let on: Vec<ArgDevice<'_>> = records
        .iter()
        .zip(&names)
        .filter_map(|(r, n)| {
            r.device.as_ref().map(|d| ArgDevice {
                name: n,
                device: d.device,
                ptr: d.ptr,
            })
        })
        .collect();
    match emu::installed() {
        Some(emu) => placement::place(emu, func, &on, explicit),
        None => placement::place(&driver::Cuda, func, &on, explicit),
    }
    .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The error of a cubin that NVRTC did not make: generated code that does
/// not compile is parpy's bug, unless external functions take part (then
/// their declarations may be at fault); anything else (no NVRTC, a file
/// that cannot be written) is the environment's, a RuntimeError.
pub fn cubin_error(name: &str, out: &parpy_core::CompileOutput, e: CudaError) -> PyErr {
    match e {
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
    }
}

/// The launch plan of `out`, checked against the device (compute
/// capability `arch`, CUDA device `device`) before NVRTC runs, which would
/// reject cluster code for a GPU older than sm_90 with a less clear message.
pub fn plan_for(out: &CompileOutput, arch: u32, device: i64) -> PyResult<Plan> {
    let shared = vec![0u32; out.kernel_names.len()];
    let plan = Plan::new(&out.program, &out.kernel_names, &shared)
        .map_err(|e| internal_error(&e.to_string()))?;
    plan.check_device(arch, device)
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(plan)
}

/// The folders headers are searched in: the options' `includes`, then the
/// working directory (absolute paths).
pub fn include_dirs(includes: &[String]) -> Vec<std::path::PathBuf> {
    let cwd = std::env::current_dir().ok();
    includes
        .iter()
        .map(std::path::PathBuf::from)
        .chain(cwd)
        .filter_map(|d| std::path::absolute(d).ok())
        .collect()
}

/// Loads the wrappers of the `Target.Host` externals the host code of
/// `out` calls into `plan`: nvcc builds them (cached) into a library.
fn attach_host_externals(
    py: Python<'_>,
    name: &str,
    out: &CompileOutput,
    plan: &mut Plan,
    arch: u32,
    cache: &DiskCache,
    includes: &[String],
) -> PyResult<()> {
    let used = plan.host_externals();
    if used.is_empty() {
        return Ok(());
    }
    // (the headers' digests in the text: editing one rebuilds)
    let src = service::header_stamp(&out.program, includes)
        + &parpy_core::back::cuda::host_externals_source(&out.program, &used)
            .map_err(|e| internal_error(&e))?;
    let nvcc = crate::toolchain::require_nvcc(
        py,
        &format!("`{name}`, which calls a host external function on the Cuda backend,"),
    )?;
    let dirs = include_dirs(includes);
    let so = py
        .detach(|| nvcc.build_cached(&src, arch, &dirs, cache))
        .map_err(|e| match e {
            e @ parpy_runtime::RuntimeError::CompileFailed { .. } => CompileErrorPy::new_err(
                format!("the host external functions of `{name}` do not compile: {e}"),
            ),
            e => PyRuntimeError::new_err(format!(
                "building the host external functions of `{name}`: {e}"
            )),
        })?
        .0;
    let mut fns: Vec<Option<LoadedEntry>> =
        (0..out.program.externals.len()).map(|_| None).collect();
    for k in used {
        let f = LoadedEntry::load(&so, &format!("parpy_host_ext_{k}")).map_err(|e| {
            PyRuntimeError::new_err(format!("the host external functions of `{name}`: {e}"))
        })?;
        fns[k as usize] = Some(f);
    }
    plan.set_host_externals(fns);
    Ok(())
}

impl CudaFn {
    /// The miss path after the core compiled `out` for the Cuda backend,
    /// to run on `device` ([`place`]).
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
        graphs: bool,
    ) -> PyResult<CudaFn> {
        let name = ctx_args.func;
        let Some(code) = &out.device_code else {
            return Err(internal_error(&format!(
                "the Cuda backend produced no device code for `{name}`"
            )));
        };
        let arg_names: Vec<String> = (0..records.len()).map(|i| ctx_args.name(i)).collect();
        let mut pass = Vec::with_capacity(out.params.len());
        for (p, &ai) in out.params.iter().zip(param_index) {
            let rec = &records[ai];
            let kind = if !matches!(p.ty, ArgType::Array { .. }) {
                Pass::Scalar
            } else if rec.device.is_some() {
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
        let code = &(service::header_stamp(&out.program, includes) + code);
        let (spec, origin) = if let Some(emu) = emu::installed() {
            // the kernels' text is the emulator's "cubin", with the folders
            // to find the external functions' headers in
            let mut text = String::new();
            for d in include_dirs(includes) {
                text.push_str(&format!("{}{}\n", emu::INCLUDE_LINE, d.display()));
            }
            text.push_str(code);
            let mut plan = plan_for(out, emu.arch(), device)?;
            attach_host_externals(py, name, out, &mut plan, emu.arch(), cache, includes)?;
            let spec = Specialization::load(emu, text.as_bytes(), plan, pass, graphs)
                .map_err(|e| device_err(name, e))?;
            (Spec::Emu(spec), parpy_runtime::Outcome::Built)
        } else {
            let ctx = context(device)?;
            let n = crate::toolchain::nvrtc_source(py)?;
            let arch = ctx.arch;
            let mut plan = plan_for(out, arch, device)?;
            attach_host_externals(py, name, out, &mut plan, arch, cache, includes)?;
            let (cubin, origin) = service::cubin(py, &n, code, name, arch, cache, includes)
                .map_err(|e| cubin_error(name, out, e))?;
            let spec = Specialization::load(ctx, &cubin, plan, pass, graphs)
                .map_err(|e| device_err(name, e))?;
            (Spec::Gpu(spec), origin)
        };
        Ok(CudaFn {
            name: name.to_string(),
            spec,
            arg_names,
            origin,
            callbacks: crate::callbacks::sites(&out.program),
        })
    }

    /// The streams of a call: what each device argument says, in argument
    /// order (`placement::choose_streams`).
    fn streams(&self, py: Python<'_>, devs: &[DevSeen]) -> PyResult<Streams> {
        if devs.is_empty() {
            return Ok(Streams::default());
        }
        let mut uses = Vec::with_capacity(devs.len());
        for d in devs {
            uses.push(match d.stream {
                StreamSrc::Torch => StreamUse::On(device::torch_stream(py, d.device)?),
                StreamSrc::CuPy => StreamUse::On(device::cupy_stream(py, d.device)?),
                StreamSrc::Said(u) => u,
            });
        }
        Ok(placement::choose_streams(uses))
    }

    /// One call: `vals[i]` holds argument i's data pointer (device pointer
    /// or NumPy host pointer) or scalar slot; `devs`, its device arrays.
    pub fn call(&self, py: Python<'_>, vals: &[u64; MAX_ARGS], devs: &[DevSeen]) -> PyResult<()> {
        let streams = self.streams(py, devs)?;
        self.check_host_overlap(vals)?;
        let raised = std::cell::RefCell::new(None);
        let result = match &self.callbacks {
            // views of the device arrays are copied to host buffers around
            // each call (after the work queued before it)
            Some(sites) => self.spec.run(
                vals,
                &streams,
                Some(&|dev, site, v| {
                    crate::callbacks::call_device(py, sites, site, v, dev, &raised)
                }),
            ),
            None => self.spec.run(vals, &streams, None),
        };
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
            .spec
            .params()
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
