//! Which backends can run on this machine, and why (not).

use parpy_core::Backend;

use crate::options::CompileBackend;

/// Whether `b` can execute code here, with one sentence saying why.
pub fn explain(b: Backend) -> (bool, String) {
    match b {
        Backend::Cpu => match parpy_runtime::Compiler::find() {
            Ok(c) => (
                true,
                format!("Cpu: usable: C compiler {}", c.path.display()),
            ),
            Err(e) => (false, format!("Cpu: not usable: {e}")),
        },
        Backend::Cuda => {
            let driver = ["libcuda.so.1", "libcuda.so"]
                .iter()
                .any(|name| parpy_runtime::library::probe(name));
            if driver {
                (
                    false,
                    "Cuda: not usable: an NVIDIA driver is present, but this parpy build has no \
                     CUDA runtime yet (the Cuda backend can print code with print_compiled)"
                        .to_string(),
                )
            } else {
                (
                    false,
                    "Cuda: not usable: no NVIDIA driver (libcuda.so.1 not found)".to_string(),
                )
            }
        }
        Backend::Metal => {
            if cfg!(target_os = "macos") {
                (
                    false,
                    "Metal: not usable: this parpy build has no Metal runtime yet".to_string(),
                )
            } else {
                (false, "Metal: not usable: not macOS".to_string())
            }
        }
    }
}

pub fn is_enabled(b: Backend) -> bool {
    explain(b).0
}

/// The backends usable here, in preference order.
pub fn available() -> Vec<Backend> {
    [Backend::Cuda, Backend::Metal, Backend::Cpu]
        .into_iter()
        .filter(|b| is_enabled(*b))
        .collect()
}

/// Resolves `Auto`; returns the backend and the sentences explaining it.
pub fn resolve(sel: CompileBackend) -> (Backend, Vec<String>) {
    match sel.core() {
        Some(b) => {
            let (_, why) = explain(b);
            (b, vec![why])
        }
        None => {
            let mut lines = vec![];
            let mut chosen = None;
            for b in [Backend::Cuda, Backend::Metal, Backend::Cpu] {
                let (ok, why) = explain(b);
                lines.push(why);
                if ok && chosen.is_none() {
                    chosen = Some(b);
                }
            }
            let b = chosen.unwrap_or(Backend::Cpu);
            lines.push(format!("Auto: chose {}", b.name()));
            (b, lines)
        }
    }
}
