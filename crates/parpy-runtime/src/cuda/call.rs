//! A compiled Cuda specialization on one device, and its call: the module
//! loaded in that device's context, NumPy arguments staged through that
//! device's memory pool, the launch plan run on the call's stream (joined
//! with the other streams its arguments named, [`super::placement`]).
//!
//! Everything a device does goes through [`Gpu`]: the driver's
//! [`super::driver::Context`], or a fake in the tests that records which
//! device each allocation, module load and launch went to.

use std::ffi::c_void;

use super::placement::Streams;
use super::plan::{CallbackValue, Device, Plan};
use super::CudaError;

/// A raw stream handle (`0` is the legacy default stream).
pub type Stream = u64;

/// One device: its context, memory and launches. Implementations make
/// their context current in [`Gpu::bind`]; the other calls assume it is.
pub trait Gpu: Sync + 'static {
    /// A module loaded in this device's context.
    type Module: Send + Sync;
    fn ordinal(&self) -> i64;
    /// `major * 10 + minor`.
    fn arch(&self) -> u32;
    fn bind(&self) -> Result<(), CudaError>;
    /// Loads a cubin and looks up `symbols` (the kernels, in plan order);
    /// `shared[i]`: kernel i's dynamic shared memory.
    fn load_module(
        &self,
        cubin: &[u8],
        symbols: &[String],
        shared: &[u32],
    ) -> Result<Self::Module, CudaError>;
    /// Launches kernel `kernel` of `module` on `stream`; `params[i]` points
    /// at the value of parameter i.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        module: &Self::Module,
        kernel: usize,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        stream: Stream,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError>;
    /// Stream-ordered allocation on this device.
    fn alloc(&self, bytes: usize, stream: Stream) -> Result<u64, CudaError>;
    /// Stream-ordered free (errors cannot be acted on).
    fn free(&self, ptr: u64, stream: Stream);
    /// Host to device, ordered on `stream`.
    ///
    /// # Safety
    /// `src` holds `bytes` readable bytes (a copy from pageable memory has
    /// consumed them when it returns).
    unsafe fn copy_htod(
        &self,
        dst: u64,
        src: *const c_void,
        bytes: usize,
        stream: Stream,
    ) -> Result<(), CudaError>;
    /// Device to host, ordered on `stream`.
    ///
    /// # Safety
    /// `dst` holds `bytes` writable bytes until `stream` is synchronised.
    unsafe fn copy_dtoh(
        &self,
        dst: *mut c_void,
        src: u64,
        bytes: usize,
        stream: Stream,
    ) -> Result<(), CudaError>;
    /// Waits on the host for the work queued on `stream`.
    fn sync(&self, stream: Stream) -> Result<(), CudaError>;
    /// Makes `waiter` wait (on the device) for the work queued on `on` so
    /// far.
    fn join(&self, waiter: Stream, on: Stream) -> Result<(), CudaError>;
}

/// Launches on one stream through one module: the plan's [`Device`].
pub struct Launcher<'a, G: Gpu> {
    pub gpu: &'a G,
    pub module: &'a G::Module,
    pub stream: Stream,
}

impl<G: Gpu> Device for Launcher<'_, G> {
    fn launch(
        &self,
        kernel: usize,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        self.gpu.launch(
            self.module,
            kernel,
            grid,
            block,
            shared,
            self.stream,
            params,
        )
    }

    fn alloc(&self, bytes: usize) -> Result<u64, CudaError> {
        self.gpu.alloc(bytes, self.stream)
    }

    fn free(&self, ptr: u64) {
        self.gpu.free(ptr, self.stream);
    }

    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), CudaError> {
        // SAFETY: `out` is writable and outlives the synchronisation below.
        unsafe {
            self.gpu
                .copy_dtoh(out.as_mut_ptr() as *mut c_void, src, out.len(), self.stream)?
        };
        self.gpu.sync(self.stream)
    }

    fn write(&self, dst: u64, data: &[u8]) -> Result<(), CudaError> {
        // SAFETY: `data` is readable; a pageable copy has consumed it when
        // the call returns.
        unsafe {
            self.gpu
                .copy_htod(dst, data.as_ptr() as *const c_void, data.len(), self.stream)
        }
    }
}

/// How one entry parameter is passed on a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Scalar,
    /// A device array: its pointer, in place.
    Device,
    /// A NumPy array: copied to a device buffer of `bytes`, and back when
    /// the function writes it.
    Host {
        bytes: usize,
        written: bool,
    },
}

/// Runs a callback call of the host code: the site, its arguments, and the
/// device to copy views through.
pub type CallbackRunner<'a> =
    &'a dyn Fn(&dyn Device, usize, &[CallbackValue]) -> Result<(), CudaError>;

/// One compiled specialization, loaded on its device.
pub struct Specialization<G: Gpu> {
    pub gpu: &'static G,
    pub module: G::Module,
    pub plan: Plan,
    /// Per host parameter: (argument index, how it is passed).
    pub params: Vec<(usize, Pass)>,
}

impl<G: Gpu> Specialization<G> {
    /// Loads `cubin` (the plan's kernels) in `gpu`'s context.
    pub fn load(
        gpu: &'static G,
        cubin: &[u8],
        plan: Plan,
        params: Vec<(usize, Pass)>,
    ) -> Result<Specialization<G>, CudaError> {
        let symbols: Vec<String> = plan.kernels().iter().map(|k| k.symbol.clone()).collect();
        let shared: Vec<u32> = plan.kernels().iter().map(|k| k.shared).collect();
        let module = gpu.load_module(cubin, &symbols, &shared)?;
        Ok(Specialization {
            gpu,
            module,
            plan,
            params,
        })
    }

    /// One call: `vals[i]` holds argument i's device pointer, NumPy host
    /// pointer or scalar slot. Queued on `streams.launch`, joined with
    /// `streams.joins`; returns when the NumPy arguments it writes are
    /// copied back (device arrays only: when the work is queued).
    pub fn run(
        &self,
        vals: &[u64],
        streams: &Streams,
        callbacks: Option<CallbackRunner<'_>>,
    ) -> Result<(), CudaError> {
        let gpu = self.gpu;
        let stream = streams.launch;
        gpu.bind()?;
        for &s in &streams.joins {
            gpu.join(stream, s)?;
        }
        let mut inline = [0u64; 64];
        let mut heap;
        let args: &mut [u64] = if self.params.len() <= inline.len() {
            &mut inline[..self.params.len()]
        } else {
            heap = vec![0u64; self.params.len()];
            &mut heap
        };
        // (device copy, host pointer, bytes, written)
        let mut staged: Vec<(u64, u64, usize, bool)> = Vec::new();
        let result = (|| -> Result<(), CudaError> {
            for (j, &(ai, pass)) in self.params.iter().enumerate() {
                let v = *vals
                    .get(ai)
                    .ok_or_else(|| CudaError::Plan(format!("no argument #{ai}")))?;
                args[j] = match pass {
                    Pass::Scalar | Pass::Device => v,
                    Pass::Host { bytes, written } => {
                        // the same NumPy array passed twice shares one copy
                        let same = staged.iter().position(|e| e.1 == v && e.2 == bytes);
                        if let Some(k) = same {
                            staged[k].3 |= written;
                            args[j] = staged[k].0;
                            continue;
                        }
                        let d = gpu.alloc(bytes, stream)?;
                        staged.push((d, v, bytes, written));
                        // SAFETY: the caller keeps the NumPy array of
                        // `bytes` bytes alive for the call.
                        unsafe { gpu.copy_htod(d, v as usize as *const c_void, bytes, stream)? };
                        d
                    }
                };
            }
            let launcher = Launcher {
                gpu,
                module: &self.module,
                stream,
            };
            match callbacks {
                Some(cb) => self
                    .plan
                    .run_calling(&launcher, args, &|site, v| cb(&launcher, site, v))?,
                None => self.plan.run(&launcher, args)?,
            }
            for &(d, host, bytes, written) in &staged {
                if written {
                    // SAFETY: a writeable NumPy array of `bytes` bytes; the
                    // stream is synchronised below before returning.
                    unsafe { gpu.copy_dtoh(host as usize as *mut c_void, d, bytes, stream)? };
                }
            }
            if !staged.is_empty() {
                gpu.sync(stream).map_err(|e| {
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
            gpu.free(d, stream);
        }
        // the other streams' later work sees this call's writes
        let mut joined = Ok(());
        for &s in &streams.joins {
            joined = joined.and(gpu.join(s, stream));
        }
        result.and(joined)
    }
}

#[cfg(test)]
mod tests;
