//! A compiled Cuda specialization on one device, and its call: the module
//! loaded in that device's context, NumPy arguments staged through that
//! device's memory pool, the launch plan run on the call's stream (joined
//! with the other streams its arguments named, [`super::placement`]).
//!
//! Everything a device does goes through [`Gpu`]: the driver's
//! [`super::driver::Context`], or a fake in the tests that records which
//! device each allocation, module load and launch went to.

use std::ffi::c_void;
use std::sync::Mutex;

use super::placement::Streams;
use super::plan::{CallbackValue, Device, KernelInfo, Plan};
use super::CudaError;

/// A raw stream handle (`0` is the legacy default stream).
pub type Stream = u64;

/// One device: its context, memory and launches. Implementations make
/// their context current in [`Gpu::bind`]; the other calls assume it is.
pub trait Gpu: Sync + 'static {
    /// A module loaded in this device's context.
    type Module: Send + Sync;
    /// An instantiated CUDA graph of kernel launches.
    type Graph: Send;
    fn ordinal(&self) -> i64;
    /// `major * 10 + minor`.
    fn arch(&self) -> u32;
    fn bind(&self) -> Result<(), CudaError>;
    /// Loads a cubin and looks up the plan's kernels (in plan order), with
    /// their dynamic shared memory; a kernel with
    /// [`KernelInfo::non_portable_cluster`] is allowed a non-portable
    /// cluster size.
    fn load_module(&self, cubin: &[u8], kernels: &[KernelInfo]) -> Result<Self::Module, CudaError>;
    /// Builds and instantiates a graph of one kernel node per launch, each
    /// depending on the one before (the order of the plan).
    fn graph_build(
        &self,
        module: &Self::Module,
        launches: &[Launch],
    ) -> Result<Self::Graph, CudaError>;
    /// Sets the parameters (grid, block, arguments) of kernel node `node`
    /// of an instantiated graph to those of `launch`.
    fn graph_update(
        &self,
        module: &Self::Module,
        graph: &mut Self::Graph,
        node: usize,
        launch: &Launch,
    ) -> Result<(), CudaError>;
    /// Launches an instantiated graph on `stream`.
    fn graph_launch(&self, graph: &Self::Graph, stream: Stream) -> Result<(), CudaError>;
    /// Destroys an instantiated graph (errors cannot be acted on).
    fn graph_destroy(&self, graph: Self::Graph);
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

/// One launch of a call, as a CUDA graph's kernel node holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// Index into [`Plan::kernels`].
    pub kernel: usize,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    /// Each parameter's value in an 8-byte slot ([`super::plan::pack`]).
    pub params: Vec<u64>,
}

impl Launch {
    /// The same kernel with the same grid: a node this launch can update.
    fn same_node(&self, o: &Launch) -> bool {
        self.kernel == o.kernel
            && self.grid == o.grid
            && self.block == o.block
            && self.shared == o.shared
            && self.params.len() == o.params.len()
    }
}

/// A specialization's CUDA graph (`use_cuda_graphs`): the launches it was
/// built from, and the temporaries (and bounds record) the plan allocates,
/// kept for the graph's life so that replays see the same pointers.
struct GraphState<G: Gpu> {
    graph: Option<(G::Graph, Vec<Launch>)>,
    /// Device memory handed out by [`Recorder::alloc`], in request order.
    memory: Vec<(u64, usize)>,
    /// The stream of the last call (a later call on another stream waits
    /// for it: replays share the temporaries).
    stream: Option<Stream>,
}

impl<G: Gpu> GraphState<G> {
    fn new() -> GraphState<G> {
        GraphState {
            graph: None,
            memory: Vec::new(),
            stream: None,
        }
    }
}

/// The plan's [`Device`] while a graph call records its launches: memory
/// comes from the graph's own (allocated on the first call), launches are
/// collected, copies (the bounds record's) go to the device at once.
struct Recorder<'a, G: Gpu> {
    launcher: &'a Launcher<'a, G>,
    memory: std::cell::RefCell<&'a mut Vec<(u64, usize)>>,
    next: std::cell::Cell<usize>,
    launches: std::cell::RefCell<Vec<Launch>>,
}

impl<G: Gpu> Device for Recorder<'_, G> {
    fn launch(
        &self,
        kernel: usize,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        // SAFETY: the plan's slots, one 8-byte value per parameter.
        let params = params
            .iter()
            .map(|&p| unsafe { *(p as *const u64) })
            .collect();
        self.launches.borrow_mut().push(Launch {
            kernel,
            grid,
            block,
            shared,
            params,
        });
        Ok(())
    }

    fn alloc(&self, bytes: usize) -> Result<u64, CudaError> {
        let i = self.next.get();
        self.next.set(i + 1);
        let mut memory = self.memory.borrow_mut();
        match memory.get(i) {
            Some(&(p, b)) if b == bytes => Ok(p),
            Some(_) => Err(CudaError::Plan(
                "a CUDA graph's temporaries changed between calls".into(),
            )),
            None => {
                let p = self.launcher.alloc(bytes)?;
                memory.push((p, bytes));
                Ok(p)
            }
        }
    }

    fn free(&self, _ptr: u64) {}

    fn write(&self, dst: u64, data: &[u8]) -> Result<(), CudaError> {
        self.launcher.write(dst, data)
    }

    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), CudaError> {
        self.launcher.read(src, out)
    }
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
    /// `use_cuda_graphs` and a plan that is a pure launch sequence
    /// ([`Plan::graph_blocker`]): calls replay a CUDA graph.
    graph: Option<Mutex<GraphState<G>>>,
}

impl<G: Gpu> Specialization<G> {
    /// Loads `cubin` (the plan's kernels) in `gpu`'s context; `graphs`:
    /// replay the launches of each call as a CUDA graph when the plan
    /// allows it (`use_cuda_graphs`; otherwise the compiler has warned).
    pub fn load(
        gpu: &'static G,
        cubin: &[u8],
        plan: Plan,
        params: Vec<(usize, Pass)>,
        graphs: bool,
    ) -> Result<Specialization<G>, CudaError> {
        plan.check_device(gpu.arch(), gpu.ordinal())?;
        let module = gpu.load_module(cubin, plan.kernels())?;
        let graph =
            (graphs && plan.graph_blocker().is_none()).then(|| Mutex::new(GraphState::new()));
        Ok(Specialization {
            gpu,
            module,
            plan,
            params,
            graph,
        })
    }

    /// Whether calls replay a CUDA graph.
    pub fn uses_graph(&self) -> bool {
        self.graph.is_some()
    }

    /// A call's launches as a CUDA graph: recorded by running the plan, then
    /// the graph of the first call replayed, its kernel nodes updated where
    /// the arguments (pointers, scalars) differ, or a new graph built when
    /// the launches differ (another kernel, grid or count).
    fn run_graph(
        &self,
        state: &Mutex<GraphState<G>>,
        launcher: &Launcher<'_, G>,
        args: &[u64],
    ) -> Result<(), CudaError> {
        let gpu = self.gpu;
        let mut st = state
            .lock()
            .map_err(|_| CudaError::Plan("a CUDA graph's lock is poisoned".into()))?;
        let st = &mut *st;
        if let Some(prev) = st.stream.filter(|&s| s != launcher.stream) {
            gpu.join(launcher.stream, prev)?;
        }
        st.stream = Some(launcher.stream);
        let rec = Recorder {
            launcher,
            memory: std::cell::RefCell::new(&mut st.memory),
            next: std::cell::Cell::new(0),
            launches: std::cell::RefCell::new(Vec::new()),
        };
        let graph = &mut st.graph;
        self.plan.run_recorded(&rec, args, &mut || {
            let launches = rec.launches.take();
            if launches.is_empty() {
                return Ok(());
            }
            let reusable = graph.as_ref().is_some_and(|(_, old)| {
                old.len() == launches.len()
                    && old.iter().zip(&launches).all(|(a, b)| a.same_node(b))
            });
            if reusable {
                if let Some((g, old)) = graph.as_mut() {
                    for (i, l) in launches.iter().enumerate() {
                        if old[i] != *l {
                            gpu.graph_update(&self.module, g, i, l)?;
                            old[i] = l.clone();
                        }
                    }
                }
            } else {
                if let Some((g, _)) = graph.take() {
                    gpu.graph_destroy(g);
                }
                let g = gpu.graph_build(&self.module, &launches)?;
                *graph = Some((g, launches));
            }
            match graph {
                Some((g, _)) => gpu.graph_launch(g, launcher.stream),
                None => Ok(()),
            }
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
            match (callbacks, &self.graph) {
                (Some(cb), _) => self
                    .plan
                    .run_calling(&launcher, args, &|site, v| cb(&launcher, site, v))?,
                (None, Some(state)) => self.run_graph(state, &launcher, args)?,
                (None, None) => self.plan.run(&launcher, args)?,
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

impl<G: Gpu> Drop for Specialization<G> {
    /// A graph's memory outlives its last replay: wait for it, then free.
    fn drop(&mut self) {
        let Some(state) = self.graph.take() else {
            return;
        };
        let Ok(st) = state.into_inner() else {
            return;
        };
        if st.graph.is_none() && st.memory.is_empty() {
            return;
        }
        if self.gpu.bind().is_err() {
            return;
        }
        let stream = st.stream.unwrap_or(0);
        let _ = self.gpu.sync(stream);
        if let Some((g, _)) = st.graph {
            self.gpu.graph_destroy(g);
        }
        for (p, _) in st.memory {
            self.gpu.free(p, stream);
        }
    }
}

#[cfg(test)]
mod tests;
