//! `LoopPar`, `CompileBackend`, `CompileOptions`, `threads`, `par`.
//!
//! `CompileOptions` is mutable from Python; every setter recomputes an
//! interned fingerprint (equal contents give equal fingerprints), so the
//! cached-call fast path reads one atomic instead of every field.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use parpy_core::{Backend, ElemTy, Options, ParSpec};
use pyo3::exceptions::{PyAttributeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};

/// The parallelism of one label: `parpy.threads(n)` and its modifiers.
/// Built as ParPy builds it too: `parpy.LoopPar()` has no thread count
/// (ParPy's default: not parallel), `.threads(n)` sets the count once.
#[pyclass(frozen, module = "parpy", eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct LoopPar {
    /// `None` for a LoopPar without a thread count: `parpy.LoopPar()`,
    /// `parpy.par_reduction()` (the `parpy.reduce()` marker).
    pub nthreads: Option<i64>,
    pub tpb: Option<i64>,
    pub reduction: bool,
}

/// A `CompileValueError` (a `ValueError`, and a `RuntimeError` as ParPy
/// raises it) with `msg`.
fn value_error(msg: String) -> PyErr {
    crate::errors::call_value_error(msg)
}

fn check_tpb(n: i64) -> PyResult<i64> {
    use parpy_core::options::MAX_THREADS_PER_BLOCK as MAX;
    if n <= 0 || n % 32 != 0 || n > MAX {
        return Err(value_error(format!(
            "threads per block must be a positive multiple of 32 of at most {MAX} (a GPU's \
             largest block), got {n}"
        )));
    }
    Ok(n)
}

#[pymethods]
impl LoopPar {
    /// `parpy.LoopPar()`: no thread count yet (ParPy's default, not
    /// parallel); `parpy.LoopPar(n)`: `parpy.threads(n)`.
    #[new]
    #[pyo3(signature = (threads=None))]
    fn py_new(threads: Option<&Bound<'_, PyAny>>) -> PyResult<LoopPar> {
        match threads {
            Some(n) if !n.is_none() => threads_of(count_arg(n, "parpy.LoopPar(threads)")?),
            _ => Ok(LoopPar {
                nthreads: None,
                tpb: None,
                reduction: false,
            }),
        }
    }

    /// `lp.threads(n)`: a new LoopPar with `n` threads (ParPy's builder;
    /// the count can be set once: a LoopPar that has one raises
    /// `CompileValueError`). `lp.threads()`: the count, or `None` (also
    /// `lp.nthreads`).
    #[pyo3(signature = (n=None))]
    fn threads(&self, py: Python<'_>, n: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let Some(n) = n else {
            return Ok(self.nthreads.into_pyobject(py)?.unbind());
        };
        let n = count_arg(n, "LoopPar.threads(n)")?;
        if let Some(old) = self.nthreads {
            return Err(value_error(format!(
                "the number of threads can only be set once: {} already has {old}, \
                 asked for {n}",
                self.__repr__()
            )));
        }
        let with = LoopPar {
            nthreads: threads_of(n)?.nthreads,
            ..*self
        };
        Ok(Py::new(py, with)?.into_any())
    }

    /// Threads per block (a positive multiple of 32). Returns a new LoopPar.
    fn tpb(&self, n: &Bound<'_, PyAny>) -> PyResult<LoopPar> {
        let n = count_arg(n, "LoopPar.tpb(n)")?;
        Ok(LoopPar {
            tpb: Some(check_tpb(n)?),
            ..*self
        })
    }

    /// Marks a manual reduction loop. Returns a new LoopPar.
    fn par_reduction(&self) -> LoopPar {
        LoopPar {
            reduction: true,
            ..*self
        }
    }

    /// Older spelling of `par_reduction()`.
    fn reduce(&self) -> LoopPar {
        self.par_reduction()
    }

    /// Whether it has a thread count (ParPy's `is_parallel()`).
    fn is_parallel(&self) -> bool {
        self.nthreads.is_some()
    }

    /// The thread count, or `None` (`lp.threads()` gives it too).
    #[getter]
    fn nthreads(&self) -> Option<i64> {
        self.nthreads
    }

    #[getter]
    fn threads_per_block(&self) -> Option<i64> {
        self.tpb
    }

    #[getter]
    fn is_reduction(&self) -> bool {
        self.reduction
    }

    fn __repr__(&self) -> String {
        let mut s = match (self.nthreads, self.reduction) {
            (Some(n), _) => format!("parpy.threads({n})"),
            (None, true) => "parpy.reduce()".to_string(),
            (None, false) => "parpy.LoopPar()".to_string(),
        };
        if let Some(t) = self.tpb {
            s.push_str(&format!(".tpb({t})"));
        }
        if self.reduction && self.nthreads.is_some() {
            s.push_str(".par_reduction()");
        }
        s
    }
}

/// A thread count given to `what`: an integer (anything with
/// `__index__`: an int, a NumPy integer, a 0-d integer tensor; not a bool
/// or a float) that fits in 64 bits, or a `TypeError` / `ValueError` that
/// names `what`.
fn count_arg(v: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    let not_count = v.is_instance_of::<PyBool>() || v.is_instance_of::<pyo3::types::PyFloat>();
    match (not_count, v.extract::<i64>()) {
        (false, Ok(n)) => Ok(n),
        (false, Err(_)) if v.is_instance_of::<pyo3::types::PyInt>() => Err(PyValueError::new_err(
            format!("{what} needs a thread count that fits in 64 bits, got {v}"),
        )),
        _ => {
            let r = v.repr().map(|r| r.to_string()).unwrap_or_default();
            let ty = v
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default();
            Err(PyTypeError::new_err(format!(
                "{what} needs an int thread count, got {ty} {r}"
            )))
        }
    }
}

/// `parpy.threads(n)`.
#[pyfunction(name = "threads")]
pub fn threads_fn(n: &Bound<'_, PyAny>) -> PyResult<LoopPar> {
    let n = count_arg(n, "parpy.threads(n)")?;
    threads_of(n)
}

/// `parpy.threads(n)` of a count.
pub fn threads_of(n: i64) -> PyResult<LoopPar> {
    if n <= 0 {
        return Err(value_error(format!(
            "parpy.threads(n) needs a positive thread count, got {n}"
        )));
    }
    Ok(LoopPar {
        nthreads: Some(n),
        tpb: None,
        reduction: false,
    })
}

/// `parpy.reduce()` (older spelling): with a count, `threads(n).par_reduction()`;
/// without, a marker that `par()` rejects with an explanation.
#[pyfunction(name = "reduce_marker")]
#[pyo3(signature = (n=None))]
pub fn reduce_marker(n: Option<i64>) -> PyResult<LoopPar> {
    match n {
        Some(n) => Ok(threads_of(n)?.par_reduction()),
        None => Ok(LoopPar {
            nthreads: None,
            tpb: None,
            reduction: true,
        }),
    }
}

#[pyclass(frozen, module = "parpy", eq, eq_int, hash, from_py_object)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CompileBackend {
    Auto,
    Cuda,
    Metal,
    Cpu,
    /// Runs the function as plain Python on NumPy values (`parpy._pymode`):
    /// no compilation; for debugging, and the oracle of differential tests.
    Python,
}

impl CompileBackend {
    /// The compiled backend selected (`None` for `Auto`, and for `Python`,
    /// which compiles nothing: callers check `Python` first).
    pub fn core(self) -> Option<Backend> {
        match self {
            CompileBackend::Auto | CompileBackend::Python => None,
            CompileBackend::Cuda => Some(Backend::Cuda),
            CompileBackend::Metal => Some(Backend::Metal),
            CompileBackend::Cpu => Some(Backend::Cpu),
        }
    }
}

/// The plain data of a `CompileOptions`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct OptData {
    pub parallelize: BTreeMap<String, LoopPar>,
    pub backend: CompileBackend,
    pub verbose_backend_resolution: bool,
    pub debug_print: bool,
    pub write_output: bool,
    pub max_unroll_count: i64,
    pub use_cuda_thread_block_clusters: bool,
    pub max_thread_blocks_per_cluster: i64,
    pub use_cuda_graphs: bool,
    pub force_int_size: Option<Forced>,
    pub force_float_size: Option<Forced>,
    pub includes: Vec<String>,
    pub libs: Vec<String>,
    pub extra_flags: Vec<String>,
    pub specialize_scalars: bool,
    /// Run-time checks of the indices not proven in range (an IndexError).
    pub bounds_check: bool,
    /// The CUDA device to run on; `None` (the default): the device of the
    /// device-array arguments, device 0 when there are none
    /// (`parpy_runtime::cuda::placement`).
    pub device: Option<i64>,
    pub cache_dir: Option<String>,
    /// Accepted for ParPy programs; parpy has no callbacks to debug.
    pub debug_callbacks: bool,
    /// Label loops and slice statements by the shape symbols they use
    /// (ParPy's default; `Options::implicit_labels`).
    pub implicit_shape_labels: bool,
}

/// A forced scalar type: given as a bit count (`64`) or as an element type
/// (`parpy.types.I64`, ParPy's spelling); read back as it was given.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Forced {
    pub elem: ElemTy,
    pub as_type: bool,
}

impl Forced {
    fn to_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if self.as_type {
            Ok(elem_type_object(py, self.elem)?.unbind())
        } else {
            Ok((self.elem.size() as i64 * 8)
                .into_pyobject(py)?
                .into_any()
                .unbind())
        }
    }

    fn show(f: Option<Forced>) -> String {
        match f {
            None => "None".into(),
            Some(f) if f.as_type => format!("parpy.types.{}", elem_type_name(f.elem)),
            Some(f) => (f.elem.size() * 8).to_string(),
        }
    }
}

/// The name of an element type in `parpy.types` (`I32`, `F64`, `Bool`).
pub fn elem_type_name(e: ElemTy) -> String {
    match e {
        ElemTy::Bool => "Bool".into(),
        _ => e
            .numpy_name()
            .replace("uint", "U")
            .replace("int", "I")
            .replace("float", "F"),
    }
}

/// `parpy.types.<T>` for an element type.
pub fn elem_type_object(py: Python<'_>, e: ElemTy) -> PyResult<Bound<'_, PyAny>> {
    py.import("parpy.types")?
        .getattr(elem_type_name(e).as_str())
}

/// The element type of a `parpy.types` object (anything carrying
/// `__parpy_dtype__`), or `None`.
pub fn elem_of_type_object(v: &Bound<'_, PyAny>) -> Option<ElemTy> {
    let name: String = v.getattr("__parpy_dtype__").ok()?.extract().ok()?;
    ElemTy::ALL.into_iter().find(|e| e.numpy_name() == name)
}

impl Default for OptData {
    fn default() -> OptData {
        let d = Options::default();
        OptData {
            parallelize: BTreeMap::new(),
            backend: CompileBackend::Auto,
            verbose_backend_resolution: false,
            debug_print: false,
            write_output: false,
            max_unroll_count: d.max_unroll_count,
            use_cuda_thread_block_clusters: d.use_cuda_thread_block_clusters,
            max_thread_blocks_per_cluster: d.max_thread_blocks_per_cluster,
            use_cuda_graphs: d.use_cuda_graphs,
            force_int_size: None,
            force_float_size: None,
            includes: vec![],
            libs: vec![],
            extra_flags: vec![],
            specialize_scalars: true,
            bounds_check: d.bounds_check,
            device: None,
            cache_dir: None,
            debug_callbacks: false,
            implicit_shape_labels: true,
        }
    }
}

pub const FIELDS: [&str; 20] = [
    "parallelize",
    "backend",
    "verbose_backend_resolution",
    "debug_print",
    "write_output",
    "max_unroll_count",
    "use_cuda_thread_block_clusters",
    "max_thread_blocks_per_cluster",
    "use_cuda_graphs",
    "force_int_size",
    "force_float_size",
    "includes",
    "libs",
    "extra_flags",
    "specialize_scalars",
    "bounds_check",
    "device",
    "cache_dir",
    "debug_callbacks",
    "implicit_shape_labels",
];

impl OptData {
    /// The C compiler flags the user added (`includes`, `libs`,
    /// `extra_flags`): the build's business, not the core compiler's.
    pub fn build_flags(&self) -> parpy_runtime::BuildFlags {
        parpy_runtime::BuildFlags {
            includes: self.includes.clone(),
            libs: self.libs.clone(),
            extra_flags: self.extra_flags.clone(),
        }
    }

    /// The core's view, for a resolved backend.
    pub fn to_core(&self, backend: Backend) -> PyResult<Options> {
        let mut parallelize = BTreeMap::new();
        for (k, v) in &self.parallelize {
            let Some(threads) = v.nthreads else {
                let fix = if v.reduction {
                    "parpy.threads(n).par_reduction()"
                } else {
                    "parpy.threads(n), or leave the label out to run it sequentially"
                };
                return Err(PyValueError::new_err(format!(
                    "label '{k}': {} without a thread count cannot be used in a \
                     parallel specification; write {fix}",
                    v.__repr__()
                )));
            };
            parallelize.insert(
                k.clone(),
                ParSpec {
                    threads,
                    tpb: v.tpb,
                    reduction: v.reduction,
                },
            );
        }
        let (int_type, float_type) = self.scalar_types(backend);
        Ok(Options {
            backend,
            parallelize,
            specialize_scalars: self.specialize_scalars,
            int_type,
            float_type,
            max_unroll_count: self.max_unroll_count,
            debug_print: self.debug_print,
            use_cuda_thread_block_clusters: self.use_cuda_thread_block_clusters,
            max_thread_blocks_per_cluster: self.max_thread_blocks_per_cluster,
            use_cuda_graphs: self.use_cuda_graphs,
            bounds_check: self.bounds_check,
            implicit_labels: vec![],
            same_arrays: vec![],
        })
    }

    /// The types of Python ints and floats on `backend`: the forced ones,
    /// else 64-bit (Metal: 32-bit, it has no 64-bit floats).
    pub fn scalar_types(&self, backend: Backend) -> (ElemTy, ElemTy) {
        let metal = backend == Backend::Metal;
        let default = |f: Option<Forced>, m: ElemTy, d: ElemTy| match f {
            Some(f) => f.elem,
            None if metal => m,
            None => d,
        };
        (
            default(self.force_int_size, ElemTy::I32, ElemTy::I64),
            default(self.force_float_size, ElemTy::F32, ElemTy::F64),
        )
    }

    fn get(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let o: Py<PyAny> = match name {
            "parallelize" => {
                let d = PyDict::new(py);
                for (k, v) in &self.parallelize {
                    d.set_item(k, Py::new(py, *v)?)?;
                }
                read_only(py, name, d.into_any())?
            }
            "backend" => Py::new(py, self.backend)?.into_any(),
            "verbose_backend_resolution" => b(py, self.verbose_backend_resolution),
            "debug_print" => b(py, self.debug_print),
            "write_output" => b(py, self.write_output),
            "max_unroll_count" => self.max_unroll_count.into_pyobject(py)?.into_any().unbind(),
            "use_cuda_thread_block_clusters" => b(py, self.use_cuda_thread_block_clusters),
            "max_thread_blocks_per_cluster" => self
                .max_thread_blocks_per_cluster
                .into_pyobject(py)?
                .into_any()
                .unbind(),
            "use_cuda_graphs" => b(py, self.use_cuda_graphs),
            "force_int_size" | "force_float_size" => {
                let f = if name == "force_int_size" {
                    self.force_int_size
                } else {
                    self.force_float_size
                };
                match f {
                    Some(f) => f.to_py(py)?,
                    None => py.None(),
                }
            }
            "debug_callbacks" => b(py, self.debug_callbacks),
            "implicit_shape_labels" => b(py, self.implicit_shape_labels),
            "includes" => read_only(py, name, PyList::new(py, &self.includes)?.into_any())?,
            "libs" => read_only(py, name, PyList::new(py, &self.libs)?.into_any())?,
            "extra_flags" => read_only(py, name, PyList::new(py, &self.extra_flags)?.into_any())?,
            "specialize_scalars" => b(py, self.specialize_scalars),
            "bounds_check" => b(py, self.bounds_check),
            "device" => match self.device {
                Some(d) => d.into_pyobject(py)?.into_any().unbind(),
                None => py.None(),
            },
            "cache_dir" => self
                .cache_dir
                .clone()
                .into_pyobject(py)?
                .into_any()
                .unbind(),
            _ => {
                return Err(PyAttributeError::new_err(format!(
                    "'CompileOptions' object has no attribute '{name}'"
                )))
            }
        };
        Ok(o)
    }

    fn set(&mut self, name: &str, v: &Bound<'_, PyAny>) -> PyResult<()> {
        match name {
            "parallelize" => self.parallelize = extract_spec(v)?,
            "backend" => {
                // a buffer's `backend` (parpy.buffer.BackendTag) holds one
                let tagged;
                let v = match v.is_instance_of::<CompileBackend>() {
                    true => v,
                    false => {
                        tagged = v.getattr("value").unwrap_or_else(|_| v.clone());
                        &tagged
                    }
                };
                self.backend = *v
                    .cast::<CompileBackend>()
                    .map_err(|_| type_err(name, "a parpy.CompileBackend", v))?
                    .get()
            }
            "verbose_backend_resolution" => self.verbose_backend_resolution = get_bool(name, v)?,
            "debug_print" => self.debug_print = get_bool(name, v)?,
            "write_output" => self.write_output = get_bool(name, v)?,
            "max_unroll_count" => {
                let n = get_int(name, v, UNROLL_RANGE)?;
                if n < 0 {
                    return Err(PyValueError::new_err(format!(
                        "max_unroll_count must be >= 0, got {n}"
                    )));
                }
                self.max_unroll_count = n;
            }
            "use_cuda_thread_block_clusters" => {
                self.use_cuda_thread_block_clusters = get_bool(name, v)?
            }
            "max_thread_blocks_per_cluster" => {
                use parpy_core::options::MAX_CLUSTER_BLOCKS as MAX;
                let n = get_int(name, v, CLUSTER_RANGE)?;
                if n <= 0 || (n & (n - 1)) != 0 || n > MAX {
                    return Err(PyValueError::new_err(format!(
                        "max_thread_blocks_per_cluster: the number of thread blocks per \
                         cluster must be a power of two of at most {MAX} (CUDA's largest \
                         cluster), got {n}"
                    )));
                }
                self.max_thread_blocks_per_cluster = n;
            }
            "use_cuda_graphs" => self.use_cuda_graphs = get_bool(name, v)?,
            "force_int_size" => self.force_int_size = get_forced(name, v, false)?,
            "force_float_size" => self.force_float_size = get_forced(name, v, true)?,
            "debug_callbacks" => self.debug_callbacks = get_bool(name, v)?,
            "implicit_shape_labels" => self.implicit_shape_labels = get_bool(name, v)?,
            "includes" => self.includes = get_strs(name, v)?,
            "libs" => self.libs = get_strs(name, v)?,
            "extra_flags" => self.extra_flags = get_strs(name, v)?,
            "specialize_scalars" => self.specialize_scalars = get_bool(name, v)?,
            "bounds_check" => self.bounds_check = get_bool(name, v)?,
            "device" => {
                self.device = if v.is_none() {
                    None
                } else {
                    let n = get_int(name, v, DEVICE_RANGE).map_err(|e| {
                        if e.is_instance_of::<PyTypeError>(v.py()) {
                            type_err(name, "an int or None", v)
                        } else {
                            e
                        }
                    })?;
                    if n < 0 {
                        return Err(PyValueError::new_err(format!(
                            "device must be None or >= 0, got {n}"
                        )));
                    }
                    Some(n)
                };
            }
            "cache_dir" => {
                self.cache_dir = if v.is_none() {
                    None
                } else {
                    // str, pathlib.Path and other os.PathLike objects; `~`
                    // is expanded as the shell would.
                    let os = v.py().import("os")?;
                    let fs = os
                        .getattr("fspath")?
                        .call1((v,))
                        .map_err(|_| type_err(name, "a str path or None", v))?;
                    let expanded = os.getattr("path")?.getattr("expanduser")?.call1((fs,))?;
                    let dir = expanded
                        .cast::<PyString>()
                        .map_err(|_| type_err(name, "a str path or None", v))?
                        .to_cow()?
                        .into_owned();
                    // '' would be the working directory: refused, not
                    // guessed (None is the default location)
                    if dir.is_empty() {
                        return Err(PyValueError::new_err(
                            "cache_dir must name a directory; '' does not (set None for the \
                             default cache directory, or a path such as '.parpy-cache')",
                        ));
                    }
                    Some(dir)
                }
            }
            _ => {
                return Err(PyAttributeError::new_err(format!(
                    "'CompileOptions' object has no attribute '{name}' (fields: {})",
                    FIELDS.join(", ")
                )))
            }
        }
        Ok(())
    }
}

/// The value of a container field (`parallelize`, `includes`, `libs`,
/// `extra_flags`) as users read it: a copy, which a change in place would
/// never reach, so the copy refuses one with a TypeError naming the
/// assignment to write (`parpy._views`, the one implementation for both
/// the mapping and the lists).
fn read_only(py: Python<'_>, field: &str, value: Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    Ok(py
        .import("parpy._views")?
        .getattr("read_only")?
        .call1((field, value))?
        .unbind())
}

fn pybool(v: bool) -> &'static str {
    if v {
        "True"
    } else {
        "False"
    }
}

fn b(py: Python<'_>, v: bool) -> Py<PyAny> {
    PyBool::new(py, v).to_owned().into_any().unbind()
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

fn type_err(field: &str, want: &str, v: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "CompileOptions.{field} must be {want}, got {}",
        type_name(v)
    ))
}

fn get_bool(field: &str, v: &Bound<'_, PyAny>) -> PyResult<bool> {
    v.cast::<PyBool>()
        .map(|b| b.is_true())
        .map_err(|_| type_err(field, "a bool", v))
}

/// The values of the integer fields, for the message about an int beyond
/// 64 bits.
const UNROLL_RANGE: &str = "an int from 0 to 2**63 - 1";
const CLUSTER_RANGE: &str = "a power of two from 1 to 16";
const DEVICE_RANGE: &str = "None or an int from 0 to 2**63 - 1";

/// An int field's value. `range` says which values the field takes: an
/// int too large for 64 bits is a `ValueError` that names the field and
/// the range (not a `TypeError`: it is an int).
fn get_int(field: &str, v: &Bound<'_, PyAny>, range: &str) -> PyResult<i64> {
    if v.is_instance_of::<PyBool>() {
        return Err(type_err(field, "an int", v));
    }
    v.extract::<i64>().map_err(|_| match int_text(v) {
        Some(text) => PyValueError::new_err(format!(
            "CompileOptions.{field} is out of range: it must be {range}, got {text}"
        )),
        None => type_err(field, "an int", v),
    })
}

/// The decimal text of an int (or of an object with `__index__`, as NumPy
/// ints have); `None` when `v` is not one.
fn int_text(v: &Bound<'_, PyAny>) -> Option<String> {
    let i = v
        .py()
        .import("operator")
        .and_then(|m| m.getattr("index"))
        .and_then(|index| index.call1((v,)))
        .ok()?;
    i.str().ok().map(|s| s.to_string())
}

/// `force_int_size` / `force_float_size`: None, a bit count, or an element
/// type of the right kind (`parpy.types.I64`; unsigned ints too).
fn get_forced(field: &str, v: &Bound<'_, PyAny>, float: bool) -> PyResult<Option<Forced>> {
    if v.is_none() {
        return Ok(None);
    }
    let fits = |e: ElemTy| if float { e.is_float() } else { e.is_int() };
    let choices: Vec<ElemTy> = ElemTy::ALL.into_iter().filter(|&e| fits(e)).collect();
    if let Some(elem) = elem_of_type_object(v) {
        if !fits(elem) {
            let names: Vec<String> = choices
                .iter()
                .map(|&e| format!("parpy.types.{}", elem_type_name(e)))
                .collect();
            return Err(PyValueError::new_err(format!(
                "{field} must be None, a bit count or one of {}, got parpy.types.{}",
                names.join(", "),
                elem_type_name(elem)
            )));
        }
        return Ok(Some(Forced {
            elem,
            as_type: true,
        }));
    }
    let signed = |e: &ElemTy| float || e.is_signed_int();
    let sizes = || -> String {
        let list: Vec<String> = choices
            .iter()
            .filter(|e| signed(e))
            .map(|e| (e.size() * 8).to_string())
            .collect();
        list.join(", ")
    };
    let n = match v.extract::<i64>() {
        Ok(n) if !v.is_instance_of::<PyBool>() => n,
        _ => {
            return Err(
                match int_text(v).filter(|_| !v.is_instance_of::<PyBool>()) {
                    // an int beyond 64 bits
                    Some(text) => PyValueError::new_err(format!(
                        "{field} must be None or one of {}, got {text}",
                        sizes()
                    )),
                    None => type_err(field, "None, a bit count or a parpy.types element type", v),
                },
            );
        }
    };
    match choices
        .iter()
        .find(|e| signed(e) && e.size() as i64 * 8 == n)
    {
        Some(&elem) => Ok(Some(Forced {
            elem,
            as_type: false,
        })),
        None => Err(PyValueError::new_err(format!(
            "{field} must be None or one of {}, got {n}",
            sizes()
        ))),
    }
}

fn get_strs(field: &str, v: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if v.is_instance_of::<PyString>() {
        return Err(type_err(field, "a list of str", v));
    }
    let mut out = vec![];
    for item in v
        .try_iter()
        .map_err(|_| type_err(field, "a list of str", v))?
    {
        let item = item?;
        let s = item
            .cast::<PyString>()
            .map_err(|_| type_err(field, "a list of str", &item))?;
        out.push(s.to_cow()?.into_owned());
    }
    Ok(out)
}

fn extract_spec(v: &Bound<'_, PyAny>) -> PyResult<BTreeMap<String, LoopPar>> {
    let d = v.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "the parallel specification must be a dict mapping labels (str) to parpy.threads(...), got {}",
            type_name(v)
        ))
    })?;
    let mut out = BTreeMap::new();
    for (k, val) in d.iter() {
        let key = k
            .cast::<PyString>()
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "labels in the parallel specification must be str, got {}",
                    type_name(&k)
                ))
            })?
            .to_cow()?
            .to_string();
        if key.is_empty() {
            // (no `parpy.label('')` can name it: a mistake, not a label)
            return Err(value_error(
                "the parallel specification has an empty label '': a label names the loop \
                 that follows `parpy.label('name')`"
                    .to_string(),
            ));
        }
        let lp = val.cast::<LoopPar>().map_err(|_| {
            PyTypeError::new_err(format!(
                "the value for label '{key}' must be parpy.threads(n) (a LoopPar), got {}",
                type_name(&val)
            ))
        })?;
        out.insert(key, *lp.get());
    }
    Ok(out)
}

/// Interns option contents: equal contents get equal ids, so the fast path
/// compares one integer. (Ids never reach generated code.)
fn intern(d: &OptData) -> u64 {
    static TABLE: OnceLock<Mutex<HashMap<OptData, u64>>> = OnceLock::new();
    let t = TABLE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut t = t.lock().unwrap_or_else(|e| e.into_inner());
    let next = t.len() as u64 + 1;
    *t.entry(d.clone()).or_insert(next)
}

#[pyclass(frozen, module = "parpy")]
pub struct CompileOptions {
    data: Mutex<OptData>,
    fingerprint: AtomicU64,
    specialize: AtomicBool,
}

impl CompileOptions {
    pub fn from_data(d: OptData) -> CompileOptions {
        CompileOptions {
            fingerprint: AtomicU64::new(intern(&d)),
            specialize: AtomicBool::new(d.specialize_scalars),
            data: Mutex::new(d),
        }
    }

    pub fn lock(&self) -> MutexGuard<'_, OptData> {
        self.data.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn snapshot(&self) -> OptData {
        self.lock().clone()
    }

    /// The interned id of the current contents.
    #[inline]
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint.load(Ordering::Acquire)
    }

    #[inline]
    pub fn specialize_scalars(&self) -> bool {
        self.specialize.load(Ordering::Acquire)
    }
}

#[pymethods]
impl CompileOptions {
    #[new]
    #[pyo3(signature = (**kwargs))]
    fn py_new(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<CompileOptions> {
        let mut d = OptData::default();
        if let Some(kw) = kwargs {
            for (k, v) in kw.iter() {
                let k: String = k.extract()?;
                if !FIELDS.contains(&k.as_str()) {
                    // (a keyword argument the constructor does not take:
                    // Python's TypeError; `opts.bogus = 2` stays an
                    // AttributeError)
                    return Err(PyTypeError::new_err(format!(
                        "CompileOptions() got an unexpected keyword argument '{k}' (fields: {})",
                        FIELDS.join(", ")
                    )));
                }
                d.set(&k, &v)
                    .map_err(|e| crate::errors::option_value_error(v.py(), e))?;
            }
        }
        Ok(CompileOptions::from_data(d))
    }

    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        self.lock().get(py, name)
    }

    fn __setattr__(&self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut g = self.lock();
        let mut d = g.clone();
        d.set(name, value)
            .map_err(|e| crate::errors::option_value_error(value.py(), e))?;
        let fp = intern(&d);
        self.specialize
            .store(d.specialize_scalars, Ordering::Release);
        *g = d;
        self.fingerprint.store(fp, Ordering::Release);
        Ok(())
    }

    fn __delattr__(&self, name: &str) -> PyResult<()> {
        Err(PyAttributeError::new_err(format!(
            "cannot delete CompileOptions.{name}"
        )))
    }

    fn __dir__(&self) -> Vec<&'static str> {
        FIELDS.to_vec()
    }

    /// A copy with the same contents.
    fn copy(&self) -> CompileOptions {
        CompileOptions::from_data(self.snapshot())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<CompileOptions>() {
            Ok(o) => *o.get().lock() == *self.lock(),
            Err(_) => false,
        }
    }

    pub fn __repr__(&self) -> String {
        let d = self.lock();
        let spec: Vec<String> = d
            .parallelize
            .iter()
            .map(|(k, v)| format!("{k:?}: {}", v.__repr__()))
            .collect();
        format!(
            "CompileOptions(parallelize={{{}}}, backend=CompileBackend.{:?}, specialize_scalars={}, \
             debug_print={}, force_int_size={}, force_float_size={}, cache_dir={})",
            spec.join(", "),
            d.backend,
            pybool(d.specialize_scalars),
            pybool(d.debug_print),
            Forced::show(d.force_int_size),
            Forced::show(d.force_float_size),
            d.cache_dir.as_ref().map(|c| format!("{c:?}")).unwrap_or_else(|| "None".into())
        )
    }
}

/// `parpy.par(spec) -> CompileOptions`.
#[pyfunction]
pub fn par(spec: &Bound<'_, PyAny>) -> PyResult<CompileOptions> {
    let d = OptData {
        parallelize: extract_spec(spec)?,
        ..OptData::default()
    };
    Ok(CompileOptions::from_data(d))
}
