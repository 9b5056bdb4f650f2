//! Name resolution over a Python function's globals, closure and builtins.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use parpy_core::syntax::FunctionDef;
use parpy_core::{Builtin, ElemTy, Resolved, Resolver, ScalarValue};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyModule, PyString, PyTuple, PyType};

use crate::jit::JitFunction;

pub struct PyResolver {
    globals: Py<PyDict>,
    /// Free variable names with their cells.
    closure: Vec<(String, Py<PyAny>)>,
}

impl PyResolver {
    /// Visits the Python objects held (for `JitFunction.__traverse__`).
    pub fn traverse(&self, visit: &pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.globals)?;
        for (_, cell) in &self.closure {
            visit.call(cell)?;
        }
        Ok(())
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
        Ok(PyResolver { globals, closure })
    }

    fn root<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
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

    fn resolve_py(&self, py: Python<'_>, path: &[&str]) -> PyResult<Resolved> {
        let Some((first, rest)) = path.split_first() else {
            return Ok(Resolved::NotFound);
        };
        let Some(mut obj) = self.root(py, first)? else {
            return Ok(Resolved::NotFound);
        };
        for attr in rest {
            match obj.getattr(*attr) {
                Ok(o) => obj = o,
                Err(_) => return Ok(Resolved::NotFound),
            }
        }
        classify(&obj)
    }
}

impl Resolver for PyResolver {
    fn resolve(&self, path: &[&str]) -> Resolved {
        Python::attach(|py| {
            self.resolve_py(py, path).unwrap_or_else(|e| {
                Resolved::Unsupported(format!("an object that failed to load ({e})"))
            })
        })
    }
}

fn str_attr(obj: &Bound<'_, PyAny>, name: &str) -> Option<String> {
    let v = obj.getattr(name).ok()?;
    let s = v.cast::<PyString>().ok()?;
    s.to_cow().ok().map(|c| c.into_owned())
}

/// What a Python object denotes inside jit code.
pub fn classify(obj: &Bound<'_, PyAny>) -> PyResult<Resolved> {
    let py = obj.py();
    if let Ok(j) = obj.cast::<JitFunction>() {
        let j = j.get();
        return Ok(Resolved::Function {
            def: j.def.clone(),
            globals: j.resolver.clone(),
        });
    }
    // parpy's own objects first: dtypes and builtins carry a marker.
    if let Some(name) = str_attr(obj, "__parpy_dtype__") {
        return Ok(match ElemTy::from_numpy_name(&name) {
            Some(t) => Resolved::Dtype(t),
            None => Resolved::Unsupported(format!("the element type {name}")),
        });
    }
    if let Some(name) = str_attr(obj, "__parpy_builtin__") {
        return Ok(match Builtin::from_name(&name) {
            Some(b) => Resolved::Builtin(b),
            None => Resolved::Unsupported(format!(
                "parpy.{name} (not supported inside jit code by this version)"
            )),
        });
    }
    let builtins = py.import("builtins")?;
    for name in ["range", "min", "max", "abs", "float", "int", "len"] {
        if obj.is(&builtins.getattr(name)?) {
            if let Some(b) = Builtin::from_name(name) {
                return Ok(Resolved::Builtin(b));
            }
        }
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Resolved::Const(ScalarValue::Bool(b.is_true())));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(match obj.extract::<i64>() {
            Ok(v) => Resolved::Const(ScalarValue::Int(v)),
            Err(_) => Resolved::Unsupported("an int that does not fit in 64 bits".into()),
        });
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Resolved::Const(ScalarValue::Float(f.value())));
    }
    // NumPy: dtype classes, dtype objects, scalars.
    if let Ok(np) = py.import("sys")?.getattr("modules")?.get_item("numpy") {
        let generic = np.getattr("generic")?;
        let dtype_cls = np.getattr("dtype")?;
        let is_generic_cls = obj
            .cast::<PyType>()
            .map(|t| t.is_subclass(&generic).unwrap_or(false))
            .unwrap_or(false);
        if is_generic_cls || obj.is_instance(&dtype_cls)? {
            let dt = dtype_cls.call1((obj,))?;
            let name: String = dt.getattr("name")?.extract()?;
            return Ok(match ElemTy::from_numpy_name(&name) {
                Some(t) => Resolved::Dtype(t),
                None => Resolved::Unsupported(format!("the dtype {name}")),
            });
        }
        if obj.is_instance(&generic)? {
            let item = obj.call_method0("item")?;
            return classify(&item);
        }
        if obj.is_instance(&np.getattr("ndarray")?)? {
            return Ok(Resolved::Unsupported(
                "a NumPy array (global arrays cannot be used in jit code; pass it as an argument)"
                    .into(),
            ));
        }
    }
    if obj.is_instance_of::<PyModule>() || obj.hasattr("__parpy_namespace__")? {
        return Ok(Resolved::Namespace);
    }
    let inspect = py.import("inspect")?;
    if inspect.call_method1("isfunction", (obj,))?.is_truthy()? {
        let name = str_attr(obj, "__name__").unwrap_or_default();
        return Ok(match plain_function(obj) {
            Ok((def, globals)) => Resolved::Function { def, globals },
            Err(e) => Resolved::Unsupported(format!(
                "function '{name}' (its source cannot be compiled: {})",
                e.value(py)
            )),
        });
    }
    if inspect.call_method1("isbuiltin", (obj,))?.is_truthy()? {
        let name = str_attr(obj, "__name__").unwrap_or_default();
        return Ok(Resolved::Unsupported(format!("function '{name}'")));
    }
    if let Ok(t) = obj.cast::<PyType>() {
        return Ok(Resolved::Unsupported(format!(
            "the class '{}'",
            t.name().map(|n| n.to_string()).unwrap_or_default()
        )));
    }
    let tn = crate::args::type_name(obj);
    let desc = match tn.as_str() {
        "list" => "a list".to_string(),
        "dict" => "a dict".to_string(),
        "tuple" => "a tuple".to_string(),
        "str" => "a str".to_string(),
        "set" => "a set".to_string(),
        "NoneType" => "None".to_string(),
        _ => format!("an object of type '{tn}'"),
    };
    Ok(Resolved::Unsupported(desc))
}

/// An undecorated Python function called from jit code, parsed once per
/// function object (kept alive here, so its address stays its identity):
/// the same object always gives the same `FunctionDef`, which is what sema
/// compares to share specializations and to detect recursion (a plain
/// function calling itself used to be parsed anew at every call, without
/// end).
fn plain_function(obj: &Bound<'_, PyAny>) -> PyResult<(Arc<FunctionDef>, Arc<dyn Resolver>)> {
    type Parsed = (Py<PyAny>, Arc<FunctionDef>, Arc<dyn Resolver>);
    static PARSED: OnceLock<Mutex<HashMap<usize, Parsed>>> = OnceLock::new();
    let table = PARSED.get_or_init(|| Mutex::new(HashMap::new()));
    let key = obj.as_ptr() as usize;
    if let Some((_, def, globals)) = table.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok((def.clone(), globals.clone()));
    }
    let (def, resolver) = JitFunction::parse_py_function(obj)?;
    let globals: Arc<dyn Resolver> = Arc::new(resolver);
    table
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, (obj.clone().unbind(), def.clone(), globals.clone()));
    Ok((def, globals))
}
