"""Math functions usable inside jit code (`parpy.math.sqrt(x)`); from plain
Python they apply NumPy's versions."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._builtins import mark

__all__ = [
    "sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "abs", "atan2", "floor",
    "ceil", "pow",
]


@mark("math.sqrt")
def sqrt(x: Any) -> Any:
    return np.sqrt(x)


@mark("math.exp")
def exp(x: Any) -> Any:
    return np.exp(x)


@mark("math.log")
def log(x: Any) -> Any:
    return np.log(x)


@mark("math.sin")
def sin(x: Any) -> Any:
    return np.sin(x)


@mark("math.cos")
def cos(x: Any) -> Any:
    return np.cos(x)


@mark("math.tan")
def tan(x: Any) -> Any:
    return np.tan(x)


@mark("math.tanh")
def tanh(x: Any) -> Any:
    return np.tanh(x)


@mark("math.abs")
def abs(x: Any) -> Any:  # noqa: A001
    return np.abs(x)


@mark("math.atan2")
def atan2(y: Any, x: Any) -> Any:
    return np.arctan2(y, x)


@mark("math.floor")
def floor(x: Any) -> Any:
    return np.floor(x)


@mark("math.ceil")
def ceil(x: Any) -> Any:
    return np.ceil(x)


@mark("math.pow")
def pow(x: Any, y: Any) -> Any:  # noqa: A001
    return np.power(x, y)
