"""Which backends can run here: `parpy.backend.available`, `is_enabled(b)`,
`explain(b)`."""

from __future__ import annotations

from typing import List

from . import _native
from ._native import CompileBackend

__all__ = ["available", "backends", "is_enabled", "explain", "CompileBackend"]

# The GPU backends a program may target (ParPy's list; test suites append
# `CompileBackend.Cpu` to also run on the CPU). A plain list: callers may
# change it.
backends: List[CompileBackend] = [CompileBackend.Cuda, CompileBackend.Metal]


def is_enabled(b: CompileBackend, verbose: bool = False) -> bool:
    """Whether code can run on backend `b` on this machine; with
    `verbose=True`, prints why not when it cannot."""
    ok = _native.backend_is_enabled(b)
    if verbose and not ok:
        print(f"parpy: backend {b} is not enabled: {explain(b)}")
    return ok


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
