"""Builtins for jit code: `convert`, `maximum`, `minimum`, `inf`, and the
compile-time helpers. Where it makes sense they also work from plain Python."""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from ._builtins import binary_extreme, convert_value, mark

__all__ = [
    "convert", "maximum", "minimum", "inf", "inline", "static_backend_eq",
    "static_types_eq", "static_fail",
]


@mark("builtin.convert")
def convert(e: Any, ty: Any) -> Any:
    """Converts `e` to the element type `ty` (a `parpy.types` type or a NumPy
    dtype) as a C cast does: integers wrap at the width of `ty`, floats
    truncate toward zero."""
    name = getattr(ty, "__parpy_dtype__", None)
    return convert_value(e, np.dtype(name) if name is not None else np.dtype(ty))


@mark("builtin.maximum")
def maximum(a: Any, b: Any) -> Any:
    """The larger of `a` and `b`, promoted as `a + b` would be (two Python
    numbers give a Python number)."""
    return binary_extreme(False, a, b)


@mark("builtin.minimum")
def minimum(a: Any, b: Any) -> Any:
    """The smaller of `a` and `b` (see `maximum`)."""
    return binary_extreme(True, a, b)


class _Inf(float):
    """`parpy.builtin.inf`: positive infinity (a float in plain Python)."""

    __parpy_builtin__ = "builtin.inf"

    def __new__(cls) -> "_Inf":
        return super().__new__(cls, float("inf"))

    def __repr__(self) -> str:
        return "parpy.builtin.inf"


inf = _Inf()


def _only_in_jit(name: str) -> NoReturn:
    raise RuntimeError(
        f"parpy.builtin.{name} is a compile-time construct: it only has a meaning "
        "inside a @parpy.jit function, and this version of parpy does not support it yet"
    )


@mark("builtin.inline")
def inline(*args: Any) -> NoReturn:
    _only_in_jit("inline")


@mark("builtin.static_backend_eq")
def static_backend_eq(*args: Any) -> NoReturn:
    _only_in_jit("static_backend_eq")


@mark("builtin.static_types_eq")
def static_types_eq(*args: Any) -> NoReturn:
    _only_in_jit("static_types_eq")


@mark("builtin.static_fail")
def static_fail(*args: Any) -> NoReturn:
    _only_in_jit("static_fail")
