"""parpy: a JIT compiler from annotated Python functions to parallel code.

See README.md for a tour. The compiler is written in Rust (`parpy._native`);
this package is the thin public layer over it.
"""

from __future__ import annotations

import inspect as _inspect
from types import FunctionType as _FunctionType
from builtins import sum as builtins_sum
from typing import Any, Callable, Optional

from . import _native
from ._native import (
    BuildError,
    CompileBackend,
    CompileError,
    CompileOptions,
    CompileIndexError,
    CompileNameError,
    CompileOverflowError,
    CompileTypeError,
    CompileValueError,
    InternalError,
    JitFunction,
    LoopPar,
    ParpyWarning,
    backend_available,
    clear_cache,
    set_max_loaded,
    compile_string,
    par,
    print_compiled,
    threads,
)
from . import backend, builtin, math, operators, reduce, types
from . import parpy  # noqa: F401  (ParPy's module of native names)
from .parpy import Target
from . import buffer  # noqa: F401  (parpy.buffer.from_array, ...)
from . import _pickle  # noqa: F401  (registers pickling of jit functions and options)
from ._atomic import atomic
from ._callback import callback
from ._external import external
from .types import ElemSize
from .builtin import gpu, label

__version__: str = _native.__version__

__all__ = [
    "jit", "label", "threads", "par", "reduce", "LoopPar", "CompileOptions",
    "BuildError", "CompileBackend", "CompileError", "CompileTypeError", "CompileValueError", "CompileNameError",
    "CompileIndexError", "CompileOverflowError",
    "InternalError", "ParpyWarning", "print_compiled", "compile_string",
    "clear_cache", "set_max_loaded", "sync", "gpu", "sum", "operators", "atomic", "math", "builtin", "types",
    "backend", "callback", "external", "ElemSize", "JitFunction", "explain", "par_reduction", "Target",
    "backend_available", "buffer",
]


def jit(fun: Callable[..., Any]) -> JitFunction:
    """Compiles `fun` on demand: parses it now, specializes and compiles it
    for each new combination of argument types, shapes and (by default)
    scalar values. Call the result as `fun(*args, opts=parpy.par({...}))`.
    The undecorated function stays available as `.py_func`."""
    if isinstance(fun, JitFunction):
        return fun
    if not isinstance(fun, _FunctionType):
        raise TypeError(
            f"parpy.jit takes a Python function defined with `def`, got "
            f"{type(fun).__name__} {fun!r}"[:300])
    if fun.__name__ == "<lambda>":
        raise TypeError("parpy.jit takes a function defined with `def`, not a lambda: "
                        "write `def name(args): return ...` and decorate that")
    if _inspect.iscoroutinefunction(fun) or _inspect.isasyncgenfunction(fun):
        raise TypeError(f"parpy.jit cannot compile `async def {fun.__name__}`: write a plain `def`")
    return JitFunction(fun)


# `parpy.sum`, `parpy.prod`, `parpy.max`, `parpy.min`: the objects of
# `parpy.operators` (not in `__all__`: a star import must not shadow
# Python's `max` and `min`).
from .operators import max, min, prod, sum  # noqa: E402, A004


def par_reduction() -> LoopPar:
    """A reduction loop without a thread count of its own (ParPy's
    `parpy.par_reduction()`); same as `parpy.reduce()`."""
    return _native.reduce_marker(None)


def sync(backend: Optional[CompileBackend] = None) -> None:
    """Waits for the GPUs parpy has used to finish their work (calls with
    torch or other device arrays return before the kernels end); an error
    from that work is raised here. Nothing to wait for on the CPU.
    `backend` (ParPy's spelling) may name the backend; only Cuda waits."""
    if backend is None or backend == CompileBackend.Cuda:
        _native._cuda_sync()




def explain(fn: JitFunction) -> str:
    """Why `fn` was compiled: one paragraph per build since the caches were
    last cleared (oldest first, at most 64) with the argument types it was
    specialized on, the backend, where the code came from (`built`, `disk`
    cache, `rebuilt`, `python`), the time of each phase and the reason for
    the cache miss ("new shape for x: (100, 64) -> (100, 65)").
    `fn.specializations()` gives the same as data; `PARPY_LOG=info` prints
    one line per build as it happens."""
    if not isinstance(fn, JitFunction):
        raise TypeError(f"parpy.explain expects a @parpy.jit function, got {type(fn).__name__}")
    specs = fn.specializations()
    lines = [f"{fn.__name__}: {len(specs)} build{'s' if len(specs) != 1 else ''}"]
    for i, s in enumerate(specs, 1):
        total = 1e3 * builtins_sum(s["phases"].values())
        phases = ", ".join(f"{k} {1e3 * v:.2f}" for k, v in s["phases"].items())
        on = "" if s.get("device") is None else f" on cuda:{s['device']}"
        lines.append(f"[{i}] {s['backend']}{on}, {s['origin']}, {total:.1f} ms ({phases} ms)")
        lines.append("    " + "  ".join(f"{k}: {v}" for k, v in s["args"].items()))
        lines.append(f"    options: {s['options']}")
        lines.append(f"    why: {s['reason']}")
    return "\n".join(lines)
