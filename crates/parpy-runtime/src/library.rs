//! Loading a shared library and calling its uniform entry point.

use std::ffi::c_void;
use std::path::Path;
use std::sync::Arc;

use crate::RuntimeError;

/// `int32_t SYM(void **args)`.
pub type EntryFn = unsafe extern "C" fn(*mut *mut c_void) -> i32;

/// `int32_t f(int64_t site, void **args)`: how generated host code calls
/// Python callbacks (the global `parpy_callback` of the library).
pub type CallbackFn = unsafe extern "C" fn(i64, *mut *mut c_void) -> i32;

/// Opens a library that is unmapped again when the last [`LoadedEntry`] of
/// it goes (the binding bounds how many stay loaded). Generated code uses
/// OpenMP, whose worker threads stay alive inside the OpenMP runtime after
/// a call: that runtime, loaded with the first library, is pinned for the
/// life of the process ([`pin_openmp_runtime`]), so only our code goes.
fn open_library(path: &Path) -> Result<libloading::Library, libloading::Error> {
    #[cfg(unix)]
    {
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: the library is one parpy built from generated (or the
        // user's compile_string) C code.
        let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }?;
        pin_openmp_runtime();
        Ok(libloading::Library::from(lib))
    }
    #[cfg(not(unix))]
    {
        // SAFETY: as above.
        unsafe { libloading::Library::new(path) }
    }
}

/// Keeps every OpenMP runtime that is loaded now loaded for good: a handle
/// opened with `RTLD_NOLOAD` (which loads nothing new) and never closed.
/// Unloading libgomp or libomp while its idle worker threads live would
/// crash the process.
#[cfg(unix)]
fn pin_openmp_runtime() {
    use libloading::os::unix::{Library, RTLD_NOW};
    use std::sync::Mutex;
    #[cfg(any(target_os = "macos", target_os = "ios"))]
    const RTLD_NOLOAD: std::os::raw::c_int = 0x10;
    #[cfg(not(any(target_os = "macos", target_os = "ios")))]
    const RTLD_NOLOAD: std::os::raw::c_int = 0x4;
    const RUNTIMES: &[&str] = &[
        "libgomp.so.1",
        "libomp.so.5",
        "libomp.so",
        "libiomp5.so",
        "libgomp.1.dylib",
        "libomp.dylib",
    ];
    static PINNED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut pinned = PINNED.lock().unwrap_or_else(|e| e.into_inner());
    for name in RUNTIMES {
        if pinned.contains(name) {
            continue;
        }
        // SAFETY: RTLD_NOLOAD only finds a library already loaded (as a
        // dependency of the generated code); nothing new runs.
        if let Ok(lib) = unsafe { Library::open(Some(*name), RTLD_NOW | RTLD_NOLOAD) } {
            std::mem::forget(lib);
            pinned.push(name);
        }
    }
}

/// A loader error with the system's reason: libloading's message is only
/// `dlopen failed`, the `dlerror()` text is its source.
fn error_text(e: &libloading::Error) -> String {
    use std::error::Error;
    match e.source() {
        Some(why) => format!("{e}: {why}"),
        None => e.to_string(),
    }
}

/// An entry point together with the library that holds it; the library stays
/// loaded as long as any clone of this value lives.
#[derive(Clone)]
pub struct LoadedEntry {
    func: EntryFn,
    symbol: Arc<str>,
    _lib: Arc<libloading::Library>,
}

impl std::fmt::Debug for LoadedEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LoadedEntry({})", self.symbol)
    }
}

impl LoadedEntry {
    pub fn load(path: &Path, symbol: &str) -> Result<LoadedEntry, RuntimeError> {
        let lib = open_library(path).map_err(|e| RuntimeError::Load {
            path: path.to_path_buf(),
            msg: error_text(&e),
        })?;
        // SAFETY: the entry ABI fixes the signature `int32_t SYM(void **)`.
        let func: EntryFn = unsafe {
            let s: libloading::Symbol<'_, EntryFn> =
                lib.get(symbol.as_bytes())
                    .map_err(|e| RuntimeError::Symbol {
                        path: path.to_path_buf(),
                        symbol: symbol.to_string(),
                        msg: error_text(&e),
                    })?;
            *s
        };
        Ok(LoadedEntry {
            func,
            symbol: Arc::from(symbol),
            _lib: Arc::new(lib),
        })
    }

    pub fn symbol(&self) -> &str {
        &self.symbol
    }

    /// The raw function pointer (valid while `self` lives).
    pub fn raw(&self) -> EntryFn {
        self.func
    }

    /// Stores `f` in the library's `parpy_callback` global, through which
    /// its host code calls callbacks (code without callbacks has none: an
    /// error).
    pub fn set_callback(&self, f: CallbackFn) -> Result<(), RuntimeError> {
        // SAFETY: generated code declares `parpy_callback_t parpy_callback`,
        // a function pointer of this signature; the symbol is its address.
        unsafe {
            let s: libloading::Symbol<'_, *mut Option<CallbackFn>> = self
                ._lib
                .get(b"parpy_callback")
                .map_err(|e| RuntimeError::Symbol {
                    path: std::path::PathBuf::from(self.symbol.as_ref()),
                    symbol: "parpy_callback".into(),
                    msg: e.to_string(),
                })?;
            **s = Some(f);
        }
        Ok(())
    }

    /// Calls the entry with `args`; a non-zero return is an error.
    ///
    /// The caller must pass exactly the arguments the entry expects (array
    /// data pointers and pointers to 8-byte scalar slots).
    pub fn call(&self, args: &mut [*mut c_void]) -> Result<(), RuntimeError> {
        // SAFETY: see the contract above; the binding checks the arguments.
        let code = unsafe { (self.func)(args.as_mut_ptr()) };
        if code == 0 {
            Ok(())
        } else {
            Err(RuntimeError::NonZero {
                symbol: self.symbol.to_string(),
                code,
            })
        }
    }
}

/// Whether the shared library `name` can be loaded (e.g. `libcuda.so.1`, to
/// tell whether an NVIDIA driver is installed). The library is unloaded again.
pub fn probe(name: &str) -> bool {
    // SAFETY: only system driver libraries are probed; nothing is called.
    unsafe { libloading::Library::new(name) }.is_ok()
}

#[cfg(test)]
mod tests {
    use crate::{BuildFlags, DiskCache};

    #[test]
    fn nonzero_return_and_missing_symbol_are_errors() {
        let dir = std::env::temp_dir().join(format!("parpy-lib-test-{}", std::process::id()));
        let cache = DiskCache::new(&dir);
        let code = "#include <stdint.h>\nint32_t fails(void **a) { (void)a; return 3; }\n";
        let e = crate::build_and_load(code, "fails", &BuildFlags::default(), &cache).unwrap();
        let err = e.call(&mut []).unwrap_err();
        assert!(err.to_string().contains("error code 3"), "{err}");
        let err = crate::build_and_load(code, "nope", &BuildFlags::default(), &cache).unwrap_err();
        assert!(err.to_string().contains("`nope`"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
