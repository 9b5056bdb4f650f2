//! `compile_string` for the Cuda backend: a whole printed CUDA C++ file
//! (kernels plus the `extern "C"` host entry) built by nvcc into a shared
//! library, cached on disk like every other artifact.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cache::{DiskCache, Outcome};
use crate::RuntimeError;

/// An nvcc and the folders of the wheels it came with.
#[derive(Clone, Debug)]
pub struct Nvcc {
    pub path: PathBuf,
    /// `nvcc --version` output (part of the cache key).
    pub identity: String,
    /// Roots holding `include/` and `lib/` (the `nvidia/cu13` wheel folder);
    /// empty for a toolkit nvcc, which knows its own.
    pub roots: Vec<PathBuf>,
}

impl Nvcc {
    pub fn new(path: &Path, roots: &[PathBuf]) -> Result<Nvcc, RuntimeError> {
        let out = Command::new(path)
            .arg("--version")
            .output()
            .map_err(|e| RuntimeError::io(path, e))?;
        if !out.status.success() {
            return Err(RuntimeError::CompileFailed {
                compiler: path.display().to_string(),
                status: out.status.to_string(),
                source_path: "--version".into(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        Ok(Nvcc {
            path: path.to_path_buf(),
            identity: String::from_utf8_lossy(&out.stdout).into_owned(),
            roots: roots.to_vec(),
        })
    }

    /// The command line that builds `src` into the shared library `out` for
    /// `sm_{arch}`, linking the CUDA runtime statically; `includes` are
    /// searched for headers first.
    pub fn args(&self, src: &Path, out: &Path, arch: u32, includes: &[PathBuf]) -> Vec<String> {
        let mut a: Vec<String> = vec![
            "-shared".into(),
            "-Xcompiler".into(),
            "-fPIC".into(),
            "-O3".into(),
            "-std=c++17".into(),
            "--cudart=static".into(),
            format!("-arch=sm_{arch}"),
        ];
        a.extend(
            super::nvrtc::NUMPY_FLOAT_OPTIONS
                .iter()
                .map(|o| o.to_string()),
        );
        for d in includes {
            a.push(format!("-I{}", d.display()));
        }
        for r in &self.roots {
            a.push(format!("-I{}", r.join("include").display()));
            a.push(format!("-L{}", r.join("lib").display()));
        }
        a.push(src.display().to_string());
        a.push("-o".into());
        a.push(out.display().to_string());
        a
    }

    /// The verified shared library for `code`, built when not cached
    /// (`includes`: folders of the headers it includes; the headers'
    /// contents are not part of the key, as for the other backends).
    pub fn build_cached(
        &self,
        code: &str,
        arch: u32,
        includes: &[PathBuf],
        cache: &DiskCache,
    ) -> Result<(PathBuf, Outcome), RuntimeError> {
        let arch_s = arch.to_string();
        let dirs: Vec<String> = includes.iter().map(|d| d.display().to_string()).collect();
        let dirs = dirs.join("\n");
        let key = DiskCache::blob_key(&[
            b"nvcc-so",
            self.identity.as_bytes(),
            arch_s.as_bytes(),
            super::nvrtc::NUMPY_FLOAT_OPTIONS.join(" ").as_bytes(),
            dirs.as_bytes(),
            code.as_bytes(),
        ]);
        cache.get_or_build_blob(&key, "so", || {
            self.build_bytes(code, arch, includes, &cache.dir, &key)
        })
    }

    fn build_bytes(
        &self,
        code: &str,
        arch: u32,
        includes: &[PathBuf],
        dir: &Path,
        key: &str,
    ) -> Result<Vec<u8>, RuntimeError> {
        std::fs::create_dir_all(dir).map_err(|e| RuntimeError::io(dir, e))?;
        let uniq = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        );
        let src = dir.join(format!("{key}.{uniq}.cu.tmp"));
        let out = dir.join(format!("{key}.{uniq}.so.tmp"));
        let result = (|| {
            std::fs::write(&src, code).map_err(|e| RuntimeError::io(&src, e))?;
            // nvcc picks the source language from the extension.
            let cu = src.with_extension("cu");
            std::fs::rename(&src, &cu).map_err(|e| RuntimeError::io(&cu, e))?;
            let r = Command::new(&self.path)
                .args(self.args(&cu, &out, arch, includes))
                .output()
                .map_err(|e| RuntimeError::io(&self.path, e));
            let _ = std::fs::remove_file(&cu);
            let r = r?;
            if !r.status.success() {
                return Err(RuntimeError::CompileFailed {
                    compiler: self.path.display().to_string(),
                    status: r.status.to_string(),
                    source_path: cu.display().to_string(),
                    stderr: format!(
                        "{}{}",
                        String::from_utf8_lossy(&r.stdout),
                        String::from_utf8_lossy(&r.stderr)
                    ),
                });
            }
            std::fs::read(&out).map_err(|e| RuntimeError::io(&out, e))
        })();
        let _ = std::fs::remove_file(&src);
        let _ = std::fs::remove_file(&out);
        result
    }
}

/// Finds nvcc for tests: `$PARPY_NVCC`, else the wheel in the workspace's
/// `.venv`; returns it with the wheel root.
pub fn find_for_tests() -> Option<(PathBuf, Vec<PathBuf>)> {
    if let Some(p) = crate::env::nvcc() {
        return Some((p, vec![]));
    }
    let lib = super::nvrtc::find_for_tests()?;
    let root = lib.parent()?.parent()?.to_path_buf();
    let nvcc = root.join("bin/nvcc");
    nvcc.is_file().then(|| (nvcc, vec![root]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_a_shared_library_with_a_loadable_entry() {
        let Some((path, roots)) = find_for_tests() else {
            eprintln!("skipped: no nvcc (install nvidia-cuda-nvcc in .venv or set PARPY_NVCC)");
            return;
        };
        let nvcc = Nvcc::new(&path, &roots).unwrap();
        let dir = std::env::temp_dir().join(format!("parpy-nvcc-test-{}", std::process::id()));
        let cache = DiskCache::new(&dir);
        let code = "#include <stdint.h>\n__global__ void k(float *y) { y[threadIdx.x] += 1.0f; }\n\
                    extern \"C\" int32_t parpy_entry_f(void **a) { k<<<1, 32>>>((float *)a[0]); \
                    return cudaGetLastError() != cudaSuccess; }\n";
        let (so, o) = nvcc.build_cached(code, 90, &[], &cache).unwrap();
        assert_eq!(o, Outcome::Built);
        assert_eq!(
            nvcc.build_cached(code, 90, &[], &cache).unwrap().1,
            Outcome::Hit
        );
        // the entry resolves (calling it needs a GPU)
        crate::LoadedEntry::load(&so, "parpy_entry_f").unwrap();
        let err = nvcc
            .build_cached("this is not CUDA", 90, &[], &cache)
            .unwrap_err()
            .to_string();
        assert!(err.contains("failed"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
