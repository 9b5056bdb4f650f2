"""Checks of the annotations that are Python values rather than type names:
`parpy.types.buffer(T, [N, 4])`, `parpy.types.type_var()` and
`parpy.types.symbol()` (element types and `int`/`float` are checked by the
compiler). Called by the binding before compiling an entry function; a
mismatch is a `parpy.CompileTypeError` naming the parameter."""

from __future__ import annotations

import inspect
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._native import CompileTypeError
from .types import Buffer, ElemType, Symbol, TypeVar

_TORCH_PREFIX = "torch."


def _describe(a: Any) -> Tuple[Optional[str], Optional[Tuple[int, ...]]]:
    """(NumPy dtype name, shape) of an argument; shape None for scalars."""
    host = getattr(a, "__parpy_host_array__", None)
    if host is not None:
        a = host
    if isinstance(a, np.ndarray):
        if a.ndim == 0:
            return a.dtype.name, None
        return a.dtype.name, tuple(a.shape)
    if isinstance(a, np.generic):
        return a.dtype.name, None
    if isinstance(a, bool):
        return "bool", None
    if isinstance(a, int):
        return "int64", None
    if isinstance(a, float):
        return "float64", None
    dt = getattr(a, "dtype", None)
    shape = getattr(a, "shape", None)
    if dt is not None and shape is not None:
        to_numpy = getattr(dt, "to_numpy", None)  # a parpy buffer's DataType
        name = np.dtype(to_numpy()).name if callable(to_numpy) else str(dt)
        name = name[len(_TORCH_PREFIX):] if name.startswith(_TORCH_PREFIX) else name
        shape = tuple(int(d) for d in shape)
        return name, (shape if shape else None)
    return None, None


def _show(ann: Any, names: Dict[int, str]) -> str:
    def one(x: Any) -> str:
        if isinstance(x, (Symbol, TypeVar)):
            return names.get(id(x), "?")
        if isinstance(x, ElemType):
            return repr(x)
        return repr(x)

    if isinstance(ann, Buffer):
        dims = ", ".join(one(d) for d in ann.shape)
        return f"parpy.types.buffer({one(ann.elem)}, [{dims}])"
    return one(ann)


def _global_names(fn: Any) -> Dict[int, str]:
    """Names under which `fn`'s globals and closure hold symbols/type vars."""
    out: Dict[int, str] = {}
    g = getattr(fn, "__globals__", {})
    for k, v in list(g.items()):
        if isinstance(v, (Symbol, TypeVar)):
            out.setdefault(id(v), k)
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    if code is not None:
        for k, c in zip(code.co_freevars, cells):
            try:
                v = c.cell_contents
            except ValueError:
                continue
            if isinstance(v, (Symbol, TypeVar)):
                out[id(v)] = k
    return out


def check(fn: Any, args: Sequence[Any]) -> Dict[int, Any]:
    """Checks `args` against `fn`'s value annotations; returns what each
    shape symbol and type variable is bound to (by `id`): an int for a
    symbol, the NumPy dtype name (a str) for a type variable."""
    anns = getattr(fn, "__annotations__", None)
    symbols: Dict[int, Any] = {}
    if not anns:
        return symbols
    code = fn.__code__
    params: List[str] = list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    types: Dict[int, str] = {}
    names: Optional[Dict[int, str]] = None
    for name, a in zip(params, args):
        ann = anns.get(name)
        if not isinstance(ann, (Buffer, TypeVar, Symbol)):
            continue
        dtype, shape = _describe(a)
        problem: Optional[str] = None
        elem = ann.elem if isinstance(ann, Buffer) else ann
        if isinstance(ann, Buffer) and shape is None:
            problem = "it is not an array"
        elif isinstance(ann, Symbol):
            if shape is not None or dtype is None or not dtype.startswith(("int", "uint")):
                problem = "a shape symbol annotates an integer scalar"
            else:
                v = int(a)
                if symbols.setdefault(id(ann), v) != v:
                    problem = f"the symbol is {symbols[id(ann)]} from an earlier parameter"
        if problem is None and isinstance(elem, ElemType) and dtype != elem.to_numpy().name:
            problem = f"its elements are {dtype}, not {elem.to_numpy().name}"
        if problem is None and isinstance(elem, TypeVar):
            if types.setdefault(id(elem), str(dtype)) != dtype:
                problem = f"the type variable is {types[id(elem)]} from an earlier parameter"
        if problem is None and isinstance(ann, Buffer) and shape is not None:
            if len(ann.shape) != len(shape):
                problem = f"it has {len(shape)} dimensions, not {len(ann.shape)}"
            else:
                for want, got in zip(ann.shape, shape):
                    if isinstance(want, Symbol):
                        if symbols.setdefault(id(want), got) != got:
                            problem = (
                                f"a dimension is {got}, but the same symbol is "
                                f"{symbols[id(want)]} in an earlier parameter"
                            )
                            break
                    elif want != got:
                        problem = f"a dimension is {got}, not {want}"
                        break
        if problem is not None:
            if names is None:
                names = _global_names(fn)
            found = f"{dtype}[{', '.join(map(str, shape))}]" if shape is not None else f"{dtype}"
            try:
                where = f"{inspect.getsourcefile(fn)}:{code.co_firstlineno}"
            except TypeError:
                where = f"{code.co_filename}:{code.co_firstlineno}"
            raise CompileTypeError(
                f"error: Parameter {name} was annotated with type {_show(ann, names)} which is "
                f"incompatible with argument type {found}\n"
                f"  --> {where} (in the definition of `{fn.__name__}`)\n"
                f"  = note: {problem}"
            )
    symbols.update(types)
    return symbols


def annotation_symbols(fn: Any) -> Optional[List[int]]:
    """The ids of the shape symbols `fn`'s parameter annotations use (the
    symbols its body may read); None when an annotation is a string (not
    evaluated, so not known)."""
    anns = getattr(fn, "__annotations__", None) or {}
    used: List[int] = []
    for ann in anns.values():
        if isinstance(ann, str):
            return None
        if isinstance(ann, Symbol):
            used.append(id(ann))
        elif isinstance(ann, Buffer):
            used.extend(id(d) for d in ann.shape if isinstance(d, Symbol))
    return used


def symbol_names(fn: Any) -> List[str]:
    """The names under which `fn`'s globals and closure hold the shape
    symbols its parameter annotations use (ParPy's implicit shape labels:
    a loop over `range(N)` is labelled 'N')."""
    anns = getattr(fn, "__annotations__", None) or {}
    used = set()
    for ann in anns.values():
        if isinstance(ann, Symbol):
            used.add(id(ann))
        elif isinstance(ann, Buffer):
            used.update(id(d) for d in ann.shape if isinstance(d, Symbol))
    if not used:
        return []
    return sorted(name for i, name in _global_names(fn).items() if i in used)


def bindings(fn: Any, args: Sequence[Any]) -> Dict[int, Any]:
    """`check`, with each type variable bound to its `parpy.types` element
    type instead of a dtype name (Python mode substitutes these values for
    the symbols and type variables the function's body reads)."""
    from . import types as _types

    by_name = {
        t.__parpy_dtype__: t for t in vars(_types).values() if isinstance(t, ElemType)
    }
    out = check(fn, args)
    return {k: by_name.get(v, v) if isinstance(v, str) else v for k, v in out.items()}
