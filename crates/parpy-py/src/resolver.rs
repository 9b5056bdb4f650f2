//! A Python function as the compiler sees it: its source text, parameter
//! names, and the lookup of names over its globals, closure and builtins
//! (what the names denote is `classify.rs`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use parpy_core::syntax::FunctionDef;
use parpy_core::{CompileError, ElemTy, Resolved, SourceFile};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::errors::{compile_error_to_py, CompileErrorPy};

/// What an annotation variable is bound to for one compilation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AnnBinding {
    /// A shape symbol (`parpy.types.symbol()`): an extent or scalar value.
    Int(i64),
    /// A type variable (`parpy.types.type_var()`): an element type.
    Dtype(ElemTy),
}

thread_local! {
    /// The values of the shape symbols and type variables (by object
    /// address) that the annotations of the function being compiled bind.
    static SYMBOLS: std::cell::RefCell<Vec<(usize, AnnBinding)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Binds shape symbols and type variables while it lives (one compilation).
pub struct SymbolScope {
    /// The names of the shape symbols the annotations use, in the
    /// function's scope (`Options::implicit_labels`).
    pub names: Vec<String>,
}

impl SymbolScope {
    pub fn bind(values: Vec<(usize, AnnBinding)>, names: Vec<String>) -> SymbolScope {
        SYMBOLS.with(|s| *s.borrow_mut() = values);
        SymbolScope { names }
    }
}

impl Drop for SymbolScope {
    fn drop(&mut self) {
        SYMBOLS.with(|s| s.borrow_mut().clear());
    }
}

/// The value a `SymbolScope` binds to the symbol or type variable object
/// at address `id`.
pub fn symbol_value(id: usize) -> Option<AnnBinding> {
    SYMBOLS.with(|s| s.borrow().iter().find(|e| e.0 == id).map(|e| e.1))
}

/// Checks the annotations that are Python values rather than type names
/// (`parpy.types.buffer(T, [N])`, `type_var()`, `symbol()`) against the
/// arguments: `parpy._annotations.check` (on a cache miss only).
/// Returns the shape symbols and type variables they bind, for the
/// compilation that follows.
pub fn check_value_annotations(
    f: &Bound<'_, PyAny>,
    args: &Bound<'_, PyAny>,
) -> PyResult<SymbolScope> {
    let py = f.py();
    let has = f
        .getattr(pyo3::intern!(py, "__annotations__"))
        .and_then(|a| a.is_truthy())
        .unwrap_or(false);
    let mut symbols = vec![];
    let mut names = vec![];
    if has {
        let m = py.import("parpy._annotations")?;
        names = m.call_method1("symbol_names", (f,))?.extract()?;
        let d = m.call_method1("check", (f, args))?;
        for (k, v) in d.cast::<PyDict>()?.iter() {
            let bound = match v.extract::<i64>() {
                Ok(n) => AnnBinding::Int(n),
                Err(_) => {
                    let name: String = v.extract()?;
                    match ElemTy::from_numpy_name(&name) {
                        Some(t) => AnnBinding::Dtype(t),
                        None => continue,
                    }
                }
            };
            symbols.push((k.extract::<usize>()?, bound));
        }
    }
    Ok(SymbolScope::bind(symbols, names))
}

pub struct PyResolver {
    globals: Py<PyDict>,
    /// Free variable names with their cells.
    closure: Vec<(String, Py<PyAny>)>,
    /// Parameters annotated with a type variable, shape symbol or
    /// `parpy.types.buffer(...)`, with that object (`__annotations__`): the
    /// path `["#annotation", param]` (see
    /// `parpy_core::resolve::ANNOTATION`). An annotation need not be a
    /// free variable of the function (a `type_var()` local to the enclosing
    /// function is evaluated there), so its name may not resolve.
    annotations: Vec<(String, Py<PyAny>)>,
    /// What compiled code took from this function's names (`Watched`).
    watched: Mutex<Watched>,
    /// Whether `watched` holds anything (the call path's quick test).
    watching: AtomicBool,
}

/// The names whose objects compiled code holds: a module-level number
/// (`SCALE = 2.0`) is a constant of the code, a jit helper's body is in
/// it. Python reads a global at each call, so a name re-bound since
/// (a notebook cell that sets `SCALE = 3.0`) makes that code stale:
/// [`PyResolver::unchanged`] says so at the next call.
#[derive(Default)]
struct Watched {
    /// A name (a global or a closure variable) and the object it named.
    names: Vec<WatchedName>,
    /// The resolvers of the helpers read, jit or plain (their names too,
    /// so a global a helper reads, however deep, is watched).
    helpers: Vec<Arc<PyResolver>>,
}

struct WatchedName {
    name: String,
    /// The name as a Python string, for the globals' dict (a global);
    /// `None`: a closure variable or a builtin, looked up as compiling does.
    key: Option<Py<PyString>>,
    obj: Py<PyAny>,
}

/// How deep `unchanged` follows helpers (parpy refuses recursion; this
/// only bounds a cycle of helpers that refer to each other).
const MAX_HELPER_DEPTH: u32 = 16;

/// How many of a resolver's helpers `unchanged` takes under one lock.
const FIRST_HELPERS: usize = 4;

impl PyResolver {
    /// Visits the Python objects held (for `JitFunction.__traverse__`).
    pub fn traverse(&self, visit: &pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.globals)?;
        for (_, cell) in &self.closure {
            visit.call(cell)?;
        }
        for (_, a) in &self.annotations {
            visit.call(a)?;
        }
        // (held by `watch` or `unchanged` on another thread: visited at a
        // later collection)
        if let Ok(w) = self.watched.try_lock() {
            for n in &w.names {
                visit.call(&n.obj)?;
            }
        }
        Ok(())
    }

    /// Notes that compiled code took `obj`, which `name` named (a
    /// constant, or a jit helper with its resolver `helper`).
    pub(crate) fn watch(
        &self,
        name: &str,
        obj: &Bound<'_, PyAny>,
        helper: Option<Arc<PyResolver>>,
    ) {
        let py = obj.py();
        let global = !self.closure.iter().any(|(n, _)| n == name)
            && self.globals.bind(py).contains(name).unwrap_or(false);
        let key = global.then(|| PyString::intern(py, name).unbind());
        let mut w = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        self.watching.store(true, Ordering::Release);
        if !w.names.iter().any(|n| n.name == name) {
            w.names.push(WatchedName {
                name: name.to_string(),
                key,
                obj: obj.clone().unbind(),
            });
        }
        if let Some(h) = helper {
            if !w.helpers.iter().any(|o| Arc::ptr_eq(o, &h)) {
                w.helpers.push(h);
            }
        }
    }

    /// Whether every watched name (and every helper's) still names the
    /// object compiled code took. A name re-bound is watched with its new
    /// object from then on: the caller drops the stale code.
    #[inline]
    pub(crate) fn unchanged(&self, py: Python<'_>) -> bool {
        !self.watching.load(Ordering::Acquire) || self.unchanged_at(py, 0)
    }

    fn unchanged_at(&self, py: Python<'_>, depth: u32) -> bool {
        let globals = self.globals.bind(py);
        let mut same = true;
        // (a global's lookup in the dict runs no Python code; a closure
        // variable's does, which runs outside the lock; nothing is
        // allocated unless there is one: this runs at every call, for
        // every helper reached)
        // (the first helpers taken under the one lock, the others one at
        // a time below)
        let mut first: [Option<Arc<PyResolver>>; FIRST_HELPERS] = Default::default();
        let (others, helpers) = {
            let mut w = self.watched.lock().unwrap_or_else(|e| e.into_inner());
            for (slot, h) in first.iter_mut().zip(&w.helpers) {
                *slot = Some(h.clone());
            }
            let mut others = vec![];
            for (k, n) in w.names.iter_mut().enumerate() {
                let Some(key) = &n.key else {
                    others.push((k, n.name.clone(), n.obj.clone_ref(py)));
                    continue;
                };
                match globals.get_item(key.bind(py)).ok().flatten() {
                    Some(now) if now.is(&n.obj) => {}
                    Some(now) => {
                        n.obj = now.unbind();
                        same = false;
                    }
                    // (deleted: compiling again reports it)
                    None => same = false,
                }
            }
            (others, w.helpers.len())
        };
        for (k, name, obj) in others {
            match self.root(py, &name).ok().flatten() {
                Some(now) if now.is(&obj) => {}
                now => {
                    same = false;
                    let mut w = self.watched.lock().unwrap_or_else(|e| e.into_inner());
                    if let (Some(n), Some(now)) = (w.names.get_mut(k), now) {
                        n.obj = now.unbind();
                    }
                }
            }
        }
        if depth < MAX_HELPER_DEPTH {
            // (the lock released: a helper may be reached again below, and
            // `helpers` only grows)
            for k in 0..helpers {
                let h = match first.get_mut(k) {
                    Some(h) => h.take(),
                    None => {
                        let w = self.watched.lock().unwrap_or_else(|e| e.into_inner());
                        w.helpers.get(k).cloned()
                    }
                };
                if let Some(h) = h {
                    if h.watching.load(Ordering::Acquire) {
                        same &= h.unchanged_at(py, depth + 1);
                    }
                }
            }
        }
        same
    }

    /// The resolver of a Python function object (`__globals__`, `__closure__`).
    pub fn of_function(f: &Bound<'_, PyAny>) -> PyResult<PyResolver> {
        let globals = f.getattr("__globals__")?.cast_into::<PyDict>()?.unbind();
        let code = f.getattr("__code__")?;
        let names: Vec<String> = code.getattr("co_freevars")?.extract()?;
        let cells = f.getattr("__closure__")?;
        let mut closure = vec![];
        if let Ok(cells) = cells.cast::<PyTuple>() {
            for (n, c) in names.into_iter().zip(cells.iter()) {
                closure.push((n, c.unbind()));
            }
        }
        let mut annotations = vec![];
        if let Ok(anns) = f.getattr("__annotations__") {
            if let Ok(anns) = anns.cast::<PyDict>() {
                for (k, v) in anns.iter() {
                    let marked = attr(&v, "__parpy_annotation__")?
                        .and_then(|m| m.extract::<String>().ok())
                        .is_some_and(|m| m == "type_var" || m == "symbol" || m == "buffer");
                    if let (true, Ok(k)) = (marked, k.extract::<String>()) {
                        annotations.push((k, v.unbind()));
                    }
                }
            }
        }
        Ok(PyResolver {
            globals,
            closure,
            annotations,
            watched: Mutex::new(Watched::default()),
            watching: AtomicBool::new(false),
        })
    }

    pub(crate) fn root<'py>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        for (n, cell) in &self.closure {
            if n == name {
                // An empty cell (assigned later) raises ValueError: not found.
                return Ok(cell.bind(py).getattr("cell_contents").ok());
            }
        }
        if let Some(v) = self.globals.bind(py).get_item(name)? {
            return Ok(Some(v));
        }
        let builtins = py.import("builtins")?;
        Ok(builtins.getattr(name).ok())
    }

    /// The object a dotted path names, or `None`.
    pub fn lookup<'py>(
        &self,
        py: Python<'py>,
        path: &[&str],
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some((first, rest)) = path.split_first() else {
            return Ok(None);
        };
        if *first == parpy_core::resolve::ANNOTATION {
            let found = self.annotations.iter().find(|(k, _)| rest == [k.as_str()]);
            return Ok(found.map(|(_, v)| v.bind(py).clone()));
        }
        let Some(mut obj) = self.root(py, first)? else {
            return Ok(None);
        };
        for name in rest {
            match attr(&obj, name)? {
                Some(o) => obj = o,
                None => return Ok(None),
            }
        }
        Ok(Some(obj))
    }
}

/// The attribute `name` of `obj`, `None` where it has none (an
/// `AttributeError`); any other exception (raised by a `__getattr__`: a
/// lazy import that fails, a Ctrl-C while it ran) is the caller's.
pub(crate) fn attr<'py>(
    obj: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    match obj.getattr(name) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyAttributeError>(obj.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The source text, file name and first line of a Python function.
fn source_of(f: &Bound<'_, PyAny>) -> PyResult<SourceFile> {
    let py = f.py();
    let inspect = py.import("inspect")?;
    let name: String = f
        .getattr("__name__")
        .and_then(|n| n.extract())
        .unwrap_or_else(|_| "<function>".into());
    // a wrapper another decorator made (`functools.wraps`): `getsource`
    // gives the wrapped function's text, which is not the code that runs
    // (its parameters and lines were the wrapper's)
    if f.hasattr("__wrapped__")? {
        return Err(CompileErrorPy::new_err(format!(
            "parpy cannot compile `{name}`: it is a wrapper made by another decorator \
             (`functools.wraps`); put `@parpy.jit` directly above the `def`, below the \
             other decorators"
        )));
    }
    let text: String = inspect
        .call_method1("getsource", (f,))
        .and_then(|t| t.extract())
        .map_err(|e| {
            CompileErrorPy::new_err(format!(
                "parpy needs the source code of `{name}` but Python cannot find it ({}); \
                 define the function in a file",
                e.value(py)
            ))
        })?;
    let code = f.getattr("__code__")?;
    let path: String = match inspect.call_method1("getsourcefile", (f,)) {
        Ok(p) if !p.is_none() => p.extract()?,
        _ => code.getattr("co_filename")?.extract()?,
    };
    let first: u32 = code.getattr("co_firstlineno")?.extract()?;
    Ok(SourceFile::from_function_text(&path, &text, first))
}

/// The parameter names of a Python function: the positional ones, then
/// the keyword-only ones.
pub fn param_names(f: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let code = f.getattr("__code__")?;
    // (the keyword-only parameters follow the positional ones)
    let n: usize = code.getattr("co_argcount")?.extract::<usize>()?
        + code.getattr("co_kwonlyargcount")?.extract::<usize>()?;
    let names: Vec<String> = code.getattr("co_varnames")?.extract()?;
    Ok(names.into_iter().take(n).collect())
}

/// A function whose body reads a shape symbol (`N = parpy.types.symbol()`)
/// that none of its parameter annotations uses: `N` never has a value
/// there (the annotations of the function that reads a symbol bind it), a
/// `CompileNameError` at decoration, pointing at the first read.
pub fn check_symbols_read(f: &Bound<'_, PyAny>, def: &FunctionDef, r: &PyResolver) -> PyResult<()> {
    use parpy_core::Diagnostic;
    let py = f.py();
    let reads = def.global_reads();
    let is_symbol = |o: &Bound<'_, PyAny>| {
        o.getattr(pyo3::intern!(py, "__parpy_annotation__"))
            .and_then(|m| m.extract::<String>())
            .is_ok_and(|m| m == "symbol")
    };
    let mut read_symbols = vec![];
    for (name, span) in reads {
        if let Some(obj) = r.root(py, name)? {
            if is_symbol(&obj) {
                read_symbols.push((name, span, obj.as_ptr() as usize));
            }
        }
    }
    if read_symbols.is_empty() {
        return Ok(());
    }
    let used: Option<Vec<usize>> = py
        .import("parpy._annotations")?
        .call_method1("annotation_symbols", (f,))?
        .extract()?;
    let Some(used) = used else {
        return Ok(());
    };
    let diags: Vec<Diagnostic> = read_symbols
        .into_iter()
        .filter(|(_, _, id)| !used.contains(id))
        .map(|(name, span, _)| {
            Diagnostic::error(format!(
                "Found reference to unused shape variable {name}: no parameter annotation of \
                 `{}` uses the shape symbol `{name}`, so it has no value here",
                def.name
            ))
            .at(span, "a parpy.types.symbol() without a value")
            .help(format!(
                "annotate a parameter with it (`x: parpy.types.buffer(parpy.types.F32, \
                 [{name}])`), or pass the size as an argument"
            ))
            .name_error()
        })
        .collect();
    if diags.is_empty() {
        return Ok(());
    }
    Err(compile_error_to_py(CompileError::User(diags)))
}

/// Parses a Python function (decoration time); user mistakes become
/// `CompileError`.
pub fn parse_function(f: &Bound<'_, PyAny>) -> PyResult<(Arc<FunctionDef>, PyResolver)> {
    let file = source_of(f)?;
    let def =
        parpy_core::catch_internal(|| parpy_core::parse_function(file).map_err(CompileError::User))
            .map_err(compile_error_to_py)?;
    Ok((Arc::new(def), PyResolver::of_function(f)?))
}

thread_local! {
    /// What each (resolver, path) resolved to during the compile running
    /// on this thread ([`ResolveMemo`]): a function names `range` or
    /// `parpy.label` many times, and each resolution classifies a Python
    /// object (a dozen attribute lookups). Within one compile the answer
    /// cannot change; the next compile asks Python again.
    static MEMO: std::cell::RefCell<Option<HashMap<(usize, String), Resolved>>> =
        const { std::cell::RefCell::new(None) };
}

/// `r`'s resolution of `path`: from the memo of the running compile, else
/// `resolve()` (remembered there).
pub(crate) fn memoized(
    r: &PyResolver,
    path: &[&str],
    resolve: impl FnOnce() -> Resolved,
) -> Resolved {
    let key = (r as *const PyResolver as usize, path.join("\0"));
    if let Some(found) = MEMO.with(|m| m.borrow().as_ref().and_then(|m| m.get(&key).cloned())) {
        return found;
    }
    let resolved = resolve();
    MEMO.with(|m| {
        if let Some(m) = m.borrow_mut().as_mut() {
            m.insert(key, resolved.clone());
        }
    });
    resolved
}

/// Memoizes resolutions on this thread while it lives (one compile); the
/// memo, and the helpers' resolvers it holds, go when it is dropped.
pub struct ResolveMemo {
    outermost: bool,
}

impl ResolveMemo {
    pub fn enter() -> ResolveMemo {
        let outermost = MEMO.with(|m| {
            let mut m = m.borrow_mut();
            let fresh = m.is_none();
            if fresh {
                *m = Some(HashMap::new());
            }
            fresh
        });
        ResolveMemo { outermost }
    }
}

impl Drop for ResolveMemo {
    fn drop(&mut self) {
        if self.outermost {
            // (taken out first: dropping the values runs no code that
            // resolves, but the borrow ends before they go)
            let memo = MEMO.with(|m| m.borrow_mut().take());
            drop(memo);
        }
    }
}
