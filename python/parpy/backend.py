"""Which backends can run here: `parpy.backend.available`, `is_enabled(b)`,
`explain(b)`."""

from __future__ import annotations

from typing import List

from . import _native
from ._native import CompileBackend

__all__ = ["available", "is_enabled", "explain", "CompileBackend"]


def is_enabled(b: CompileBackend) -> bool:
    """Whether code can run on backend `b` on this machine."""
    return _native.backend_is_enabled(b)


def explain(b: CompileBackend) -> str:
    """One sentence on why `b` is or is not usable."""
    return _native.backend_explain(b)[1]


def _available() -> List[CompileBackend]:
    return list(_native.backend_available())


def __getattr__(name: str) -> List[CompileBackend]:
    # `available` is computed when read (it probes the machine).
    if name == "available":
        return _available()
    raise AttributeError(f"module 'parpy.backend' has no attribute {name!r}")
