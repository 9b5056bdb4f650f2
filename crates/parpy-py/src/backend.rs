//! Which backends can run on this machine, and why (not).

use parpy_core::Backend;

use crate::options::CompileBackend;
use pyo3::PyResult;

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
        Backend::Cuda => cuda_explain(),
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

/// The driver and GPU part of the Cuda check (probed once per process).
fn cuda_driver() -> Result<String, String> {
    static PROBE: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    PROBE
        .get_or_init(|| {
            use parpy_runtime::cuda::driver;
            let n = driver::init().map_err(|e| match e {
                parpy_runtime::cuda::CudaError::NoDriver(m) => m,
                e => e.to_string(),
            })?;
            if n == 0 {
                return Err("the NVIDIA driver loads but finds no GPU".into());
            }
            let version = driver::driver_version().unwrap_or(0);
            let mut gpus = vec![];
            for d in 0..n {
                match driver::device_info(d) {
                    Ok((name, arch)) => gpus.push(format!("{d}: {name} (sm_{arch})")),
                    Err(e) => gpus.push(format!("{d}: unusable ({e})")),
                }
            }
            Ok(format!(
                "driver CUDA {}.{}, GPU {}",
                version / 1000,
                (version % 1000) / 10,
                gpus.join(", ")
            ))
        })
        .clone()
}

fn cuda_explain() -> (bool, String) {
    if parpy_runtime::cuda::emu::installed().is_some() {
        return (
            true,
            "Cuda: emulated on the CPU by parpy._cuda_emu (a developer tool: no GPU is used)"
                .to_string(),
        );
    }
    match cuda_driver() {
        Err(e) => (false, format!("Cuda: not usable: {e}")),
        Ok(gpus) => {
            let (ok, nvrtc) = pyo3::Python::attach(crate::toolchain::nvrtc_status);
            if ok {
                (true, format!("Cuda: usable: {gpus}; {nvrtc}"))
            } else {
                (
                    false,
                    format!("Cuda: not usable: {gpus}, but NVRTC is missing: {nvrtc}"),
                )
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

/// The sentence for `CompileBackend::Python`.
pub const PYTHON_SENTENCE: &str =
    "Python: runs the function as plain Python on NumPy values (no compilation; always usable)";

/// A clear error for the operations that need generated code, which the
/// `Python` backend does not have.
pub fn refuse_python(sel: CompileBackend, what: &str) -> PyResult<()> {
    if sel == CompileBackend::Python {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{what} needs a compiled backend (Cpu, Cuda or Metal); \
             CompileBackend.Python runs the function as plain Python and generates no code"
        )));
    }
    Ok(())
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
