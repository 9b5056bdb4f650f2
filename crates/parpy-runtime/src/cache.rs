//! The disk cache of compiled shared libraries.
//!
//! Entry `K` is `K.so` plus `K.meta`, where `K` is the SHA-256 of the parpy
//! version, the compiler identity, the flags and the code. `K.meta` holds the
//! SHA-256 and the size of the `.so` bytes; a load verifies them, and an entry
//! that is missing half, truncated or corrupt is invalidated (its `.meta` is
//! deleted) and rebuilt; the rebuilt library replaces the bad one by rename.
//! Everything is written to a temporary name in the same directory, synced,
//! then renamed, so a concurrent reader never sees a partial file.
//!
//! Safety: the directory is created 0700; a directory that is not the
//! user's, is group/world-writable or that this process cannot write is
//! refused ([`DiskCache::open`] gives
//! a private temporary directory and a warning instead), and so is an
//! entry file that is not a regular file of the user's that only the user
//! may write (it is rebuilt). Files are created 0600 (libraries 0700),
//! whatever the umask. Entries are opened without following symlinks and
//! without blocking (a FIFO is an entry to rebuild, not a hang).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::cc::{BuildFlags, Compiler};
use crate::RuntimeError;

/// `$XDG_CACHE_HOME/parpy`, else `~/.cache/parpy`, else
/// `$TMPDIR/parpy-cache-UID` (the user's own; [`DiskCache::open`] refuses
/// it when someone else made it).
pub fn default_cache_dir() -> PathBuf {
    if let Some(x) = crate::env::xdg_cache_home() {
        return x.join("parpy");
    }
    if let Some(h) = crate::env::home() {
        return h.join(".cache").join("parpy");
    }
    std::env::temp_dir().join(format!("parpy-cache-{}", user_id()))
}

/// The effective user id (0 where there are none).
pub fn user_id() -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() }
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// Why a cache directory or entry with this metadata may not be trusted:
/// another user owns it, or others may write it.
fn distrust(m: &fs::Metadata) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if m.uid() != user_id() {
            return Some(format!(
                "owned by uid {}, not by you (uid {})",
                m.uid(),
                user_id()
            ));
        }
        if m.mode() & 0o022 != 0 {
            return Some(format!(
                "writable by group or others (mode {:o})",
                m.mode() & 0o7777
            ));
        }
    }
    let _ = m;
    None
}

/// Creates `dir` (mode 0700) and its missing parents.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(parent) = dir.parent() {
        if !parent.as_os_str().is_empty() {
            fs::create_dir_all(parent)?;
        }
    }
    let mut b = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    match b.create(dir) {
        Ok(()) => set_mode(dir, 0o700),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}

/// Removes `dir` (a private cache directory) when this process exits, and
/// not when a forked child does.
fn remove_at_exit(dir: &std::path::Path) {
    static AT_EXIT: std::sync::OnceLock<(u32, PathBuf)> = std::sync::OnceLock::new();
    extern "C" fn remove() {
        if let Some((pid, dir)) = AT_EXIT.get() {
            if *pid == std::process::id() {
                let _ = fs::remove_dir_all(dir);
            }
        }
    }
    if AT_EXIT.set((std::process::id(), dir.to_path_buf())).is_ok() {
        // SAFETY: `remove` is a plain function that only reads a set-once
        // static; atexit has no other precondition.
        unsafe {
            libc::atexit(remove);
        }
    }
}

/// This process's private cache directory (used when the configured one
/// cannot be trusted): a new 0700 directory under the system temp dir.
fn private_dir() -> Result<PathBuf, RuntimeError> {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(d) = DIR.get() {
        return Ok(d.clone());
    }
    for _ in 0..8 {
        let d =
            std::env::temp_dir().join(format!("parpy-private-{}-{}", user_id(), unique_suffix()));
        let mut b = fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(0o700);
        }
        match b.create(&d) {
            Ok(()) => {
                let _ = set_mode(&d, 0o700);
                let d = DIR.get_or_init(|| d).clone();
                remove_at_exit(&d);
                return Ok(d);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(RuntimeError::io(&d, e)),
        }
    }
    Err(RuntimeError::io(
        std::env::temp_dir(),
        std::io::Error::other("could not create a private cache directory"),
    ))
}

/// Why this process cannot write into the directory `dir`, if it cannot:
/// a file made there and removed at once says (permission bits do not,
/// for root, a read-only mount or a directory like `/proc/self`). Its name
/// ends in `.tmp`, a temporary `clear` removes should it stay.
fn unwritable(dir: &Path) -> Option<String> {
    let probe = dir.join(format!(".parpy-probe.{}.tmp", unique_suffix()));
    let mut o = fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    match o.open(&probe) {
        Ok(f) => {
            drop(f);
            let _ = fs::remove_file(&probe);
            None
        }
        Err(e) => Some(format!("it cannot be written ({e})")),
    }
}

/// What reading a cache entry's file found.
enum Entry {
    Absent,
    /// Not a regular file, not the user's, writable by others, unreadable.
    Bad,
    Ok(Vec<u8>),
}

/// Reads a cache entry's file without following a symlink and without
/// blocking (a FIFO or a device is `Bad`, never waited on).
fn read_entry(path: &Path) -> Entry {
    let mut o = fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let f = match o.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Entry::Absent,
        Err(_) => return Entry::Bad,
    };
    match f.metadata() {
        Ok(m) if m.is_file() && distrust(&m).is_none() => {}
        _ => return Entry::Bad,
    }
    let mut bytes = Vec::new();
    match std::io::Read::read_to_end(&mut { f }, &mut bytes) {
        Ok(_) => Entry::Ok(bytes),
        Err(_) => Entry::Bad,
    }
}

/// Removes a bad entry's file, whatever it is (a directory included).
fn remove_entry(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

pub use crate::hash::sha256_hex;

/// What happened on a lookup (for tests and `verbose` output).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    Hit,
    Built,
    /// A corrupt or incomplete entry was found, deleted and rebuilt.
    Rebuilt,
}

#[derive(Clone, Debug)]
pub struct DiskCache {
    pub dir: PathBuf,
}

impl DiskCache {
    pub fn new(dir: impl Into<PathBuf>) -> DiskCache {
        DiskCache { dir: dir.into() }
    }

    pub fn default_location() -> DiskCache {
        DiskCache::new(default_cache_dir())
    }

    /// The cache in `dir`, created 0700 when missing. A directory that
    /// another user owns, that others may write, that cannot be created or
    /// that this process cannot write (mode 0555, a read-only mount,
    /// `/proc/self`) is refused: the cache is then a private temporary
    /// directory of this process, returned with a sentence saying why (for
    /// a warning).
    pub fn open(dir: impl Into<PathBuf>) -> Result<(DiskCache, Option<String>), RuntimeError> {
        let dir = dir.into();
        let why = match create_private_dir(&dir).and_then(|()| fs::metadata(&dir)) {
            Ok(m) if !m.is_dir() => Some("it is not a directory".to_string()),
            Ok(m) => distrust(&m).or_else(|| unwritable(&dir)),
            Err(e) => Some(format!("it cannot be created ({e})")),
        };
        match why {
            None => Ok((DiskCache { dir }, None)),
            Some(why) => {
                let private = private_dir()?;
                let msg = format!(
                    "parpy does not use the cache directory {}: {why}; building in the private \
                     directory {} instead (set CompileOptions.cache_dir to a directory of yours \
                     with mode 0700)",
                    dir.display(),
                    private.display()
                );
                Ok((DiskCache { dir: private }, Some(msg)))
            }
        }
    }

    /// A private hard link to the entry file `path` (`NAME.UNIQUE.pin.tmp`,
    /// which [`clear`] leaves to its owner), so that a concurrent clear
    /// cannot remove the file between its verification and its use.
    pub fn pin(&self, path: &Path) -> std::io::Result<PathBuf> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let pinned = self.dir.join(format!("{name}.{}.pin.tmp", unique_suffix()));
        fs::hard_link(path, &pinned)?;
        Ok(pinned)
    }

    /// Creates the directory (0700) if missing.
    fn ensure_dir(&self) -> Result<(), RuntimeError> {
        create_private_dir(&self.dir).map_err(|e| RuntimeError::io(&self.dir, e))
    }

    /// What `compiler` is ([`Compiler::content_identity`]: the hash of its
    /// bytes), remembered per stamp ([`Compiler::identity`]) in this
    /// process and in the file `compilers/<hash of the stamp>.id` of the
    /// cache directory, read as entries are (a regular file of this user that
    /// no one else may write): a new process with a warm cache does not
    /// hash a megabyte of compiler again (~2.5 ms of the first call).
    pub fn compiler_id(&self, compiler: &Compiler) -> String {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        static KNOWN: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
        let known = KNOWN.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(id) = known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&compiler.identity)
        {
            return id.clone();
        }
        let memo = self.compiler_memo(compiler);
        let id = match read_entry(&memo) {
            Entry::Ok(b) => String::from_utf8(b)
                .ok()
                .filter(|s| !s.is_empty() && !s.contains('\n')),
            Entry::Absent | Entry::Bad => None,
        };
        let id = id.unwrap_or_else(|| {
            let id = compiler.content_identity();
            // best effort: a cache directory that cannot take it only
            // costs the hash again
            let _ = write_private(&memo, id.as_bytes());
            id
        });
        known
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(compiler.identity.clone(), id.clone());
        id
    }

    /// Where [`DiskCache::compiler_id`] remembers the hash of `compiler`:
    /// `compilers/<hash of its stamp>.id` (a directory of its own, so that
    /// the entries stay alone at the top).
    fn compiler_memo(&self, compiler: &Compiler) -> PathBuf {
        let name = &sha256_hex(compiler.identity.as_bytes())[..32];
        self.dir.join("compilers").join(format!("{name}.id"))
    }

    /// The cache key of one build.
    pub fn key(&self, code: &str, compiler: &Compiler, flags: &BuildFlags) -> String {
        let compiler_id = self.compiler_id(compiler);
        let mut h = Sha256::new();
        for part in [
            "parpy",
            parpy_core::VERSION,
            &compiler_id,
            crate::cc::target_cpu(),
            &compiler.pre_args.join("\0"),
            &flags.fingerprint(),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.update((code.len() as u64).to_le_bytes());
        h.update(code.as_bytes());
        let mut s = String::with_capacity(64);
        for b in h.finalize().iter() {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }

    pub fn so_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.so"))
    }

    pub fn meta_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.meta"))
    }

    /// Invalidates the entry of `code` (its metadata goes), so the next
    /// lookup builds it again: for an entry that verifies but whose library
    /// the system loader refuses (`crate::build_and_load_outcome`).
    pub fn invalidate(&self, code: &str, compiler: &Compiler, flags: &BuildFlags) {
        remove_entry(&self.meta_path(&self.key(code, compiler, flags)));
    }

    /// The path of a verified shared library for `code`, building it when
    /// the entry is absent or bad.
    pub fn get_or_build(
        &self,
        code: &str,
        compiler: &Compiler,
        flags: &BuildFlags,
    ) -> Result<PathBuf, RuntimeError> {
        self.get_or_build_outcome(code, compiler, flags)
            .map(|(p, _)| p)
    }

    pub fn get_or_build_outcome(
        &self,
        code: &str,
        compiler: &Compiler,
        flags: &BuildFlags,
    ) -> Result<(PathBuf, Outcome), RuntimeError> {
        self.get_or_build_inner(code, compiler, flags, false)
    }

    /// [`DiskCache::get_or_build`], returning a private hard link to the
    /// verified (or just built) library ([`DiskCache::pin`]) that a
    /// concurrent [`clear`] cannot remove; the caller deletes it after
    /// loading. `None` where the file system has no hard links.
    pub fn get_or_build_pinned(
        &self,
        code: &str,
        compiler: &Compiler,
        flags: &BuildFlags,
    ) -> Result<(PathBuf, Option<PathBuf>, Outcome), RuntimeError> {
        let entry = self.so_path(&self.key(code, compiler, flags));
        let (got, outcome) = self.get_or_build_inner(code, compiler, flags, true)?;
        Ok(if got == entry {
            (entry, None, outcome)
        } else {
            (entry, Some(got), outcome)
        })
    }

    fn get_or_build_inner(
        &self,
        code: &str,
        compiler: &Compiler,
        flags: &BuildFlags,
        pin: bool,
    ) -> Result<(PathBuf, Outcome), RuntimeError> {
        let key = self.key(code, compiler, flags);
        let so = self.so_path(&key);
        let meta = self.meta_path(&key);
        let mut outcome = Outcome::Built;
        match self.verify(&key, &so, &meta) {
            Verified::Ok if !pin => return Ok((so, Outcome::Hit)),
            Verified::Ok => match self.pin(&so) {
                Ok(p) => return Ok((p, Outcome::Hit)),
                // cleared since the verification: build it again
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => return Ok((so, Outcome::Hit)),
            },
            Verified::Absent => {}
            Verified::Bad => {
                // Invalidate the entry by its metadata only: the library is
                // replaced by an atomic rename below, so a process that has
                // just verified and is about to load it never finds it gone
                // (unless it is not a regular file: a rename cannot
                // replace a directory).
                remove_entry(&meta);
                if fs::symlink_metadata(&so).is_ok_and(|m| !m.is_file()) {
                    remove_entry(&so);
                }
                outcome = Outcome::Rebuilt;
            }
        }
        self.ensure_dir()?;
        let uniq = unique_suffix();
        // The source keeps the same file name in every build of a key (in a
        // private directory): the compiler records that name in the
        // library, and concurrent builders of one key must produce the same
        // bytes, or the last rename and the last metadata written could
        // come from different builds.
        let src_dir = self.dir.join(format!("{key}.{uniq}.d"));
        let src_tmp = src_dir.join(format!("{key}.c"));
        let so_tmp = self.dir.join(format!("{key}.{uniq}.so.tmp"));
        let result = (|| {
            create_private_dir(&src_dir).map_err(|e| RuntimeError::io(&src_dir, e))?;
            write_synced(&src_tmp, code.as_bytes())?;
            compiler.build(&src_tmp, &so_tmp, flags)?;
            set_mode(&so_tmp, 0o700).map_err(|e| RuntimeError::io(&so_tmp, e))?;
            // pinned before it is published, so no clear can take it away
            let pinned = if pin { self.pin(&so_tmp).ok() } else { None };
            let bytes = fs::read(&so_tmp).map_err(|e| RuntimeError::io(&so_tmp, e))?;
            File::open(&so_tmp)
                .and_then(|f| f.sync_all())
                .map_err(|e| RuntimeError::io(&so_tmp, e))?;
            let meta_text = format!(
                "key={key}\nsha256={}\nsize={}\n",
                sha256_hex(&bytes),
                bytes.len()
            );
            let published = fs::rename(&so_tmp, &so)
                .map_err(|e| RuntimeError::io(&so, e))
                .and_then(|()| write_atomic(&meta, meta_text.as_bytes()));
            if let Err(e) = published {
                if let Some(p) = &pinned {
                    let _ = fs::remove_file(p);
                }
                return Err(e);
            }
            sync_dir(&self.dir);
            Ok(pinned)
        })();
        let _ = fs::remove_dir_all(&src_dir);
        let _ = fs::remove_file(&so_tmp);
        result.map(|pinned| (pinned.unwrap_or(so), outcome))
    }

    /// The cache key of an artifact that is not built by the C compiler
    /// (a cubin from NVRTC, a library from nvcc): the parpy version plus
    /// every part that identifies the build (code, tool versions, flags,
    /// target architecture).
    pub fn blob_key(parts: &[&[u8]]) -> String {
        let mut h = Sha256::new();
        for part in [b"parpy-blob".as_slice(), parpy_core::VERSION.as_bytes()]
            .into_iter()
            .chain(parts.iter().copied())
        {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        let mut s = String::with_capacity(64);
        for b in h.finalize().iter() {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }

    /// The verified file of key `key` (`ext` is `cubin` or `so`), building
    /// its bytes with `build` when the entry is absent or bad. Same
    /// guarantees as [`DiskCache::get_or_build_outcome`]: verification on
    /// load, atomic writes, corrupt entries rebuilt.
    ///
    /// The bytes go to `KEY.HASH.EXT`, named by their content, and
    /// `KEY.meta` (written last, atomically) names that file with its hash
    /// and size. Concurrent builders of one key whose builds differ (nvcc
    /// output is not byte-for-byte reproducible) each write their own file,
    /// so the meta that wins always describes a complete file; a library
    /// replaced under the same name would also be shadowed by `dlopen`'s
    /// per-path handle in a process that loaded the old one.
    pub fn get_or_build_blob<E: From<RuntimeError>>(
        &self,
        key: &str,
        ext: &str,
        build: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<(PathBuf, Outcome), E> {
        let meta = self.meta_path(key);
        let mut outcome = Outcome::Built;
        match self.verify_blob(key, ext, &meta) {
            (Verified::Ok, Some(path)) => return Ok((path, Outcome::Hit)),
            (Verified::Absent, _) => {}
            (_, named) => {
                remove_entry(&meta);
                if let Some(p) = named {
                    remove_entry(&p);
                }
                outcome = Outcome::Rebuilt;
            }
        }
        let bytes = build()?;
        self.ensure_dir()?;
        let sha = sha256_hex(&bytes);
        let name = format!("{key}.{}.{ext}", &sha[..16]);
        let path = self.dir.join(&name);
        write_atomic(&path, &bytes)?;
        let meta_text = format!(
            "key={key}\nfile={name}\nsha256={sha}\nsize={}\n",
            bytes.len()
        );
        write_atomic(&meta, meta_text.as_bytes())?;
        sync_dir(&self.dir);
        Ok((path, outcome))
    }

    /// Checks a blob entry: its meta, and the file the meta names against
    /// the recorded hash and size. Also returns the named file's path.
    fn verify_blob(&self, key: &str, ext: &str, meta: &Path) -> (Verified, Option<PathBuf>) {
        let text = match read_entry(meta) {
            Entry::Absent => return (Verified::Absent, None),
            Entry::Bad => return (Verified::Bad, None),
            Entry::Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        };
        let field = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_string())
        };
        // another key's entry copied over this one's names
        if field("key=").as_deref() != Some(key) {
            return (Verified::Bad, None);
        }
        let name = field("file=").filter(|n| {
            n.starts_with(key)
                && n.ends_with(&format!(".{ext}"))
                && !n.contains('/')
                && !n.contains('\\')
        });
        let Some(name) = name else {
            return (Verified::Bad, None);
        };
        let path = self.dir.join(name);
        let size = field("size=").and_then(|v| v.parse::<u64>().ok());
        let ok = match (read_entry(&path), field("sha256="), size) {
            (Entry::Ok(bytes), Some(sha), Some(size)) => {
                bytes.len() as u64 == size && sha256_hex(&bytes) == sha
            }
            _ => false,
        };
        (if ok { Verified::Ok } else { Verified::Bad }, Some(path))
    }

    /// Checks the entry of `key`: its metadata names `key` (not another
    /// key's valid entry copied over this one's names, whose library
    /// would be called with arguments it was not built for) and the
    /// library's hash and size.
    fn verify(&self, key: &str, so: &Path, meta: &Path) -> Verified {
        let (bytes, meta_text) = match (read_entry(so), read_entry(meta)) {
            (Entry::Absent, Entry::Absent) => return Verified::Absent,
            (Entry::Ok(b), Entry::Ok(t)) => (b, String::from_utf8_lossy(&t).into_owned()),
            _ => return Verified::Bad,
        };
        let mut want_sha = None;
        let mut want_size = None;
        let mut want_key = None;
        for line in meta_text.lines() {
            if let Some(v) = line.strip_prefix("key=") {
                want_key = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("sha256=") {
                want_sha = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("size=") {
                want_size = v.trim().parse::<u64>().ok();
            }
        }
        let (Some(want_sha), Some(want_size)) = (want_sha, want_size) else {
            return Verified::Bad;
        };
        if want_key.as_deref() != Some(key) {
            return Verified::Bad;
        }
        if bytes.len() as u64 == want_size && sha256_hex(&bytes) == want_sha {
            Verified::Ok
        } else {
            Verified::Bad
        }
    }

    /// Removes every cache entry (and stray temporary file) in the directory.
    /// Files that do not look like cache entries are left alone.
    pub fn clear(&self) -> Result<usize, RuntimeError> {
        clear(&self.dir)
    }
}

enum Verified {
    Ok,
    Absent,
    Bad,
}

/// Temporary files and build directories older than this are leftovers
/// of killed processes; younger ones belong to builds in flight.
const STALE_SECS: u64 = 3600;

/// Removes parpy's complete cache entries from `dir` (metadata first, so
/// an entry is never half there), and the temporary files of builds
/// that died more than an hour ago; builds in flight (in this or other
/// processes) keep their files and finish. Returns how many files went.
pub fn clear(dir: &Path) -> Result<usize, RuntimeError> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(RuntimeError::io(dir, e)),
    };
    let mut names: Vec<(String, PathBuf)> = rd
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e.path())))
        .filter(|(name, _)| {
            name.len() > 65
                && name.as_bytes()[..64].iter().all(u8::is_ascii_hexdigit)
                && name.as_bytes()[64] == b'.'
        })
        .collect();
    // metadata first: a reader then finds an absent entry, not half of one
    names.sort_by_key(|(name, _)| !name.ends_with(".meta"));
    let now = std::time::SystemTime::now();
    let mut n = 0;
    for (name, path) in names {
        let complete = [".so", ".meta", ".cubin"].iter().any(|s| name.ends_with(s));
        let temporary = [".tmp", ".c", ".d"].iter().any(|s| name.ends_with(s));
        let removed = if complete {
            fs::remove_file(&path).is_ok()
        } else if temporary {
            let stale = fs::symlink_metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| age.as_secs() > STALE_SECS);
            stale
                && if name.ends_with(".d") {
                    fs::remove_dir_all(&path).is_ok()
                } else {
                    fs::remove_file(&path).is_ok()
                }
        } else {
            false
        };
        if removed {
            n += 1;
        }
    }
    Ok(n)
}

fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let tid = format!("{:?}", std::thread::current().id());
    let tid: String = tid.chars().filter(char::is_ascii_digit).collect();
    format!("{}-{tid}-{nanos}", std::process::id())
}

/// Creates `path` (which must not exist) with mode 0600, writes and syncs.
fn write_synced(path: &Path, data: &[u8]) -> Result<(), RuntimeError> {
    let mut o = fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let mut f = o.open(path).map_err(|e| RuntimeError::io(path, e))?;
    f.write_all(data)
        .and_then(|()| f.sync_all())
        .map_err(|e| RuntimeError::io(path, e))
}

/// Writes `data` to `path` through a synced temporary file (mode 0600)
/// and a rename, which replaces a file or symlink at `path` without
/// following it.
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<(), RuntimeError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!("{name}.{}.tmp", unique_suffix()));
    let r = write_synced(&tmp, data)
        .and_then(|()| fs::rename(&tmp, path).map_err(|e| RuntimeError::io(path, e)));
    if r.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    r
}

/// Writes `data` to `path` through [`write_atomic`], creating its
/// directory with mode 0700 when missing.
pub fn write_private(path: &Path, data: &[u8]) -> Result<(), RuntimeError> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir).map_err(|e| RuntimeError::io(dir, e))?;
    }
    write_atomic(path, data)
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::LoadedEntry;

    const CODE: &str =
        "#include <stdint.h>\nint32_t entry(void **args) { *(int64_t*)args[0] += 41; return 0; }\n";

    fn tmp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("parpy-cache-test-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    /// The names in `dir`, sorted, without the directory of compiler
    /// memos, which the first key computed in this process writes.
    fn listed(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "compilers")
            .collect();
        names.sort();
        names
    }

    fn call(path: &Path) -> i64 {
        let e = LoadedEntry::load(path, "entry").unwrap();
        let mut slot: i64 = 1;
        let mut args = [&mut slot as *mut i64 as *mut std::ffi::c_void];
        e.call(&mut args).unwrap();
        slot
    }

    #[test]
    fn miss_then_hit() {
        let cache = DiskCache::new(tmp_dir("hit"));
        let cc = Compiler::find().unwrap();
        let f = BuildFlags::default();
        let (p1, o1) = cache.get_or_build_outcome(CODE, &cc, &f).unwrap();
        assert_eq!(o1, Outcome::Built);
        let (p2, o2) = cache.get_or_build_outcome(CODE, &cc, &f).unwrap();
        assert_eq!(o2, Outcome::Hit);
        assert_eq!(p1, p2);
        assert_eq!(call(&p2), 42);
        // different flags -> different key
        let f2 = BuildFlags {
            extra_flags: vec!["-DFOO=1".into()],
            ..Default::default()
        };
        assert_ne!(cache.key(CODE, &cc, &f), cache.key(CODE, &cc, &f2));
        assert_ne!(cache.key(CODE, &cc, &f), cache.key("x", &cc, &f));
        let _ = fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn the_compiler_hash_is_remembered_in_the_cache_directory() {
        let cache = DiskCache::new(tmp_dir("ccid"));
        let real = Compiler::find().unwrap();
        // a stamp no other test uses: nothing is known in this process
        let cc = Compiler {
            identity: format!("{}|test-stamp-{}", real.path.display(), unique_suffix()),
            ..real.clone()
        };
        let memo = cache.compiler_memo(&cc);
        // the memo is trusted as an entry is: a file others may write is not
        fs::create_dir_all(memo.parent().unwrap()).unwrap();
        fs::write(&memo, "planted").unwrap();
        set_mode(&memo, 0o666).unwrap();
        assert_eq!(cache.compiler_id(&cc), real.content_identity());
        // the hash was written back (mode 0600) and is read from there
        assert_eq!(fs::read_to_string(&memo).unwrap(), real.content_identity());
        let fresh = Compiler {
            identity: format!("{}|test-stamp-{}", real.path.display(), unique_suffix()),
            ..real.clone()
        };
        write_atomic(&cache.compiler_memo(&fresh), b"remembered").unwrap();
        assert_eq!(cache.compiler_id(&fresh), "remembered");
        let _ = fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn an_entry_that_verifies_but_does_not_load_is_rebuilt_once() {
        let cache = DiskCache::new(tmp_dir("unloadable"));
        let cc = Compiler::find().unwrap();
        let f = BuildFlags::default();
        let (_, o) = crate::build_and_load_outcome(CODE, "entry", &f, &cache).unwrap();
        assert_eq!(o, Outcome::Built);
        // an empty library whose metadata matches it
        let key = cache.key(CODE, &cc, &f);
        // (a new file: this process may still map the old one)
        let so = cache.so_path(&key);
        let tmp = so.with_extension("damaged");
        fs::write(&tmp, b"").unwrap();
        fs::rename(&tmp, &so).unwrap();
        let meta = format!("key={key}\nsha256={}\nsize=0\n", sha256_hex(b""));
        fs::write(cache.meta_path(&key), meta).unwrap();
        let (e, o) = crate::build_and_load_outcome(CODE, "entry", &f, &cache).unwrap();
        assert_eq!(o, Outcome::Rebuilt);
        let mut slot: i64 = 1;
        e.call(&mut [&mut slot as *mut i64 as *mut std::ffi::c_void])
            .unwrap();
        assert_eq!(slot, 42);
        assert_eq!(
            crate::build_and_load_outcome(CODE, "entry", &f, &cache)
                .unwrap()
                .1,
            Outcome::Hit
        );

        // a library the loader refuses however often it is built: the
        // loader's reason, and the rebuild, in the error
        let code = "#include <stdint.h>\nextern int32_t parpy_test_missing(void);\n\
                    int32_t entry(void **a) { (void)a; return parpy_test_missing(); }\n";
        let first = crate::build_and_load_outcome(code, "entry", &f, &cache).unwrap_err();
        assert!(
            matches!(&first, RuntimeError::Load { msg, .. } if msg.contains("parpy_test_missing")),
            "{first}"
        );
        let again = crate::build_and_load_outcome(code, "entry", &f, &cache).unwrap_err();
        let text = again.to_string();
        assert!(text.contains("parpy_test_missing"), "{text}");
        assert!(text.contains("built again"), "{text}");
        assert!(text.contains(&cache.key(code, &cc, &f)), "{text}");
        let _ = fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn corrupt_truncated_or_half_entries_are_rebuilt() {
        let cache = DiskCache::new(tmp_dir("corrupt"));
        let cc = Compiler::find().unwrap();
        let f = BuildFlags::default();
        let (so, _) = cache.get_or_build_outcome(CODE, &cc, &f).unwrap();
        let good = fs::read(&so).unwrap();
        let key = cache.key(CODE, &cc, &f);

        // flipped byte
        let mut bad = good.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0xff;
        fs::write(&so, &bad).unwrap();
        let (_, o) = cache.get_or_build_outcome(CODE, &cc, &f).unwrap();
        assert_eq!(o, Outcome::Rebuilt);
        assert_ne!(sha256_hex(&fs::read(&so).unwrap()), sha256_hex(&bad));
        assert_eq!(
            cache.get_or_build_outcome(CODE, &cc, &f).unwrap().1,
            Outcome::Hit
        );

        // truncated
        fs::write(&so, &good[..10]).unwrap();
        assert_eq!(
            cache.get_or_build_outcome(CODE, &cc, &f).unwrap().1,
            Outcome::Rebuilt
        );

        // meta missing
        fs::remove_file(cache.meta_path(&key)).unwrap();
        assert_eq!(
            cache.get_or_build_outcome(CODE, &cc, &f).unwrap().1,
            Outcome::Rebuilt
        );

        // another key's valid entry copied over this one's names (its
        // library, called with this key's arguments, wrote past them)
        const OTHER: &str = "int entry(void **a) { (void)a; return 7; }\n";
        let other = cache.key(OTHER, &cc, &f);
        cache.get_or_build(OTHER, &cc, &f).unwrap();
        fs::copy(cache.so_path(&other), &so).unwrap();
        fs::copy(cache.meta_path(&other), cache.meta_path(&key)).unwrap();
        assert_eq!(
            cache.get_or_build_outcome(CODE, &cc, &f).unwrap().1,
            Outcome::Rebuilt
        );
        let theirs = fs::read(cache.so_path(&other)).unwrap();
        assert_ne!(sha256_hex(&fs::read(&so).unwrap()), sha256_hex(&theirs));

        // meta garbage
        fs::write(cache.meta_path(&key), "nonsense").unwrap();
        assert_eq!(
            cache.get_or_build_outcome(CODE, &cc, &f).unwrap().1,
            Outcome::Rebuilt
        );

        // so missing, meta present
        fs::remove_file(&so).unwrap();
        assert_eq!(
            cache.get_or_build_outcome(CODE, &cc, &f).unwrap().1,
            Outcome::Rebuilt
        );
        assert_eq!(
            cache.get_or_build_outcome(CODE, &cc, &f).unwrap().1,
            Outcome::Hit
        );
        assert_eq!(call(&so), 42);
        let _ = fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn builds_of_one_key_are_byte_identical() {
        let (a, b) = (
            DiskCache::new(tmp_dir("same-bytes-a")),
            DiskCache::new(tmp_dir("same-bytes-b")),
        );
        let cc = Compiler::find().unwrap();
        let f = BuildFlags::default();
        let pa = a.get_or_build(CODE, &cc, &f).unwrap();
        let pb = b.get_or_build(CODE, &cc, &f).unwrap();
        assert_eq!(fs::read(&pa).unwrap(), fs::read(&pb).unwrap());
        // no temporary source directory is left behind
        let names = listed(&a.dir);
        assert_eq!(names.len(), 2, "{names:?}");
        let _ = fs::remove_dir_all(&a.dir);
        let _ = fs::remove_dir_all(&b.dir);
    }

    #[test]
    fn concurrent_builds_of_one_key_all_succeed() {
        let cache = DiskCache::new(tmp_dir("concurrent"));
        let cc = Compiler::find().unwrap();
        let f = BuildFlags::default();
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (cache, cc, f) = (cache.clone(), cc.clone(), f.clone());
                std::thread::spawn(move || {
                    let p = cache.get_or_build(CODE, &cc, &f).unwrap();
                    call(&p)
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), 42);
        }
        assert_eq!(
            cache.get_or_build_outcome(CODE, &cc, &f).unwrap().1,
            Outcome::Hit
        );
        let names = listed(&cache.dir);
        assert_eq!(names.len(), 2, "{names:?}");
        let _ = fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn concurrent_blob_builds_that_differ_all_succeed() {
        // nvcc output differs between builds: the winner's meta must name
        // the winner's file (it named the last-renamed file before, so a
        // later call found a mismatch and rebuilt)
        let cache = DiskCache::new(tmp_dir("blobrace"));
        let key = DiskCache::blob_key(&[b"race"]);
        let handles: Vec<_> = (0..8u8)
            .map(|n| {
                let (cache, key) = (cache.clone(), key.clone());
                std::thread::spawn(move || {
                    let (p, _) = cache
                        .get_or_build_blob(&key, "so", || {
                            std::thread::sleep(std::time::Duration::from_millis(5));
                            Ok::<_, RuntimeError>(vec![n; 4096])
                        })
                        .unwrap();
                    let got = fs::read(&p).unwrap();
                    assert!(got.len() == 4096 && got.iter().all(|&b| b == got[0]));
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        for _ in 0..3 {
            let (_, o) = cache
                .get_or_build_blob(&key, "so", || Ok::<_, RuntimeError>(vec![99; 4096]))
                .unwrap();
            assert_eq!(o, Outcome::Hit);
        }
        let _ = fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn blobs_are_cached_verified_and_rebuilt() {
        let cache = DiskCache::new(tmp_dir("blob"));
        let key = DiskCache::blob_key(&[b"code", b"sm_90"]);
        assert_ne!(key, DiskCache::blob_key(&[b"code", b"sm_80"]));
        assert_ne!(key, DiskCache::blob_key(&[b"codes", b"m_90"]));
        let build = |n: u8| move || Ok::<_, RuntimeError>(vec![n; 100]);
        let (p, o) = cache.get_or_build_blob(&key, "cubin", build(1)).unwrap();
        assert_eq!(o, Outcome::Built);
        let (p2, o) = cache.get_or_build_blob(&key, "cubin", build(2)).unwrap();
        assert_eq!((o, &p2), (Outcome::Hit, &p));
        assert_eq!(fs::read(&p).unwrap(), vec![1; 100]);
        fs::write(&p, [1u8; 50]).unwrap();
        let (p3, o) = cache.get_or_build_blob(&key, "cubin", build(3)).unwrap();
        assert_eq!(o, Outcome::Rebuilt);
        assert_eq!(fs::read(&p3).unwrap(), vec![3; 100]);
        assert!(!p.exists(), "the corrupt file is removed");
        // a meta naming a file outside the entry is bad, not followed
        let meta = cache.meta_path(&key);
        let text = fs::read_to_string(&meta).unwrap();
        fs::write(&meta, text.replace("file=", "file=../")).unwrap();
        let (_, o) = cache.get_or_build_blob(&key, "cubin", build(3)).unwrap();
        assert_eq!(o, Outcome::Rebuilt);
        let err = cache
            .get_or_build_blob(&DiskCache::blob_key(&[b"x"]), "cubin", || {
                Err(RuntimeError::NoCompiler { tried: "x".into() })
            })
            .unwrap_err();
        assert!(err.to_string().contains("no C compiler"));
        assert_eq!(cache.clear().unwrap(), 2);
        let _ = fs::remove_dir_all(&cache.dir);
    }

    #[cfg(unix)]
    #[test]
    fn entries_that_are_not_regular_files_are_rebuilt_without_blocking() {
        let cache = DiskCache::new(tmp_dir("fifo"));
        let cc = Compiler::find().unwrap();
        let f = BuildFlags::default();
        let key = cache.key(CODE, &cc, &f);
        fs::create_dir_all(&cache.dir).unwrap();
        // a directory as the library, a FIFO as the metadata
        fs::create_dir(cache.so_path(&key)).unwrap();
        let meta = std::ffi::CString::new(cache.meta_path(&key).to_str().unwrap()).unwrap();
        // SAFETY: a valid path.
        assert_eq!(unsafe { libc::mkfifo(meta.as_ptr(), 0o600) }, 0);
        let (so, o) = cache.get_or_build_outcome(CODE, &cc, &f).unwrap();
        assert_eq!(o, Outcome::Rebuilt);
        assert_eq!(call(&so), 42);
        assert!(fs::symlink_metadata(cache.meta_path(&key))
            .unwrap()
            .is_file());
        let _ = fs::remove_dir_all(&cache.dir);
    }

    #[cfg(unix)]
    #[test]
    fn files_and_directories_are_private_and_shared_directories_refused() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tmp_dir("modes");
        // SAFETY: umask only changes this process's file creation mask.
        let old = unsafe { libc::umask(0) };
        let (cache, why) = DiskCache::open(&dir).unwrap();
        let cc = Compiler::find().unwrap();
        let (so, _) = cache
            .get_or_build_outcome(CODE, &cc, &BuildFlags::default())
            .unwrap();
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        assert!(why.is_none());
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&so), 0o700);
        let key = so.file_stem().unwrap().to_str().unwrap().to_string();
        assert_eq!(mode(&cache.meta_path(&key)), 0o600);
        // a world-writable directory is refused for a private one
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        let (other, why) = DiskCache::open(&dir).unwrap();
        assert!(why.unwrap().contains("writable by group or others"));
        // one this process cannot write (the user's, mode 0555: permission
        // bits do not stop root) too
        if Path::new("/proc/self").is_dir() {
            let (other, why) = DiskCache::open("/proc/self").unwrap();
            assert!(why.unwrap().contains("it cannot be written"));
            assert_ne!(other.dir, Path::new("/proc/self"));
        }
        assert_ne!(other.dir, dir);
        assert_eq!(mode(&other.dir), 0o700);
        // an entry others may write is rebuilt, not loaded
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        fs::set_permissions(&so, fs::Permissions::from_mode(0o666)).unwrap();
        let (_, o) = cache
            .get_or_build_outcome(CODE, &cc, &BuildFlags::default())
            .unwrap();
        assert_eq!(o, Outcome::Rebuilt);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn atomic_write_leaves_no_temporaries() {
        let dir = tmp_dir("atomic");
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("file.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn failed_build_leaves_no_entry_and_clear_removes_entries() {
        let cache = DiskCache::new(tmp_dir("clear"));
        let cc = Compiler::find().unwrap();
        let f = BuildFlags::default();
        let err = cache.get_or_build("this is not C", &cc, &f).unwrap_err();
        assert!(err.to_string().contains("failed"), "{err}");
        assert!(listed(&cache.dir).is_empty());
        cache.get_or_build(CODE, &cc, &f).unwrap();
        fs::write(cache.dir.join("keep-me.txt"), "x").unwrap();
        // the source directory a killed build left behind two hours ago
        // goes; one of a build in flight stays
        let stray = cache.dir.join(format!("{}.1-2-3.d", "a".repeat(64)));
        fs::create_dir(&stray).unwrap();
        fs::write(stray.join("x.c"), "int x;").unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        File::open(&stray).unwrap().set_modified(old).unwrap();
        let in_flight = cache.dir.join(format!("{}.4-5-6.d", "b".repeat(64)));
        fs::create_dir(&in_flight).unwrap();
        assert_eq!(cache.clear().unwrap(), 3);
        assert!(in_flight.is_dir());
        fs::remove_dir(&in_flight).unwrap();
        assert_eq!(listed(&cache.dir), vec!["keep-me.txt".to_string()]);
        let _ = fs::remove_dir_all(&cache.dir);
    }
}
