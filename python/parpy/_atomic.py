"""Atomic updates of one array element, for parallel loops whose iterations
may update the same element (a histogram):

    parpy.label('i')
    for i in range(N):
        parpy.atomic.add(hist, x[i], 1)

or, marking the elements a block updates:

    for i in range(N):
        with parpy.atomic:
            hist[x[i]] += 1

`add(a, index, value)` is `a[index] += value`, `max` keeps the larger and
`min` the smaller (NumPy's `maximum`/`minimum`: a NaN wins), done as one
indivisible step in compiled code. `index` is one index or a tuple (one per
dimension). The value is converted to the element type first, as a store
converts it. Each is a statement of its own (it has no value). Element
types: every number type on Cpu; the 32- and 64-bit types on Cuda; int32,
uint32 and float32 on Metal.

Called from plain Python they update the NumPy array in place (and the
block is ordinary code).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._builtins import convert_value, mark

__all__ = ["atomic"]


def _value(a: Any, value: Any) -> Any:
    return convert_value(value, np.asarray(a).dtype)


@mark("atomic.add")
def add(a: Any, index: Any, value: Any) -> None:
    """`a[index] += value`, atomically in compiled code."""
    a[index] = a[index] + _value(a, value)


@mark("atomic.max")
def max(a: Any, index: Any, value: Any) -> None:  # noqa: A001
    """`a[index] = maximum(a[index], value)`, atomically in compiled code."""
    a[index] = np.maximum(a[index], _value(a, value))


@mark("atomic.min")
def min(a: Any, index: Any, value: Any) -> None:  # noqa: A001
    """`a[index] = minimum(a[index], value)`, atomically in compiled code."""
    a[index] = np.minimum(a[index], _value(a, value))


class _Atomic:
    """`parpy.atomic`: the functions `add`, `max`, `min`, and `with
    parpy.atomic:` (its `a[i] += v` statements are atomic adds)."""

    __parpy_builtin__ = "atomic"
    add = staticmethod(add)
    max = staticmethod(max)
    min = staticmethod(min)

    def __enter__(self) -> "_Atomic":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __repr__(self) -> str:
        return "parpy.atomic"


atomic = _Atomic()
