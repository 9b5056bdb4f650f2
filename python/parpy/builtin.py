"""Builtins for jit code: `label`, `gpu`, `convert`, `maximum`, `minimum`,
`inf`, and the compile-time helpers. Where it makes sense they also work
from plain Python.

`label` and `gpu` live here, as in ParPy: `parpy.label` and `parpy.gpu` are
these same objects, so `import parpy.builtin as pb; pb.label('i')` and
`with pb.gpu:` work in jit code (builtins are recognized by identity,
whatever name reaches them)."""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from ._builtins import convert_value, mark, numpy_extreme

__all__ = [
    "label", "gpu", "convert", "maximum", "minimum", "inf", "inline", "static_backend_eq",
    "static_types_eq", "static_fail",
]


@mark("label")
def label(name: str) -> None:
    """Labels the next statement for the parallel specification. Inside jit
    code it is a compile-time marker; from plain Python it does nothing."""
    if not isinstance(name, str):
        raise TypeError(f"parpy.label expects a str, got {type(name).__name__}")


class _Gpu:
    """`with parpy.gpu:` runs a sequential block on the device (on the CPU
    backend, and from plain Python, it is ordinary sequential code)."""

    __parpy_builtin__ = "gpu"

    def __enter__(self) -> "_Gpu":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __repr__(self) -> str:
        return "parpy.gpu"


gpu = _Gpu()


@mark("builtin.convert")
def convert(e: Any, ty: Any) -> Any:
    """Converts `e` to the element type `ty` (a `parpy.types` type or a NumPy
    dtype) as a C cast does: integers wrap at the width of `ty`, floats
    truncate toward zero."""
    name = getattr(ty, "__parpy_dtype__", None)
    return convert_value(e, np.dtype(name) if name is not None else np.dtype(ty))


@mark("builtin.maximum")
def maximum(a: Any, b: Any) -> Any:
    """NumPy's `np.maximum(a, b)`: the larger of `a` and `b`, promoted as
    `a + b` would be; a NaN operand gives NaN, a tie the second operand (in
    float16 the first, as NumPy's loops). Two Python numbers give a Python
    number."""
    return numpy_extreme(False, a, b)


@mark("builtin.minimum")
def minimum(a: Any, b: Any) -> Any:
    """NumPy's `np.minimum(a, b)` (see `maximum`)."""
    return numpy_extreme(True, a, b)


class _Inf(float):
    """`parpy.builtin.inf`: positive infinity (a float in plain Python)."""

    __parpy_builtin__ = "builtin.inf"

    def __new__(cls) -> "_Inf":
        return super().__new__(cls, float("inf"))

    def __repr__(self) -> str:
        return "parpy.builtin.inf"


inf = _Inf()


def _dtype_of(x: Any) -> Any:
    """The NumPy dtype an argument of `static_types_eq` denotes: a type
    (`parpy.types.F32`, `np.float32`), an array, or a scalar value."""
    name = getattr(x, "__parpy_dtype__", None)
    if name is not None:
        return np.dtype(name)
    dtype = getattr(x, "dtype", None)
    if dtype is not None and not isinstance(x, type):
        return np.dtype(str(dtype).replace("torch.", ""))
    if isinstance(x, bool):
        return np.dtype(np.bool_)
    if isinstance(x, int):
        return np.dtype(np.int64)
    if isinstance(x, float):
        return np.dtype(np.float64)
    return np.dtype(x)


@mark("builtin.inline")
def inline(value: Any = None) -> Any:
    """Inside jit code, `inline(f(...))` compiles `f`'s body in place of the
    call (its labels then take the caller's parallel spec). From plain
    Python the call has already run: its value is returned."""
    return value


@mark("builtin.static_backend_eq")
def static_backend_eq(backend: Any) -> bool:
    """Inside jit code, whether the code is compiled for `backend` (decided
    when compiling: only the branch taken is compiled). From plain Python
    no compiled backend runs: true only for `CompileBackend.Python`."""
    from ._native import CompileBackend

    return bool(backend == CompileBackend.Python)


@mark("builtin.static_types_eq")
def static_types_eq(a: Any, b: Any) -> bool:
    """Whether two types (or the types of two arrays or values) are the same,
    decided when compiling."""
    return bool(_dtype_of(a) == _dtype_of(b))


@mark("builtin.static_fail")
def static_fail(message: str = "static_fail was reached") -> NoReturn:
    """A compile error with `message` when the compiler reaches it (in a
    branch that static conditions do not remove); from plain Python, a
    RuntimeError."""
    raise RuntimeError(message)
