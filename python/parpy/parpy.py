"""`parpy.parpy`: where ParPy programs find the native names
(`from parpy.parpy import ElemSize, ScalarSizes`). Everything here is also
available from `parpy` itself."""

from __future__ import annotations

import enum
from typing import Any

from . import _native
from ._native import CompileBackend, CompileOptions, LoopPar, par
from .types import ElemSize, ElemType

__all__ = [
    "CompileBackend", "CompileOptions", "ElemSize", "LoopPar", "ScalarSizes",
    "Target", "par",
]


class Target(enum.Enum):
    """Where an external function runs (ParPy's `parpy.Target`, also
    `parpy.parpy.Target`)."""

    Host = 0
    Device = 1


class ScalarSizes:
    """The element types of Python ints (`.int`) and floats (`.float`)
    under the given options (their backend and `force_*_size` fields)."""

    __slots__ = ("int", "float")

    def __init__(self, opts: CompileOptions) -> None:
        i, f = _native._scalar_sizes(opts)
        self.int: ElemType = i
        self.float: ElemType = f

    def __repr__(self) -> str:
        return f"ScalarSizes(int={self.int!r}, float={self.float!r})"


def __getattr__(name: str) -> Any:
    raise AttributeError(f"module 'parpy.parpy' has no attribute {name!r}")
