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
import dis
import importlib
import inspect
import io
import linecache
import pickle
import textwrap
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from . import _native
from ._native import CompileBackend, CompileOptions, JitFunction, LoopPar

# --- options -------------------------------------------------------------


def _make_backend(name: str) -> CompileBackend:
    return getattr(CompileBackend, name)


def _reduce_backend(b: CompileBackend) -> Tuple[Callable[..., Any], Tuple[Any, ...]]:
    return _make_backend, (repr(b).rsplit(".", 1)[-1],)


def _make_loop_par(threads: Optional[int], tpb: Optional[int], reduction: bool) -> LoopPar:
    p = LoopPar(threads)
    if reduction:
        p = p.par_reduction()
    return p.tpb(tpb) if tpb is not None else p


def _reduce_loop_par(p: LoopPar) -> Tuple[Callable[..., Any], Tuple[Any, ...]]:
    return _make_loop_par, (p.nthreads, p.threads_per_block, p.is_reduction)


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
#
# A function rebuilt from its source gets a namespace of the globals it
# uses, captured when it is pickled (`_Capture`), each in a form that
# travels:
#
# - numbers, strings, None, NumPy scalars and dtypes, tuples of them (nested
#   too), options: by value; parpy's own functions and objects: by name
#   where they have one, else by value;
# - modules: by name (`_ModuleRef`), imported again on load;
# - jit and plain Python functions: by module and qualified name when they
#   can be imported by it (`_FuncRef`), with their source as a fallback;
#   otherwise (`__main__`, a notebook, defined inside a function) by source
#   (`_Source`), recursively with the globals they use;
# - other objects importable by module and qualified name (NumPy's and
#   `math`'s functions imported by name, `np.float32`): by reference
#   (`_Ref`); a method of one (`np.add.reduce`): `_Attr`;
# - other objects whose class can be imported (not one of `__main__`) and
#   that pickle: by value.
#
# Anything else cannot travel: for a function that only its source can
# rebuild, pickling raises a PicklingError naming the global; for one that
# goes by reference, its fallback records the global and a process that
# has to rebuild it says so.

_SIMPLE = (int, float, complex, bool, str, bytes, type(None), np.generic, np.dtype)
_WHAT_TRAVELS = ("numbers, strings, tuples of them, modules, functions defined with `def`, "
                 "and objects that can be imported by name or pickled")


class _ModuleRef:
    """A module in the captured globals, re-imported by name on load."""

    def __init__(self, name: str) -> None:
        self.name = name


class _Ref:
    """An object importable as `module.qualname` (`from numpy import exp`)."""

    def __init__(self, module: str, qualname: str) -> None:
        self.module = module
        self.qualname = qualname


class _Attr:
    """An attribute of a captured object (`np.add.reduce`)."""

    def __init__(self, owner: Any, name: str) -> None:
        self.owner = owner
        self.name = name


class _Source:
    """A function rebuilt from its source text in a namespace of the captured
    `globals` (filled after construction: functions may call each other).
    A jit function is rebuilt without its decorators and wrapped in
    `JitFunction`; a plain one is defined as written, decorators included
    (`parpy.external`). `missing`: globals that could not be captured, as
    (name, why); rebuilding such a function is an error that names them."""

    def __init__(self, name: str, source: str, filename: str, first: int, jit: bool) -> None:
        self.name = name
        self.source = source
        self.filename = filename
        self.first = first
        self.jit = jit
        self.globals: Dict[str, Any] = {}
        self.missing: List[Tuple[str, str]] = []


class _FuncRef:
    """A function importable as `module.qualname`, with its source as a
    fallback for a process that cannot import it (None: not available, or
    not taken: a plain function of another module than its caller's)."""

    def __init__(self, module: str, qualname: str, jit: bool,
                 fallback: Optional[_Source]) -> None:
        self.module = module
        self.qualname = qualname
        self.jit = jit
        self.fallback = fallback


class _CannotTravel(Exception):
    pass


def _global_names(code: types.CodeType) -> List[str]:
    """The global names a function's code reads (nested code too: a
    comprehension, a generator), in order of first use."""
    out: Dict[str, None] = {}
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(ins.argval, str):
            out[ins.argval] = None
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            for n in _global_names(c):
                out[n] = None
    return list(out)


def _definition_names(fdef: ast.FunctionDef, decorators: bool) -> List[str]:
    """The names the `def` statement itself evaluates when it runs: its
    annotations, defaults (and decorators)."""
    a = fdef.args
    nodes: List[Any] = [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs]
    nodes += [a.vararg and a.vararg.annotation, a.kwarg and a.kwarg.annotation, fdef.returns]
    nodes += a.defaults + [d for d in a.kw_defaults if d is not None]
    if decorators:
        nodes += fdef.decorator_list
    out: Dict[str, None] = {}
    for node in nodes:
        if node is None:
            continue
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                out[n.id] = None
    return list(out)


def _parse_def(name: str, source: str, filename: str) -> Tuple[ast.Module, ast.FunctionDef]:
    text = textwrap.dedent(source)
    tree = ast.parse(text, filename=filename)
    fdefs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(tree.body) != 1 or len(fdefs) != 1 or fdefs[0].name != name:
        raise SyntaxError(f"the source of `{name}` is not one `def` statement")
    return tree, fdefs[0]  # type: ignore[return-value]


def _source_of(f: Any) -> Tuple[str, str, int]:
    lines, first = inspect.getsourcelines(f)
    return "".join(lines), f.__code__.co_filename, first


def _resolve(module: str, qualname: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _reference(value: Any, named: Any = None) -> Optional[Tuple[str, str]]:
    """(module, qualname) that import `value` itself, if any (the names
    those of `named`: a jit function's Python function)."""
    named = value if named is None else named
    module = getattr(named, "__module__", None)
    qualname = getattr(named, "__qualname__", None) or getattr(named, "__name__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        return None
    if module == "__main__" or "<locals>" in qualname or "<lambda>" in qualname:
        return None
    try:
        return (module, qualname) if _resolve(module, qualname) is value else None
    except Exception:
        return None


def _plain(value: Any) -> bool:
    """A value that travels as it is: numbers, strings, tuples of them."""
    if isinstance(value, _SIMPLE):
        return True
    return type(value) is tuple and all(_plain(v) for v in value)


class _NamesMain(Exception):
    pass


class _MainFinder(pickle._Pickler):  # type: ignore[misc,name-defined]
    """A trial pickling that fails on an object of `__main__` saved by
    name (pickle finds it here; the receiving process, which runs another
    `__main__`, would not)."""

    def save_global(self, obj: Any, name: Optional[str] = None) -> None:
        n = name or getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "")
        if pickle.whichmodule(obj, n) == "__main__":
            raise _NamesMain(n)
        super().save_global(obj, name)


def _describe(value: Any) -> str:
    t = type(value)
    if isinstance(value, types.FunctionType):
        return f"the function `{value.__qualname__}`"
    if t.__module__ == "builtins":
        return f"a {t.__name__}"
    return f"an object of class {t.__module__}.{t.__qualname__}"


class _Capture:
    """One pickling's capture of the functions a jit function reaches: each
    Python function object gets one `_Source` / `_FuncRef` (shared, so
    functions that call each other, or themselves, pickle as a cycle)."""

    def __init__(self) -> None:
        self.memo: Dict[int, Any] = {}
        self.keep: List[Any] = []  # (the ids in `memo` stay those objects')

    def function(self, value: Any, jit: bool, caller: Any, path: str) -> Any:
        """The travelling form of a jit or plain Python function called by
        the Python function `caller` (None: the one pickled)."""
        key = id(value)
        if key in self.memo:
            return self.memo[key]
        self.keep.append(value)
        py = value.py_func if jit else value
        ref = _reference(value, py)
        source: Optional[_Source] = None
        # (a plain function of another module: by reference only, not the
        # sources of a library's functions)
        if ref is None or jit or caller is None or \
                getattr(py, "__module__", None) == getattr(caller, "__module__", None):
            try:
                source = self.source(py, jit)
            except (OSError, TypeError, SyntaxError) as e:
                if ref is None:
                    raise _CannotTravel(
                        f"{_describe(py)} cannot be imported by name in another process "
                        f"and cannot be rebuilt from its source ({e})")
        form: Any = source if ref is None else _FuncRef(ref[0], ref[1], jit, source)
        self.memo[key] = form
        if source is not None:
            self.fill(source, py, strict=ref is None, path=f"{path} -> {py.__qualname__}")
        return form

    def source(self, py: Any, jit: bool) -> _Source:
        if getattr(py, "__name__", "") == "<lambda>":
            raise TypeError("a lambda; parpy rebuilds functions defined with `def`")
        text, filename, first = _source_of(py)
        _parse_def(py.__name__, text, filename)
        return _Source(py.__name__, text, filename, first, jit)

    def fill(self, src: _Source, py: Any, strict: bool, path: str) -> None:
        """The globals (and closure values) `py` uses, into `src.globals`."""
        _, fdef = _parse_def(src.name, src.source, src.filename)
        g = py.__globals__
        names = _global_names(py.__code__) + _definition_names(fdef, not src.jit)
        values: Dict[str, Any] = {}
        for n in names:
            if n in g:
                values[n] = g[n]
        closure = set()
        if py.__closure__:
            for n, cell in zip(py.__code__.co_freevars, py.__closure__):
                try:
                    values[n] = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                closure.add(n)
        for n, v in values.items():
            try:
                src.globals[n] = self.value(v, py, path)
            except _CannotTravel as e:
                if strict:
                    where = path.split(" -> ")
                    owner = (f"its helper `{where[-1]}`" if len(where) > 2 else "it")
                    raise pickle.PicklingError(
                        f"cannot pickle jit function {where[1]}: the "
                        f"{'variable' if n in closure else 'global'} `{n}` that "
                        f"{owner} uses cannot be sent to another process: {e} (what "
                        f"travels: {_WHAT_TRAVELS}; pass other values as arguments)"
                    ) from None
                src.missing.append((n, str(e)))

    def value(self, v: Any, caller: Any, path: str) -> Any:
        """The travelling form of a global `v` of the function `caller`."""
        if isinstance(v, types.ModuleType):
            return _ModuleRef(v.__name__)
        if _plain(v):
            return v
        if isinstance(v, JitFunction):
            return self.function(v, True, caller, path)
        if isinstance(v, (CompileOptions, LoopPar, CompileBackend)):
            return v
        parpy_own = getattr(v, "__parpy_builtin__", None) is not None or str(
            getattr(v, "__module__", "")).split(".")[0] == "parpy"
        if isinstance(v, types.FunctionType) and not parpy_own:
            return self.function(v, False, caller, path)
        ref = _reference(v)
        if ref is not None:
            return _Ref(*ref)
        owner = getattr(v, "__self__", None)
        if (isinstance(v, types.BuiltinMethodType) and owner is not None
                and not isinstance(owner, types.ModuleType)):
            return _Attr(self.value(owner, caller, path), v.__name__)
        t = type(v)
        if t.__module__ == "__main__" or "<locals>" in t.__qualname__:
            raise _CannotTravel(f"{_describe(v)}, a class another process cannot import")
        try:
            _MainFinder(io.BytesIO(), pickle.DEFAULT_PROTOCOL).dump(v)
        except _NamesMain as e:
            raise _CannotTravel(f"{_describe(v)}, which refers to `__main__.{e}` (another "
                                "process cannot import it)")
        except Exception as e:
            raise _CannotTravel(f"{_describe(v)}, which does not pickle ({e})")
        return v


class _Builder:
    """One unpickling's rebuilding of the captured functions (each once)."""

    _PENDING = object()

    def __init__(self) -> None:
        self.memo: Dict[int, Any] = {}
        self.later: List[Tuple[Dict[str, Any], str, Any]] = []

    def value(self, v: Any) -> Any:
        if isinstance(v, _ModuleRef):
            return importlib.import_module(v.name)
        if isinstance(v, _Ref):
            try:
                return _resolve(v.module, v.qualname)
            except Exception as e:
                raise RuntimeError(
                    f"parpy: cannot find {v.module}.{v.qualname} in this process "
                    f"(a global of a pickled jit function): {e}") from None
        if isinstance(v, _Attr):
            return getattr(self.value(v.owner), v.name)
        if isinstance(v, _FuncRef):
            return self.func_ref(v)
        if isinstance(v, _Source):
            return self.source(v)
        return v

    def func_ref(self, v: _FuncRef) -> Any:
        if v.module != "__main__" and "<locals>" not in v.qualname:
            try:
                obj = _resolve(v.module, v.qualname)
            except Exception:  # not importable here: rebuild from the source
                obj = None
            if obj is not None and isinstance(obj, JitFunction) == v.jit:
                return obj
        if v.fallback is None:
            raise RuntimeError(
                f"parpy: cannot find {v.module}.{v.qualname} in this process and it was "
                "pickled without its source")
        return self.source(v.fallback, f"{v.module}.{v.qualname}")

    def source(self, src: _Source, where: str = "") -> Any:
        key = id(src)
        if key in self.memo:
            got = self.memo[key]
            if got is self._PENDING:
                raise _Pending()
            return got
        if src.missing:
            names = "; ".join(f"`{n}`: {why}" for n, why in src.missing)
            raise RuntimeError(
                f"parpy: cannot rebuild function {where or src.name} in this process (it "
                f"cannot import it by name), since globals it uses could not be pickled "
                f"with it: {names}")
        self.memo[key] = self._PENDING
        ns: Dict[str, Any] = {"__name__": "__parpy_unpickled__"}
        for k, v in src.globals.items():
            try:
                ns[k] = self.value(v)
            except _Pending:  # a function being rebuilt (they call each other)
                self.later.append((ns, k, v))
        tree, fdef = _parse_def(src.name, src.source, src.filename)
        if src.jit:
            fdef.decorator_list = []  # the decorator is applied below
        ast.increment_lineno(tree, src.first - 1)
        _register_lines(src.filename, src.first, textwrap.dedent(src.source))
        exec(compile(tree, src.filename, "exec"), ns)
        fn = ns[src.name]
        if src.jit:
            fn = JitFunction(fn)
            if src.name in src.globals:  # (the function calls itself)
                ns[src.name] = fn
        self.memo[key] = fn
        return fn

    def finish(self, v: Any) -> Any:
        out = self.value(v)
        while self.later:
            ns, k, w = self.later.pop()
            ns[k] = self.value(w)
        return out


class _Pending(Exception):
    pass


# The text of rebuilt functions by file, at their original lines: the
# rebuilt function's source must be findable by `inspect` under its
# original file name and lines (that is where diagnostics point), and
# several functions of one file each need their own lines there.
_LINES: Dict[str, List[str]] = {}


def _register_lines(filename: str, first: int, text: str) -> None:
    if filename not in _LINES and linecache.getlines(filename):
        return  # a file that exists here: keep what linecache has
    lines = _LINES.setdefault(filename, [])
    new = text.splitlines(keepends=True)
    end = first - 1 + len(new)
    if len(lines) < end:
        lines.extend(["\n"] * (end - len(lines)))
    lines[first - 1:end] = new
    linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)


def _load_jit(module: str, qualname: str, fallback: Optional[_Source]) -> JitFunction:
    return _Builder().finish(_FuncRef(module, qualname, True, fallback))  # type: ignore[no-any-return]


def _reduce_jit(fn: JitFunction) -> Tuple[Callable[..., Any], Tuple[Any, ...]]:
    f = fn.py_func
    module = getattr(f, "__module__", None) or "__main__"
    qualname = f.__qualname__
    try:
        form = _Capture().function(fn, True, None, "")
    except _CannotTravel as e:
        raise pickle.PicklingError(f"cannot pickle jit function {qualname}: {e}") from None
    fallback = form.fallback if isinstance(form, _FuncRef) else form
    return _load_jit, (module, qualname, fallback)


copyreg.pickle(CompileBackend, _reduce_backend)
copyreg.pickle(LoopPar, _reduce_loop_par)
copyreg.pickle(CompileOptions, _reduce_options)
copyreg.pickle(JitFunction, _reduce_jit)
