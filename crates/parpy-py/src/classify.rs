//! What a Python object denotes inside jit code (`Resolved`): parpy's
//! dtypes and builtins, constants, NumPy dtypes, other jit or plain
//! functions, namespaces; the `Resolver` the core asks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use parpy_core::resolve::TupleItem;
use parpy_core::syntax::FunctionDef;
use parpy_core::{
    math_module_builtin, numpy_allocates, numpy_builtin, Builtin, ElemTy, PermuteFn, Resolved,
    Resolver, ScalarValue,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyModule, PyString, PyTuple, PyType};

use crate::args::type_name;
use crate::jit::JitFunction;
use crate::resolver::{parse_function, AnnBinding, PyResolver};

impl Resolver for PyResolver {
    fn resolve(&self, path: &[&str]) -> Resolved {
        crate::resolver::memoized(self, path, || {
            Python::attach(|py| {
                resolve_py(self, py, path).unwrap_or_else(|e| {
                    crate::errors::hold_if_stop(py, &e);
                    Resolved::Unsupported(format!("an object that failed to load ({e})"))
                })
            })
        })
    }
}

fn resolve_py(r: &PyResolver, py: Python<'_>, path: &[&str]) -> PyResult<Resolved> {
    match r.lookup(py, path)? {
        Some(obj)
            if path.first() == Some(&parpy_core::resolve::ANNOTATION)
                && str_attr(&obj, "__parpy_annotation__")?.as_deref() == Some("buffer") =>
        {
            buffer_annotation(&obj)
        }
        Some(obj) => {
            let resolved = classify(&obj)?;
            // (a name's number or helper is in the compiled code: watched,
            // so a name re-bound later makes it stale; `np.pi` and other
            // attribute paths are read once)
            if let [name] = path {
                match &resolved {
                    Resolved::Const(_) | Resolved::TypedConst(..) | Resolved::ConstTuple(_) => {
                        r.watch(name, &obj, None)
                    }
                    Resolved::Function { .. } => {
                        // (a plain helper's resolver too: the names its
                        // body reads, and its own helpers', are in the code)
                        let helper = match obj.cast::<JitFunction>() {
                            Ok(j) => Some(j.get().resolver.clone()),
                            Err(_) => parsed_plain(&obj).map(|(_, r)| r),
                        };
                        r.watch(name, &obj, helper)
                    }
                    _ => {}
                }
            }
            Ok(resolved)
        }
        None => Ok(Resolved::NotFound),
    }
}

/// A parameter's `parpy.types.buffer(T, [dims])` annotation: its element
/// type (or type variable) and dimensions (ints, shape symbols by identity).
fn buffer_annotation(obj: &Bound<'_, PyAny>) -> PyResult<Resolved> {
    use parpy_core::{AnnElem, ExtDim};
    let elem = match classify(&obj.getattr("elem")?)? {
        Resolved::Dtype(t) => AnnElem::Dtype(t),
        Resolved::TypeVar(id) => AnnElem::TypeVar(id),
        _ => return Ok(Resolved::NotFound),
    };
    let mut dims = vec![];
    for d in obj.getattr("shape")?.try_iter()? {
        let d = d?;
        dims.push(
            if str_attr(&d, "__parpy_annotation__")?.as_deref() == Some("symbol") {
                ExtDim::Symbol(d.as_ptr() as usize as u64)
            } else {
                ExtDim::Fixed(d.extract()?)
            },
        );
    }
    Ok(Resolved::Buffer { elem, dims })
}

/// The string attribute `name` of `obj`, or `None` where it has none or
/// it is no string; another exception its `__getattr__` raised is the
/// caller's (a Ctrl-C is not "no attribute").
fn str_attr(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<String>> {
    let Some(v) = crate::resolver::attr(obj, name)? else {
        return Ok(None);
    };
    let Ok(s) = v.cast::<PyString>() else {
        return Ok(None);
    };
    Ok(Some(s.to_cow()?.into_owned()))
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
    if let Ok(b) = obj.extract::<crate::options::CompileBackend>() {
        return Ok(Resolved::Backend(b.core()));
    }
    // (first: the checks below ask a module for attributes it lacks, and
    // NumPy's module-level `__getattr__` answers each in Python)
    if obj.is_instance_of::<PyModule>() {
        return Ok(Resolved::Namespace);
    }
    // parpy's own objects first: dtypes and builtins carry a marker.
    if let Some(name) = str_attr(obj, "__parpy_dtype__")? {
        return Ok(match ElemTy::from_numpy_name(&name) {
            Some(t) => Resolved::Dtype(t),
            None => Resolved::Unsupported(format!("the element type {name}")),
        });
    }
    if let Some(name) = str_attr(obj, "__parpy_builtin__")? {
        return Ok(match Builtin::from_name(&name) {
            Some(b) => Resolved::Builtin(b),
            None => Resolved::Unsupported(format!(
                "parpy.{name} (not supported inside jit code by this version)"
            )),
        });
    }
    if let Some(decls) = crate::resolver::attr(obj, "__parpy_external__")? {
        let name = str_attr(obj, "__name__")?.unwrap_or_else(|| "external".into());
        return external_decls(&name, &decls);
    }
    if obj.hasattr("__parpy_callback__")? {
        let name = str_attr(obj, "__name__")?.unwrap_or_else(|| "callback".into());
        return Ok(Resolved::Callback {
            id: crate::callbacks::register(obj),
            name,
        });
    }
    match str_attr(obj, "__parpy_annotation__")?.as_deref() {
        Some("symbol") => {
            return Ok(match crate::resolver::symbol_value(obj.as_ptr() as usize) {
                Some(AnnBinding::Int(v)) => Resolved::Const(ScalarValue::Int(v)),
                _ => Resolved::Unsupported(
                    "a shape symbol (parpy.types.symbol()) that no parameter annotation of \
                     the called function binds"
                        .into(),
                ),
            });
        }
        Some("type_var") => {
            return Ok(match crate::resolver::symbol_value(obj.as_ptr() as usize) {
                Some(AnnBinding::Dtype(t)) => Resolved::Dtype(t),
                _ => Resolved::TypeVar(obj.as_ptr() as usize as u64),
            });
        }
        _ => {}
    }
    let builtins = py.import("builtins")?;
    for &name in parpy_core::syntax::ast::PYTHON_BUILTINS {
        if obj.is(&builtins.getattr(name)?) {
            if let Some(b) = Builtin::from_name(name) {
                return Ok(Resolved::Builtin(b));
            }
        }
    }
    if obj.is_none() {
        return Ok(Resolved::NoneValue);
    }
    // a tuple of numbers (or of tuples of them): its literal (a list may
    // change: not one)
    if let Ok(t) = obj.cast_exact::<PyTuple>() {
        let mut items = vec![];
        for item in t.iter() {
            match classify(&item)? {
                Resolved::Const(v) => items.push(TupleItem::Number(v)),
                Resolved::ConstTuple(t) => items.push(TupleItem::Tuple(t)),
                _ => {
                    return Ok(Resolved::Unsupported(
                        "a tuple of other things than Python numbers and tuples of them".into(),
                    ))
                }
            }
        }
        return Ok(Resolved::ConstTuple(items));
    }
    if obj.is_instance_of::<PyList>() {
        return Ok(Resolved::Unsupported(
            "a list (a module-level list may change between calls; make it a tuple)".into(),
        ));
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
    // (exactly a float: `np.float64` is a subclass, a NumPy scalar below)
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
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
            // (a value of its type, as NumPy computes with it)
            let name: String = obj.getattr("dtype")?.getattr("name")?.extract()?;
            let item = obj.call_method0("item")?;
            // a uint64 of 2**63 or more: its bits (sema reads it as
            // `np.uint64(<its literal>)`)
            if name == "uint64" {
                if let (Err(_), Ok(u)) = (item.extract::<i64>(), item.extract::<u64>()) {
                    return Ok(Resolved::TypedConst(
                        ScalarValue::Int(u as i64),
                        ElemTy::U64,
                    ));
                }
            }
            let item = classify(&item)?;
            return Ok(match (ElemTy::from_numpy_name(&name), item) {
                (Some(t), Resolved::Const(v)) => Resolved::TypedConst(v, t),
                _ => Resolved::Unsupported(format!("a NumPy scalar of type {name}")),
            });
        }
        if let Some(r) = numpy_function(&np, obj)? {
            return Ok(r);
        }
        if obj.is_instance(&np.getattr("ndarray")?)? {
            return Ok(Resolved::Unsupported(
                "a NumPy array (global arrays cannot be used in jit code; pass it as an argument)"
                    .into(),
            ));
        }
    }
    if obj.hasattr("__parpy_namespace__")? {
        return Ok(Resolved::Namespace);
    }
    if let Some(r) = math_function(obj)? {
        return Ok(r);
    }
    let inspect = py.import("inspect")?;
    if inspect.call_method1("isfunction", (obj,))?.is_truthy()? {
        let name = str_attr(obj, "__name__")?.unwrap_or_default();
        // a lambda bound to a module-level name (`sq = lambda v: v * v`):
        // its source is the line around it, no `def` to compile (a lambda
        // inside the jit function is expanded where it is called)
        let code_name = match crate::resolver::attr(obj, "__code__")? {
            Some(c) => str_attr(&c, "co_name")?,
            None => None,
        };
        if code_name.as_deref() == Some("<lambda>") {
            return Ok(Resolved::Unsupported(
                "a lambda, which parpy cannot compile as a helper: define it with `def` \
                 (`def f(v): return v * v`), or write the lambda inside the jit function"
                    .into(),
            ));
        }
        return Ok(match plain_function(obj) {
            Ok((def, globals)) => Resolved::Function { def, globals },
            Err(e) => Resolved::Unsupported(format!(
                "function '{name}' (its source cannot be compiled: {})",
                e.value(py)
            )),
        });
    }
    if inspect.call_method1("isbuiltin", (obj,))?.is_truthy()? {
        let name = str_attr(obj, "__name__")?.unwrap_or_default();
        return Ok(Resolved::Unsupported(format!("function '{name}'")));
    }
    if let Ok(t) = obj.cast::<PyType>() {
        return Ok(Resolved::Unsupported(format!(
            "the class '{}'",
            t.name().map(|n| n.to_string()).unwrap_or_default()
        )));
    }
    let tn = type_name(obj);
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
    if let Some((def, globals)) = parsed_plain(obj) {
        return Ok((def, globals));
    }
    let (def, resolver) = parse_function(obj)?;
    let globals = Arc::new(resolver);
    plain_table()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(
            obj.as_ptr() as usize,
            (obj.clone().unbind(), def.clone(), globals.clone()),
        );
    Ok((def, globals))
}

/// The plain functions parsed so far, by address (each object kept alive).
type ParsedTable = Mutex<HashMap<usize, (Py<PyAny>, Arc<FunctionDef>, Arc<PyResolver>)>>;

fn plain_table() -> &'static ParsedTable {
    static PARSED: OnceLock<ParsedTable> = OnceLock::new();
    PARSED.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A plain function's parse and resolver, if `plain_function` made them.
fn parsed_plain(obj: &Bound<'_, PyAny>) -> Option<(Arc<FunctionDef>, Arc<PyResolver>)> {
    let table = plain_table().lock().unwrap_or_else(|e| e.into_inner());
    let (_, def, globals) = table.get(&(obj.as_ptr() as usize))?;
    Some((def.clone(), globals.clone()))
}

/// The name under which `module` holds exactly `obj` (`np.abs` is
/// `absolute`), if it does.
fn member_name(module: &Bound<'_, PyAny>, obj: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let Some(name) = str_attr(obj, "__name__")? else {
        return Ok(None);
    };
    Ok(match crate::resolver::attr(module, &name)? {
        Some(o) if o.is(obj) => Some(name),
        _ => None,
    })
}

/// A NumPy function (`np.sqrt`, `np.sum`, `np.zeros`) inside jit code.
fn numpy_function(np: &Bound<'_, PyAny>, obj: &Bound<'_, PyAny>) -> PyResult<Option<Resolved>> {
    let name = match (member_name(np, obj)?, ufunc_method(np, obj)?) {
        (Some(name), _) | (None, Some(name)) => name,
        (None, None) => match np.getattr("linalg") {
            Ok(linalg) => match member_name(&linalg, obj)? {
                Some(name) => format!("linalg.{name}"),
                None => return Ok(None),
            },
            Err(_) => return Ok(None),
        },
    };
    Ok(Some(if let Some(b) = numpy_builtin(&name) {
        Resolved::NumPy(b)
    } else if let Some(f) = PermuteFn::from_name(&name) {
        Resolved::Permute(f)
    } else if numpy_allocates(&name) {
        Resolved::Allocates(format!("numpy.{name}"))
    } else {
        Resolved::Unsupported(format!(
            "numpy.{name}, which has no parpy equivalent inside jit code"
        ))
    }))
}

/// `ufunc.method` for a method of one of NumPy's ufuncs (`np.add.reduce`
/// is `add.reduce`).
fn ufunc_method(np: &Bound<'_, PyAny>, obj: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    let Some(ufunc) = crate::resolver::attr(obj, "__self__")? else {
        return Ok(None);
    };
    if !ufunc.is_instance(&np.getattr("ufunc")?)? {
        return Ok(None);
    }
    let (Some(u), Some(m)) = (member_name(np, &ufunc)?, str_attr(obj, "__name__")?) else {
        return Ok(None);
    };
    Ok(Some(format!("{u}.{m}")))
}

/// A function of Python's `math` module (`math.sqrt`) inside jit code.
fn math_function(obj: &Bound<'_, PyAny>) -> PyResult<Option<Resolved>> {
    let math = obj.py().import("math")?;
    let Some(name) = member_name(math.as_any(), obj)? else {
        return Ok(None);
    };
    Ok(Some(match math_module_builtin(&name) {
        Some(b) => Resolved::Builtin(b),
        None => Resolved::Unsupported(format!(
            "math.{name}, which has no parpy equivalent inside jit code"
        )),
    }))
}

/// `parpy.external`'s declarations (`parpy._external.ExternalDecl` per
/// backend) as the core's; a malformed one is `Unsupported`.
fn external_decls(name: &str, decls: &Bound<'_, PyAny>) -> PyResult<Resolved> {
    use parpy_core::{ExtDecl, ExtDim, ExtParam, ExtTarget};
    let elem = |s: String| {
        ElemTy::from_numpy_name(&s)
            .ok_or_else(|| pyo3::exceptions::PyTypeError::new_err(format!("dtype {s}")))
    };
    let mut out = vec![];
    for (b, d) in decls.cast::<pyo3::types::PyDict>()?.iter() {
        let Some(backend) = b.extract::<crate::options::CompileBackend>()?.core() else {
            continue;
        };
        let mut params = vec![];
        for p in d.getattr("params")?.try_iter()? {
            let (pname, spec): (String, Bound<'_, PyAny>) = p?.extract()?;
            let kind: String = spec.get_item(0)?.extract()?;
            let e = elem(spec.get_item(1)?.extract()?)?;
            let param = if kind == "array" {
                let mut dims = vec![];
                for dim in spec.get_item(2)?.try_iter()? {
                    let dim = dim?;
                    dims.push(match dim.extract::<i64>() {
                        Ok(n) => ExtDim::Fixed(n),
                        Err(_) => ExtDim::Symbol(dim.get_item(1)?.extract()?),
                    });
                }
                ExtParam::Array { elem: e, dims }
            } else {
                ExtParam::Scalar(e)
            };
            params.push((pname, param));
        }
        let ret: Option<String> = d.getattr("ret")?.extract()?;
        let target: String = d.getattr("target")?.extract()?;
        out.push((
            backend,
            ExtDecl {
                name: d.getattr("name")?.extract()?,
                target: if target == "host" {
                    ExtTarget::Host
                } else {
                    ExtTarget::Device
                },
                header: d.getattr("header")?.extract()?,
                params,
                ret: ret.map(elem).transpose()?,
                threads: d.getattr("threads")?.extract()?,
            },
        ));
    }
    Ok(Resolved::External {
        name: name.to_string(),
        decls: out,
    })
}
