//! `JitFunction`: the decorated function, its specialization cache and the
//! cached-call fast path.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use parpy_core::syntax::FunctionDef;
use parpy_core::{ArgType, Backend};
use parpy_runtime::LoadedEntry;
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::args::{self, ArgCtx, KeyBuf, MAX_ARGS};
use crate::backend;
use crate::errors::{internal_error, stderr_write};
use crate::options::CompileOptions;
use crate::resolver::{self, PyResolver};
use crate::service::{self, generation};

/// One compiled specialization.
pub struct Compiled {
    exec: Exec,
    /// For each entry parameter: (argument index, is an array).
    params: Vec<(usize, bool)>,
    /// Arguments the function writes (bit i = argument i).
    written_mask: u64,
    /// (argument index, bytes) of the array parameters, when the function
    /// writes one of them and has another: the compiled code assumes an
    /// array it writes shares no memory with another argument
    /// (`overlap_error`).
    extents: Vec<(usize, u64)>,
    /// The run-time index checks (`BoundsSite::describe` of each site);
    /// when there are some, the entry takes a bounds record last.
    bounds: Vec<String>,
    /// The callback calls of the host code (Cpu; the Cuda plan has its own).
    callbacks: Option<crate::callbacks::Sites>,
    /// The int scalar arguments that the entry takes as a narrower int
    /// (an annotation `k: I32`, `force_int_size=32`): a value it cannot
    /// hold is an `OverflowError` at the call, not a wrapped value. (One
    /// known when compiling is refused there.)
    narrow_ints: Vec<args::NarrowInt>,
    /// The headers of its external functions, as they were when it was built.
    headers: service::HeaderWatch,
    /// When it was last called ([`crate::loaded::tick`]): the least
    /// recently used specialization goes first past the memory bound.
    used: AtomicU64,
}

/// What runs a specialization.
enum Exec {
    /// The CPU backend: a shared library's entry.
    Cpu(LoadedEntry),
    /// The CUDA backend: a module and its launch plan.
    Cuda(Box<crate::cuda::CudaFn>),
    /// `CompileBackend.Python`: the function runs as plain Python
    /// (`parpy._pymode.run`).
    Python,
}

struct FnCache {
    generation: u64,
    last_key: Vec<u64>,
    last: Option<Arc<Compiled>>,
    map: HashMap<Box<[u64]>, Arc<Compiled>>,
    /// The distinct values compiled for, per scalar parameter (while it is
    /// still specialized on).
    seen: Vec<Vec<u64>>,
    /// The builds of this generation, oldest first (at most `HISTORY`).
    history: Vec<SpecRecord>,
}

/// How many builds `specializations()` remembers per function.
const HISTORY: usize = 64;

/// What `specializations()` and `PARPY_LOG=info` say of one build.
#[derive(Clone)]
struct SpecRecord {
    /// (parameter, its type as specialized), in parameter order.
    args: Vec<(String, String)>,
    options: String,
    backend: &'static str,
    /// `built`, `disk` (loaded from the disk cache), `rebuilt` (a bad disk
    /// entry replaced) or `python` (nothing to build).
    origin: &'static str,
    /// Seconds per phase: inspect, lower, passes, codegen, build (C compiler
    /// or NVRTC, or reading the disk cache) and load.
    phases: Vec<(&'static str, f64)>,
    /// Why the in-memory cache missed: what differs from the closest
    /// earlier build (`miss_reason`).
    reason: String,
    /// The CUDA device it runs on (Cuda builds).
    device: Option<i64>,
}

fn origin_name(o: parpy_runtime::Outcome) -> &'static str {
    match o {
        parpy_runtime::Outcome::Hit => "disk",
        parpy_runtime::Outcome::Built => "built",
        parpy_runtime::Outcome::Rebuilt => "rebuilt",
    }
}

/// An argument's type as a call specializes on it: `float32[100, 64]`,
/// `int (Python) = 100`, `float32 (NumPy)`.
fn describe_arg(ty: &ArgType) -> String {
    match ty {
        ArgType::Array { elem, shape } => {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("{}[{}]", elem.numpy_name(), dims.join(", "))
        }
        ArgType::Scalar { elem, value, weak } => {
            let kind = if *weak {
                match elem {
                    parpy_core::ElemTy::Bool => "bool (Python)".to_string(),
                    e if e.is_float() => "float (Python)".to_string(),
                    _ => "int (Python)".to_string(),
                }
            } else {
                format!("{} (NumPy)", elem.numpy_name())
            };
            match value {
                Some(parpy_core::ScalarValue::Bool(b)) => {
                    format!("{kind} = {}", if *b { "True" } else { "False" })
                }
                Some(parpy_core::ScalarValue::Int(i)) => format!("{kind} = {i}"),
                Some(parpy_core::ScalarValue::Float(f)) => format!("{kind} = {f:?}"),
                None => kind,
            }
        }
        ArgType::Dict(entries) => {
            let e: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k:?}: {}", describe_arg(v)))
                .collect();
            format!("dict{{{}}}", e.join(", "))
        }
        ArgType::Unusable(t) => format!("{t} (not passed)"),
    }
}

fn shape_tuple(s: &str) -> String {
    // `float32[100, 64]` -> `(100, 64)`; one dimension -> `(5,)`
    let inner = s
        .split_once('[')
        .map(|(_, r)| r.trim_end_matches(']'))
        .unwrap_or("");
    if inner.contains(',') || inner.is_empty() {
        format!("({inner})")
    } else {
        format!("({inner},)")
    }
}

/// Why a build happened: what differs from the closest earlier build (the
/// one with the fewest differences, the latest of those), so a new shape
/// after a build for another dtype is named as the shape it is.
fn miss_reason(
    history: &[SpecRecord],
    args: &[(String, String)],
    options: &str,
    device: Option<i64>,
) -> String {
    let Some(why) = history
        .iter()
        .rev()
        .map(|prev| differences(prev, args, options, device))
        .min_by_key(|(n, _)| *n)
        .map(|(_, why)| why)
    else {
        return "first call".to_string();
    };
    if why.is_empty() {
        // same arguments and options: the entry left the in-memory cache
        return "not in the in-memory cache".to_string();
    }
    why.join("; ")
}

/// What differs between an earlier build `prev` and this one: how many
/// differences (a new dtype and shape of one array are two) and their
/// texts.
fn differences(
    prev: &SpecRecord,
    args: &[(String, String)],
    options: &str,
    device: Option<i64>,
) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut why = Vec::new();
    for ((name, old), (_, new)) in prev.args.iter().zip(args) {
        if old == new {
            continue;
        }
        n += 1;
        let (od, nd) = (old.split('[').next(), new.split('[').next());
        if old.contains('[') && new.contains('[') && od == nd {
            why.push(format!(
                "new shape for {name}: {} -> {}",
                shape_tuple(old),
                shape_tuple(new)
            ));
        } else if old.contains('[') && new.contains('[') {
            if shape_tuple(old) == shape_tuple(new) {
                why.push(format!(
                    "new dtype for {name}: {} -> {}",
                    od.unwrap_or(""),
                    nd.unwrap_or("")
                ));
            } else {
                n += 1;
                why.push(format!("new dtype and shape for {name}: {old} -> {new}"));
            }
        } else if let (Some((ok, ov)), Some((nk, nv))) =
            (old.split_once(" = "), new.split_once(" = "))
        {
            if ok == nk {
                why.push(format!("new value for {name}: {ov} -> {nv}"));
            } else {
                why.push(format!("new type for {name}: {old} -> {new}"));
            }
        } else if old.split_once(" = ").map(|(k, _)| k) == Some(new.as_str()) {
            why.push(format!("{name} is passed at run time (not specialized)"));
        } else if new.split_once(" = ").map(|(k, _)| k) == Some(old.as_str()) {
            why.push(format!("{name} is specialized on its value"));
        } else {
            why.push(format!("new type for {name}: {old} -> {new}"));
        }
    }
    if prev.options != options {
        n += 1;
        why.push("different options".to_string());
    }
    if let (Some(old), Some(new)) = (prev.device, device) {
        if old != new {
            n += 1;
            why.push(format!("new device: cuda:{old} -> cuda:{new}"));
        }
    }
    (n, why)
}

/// Arrays with at least this many elements in total run with the GIL
/// released (below it, releasing costs more than it gives).
const DETACH_ELEMS: usize = 1 << 15;

#[pyclass(frozen, module = "parpy", name = "JitFunction")]
pub struct JitFunction {
    pub name: String,
    pub def: Arc<FunctionDef>,
    pub params: Vec<String>,
    /// How many of `params` may be given by position (those after `*` in
    /// the `def` go by name only).
    positional: usize,
    /// How many of `params` go by position only (those before `/`).
    pos_only: usize,
    pub resolver: Arc<PyResolver>,
    py_func: Py<PyAny>,
    /// Registered with [`crate::loaded`] (the bound on loaded
    /// specializations, `clear_cache`).
    cache: Arc<Mutex<FnCache>>,
    /// Scalar parameters no longer specialized on (bit i = parameter i):
    /// they took more than [`MAX_SPECIALIZED_VALUES`] values.
    generic: AtomicU64,
    /// Scalar parameters always specialized on: compiling without their
    /// values failed (the function needs them at compile time).
    pinned: AtomicU64,
    /// The parameters whose 0-d array argument is passed as an array
    /// (`FunctionDef::in_place_params`).
    in_place: u64,
    /// CPython's vectorcall entry, read by the interpreter at the offset
    /// `enable_vectorcall` writes into the type.
    vectorcall: ffi::vectorcallfunc,
}

/// Does a `return` of `body` give a value (a helper's, which no main
/// function has)?
fn returns_value(body: &[parpy_core::syntax::ast::Stmt]) -> bool {
    let mut found = false;
    parpy_core::syntax::ast::walk_stmts(body, &mut |s| {
        found |= matches!(s.kind, parpy_core::syntax::ast::StmtKind::Return(Some(_)));
    });
    found
}

/// A scalar parameter is specialized on its first this many distinct values;
/// after that it is passed at run time (one more compilation serves all
/// values) and a `ParpyWarning` says so once.
pub const MAX_SPECIALIZED_VALUES: usize = 4;

impl JitFunction {
    pub fn from_py_function(f: &Bound<'_, PyAny>) -> PyResult<JitFunction> {
        let (def, resolver) = resolver::parse_function(f)?;
        resolver::check_symbols_read(f, &def, &resolver)?;
        let name: String = f.getattr("__name__")?.extract()?;
        let params = resolver::param_names(f)?;
        // (a call's `opts=` keyword is the options, never an argument)
        if params.iter().any(|p| p == "opts") {
            return Err(PyTypeError::new_err(format!(
                "`{name}` has a parameter named `opts`, which a parpy function cannot have: \
                 a call takes its parpy.CompileOptions as the keyword argument `opts` \
                 (`{name}(..., opts=parpy.par({{...}}))`); rename the parameter"
            )));
        }
        if params.len() > MAX_ARGS {
            return Err(PyTypeError::new_err(format!(
                "`{name}` has {} parameters; parpy supports at most {MAX_ARGS}",
                params.len()
            )));
        }
        let cache = Arc::new(Mutex::new(FnCache {
            generation: generation(),
            last_key: Vec::new(),
            last: None,
            map: HashMap::new(),
            history: Vec::new(),
            seen: vec![],
        }));
        let registered: Arc<dyn crate::loaded::SpecCache> = cache.clone();
        crate::loaded::register(Arc::downgrade(&registered));
        Ok(JitFunction {
            name,
            positional: def.params.iter().filter(|p| !p.kw_only).count(),
            pos_only: def.params.iter().filter(|p| p.pos_only).count(),
            in_place: def.in_place_params(),
            def,
            params,
            resolver: Arc::new(resolver),
            py_func: f.clone().unbind(),
            cache,
            generic: AtomicU64::new(0),
            pinned: AtomicU64::new(0),
            vectorcall: jit_vectorcall,
        })
    }

    fn ctx(&self) -> ArgCtx<'_> {
        ArgCtx {
            func: &self.name,
            params: &self.params,
            in_place: self.in_place,
        }
    }

    fn signature(&self) -> String {
        let (pos, kw) = self.params.split_at(self.positional);
        let mut all: Vec<&str> = pos.iter().map(String::as_str).collect();
        if self.pos_only > 0 {
            all.insert(self.pos_only, "/");
        }
        if !kw.is_empty() {
            all.push("*");
            all.extend(kw.iter().map(String::as_str));
        }
        format!("{}({}, opts=...)", self.name, all.join(", "))
    }

    fn lookup(&self, key: &[u64]) -> Option<Arc<Compiled>> {
        let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let g = generation();
        if c.generation != g {
            c.generation = g;
            c.map.clear();
            c.last = None;
            c.last_key.clear();
            c.history.clear();
            return None;
        }
        if c.last_key.as_slice() == key {
            if let Some(h) = &c.last {
                h.used.store(crate::loaded::now(), Ordering::Relaxed);
                return Some(h.clone());
            }
        }
        let hit = c.map.get(key).cloned();
        if let Some(h) = &hit {
            h.used.store(crate::loaded::now(), Ordering::Relaxed);
            c.last_key.clear();
            c.last_key.extend_from_slice(key);
            c.last = Some(h.clone());
        }
        hit
    }

    /// Remembers a build for `specializations()`; with `PARPY_LOG=info`,
    /// prints one line saying why it was needed.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        py: Python<'_>,
        ins: &args::Inspected,
        opts: &CompileOptions,
        backend: &'static str,
        origin: &'static str,
        phases: Vec<(&'static str, f64)>,
        device: Option<i64>,
    ) -> PyResult<()> {
        let args: Vec<(String, String)> = ins
            .names
            .iter()
            .zip(&ins.records)
            .map(|(p, r)| (p.clone(), describe_arg(&r.ty)))
            .collect();
        let options = opts.__repr__();
        let rec = {
            let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            let reason = miss_reason(&c.history, &args, &options, device);
            let rec = SpecRecord {
                args,
                options,
                backend,
                origin,
                phases,
                reason,
                device,
            };
            if c.history.len() == HISTORY {
                c.history.remove(0);
            }
            c.history.push(rec.clone());
            rec
        };
        if parpy_runtime::env::log_builds() {
            let ms: f64 = rec.phases.iter().map(|(_, s)| s).sum::<f64>() * 1e3;
            stderr_write(
                py,
                &format!(
                    "parpy: {} for {} ({}, {ms:.1} ms): {}\n",
                    self.name, rec.backend, rec.origin, rec.reason
                ),
            )?;
        }
        Ok(())
    }

    /// Records the values of the specialized scalar parameters (`mask`) of
    /// a call that missed the cache. A parameter whose distinct values
    /// exceed [`MAX_SPECIALIZED_VALUES`] stops being specialized; returns
    /// those parameters (bit i = parameter i).
    fn note_values(&self, mask: u64, vals: &[u64]) -> u64 {
        let mask = mask & !self.pinned.load(Ordering::Acquire);
        let mut stopped = 0;
        let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if c.seen.len() < self.params.len() {
            c.seen.resize(self.params.len(), vec![]);
        }
        for (i, &v) in vals.iter().enumerate().take(self.params.len()) {
            if mask >> i & 1 == 0 || c.seen[i].contains(&v) {
                continue;
            }
            if c.seen[i].len() < MAX_SPECIALIZED_VALUES {
                c.seen[i].push(v);
            } else {
                c.seen[i].clear();
                stopped |= 1 << i;
            }
        }
        self.generic.fetch_or(stopped, Ordering::AcqRel);
        stopped
    }

    /// An array the function writes that overlaps another array argument
    /// without being the same array (views of one buffer; the same array
    /// passed twice compiles as one, `same_arrays`): Python sees each write
    /// through both names, while the compiled code (C's loop orders, the
    /// passes that keep elements in registers or reorder iterations)
    /// assumes they are apart. A `ValueError`, not a silently different
    /// result.
    fn overlap_error(
        &self,
        c: &Compiled,
        vals: &[u64; MAX_ARGS],
        ctx: &ArgCtx<'_>,
    ) -> PyResult<()> {
        let at = |k: usize| {
            let (a, bytes) = c.extents[k];
            args::Extent {
                arg: a,
                ptr: vals[a],
                bytes,
                written: c.written_mask >> a & 1 != 0,
            }
        };
        match args::overlapping(c.extents.len(), at) {
            Some((a, b)) => Err(args::overlap_error(&self.name, &ctx.name(a), &ctx.name(b))),
            None => Ok(()),
        }
    }

    /// Says once, with a `ParpyWarning`, that the parameters `bits` are
    /// passed at run time from now on.
    fn warn_generic(&self, py: Python<'_>, bits: u64) -> PyResult<()> {
        for i in (0..self.params.len()).filter(|i| bits >> i & 1 != 0) {
            let msg = format!(
                concat!(
                    "`{}` was compiled for {} values of its scalar parameter `{}` and got ",
                    "another one: parpy now passes `{}` at run time (one more compilation ",
                    "serves all its values); set `specialize_scalars = False` to start that way"
                ),
                self.name, MAX_SPECIALIZED_VALUES, self.params[i], self.params[i]
            );
            crate::errors::warn(py, &msg)?;
        }
        Ok(())
    }

    fn insert(&self, key: &[u64], compiled: Arc<Compiled>) {
        {
            let mut c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            c.map.insert(key.into(), compiled.clone());
            c.last_key.clear();
            c.last_key.extend_from_slice(key);
            c.last = Some(compiled);
        }
        crate::loaded::enforce();
    }

    /// A call without `opts=`. From the body of a jit function run as
    /// plain Python (`fn.py_func(...)`), a helper runs as plain Python too
    /// (`parpy._pymode.called_from_plain_jit`); so does a helper that
    /// returns a value, from anywhere (a function run without its
    /// decorator calls it: no main function returns a value, so no call
    /// that forgot `opts=` is taken for one); anywhere else it is a
    /// TypeError.
    fn without_opts(&self, py: Python<'_>, args: &[*mut ffi::PyObject]) -> PyResult<Py<PyAny>> {
        // SAFETY: the caller holds a reference to each argument for the
        // duration of the call.
        let args = PyTuple::new(
            py,
            args.iter().map(|&a| unsafe { Borrowed::from_ptr(py, a) }),
        )?;
        let plain = returns_value(&self.def.body)
            || py
                .import("parpy._pymode")?
                .getattr("called_from_plain_jit")?
                .call0()?
                .is_truthy()?;
        if plain {
            // (one argument per parameter: those after `*` go by name)
            let f = self.py_func.bind(py);
            if self.positional == self.params.len() {
                return Ok(f.call1(args)?.unbind());
            }
            let named = PyDict::new(py);
            for (name, v) in self.params[self.positional..]
                .iter()
                .zip(args.iter().skip(self.positional))
            {
                named.set_item(name, v)?;
            }
            let pos = args.get_slice(0, self.positional);
            return Ok(f.call(pos, Some(&named))?.unbind());
        }
        // a CompileTypeError: a TypeError as Python's own, and a
        // RuntimeError with ParPy's words for programs written for it
        let t = crate::errors::compile_type_error(py)?;
        Err(PyErr::from_type(
            t.clone(),
            format!(
                "Missing required keyword argument opts in call to {}: {}() missing the \
                 keyword argument `opts` (a parpy.CompileOptions, e.g. \
                 opts=parpy.par({{...}})); call it as {}",
                self.name,
                self.name,
                self.signature()
            ),
        ))
    }

    /// One call: `args` are the positional arguments (borrowed from the
    /// caller: a vectorcall's array or a tuple's items), `opts` the `opts=`
    /// keyword argument (None: [`JitFunction::without_opts`]). Returns what
    /// the call returns.
    fn call(
        &self,
        py: Python<'_>,
        args: &[*mut ffi::PyObject],
        opts: Option<Borrowed<'_, '_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        match opts {
            Some(o) => self.call_inner(py, args, o).map(|()| None),
            None => self.without_opts(py, args).map(Some),
        }
    }

    fn call_inner(
        &self,
        py: Python<'_>,
        args: &[*mut ffi::PyObject],
        opts_obj: Borrowed<'_, '_, PyAny>,
    ) -> PyResult<()> {
        let opts = opts_obj.cast::<CompileOptions>().map_err(|_| {
            crate::errors::call_type_error(format!(
                "{}(): `opts` must be a parpy.CompileOptions (e.g. parpy.par({{...}})), got {}",
                self.name,
                args::type_name(&opts_obj)
            ))
        })?;
        let opts = opts.get();
        let n = args.len();
        let ctx = self.ctx();
        if n != self.params.len() {
            return Err(ctx.arity_error(n));
        }
        // (a module-level number or helper the compiled code took was
        // re-bound since: Python reads the new one, so the code is stale)
        if !self.resolver.unchanged(py) {
            crate::service::forget_specializations();
        }
        // SAFETY: the caller holds a reference to each argument for the
        // duration of the call.
        let arg = |i: usize| unsafe { Borrowed::from_ptr(py, args[i]) };
        // the slow paths (a dict argument, a build, the Python backend)
        // take the arguments as a tuple
        let tuple = || PyTuple::new(py, (0..n).map(arg));
        let mut key = KeyBuf::new();
        let mut vals = [0u64; MAX_ARGS];
        // the device arrays among them (allocates only when there are some)
        let mut devs = Vec::new();
        let mut same: Vec<(usize, usize)> = Vec::new();
        let mut writeable: u64;
        let mut elems: usize;
        // parameters that stopped being specialized during this call
        let mut stopped: u64 = 0;
        // dict arguments: their leaves take the slots (`args::dicts`); the
        // scalars in them stay specialized (the de-specialization below
        // counts parameters, not leaves)
        let flat = if args::dicts::any_dict((0..n).map(arg)) {
            Some(args::dicts::Flat::new(
                (0..n).map(|i| arg(i).to_owned()),
                &ctx,
            )?)
        } else {
            None
        };
        let ctx = ArgCtx {
            func: &self.name,
            params: flat.as_ref().map_or(&self.params[..], |f| &f.names[..]),
            in_place: flat
                .as_ref()
                .map_or(self.in_place, |f| f.leaf_mask(self.in_place)),
        };
        let compiled = loop {
            let spec = if !opts.specialize_scalars() {
                0
            } else if flat.is_some() {
                u64::MAX
            } else {
                !self.generic.load(Ordering::Acquire)
            };
            key.clear();
            key.push(opts.fingerprint());
            key.push(spec);
            if let Some(f) = &flat {
                f.push_key(&mut key);
            }
            writeable = 0;
            elems = 0;
            devs.clear();
            let mut scalars: u64 = 0;
            let mut observe = |i: usize, a: &Bound<'_, PyAny>| -> PyResult<()> {
                let (is_array, w, count) = args::observe(
                    a,
                    i,
                    spec >> i & 1 != 0,
                    &mut key,
                    &mut vals[i],
                    &mut devs,
                    &ctx,
                )?;
                if is_array && w {
                    writeable |= 1 << i;
                }
                if !is_array {
                    scalars |= 1 << i;
                }
                elems = elems.saturating_add(count);
                Ok(())
            };
            match &flat {
                Some(f) => f
                    .objs
                    .iter()
                    .enumerate()
                    .try_for_each(|(i, a)| observe(i, a))?,
                None => (0..n).try_for_each(|i| observe(i, &arg(i)))?,
            }
            same.clear();
            // (over the leaves of dicts: one array under two keys, or
            // under a key and a parameter, is one array too)
            let leaves = flat.as_ref().map_or(n, |f| f.objs.len());
            same_arrays(leaves, scalars, &vals, &mut same);
            key.push(same.len() as u64);
            for &(j, k) in &same {
                key.push((j as u64) << 32 | k as u64);
            }
            if let Some(c) = self.lookup(key.as_slice()) {
                // (an external's header edited since the build: build again)
                if c.headers.unchanged() {
                    break c;
                }
            }
            if flat.is_none() && opts.lock().backend != crate::options::CompileBackend::Python {
                let now = self.note_values(spec & scalars, &vals);
                if now != 0 {
                    stopped |= now;
                    continue; // a parameter stopped being specialized: new key
                }
            }
            let c = match self.compile_for(py, &tuple()?, opts, spec, &same) {
                Ok(c) => Arc::new(c),
                Err(e) => {
                    let dropped = self.generic.load(Ordering::Acquire) & scalars;
                    if spec == 0 || dropped == 0 {
                        return Err(e);
                    }
                    // The function needs these values at compile time (a
                    // slice bound, say): specialize on them for good.
                    self.pinned.fetch_or(dropped, Ordering::AcqRel);
                    self.generic.fetch_and(!dropped, Ordering::AcqRel);
                    stopped &= !dropped;
                    continue;
                }
            };
            if stopped != 0 {
                self.warn_generic(py, stopped)?;
            }
            self.insert(key.as_slice(), c.clone());
            break c;
        };
        let mut readonly_written = compiled.written_mask & !writeable;
        // (torch tensors come as not writeable: one the function writes is
        // refused when it requires grad, else taken)
        let mut rest = readonly_written;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let obj = match &flat {
                Some(f) => f.objs[i].clone(),
                None => arg(i).to_owned(),
            };
            if args::device::torch_write(&obj, || ctx.name(i), &self.name)? {
                readonly_written &= !(1 << i);
            }
        }
        if readonly_written != 0 {
            let mut i = readonly_written.trailing_zeros() as usize;
            // (an array passed twice compiles under its first name: the
            // name the body stores through is the one to report)
            let stored = self.def.stored_params();
            if stored >> i & 1 == 0 {
                let twin = same.iter().find_map(|&(j, k)| match (j == i, k == i) {
                    (true, _) => Some(k),
                    (_, true) => Some(j),
                    _ => None,
                });
                if let Some(t) = twin.filter(|&t| t < 64 && stored >> t & 1 != 0) {
                    i = t;
                }
            }
            return Err(PyValueError::new_err(format!(
                "argument `{}` of `{}` is read-only, but the function writes to it; pass a \
                 writeable array (e.g. {}.copy())",
                ctx.name(i),
                self.name,
                ctx.name(i)
            )));
        }
        if !compiled.extents.is_empty() {
            self.overlap_error(&compiled, &vals, &ctx)?;
        }
        for n in &compiled.narrow_ints {
            n.check(vals[n.arg], || ctx.name(n.arg), &self.name)?;
        }
        let entry = match &compiled.exec {
            Exec::Cpu(e) => e,
            Exec::Cuda(f) => return f.call(py, &vals, &devs),
            Exec::Python => return self.run_python(py, &tuple()?),
        };
        let mut argv: [*mut c_void; MAX_ARGS + 1] = [std::ptr::null_mut(); MAX_ARGS + 1];
        for (j, &(ai, is_array)) in compiled.params.iter().enumerate() {
            argv[j] = args::as_arg(is_array, &mut vals[ai]);
        }
        let mut np = compiled.params.len();
        // [site + 1, index, values...] of the first failed check
        let mut record = [0i64; parpy_core::ir::RECORD_LEN];
        if !compiled.bounds.is_empty() {
            argv[np] = record.as_mut_ptr().cast();
            np += 1;
        }
        let result = if let Some(sites) = &compiled.callbacks {
            // host code calling Python: on this thread, holding the GIL
            // between callbacks
            entry
                .set_callback(crate::callbacks::trampoline)
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            let (result, raised) =
                crate::callbacks::with_frame(sites, || entry.call(&mut argv[..np]));
            if let Some(e) = raised {
                return Err(e);
            }
            result
        } else if elems >= DETACH_ELEMS {
            // The pointers stay valid: the caller keeps the arrays alive.
            let argv_addr = argv.as_mut_ptr() as usize;
            py.detach(move || {
                let argv = argv_addr as *mut *mut c_void;
                // SAFETY: `argv` has `np` valid entries built above.
                entry.call(unsafe { std::slice::from_raw_parts_mut(argv, np) })
            })
        } else {
            entry.call(&mut argv[..np])
        };
        result.map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        parpy_runtime::bounds_error(&self.name, &compiled.bounds, &record)
            .map_or(Ok(()), |f| Err(check_failure(f)))
    }

    /// `CompileBackend.Python`: `parpy._pymode.run(py_func, args)`.
    fn run_python(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<()> {
        py.import("parpy._pymode")?
            .getattr("run")?
            .call1((self.py_func.bind(py), args))?;
        Ok(())
    }

    /// A call whose arguments are given by name (`named`: name, value;
    /// `opts` not among them) or that leaves out parameters: Python's
    /// binding to one positional argument per parameter, the left-out ones
    /// from the function's `__defaults__` (read at each such call, as
    /// Python does), then the call.
    fn call_named(
        &self,
        py: Python<'_>,
        pos: &[*mut ffi::PyObject],
        named: &[(Borrowed<'_, '_, PyAny>, Borrowed<'_, '_, PyAny>)],
        opts: Option<Borrowed<'_, '_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let n = self.params.len();
        if pos.len() > self.positional {
            if self.positional == n {
                return Err(self.ctx().arity_error(pos.len()));
            }
            let k = self.positional;
            return Err(PyTypeError::new_err(format!(
                "{}() takes {k} positional argument{} but {} {} given: {}",
                self.name,
                if k == 1 { "" } else { "s" },
                pos.len(),
                if pos.len() == 1 { "was" } else { "were" },
                self.signature()
            )));
        }
        let mut slots: Vec<Option<Bound<'_, PyAny>>> = pos
            .iter()
            // SAFETY: the caller holds a reference to each argument.
            .map(|&p| Some(unsafe { Borrowed::from_ptr(py, p) }.to_owned()))
            .collect();
        slots.resize(n, None);
        for (name, value) in named {
            let name: String = name.extract()?;
            let Some(i) = self.params.iter().position(|p| *p == name) else {
                return Err(crate::errors::call_type_error(format!(
                    "{}() got an unexpected keyword argument `{name}`: {}",
                    self.name,
                    self.signature()
                )));
            };
            if i < self.pos_only {
                return Err(crate::errors::call_type_error(format!(
                    "{}() got some positional-only arguments passed as keyword arguments: `{name}`: {}",
                    self.name,
                    self.signature()
                )));
            }
            if slots[i].is_some() {
                return Err(crate::errors::call_type_error(format!(
                    "{}() got multiple values for argument `{name}`: {}",
                    self.name,
                    self.signature()
                )));
            }
            slots[i] = Some((**value).clone());
        }
        let defaults = self
            .py_func
            .bind(py)
            .getattr(pyo3::intern!(py, "__defaults__"))?;
        let defaults: Vec<Bound<'_, PyAny>> = if defaults.is_none() {
            vec![]
        } else {
            defaults.try_iter()?.collect::<PyResult<_>>()?
        };
        // (the keyword-only parameters' defaults are a dict of their own)
        let kw_defaults = self
            .py_func
            .bind(py)
            .getattr(pyo3::intern!(py, "__kwdefaults__"))?;
        let kw_defaults = kw_defaults.cast_into::<PyDict>().ok();
        let first_default = self.positional.saturating_sub(defaults.len());
        let mut missing = vec![];
        for (i, slot) in slots.iter_mut().enumerate() {
            if slot.is_some() {
                continue;
            }
            let default = if i < self.positional {
                i.checked_sub(first_default).map(|d| defaults[d].clone())
            } else {
                match &kw_defaults {
                    Some(kd) => kd.get_item(&self.params[i])?,
                    None => None,
                }
            };
            match default {
                Some(d) => *slot = Some(d),
                None => missing.push(format!("`{}`", self.params[i])),
            }
        }
        if !missing.is_empty() {
            if named.is_empty() && defaults.is_empty() && self.positional == n {
                return Err(self.ctx().arity_error(pos.len()));
            }
            return Err(PyTypeError::new_err(format!(
                "{}() missing required argument{} {}: {}",
                self.name,
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", "),
                self.signature()
            )));
        }
        let ptrs: Vec<*mut ffi::PyObject> = slots
            .iter()
            .map(|s| s.as_ref().map_or(std::ptr::null_mut(), |b| b.as_ptr()))
            .collect();
        self.call(py, &ptrs, opts)
    }

    /// Why the entry's int parameter `name` is narrower than its argument:
    /// its annotation (a parameter of the function, not a dict's leaf),
    /// else `force_int_size`.
    fn narrowing(&self, name: &str) -> args::Narrowing {
        let ann = self.def.params.iter().find(|p| p.name == name);
        let path = ann
            .and_then(|p| p.annotation.as_ref())
            .and_then(|a| a.dotted_path());
        match path {
            // (`k: int` is parpy's int64, which `force_int_size` narrows)
            Some(p) if p.last() != Some(&"int") => args::Narrowing::Annotation(p.join(".")),
            _ => args::Narrowing::ForceIntSize,
        }
    }

    /// The miss path: inspect the arguments (once), compile, build (disk
    /// cache), load.
    fn compile_for(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        opts: &CompileOptions,
        spec: u64,
        same: &[(usize, usize)],
    ) -> PyResult<Compiled> {
        let data = opts.snapshot();
        let ctx = self.ctx();
        let started = Instant::now();
        if data.backend == crate::options::CompileBackend::Python {
            // The arguments are checked as for a compiled backend; nothing to build.
            let ins = args::inspect_call(args.iter().collect(), spec, &ctx)?;
            let phases = vec![("inspect", started.elapsed().as_secs_f64())];
            self.record(py, &ins, opts, "Python", "python", phases, None)?;
            return Ok(Compiled {
                exec: Exec::Python,
                params: vec![],
                written_mask: 0,
                extents: vec![],
                bounds: vec![],
                callbacks: None,
                narrow_ints: vec![],
                headers: Default::default(),
                used: AtomicU64::new(crate::loaded::tick()),
            });
        }
        let backend = service::resolve_backend(py, &data)?;
        if backend == Backend::Metal || !backend::is_enabled(backend) {
            let (_, sentence) = backend::explain(backend);
            let message = format!(
                "cannot run `{}` on the {} backend: {sentence}",
                self.name,
                backend.name()
            );
            // (no C compiler: the build cannot run, docs/safety.md's
            // `BuildError`, a `RuntimeError`)
            return Err(match backend {
                Backend::Cpu => crate::errors::BuildError::new_err(message),
                _ => PyRuntimeError::new_err(message),
            });
        }
        let symbols = resolver::check_value_annotations(self.py_func.bind(py), args.as_any())?;
        let ins = args::inspect_call(args.iter().collect(), spec, &ctx)?;
        let records = &ins.records;
        let ctx = ArgCtx {
            func: &self.name,
            params: &ins.names,
            in_place: if ins.names == self.params {
                self.in_place
            } else {
                0
            },
        };
        let mut phases = vec![("inspect", started.elapsed().as_secs_f64())];
        if backend == Backend::Cpu {
            if let Some(i) = records.iter().position(|r| r.device.is_some()) {
                return Err(PyValueError::new_err(format!(
                    "argument `{}` of `{}` is a CUDA device array, but `{}` runs on the Cpu \
                     backend, which takes NumPy arrays (use backend=parpy.CompileBackend.Cuda, \
                     or copy it to NumPy)",
                    ctx.name(i),
                    self.name,
                    self.name
                )));
            }
        }
        // the device before compiling: arguments on two devices fail early
        let device = if backend == Backend::Cuda {
            crate::cuda::place(&self.name, records, &ctx, data.device)?
        } else {
            0
        };
        let mut options = data.to_core(backend)?;
        options.same_arrays = one_array_pairs(same, records);
        if data.implicit_shape_labels {
            options.implicit_labels = symbols.names.clone();
        }
        let out = service::run_compile(py, &self.def, &ins.types, self.resolver.as_ref(), &options)
            .inspect_err(|e| {
                // (a race the one array makes: the message names both)
                for &(j, k) in &options.same_arrays {
                    let note = format!(
                        "in this call `{}` and `{}` are the same array, which parpy compiles as \
                         one array under both names",
                        ctx.name(k),
                        ctx.name(j)
                    );
                    let _ = e.value(py).call_method1("add_note", (note,));
                }
            })?;
        phases.extend(out.phases.iter().copied());
        if data.write_output {
            service::write_output(py, &data, backend, &self.name, &out.code)?;
        }
        let mut params = Vec::with_capacity(out.params.len());
        let mut written_mask = 0u64;
        for p in &out.params {
            let Some(ai) = ins.names.iter().position(|n| *n == p.name) else {
                return Err(internal_error(&format!(
                    "the compiled entry of `{}` has a parameter `{}` that is not an argument",
                    self.name, p.name
                )));
            };
            let is_array = matches!(p.ty, ArgType::Array { .. });
            if is_array != records[ai].is_array() {
                return Err(internal_error(&format!(
                    "the compiled entry of `{}` disagrees about whether `{}` is an array",
                    self.name, p.name
                )));
            }
            if p.written && is_array {
                written_mask |= 1 << ai;
            }
            params.push((ai, is_array));
        }
        let narrow_ints = out
            .params
            .iter()
            .zip(&params)
            .filter_map(|(p, &(ai, _))| match (&records[ai].ty, &p.ty) {
                (
                    &ArgType::Scalar {
                        elem: from, weak, ..
                    },
                    &ArgType::Scalar { elem: to, .. },
                ) => args::NarrowInt::new(ai, from, to, weak, self.narrowing(&p.name)),
                _ => None,
            })
            .collect();
        let mut extents: Vec<(usize, u64)> = out
            .params
            .iter()
            .zip(&params)
            .filter_map(|(p, &(ai, _))| match &p.ty {
                ArgType::Array { elem, shape } => {
                    let n = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64));
                    Some((ai, n?.saturating_mul(elem.size() as u64)))
                }
                _ => None,
            })
            .collect();
        if written_mask == 0 || extents.len() < 2 {
            extents.clear();
        }
        let built = Instant::now();
        // (stamped before the build reads them: an edit in between rebuilds)
        let headers = service::HeaderWatch::new(&out.program, &data.includes);
        let (exec, origin) = if backend == Backend::Cuda {
            let index: Vec<usize> = params.iter().map(|&(ai, _)| ai).collect();
            let f = crate::cuda::CudaFn::build(
                py,
                &ctx,
                &out,
                records,
                device,
                &service::cache_for(py, &data)?,
                &index,
                &data.includes,
                data.use_cuda_graphs,
            )?;
            let origin = origin_name(f.origin);
            (Exec::Cuda(Box::new(f)), origin)
        } else {
            let (entry, outcome) =
                // with external functions the user's headers are part of it
                service::build_entry(
                    py,
                    &data,
                    &(service::header_stamp(&out.program, &data.includes) + &out.code),
                    &out.entry_symbol,
                    !out.program.externals.is_empty(),
                )?;
            (Exec::Cpu(entry), origin_name(outcome))
        };
        phases.push(("build+load", built.elapsed().as_secs_f64()));
        let on = (backend == Backend::Cuda).then_some(device);
        self.record(py, &ins, opts, backend.name(), origin, phases, on)?;
        let bounds = out
            .program
            .bounds
            .iter()
            .flat_map(|b| &b.sites)
            .map(|s| s.describe())
            .collect();
        Ok(Compiled {
            exec,
            params,
            written_mask,
            extents,
            bounds,
            callbacks: crate::callbacks::sites(&out.program),
            narrow_ints,
            headers,
            used: AtomicU64::new(crate::loaded::tick()),
        })
    }
}

/// The pairs of [`same_arrays`] that are one array under two names, which
/// compile as one (`Options::same_arrays`): their records equal (a view of
/// another shape or type only overlaps).
pub(crate) fn one_array_pairs(
    same: &[(usize, usize)],
    records: &[args::ArgRecord],
) -> Vec<(usize, usize)> {
    same.iter()
        .copied()
        .filter(|&(j, k)| records[j].ty == records[k].ty)
        .collect()
}

/// The pairs `(j, k)`, `k < j` the first such, of array arguments at one
/// address (`vals`; `scalars`: bit i set, argument i is not an array):
/// `f(x, x)` gives `(1, 0)`. Part of the cache key: the same array passed
/// twice compiles with one array for both names (`Options::same_arrays`).
pub(crate) fn same_arrays(
    n: usize,
    scalars: u64,
    vals: &[u64; MAX_ARGS],
    out: &mut Vec<(usize, usize)>,
) {
    let arrays = !scalars & if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    if arrays.count_ones() < 2 {
        return;
    }
    for j in (1..n).filter(|j| arrays >> j & 1 != 0) {
        if let Some(k) = (0..j).find(|&k| arrays >> k & 1 != 0 && vals[k] == vals[j]) {
            out.push((j, k));
        }
    }
}

/// The vectorcall entry of every `JitFunction`: positional arguments in
/// place, keyword names in a tuple, no tuple or dict built per call (the
/// cached call, C1). The same checks and errors as `__call__`.
unsafe extern "C" fn jit_vectorcall(
    callable: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: usize,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls this with the GIL held (or attached).
    let py = unsafe { Python::assume_attached() };
    let n = nargsf & !ARGUMENTS_OFFSET;
    // SAFETY: CPython passes the callable, whose type is `JitFunction`
    // (the only type with this entry), and `n` positional arguments
    // followed by one value per keyword name.
    let result = crate::errors::guard(|| unsafe {
        let this = Borrowed::from_ptr(py, callable).cast_unchecked::<JitFunction>();
        let this = this.get();
        let names = (!kwnames.is_null())
            .then(|| Borrowed::from_ptr(py, kwnames).cast_unchecked::<PyTuple>());
        let nk = names.map_or(0, |t| t.len());
        let all = std::slice::from_raw_parts(args, n + nk);
        let mut opts = None;
        let mut named = vec![];
        if let Some(names) = &names {
            for (j, name) in names.iter_borrowed().enumerate() {
                let value = Borrowed::from_ptr(py, all[n + j]);
                if name.as_ptr() == pyo3::intern!(py, "opts").as_ptr()
                    || name.cast::<PyString>().is_ok_and(|s| s == "opts")
                {
                    opts = Some(value);
                } else {
                    named.push((name, value));
                }
            }
        }
        if named.is_empty() && n >= this.params.len() && this.positional == this.params.len() {
            this.call(py, &all[..n], opts)
        } else {
            this.call_named(py, &all[..n], &named, opts)
        }
    });
    match result {
        Ok(Some(v)) => v.into_ptr(),
        Ok(None) => py.None().into_ptr(),
        Err(e) => {
            e.restore(py);
            std::ptr::null_mut()
        }
    }
}

/// Turns on the vectorcall protocol for `JitFunction` (once per process):
/// PyO3 gives a class only `tp_call`, where CPython builds a tuple of the
/// arguments and a dict of `opts=` for every call. The type gets the offset
/// of the `vectorcall` field (measured on `slf`, not assumed) and the
/// `Py_TPFLAGS_HAVE_VECTORCALL` flag; the fields of `PyTypeObject` it
/// writes are checked first against `PyType_GetSlot` / `PyType_GetFlags`,
/// and on any difference (a CPython whose layout is not the one of 3.8 to
/// 3.14) calls stay on `tp_call`, which works the same, only slower.
fn enable_vectorcall(slf: &Bound<'_, JitFunction>) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let obj = slf.as_ptr() as usize;
        let field = std::ptr::addr_of!(slf.get().vectorcall) as usize;
        // SAFETY: `slf`'s type is a heap type (PyO3's classes are); the
        // prefix is read, compared with the API's view, and written only
        // when both agree, holding the GIL.
        unsafe {
            let tp = ffi::Py_TYPE(slf.as_ptr());
            let prefix = tp.cast::<TypePrefix>();
            let p = &mut *prefix;
            let dealloc = ffi::PyType_GetSlot(tp, ffi::Py_tp_dealloc);
            let call = ffi::PyType_GetSlot(tp, ffi::Py_tp_call);
            let agrees = p.tp_dealloc == dealloc
                && p.tp_call == call
                && !call.is_null()
                && p.tp_flags == ffi::PyType_GetFlags(tp)
                && p.tp_vectorcall_offset == 0
                && field > obj
                && field - obj + std::mem::size_of::<usize>() <= p.tp_basicsize as usize;
            if agrees {
                p.tp_vectorcall_offset = (field - obj) as ffi::Py_ssize_t;
                p.tp_flags |= HAVE_VECTORCALL;
                ffi::PyType_Modified(tp);
            }
        }
    });
}

/// `PY_VECTORCALL_ARGUMENTS_OFFSET`: the flag bit of `nargsf`.
const ARGUMENTS_OFFSET: usize = 1 << (usize::BITS - 1);

/// `Py_TPFLAGS_HAVE_VECTORCALL` (1 << 11 since CPython 3.8).
const HAVE_VECTORCALL: std::ffi::c_ulong = 1 << 11;

/// The first fields of CPython's `PyTypeObject` (unchanged from 3.8 to
/// 3.14 in the builds abi3 wheels load in), up to `tp_flags`.
#[repr(C)]
struct TypePrefix {
    ob_refcnt: ffi::Py_ssize_t,
    ob_type: *mut c_void,
    ob_size: ffi::Py_ssize_t,
    tp_name: *const c_void,
    tp_basicsize: ffi::Py_ssize_t,
    tp_itemsize: ffi::Py_ssize_t,
    tp_dealloc: *mut c_void,
    tp_vectorcall_offset: ffi::Py_ssize_t,
    tp_getattr: *mut c_void,
    tp_setattr: *mut c_void,
    tp_as_async: *mut c_void,
    tp_repr: *mut c_void,
    tp_as_number: *mut c_void,
    tp_as_sequence: *mut c_void,
    tp_as_mapping: *mut c_void,
    tp_hash: *mut c_void,
    tp_call: *mut c_void,
    tp_str: *mut c_void,
    tp_getattro: *mut c_void,
    tp_setattro: *mut c_void,
    tp_as_buffer: *mut c_void,
    tp_flags: std::ffi::c_ulong,
}

#[pymethods]
impl JitFunction {
    /// The Python objects this function holds (the decorated function, its
    /// globals and closure cells), for the cycle collector: a function
    /// that refers to its own `JitFunction` (through a global, a closure or
    /// an attribute) is freed when unreachable.
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.py_func)?;
        self.resolver.traverse(&visit)
    }

    #[new]
    fn py_new(f: &Bound<'_, PyAny>) -> PyResult<JitFunction> {
        crate::errors::guard(|| JitFunction::from_py_function(f))
    }

    // The call through `tp_call` (a tuple and a dict): the first call of
    // the process, calls through `PyObject_Call`, and every call where
    // `enable_vectorcall` could not verify the type's layout. It turns on
    // the vectorcall entry for the calls that follow.
    #[pyo3(signature = (*args, opts = None, **kwargs))]
    fn __call__(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        opts: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        enable_vectorcall(slf);
        let this = slf.get();
        let kw = kwargs.filter(|kw| !kw.is_empty());
        if kw.is_some() || args.len() < this.params.len() || this.positional < this.params.len() {
            let named: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> =
                kw.map(|kw| kw.iter().collect()).unwrap_or_default();
            let named: Vec<_> = named
                .iter()
                .map(|(k, v)| (k.as_borrowed(), v.as_borrowed()))
                .collect();
            let pos: Vec<*mut ffi::PyObject> = args.iter_borrowed().map(|a| a.as_ptr()).collect();
            return crate::errors::guard(|| {
                this.call_named(py, &pos, &named, opts.map(|o| o.as_borrowed()))
            })
            .map(|v| v.unwrap_or_else(|| py.None()));
        }
        let mut stack = [std::ptr::null_mut(); MAX_ARGS];
        let heap: Vec<*mut ffi::PyObject>;
        let ptrs = if args.len() <= MAX_ARGS {
            for (p, a) in stack.iter_mut().zip(args.iter_borrowed()) {
                *p = a.as_ptr();
            }
            &stack[..args.len()]
        } else {
            heap = args.iter_borrowed().map(|a| a.as_ptr()).collect();
            &heap[..]
        };
        crate::errors::guard(|| this.call(py, ptrs, opts.map(|o| o.as_borrowed())))
            .map(|v| v.unwrap_or_else(|| py.None()))
    }

    /// A jit function stored on a class is a method, as a plain function
    /// is: `K().m(x)` calls `m(K(), x)` (a bound method); through the class
    /// (`K.m`) it is itself. (parpy takes no objects as arguments: the
    /// call's error names the argument `self`.)
    fn __get__<'py>(
        slf: &Bound<'py, Self>,
        obj: Option<&Bound<'py, PyAny>>,
        _owner: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        match obj {
            Some(o) if !o.is_none() => {
                static METHOD: pyo3::sync::PyOnceLock<Py<pyo3::types::PyType>> =
                    pyo3::sync::PyOnceLock::new();
                METHOD.import(py, "types", "MethodType")?.call1((slf, o))
            }
            _ => Ok(slf.clone().into_any()),
        }
    }

    /// The undecorated Python function.
    #[getter]
    fn py_func(&self, py: Python<'_>) -> Py<PyAny> {
        self.py_func.clone_ref(py)
    }

    #[getter]
    fn __wrapped__(&self, py: Python<'_>) -> Py<PyAny> {
        self.py_func.clone_ref(py)
    }

    #[getter]
    fn __name__(&self) -> &str {
        &self.name
    }

    #[getter]
    fn __doc__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.py_func.bind(py).getattr("__doc__")?.unbind())
    }

    #[getter]
    fn parameters(&self) -> Vec<String> {
        self.params.clone()
    }

    /// Number of specializations held in memory.
    /// The builds of this function since the caches were last cleared
    /// (at most 64, oldest first): one dict per build with `args`
    /// (parameter -> type as specialized), `options`, `backend`, `origin`
    /// (`built`, `disk`, `rebuilt` or `python`), `phases` (phase -> seconds),
    /// `reason` (why the in-memory cache missed) and `device` (the CUDA
    /// device of a Cuda build, else None).
    fn specializations<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let history = {
            let c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if c.generation != generation() {
                Vec::new()
            } else {
                c.history.clone()
            }
        };
        history
            .iter()
            .map(|r| {
                let d = PyDict::new(py);
                let a = PyDict::new(py);
                for (k, v) in &r.args {
                    a.set_item(k, v)?;
                }
                d.set_item("args", a)?;
                d.set_item("options", &r.options)?;
                d.set_item("backend", r.backend)?;
                d.set_item("origin", r.origin)?;
                let ph = PyDict::new(py);
                for (k, v) in &r.phases {
                    ph.set_item(*k, *v)?;
                }
                d.set_item("phases", ph)?;
                d.set_item("reason", &r.reason)?;
                d.set_item("device", r.device)?;
                Ok(d)
            })
            .collect()
    }

    fn cache_size(&self) -> usize {
        let c = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if c.generation != generation() {
            0
        } else {
            c.map.len()
        }
    }

    fn __repr__(&self) -> String {
        format!("<parpy.jit function {}>", self.name)
    }
}

/// A parsed function with its resolver, name and parameter names.
pub type ParsedFunction = (Arc<FunctionDef>, Arc<PyResolver>, String, Vec<String>);

/// `fn` given to print_compiled: a JitFunction or a plain function.
pub fn def_and_resolver(f: &Bound<'_, PyAny>) -> PyResult<ParsedFunction> {
    if let Ok(j) = f.cast::<JitFunction>() {
        let j = j.get();
        return Ok((
            j.def.clone(),
            j.resolver.clone(),
            j.name.clone(),
            j.params.clone(),
        ));
    }
    if !f
        .py()
        .import("inspect")?
        .call_method1("isfunction", (f,))?
        .is_truthy()?
    {
        return Err(PyTypeError::new_err(format!(
            "expected a function or a @parpy.jit function, got {}",
            args::type_name(f)
        )));
    }
    let name: String = f
        .getattr("__name__")?
        .cast_into::<PyString>()?
        .to_cow()?
        .into_owned();
    if name == "<lambda>" {
        return Err(PyTypeError::new_err(
            "parpy takes a function defined with `def`, not a lambda: write `def name(args): \
             ...` and pass that",
        ));
    }
    let (def, r) = resolver::parse_function(f)?;
    Ok((def, Arc::new(r), name, resolver::param_names(f)?))
}

impl crate::loaded::SpecCache for Mutex<FnCache> {
    fn len(&self) -> usize {
        self.lock().unwrap_or_else(|e| e.into_inner()).map.len()
    }

    fn oldest(&self) -> Option<u64> {
        let c = self.lock().unwrap_or_else(|e| e.into_inner());
        c.map.values().map(|v| v.used.load(Ordering::Relaxed)).min()
    }

    fn evict_oldest(&self) {
        let gone = {
            let mut c = self.lock().unwrap_or_else(|e| e.into_inner());
            let key = c
                .map
                .iter()
                .min_by_key(|(_, v)| v.used.load(Ordering::Relaxed))
                .map(|(k, _)| k.clone());
            let Some(key) = key else { return };
            if c.last_key.as_slice() == &key[..] {
                c.last = None;
                c.last_key.clear();
            }
            c.map.remove(&key)
        };
        // the library goes here (outside the lock), unless a call runs it
        drop(gone);
    }

    fn clear(&self) {
        let gone = {
            let mut c = self.lock().unwrap_or_else(|e| e.into_inner());
            c.last = None;
            c.last_key.clear();
            std::mem::take(&mut c.map)
        };
        drop(gone);
    }
}

/// A failed run-time check as Python's exception: `IndexError` for an
/// index, `AssertionError` for an `assert`, the class a `raise` names.
pub(crate) fn check_failure(f: parpy_runtime::CheckFailure) -> PyErr {
    match f {
        parpy_runtime::CheckFailure::Index(m) => PyIndexError::new_err(m),
        parpy_runtime::CheckFailure::Raised { exception, message } => {
            crate::errors::raised(&exception, message)
        }
        parpy_runtime::CheckFailure::Formatted {
            exception,
            template,
            values,
            printf,
        } => crate::errors::formatted(&exception, &template, &values, printf),
    }
}
