//! Every environment variable parpy reads, in one place (the Python
//! package asks through `parpy._native` instead of reading them itself).
//!
//! | variable | meaning |
//! |---|---|
//! | `CC` | the C compiler (`CC="ccache gcc"` keeps the launcher) |
//! | `PATH` | where `cc`, `gcc`, `clang` and a `$CC` without `/` are looked up |
//! | `XDG_CACHE_HOME`, `HOME` | the default disk cache (`$XDG_CACHE_HOME/parpy`, `~/.cache/parpy`) |
//! | `PARPY_NVRTC_PATH` | `libnvrtc.so.13` to load instead of the wheel's |
//! | `PARPY_NVRTC_OPTIONS` | extra NVRTC options (split at whitespace; part of the cubin key) |
//! | `PARPY_NVCC` | nvcc for the runtime's own tests |
//! | `CUDA_HOME`, `CUDA_PATH` | a CUDA toolkit whose `include/` has `cuda_fp16.h`, for an NVRTC older than 13.3 (no bundled headers) |
//! | `PARPY_LOG` | `info`: one line on stderr per build, with the reason for the cache miss |
//! | `PARPY_MAX_LOADED` | how many specializations stay loaded in memory (default 256; least recently used ones are dropped) |

use std::ffi::OsString;
use std::path::PathBuf;

fn non_empty(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// `$CC`, unless unset or blank.
pub fn cc() -> Option<String> {
    std::env::var("CC").ok().filter(|s| !s.trim().is_empty())
}

/// `$PATH`.
pub fn path() -> Option<OsString> {
    std::env::var_os("PATH")
}

/// `$XDG_CACHE_HOME`, unless unset or empty.
pub fn xdg_cache_home() -> Option<PathBuf> {
    non_empty("XDG_CACHE_HOME").map(PathBuf::from)
}

/// `$HOME`, unless unset or empty.
pub fn home() -> Option<PathBuf> {
    non_empty("HOME").map(PathBuf::from)
}

/// `$PARPY_NVRTC_PATH`, unless unset or empty.
pub fn nvrtc_path() -> Option<PathBuf> {
    non_empty("PARPY_NVRTC_PATH").map(PathBuf::from)
}

/// `$PARPY_NVRTC_OPTIONS` split at whitespace.
pub fn nvrtc_options() -> Vec<String> {
    std::env::var("PARPY_NVRTC_OPTIONS")
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// `$CUDA_HOME` and `$CUDA_PATH` (in that order), those set and not empty.
pub fn cuda_homes() -> Vec<PathBuf> {
    ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| non_empty(v).map(PathBuf::from))
        .collect()
}

/// `$PARPY_NVCC`, unless unset or empty.
pub fn nvcc() -> Option<PathBuf> {
    non_empty("PARPY_NVCC").map(PathBuf::from)
}

/// `$PARPY_LOG` asks for one line per build (`info`, `debug`; read once).
pub fn log_builds() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("PARPY_LOG")
            .map(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "info" | "debug"))
            .unwrap_or(false)
    })
}

/// `$PARPY_MAX_LOADED`: the bound on specializations loaded in memory, if
/// set to a positive integer.
pub fn max_loaded() -> Option<usize> {
    std::env::var("PARPY_MAX_LOADED")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
}
