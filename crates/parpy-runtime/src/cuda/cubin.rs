//! Cubins through the disk cache: where NVRTC comes from, what identifies
//! it in a key, and the build of one cubin (NVRTC is loaded only on a
//! miss: a warm disk cache never pays its ~30 ms load).

use std::path::{Path, PathBuf};
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

/// Include directories with the CUDA headers (`cuda_fp16.h`...): NVRTC's
/// bundled ones (13.3 and later), extracted once per process into the
/// cache directory, else a toolkit's ([`toolkit_header_dirs`]).
pub fn header_dirs(n: &Nvrtc, cache: &DiskCache) -> Result<Vec<PathBuf>, CudaError> {
    static DIRS: OnceLock<Result<Vec<PathBuf>, CudaError>> = OnceLock::new();
    DIRS.get_or_init(|| {
        if n.has_bundled_headers() {
            return n.install_headers(
                &cache
                    .dir
                    .join(format!("nvrtc-headers-{}", n.version_string())),
            );
        }
        let candidates = header_candidates(n.path.as_deref());
        toolkit_header_dirs(&candidates).ok_or_else(|| {
            let looked: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
            CudaError::NoNvrtc(format!(
                "NVRTC {} has no bundled headers (NVRTC 13.3 or later has them) and no \
                 `cuda_fp16.h` was found in {}: install the nvidia-cuda-runtime and \
                 nvidia-cuda-cccl wheels (13.x), set CUDA_HOME to a CUDA toolkit, or \
                 install NVRTC 13.3 or later",
                n.version_string(),
                looked.join(", ")
            ))
        })
    })
    .clone()
}

/// Where a toolkit's headers may be, nearest to NVRTC first: the
/// `include/` beside its library (the NVIDIA wheels put
/// `nvidia/cu13/lib/libnvrtc.so.13` beside `nvidia/cu13/include`),
/// `$CUDA_HOME/include`, `$CUDA_PATH/include`, `/usr/local/cuda/include`.
fn header_candidates(nvrtc: Option<&Path>) -> Vec<PathBuf> {
    let mut v = vec![];
    if let Some(lib_dir) = nvrtc.and_then(Path::parent) {
        v.push(lib_dir.with_file_name("include"));
    }
    v.extend(
        crate::env::cuda_homes()
            .into_iter()
            .map(|h| h.join("include")),
    );
    v.push(PathBuf::from("/usr/local/cuda/include"));
    v
}

/// The include directories a toolkit's headers need, from the first of
/// `candidates` with `cuda_fp16.h`; CUDA 13's headers include CCCL's
/// (`<nv/target>`), which live in an `include/cccl` folder (of that
/// candidate or another: the nvidia-cuda-runtime and nvidia-cuda-cccl
/// wheels share one, a toolkit has both). `None` without `cuda_fp16.h`.
pub fn toolkit_header_dirs(candidates: &[PathBuf]) -> Option<Vec<PathBuf>> {
    let main = candidates
        .iter()
        .find(|c| c.join("cuda_fp16.h").is_file())?;
    let mut dirs = vec![main.clone()];
    let cccl = std::iter::once(main)
        .chain(candidates.iter())
        .flat_map(|c| [c.join("cccl"), c.clone()])
        .find(|c| c.join("nv").join("target").is_file());
    if let Some(c) = cccl {
        if !dirs.contains(&c) {
            dirs.push(c);
        }
    }
    Some(dirs)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }

    #[test]
    fn toolkit_headers_come_from_the_first_folder_with_cuda_fp16_and_any_cccl() {
        let root =
            std::env::temp_dir().join(format!("parpy-toolkit-headers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        // a wheel folder without CCCL, a toolkit with both
        let (wheel, toolkit, empty) = (root.join("wheel"), root.join("toolkit"), root.join("none"));
        touch(&wheel.join("cuda_fp16.h"));
        touch(&toolkit.join("cuda_fp16.h"));
        touch(&toolkit.join("cccl").join("nv").join("target"));
        let c = [empty.clone(), wheel.clone(), toolkit.clone()];
        assert_eq!(
            toolkit_header_dirs(&c),
            Some(vec![wheel.clone(), toolkit.join("cccl")])
        );
        // CCCL beside cuda_fp16.h wins; a toolkit of its own needs no other
        touch(&wheel.join("cccl").join("nv").join("target"));
        assert_eq!(
            toolkit_header_dirs(&c),
            Some(vec![wheel.clone(), wheel.join("cccl")])
        );
        assert_eq!(
            toolkit_header_dirs(std::slice::from_ref(&toolkit)),
            Some(vec![toolkit.clone(), toolkit.join("cccl")])
        );
        // no cuda_fp16.h anywhere: none
        assert_eq!(toolkit_header_dirs(std::slice::from_ref(&empty)), None);
        // the folder beside the library comes first
        let lib = wheel.with_file_name("lib").join("libnvrtc.so.13");
        assert_eq!(header_candidates(Some(&lib))[0], root.join("include"));
        let _ = std::fs::remove_dir_all(&root);
    }
}
