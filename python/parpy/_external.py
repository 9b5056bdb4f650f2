"""`parpy.external`: declaring a C / CUDA / Metal function that jit code
may call (ParPy's decorator).

    @parpy.external("clampf", parpy.CompileBackend.Cpu, parpy.Target.Device,
                    header='"clamp.h"')
    def clamp(x: parpy.types.F32, lo: parpy.types.F32, hi: parpy.types.F32) -> parpy.types.F32:
        return min(max(x, lo), hi)

The Python function's annotations are the declaration the compiler checks
calls against (element types, array ranks and fixed or symbolic sizes);
its body is what a plain Python call (and `CompileBackend.Python`) runs.
Declaring the same Python name for several backends gathers the
declarations: jit code uses the one of the backend it is compiled for.

`parallelize=parpy.threads(P)` (Cuda, Metal) declares a function that `P`
threads of a block call together, such as a warp reduction that reads
`threadIdx.x` and shuffles values: each iteration of the innermost parallel
loop calling it (or the `with parpy.gpu:` block) then runs on a block of
`P` threads, all of which call it; the code around the call runs on all
of them, its array stores once. The call must be in that loop's own body
and evaluated whenever its statement runs.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ._native import CompileBackend, CompileTypeError, LoopPar
from .types import Buffer, ElemType, Symbol, TypeVar

__all__ = ["external"]

# (module, qualified name) -> {backend: declaration}
_DECLS: Dict[Tuple[str, str], Dict[Any, "ExternalDecl"]] = {}


class ExternalDecl:
    """One backend's declaration of an external function (read by the
    compiler: `name`, `target` ('host' / 'device'), `header`, `params`
    [(name, ('scalar', dtype) | ('array', dtype, [int | ('symbol', id)]))],
    `ret` (a dtype name or None), `threads`)."""

    __slots__ = ("name", "target", "header", "params", "ret", "threads")

    def __init__(self, name: str, target: str, header: Optional[str],
                 params: List[Tuple[str, Tuple[Any, ...]]], ret: Optional[str],
                 threads: Optional[int]) -> None:
        self.name = name
        self.target = target
        self.header = header
        self.params = params
        self.ret = ret
        self.threads = threads

    def __repr__(self) -> str:
        return f"ExternalDecl({self.name!r}, {self.target}, header={self.header!r})"


# Python's own number types name no width (C's `int` is 32 bits, Python's
# int 64; `float` is a C double): the declaration of a C / CUDA / Metal
# function must say which one it means.
_WIDTHLESS = {int: "parpy.types.I64 or parpy.types.I32",
              float: "parpy.types.F64 or parpy.types.F32"}


def _unsupported(what: str, t: Any, hint: str) -> CompileTypeError:
    """ParPy's words first ('Unsupported parameter type annotation'), then
    which one and why. A CompileTypeError: both a TypeError and (as ParPy
    raises) a RuntimeError."""
    kind = "return type" if what.endswith("return type") else "parameter type"
    shown = getattr(t, "__name__", None) if isinstance(t, type) else None
    return CompileTypeError(f"Unsupported {kind} annotation {shown or repr(t)} in {what}: {hint}")


def _elem_name(t: Any, what: str) -> str:
    if isinstance(t, ElemType):
        return str(t.to_numpy().name)
    if isinstance(t, TypeVar):
        raise TypeError(f"{what}: an external function needs concrete element types, "
                        "not a type_var()")
    if isinstance(t, type) and t in _WIDTHLESS:
        raise _unsupported(what, t, "it does not say how wide the value is in the target "
                           f"language; use {_WIDTHLESS[t]}")
    try:
        return str(np.dtype(t).name)
    except TypeError:
        raise _unsupported(what, t, "expected a parpy.types element type or "
                           "parpy.types.buffer(...)") from None


def _param(t: Any, what: str) -> Tuple[Any, ...]:
    if isinstance(t, Buffer):
        dims: List[Any] = [("symbol", id(d)) if isinstance(d, Symbol) else int(d)
                           for d in t.shape]
        if not dims:
            raise TypeError(f"{what}: a buffer parameter needs at least one dimension")
        return ("array", _elem_name(t.elem, what), dims)
    return ("scalar", _elem_name(t, what))


def _threads(parallelize: Any) -> Optional[int]:
    if parallelize is None:
        return None
    if not isinstance(parallelize, LoopPar):
        raise TypeError("parallelize= expects parpy.threads(n), got "
                        f"{type(parallelize).__name__}")
    n = parallelize.nthreads
    return None if n is None or n <= 1 else int(n)


def external(ext_name: str, backend: CompileBackend, target: Any,
             header: Optional[str] = None,
             parallelize: Optional[LoopPar] = None) -> Callable[[Callable[..., Any]], Any]:
    """Declares that jit code compiled for `backend` calls the function
    `ext_name` of the target language (from `header`, found on
    `opts.includes`) where it calls the decorated function. See the module
    documentation."""
    from . import Target

    if not isinstance(ext_name, str) or not ext_name:
        raise TypeError("parpy.external: the first argument is the function's name (a string)")
    if not isinstance(backend, CompileBackend):
        raise TypeError("parpy.external: backend must be a parpy.CompileBackend, got "
                        f"{type(backend).__name__}")
    if not isinstance(target, Target):
        raise TypeError("parpy.external: target must be parpy.Target.Host or "
                        f"parpy.Target.Device, got {target!r}")
    if header is not None and not isinstance(header, str):
        raise TypeError("parpy.external: header must be a string such as '<math.h>'")
    threads = _threads(parallelize)
    if target == Target.Host and threads is not None:
        raise RuntimeError("Host externals cannot be parallel")

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        what = f"parpy.external {getattr(fn, '__qualname__', fn)!r}"
        try:
            anns = inspect.get_annotations(fn, eval_str=True)  # type: ignore[attr-defined]
        except AttributeError:  # Python < 3.10
            anns = dict(getattr(fn, "__annotations__", {}))
        sig = inspect.signature(fn)
        params = []
        for p in sig.parameters.values():
            if p.name not in anns:
                raise TypeError(f"{what}: parameter `{p.name}` needs a type annotation "
                                "(parpy.types.F32, parpy.types.buffer(...), ...)")
            params.append((p.name, _param(anns[p.name], f"{what}, parameter `{p.name}`")))
        ret_ann = anns.get("return")
        ret = None if ret_ann is None else _elem_name(ret_ann, f"{what}, return type")
        decl = ExternalDecl(ext_name, "host" if target == Target.Host else "device",
                            header, params, ret, threads)
        key = (getattr(fn, "__module__", ""), getattr(fn, "__qualname__", repr(fn)))
        decls = _DECLS.setdefault(key, {})
        decls[backend] = decl
        fn.__parpy_external__ = decls  # type: ignore[attr-defined]
        return fn

    return wrap
