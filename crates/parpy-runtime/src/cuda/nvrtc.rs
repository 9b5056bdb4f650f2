//! NVRTC in-process: CUDA C++ device code to a cubin for one architecture.
//!
//! The library comes from the `nvidia-cuda-nvrtc` wheel; the Python side
//! finds `site-packages/nvidia/cu13/lib/libnvrtc.so.13` and passes its path.
//! It is opened by absolute path with `RTLD_GLOBAL` before cudarc looks for
//! NVRTC by name, so cudarc's lookup (by soname) finds that copy.

use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cudarc::nvrtc::sys;

use super::{no_panic, open_global, CudaError};

/// NVRTC and nvcc options that keep float arithmetic as NumPy does it: no
/// contraction of `a * b + c` into one fused multiply-add (rounded once,
/// where NumPy and the C backend round twice), which a later conversion to
/// an integer or a comparison can turn into a different answer. Part of
/// every cubin and nvcc cache key.
pub const NUMPY_FLOAT_OPTIONS: &[&str] = &["--fmad=false"];

/// A loaded NVRTC.
pub struct Nvrtc {
    /// Where it was loaded from (`None`: found by cudarc on the system path).
    pub path: Option<PathBuf>,
    /// `(major, minor)` from `nvrtcVersion`.
    pub version: (i32, i32),
    lib: Option<libloading::Library>,
}

static LOADED: Mutex<Option<&'static Nvrtc>> = Mutex::new(None);

/// Loads NVRTC once per process. `path` is the absolute path of
/// `libnvrtc.so.13`; without it, the system library path is searched.
pub fn load(path: Option<&Path>) -> Result<&'static Nvrtc, CudaError> {
    let mut slot = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = *slot {
        return Ok(n);
    }
    let lib = match path {
        Some(p) => {
            if !p.is_file() {
                return Err(CudaError::NoNvrtc(format!(
                    "{} does not exist",
                    p.display()
                )));
            }
            Some(open_global(p.as_os_str()).map_err(CudaError::NoNvrtc)?)
        }
        None => None,
    };
    // SAFETY: only tries to open libraries by name.
    let present = no_panic("looking for NVRTC", || {
        Ok(unsafe { sys::is_culib_present() })
    })?;
    if !present {
        return Err(CudaError::NoNvrtc(
            "libnvrtc.so.13 not found; install the `nvidia-cuda-nvrtc` wheel \
             (pip install 'parpy[cuda]')"
                .into(),
        ));
    }
    let version = no_panic("nvrtcVersion", || {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two valid out-pointers.
        check("nvrtcVersion", unsafe {
            sys::nvrtcVersion(&mut major, &mut minor)
        })?;
        Ok((major, minor))
    })?;
    let n: &'static Nvrtc = Box::leak(Box::new(Nvrtc {
        path: path.map(Path::to_path_buf),
        version,
        lib,
    }));
    *slot = Some(n);
    Ok(n)
}

/// The NVRTC already loaded in this process, if any.
/// Whether NVRTC `version` has known miscompilations for `sm_{arch}`,
/// both found on an H200 with NVRTC 13.0 and read in the SASS of each
/// version: 13.0-13.3 fuse integer max/min chains into Hopper's `VIMNMX3`
/// and drop the negation of an operand (`max(x // -1)` of an int32 row gave
/// `max(x)`, GPU bug set seed 1357); 13.0-13.2 compute `(int8_t)-x` of a
/// uint16 `x` as a 16-bit negation shifted right, off by 256 at `x = 128`
/// (fuzz seed 916402).
/// Only code with what they need is said to meet them: integer max/min
/// helpers (`parpy_max_i32`, `parpy_warp_min_u64`...) or 8-bit integers.
pub fn miscompiles_on(version: (i32, i32), code: &str, arch: u32) -> bool {
    let at_risk = ["_max_i", "_min_i", "_max_u", "_min_u", "int8_t)"]
        .iter()
        .any(|p| code.contains(p));
    version.0 == 13 && version.1 < 4 && arch >= 90 && at_risk
}

pub fn loaded() -> Option<&'static Nvrtc> {
    *LOADED.lock().unwrap_or_else(|e| e.into_inner())
}

fn error_string(r: sys::nvrtcResult) -> String {
    // SAFETY: returns a static string for any result code.
    let p = unsafe { sys::nvrtcGetErrorString(r) };
    if p.is_null() {
        format!("{r:?}")
    } else {
        // SAFETY: NUL-terminated static string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn check(call: &'static str, r: sys::nvrtcResult) -> Result<(), CudaError> {
    if r == sys::nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::Nvrtc {
            call,
            msg: error_string(r),
        })
    }
}

/// Destroys the program on every exit path.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: a program created by nvrtcCreateProgram, destroyed once.
        unsafe {
            sys::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

impl Nvrtc {
    /// Whether this NVRTC exports `symbol` (checked before cudarc's loader,
    /// which panics on a missing symbol).
    pub fn has_symbol(&self, symbol: &str) -> bool {
        match &self.lib {
            // SAFETY: only the address is looked up; nothing is called.
            Some(l) => unsafe { l.get::<*const u8>(symbol.as_bytes()) }.is_ok(),
            None => no_panic("symbol lookup", || {
                // SAFETY: as above, on cudarc's copy of the library.
                Ok(unsafe { sys::culib().get::<*const u8>(symbol.as_bytes()) }.is_ok())
            })
            .unwrap_or(false),
        }
    }

    /// `"13.5"`, for cache keys and messages.
    pub fn version_string(&self) -> String {
        format!("{}.{}", self.version.0, self.version.1)
    }

    /// The architectures this NVRTC can compile for (`[75, 80, 86, 89, 90, ...]`).
    pub fn supported_archs(&self) -> Result<Vec<u32>, CudaError> {
        no_panic("nvrtcGetSupportedArchs", || {
            let mut n = 0;
            // SAFETY: valid out-pointer.
            check("nvrtcGetNumSupportedArchs", unsafe {
                sys::nvrtcGetNumSupportedArchs(&mut n)
            })?;
            let mut v = vec![0i32; n.max(0) as usize];
            // SAFETY: `v` has room for `n` entries.
            check("nvrtcGetSupportedArchs", unsafe {
                sys::nvrtcGetSupportedArchs(v.as_mut_ptr())
            })?;
            Ok(v.into_iter().map(|a| a.max(0) as u32).collect())
        })
    }

    /// The known miscompilations of this NVRTC that `code` may meet on
    /// `sm_{arch}`, as a sentence for a warning ([`miscompiles_on`]).
    pub fn known_miscompile(&self, code: &str, arch: u32) -> Option<String> {
        miscompiles_on(self.version, code, arch).then(|| {
            format!(
                "NVRTC {} has known miscompilations on sm_{arch} that give wrong results \
                 without an error (a chain of integer maxima or minima of negated values \
                 loses a negation before 13.4; an 8-bit conversion of a negated 16-bit \
                 value is off by 256 before 13.3). Upgrade with `pip install -U \
                 \"nvidia-cuda-nvrtc>=13.4,<14\"` (or point PARPY_NVRTC_PATH at a newer \
                 libnvrtc.so.13)",
                self.version_string()
            )
        })
    }

    /// Whether this NVRTC carries the CUDA headers (13.3 and later).
    pub fn has_bundled_headers(&self) -> bool {
        self.has_symbol("nvrtcInstallBundledHeaders")
    }

    /// Extracts the CUDA headers bundled with NVRTC (13.3 and later) into
    /// `dir` (once; NVRTC skips an installation whose version marker
    /// matches) and returns the include directories to pass.
    pub fn install_headers(&self, dir: &Path) -> Result<Vec<PathBuf>, CudaError> {
        if !self.has_bundled_headers() {
            return Err(CudaError::NoNvrtc(format!(
                "NVRTC {} has no bundled headers (NVRTC 13.3 or later has them)",
                self.version_string()
            )));
        }
        let c = CString::new(dir.to_string_lossy().as_bytes())
            .map_err(|_| CudaError::Plan(format!("bad header directory {}", dir.display())))?;
        no_panic("nvrtcInstallBundledHeaders", || {
            let mut log: *const c_char = std::ptr::null();
            // SAFETY: valid C string and out-pointer; flags 0 = skip if the
            // same version is installed already.
            let r = unsafe { sys::nvrtcInstallBundledHeaders(c.as_ptr(), 0, &mut log) };
            if r != sys::nvrtcResult::NVRTC_SUCCESS {
                let detail = if log.is_null() {
                    String::new()
                } else {
                    // SAFETY: NVRTC's NUL-terminated message.
                    format!(": {}", unsafe { CStr::from_ptr(log) }.to_string_lossy())
                };
                return Err(CudaError::Nvrtc {
                    call: "nvrtcInstallBundledHeaders",
                    msg: format!("{}{detail}", error_string(r)),
                });
            }
            Ok(vec![dir.to_path_buf(), dir.join("cccl")])
        })
    }

    /// Compiles `src` to a cubin for `sm_{arch}` (e.g. 90), with
    /// [`NUMPY_FLOAT_OPTIONS`]. `include_dirs`
    /// become `-I` options; `extra` are passed as given. A compile error
    /// returns the NVRTC log.
    pub fn compile_cubin(
        &self,
        src: &str,
        name: &str,
        arch: u32,
        include_dirs: &[PathBuf],
        extra: &[String],
    ) -> Result<Vec<u8>, CudaError> {
        let csrc = CString::new(src)
            .map_err(|_| CudaError::Plan("the CUDA source contains a NUL byte".into()))?;
        let cname = CString::new(format!("{name}.cu"))
            .map_err(|_| CudaError::Plan("the program name contains a NUL byte".into()))?;
        // --minimal leaves out texture, device-runtime and driver-type
        // declarations that generated code never uses: a first call on an
        // H200 machine (NVRTC 13.0) went from ~20 to ~13 ms for softmax
        // -default-device: the users' headers may define host functions
        // next to device ones (a `Target.Host` external beside `Target.Device`
        // ones, as ParPy's own test headers do), which NVRTC refuses
        // otherwise; parpy's own code annotates every function
        let mut opts: Vec<String> = vec![
            format!("--gpu-architecture=sm_{arch}"),
            "-std=c++17".into(),
            "--minimal".into(),
            "-default-device".into(),
        ];
        opts.extend(NUMPY_FLOAT_OPTIONS.iter().map(|o| o.to_string()));
        for d in include_dirs {
            opts.push(format!("-I{}", d.display()));
        }
        opts.extend(extra.iter().cloned());
        let copts: Vec<CString> = opts
            .iter()
            .map(|o| CString::new(o.as_str()))
            .collect::<Result<_, _>>()
            .map_err(|_| CudaError::Plan("an NVRTC option contains a NUL byte".into()))?;
        let ptrs: Vec<*const c_char> = copts.iter().map(|c| c.as_ptr()).collect();
        no_panic("NVRTC", || {
            let mut raw: sys::nvrtcProgram = std::ptr::null_mut();
            // SAFETY: valid C strings; no headers passed in memory.
            check("nvrtcCreateProgram", unsafe {
                sys::nvrtcCreateProgram(
                    &mut raw,
                    csrc.as_ptr(),
                    cname.as_ptr(),
                    0,
                    std::ptr::null(),
                    std::ptr::null(),
                )
            })?;
            let prog = Program(raw);
            // SAFETY: `ptrs` holds `ptrs.len()` valid C strings.
            let r = unsafe { sys::nvrtcCompileProgram(prog.0, ptrs.len() as i32, ptrs.as_ptr()) };
            if r != sys::nvrtcResult::NVRTC_SUCCESS {
                let log = program_log(&prog).unwrap_or_default();
                let log = if log.trim().is_empty() {
                    error_string(r)
                } else {
                    log
                };
                // an installation missing NVRTC's own builtins library is
                // the environment's failure, not the code's
                if log.contains("libnvrtc-builtins") {
                    return Err(CudaError::NoNvrtc(format!(
                        "{}: NVRTC could not load its builtins library (libnvrtc-builtins, \
                         which must sit beside libnvrtc or on the library path)",
                        log.trim()
                    )));
                }
                return Err(CudaError::NvrtcCompile {
                    name: name.to_string(),
                    arch,
                    log,
                });
            }
            let mut size = 0usize;
            // SAFETY: compiled program, valid out-pointer.
            check("nvrtcGetCUBINSize", unsafe {
                sys::nvrtcGetCUBINSize(prog.0, &mut size)
            })?;
            let mut cubin = vec![0u8; size];
            // SAFETY: `cubin` has `size` bytes.
            check("nvrtcGetCUBIN", unsafe {
                sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr() as *mut c_char)
            })?;
            Ok(cubin)
        })
    }
}

fn program_log(prog: &Program) -> Result<String, CudaError> {
    let mut size = 0usize;
    // SAFETY: valid program and out-pointer.
    check("nvrtcGetProgramLogSize", unsafe {
        sys::nvrtcGetProgramLogSize(prog.0, &mut size)
    })?;
    let mut buf = vec![0u8; size.max(1)];
    // SAFETY: `buf` has `size` bytes.
    check("nvrtcGetProgramLog", unsafe {
        sys::nvrtcGetProgramLog(prog.0, buf.as_mut_ptr() as *mut c_char)
    })?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// Whether `src` includes CUDA headers that NVRTC only has in its bundle
/// (`cuda_fp16.h`, `cuda_bf16.h`, `cooperative_groups.h` (thread block
/// clusters; it needs CCCL too), CCCL's `cuda/...`). Generated code keeps
/// its C headers behind `#ifndef __CUDACC_RTC__`, so they do not count.
pub fn needs_headers(src: &str) -> bool {
    src.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("#include")
            && [
                "cuda_fp16.h",
                "cuda_bf16.h",
                "cooperative_groups.h",
                "<cuda/",
                "\"cuda/",
            ]
            .iter()
            .any(|h| l.contains(h))
    })
}

/// Finds the wheel's NVRTC for tests: `$PARPY_NVRTC_PATH`, else
/// `.venv/lib/python3*/site-packages/nvidia/cu13/lib/libnvrtc.so.13` above
/// the crate.
pub fn find_for_tests() -> Option<PathBuf> {
    if let Some(p) = crate::env::nvrtc_path() {
        return Some(p);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/lib");
    let rd = std::fs::read_dir(root).ok()?;
    let mut found: Vec<PathBuf> = rd
        .flatten()
        .map(|e| {
            e.path()
                .join("site-packages/nvidia/cu13/lib/libnvrtc.so.13")
        })
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    const AXPY: &str = r#"
extern "C" __global__ void axpy(float *y, const float *x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;

    fn nvrtc() -> Option<&'static Nvrtc> {
        let Some(p) = find_for_tests() else {
            eprintln!(
                "skipped: no libnvrtc.so.13 (set PARPY_NVRTC_PATH or install the wheel in .venv)"
            );
            return None;
        };
        Some(load(Some(&p)).expect("the wheel's NVRTC loads"))
    }

    #[test]
    fn missing_path_is_a_clear_error() {
        if loaded().is_some() {
            return;
        }
        let err = load(Some(Path::new("/nonexistent/libnvrtc.so.13"))).err();
        let msg = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("does not exist"), "{msg}");
    }

    #[test]
    fn compiles_to_a_cubin_for_sm_90() {
        let Some(n) = nvrtc() else { return };
        assert!(n.version.0 >= 12, "{:?}", n.version);
        assert!(n.supported_archs().unwrap().contains(&90));
        let cubin = n.compile_cubin(AXPY, "axpy", 90, &[], &[]).unwrap();
        // an ELF image holding the kernel's name
        assert_eq!(&cubin[..4], b"\x7fELF");
        assert!(cubin.windows(4).any(|w| w == b"axpy"));
    }

    #[test]
    fn a_broken_kernel_returns_the_log() {
        let Some(n) = nvrtc() else { return };
        let bad = "extern \"C\" __global__ void k(float *y) { y[0] = undefined_name; }\n";
        let err = n.compile_cubin(bad, "broken", 90, &[], &[]).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with(
                "Compilation of generated CUDA code failed: NVRTC could not compile \
                             `broken` for sm_90"
            ),
            "{msg}"
        );
        assert!(msg.contains("undefined_name"), "{msg}");
        let err = n
            .compile_cubin(AXPY, "opt", 90, &[], &["-O3".into()])
            .unwrap_err();
        assert!(!err.to_string().is_empty());
    }

    #[test]
    fn nvrtc_13_0_to_13_3_are_known_to_miscompile_on_hopper() {
        let max = "acc = parpy_max_i32(acc, parpy_floordiv_i32(x0[j], -1));";
        let narrow = "y[i] = (uint16_t)(int8_t)(uint16_t)(-x[i]);";
        assert!(miscompiles_on((13, 0), max, 90));
        assert!(miscompiles_on((13, 2), narrow, 90));
        assert!(miscompiles_on((13, 3), "parpy_warp_min_u64(v)", 100));
        assert!(!miscompiles_on((13, 4), max, 90));
        assert!(!miscompiles_on((13, 0), max, 80));
        // float code meets neither: no warning
        assert!(!miscompiles_on(
            (13, 0),
            "y[i] = parpy_max_f32(a, b) * 2.0f;",
            90
        ));
    }

    #[test]
    fn bundled_headers_give_cuda_fp16() {
        let Some(n) = nvrtc() else { return };
        if !n.has_symbol("nvrtcInstallBundledHeaders") {
            eprintln!(
                "skipped: NVRTC {} has no bundled headers",
                n.version_string()
            );
            return;
        }
        let dir = std::env::temp_dir().join(format!("parpy-nvrtc-headers-{}", std::process::id()));
        let inc = n.install_headers(&dir).unwrap();
        let src = "#include <cuda_fp16.h>\nextern \"C\" __global__ void h(__half *y) { y[0] = __float2half(1.0f); }\n";
        assert!(needs_headers(src));
        assert!(!needs_headers(
            "#ifdef __CUDACC_RTC__\n#define X 1\n#else\n#include <stdint.h>\n#endif\n"
        ));
        let cubin = n.compile_cubin(src, "half", 90, &inc, &[]).unwrap();
        assert_eq!(&cubin[..4], b"\x7fELF");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
