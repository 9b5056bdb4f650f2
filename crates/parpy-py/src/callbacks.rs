//! `parpy.callback`: Python functions that generated host code calls
//! between kernels.
//!
//! The registry gives each callback object an id (the core's
//! `Resolved::Callback`); a compiled function keeps its call sites
//! ([`sites`]). On the Cpu backend the library's host code calls
//! [`trampoline`] through its `parpy_callback` global, with pointers into
//! the arrays; the call runs inside a [`with_frame`] that says which sites
//! it has and keeps the first Python exception. On the Cuda backend the
//! launch plan hands device views to [`call_device`], which copies them to
//! host memory around the call. Either way `parpy._callback.invoke` makes
//! the Python values (buffers over the memory, scalars) and calls.

use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use parpy_core::ir::{CallArg, Program, StmtKind, Type};
use parpy_core::ElemTy;
use parpy_runtime::cuda::plan::{CallbackValue, Device, Value};
use parpy_runtime::cuda::CudaError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyList, PyTuple};

static REGISTRY: Mutex<Vec<Py<PyAny>>> = Mutex::new(Vec::new());

/// The id of callback object `obj` (the same object keeps its id; the
/// registry keeps it alive).
pub fn register(obj: &Bound<'_, PyAny>) -> u64 {
    let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = r.iter().position(|o| o.is(obj)) {
        return i as u64;
    }
    r.push(obj.clone().unbind());
    (r.len() - 1) as u64
}

fn lookup(py: Python<'_>, id: u64) -> Option<Py<PyAny>> {
    let r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    r.get(id as usize).map(|o| o.clone_ref(py))
}

/// One argument of a call site, as the callback receives it.
#[derive(Clone, Debug)]
pub enum SiteArg {
    Array { elem: ElemTy, shape: Vec<i64> },
    Scalar(ElemTy),
}

/// One callback call of a compiled function.
#[derive(Clone, Debug)]
pub struct Site {
    pub id: u64,
    pub name: String,
    pub args: Vec<SiteArg>,
}

/// The call sites of a compiled function, by site number.
pub type Sites = Arc<Vec<Option<Site>>>;

/// The callback calls of `p`'s host code (`None` when there are none).
pub fn sites(p: &Program) -> Option<Sites> {
    let mut out: Vec<Option<Site>> = vec![];
    parpy_core::ir::visit::walk_stmts(&p.host.body, &mut |s| {
        let StmtKind::Callback(c) = &s.kind else {
            return;
        };
        let args = c
            .args
            .iter()
            .map(|a| match a {
                CallArg::Array { array, prefix } => match &p.host.var(*array).ty {
                    Type::Array { elem, shape } => SiteArg::Array {
                        elem: *elem,
                        shape: shape[prefix.len().min(shape.len())..].to_vec(),
                    },
                    _ => SiteArg::Scalar(ElemTy::I64),
                },
                CallArg::Scalar(e) => SiteArg::Scalar(e.ty.elem().unwrap_or(ElemTy::I64)),
            })
            .collect();
        if out.len() <= c.site {
            out.resize(c.site + 1, None);
        }
        out[c.site] = Some(Site {
            id: c.id,
            name: c.name.clone(),
            args,
        });
    });
    (!out.is_empty()).then(|| Arc::new(out))
}

/// `parpy._callback.invoke(callback, specs)`.
fn invoke(py: Python<'_>, site: &Site, specs: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
    let Some(obj) = lookup(py, site.id) else {
        return Err(crate::errors::internal_error(&format!(
            "the callback `{}` is not registered",
            site.name
        )));
    };
    py.import("parpy._callback")?
        .getattr("invoke")?
        .call1((obj, PyList::new(py, specs)?))?;
    Ok(())
}

fn scalar_spec<'py>(py: Python<'py>, v: Value, elem: ElemTy) -> PyResult<Bound<'py, PyAny>> {
    let value = match (v, elem) {
        (_, ElemTy::Bool) => v_truthy(v).into_pyobject(py)?.to_owned().into_any(),
        (Value::Float(f), _) => f.into_pyobject(py)?.into_any(),
        (Value::Int(i), ElemTy::U64) => (i as u64).into_pyobject(py)?.into_any(),
        (Value::Int(i), _) => i.into_pyobject(py)?.into_any(),
        (Value::Bool(b), _) => (b as i64).into_pyobject(py)?.into_any(),
        (Value::Ptr(p), _) => p.into_pyobject(py)?.into_any(),
    };
    Ok(PyTuple::new(
        py,
        [
            "scalar".into_pyobject(py)?.into_any(),
            value,
            elem.numpy_name().into_pyobject(py)?.into_any(),
        ],
    )?
    .into_any())
}

fn v_truthy(v: Value) -> bool {
    match v {
        Value::Int(i) => i != 0,
        Value::Float(f) => f != 0.0,
        Value::Bool(b) => b,
        Value::Ptr(p) => p != 0,
    }
}

fn array_spec<'py>(
    py: Python<'py>,
    data: Bound<'py, PyAny>,
    elem: ElemTy,
    shape: &[i64],
) -> PyResult<Bound<'py, PyAny>> {
    Ok(PyTuple::new(
        py,
        [
            "array".into_pyobject(py)?.into_any(),
            data,
            PyTuple::new(py, shape)?.into_any(),
            elem.numpy_name().into_pyobject(py)?.into_any(),
        ],
    )?
    .into_any())
}

/// A call of the Cpu backend's library in progress on this thread.
struct Frame {
    sites: Sites,
    error: Option<PyErr>,
}

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` (a call of a library whose host code may call the callbacks
/// `sites`); returns its result and the first exception a callback raised.
pub fn with_frame<R>(sites: &Sites, f: impl FnOnce() -> R) -> (R, Option<PyErr>) {
    FRAMES.with(|fr| {
        fr.borrow_mut().push(Frame {
            sites: sites.clone(),
            error: None,
        })
    });
    let r = f();
    let frame = FRAMES.with(|fr| fr.borrow_mut().pop());
    (r, frame.and_then(|f| f.error))
}

/// What the Cpu library calls (`parpy_callback`): site `site` with the
/// entry-ABI arguments `args`. Returns 0, or 1 when the callback raised
/// (the exception waits in the frame) or no call is in progress.
///
/// # Safety
/// `args` holds one valid pointer per argument of the site (generated code).
pub unsafe extern "C" fn trampoline(site: i64, args: *mut *mut c_void) -> i32 {
    let run = || -> i32 {
        let Some((depth, sites)) = FRAMES.with(|fr| {
            let fr = fr.borrow();
            Some((fr.len().checked_sub(1)?, fr.last()?.sites.clone()))
        }) else {
            return 1;
        };
        let Some(Some(s)) = usize::try_from(site).ok().and_then(|i| sites.get(i)) else {
            return 1;
        };
        Python::attach(|py| {
            // SAFETY: see the function's contract.
            let r = unsafe { call_cpu(py, s, args) };
            match r {
                Ok(()) => 0,
                Err(e) => {
                    FRAMES.with(|fr| {
                        if let Some(f) = fr.borrow_mut().get_mut(depth) {
                            f.error.get_or_insert(e);
                        }
                    });
                    1
                }
            }
        })
    };
    std::panic::catch_unwind(run).unwrap_or(1)
}

/// # Safety
/// As [`trampoline`].
unsafe fn call_cpu(py: Python<'_>, s: &Site, args: *mut *mut c_void) -> PyResult<()> {
    let mut specs = Vec::with_capacity(s.args.len());
    for (i, a) in s.args.iter().enumerate() {
        // SAFETY: one pointer per argument.
        let p = unsafe { *args.add(i) };
        specs.push(match a {
            SiteArg::Array { elem, shape } => {
                array_spec(py, (p as usize).into_pyobject(py)?.into_any(), *elem, shape)?
            }
            SiteArg::Scalar(elem) => {
                // SAFETY: an 8-byte slot (entry ABI).
                let v = if elem.is_float() {
                    Value::Float(unsafe { *(p as *const f64) })
                } else {
                    Value::Int(unsafe { *(p as *const i64) })
                };
                scalar_spec(py, v, *elem)?
            }
        });
    }
    invoke(py, s, specs)
}

/// The Cuda launch plan's callback: the device views `vals` are copied to
/// host buffers, the callback runs on them, and they are copied back.
/// Views whose memory overlaps (`cb(x, x[1])`, `cb(x, x)`) share one host
/// copy of the memory they span (each a `memoryview` of it), so a write
/// through one is seen through the other and the copy back stores it once,
/// as on Cpu (`parpy._callback.invoke`).
/// A Python exception is kept in `error` (the plan stops).
pub fn call_device(
    py: Python<'_>,
    sites: &Sites,
    site: usize,
    vals: &[CallbackValue],
    dev: &dyn Device,
    error: &RefCell<Option<PyErr>>,
) -> Result<(), CudaError> {
    let Some(Some(s)) = sites.get(site) else {
        return Err(CudaError::Plan(format!("no callback site {site}")));
    };
    if s.args.len() != vals.len()
        || s.args.iter().zip(vals).any(|(a, v)| {
            !matches!(
                (a, v),
                (SiteArg::Array { .. }, CallbackValue::Array { .. })
                    | (SiteArg::Scalar(_), CallbackValue::Scalar(_))
            )
        })
    {
        return Err(CudaError::Plan(format!(
            "the arguments of the callback `{}` do not match its site",
            s.name
        )));
    }
    let arrays: Vec<(usize, u64, usize)> = vals
        .iter()
        .enumerate()
        .filter_map(|(i, v)| match v {
            CallbackValue::Array { ptr, bytes } => Some((i, *ptr, *bytes)),
            CallbackValue::Scalar(_) => None,
        })
        .collect();
    let groups = overlapping_groups(&arrays);
    let mut copies: Vec<(u64, Bound<'_, PyByteArray>)> = vec![];
    let r = (|| -> PyResult<Result<(), CudaError>> {
        // (the host copy of each group, and each array's group and offset)
        let mut place: Vec<Option<(usize, usize)>> = vec![None; vals.len()];
        for (g, (start, len, members)) in groups.iter().enumerate() {
            let mut failed = None;
            let ba = PyByteArray::new_with(py, *len, |buf| {
                if let Err(e) = dev.read(*start, buf) {
                    failed = Some(e);
                }
                Ok(())
            })?;
            if let Some(e) = failed {
                return Ok(Err(e));
            }
            copies.push((*start, ba));
            for &(i, ptr, _) in members {
                place[i] = Some((g, (ptr - start) as usize));
            }
        }
        let mut specs = Vec::with_capacity(vals.len());
        for (i, (a, v)) in s.args.iter().zip(vals).enumerate() {
            match (a, v, place[i]) {
                (
                    SiteArg::Array { elem, shape },
                    CallbackValue::Array { bytes, .. },
                    Some((g, off)),
                ) => {
                    let view = pyo3::types::PyMemoryView::from(copies[g].1.as_any())?;
                    let slice =
                        pyo3::types::PySlice::new(py, off as isize, (off + bytes) as isize, 1);
                    let data = view.get_item(slice)?;
                    specs.push(array_spec(py, data, *elem, shape)?);
                }
                (SiteArg::Scalar(elem), CallbackValue::Scalar(v), _) => {
                    specs.push(scalar_spec(py, *v, *elem)?)
                }
                _ => {
                    return Err(crate::errors::internal_error(
                        "a callback array without a copy",
                    ))
                }
            }
        }
        invoke(py, s, specs)?;
        for (ptr, ba) in &copies {
            // SAFETY: no Python code runs while the bytes are borrowed.
            if let Err(e) = dev.write(*ptr, unsafe { ba.as_bytes() }) {
                return Ok(Err(e));
            }
        }
        Ok(Ok(()))
    })();
    match r {
        Ok(r) => r,
        Err(e) => {
            error.borrow_mut().get_or_insert(e);
            Err(CudaError::Plan(format!("the callback `{}` raised", s.name)))
        }
    }
}

/// An array argument of a callback: `(index, address, bytes)`.
type ArgMemory = (usize, u64, usize);

/// The arrays in groups whose memory overlaps: `(start, length, members)`
/// of each, by address (an empty array is a group of its own).
type Group = (u64, usize, Vec<ArgMemory>);

/// The arrays `arrays` in groups whose memory overlaps (see [`Group`]).
fn overlapping_groups(arrays: &[(usize, u64, usize)]) -> Vec<Group> {
    let mut sorted: Vec<ArgMemory> = arrays.iter().copied().filter(|a| a.2 > 0).collect();
    sorted.sort_by_key(|&(_, ptr, bytes)| (ptr, std::cmp::Reverse(bytes)));
    let mut groups: Vec<Group> = vec![];
    for a in sorted {
        let (_, ptr, bytes) = a;
        match groups.last_mut() {
            Some((start, len, members)) if ptr < *start + *len as u64 => {
                let end = (*start + *len as u64).max(ptr + bytes as u64);
                *len = (end - *start) as usize;
                members.push(a);
            }
            _ => groups.push((ptr, bytes, vec![a])),
        }
    }
    groups.extend(
        arrays
            .iter()
            .filter(|a| a.2 == 0)
            .map(|&a| (a.1, 0, vec![a])),
    );
    groups
}
