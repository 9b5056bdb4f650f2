"""`parpy.callback`: a Python function that jit code calls from its host
code, between kernels (never inside parallel code).

The compiled code calls `invoke` with one spec per argument: arrays as
buffers over copies of the data (on the Cpu backend of the memory the
compiled code works on, written back after the call; on Cuda host copies
of the device data, copied back after the call), scalars as Python
numbers. Arguments whose memory overlaps (`cb(x, x[1])`) are views of one
copy on both backends, so they see each other's writes as in Python.
Called from plain
Python (or `CompileBackend.Python`), a callback gets its NumPy arguments
as buffers too, so both ways run the same code.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, List, Tuple

import numpy as np

from ._native import CompileBackend
from .buffer import Buffer, from_array, from_raw

__all__ = ["Callback", "callback"]


def _as_buffer(a: Any) -> Any:
    if isinstance(a, np.ndarray) and a.ndim > 0:
        return from_array(a, CompileBackend.Cpu)
    return a


class Callback:
    """A Python function jit code may call (see `parpy.callback`)."""

    __parpy_callback__ = True

    def __init__(self, fn: Callable[..., Any]) -> None:
        if not callable(fn):
            raise TypeError(f"parpy.callback expects a function, got {type(fn).__name__}")
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any) -> None:
        self.fn(*[_as_buffer(a) for a in args])

    def __repr__(self) -> str:
        return f"<parpy.callback {getattr(self.fn, '__qualname__', self.fn)!r}>"


def callback(fn: Callable[..., Any]) -> Callback:
    """Marks `fn` as a callback: jit code may call it as a statement of its
    host code (outside parallel loops and `with parpy.gpu:`). It receives
    arrays as `parpy.buffer.Buffer`s over the data (`.numpy()`, `.torch()`,
    `.copy_from(...)`; writes are seen by the code after the call) and
    scalars as Python numbers; its return value is ignored."""
    return Callback(fn)


def invoke(cb: Callback, specs: List[Tuple[Any, ...]]) -> None:
    """The compiled code's call (see the module documentation).

    An array the compiled code passes by address (the Cpu backend's
    arguments and local arrays) reaches the callback as a copy, written
    back after the call where the callback changed it: a buffer the
    callback keeps (or a `.numpy()` view of it) then never points at
    memory freed after the call (the caller's array, or a local array of
    the compiled code's stack). Arguments whose memory overlaps (`cb(x,
    x[1])`, `cb(x, x)`) are views of one copy of the memory they span, so
    a write through one is seen through the other, as in Python, and the
    write-back stores the memory once."""
    args: List[Any] = [None] * len(specs)
    # (index, address, bytes, shape, dtype) of each array passed by address
    by_address: List[Tuple[int, int, int, Tuple[int, ...], np.dtype]] = []
    for i, spec in enumerate(specs):
        if spec[0] == "array":
            _, data, shape, dtype = spec
            if isinstance(data, int):
                dt = np.dtype(dtype)
                n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
                by_address.append((i, data, n, tuple(shape), dt))
            else:
                # (on Cuda the binding gives overlapping arguments one host
                # copy of the memory they span: views of one buffer)
                view = np.frombuffer(data, dtype=dtype).reshape(shape)
                args[i] = from_array(view, CompileBackend.Cpu)
        else:
            _, value, dtype = spec
            args[i] = value
    copies: List[Tuple[np.ndarray, np.ndarray]] = []
    for group in _overlapping_groups(by_address):
        start = min(a[1] for a in group)
        end = max(a[1] + a[2] for a in group)
        memory = from_raw(start, (end - start,), np.uint8, CompileBackend.Cpu).numpy()
        own = memory.copy()
        copies.append((memory, own))
        for i, address, n, shape, dt in group:
            off = address - start
            view = own[off:off + n].view(dt).reshape(shape)
            args[i] = from_array(view, CompileBackend.Cpu)
    try:
        cb.fn(*args)
    finally:
        for memory, own in copies:
            # (bytes compared: an unchanged read-only argument is not
            # written, and NaNs compare as themselves)
            if own.size and not np.array_equal(own, memory):
                memory[...] = own


def _overlapping_groups(arrays: List[Tuple[int, int, int, Tuple[int, ...], np.dtype]]):
    """`arrays` ((index, address, bytes, ...)) in groups whose memory
    overlaps, by address; an empty array is a group of its own."""
    groups: List[List[Tuple[int, int, int, Tuple[int, ...], np.dtype]]] = []
    end = 0
    for a in sorted((a for a in arrays if a[2]), key=lambda a: (a[1], -a[2])):
        if groups and a[1] < end:
            groups[-1].append(a)
            end = max(end, a[1] + a[2])
        else:
            groups.append([a])
            end = a[1] + a[2]
    return groups + [[a] for a in arrays if not a[2]]
