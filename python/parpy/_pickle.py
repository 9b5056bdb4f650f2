"""Pickling of parpy objects, so that jit functions and options can be sent
to other processes (Dask or Ray workers, multiprocessing pools).

- `CompileOptions`, `LoopPar` and `CompileBackend` pickle by value.
- A `JitFunction` pickles by reference (its module and qualified name, like
  a plain function) together with a fallback: its source text, where it was
  defined (file and first line, so diagnostics keep pointing at the user's
  file) and the global names it uses. A process that can import the module
  and finds the same jit function there uses it; otherwise (a function of
  `__main__` or of a module the worker cannot import, or one defined inside
  another function) the function is rebuilt from the source.

Importing this module registers the reducers with `copyreg`, which `pickle`
and `cloudpickle` (Dask's serializer) both consult.
"""

from __future__ import annotations

import ast
import copyreg
import importlib
import inspect
import linecache
import textwrap
import types
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from . import _native
from ._native import CompileBackend, CompileOptions, JitFunction, LoopPar

# --- options -------------------------------------------------------------


def _make_backend(name: str) -> CompileBackend:
    return getattr(CompileBackend, name)


def _reduce_backend(b: CompileBackend) -> Tuple[Callable[..., Any], Tuple[Any, ...]]:
    return _make_backend, (repr(b).rsplit(".", 1)[-1],)


def _make_loop_par(threads: Optional[int], tpb: Optional[int], reduction: bool) -> LoopPar:
    p = _native.reduce_marker(threads) if reduction else _native.threads(threads)
    return p.tpb(tpb) if tpb is not None else p


def _reduce_loop_par(p: LoopPar) -> Tuple[Callable[..., Any], Tuple[Any, ...]]:
    return _make_loop_par, (p.threads, p.threads_per_block, p.is_reduction)


def _make_options(fields: Dict[str, Any]) -> CompileOptions:
    return CompileOptions(**fields)


def _reduce_options(o: CompileOptions) -> Tuple[Callable[..., Any], Tuple[Any, ...]]:
    fields = {}
    for name in dir(o):
        v = getattr(o, name)
        if name == "parallelize":  # (plain copies of the read-only views)
            v = dict(v)
        elif isinstance(v, list):
            v = list(v)
        fields[name] = v
    return _make_options, (fields,)


# --- jit functions --------------------------------------------------------

_SIMPLE = (int, float, complex, bool, str, bytes, type(None), np.generic, np.dtype)


def _code_names(code: types.CodeType) -> set:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


class _ModuleRef:
    """A module in the captured globals, re-imported by name on load."""

    def __init__(self, name: str) -> None:
        self.name = name


def _capture(value: Any) -> Tuple[bool, Any]:
    """(keep, value) for a global the function uses: modules by name, values
    that pickle reliably as they are; anything else is left out (the rebuilt
    function then reports the name as not defined when it is compiled)."""
    if isinstance(value, types.ModuleType):
        return True, _ModuleRef(value.__name__)
    if isinstance(value, (JitFunction, CompileOptions, LoopPar, CompileBackend) + _SIMPLE):
        return True, value
    if isinstance(value, tuple) and all(isinstance(v, _SIMPLE) for v in value):
        return True, value
    if getattr(value, "__parpy_builtin__", None) is not None or getattr(
        value, "__module__", ""
    ).startswith("parpy"):
        return True, value
    return False, None


def _globals_of(f: Any) -> Dict[str, Any]:
    names = _code_names(f.__code__)
    out: Dict[str, Any] = {}
    g = f.__globals__
    for n in sorted(names):
        if n in g:
            keep, v = _capture(g[n])
            if keep:
                out[n] = v
    if f.__closure__:
        for n, cell in zip(f.__code__.co_freevars, f.__closure__):
            try:
                keep, v = _capture(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
            if keep:
                out[n] = v
    return out


def _source_of(f: Any) -> Tuple[str, str, int]:
    lines, first = inspect.getsourcelines(f)
    return "".join(lines), f.__code__.co_filename, first


def _resolve(module: str, qualname: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _rebuild(name: str, source: str, filename: str, first: int,
             captured: Dict[str, Any]) -> JitFunction:
    ns: Dict[str, Any] = {"__name__": "__parpy_unpickled__"}
    for k, v in captured.items():
        ns[k] = importlib.import_module(v.name) if isinstance(v, _ModuleRef) else v
    text = textwrap.dedent(source)
    tree = ast.parse(text, filename=filename)
    fdefs = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    if len(fdefs) != 1:
        raise RuntimeError(f"parpy: cannot rebuild jit function `{name}` from its source")
    fdefs[0].decorator_list = []  # the decorator is applied below
    ast.increment_lineno(tree, first - 1)
    # The rebuilt function's source must be findable by `inspect` under its
    # original file name and lines (that is where diagnostics point); keep
    # what linecache already has for a file that exists here.
    if not linecache.getlines(filename):
        padded = ["\n"] * (first - 1) + text.splitlines(keepends=True)
        linecache.cache[filename] = (sum(map(len, padded)), None, padded, filename)
    exec(compile(tree, filename, "exec"), ns)
    return JitFunction(ns[fdefs[0].name])


def _load_jit(module: str, qualname: str, fallback: Optional[Tuple[Any, ...]]) -> JitFunction:
    if module != "__main__" and "<locals>" not in qualname:
        try:
            obj = _resolve(module, qualname)
        except Exception:  # not importable here: rebuild from the source
            obj = None
        if isinstance(obj, JitFunction):
            return obj
    if fallback is None:
        raise RuntimeError(
            f"parpy: cannot find jit function {module}.{qualname} in this process "
            "and it was pickled without its source")
    return _rebuild(*fallback)


def _reduce_jit(fn: JitFunction) -> Tuple[Callable[..., Any], Tuple[Any, ...]]:
    f = fn.py_func
    module = getattr(f, "__module__", None) or "__main__"
    qualname = f.__qualname__
    try:
        name = f.__name__
        source, filename, first = _source_of(f)
        fallback: Optional[Tuple[Any, ...]] = (name, source, filename, first, _globals_of(f))
    except (OSError, TypeError):
        fallback = None
    if fallback is None and (module == "__main__" or "<locals>" in qualname):
        import pickle

        raise pickle.PicklingError(
            f"cannot pickle jit function {qualname}: it is not importable by name "
            "and its source is not available")
    return _load_jit, (module, qualname, fallback)


copyreg.pickle(CompileBackend, _reduce_backend)
copyreg.pickle(LoopPar, _reduce_loop_par)
copyreg.pickle(CompileOptions, _reduce_options)
copyreg.pickle(JitFunction, _reduce_jit)
