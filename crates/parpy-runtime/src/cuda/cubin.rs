//! Cubins through the disk cache: where NVRTC comes from, what identifies
//! it in a key, and the build of one cubin (NVRTC is loaded only on a
//! miss: a warm disk cache never pays its ~30 ms load).

use std::path::PathBuf;
use std::sync::OnceLock;

use super::nvrtc::{self, Nvrtc};
use super::CudaError;
use crate::cache::Outcome;
use crate::DiskCache;

/// Where NVRTC comes from and what identifies it in cache keys, found
/// without loading it: a library file's path, size and modification time,
/// or the version of an NVRTC found on the system path (which must be
/// loaded).
#[derive(Clone, Debug)]
pub struct NvrtcSource {
    pub path: Option<PathBuf>,
    pub identity: String,
}

/// The library file found by the first lookup of the process, with the
/// `$PARPY_NVRTC_PATH` it was found under: looking for the wheel again
/// costs a `stat` per `sys.path` entry on every miss.
static FOUND: OnceLock<(Option<PathBuf>, PathBuf, String)> = OnceLock::new();

impl NvrtcSource {
    /// The NVRTC to use: the one already loaded, else `$PARPY_NVRTC_PATH`,
    /// else `wheel()` (the binding's search of the NVIDIA wheels), else the
    /// system library (loaded here to learn its version).
    pub fn locate(wheel: impl FnOnce() -> Option<PathBuf>) -> Result<NvrtcSource, CudaError> {
        let env = crate::env::nvrtc_path();
        if let Some((e, p, id)) = FOUND.get() {
            if *e == env && nvrtc::loaded().is_none_or(|n| n.path.as_deref() == Some(p.as_path())) {
                return Ok(NvrtcSource {
                    path: Some(p.clone()),
                    identity: id.clone(),
                });
            }
        }
        let path = match nvrtc::loaded() {
            Some(n) => n.path.clone(),
            None => match env.clone() {
                Some(p) => Some(p),
                None => wheel(),
            },
        };
        let identity = match &path {
            Some(p) => {
                let m = std::fs::metadata(p)
                    .map_err(|e| CudaError::NoNvrtc(format!("{}: {e}", p.display())))?;
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_nanos())
                    .unwrap_or(0);
                let id = format!("{}|{}|{mtime}", p.display(), m.len());
                let _ = FOUND.set((env, p.clone(), id.clone()));
                id
            }
            None => format!("system nvrtc {}", nvrtc::load(None)?.version_string()),
        };
        Ok(NvrtcSource { path, identity })
    }

    /// Loads this NVRTC (once per process).
    pub fn load(&self) -> Result<&'static Nvrtc, CudaError> {
        nvrtc::load(self.path.as_deref())
    }
}

/// Include directories with NVRTC's bundled headers (`cuda_fp16.h`...),
/// extracted once per process into the cache directory.
pub fn header_dirs(n: &Nvrtc, cache: &DiskCache) -> Result<Vec<PathBuf>, CudaError> {
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

/// Compiles `code` with NVRTC, with the bundled headers when it needs them.
pub fn compile(
    n: &Nvrtc,
    code: &str,
    name: &str,
    arch: u32,
    extra: &[String],
    cache: &DiskCache,
) -> Result<Vec<u8>, CudaError> {
    let includes = if nvrtc::needs_headers(code) {
        header_dirs(n, cache)?
    } else {
        vec![]
    };
    n.compile_cubin(code, name, arch, &includes, extra)
}

/// The cache key of a cubin: the code, the NVRTC identity, the
/// architecture, the fixed float options and the extra options
/// (`$PARPY_NVRTC_OPTIONS`).
pub fn key(src: &NvrtcSource, code: &str, arch: u32, extra: &[String]) -> String {
    DiskCache::blob_key(&[
        b"cubin",
        code.as_bytes(),
        src.identity.as_bytes(),
        arch.to_string().as_bytes(),
        nvrtc::NUMPY_FLOAT_OPTIONS.join(" ").as_bytes(),
        extra.join(" ").as_bytes(),
    ])
}

/// The cubin of `code` for `sm_{arch}`, through the disk cache, and
/// whether it came from there. NVRTC is loaded only on a miss. `includes`
/// are the user's header directories (`CompileOptions.includes`, for the
/// headers of external functions).
pub fn cached(
    src: &NvrtcSource,
    code: &str,
    name: &str,
    arch: u32,
    cache: &DiskCache,
    includes: &[String],
) -> Result<(Vec<u8>, Outcome), CudaError> {
    let mut extra = crate::env::nvrtc_options();
    extra.extend(includes.iter().map(|i| format!("-I{i}")));
    let (path, outcome) =
        cache.get_or_build_blob(&key(src, code, arch, &extra), "cubin", || {
            compile(src.load()?, code, name, arch, &extra, cache)
        })?;
    let bytes =
        std::fs::read(&path).map_err(|e| CudaError::Plan(format!("{}: {e}", path.display())))?;
    Ok((bytes, outcome))
}
