//! The disk cache of compiled shared libraries.
//!
//! Entry `K` is `K.so` plus `K.meta`, where `K` is the SHA-256 of the parpy
//! version, the compiler identity, the flags and the code. `K.meta` holds the
//! SHA-256 and the size of the `.so` bytes; a load verifies them, and an entry
//! that is missing half, truncated or corrupt is invalidated (its `.meta` is
//! deleted) and rebuilt; the rebuilt library replaces the bad one by rename.
//! Everything is written to a temporary name in the same directory, synced,
//! then renamed, so a concurrent reader never sees a partial file.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::cc::{BuildFlags, Compiler};
use crate::RuntimeError;

/// `$XDG_CACHE_HOME/parpy`, else `~/.cache/parpy`, else a temp directory.
pub fn default_cache_dir() -> PathBuf {
    if let Some(x) = crate::env::xdg_cache_home() {
        return x.join("parpy");
    }
    if let Some(h) = crate::env::home() {
        return h.join(".cache").join("parpy");
    }
    std::env::temp_dir().join("parpy-cache")
}

pub fn sha256_hex(data: &[u8]) -> String {
    let digest = Sha256::digest(data);
    let mut s = String::with_capacity(64);
    for b in digest.iter() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

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

    /// The cache key of one build.
    pub fn key(code: &str, compiler: &Compiler, flags: &BuildFlags) -> String {
        let mut h = Sha256::new();
        for part in [
            "parpy",
            parpy_core::VERSION,
            &compiler.identity,
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
        let key = DiskCache::key(code, compiler, flags);
        let so = self.so_path(&key);
        let meta = self.meta_path(&key);
        let mut outcome = Outcome::Built;
        match self.verify(&so, &meta) {
            Verified::Ok => return Ok((so, Outcome::Hit)),
            Verified::Absent => {}
            Verified::Bad => {
                // Invalidate the entry by its metadata only: the library is
                // replaced by an atomic rename below, so a process that has
                // just verified and is about to load it never finds it gone.
                let _ = fs::remove_file(&meta);
                outcome = Outcome::Rebuilt;
            }
        }
        fs::create_dir_all(&self.dir).map_err(|e| RuntimeError::io(&self.dir, e))?;
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
            fs::create_dir(&src_dir).map_err(|e| RuntimeError::io(&src_dir, e))?;
            write_synced(&src_tmp, code.as_bytes())?;
            compiler.build(&src_tmp, &so_tmp, flags)?;
            let bytes = fs::read(&so_tmp).map_err(|e| RuntimeError::io(&so_tmp, e))?;
            File::open(&so_tmp)
                .and_then(|f| f.sync_all())
                .map_err(|e| RuntimeError::io(&so_tmp, e))?;
            let meta_text = format!("sha256={}\nsize={}\n", sha256_hex(&bytes), bytes.len());
            fs::rename(&so_tmp, &so).map_err(|e| RuntimeError::io(&so, e))?;
            write_atomic(&meta, meta_text.as_bytes())?;
            sync_dir(&self.dir);
            Ok(())
        })();
        let _ = fs::remove_dir_all(&src_dir);
        let _ = fs::remove_file(&so_tmp);
        result.map(|()| (so, outcome))
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
                let _ = fs::remove_file(&meta);
                if let Some(p) = named {
                    let _ = fs::remove_file(p);
                }
                outcome = Outcome::Rebuilt;
            }
        }
        let bytes = build()?;
        fs::create_dir_all(&self.dir).map_err(|e| RuntimeError::io(&self.dir, e))?;
        let sha = sha256_hex(&bytes);
        let name = format!("{key}.{}.{ext}", &sha[..16]);
        let path = self.dir.join(&name);
        write_atomic(&path, &bytes)?;
        let meta_text = format!("file={name}\nsha256={sha}\nsize={}\n", bytes.len());
        write_atomic(&meta, meta_text.as_bytes())?;
        sync_dir(&self.dir);
        Ok((path, outcome))
    }

    /// Checks a blob entry: its meta, and the file the meta names against
    /// the recorded hash and size. Also returns the named file's path.
    fn verify_blob(&self, key: &str, ext: &str, meta: &Path) -> (Verified, Option<PathBuf>) {
        let Ok(text) = fs::read_to_string(meta) else {
            return (Verified::Absent, None);
        };
        let field = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_string())
        };
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
        let ok = match (fs::read(&path), field("sha256="), size) {
            (Ok(bytes), Some(sha), Some(size)) => {
                bytes.len() as u64 == size && sha256_hex(&bytes) == sha
            }
            _ => false,
        };
        (if ok { Verified::Ok } else { Verified::Bad }, Some(path))
    }

    fn verify(&self, so: &Path, meta: &Path) -> Verified {
        let so_exists = so.exists();
        let meta_text = fs::read_to_string(meta);
        let meta_text = match (so_exists, meta_text) {
            (false, Err(_)) => return Verified::Absent,
            (true, Ok(t)) => t,
            _ => return Verified::Bad,
        };
        let mut want_sha = None;
        let mut want_size = None;
        for line in meta_text.lines() {
            if let Some(v) = line.strip_prefix("sha256=") {
                want_sha = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("size=") {
                want_size = v.trim().parse::<u64>().ok();
            }
        }
        let (Some(want_sha), Some(want_size)) = (want_sha, want_size) else {
            return Verified::Bad;
        };
        match fs::read(so) {
            Ok(bytes) if bytes.len() as u64 == want_size && sha256_hex(&bytes) == want_sha => {
                Verified::Ok
            }
            _ => Verified::Bad,
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

/// Removes parpy's cache entries from `dir`; returns how many files went.
pub fn clear(dir: &Path) -> Result<usize, RuntimeError> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(RuntimeError::io(dir, e)),
    };
    let mut n = 0;
    for entry in rd.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let is_ours = name.len() > 65
            && name.as_bytes()[..64].iter().all(u8::is_ascii_hexdigit)
            && name.as_bytes()[64] == b'.'
            && [".so", ".meta", ".tmp", ".c", ".cubin", ".d"]
                .iter()
                .any(|s| name.ends_with(s));
        if !is_ours {
            continue;
        }
        let path = entry.path();
        let removed = if name.ends_with(".d") {
            // a build's private source directory left by a killed process
            path.is_dir() && fs::remove_dir_all(&path).is_ok()
        } else {
            fs::remove_file(&path).is_ok()
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

fn write_synced(path: &Path, data: &[u8]) -> Result<(), RuntimeError> {
    let mut f = File::create(path).map_err(|e| RuntimeError::io(path, e))?;
    f.write_all(data)
        .and_then(|()| f.sync_all())
        .map_err(|e| RuntimeError::io(path, e))
}

/// Writes `data` to `path` through a synced temporary file and a rename.
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
        assert_ne!(
            DiskCache::key(CODE, &cc, &f),
            DiskCache::key(CODE, &cc, &f2)
        );
        assert_ne!(DiskCache::key(CODE, &cc, &f), DiskCache::key("x", &cc, &f));
        let _ = fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn corrupt_truncated_or_half_entries_are_rebuilt() {
        let cache = DiskCache::new(tmp_dir("corrupt"));
        let cc = Compiler::find().unwrap();
        let f = BuildFlags::default();
        let (so, _) = cache.get_or_build_outcome(CODE, &cc, &f).unwrap();
        let good = fs::read(&so).unwrap();
        let key = DiskCache::key(CODE, &cc, &f);

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
        let names: Vec<_> = fs::read_dir(&a.dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
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
        let names: Vec<_> = fs::read_dir(&cache.dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
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
        assert_eq!(fs::read_dir(&cache.dir).unwrap().count(), 0);
        cache.get_or_build(CODE, &cc, &f).unwrap();
        fs::write(cache.dir.join("keep-me.txt"), "x").unwrap();
        // the source directory a killed build leaves behind
        let stray = cache.dir.join(format!("{}.1-2-3.d", "a".repeat(64)));
        fs::create_dir(&stray).unwrap();
        fs::write(stray.join("x.c"), "int x;").unwrap();
        assert_eq!(cache.clear().unwrap(), 3);
        let names: Vec<_> = fs::read_dir(&cache.dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("keep-me.txt")]);
        let _ = fs::remove_dir_all(&cache.dir);
    }
}
