"""`parpy.reduce`: reductions usable inside jit code (`parpy.reduce.sum(x[i, :])`,
the same as `parpy.operators.sum`), importable as a module as in ParPy
(`import parpy.reduce as pr`, `from parpy.reduce import sum, max`).

Called, the module is also the older spelling of `par_reduction`:
`parpy.reduce(n)` is `parpy.threads(n).par_reduction()`, `parpy.reduce()`
is `parpy.par_reduction()`. From plain Python the reductions reduce a NumPy
array (or a scalar) with NumPy.
"""

from __future__ import annotations

import sys
import types as _types
from typing import Any, Optional

from . import _native, operators
from ._builtins import mark

__all__ = ["sum", "prod", "max", "min"]


@mark("reduce.sum")
def sum(x: Any) -> Any:  # noqa: A001
    """Sum of all elements of `x` (`parpy.operators.sum`)."""
    return operators.sum(x)


@mark("reduce.prod")
def prod(x: Any) -> Any:
    """Product of all elements of `x` (`parpy.operators.prod`)."""
    return operators.prod(x)


@mark("reduce.max")
def max(x: Any) -> Any:  # noqa: A001
    """Largest element of `x` (`parpy.operators.max`)."""
    return operators.max(x)


@mark("reduce.min")
def min(x: Any) -> Any:  # noqa: A001
    """Smallest element of `x` (`parpy.operators.min`)."""
    return operators.min(x)


class _CallableModule(_types.ModuleType):
    """The class of the `parpy.reduce` module: a module that can be called."""

    __parpy_namespace__ = True

    def __call__(self, n: Optional[int] = None) -> _native.LoopPar:
        """`parpy.reduce(n)`: `parpy.threads(n).par_reduction()`; without
        `n`, `parpy.par_reduction()`."""
        return _native.reduce_marker(n)


sys.modules[__name__].__class__ = _CallableModule
