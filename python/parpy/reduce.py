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
from typing import Optional

from . import _native
# the same objects as parpy.operators.* (one definition of each reduction)
from .operators import max, min, prod, sum  # noqa: A004

__all__ = ["sum", "prod", "max", "min"]


class _CallableModule(_types.ModuleType):
    """The class of the `parpy.reduce` module: a module that can be called."""

    __parpy_namespace__ = True

    def __call__(self, n: Optional[int] = None) -> _native.LoopPar:
        """`parpy.reduce(n)`: `parpy.threads(n).par_reduction()`; without
        `n`, `parpy.par_reduction()`."""
        return _native.reduce_marker(n)


sys.modules[__name__].__class__ = _CallableModule
