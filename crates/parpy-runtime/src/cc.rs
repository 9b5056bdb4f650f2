//! Finding the C compiler and building shared libraries with it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::UNIX_EPOCH;

use crate::RuntimeError;

/// The fixed flags every CPU build uses (before the user's flags).
pub const BASE_FLAGS: [&str; 9] = [
    "-std=c11",
    "-O3",
    // signed overflow wraps, as in NumPy (not C's undefined behaviour)
    "-fwrapv",
    // GCC 12.2 at -O3 -march=native turns a conditional load (`c ?
    // b[k] : -1.0`) into masked vector loads and gets a 4 x 16 nest wrong
    // (tests/test_c_compiler_bugs.py); clang ignores the flag
    "-fno-tree-loop-if-convert",
    // the same GCC with 512-bit vectors distributes the row loop of two
    // fused stencil sweeps (`cpu_skew_fuse`) into loops that read rows the
    // other has not written yet (tests/test_c_compiler_bugs.py)
    "-fno-tree-loop-distribution",
    "-march=native",
    "-fopenmp",
    "-fPIC",
    "-shared",
];

/// What the GNU assembler prints before the lines it refuses: the C
/// compiler wrote assembly no CPU runs (a compiler bug, `Compiler::build`).
const GNU_AS_REFUSED: &str = "Assembler messages:";

/// The flags of the second build after the assembler refused the first.
pub const ASSEMBLER_RETRY_FLAGS: [&str; 1] = ["-fno-if-conversion"];

/// The user-controlled part of a build: `CompileOptions.includes`, `libs`
/// and `extra_flags`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BuildFlags {
    pub includes: Vec<String>,
    pub libs: Vec<String>,
    pub extra_flags: Vec<String>,
}

impl BuildFlags {
    /// The linker arguments of one `CompileOptions.libs` entry: an
    /// existing directory is searched for libraries (`-L dir`, as ParPy
    /// passes each entry) and the loader looks there too (`-Wl,-rpath,dir`);
    /// a path to a library file (an existing file, or a name with a `/`)
    /// is linked as that file, its directory on the loader's path; a bare
    /// name `m` is the library `-lm`.
    /// (Existing paths are made absolute: the loader resolves an rpath
    /// from wherever the program runs.)
    fn lib_args(lib: &str) -> Vec<String> {
        let path = Path::new(lib);
        let absolute = || {
            std::fs::canonicalize(path)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| lib.to_string())
        };
        if path.is_dir() {
            let dir = absolute();
            return vec![format!("-L{dir}"), format!("-Wl,-rpath,{dir}")];
        }
        if path.is_file() || lib.contains('/') {
            let file = absolute();
            let mut a = vec![file.clone()];
            if let Some(dir) = Path::new(&file)
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
            {
                a.push(format!("-Wl,-rpath,{}", dir.display()));
            }
            return a;
        }
        vec![format!("-l{lib}")]
    }

    /// The complete argument list: base flags, `-I` includes, extra
    /// flags, `more`, the source file, `-o out`, the libs
    /// ([`BuildFlags::lib_args`]), `-lm`.
    fn args(&self, source: &Path, out: &Path, more: &[&str]) -> Vec<String> {
        let mut a: Vec<String> = BASE_FLAGS.iter().map(|s| s.to_string()).collect();
        a.extend(self.includes.iter().map(|i| format!("-I{i}")));
        a.extend(self.extra_flags.iter().cloned());
        a.extend(more.iter().map(|f| f.to_string()));
        a.push(source.display().to_string());
        a.push("-o".into());
        a.push(out.display().to_string());
        a.extend(self.libs.iter().flat_map(|l| Self::lib_args(l)));
        a.push("-lm".into());
        a
    }

    /// A stable textual form for cache keys.
    pub fn fingerprint(&self) -> String {
        let mut s = String::new();
        for f in BASE_FLAGS {
            s.push_str(f);
            s.push('\0');
        }
        for (tag, list) in [
            ("I", &self.includes),
            ("l", &self.libs),
            ("X", &self.extra_flags),
        ] {
            s.push_str(tag);
            s.push_str(&list.len().to_string());
            s.push('\0');
            for x in list {
                s.push_str(x);
                s.push('\0');
            }
        }
        s
    }
}

/// A resolved C compiler with the identity used in cache keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiler {
    /// The resolved program path.
    pub path: PathBuf,
    /// Arguments that came with `$CC` (e.g. `CC="ccache gcc"` -> `["gcc"]`).
    pub pre_args: Vec<String>,
    /// The resolved path and the stamp of the program (size, modification
    /// and change time, inode), and of the launcher's compiler for
    /// `CC="ccache gcc"`: cheap, and changes whenever the file is
    /// rewritten (the change time cannot be set back). The disk cache keys
    /// on [`Compiler::content_identity`], which it remembers per stamp.
    pub identity: String,
    /// The programs whose bytes identify it: the compiler, and the
    /// launcher's compiler when there is one.
    pub programs: Vec<PathBuf>,
}

impl Compiler {
    /// `PATH|sha256 of the bytes` of each of [`Compiler::programs`]
    /// (joined by ` + `): what the compiler is, whatever its stamp. A
    /// driver is a megabyte or more, so this costs milliseconds: the disk
    /// cache remembers it per [`Compiler::identity`], in the process and on
    /// disk (`DiskCache::compiler_id`).
    pub fn content_identity(&self) -> String {
        let one = |path: &PathBuf| {
            let hash = std::fs::read(path)
                .map(|b| crate::hash::sha256_hex(&b))
                .unwrap_or_else(|e| format!("unreadable ({e})"));
            format!("{}|{hash}", path.display())
        };
        let mut out: Vec<String> = self.programs.iter().map(one).collect();
        // a launcher whose compiler is not on PATH: its name
        if let Some(next) = self.pre_args.first().filter(|a| !a.starts_with('-')) {
            if self.programs.len() < 2 {
                out.push(next.clone());
            }
        }
        out.join(" + ")
    }

    /// `$CC` if set (and non-empty), else the first of `cc`, `gcc`, `clang`
    /// found on `PATH`.
    pub fn find() -> Result<Compiler, RuntimeError> {
        Compiler::find_with(crate::env::cc().as_deref(), crate::env::path().as_deref())
    }

    /// [`Compiler::find`] with explicit inputs (for tests).
    pub fn find_with(
        cc_env: Option<&str>,
        path_var: Option<&std::ffi::OsStr>,
    ) -> Result<Compiler, RuntimeError> {
        let mut tried = Vec::new();
        let candidates: Vec<(String, Vec<String>)> = match cc_env {
            Some(cc) => {
                let mut parts = cc.split_whitespace().map(str::to_string);
                let prog = parts.next().unwrap_or_default();
                vec![(prog, parts.collect())]
            }
            None => ["cc", "gcc", "clang"]
                .iter()
                .map(|s| (s.to_string(), vec![]))
                .collect(),
        };
        for (prog, pre_args) in candidates {
            tried.push(prog.clone());
            if let Some(path) = resolve_program(&prog, path_var) {
                let mut identity = stamp_of(&path);
                let mut programs = vec![path.clone()];
                // a launcher's compiler (`ccache gcc`) is found on PATH too
                if let Some(next) = pre_args.first().filter(|a| !a.starts_with('-')) {
                    match resolve_program(next, path_var) {
                        Some(p) => {
                            identity.push_str(&format!(" + {}", stamp_of(&p)));
                            programs.push(p);
                        }
                        None => identity.push_str(&format!(" + {next}")),
                    }
                }
                return Ok(Compiler {
                    path,
                    pre_args,
                    identity,
                    programs,
                });
            }
        }
        Err(RuntimeError::NoCompiler {
            tried: if cc_env.is_some() {
                format!("$CC={}", tried.join(" "))
            } else {
                tried.join(", ")
            },
        })
    }

    /// Compiles `source` (a file) into the shared library `out`.
    ///
    /// GCC 12.2 at `-O3 -march=native` on a CPU with AVX512-FP16 turns a
    /// select of two `_Float16` values before a store into a zero-masked
    /// `vmovsh` store, which no CPU has, and the assembler refuses it
    /// ("unsupported masking for `vmovsh'", tests/test_c_compiler_bugs.py).
    /// Where the assembler refuses what the compiler wrote, the build runs
    /// once more without GCC's if-conversion ([`ASSEMBLER_RETRY_FLAGS`]);
    /// the first failure is the one reported if that fails too.
    pub fn build(&self, source: &Path, out: &Path, flags: &BuildFlags) -> Result<(), RuntimeError> {
        let first = self.build_once(source, out, flags, &[]);
        let result = match &first {
            Err(RuntimeError::CompileFailed { stderr, .. }) if stderr.contains(GNU_AS_REFUSED) => {
                self.build_once(source, out, flags, &ASSEMBLER_RETRY_FLAGS)
                    .or(first)
            }
            _ => first,
        };
        match result {
            Err(e @ RuntimeError::CompileFailed { .. }) => Err(self.diagnose(source, flags, e)),
            Ok(()) if !out.exists() => Err(RuntimeError::CompilerUnusable {
                command: self.command(),
                why: format!(
                    "it exited with success but wrote no library ({}): is it a C compiler?",
                    out.display()
                ),
            }),
            r => r,
        }
    }

    /// Does the compiler compile a `.c` file as C++ (`CC=g++`)? Asked
    /// only when a library lacks its entry symbol.
    pub fn compiles_cplusplus(&self, flags: &BuildFlags) -> bool {
        let dir = std::env::temp_dir().join(format!("parpy-probe-{}", std::process::id()));
        if std::fs::create_dir_all(&dir).is_err() {
            return false;
        }
        let probe = dir.join("probe.c");
        let cpp = std::fs::write(&probe, "#ifdef __cplusplus\n#error C++\n#endif\nint x;\n")
            .is_ok()
            && matches!(
                self.build_once(&probe, &dir.join("probe.so"), flags, &[]),
                Err(RuntimeError::CompileFailed { stderr, .. }) if stderr.contains("C++")
            );
        let _ = std::fs::remove_dir_all(&dir);
        cpp
    }

    /// The compiler's command as `$CC` gave it: the program and the
    /// arguments that came with it.
    pub fn command(&self) -> String {
        std::iter::once(self.path.display().to_string())
            .chain(self.pre_args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Tells a compiler that fails from code that fails (`e`, the failure
    /// on `source`): when the compiler cannot build a minimal C file with
    /// the same flags, or builds `source` without the arguments that came
    /// with `$CC` (`CC="gcc -m32"` without 32-bit headers, `CC="gcc
    /// -DNDEBUG"` and a function named `NDEBUG`), it is the environment's
    /// failure, [`RuntimeError::CompilerUnusable`]; else `e`. Runs on the
    /// failure path only, in the build's private directory.
    fn diagnose(&self, source: &Path, flags: &BuildFlags, e: RuntimeError) -> RuntimeError {
        let Some(dir) = source.parent() else { return e };
        let probe = dir.join("parpy_probe.c");
        let probe_out = dir.join("parpy_probe.so");
        let minimal = "#include <stdint.h>\n#include <stdbool.h>\n#include <math.h>\n\
                       int32_t parpy_probe(void) { return 0; }\n";
        if std::fs::write(&probe, minimal).is_err() {
            return e;
        }
        let unusable = |why: String| RuntimeError::CompilerUnusable {
            command: self.command(),
            why,
        };
        match self.build_once(&probe, &probe_out, flags, &[]) {
            Err(RuntimeError::CompileFailed { stderr, status, .. }) => {
                return unusable(format!(
                    "it failed (exit status {status}) on a minimal C file too:\n{stderr}"
                ))
            }
            Err(other) => return other,
            Ok(()) => {}
        }
        if !self.pre_args.is_empty() {
            let bare = Compiler {
                pre_args: vec![],
                ..self.clone()
            };
            if bare.build_once(source, &probe_out, flags, &[]).is_ok() {
                if let RuntimeError::CompileFailed { stderr, .. } = &e {
                    return unusable(format!(
                        "it failed on the code parpy generated, which compiles without the \
                         arguments `{}` that came with $CC:\n{stderr}",
                        self.pre_args.join(" ")
                    ));
                }
            }
        }
        e
    }

    fn build_once(
        &self,
        source: &Path,
        out: &Path,
        flags: &BuildFlags,
        more: &[&str],
    ) -> Result<(), RuntimeError> {
        let mut cmd = Command::new(&self.path);
        cmd.args(&self.pre_args).args(flags.args(source, out, more));
        let output = run_interruptibly(cmd).map_err(|e| match e {
            Run::Io(e) => RuntimeError::io(&self.path, e),
            Run::Interrupted => RuntimeError::Interrupted,
        })?;
        if output.status.success() {
            Ok(())
        } else {
            let mut stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            if stderr.trim().is_empty() {
                stderr = String::from_utf8_lossy(&output.stdout).into_owned();
            }
            Err(RuntimeError::CompileFailed {
                compiler: self.path.display().to_string(),
                status: output
                    .status
                    .code()
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "killed by a signal".into()),
                source_path: source.display().to_string(),
                stderr,
            })
        }
    }
}

/// The check [`run_interruptibly`] makes while the compiler runs: true
/// when the user asked to stop (the binding's check runs Python's signal
/// handlers: Ctrl-C). Set once; none in a process without the binding.
static INTERRUPT_CHECK: std::sync::OnceLock<fn() -> bool> = std::sync::OnceLock::new();

/// Installs the check that stops a build ([`RuntimeError::Interrupted`]).
pub fn set_interrupt_check(check: fn() -> bool) {
    let _ = INTERRUPT_CHECK.set(check);
}

enum Run {
    Io(std::io::Error),
    Interrupted,
}

/// `cmd.output()`, but the child is polled, and the interrupt check asked
/// in between: when it says stop, the child's process group (the compiler
/// and the programs it started: `cc1`, `as`, `ld`, a wrapper's children)
/// is killed. The child gets a process group of its own for that, so a
/// Ctrl-C at the terminal reaches parpy's check, not the compiler.
fn run_interruptibly(mut cmd: Command) -> Result<std::process::Output, Run> {
    use std::io::Read;
    use std::process::Stdio;
    use std::time::Duration;
    let Some(check) = INTERRUPT_CHECK.get().copied() else {
        return cmd.stdin(Stdio::null()).output().map_err(Run::Io);
    };
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(Run::Io)?;
    // read on threads, so a compiler with much to say never blocks on a
    // full pipe
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(Run::Io)? {
            break status;
        }
        if check() {
            #[cfg(unix)]
            {
                let group = libc::pid_t::try_from(child.id()).unwrap_or(0);
                if group > 0 {
                    // SAFETY: a signal to the process group the child leads
                    unsafe { libc::kill(-group, libc::SIGKILL) };
                }
            }
            let _ = child.kill();
            let _ = child.wait();
            // the readers end when the last holder of the pipes is gone
            return Err(Run::Interrupted);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(25));
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok(std::process::Output {
        status,
        stdout,
        stderr,
    })
}

fn resolve_program(prog: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if prog.is_empty() {
        return None;
    }
    if prog.contains('/') {
        let p = PathBuf::from(prog);
        return is_executable(&p).then(|| std::fs::canonicalize(&p).unwrap_or(p));
    }
    for dir in std::env::split_paths(path_var?) {
        let p = dir.join(prog);
        if is_executable(&p) {
            return Some(std::fs::canonicalize(&p).unwrap_or(p));
        }
    }
    None
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// `PATH|size|mtime|inode|ctime` of a file (`PATH|` when it cannot be
/// read).
fn stamp_of(path: &Path) -> String {
    let stamp = match std::fs::metadata(path) {
        Ok(m) => {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            #[cfg(unix)]
            let (ino, ctime) = {
                use std::os::unix::fs::MetadataExt;
                (m.ino(), (m.ctime(), m.ctime_nsec()))
            };
            #[cfg(not(unix))]
            let (ino, ctime) = (0, (0, 0));
            format!("{}|{mtime}|{ino}|{ctime:?}", m.len())
        }
        Err(_) => String::new(),
    };
    format!("{}|{stamp}", path.display())
}

/// What `-march=native` compiles for: the CPU's vendor, family, model and
/// feature flags (`/proc/cpuinfo`), hashed; the architecture name where
/// that file does not exist. Part of every C cache key, so a cache shared
/// between machines never serves code built for another CPU.
pub fn target_cpu() -> &'static str {
    use std::sync::OnceLock;
    static CPU: OnceLock<String> = OnceLock::new();
    CPU.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let mut parts: Vec<&str> = Vec::new();
        for line in info.lines() {
            if line.trim().is_empty() && !parts.is_empty() {
                break; // the first processor is enough
            }
            let key = line.split(':').next().unwrap_or("").trim();
            if [
                "vendor_id",
                "cpu family",
                "model",
                "model name",
                "flags",
                "CPU implementer",
                "CPU architecture",
                "CPU variant",
                "CPU part",
                "Features",
                "isa",
                "uarch",
            ]
            .contains(&key)
            {
                parts.push(line.trim());
            }
        }
        format!(
            "{}|{}",
            std::env::consts::ARCH,
            crate::hash::sha256_hex(parts.join("\n").as_bytes())
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_compiler_on_path() {
        let c = Compiler::find_with(None, crate::env::path().as_deref()).expect("a C compiler");
        assert!(c.path.is_absolute());
        assert!(c.identity.starts_with(&format!("{}|", c.path.display())));
        // the program's content hash, not its size and mtime
        let bytes = std::fs::read(&c.path).unwrap();
        let id = c.content_identity();
        assert!(id.ends_with(&crate::hash::sha256_hex(&bytes)), "{id}");
        assert!(target_cpu().starts_with(std::env::consts::ARCH));
    }

    #[test]
    fn missing_compiler_is_a_clear_error() {
        let e = Compiler::find_with(
            Some("definitely-not-a-compiler-xyz"),
            Some(std::ffi::OsStr::new("/nonexistent")),
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("no C compiler found"), "{msg}");
        assert!(msg.contains("definitely-not-a-compiler-xyz"), "{msg}");
    }

    #[test]
    fn compile_error_carries_stderr() {
        let dir = std::env::temp_dir().join(format!("parpy-cc-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("bad.c");
        std::fs::write(&src, "int f(void) { return undefined_thing; }\n").unwrap();
        let c = Compiler::find().unwrap();
        let e = c
            .build(&src, &dir.join("bad.so"), &BuildFlags::default())
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("undefined_thing"), "{msg}");
        assert!(msg.contains("failed"), "{msg}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_build_the_assembler_refuses_runs_again_without_if_conversion() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("parpy-cc-retry-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // a compiler whose assembly the assembler refuses unless GCC's
        // if-conversion is off; it logs each run's flags
        let fake = dir.join("fake-cc");
        let log = dir.join("runs");
        std::fs::write(
            &fake,
            format!(
                "#!/bin/sh\necho \"$*\" >> {log}\n\
                 case \"$*\" in *-fno-if-conversion*) : > {out}; exit 0;; esac\n\
                 echo '/tmp/cc1.s: Assembler messages:' >&2\n\
                 echo \"/tmp/cc1.s:71: Error: unsupported masking for \\`vmovsh'\" >&2\nexit 1\n",
                log = log.display(),
                out = dir.join("k.so").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let c = Compiler::find_with(Some(fake.to_str().unwrap()), None).unwrap();
        let src = dir.join("k.c");
        c.build(&src, &dir.join("k.so"), &BuildFlags::default())
            .expect("the second build");
        let runs = std::fs::read_to_string(&log).unwrap();
        let runs: Vec<&str> = runs.lines().collect();
        assert_eq!(runs.len(), 2, "{runs:?}");
        assert!(!runs[0].contains("-fno-if-conversion"), "{runs:?}");
        // the flag comes before the source file
        let (at_flag, at_src) = (runs[1].find("-fno-if-conversion"), runs[1].find("k.c"));
        assert!(at_flag.unwrap() < at_src.unwrap(), "{runs:?}");
        // any other failure is reported at once
        let other = dir.join("other-cc");
        std::fs::write(&other, "#!/bin/sh\necho 'k.c:1: error: nope' >&2\nexit 1\n").unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
        let c = Compiler::find_with(Some(other.to_str().unwrap()), None).unwrap();
        let e = c
            .build(&src, &dir.join("k.so"), &BuildFlags::default())
            .unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn libs_are_directories_files_or_names() {
        let dir = std::env::temp_dir().join(format!("parpy-libs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dir = std::fs::canonicalize(&dir).unwrap();
        let file = dir.join("libq.so");
        std::fs::write(&file, b"").unwrap();
        let (d, f) = (dir.display().to_string(), file.display().to_string());
        assert_eq!(
            BuildFlags::lib_args(&d),
            [format!("-L{d}"), format!("-Wl,-rpath,{d}")]
        );
        assert_eq!(
            BuildFlags::lib_args(&f),
            [f.clone(), format!("-Wl,-rpath,{d}")]
        );
        assert_eq!(BuildFlags::lib_args("m"), ["-lm"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn flags_fingerprint_distinguishes_lists() {
        let a = BuildFlags {
            includes: vec!["x".into()],
            ..Default::default()
        };
        let b = BuildFlags {
            libs: vec!["x".into()],
            ..Default::default()
        };
        assert_ne!(a.fingerprint(), b.fingerprint());
    }
}
