//! An emulated GPU for testing without one (a developer tool, not a
//! backend): a [`Gpu`] whose kernels are the generated CUDA C++ compiled for
//! the CPU against a stand-in `cuda_runtime.h` ([`HEADER`]), and whose
//! memory is host memory (its allocations are the device's pointers, as
//! the placement's [`Driver`] asks).
//!
//! With it the Cuda backend's whole call path runs here: argument staging,
//! the launch plan ([`super::plan`]: grids, parameter packing, temporaries,
//! host reads of device data, the bounds record), CUDA graphs and the
//! copies back; only the NVRTC compile and the driver are replaced. Every
//! GPU thread of a block is a fiber of one OS thread; fibers take turns in
//! a random order between barriers and blocks run in a random order (the
//! seed), so a missing barrier shows; the blocks of a thread block cluster
//! run at once, one OS thread each. What it does not model: the memory
//! consistency of a real GPU and CUDA's math library.

use std::ffi::{c_char, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::call::{Gpu, Launch, Stream};
use super::placement::Driver;
use super::plan::KernelInfo;
use super::CudaError;

/// The stand-in `cuda_runtime.h` (also what `parpy._cuda_emu` compiles a
/// printed program against).
pub const HEADER: &str = include_str!("emu.h");

/// The emulated GPU, made by the first [`install`].
static EMULATOR: std::sync::OnceLock<EmuGpu> = std::sync::OnceLock::new();
/// Whether the Cuda backend runs on it now.
static ON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on the Cuda backend of this process runs on the emulator (its
/// kernels compiled in `dir`, the first call's), its threads and blocks in
/// the order of `seed`; `None` turns it off for later builds
/// (specializations built on it stay there).
pub fn install(dir: &Path, seed: Option<u32>) {
    let emu = EMULATOR.get_or_init(|| EmuGpu::new(dir, seed.unwrap_or(0)));
    if let Some(s) = seed {
        emu.set_seed(s);
    }
    ON.store(seed.is_some(), Ordering::SeqCst);
}

/// The emulated GPU, while it is installed.
pub fn installed() -> Option<&'static EmuGpu> {
    if ON.load(Ordering::SeqCst) {
        EMULATOR.get()
    } else {
        None
    }
}

/// The headers the device code includes, as the emulator provides them.
pub const HEADERS: [(&str, &str); 3] = [
    ("cuda_runtime.h", HEADER),
    ("cuda_fp16.h", "#include \"cuda_runtime.h\"\n"),
    ("cooperative_groups.h", "#include \"cuda_runtime.h\"\n"),
];

/// The C++ compiler's flags for the kernels and the precompiled header.
/// What C++ leaves undefined is undefined in CUDA too, and NVRTC optimizes
/// on it (signed overflow: NVRTC has no `-fwrapv`), so the emulator traps
/// on every undefined behaviour the sanitizer knows (with float-to-integer
/// conversions out of range, which `-fsanitize=undefined` leaves out): a
/// kernel that has one fails the emulated tests instead of passing here and
/// giving another answer on a GPU.
const FLAGS: [&str; 8] = [
    "-std=c++17",
    "-O1",
    "-fsanitize=undefined",
    "-fsanitize=float-cast-overflow",
    "-fno-sanitize=vptr",
    "-fsanitize-undefined-trap-on-error",
    "-fPIC",
    "-w",
];

/// A line of the device code's text naming a folder of headers
/// (`opts.includes`, the working directory) for the emulator's compile.
pub const INCLUDE_LINE: &str = "// parpy-emu-include: ";

/// The compute capability the emulated device reports (an H200's).
const ARCH: u32 = 90;

/// The error of a lock a panicking thread left behind.
fn poisoned() -> CudaError {
    CudaError::Plan("the CUDA emulator's lock is poisoned".into())
}

type LaunchFn = unsafe extern "C" fn(*const u32, *mut *mut c_void) -> i32;
type SeedFn = unsafe extern "C" fn(u32);
type ErrorFn = unsafe extern "C" fn() -> *const c_char;

/// The functions of a module's library.
struct Fns {
    /// One per kernel of the plan (in plan order).
    launchers: Vec<LaunchFn>,
    /// Each kernel's thread block cluster dimensions (`[1, 1, 1]`: none).
    clusters: Vec<[u32; 3]>,
    seed: SeedFn,
    error: ErrorFn,
    /// The [`EmuGpu::set_seed`] generation this library's generator was
    /// seeded with.
    seeded: AtomicU64,
}

/// A module: the kernels compiled into a shared library.
pub struct EmuModule {
    fns: Arc<Fns>,
    // after `fns`: the library outlives the pointers into it
    _lib: libloading::Library,
}

/// A CUDA graph: its launches, replayed in order through its module's
/// functions (a graph is destroyed before its module).
pub struct EmuGraph {
    fns: Arc<Fns>,
    launches: Vec<Launch>,
}

/// The emulated device.
pub struct EmuGpu {
    /// Where the kernels are compiled (private to the user).
    dir: PathBuf,
    seed: AtomicU32,
    /// Bumped by [`EmuGpu::set_seed`]: modules reseed on their next launch.
    generation: AtomicU64,
    /// One launch at a time (a library's scheduler is global state).
    running: Mutex<()>,
    /// The allocations (start, bytes): the device's pointers.
    memory: Mutex<std::collections::BTreeMap<u64, usize>>,
}

impl EmuGpu {
    /// An emulated device compiling its kernels in `dir` (created when
    /// missing; the caller makes it private).
    pub fn new(dir: &Path, seed: u32) -> EmuGpu {
        EmuGpu {
            dir: dir.to_path_buf(),
            seed: AtomicU32::new(seed),
            generation: AtomicU64::new(1),
            running: Mutex::new(()),
            memory: Mutex::new(std::collections::BTreeMap::new()),
        }
    }

    /// Later launches run their threads and blocks in the order of `seed`.
    pub fn set_seed(&self, seed: u32) {
        self.seed.store(seed, Ordering::SeqCst);
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Compiles `code` (device code as the Cuda backend generates it) with
    /// one launcher per kernel appended; the library's path.
    fn compile(&self, code: &str, kernels: &[KernelInfo]) -> Result<PathBuf, CudaError> {
        let mut src = String::from("#include \"cuda_runtime.h\"\n");
        src.push_str(code);
        src.push('\n');
        for (i, k) in kernels.iter().enumerate() {
            src.push_str(&format!(
                "extern \"C\" int parpy_emu_launch_{i}(const unsigned int *geo, void **params) \
                 {{ return parpy_emu::launch_packed({}, geo, params); }}\n",
                k.symbol
            ));
        }
        let io = |what: &str, p: &Path, e: std::io::Error| {
            CudaError::Plan(format!(
                "the CUDA emulator could not {what} {}: {e}",
                p.display()
            ))
        };
        std::fs::create_dir_all(&self.dir).map_err(|e| io("create", &self.dir, e))?;
        let pid = std::process::id();
        let write = |path: &Path, text: &str| -> Result<(), CudaError> {
            // whole or not at all: other processes may share the folder
            let tmp = path.with_extension(format!("{pid}.tmp"));
            std::fs::write(&tmp, text).map_err(|e| io("write", &tmp, e))?;
            std::fs::rename(&tmp, path).map_err(|e| io("write", path, e))
        };
        // the headers in a folder of their version, with the main one
        // precompiled (halves each compile); another version of parpy
        // sharing the folder has its own
        let hkey = crate::cache::sha256_hex(HEADER.as_bytes());
        let hdir = self.dir.join(format!("include-{}", &hkey[..12]));
        std::fs::create_dir_all(&hdir).map_err(|e| io("create", &hdir, e))?;
        for (name, text) in HEADERS {
            let path = hdir.join(name);
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
                write(&path, text)?;
            }
        }
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
        let pch = hdir.join("cuda_runtime.h.gch");
        if !pch.exists() {
            let tmp = hdir.join(format!("cuda_runtime.h.{pid}.gch"));
            let built = std::process::Command::new(&cxx)
                .args(FLAGS)
                .args(["-x", "c++-header"])
                .arg(hdir.join("cuda_runtime.h"))
                .arg("-o")
                .arg(&tmp)
                .output();
            // without it each compile reads the header itself
            if built.is_ok_and(|o| o.status.success()) {
                let _ = std::fs::rename(&tmp, &pch);
            }
            let _ = std::fs::remove_file(&tmp);
        }
        let key = crate::cache::sha256_hex(format!("{HEADER}\n{src}").as_bytes());
        let stem = format!("kernels_{}", &key[..24]);
        let so = self.dir.join(format!("{stem}.so"));
        if so.exists() {
            return Ok(so);
        }
        let cpp = self.dir.join(format!("{stem}.{pid}.cpp"));
        write(&cpp, &src)?;
        let tmp_so = self.dir.join(format!("{stem}.{pid}.so"));
        let mut cmd = std::process::Command::new(&cxx);
        cmd.args(FLAGS).args(["-shared", "-I"]).arg(&hdir);
        // the folders of the external functions' headers (`opts.includes`)
        for dir in code.lines().filter_map(|l| l.strip_prefix(INCLUDE_LINE)) {
            cmd.arg("-I").arg(dir);
        }
        let out = cmd.arg(&cpp).arg("-o").arg(&tmp_so).output().map_err(|e| {
            CudaError::Plan(format!("the CUDA emulator could not run `{cxx}`: {e}"))
        })?;
        if !out.status.success() {
            let log = String::from_utf8_lossy(&out.stderr);
            let errors: Vec<&str> = log
                .lines()
                .filter(|l| l.contains("error"))
                .take(5)
                .collect();
            return Err(CudaError::Plan(format!(
                "Compilation of generated CUDA code failed: the CUDA emulator could not compile \
                 the kernels ({}):\n{}",
                cpp.display(),
                if errors.is_empty() {
                    log.to_string()
                } else {
                    errors.join("\n")
                }
            )));
        }
        std::fs::rename(&tmp_so, &so).map_err(|e| io("write", &so, e))?;
        Ok(so)
    }

    /// One launch through a module's functions.
    fn run(
        &self,
        fns: &Fns,
        kernel: usize,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        let f = *fns
            .launchers
            .get(kernel)
            .ok_or_else(|| CudaError::Plan(format!("the module has no kernel #{kernel}")))?;
        let _one = self.running.lock().map_err(|_| poisoned())?;
        let generation = self.generation.load(Ordering::SeqCst);
        let c = fns.clusters[kernel];
        let geo = [
            grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, c[0], c[1], c[2],
        ];
        // SAFETY: the library's own functions; `params` holds one pointer
        // per kernel parameter to a slot of at least its size (the plan's),
        // and the arrays they point at are host memory of their sizes.
        unsafe {
            if fns.seeded.swap(generation, Ordering::SeqCst) != generation {
                (fns.seed)(self.seed.load(Ordering::SeqCst));
            }
            if f(geo.as_ptr(), params.as_mut_ptr()) != 0 {
                let why = (fns.error)();
                let why = if why.is_null() {
                    "a launch failed".to_string()
                } else {
                    CStr::from_ptr(why).to_string_lossy().into_owned()
                };
                return Err(CudaError::Plan(format!(
                    "the emulated launch of kernel #{kernel} (grid {grid:?}, block {block:?}) \
                     failed: {why}"
                )));
            }
        }
        Ok(())
    }
}

impl Gpu for EmuGpu {
    type Module = EmuModule;
    type Graph = EmuGraph;

    fn ordinal(&self) -> i64 {
        0
    }

    fn arch(&self) -> u32 {
        ARCH
    }

    fn bind(&self) -> Result<(), CudaError> {
        Ok(())
    }

    /// `cubin` is the device code's text here.
    fn load_module(&self, cubin: &[u8], kernels: &[KernelInfo]) -> Result<EmuModule, CudaError> {
        let code = std::str::from_utf8(cubin)
            .map_err(|_| CudaError::Plan("the CUDA emulator takes CUDA C++ text".into()))?;
        let so = self.compile(code, kernels)?;
        let err = |e: libloading::Error| {
            CudaError::Plan(format!(
                "the CUDA emulator could not load {}: {e}",
                so.display()
            ))
        };
        // SAFETY: a library just compiled from generated code and the
        // emulator's header; loading it runs no initialiser of ours.
        let lib = unsafe { libloading::Library::new(&so) }.map_err(err)?;
        // SAFETY: the symbols the compile above defined, with these types.
        unsafe {
            let mut launchers = Vec::with_capacity(kernels.len());
            for i in 0..kernels.len() {
                let f: libloading::Symbol<'_, LaunchFn> = lib
                    .get(format!("parpy_emu_launch_{i}\0").as_bytes())
                    .map_err(err)?;
                launchers.push(*f);
            }
            let seed = *lib.get::<SeedFn>(b"parpy_emu_seed\0").map_err(err)?;
            let error = *lib.get::<ErrorFn>(b"parpy_emu_error\0").map_err(err)?;
            Ok(EmuModule {
                fns: Arc::new(Fns {
                    launchers,
                    clusters: kernels
                        .iter()
                        .map(|k| k.cluster.unwrap_or([1; 3]))
                        .collect(),
                    seed,
                    error,
                    seeded: AtomicU64::new(0),
                }),
                _lib: lib,
            })
        }
    }

    fn graph_build(&self, module: &EmuModule, launches: &[Launch]) -> Result<EmuGraph, CudaError> {
        Ok(EmuGraph {
            fns: module.fns.clone(),
            launches: launches.to_vec(),
        })
    }

    fn graph_update(
        &self,
        _: &EmuModule,
        graph: &mut EmuGraph,
        node: usize,
        launch: &Launch,
    ) -> Result<(), CudaError> {
        match graph.launches.get_mut(node) {
            Some(n) => {
                *n = launch.clone();
                Ok(())
            }
            None => Err(CudaError::Plan(format!(
                "a CUDA graph has no kernel node {node}"
            ))),
        }
    }

    fn graph_launch(&self, graph: &EmuGraph, _: Stream) -> Result<(), CudaError> {
        for l in &graph.launches {
            let mut slots = l.params.clone();
            let mut params: Vec<*mut c_void> = slots
                .iter_mut()
                .map(|s| s as *mut u64 as *mut c_void)
                .collect();
            self.run(&graph.fns, l.kernel, l.grid, l.block, l.shared, &mut params)?;
        }
        Ok(())
    }

    fn graph_destroy(&self, _: EmuGraph) {}

    fn launch(
        &self,
        module: &EmuModule,
        kernel: usize,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        _stream: Stream,
        params: &mut [*mut c_void],
    ) -> Result<(), CudaError> {
        self.run(&module.fns, kernel, grid, block, shared, params)
    }

    fn alloc(&self, bytes: usize, _: Stream) -> Result<u64, CudaError> {
        // SAFETY: plain allocation; zeroed so that a read before a write is
        // deterministic.
        let p = unsafe { libc::calloc(bytes.max(1), 1) };
        if p.is_null() {
            return Err(CudaError::Plan(format!(
                "the CUDA emulator could not allocate {bytes} bytes (CUDA_ERROR_OUT_OF_MEMORY)"
            )));
        }
        if let Ok(mut m) = self.memory.lock() {
            m.insert(p as u64, bytes);
        }
        Ok(p as u64)
    }

    fn free(&self, ptr: u64, _: Stream) {
        if let Ok(mut m) = self.memory.lock() {
            m.remove(&ptr);
        }
        // SAFETY: a pointer from `alloc`.
        unsafe { libc::free(ptr as usize as *mut c_void) }
    }

    unsafe fn copy_htod(
        &self,
        dst: u64,
        src: *const c_void,
        bytes: usize,
        _: Stream,
    ) -> Result<(), CudaError> {
        // SAFETY: the caller's contract; `dst` is memory from `alloc` (or a
        // host array) of `bytes` bytes.
        unsafe { std::ptr::copy(src as *const u8, dst as usize as *mut u8, bytes) };
        Ok(())
    }

    unsafe fn copy_dtoh(
        &self,
        dst: *mut c_void,
        src: u64,
        bytes: usize,
        _: Stream,
    ) -> Result<(), CudaError> {
        // SAFETY: as above.
        unsafe { std::ptr::copy(src as usize as *const u8, dst as *mut u8, bytes) };
        Ok(())
    }

    fn sync(&self, _: Stream) -> Result<(), CudaError> {
        Ok(())
    }

    fn join(&self, _: Stream, _: Stream) -> Result<(), CudaError> {
        Ok(())
    }
}

/// The emulated device owns the pointers of its allocations (device 0);
/// any other pointer is not device memory, as on a GPU.
impl Driver for EmuGpu {
    fn pointer_device(&self, ptr: u64) -> Result<i64, CudaError> {
        let m = self.memory.lock().map_err(|_| poisoned())?;
        match m.range(..=ptr).next_back() {
            Some((&start, &bytes)) if ptr < start + bytes.max(1) as u64 => Ok(0),
            _ => Err(CudaError::Plan(format!(
                "{ptr:#x} is not memory of the emulated device"
            ))),
        }
    }
}
