"""Helpers to build the objects that jit code recognizes by `__parpy_builtin__`."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def mark(name: str) -> Callable[[F], F]:
    """Attach the canonical builtin name (see `Builtin::from_name` in the core)."""

    def deco(f: F) -> F:
        f.__parpy_builtin__ = name  # type: ignore[attr-defined]
        return f

    return deco


class Namespace:
    """A namespace of builtins (`parpy.operators`, `parpy.math`, ...)."""

    __parpy_namespace__ = True

    def __init__(self, name: str, **members: Any) -> None:
        self._name = name
        for k, v in members.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return f"<parpy namespace {self._name}>"
