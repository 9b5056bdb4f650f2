"""Reductions usable inside jit code: `parpy.operators.sum(x[i, :])`.

Called from plain Python they reduce a NumPy array (or a scalar) with NumPy,
so a jit function can also run as ordinary Python for differential tests.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._builtins import mark

__all__ = ["sum", "prod", "max", "min"]


@mark("operators.sum")
def sum(x: Any) -> Any:  # noqa: A001
    """Sum of all elements of `x`."""
    return np.sum(x)


@mark("operators.prod")
def prod(x: Any) -> Any:
    """Product of all elements of `x`."""
    return np.prod(x)


@mark("operators.max")
def max(x: Any) -> Any:  # noqa: A001
    """Largest element of `x`."""
    return np.max(x)


@mark("operators.min")
def min(x: Any) -> Any:  # noqa: A001
    """Smallest element of `x`."""
    return np.min(x)
