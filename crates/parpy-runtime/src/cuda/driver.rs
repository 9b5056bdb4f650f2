//! The CUDA driver API through cudarc's `sys` module: initialisation,
//! primary contexts, modules loaded from cubins, memory, launches.
//!
//! `libcuda.so.1` is opened first with `RTLD_GLOBAL` (a missing driver is an
//! error, not cudarc's panic), and every call is wrapped in [`no_panic`].

use std::ffi::{c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

use cudarc::driver::sys;

pub use super::call::Stream;
use super::call::{Gpu, Launch};
use super::placement::Driver;
use super::plan::KernelInfo;
use super::{no_panic, open_global, CudaError};

/// `CUresult` to `Result`, with the driver's name and description.
pub fn check(call: &str, r: sys::CUresult) -> Result<(), CudaError> {
    if r == sys::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let (mut name, mut desc): (*const std::ffi::c_char, *const std::ffi::c_char) =
        (std::ptr::null(), std::ptr::null());
    // SAFETY: out-pointers to static strings owned by the driver.
    unsafe {
        sys::cuGetErrorName(r, &mut name);
        sys::cuGetErrorString(r, &mut desc);
    }
    let s = |p: *const std::ffi::c_char| {
        if p.is_null() {
            format!("{r:?}")
        } else {
            // SAFETY: NUL-terminated static string.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    Err(CudaError::Driver {
        call: call.to_string(),
        name: s(name),
        msg: s(desc),
        code: r as u32,
    })
}

/// The driver, initialised once: the number of devices.
pub fn init() -> Result<i32, CudaError> {
    init_once().clone()
}

/// [`init`] without copying its error (for the cached-call path).
fn init_once() -> &'static Result<i32, CudaError> {
    static INIT: OnceLock<Result<i32, CudaError>> = OnceLock::new();
    INIT.get_or_init(|| {
        let lib = ["libcuda.so.1", "libcuda.so"]
            .iter()
            .find_map(|n| open_global(std::ffi::OsStr::new(n)).ok());
        if lib.is_none() {
            return Err(CudaError::NoDriver(
                "no NVIDIA driver (libcuda.so.1 not found)".into(),
            ));
        }
        // The library stays loaded (RTLD_NODELETE); the handle may go.
        drop(lib);
        no_panic("the CUDA driver", || {
            // SAFETY: plain driver calls with valid out-pointers.
            if !unsafe { sys::is_culib_present() } {
                return Err(CudaError::NoDriver("libcuda.so.1 cannot be loaded".into()));
            }
            check("cuInit", unsafe { sys::cuInit(0) })
                .map_err(|e| CudaError::NoDriver(e.to_string()))?;
            let mut n = 0;
            check("cuDeviceGetCount", unsafe { sys::cuDeviceGetCount(&mut n) })?;
            Ok(n)
        })
    })
}

/// The driver's CUDA version (e.g. 13000), once initialised.
pub fn driver_version() -> Result<i32, CudaError> {
    init()?;
    no_panic("cuDriverGetVersion", || {
        let mut v = 0;
        // SAFETY: valid out-pointer.
        check("cuDriverGetVersion", unsafe {
            sys::cuDriverGetVersion(&mut v)
        })?;
        Ok(v)
    })
}

/// Name and architecture (`major * 10 + minor`) of device `ordinal`,
/// without creating a context (for backend resolution).
pub fn device_info(ordinal: i32) -> Result<(String, u32), CudaError> {
    init()?;
    no_panic("querying a CUDA device", || {
        let (_, name, arch) = query_device(ordinal)?;
        Ok((name, arch))
    })
}

/// The handle, name and architecture (`major * 10 + minor`) of device
/// `ordinal` (the driver is initialised; callers catch panics).
fn query_device(ordinal: i32) -> Result<(sys::CUdevice, String, u32), CudaError> {
    let mut dev: sys::CUdevice = 0;
    // SAFETY: valid out-pointers.
    check("cuDeviceGet", unsafe {
        sys::cuDeviceGet(&mut dev, ordinal)
    })?;
    let (mut major, mut minor) = (0, 0);
    check("cuDeviceGetAttribute", unsafe {
        sys::cuDeviceGetAttribute(
            &mut major,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            dev,
        )
    })?;
    check("cuDeviceGetAttribute", unsafe {
        sys::cuDeviceGetAttribute(
            &mut minor,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            dev,
        )
    })?;
    let mut name = [0 as std::ffi::c_char; 256];
    check("cuDeviceGetName", unsafe {
        sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, dev)
    })?;
    // SAFETY: the driver wrote a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    Ok((dev, name, (major.max(0) * 10 + minor.max(0)) as u32))
}

/// One device's primary context, retained for the life of the process.
pub struct Context {
    pub ordinal: i32,
    pub name: String,
    /// `major * 10 + minor` (90 on an H100/H200).
    pub arch: u32,
    ctx: sys::CUcontext,
    /// parpy's own stream-ordered memory pool on this device (device
    /// temporaries, staged NumPy arrays), which keeps freed memory for reuse
    /// (release threshold: unlimited); null when the driver would not make
    /// one, then allocations come from the device's default pool.
    pool: sys::CUmemoryPool,
}

// SAFETY: a CUcontext handle may be used from any thread (cuCtxSetCurrent).
unsafe impl Send for Context {}
// SAFETY: as above; the context itself is immutable here.
unsafe impl Sync for Context {}

/// The contexts retained so far.
static CTXS: Mutex<Vec<(i32, &'static Context)>> = Mutex::new(Vec::new());

/// Waits for all work on every device parpy has used (`parpy.sync()`);
/// does nothing when parpy never touched a GPU in this process.
pub fn sync_all() -> Result<(), CudaError> {
    let all: Vec<&'static Context> = CTXS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|(_, c)| *c)
        .collect();
    for c in all {
        c.bind()?;
        no_panic("cuCtxSynchronize", || {
            // SAFETY: the context is current.
            check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })
        })?;
    }
    Ok(())
}

/// The primary context of device `ordinal` (retained once, never released).
pub fn context(ordinal: i64) -> Result<&'static Context, CudaError> {
    let n = init()?;
    if ordinal < 0 || ordinal >= n as i64 {
        return Err(CudaError::NoDriver(format!(
            "there is no CUDA device {ordinal} (this machine has {n})"
        )));
    }
    let ordinal = ordinal as i32;
    let mut all = CTXS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, c)) = all.iter().find(|(o, _)| *o == ordinal) {
        return Ok(c);
    }
    let c = no_panic("creating a CUDA context", || {
        // `ordinal` is in range.
        let (dev, name, arch) = query_device(ordinal)?;
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        check("cuDevicePrimaryCtxRetain", unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut ctx, dev)
        })?;
        Ok(Context {
            ordinal,
            name,
            arch,
            ctx,
            pool: make_pool(ordinal),
        })
    })?;
    let c: &'static Context = Box::leak(Box::new(c));
    all.push((ordinal, c));
    Ok(c)
}

/// A memory pool on device `ordinal` that never gives memory back to the
/// driver on its own: the default pool's release threshold is 0, so every
/// synchronisation returned a call's temporaries and the next call mapped
/// them again. Null when the pool cannot be made.
fn make_pool(ordinal: i32) -> sys::CUmemoryPool {
    // SAFETY: zeroed props are valid (no handle types, default size); the
    // location's id is the first member (an int) of its union.
    unsafe {
        let mut props: sys::CUmemPoolProps = std::mem::zeroed();
        props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        *(std::ptr::addr_of_mut!(props.location.__bindgen_anon_1) as *mut i32) = ordinal;
        let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
        if sys::cuMemPoolCreate(&mut pool, &props) != sys::CUresult::CUDA_SUCCESS {
            return std::ptr::null_mut();
        }
        let mut keep: u64 = u64::MAX;
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            &mut keep as *mut u64 as *mut c_void,
        );
        pool
    }
}

impl Context {
    /// Stream-ordered allocation from parpy's pool on this device (the
    /// context must be current).
    pub fn alloc(&self, bytes: usize, stream: Stream) -> Result<u64, CudaError> {
        if self.pool.is_null() {
            return alloc(bytes, stream);
        }
        let mut p: sys::CUdeviceptr = 0;
        // SAFETY: valid out-pointer; a pool of this context's device.
        check("cuMemAllocFromPoolAsync", unsafe {
            sys::cuMemAllocFromPoolAsync(&mut p, bytes.max(1), self.pool, stream as sys::CUstream)
        })?;
        Ok(p)
    }

    /// Makes this context current on the calling thread.
    #[inline]
    pub fn bind(&self) -> Result<(), CudaError> {
        // SAFETY: a retained primary context.
        check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(self.ctx) })
    }

    /// Loads a cubin and looks up `symbols` (the kernels, in plan order).
    /// `dyn_shared[i]` bytes of dynamic shared memory above 48 KiB are
    /// enabled per kernel.
    pub fn load_module(&self, cubin: &[u8], kernels: &[KernelInfo]) -> Result<Module, CudaError> {
        let symbols: Vec<String> = kernels.iter().map(|k| k.symbol.clone()).collect();
        self.bind()?;
        no_panic("loading a CUDA module", || {
            let mut m: sys::CUmodule = std::ptr::null_mut();
            // SAFETY: the image is a complete cubin held for the call.
            check("cuModuleLoadData", unsafe {
                sys::cuModuleLoadData(&mut m, cubin.as_ptr() as *const c_void)
            })?;
            let mut funcs = Vec::with_capacity(symbols.len());
            for (i, s) in symbols.iter().enumerate() {
                let c = CString::new(s.as_str())
                    .map_err(|_| CudaError::Plan(format!("bad kernel name {s:?}")))?;
                let mut f: sys::CUfunction = std::ptr::null_mut();
                // SAFETY: loaded module, valid C string.
                check(&format!("cuModuleGetFunction({s})"), unsafe {
                    sys::cuModuleGetFunction(&mut f, m, c.as_ptr())
                })?;
                let shm = kernels[i].shared;
                if kernels[i].non_portable_cluster() {
                    // SAFETY: a valid function handle.
                    check("cuFuncSetAttribute", unsafe {
                        sys::cuFuncSetAttribute(
                            f,
                            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                            1,
                        )
                    })?;
                }
                if shm > 48 * 1024 {
                    // SAFETY: a valid function handle.
                    check("cuFuncSetAttribute", unsafe {
                        sys::cuFuncSetAttribute(
                            f,
                            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            shm as i32,
                        )
                    })?;
                }
                funcs.push(f);
            }
            Ok(Module {
                module: m,
                funcs,
                names: symbols,
            })
        })
    }
}

/// A loaded module with its kernels (kept for the life of the process).
pub struct Module {
    #[allow(dead_code)]
    module: sys::CUmodule,
    funcs: Vec<sys::CUfunction>,
    pub names: Vec<String>,
}

// SAFETY: module and function handles are usable from any thread with the
// context current.
unsafe impl Send for Module {}
// SAFETY: as above; launches do not mutate the handles.
unsafe impl Sync for Module {}

/// An instantiated CUDA graph and its kernel nodes, in launch order.
pub struct Graph {
    exec: sys::CUgraphExec,
    graph: sys::CUgraph,
    nodes: Vec<sys::CUgraphNode>,
}

// SAFETY: graph handles are usable from any thread with the context
// current; the specialization serializes their use.
unsafe impl Send for Graph {}

/// The kernel node parameters of `l`; `slots` holds the pointers to its
/// argument values (the driver copies them when the node is set).
fn node_params(
    module: &Module,
    l: &Launch,
    slots: &mut Vec<*mut c_void>,
    values: &mut [u64],
) -> Result<sys::CUDA_KERNEL_NODE_PARAMS, CudaError> {
    let f = *module
        .funcs
        .get(l.kernel)
        .ok_or_else(|| CudaError::Plan(format!("no kernel #{} in the module", l.kernel)))?;
    *slots = values
        .iter_mut()
        .map(|v| v as *mut u64 as *mut c_void)
        .collect();
    Ok(sys::CUDA_KERNEL_NODE_PARAMS {
        func: f,
        gridDimX: l.grid[0],
        gridDimY: l.grid[1],
        gridDimZ: l.grid[2],
        blockDimX: l.block[0],
        blockDimY: l.block[1],
        blockDimZ: l.block[2],
        sharedMemBytes: l.shared,
        kernelParams: slots.as_mut_ptr(),
        extra: std::ptr::null_mut(),
        kern: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
    })
}

impl Gpu for Context {
    type Module = Module;
    type Graph = Graph;

    fn ordinal(&self) -> i64 {
        self.ordinal as i64
    }

    fn arch(&self) -> u32 {
        self.arch
    }

    fn bind(&self) -> Result<(), CudaError> {
        Context::bind(self)
    }

    fn load_module(&self, cubin: &[u8], kernels: &[KernelInfo]) -> Result<Module, CudaError> {
        Context::load_module(self, cubin, kernels)
    }

    fn graph_build(&self, module: &Module, launches: &[Launch]) -> Result<Graph, CudaError> {
        no_panic("building a CUDA graph", || {
            let mut graph: sys::CUgraph = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the context is current.
            check("cuGraphCreate", unsafe {
                sys::cuGraphCreate(&mut graph, 0)
            })?;
            let mut g = Graph {
                exec: std::ptr::null_mut(),
                graph,
                nodes: Vec::with_capacity(launches.len()),
            };
            let built = (|| {
                for l in launches {
                    let mut values = l.params.clone();
                    let mut slots = Vec::new();
                    let p = node_params(module, l, &mut slots, &mut values)?;
                    let mut node: sys::CUgraphNode = std::ptr::null_mut();
                    let deps = g.nodes.last().map_or(std::ptr::null(), |n| n as *const _);
                    // SAFETY: a graph of this context; `p` points at live
                    // parameter values, copied by the call.
                    check("cuGraphAddKernelNode", unsafe {
                        sys::cuGraphAddKernelNode_v2(
                            &mut node,
                            g.graph,
                            deps,
                            usize::from(!g.nodes.is_empty()),
                            &p,
                        )
                    })?;
                    g.nodes.push(node);
                }
                // SAFETY: a complete graph; valid out-pointer.
                check("cuGraphInstantiateWithFlags", unsafe {
                    sys::cuGraphInstantiateWithFlags(&mut g.exec, g.graph, 0)
                })
            })();
            match built {
                Ok(()) => Ok(g),
                Err(e) => {
                    self.graph_destroy(g);
                    Err(e)
                }
            }
        })
    }

    fn graph_update(
        &self,
        module: &Module,
        graph: &mut Graph,
        node: usize,
        launch: &Launch,
    ) -> Result<(), CudaError> {
        let n = *graph
            .nodes
            .get(node)
            .ok_or_else(|| CudaError::Plan(format!("no node #{node} in the CUDA graph")))?;
        let mut values = launch.params.clone();
        let mut slots = Vec::new();
        let p = node_params(module, launch, &mut slots, &mut values)?;
        no_panic("updating a CUDA graph", || {
            // SAFETY: an instantiated graph and one of its kernel nodes, of
            // the same kernel; `p` points at live values.
            check("cuGraphExecKernelNodeSetParams", unsafe {
                sys::cuGraphExecKernelNodeSetParams_v2(graph.exec, n, &p)
            })
        })
    }

    fn graph_launch(&self, graph: &Graph, stream: Stream) -> Result<(), CudaError> {
        no_panic("launching a CUDA graph", || {
            // SAFETY: an instantiated graph of this context.
            check("cuGraphLaunch", unsafe {
                sys::cuGraphLaunch(graph.exec, stream as sys::CUstream)
            })
        })
    }

    fn graph_destroy(&self, graph: Graph) {
        let _ = no_panic("destroying a CUDA graph", || {
            // SAFETY: handles this graph owns (null ones skipped).
            unsafe {
                if !graph.exec.is_null() {
                    sys::cuGraphExecDestroy(graph.exec);
                }
                if !graph.graph.is_null() {
                    sys::cuGraphDestroy(graph.graph);
                }
            }
            Ok(())
        });
    }

    fn launch(
        &self,
        module: &Module,
        kernel: usize,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        stream: Stream,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        let f = *module
            .funcs
            .get(kernel)
            .ok_or_else(|| CudaError::Plan(format!("no kernel #{kernel} in the module")))?;
        // SAFETY: `params` points at one value per kernel parameter, of the
        // parameter's size (the plan packs them from the kernel signature).
        let r = unsafe {
            sys::cuLaunchKernel(
                f,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                shared,
                stream as sys::CUstream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        check("cuLaunchKernel", r)
    }

    fn alloc(&self, bytes: usize, stream: Stream) -> Result<u64, CudaError> {
        Context::alloc(self, bytes, stream)
    }

    fn free(&self, ptr: u64, stream: Stream) {
        free(ptr, stream);
    }

    unsafe fn copy_htod(
        &self,
        dst: u64,
        src: *const c_void,
        bytes: usize,
        stream: Stream,
    ) -> Result<(), CudaError> {
        // SAFETY: the caller's contract.
        unsafe { copy_htod(dst, src, bytes, stream) }
    }

    unsafe fn copy_dtoh(
        &self,
        dst: *mut c_void,
        src: u64,
        bytes: usize,
        stream: Stream,
    ) -> Result<(), CudaError> {
        // SAFETY: the caller's contract.
        unsafe { copy_dtoh(dst, src, bytes, stream) }
    }

    fn sync(&self, stream: Stream) -> Result<(), CudaError> {
        sync(stream)
    }

    fn join(&self, waiter: Stream, on: Stream) -> Result<(), CudaError> {
        no_panic("joining CUDA streams", || {
            let mut ev: sys::CUevent = std::ptr::null_mut();
            // SAFETY: valid out-pointer; the context is current.
            check("cuEventCreate", unsafe {
                sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
            })?;
            // SAFETY: a fresh event; streams of this context (or 0/1/2).
            let r = check("cuEventRecord", unsafe {
                sys::cuEventRecord(ev, on as sys::CUstream)
            })
            .and_then(|()| {
                check("cuStreamWaitEvent", unsafe {
                    sys::cuStreamWaitEvent(waiter as sys::CUstream, ev, 0)
                })
            });
            // the wait keeps what it needs: the event may go now
            // SAFETY: an event of ours, not used again.
            unsafe { sys::cuEventDestroy_v2(ev) };
            r
        })
    }
}

/// The real driver, for [`super::placement::place`].
pub struct Cuda;

impl Driver for Cuda {
    fn pointer_device(&self, ptr: u64) -> Result<i64, CudaError> {
        pointer_device(ptr)
    }
}

/// The device that owns a device pointer (for `__cuda_array_interface__`
/// arguments), or an error when it is not a device pointer. Asked in the
/// caller's current context; without one, in device 0's.
pub fn pointer_device(ptr: u64) -> Result<i64, CudaError> {
    init()?;
    let ask = || {
        no_panic("cuPointerGetAttribute", || {
            let mut ord: i32 = -1;
            // SAFETY: valid out-pointer of the attribute's size.
            let r = unsafe {
                sys::cuPointerGetAttribute(
                    &mut ord as *mut i32 as *mut c_void,
                    sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                    ptr,
                )
            };
            Ok((r, ord))
        })
    };
    let (mut r, mut ord) = ask()?;
    if r == sys::CUresult::CUDA_ERROR_INVALID_CONTEXT {
        context(0)?.bind()?;
        (r, ord) = ask()?;
    }
    check("cuPointerGetAttribute", r)?;
    Ok(ord as i64)
}

/// [`pointer_device`] for the cached-call key: no driver call on a machine
/// with one GPU; -1 when the driver is not usable or the pointer unknown
/// (a key no build has, so the miss path says what is wrong).
pub fn pointer_device_or_unknown(ptr: u64) -> i64 {
    match init_once() {
        Ok(1) => 0,
        Ok(_) => pointer_device(ptr).unwrap_or(-1),
        Err(_) => -1,
    }
}

/// Stream-ordered allocation.
pub fn alloc(bytes: usize, stream: Stream) -> Result<u64, CudaError> {
    let mut p: sys::CUdeviceptr = 0;
    // SAFETY: valid out-pointer; the caller's context is current.
    check("cuMemAllocAsync", unsafe {
        sys::cuMemAllocAsync(&mut p, bytes.max(1), stream as sys::CUstream)
    })?;
    Ok(p)
}

/// Stream-ordered free (errors are ignored: nothing can be done about them).
pub fn free(ptr: u64, stream: Stream) {
    // SAFETY: a pointer from `alloc`.
    unsafe {
        sys::cuMemFreeAsync(ptr, stream as sys::CUstream);
    }
}

/// Host to device.
///
/// # Safety
/// `src` must hold `bytes` readable bytes until the stream syncs.
pub unsafe fn copy_htod(
    dst: u64,
    src: *const c_void,
    bytes: usize,
    stream: Stream,
) -> Result<(), CudaError> {
    // SAFETY: the caller passes `bytes` readable bytes at `src`.
    check("cuMemcpyHtoDAsync", unsafe {
        sys::cuMemcpyHtoDAsync_v2(dst, src, bytes, stream as sys::CUstream)
    })
}

/// Device to host.
///
/// # Safety
/// `dst` must hold `bytes` writable bytes until the stream syncs.
pub unsafe fn copy_dtoh(
    dst: *mut c_void,
    src: u64,
    bytes: usize,
    stream: Stream,
) -> Result<(), CudaError> {
    // SAFETY: the caller passes `bytes` writable bytes at `dst`.
    check("cuMemcpyDtoHAsync", unsafe {
        sys::cuMemcpyDtoHAsync_v2(dst, src, bytes, stream as sys::CUstream)
    })
}

/// Device to device.
///
/// # Safety
/// `src` and `dst` must be device allocations holding `bytes` bytes.
pub unsafe fn copy_dtod(dst: u64, src: u64, bytes: usize, stream: Stream) -> Result<(), CudaError> {
    // SAFETY: the caller passes two device ranges of `bytes` bytes.
    check("cuMemcpyDtoDAsync", unsafe {
        sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream as sys::CUstream)
    })
}

/// Sets `bytes` bytes at device address `dst` to zero.
///
/// # Safety
/// `dst` must be a device allocation holding `bytes` bytes.
pub unsafe fn zero(dst: u64, bytes: usize, stream: Stream) -> Result<(), CudaError> {
    // SAFETY: the caller passes a device range of `bytes` bytes.
    check("cuMemsetD8Async", unsafe {
        sys::cuMemsetD8Async(dst, 0, bytes, stream as sys::CUstream)
    })
}

pub fn sync(stream: Stream) -> Result<(), CudaError> {
    // SAFETY: a valid stream handle (or 0).
    check("cuStreamSynchronize", unsafe {
        sys::cuStreamSynchronize(stream as sys::CUstream)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_driver_is_an_error_not_a_panic() {
        match super::init() {
            Ok(n) => eprintln!("a CUDA driver is present with {n} devices"),
            Err(e) => {
                let m = e.to_string();
                assert!(m.contains("driver") || m.contains("CUDA"), "{m}");
            }
        }
        // Asking for a device that cannot exist is always an error.
        assert!(super::context(1 << 20).is_err());
    }
}
