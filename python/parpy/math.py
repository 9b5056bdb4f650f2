"""Math functions usable inside jit code (`parpy.math.sqrt(x)`).

From plain Python they apply NumPy's versions with NumPy's result types
(`sqrt` of an int16 value is a float32, of an int8 value a float16); applied
only to Python numbers (weak scalars) they give a Python number, as jit code
does (see `_builtins.weak_result`).
"""

from __future__ import annotations

from typing import Any

import math as _math

import numpy as np

from ._builtins import mark, weak_result

__all__ = [
    "sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "abs", "atan2", "floor",
    "ceil", "pow", "erf", "erfc", "expm1", "log1p", "hypot", "copysign", "fmod",
    "cbrt", "round", "isnan", "isinf", "isfinite", "log10", "log2", "exp2", "asin",
    "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "trunc", "sign",
]


def _apply(f: Any, *args: Any) -> Any:
    with np.errstate(all="ignore"):
        return weak_result(args, f(*args))


@mark("math.sqrt")
def sqrt(x: Any) -> Any:
    return _apply(np.sqrt, x)


@mark("math.exp")
def exp(x: Any) -> Any:
    return _apply(np.exp, x)


@mark("math.log")
def log(x: Any) -> Any:
    return _apply(np.log, x)


@mark("math.sin")
def sin(x: Any) -> Any:
    return _apply(np.sin, x)


@mark("math.cos")
def cos(x: Any) -> Any:
    return _apply(np.cos, x)


@mark("math.tan")
def tan(x: Any) -> Any:
    return _apply(np.tan, x)


@mark("math.tanh")
def tanh(x: Any) -> Any:
    return _apply(np.tanh, x)


@mark("math.abs")
def abs(x: Any) -> Any:  # noqa: A001
    if isinstance(x, bool):  # a weak bool: Python's abs gives an int
        return int(x)
    return _apply(np.abs, x)


@mark("math.atan2")
def atan2(y: Any, x: Any) -> Any:
    return _apply(np.arctan2, y, x)


@mark("math.floor")
def floor(x: Any) -> Any:
    return _apply(np.floor, x)


@mark("math.ceil")
def ceil(x: Any) -> Any:
    return _apply(np.ceil, x)


@mark("math.pow")
def pow(x: Any, y: Any) -> Any:  # noqa: A001
    return _apply(np.power, x, y)



def _np_erf(f: Any) -> Any:
    """NumPy has no `erf`: `f` (a scalar function of `math`) elementwise,
    with the float type NumPy's unary ufuncs give (`np.sqrt`'s)."""

    def g(x: Any) -> Any:
        a = np.asarray(x)
        dtype = np.sqrt(np.zeros((), a.dtype)).dtype
        r = np.vectorize(f, otypes=[np.float64])(a).astype(dtype)
        return r if r.ndim else r[()]

    return g


@mark("math.erf")
def erf(x: Any) -> Any:
    return _apply(_np_erf(_math.erf), x)


@mark("math.erfc")
def erfc(x: Any) -> Any:
    return _apply(_np_erf(_math.erfc), x)


@mark("math.expm1")
def expm1(x: Any) -> Any:
    return _apply(np.expm1, x)


@mark("math.log1p")
def log1p(x: Any) -> Any:
    return _apply(np.log1p, x)


@mark("math.hypot")
def hypot(x: Any, y: Any) -> Any:
    return _apply(np.hypot, x, y)


@mark("math.copysign")
def copysign(x: Any, y: Any) -> Any:
    return _apply(np.copysign, x, y)


@mark("math.fmod")
def fmod(x: Any, y: Any) -> Any:
    return _apply(np.fmod, x, y)


@mark("math.cbrt")
def cbrt(x: Any) -> Any:
    return _apply(np.cbrt, x)


@mark("math.round")
def round(x: Any) -> Any:  # noqa: A001
    """Rounds half to even, as `np.round` (the result keeps `x`'s type)."""
    return _apply(np.round, x)


@mark("math.isnan")
def isnan(x: Any) -> Any:
    return _apply(np.isnan, x)


@mark("math.isinf")
def isinf(x: Any) -> Any:
    return _apply(np.isinf, x)


@mark("math.isfinite")
def isfinite(x: Any) -> Any:
    return _apply(np.isfinite, x)


@mark("math.log10")
def log10(x: Any) -> Any:
    return _apply(np.log10, x)


@mark("math.log2")
def log2(x: Any) -> Any:
    return _apply(np.log2, x)


@mark("math.exp2")
def exp2(x: Any) -> Any:
    return _apply(np.exp2, x)


@mark("math.asin")
def asin(x: Any) -> Any:
    return _apply(np.arcsin, x)


@mark("math.acos")
def acos(x: Any) -> Any:
    return _apply(np.arccos, x)


@mark("math.atan")
def atan(x: Any) -> Any:
    return _apply(np.arctan, x)


@mark("math.sinh")
def sinh(x: Any) -> Any:
    return _apply(np.sinh, x)


@mark("math.cosh")
def cosh(x: Any) -> Any:
    return _apply(np.cosh, x)


@mark("math.asinh")
def asinh(x: Any) -> Any:
    return _apply(np.arcsinh, x)


@mark("math.acosh")
def acosh(x: Any) -> Any:
    return _apply(np.arccosh, x)


@mark("math.atanh")
def atanh(x: Any) -> Any:
    return _apply(np.arctanh, x)


@mark("math.trunc")
def trunc(x: Any) -> Any:
    """Toward zero, as `np.trunc` (an integer keeps its type)."""
    return _apply(np.trunc, x)


@mark("math.sign")
def sign(x: Any) -> Any:
    """-1, 0 or 1 in `x`'s type, as `np.sign` (NaN stays NaN)."""
    return _apply(np.sign, x)
