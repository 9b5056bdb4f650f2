"""`CompileBackend.Python`: a jit function run as plain Python.

`fn(*args, opts=o)` with `o.backend = parpy.CompileBackend.Python` checks
its arguments as a compiled call does, then calls `run(fn.py_func, args)`:
the undecorated function on the caller's own arrays, so `print`,
`breakpoint()` and pdb work inside it. parpy's builtins (`parpy.label`,
`parpy.operators.*`, `parpy.math.*`, `parpy.builtin.*`, `parpy.gpu`,
`parpy.types`) already have their jit meaning from plain Python; `run`
adds what plain Python lacks:

- calls to other jit functions (helpers) run their plain versions;
- `min(a, b)` and `max(a, b)` promote their operands like jit code does
  (Python's would return one operand unchanged, of its own type);
- NumPy's floating-point and overflow warnings are off: integers wrap and
  division by zero gives NumPy's value, silently, as compiled code does;
- a store of a NumPy value into an array argument that compiled code
  refuses (a float64 value into a float32 array: `_builtins.widens`) is
  the same `CompileTypeError`, not NumPy's silent conversion;
- shape symbols (`parpy.types.symbol()`) and type variables
  (`parpy.types.type_var()`) that the entry function's annotations bind
  read as their values (an int, a `parpy.types` element type) in the
  function and its helpers, as in compiled code.

The parallel specification is ignored: the loops run in order, which is
one of the orders a race-free program allows.
"""

from __future__ import annotations

import builtins
import sys
import types
from typing import Any, Callable, Dict, Sequence

import numpy as np

from ._builtins import python_extreme, store_error, widens


def _extreme(take_min: bool) -> Callable[..., Any]:
    py = builtins.min if take_min else builtins.max

    def f(*args: Any, **kwargs: Any) -> Any:
        if len(args) < 2 or kwargs:  # min(iterable), key=...: Python's own
            return py(*args, **kwargs)
        acc = args[0]
        for a in args[1:]:
            acc = python_extreme(take_min, acc, a)
        return acc

    f.__name__ = py.__name__
    f.__doc__ = f"`{py.__name__}` with the promotion of jit code (parpy Python mode)."
    return f


_OVERRIDES = {"min": _extreme(True), "max": _extreme(False)}


def _substitute(value: Any, memo: Dict[int, Any], bound: Dict[int, Any]) -> Any:
    if id(value) in bound:
        return bound[id(value)]
    py_func = getattr(value, "py_func", None)
    if py_func is not None and type(value).__name__ == "JitFunction":
        return plain(py_func, memo, bound)
    return value


def plain(
    f: Any, memo: Dict[int, Any] | None = None, bound: Dict[int, Any] | None = None
) -> Any:
    """`f` (a Python function or a jit function) as the function Python mode
    runs: the same code over a copy of its globals in which jit functions
    are their plain versions and `min`/`max` promote like jit code.
    Closure variables that hold jit functions are replaced the same way;
    `bound` maps the ids of symbols and type variables to their values."""
    memo = {} if memo is None else memo
    bound = {} if bound is None else bound
    f = getattr(f, "py_func", f)
    if id(f) in memo:
        return memo[id(f)]
    g = dict(f.__globals__)
    closure = None
    if f.__closure__:
        cells = []
        for c in f.__closure__:
            try:
                cells.append(types.CellType(c.cell_contents))
            except ValueError:  # an empty cell
                cells.append(c)
        closure = tuple(cells)
    clone = types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, closure)
    clone.__kwdefaults__ = f.__kwdefaults__
    clone.__qualname__ = f.__qualname__
    clone.__doc__ = f.__doc__
    memo[id(f)] = clone
    for name, value in list(g.items()):
        g[name] = _substitute(value, memo, bound)
    for name, value in _OVERRIDES.items():
        if name not in f.__globals__:
            g[name] = value
    if closure:
        for c in closure:
            try:
                c.cell_contents = _substitute(c.cell_contents, memo, bound)
            except ValueError:
                pass
    return clone


def _numpy_view(a: Any) -> Any:
    """A torch tensor in host memory as a NumPy view of its data (parpy's
    builtins are NumPy's: `np.max(t, axis=None)` of a tensor is torch's
    error), in dicts too; anything else as it is."""
    if isinstance(a, dict):
        return {k: _numpy_view(v) for k, v in a.items()}
    torch = sys.modules.get("torch")
    if (
        torch is not None
        and isinstance(a, torch.Tensor)
        and a.device.type == "cpu"
        and a.layout == torch.strided
    ):
        return a.detach().numpy()
    return a


class _Stores(np.ndarray):
    """An array argument in Python mode (a view of the caller's array): a
    store of a NumPy value that compiled code refuses (`_builtins.widens`:
    a float64 value into a float32 array, a float into an integer one) is
    the `CompileTypeError` compiled code gives, not NumPy's silent
    conversion, whether by assignment (`y[i] = v`, `y[:] = v`) or by an
    update in place (`y += x`, `y[0:2] *= x[0:2]`: the type NumPy computes
    the operation in is checked before the store, since NumPy's in-place
    operation on a view casts it silently). Python numbers (weak) convert
    as in compiled code. What NumPy computes from one is a plain array or
    scalar, as from the array itself; its views (slices, `x.T`) and copies
    check their stores too. It reads as a NumPy array: its type's name,
    `repr` and attribute errors are `ndarray`'s."""

    __slots__ = ()

    def __array_wrap__(self, arr: Any, context: Any = None, return_scalar: bool = False) -> Any:
        if arr is self:  # an update in place (`x += v`): the argument itself
            return self
        arr = arr.view(np.ndarray)
        return arr[()] if return_scalar else arr

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        args = [_plain(a) for a in inputs]
        if "where" in kwargs:  # (`np.sum(x, where=m)` of an argument `m`)
            kwargs["where"] = _plain(kwargs["where"])
        out = kwargs.pop("out", None)
        if out is None:
            return getattr(ufunc, method)(*args, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        if any(isinstance(o, _Stores) for o in outs):
            # the operation's own type first (NumPy would cast it into
            # `out` silently): compiled code refuses a narrowing store
            res = getattr(ufunc, method)(*args, **kwargs)
            for o, r in zip(outs, res if isinstance(res, tuple) else (res,)):
                if isinstance(o, _Stores):
                    _check_store(np.asarray(r).dtype, o.dtype)
        getattr(ufunc, method)(*args, out=tuple(_plain(o) for o in outs), **kwargs)
        return outs[0] if len(outs) == 1 else outs

    def __setitem__(self, idx: Any, value: Any) -> None:
        if isinstance(value, (np.ndarray, np.generic)):
            _check_store(value.dtype, self.dtype)
        super().__setitem__(idx, value)

    def __getattr__(self, name: str) -> Any:
        # (only for names ndarray lacks: NumPy's message, not this class's)
        raise AttributeError(f"'numpy.ndarray' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        try:
            super().__setattr__(name, value)
        except AttributeError as e:
            if type(self).__name__ not in str(e) or hasattr(np.ndarray, name):
                raise
            raise AttributeError(f"'numpy.ndarray' object has no attribute '{name}'") from None

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))


# (`type(x).__name__` of an argument in Python mode reads `ndarray`, as
# compiled code's arrays are NumPy's; `isinstance(x, np.ndarray)` holds)
_Stores.__name__ = _Stores.__qualname__ = "ndarray"


def _plain(a: Any) -> Any:
    return a.view(np.ndarray) if isinstance(a, _Stores) else a


def _check_store(src: Any, dst: Any) -> None:
    if not widens(src, dst):
        from ._native import CompileTypeError

        raise CompileTypeError(store_error(src, dst))


def _checked(a: Any) -> Any:
    """An array argument (in dicts too) as a store-checking view (`_Stores`)."""
    if isinstance(a, dict):
        return {k: _checked(v) for k, v in a.items()}
    if type(a) is np.ndarray:
        return a.view(_Stores)
    return a


def run(f: Any, args: Sequence[Any]) -> Any:
    """Runs `f` (a jit function or its `py_func`) as plain Python on `args`
    with the meaning of jit code (see the module docstring). torch tensors
    in host memory are passed as NumPy views of the same data."""
    from ._annotations import bindings

    args = [_checked(_numpy_view(a)) for a in args]
    py_f = getattr(f, "py_func", f)
    bound = bindings(py_f, args) if getattr(py_f, "__annotations__", None) else {}
    fn = plain(f, None, bound)
    # (`args` has one value per parameter, in order: those after `*` in
    # the `def` go by name)
    code = py_f.__code__
    n = code.co_argcount
    named = dict(zip(code.co_varnames[n : n + code.co_kwonlyargcount], args[n:]))
    with np.errstate(all="ignore"):
        return fn(*args[:n], **named)


def called_from_plain_jit() -> bool:
    """Whether the jit function being called without `opts=` is called from
    the undecorated body of a module-level jit function (`fn.py_func(...)`,
    or a helper run that way): then it runs undecorated too (the binding
    asks this, so the caller is the frame above)."""
    from ._native import JitFunction

    caller = sys._getframe(1)
    jit = caller.f_globals.get(caller.f_code.co_name)
    return isinstance(jit, JitFunction) and getattr(jit.py_func, "__code__", None) is caller.f_code
