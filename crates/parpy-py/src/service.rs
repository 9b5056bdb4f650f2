//! The compile service: everything between a call's arguments and a
//! callable specialization that `JitFunction`, `compile_string` and the
//! module functions share: backend choice, the core compiler (warnings,
//! debug log), the disk cache (its directory, C builds, cubins, clearing)
//! and the generation counter of the in-memory caches.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use parpy_core::syntax::FunctionDef;
use parpy_core::{ArgType, Backend, CompileOutput, Options, Resolver};
use parpy_runtime::cuda::cubin::NvrtcSource;
use parpy_runtime::cuda::CudaError;
use parpy_runtime::{DiskCache, LoadedEntry, Outcome};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

use crate::backend;
use crate::errors::{build_error_to_py, compile_error_to_py, internal_error, stderr_write, warn};
use crate::options::OptData;

static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Bumped by `clear_cache`; in-memory caches compare it on lookup.
#[inline]
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

fn cache_dirs() -> &'static Mutex<BTreeSet<PathBuf>> {
    static DIRS: OnceLock<Mutex<BTreeSet<PathBuf>>> = OnceLock::new();
    DIRS.get_or_init(|| Mutex::new(BTreeSet::new()))
}

/// Drops every in-memory specialization (at its next lookup), keeping the
/// disk cache: a name that compiled code took was re-bound
/// (`resolver::PyResolver::unchanged`), and the disk cache keys by the
/// generated code, so the new value finds or builds its own.
pub fn forget_specializations() {
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

/// Remembers a disk cache directory used in this process (for clear_cache).
fn note_cache_dir(dir: &Path) {
    let mut d = cache_dirs().lock().unwrap_or_else(|e| e.into_inner());
    if !d.contains(dir) {
        d.insert(dir.to_path_buf());
    }
}

/// Drops every in-memory specialization and the disk cache entries of
/// every cache directory this process used (and the default one).
pub fn clear_cache() -> PyResult<()> {
    GENERATION.fetch_add(1, Ordering::AcqRel);
    // the libraries go now (a call in flight keeps its own until it returns)
    crate::loaded::clear_all();
    let mut dirs: BTreeSet<PathBuf> = cache_dirs()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    dirs.insert(parpy_runtime::default_cache_dir());
    for d in dirs {
        parpy_runtime::cache::clear(&d).map_err(|e| PyOSError::new_err(e.to_string()))?;
    }
    Ok(())
}

/// The disk cache of these options: the directory is created 0700, and
/// one that is not the user's or that others may write is replaced by a
/// private temporary directory, with a `ParpyWarning` (once per directory
/// and process).
pub fn cache_for(py: Python<'_>, data: &OptData) -> PyResult<DiskCache> {
    static WARNED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    let dir = match &data.cache_dir {
        Some(d) => PathBuf::from(d),
        None => parpy_runtime::default_cache_dir(),
    };
    let (c, why) = DiskCache::open(&dir).map_err(|e| build_error_to_py(e, false))?;
    if let Some(why) = why {
        let first = WARNED.lock().unwrap_or_else(|e| e.into_inner()).insert(dir);
        if first {
            warn(py, &why)?;
        }
    }
    note_cache_dir(&c.dir);
    Ok(c)
}

/// Resolves the options' backend, printing why when asked to.
pub fn resolve_backend(py: Python<'_>, data: &OptData) -> PyResult<Backend> {
    let (backend, why) = backend::resolve(data.backend);
    if data.verbose_backend_resolution {
        stderr_write(py, &format!("parpy: {}\n", why.join("\nparpy: ")))?;
    }
    Ok(backend)
}

/// Runs the core compiler with panics caught; emits warnings and the debug log.
pub fn run_compile(
    py: Python<'_>,
    def: &FunctionDef,
    types: &[ArgType],
    resolver: &dyn Resolver,
    options: &Options,
) -> PyResult<CompileOutput> {
    crate::errors::take_held();
    let out = {
        let _memo = crate::resolver::ResolveMemo::enter();
        parpy_core::catch_internal(|| parpy_core::compile(def, types, resolver, options))
    };
    // (Ctrl-C while the resolver ran Python code: raised as it came,
    // whatever the compile made of the missing object)
    if let Some(e) = crate::errors::take_held() {
        return Err(e);
    }
    let out = out.map_err(compile_error_to_py)?;
    if options.debug_print && !out.debug_log.is_empty() {
        stderr_write(py, &out.debug_log)?;
    }
    for w in &out.warnings {
        warn(py, &w.render())?;
    }
    Ok(out)
}

/// Builds C code through the disk cache with the GIL released, and loads
/// the entry; says whether the library came from the disk cache.
/// `user_code`: the code is the user's (compile_string), so a compile
/// error is theirs.
pub fn build_entry(
    py: Python<'_>,
    data: &OptData,
    code: &str,
    symbol: &str,
    user_code: bool,
) -> PyResult<(LoadedEntry, Outcome)> {
    let cache = cache_for(py, data)?;
    let flags = data.build_flags();
    let r = py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            parpy_runtime::build_and_load_outcome(code, symbol, &flags, &cache)
        }))
    });
    let user_flags =
        !(flags.includes.is_empty() && flags.libs.is_empty() && flags.extra_flags.is_empty());
    match r {
        Ok(Ok(e)) => Ok(e),
        Ok(Err(e)) => Err(build_error_to_py(e, user_code || user_flags)),
        Err(_) => Err(internal_error(
            "the runtime panicked while building the code",
        )),
    }
}

/// The cubin of `code` for `sm_{arch}` through the disk cache, with the
/// GIL released, and whether it came from there.
pub fn cubin(
    py: Python<'_>,
    src: &NvrtcSource,
    code: &str,
    name: &str,
    arch: u32,
    cache: &DiskCache,
    includes: &[String],
) -> Result<(Vec<u8>, Outcome), CudaError> {
    let built =
        py.detach(|| parpy_runtime::cuda::cubin::cached(src, code, name, arch, cache, includes))?;
    // a build by an NVRTC with known miscompilations that this code may
    // meet: warned once per process (the code is not searched after that)
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.load(Relaxed) {
        let msg = parpy_runtime::cuda::nvrtc::loaded().and_then(|n| n.known_miscompile(code, arch));
        if let Some(msg) = msg.filter(|_| !WARNED.swap(true, Relaxed)) {
            let _ = crate::errors::warn(py, &msg);
        }
    }
    Ok(built)
}

/// Writes the generated file under `<cache_dir>/generated/`, with the
/// extension of the backend's language.
pub fn write_output(
    py: Python<'_>,
    data: &OptData,
    backend: Backend,
    name: &str,
    code: &str,
) -> PyResult<()> {
    let dir = cache_for(py, data)?.dir.join("generated");
    let hash = parpy_runtime::cache::sha256_hex(code.as_bytes());
    let ext = match backend {
        Backend::Cpu => "c",
        Backend::Cuda => "cu",
        Backend::Metal => "metal",
    };
    let path = dir.join(format!("{name}-{}.{ext}", &hash[..12]));
    // a temporary file renamed over the name: a symlink planted there is
    // replaced, never followed
    parpy_runtime::cache::write_private(&path, code.as_bytes())
        .map_err(|e| build_error_to_py(e, false))?;
    stderr_write(
        py,
        &format!(
            "parpy: wrote the generated code of `{name}` to {}\n",
            path.display()
        ),
    )
}

/// Comment lines naming the content hash of each header of the program's
/// external functions found in `includes` (or the working directory), and
/// of the headers they include in turn (`#include "x.h"` beside the
/// including file or in `includes`; `<...>` ones only where found there),
/// so that editing any of them changes the code the disk cache is keyed by.
pub fn header_stamp(p: &parpy_core::ir::Program, includes: &[String]) -> String {
    header_stamp_files(p, includes).0
}

/// [`header_stamp`] and the header files it read (their canonical paths).
fn header_stamp_files(
    p: &parpy_core::ir::Program,
    includes: &[String],
) -> (String, std::collections::BTreeSet<std::path::PathBuf>) {
    let mut out = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for h in p.externals.iter().filter_map(|e| e.header.as_deref()) {
        let name = h.trim().trim_matches(|c| matches!(c, '<' | '>' | '"'));
        stamp_header(name, None, includes, &mut seen, &mut out);
    }
    (out, seen)
}

/// What `stat` says of a file: (device, inode, size, mtime and ctime in
/// nanoseconds); `None` when it cannot be read.
type FileStamp = Option<(u64, u64, u64, i128, i128)>;

fn file_stamp(path: &std::path::Path) -> FileStamp {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    let ns = |s: i64, n: i64| s as i128 * 1_000_000_000 + n as i128;
    Some((
        m.dev(),
        m.ino(),
        m.size(),
        ns(m.mtime(), m.mtime_nsec()),
        ns(m.ctime(), m.ctime_nsec()),
    ))
}

/// The headers of a compiled function's external functions ([`header_stamp`]'s
/// files), each with its [`FileStamp`] taken before the build read it: the
/// in-memory cache asks [`HeaderWatch::unchanged`] at each call of a
/// function that has some (one `stat` per header), and builds again after an
/// edit, as a new process would (the disk cache is keyed by their content).
#[derive(Default)]
pub struct HeaderWatch(Vec<(std::path::PathBuf, FileStamp)>);

impl HeaderWatch {
    pub fn new(p: &parpy_core::ir::Program, includes: &[String]) -> HeaderWatch {
        if p.externals.iter().all(|e| e.header.is_none()) {
            return HeaderWatch::default();
        }
        let (_, files) = header_stamp_files(p, includes);
        HeaderWatch(
            files
                .into_iter()
                .map(|f| {
                    let s = file_stamp(&f);
                    (f, s)
                })
                .collect(),
        )
    }

    /// No header was edited (or removed) since the build.
    #[inline]
    pub fn unchanged(&self) -> bool {
        self.0.iter().all(|(f, s)| file_stamp(f) == *s)
    }
}

/// [`header_stamp`]'s line for the header `name` (looked up beside
/// `from`, the including file's folder, first) and those it includes.
fn stamp_header(
    name: &str,
    from: Option<&std::path::Path>,
    includes: &[String],
    seen: &mut std::collections::BTreeSet<std::path::PathBuf>,
    out: &mut String,
) {
    use std::path::PathBuf;
    let found = from
        .map(PathBuf::from)
        .into_iter()
        .chain(includes.iter().map(PathBuf::from))
        .chain(std::iter::once(PathBuf::from(".")))
        .map(|d| d.join(name))
        .find_map(|path| std::fs::read(&path).ok().map(|b| (path, b)));
    let Some((path, bytes)) = found else {
        return;
    };
    let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    if !seen.insert(key) {
        return;
    }
    out.push_str(&format!(
        "// parpy-header: {name} {}\n",
        parpy_runtime::cache::sha256_hex(&bytes)
    ));
    let dir = path.parent().map(std::path::Path::to_path_buf);
    for line in String::from_utf8_lossy(&bytes).lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim();
        let (quoted, close) = match rest.chars().next() {
            Some('"') => (true, '"'),
            Some('<') => (false, '>'),
            _ => continue,
        };
        if let Some(inner) = rest[1..].split(close).next() {
            let beside = if quoted { dir.as_deref() } else { None };
            stamp_header(inner, beside, includes, seen, out);
        }
    }
}
