"""Helpers to build the objects that jit code recognizes by `__parpy_builtin__`."""

from __future__ import annotations

import builtins
from typing import Any, Callable, TypeVar

import numpy as np

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


# --- the semantics of builtins on NumPy values --------------------------
#
# Jit code types Python ints, floats and bools (literals, scalar arguments,
# loop counters, `len`, `float()`, `int()`) as *weak* scalars (NEP 50): they
# take the type of the NumPy value they meet. A builtin applied only to
# weak scalars gives a weak scalar (a Python value); with any NumPy value,
# NumPy's result. These helpers give the builtins that meaning from plain
# Python, so an undecorated function (and `CompileBackend.Python`) computes
# what the compiled one does.

_WEAK = (bool, int, float)


def is_weak(x: Any) -> bool:
    """A Python bool, int or float (not a NumPy scalar, not an array;
    `np.float64` derives from `float` but is strong)."""
    return isinstance(x, _WEAK) and not isinstance(x, np.generic)


def weak_result(args: Any, value: Any) -> Any:
    """`value` (a NumPy result) as a Python scalar when every argument was
    weak; unchanged otherwise."""
    if all(is_weak(a) for a in args) and isinstance(value, np.generic):
        return value.item()
    return value


def convert_value(e: Any, dtype: Any) -> Any:
    """`e` converted to `dtype` as a C cast does, which is what NumPy's
    `astype` does: integers wrap at the target width (NumPy's scalar
    constructors would raise instead), floats truncate toward zero, any
    non-zero value is True. Arrays convert elementwise."""
    dt = np.dtype(dtype)
    if isinstance(e, np.ndarray):
        return e.astype(dt)
    with np.errstate(all="ignore"):
        return np.asarray(e).astype(dt)[()]


def python_extreme(take_min: bool, a: Any, b: Any) -> Any:
    """Python's `min(a, b)` / `max(a, b)` as jit code computes them: the
    operands promoted like `a + b` would be (NEP 50), then compared as
    Python compares them: `b` where it is smaller / larger, else `a` (the
    first of a tie, `max(0.0, -0.0)` is 0.0; `a` where either is NaN,
    `max(1.0, nan)` is 1.0, `max(nan, 1.0)` NaN). Two weak operands give a
    weak result (a float if either is one)."""
    if is_weak(a) and is_weak(b):
        r = b if ((b < a) if take_min else (b > a)) else a
        if isinstance(a, float) or isinstance(b, float):
            return float(r)
        if isinstance(a, bool) and isinstance(b, bool):
            return bool(r)
        return int(r)
    if np.ndim(a) != 0 or np.ndim(b) != 0:
        # of arrays Python's own (it raises for more than one element:
        # the truth value of an array is ambiguous), as jit code refuses
        py = builtins.min if take_min else builtins.max
        return py(a, b)
    r = np.minimum(a, b) if take_min else np.maximum(a, b)
    t = r.dtype.type
    pa, pb = t(a), t(b)
    better = (pb < pa) if take_min else (pb > pa)
    return pb if better else pa


def numpy_extreme(take_min: bool, a: Any, b: Any) -> Any:
    """`parpy.builtin.minimum(a, b)` / `maximum(a, b)`: NumPy's
    `np.minimum` / `np.maximum` (a NaN operand gives NaN; of a tie the
    second operand, the first in float16, as NumPy's loops give them),
    a Python number when both are Python numbers."""
    r = np.minimum(a, b) if take_min else np.maximum(a, b)
    return weak_result((a, b), r)


def widens(src: Any, dst: Any) -> bool:
    """May a NumPy value (a strong one) of dtype `src` be stored into an
    array of dtype `dst` implicitly? Compiled code's rule (sema's
    `types::widens`): a bool anywhere, an integer into any float, a float
    into a float as wide or wider, an integer into an integer type that
    holds every value of it (NumPy's promotion of the two is `dst`); never
    a float into an integer or a number into a bool."""
    s, d = np.dtype(src), np.dtype(dst)
    if s == d or s.kind == "b":
        return True
    if d.kind == "b":
        return False
    if s.kind in "iu" and d.kind == "f":
        return True
    if s.kind == "f" and d.kind in "iu":
        return False
    if s.kind == "f" and d.kind == "f":
        return d.itemsize >= s.itemsize
    return bool(np.promote_types(s, d) == d)


def _short(t: np.dtype[Any]) -> str:
    return "bool" if t.kind == "b" else f"{t.kind}{t.itemsize * 8}"


def store_error(src: Any, dst: Any) -> str:
    """The message of compiled code's refusal to store a NumPy value of
    dtype `src` into an array of dtype `dst` (`widens` is False)."""
    s, d = np.dtype(src), np.dtype(dst)
    if s.kind == "f" and d.kind != "f":
        what = "a float to an integer"
    elif d.kind == "b":
        what = "a number to a bool"
    else:
        what = "a wider type to a narrower one"
    return (
        f"cannot store a value of type `{_short(s)}` into a destination of type "
        f"`{_short(d)}` implicitly: storing would convert {what} and may lose information; "
        f"convert explicitly: `parpy.builtin.convert(e, parpy.types.{_short(d).upper()})`"
    )
