"""`parpy.buffer`: arrays that stay where a backend computes on them, so
several calls can share data without copies (ParPy's buffers).

On the Cpu backend (and with `backend=None`) a buffer is host memory: it
shares the memory of the NumPy array or CPU torch tensor it was made from
when that array is C-contiguous, and owns a NumPy array otherwise. jit
functions take buffers as arguments like arrays. Buffers in Cuda device
memory are not available yet: asking for one raises a RuntimeError that
says so (pass torch CUDA tensors or NumPy arrays instead).
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from ._native import CompileBackend
from .types import ElemType, ElemSize

__all__ = [
    "Buffer", "DataType", "empty", "empty_like", "zeros", "zeros_like",
    "from_array", "from_raw", "sync",
]

_ELEMS = [getattr(ElemSize, n) for n in (
    "Bool", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64", "F16", "F32", "F64"
)]


class DataType:
    """The element type of a buffer (`DataType.from_elem_size(parpy.types.F32)`)."""

    __slots__ = ("elem",)

    def __init__(self, elem: ElemType) -> None:
        if not isinstance(elem, ElemType):
            raise TypeError(f"expected a parpy.types element type, got {type(elem).__name__}")
        self.elem = elem

    @staticmethod
    def from_elem_size(elem: ElemType) -> "DataType":
        return DataType(elem)

    @staticmethod
    def from_numpy(dtype: Any) -> "DataType":
        d = np.dtype(dtype)
        for e in _ELEMS:
            if e.to_numpy() == d:
                return DataType(e)
        raise TypeError(f"parpy buffers do not support the dtype {d}")

    def to_numpy(self) -> np.dtype[Any]:
        return self.elem.to_numpy()

    def size(self) -> int:
        return self.elem.size()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DataType) and other.elem is self.elem

    def __hash__(self) -> int:
        return hash(self.elem.name)

    def __repr__(self) -> str:
        return f"DataType({self.elem!r})"


class _Storage:
    """The memory of a buffer: a host NumPy array; `src` is the object it
    was made from when it shares that object's memory (else None)."""

    __slots__ = ("array", "src")

    def __init__(self, array: np.ndarray, src: Any = None) -> None:
        self.array = array
        self.src = src


def _check_backend(backend: Any, what: str) -> None:
    if backend is None or backend == CompileBackend.Cpu:
        return
    if backend == CompileBackend.Cuda or backend == CompileBackend.Metal:
        raise RuntimeError(
            f"parpy.buffer: {what} in {backend} device memory is not available in this "
            "version of parpy; use backend=parpy.CompileBackend.Cpu (host memory), or pass "
            "NumPy arrays / torch CUDA tensors to jit functions directly"
        )
    raise ValueError(f"Cannot convert to buffer of unknown backend {backend}")


def _elem(dtype: Any) -> ElemType:
    if isinstance(dtype, ElemType):
        return dtype
    if isinstance(dtype, DataType):
        return dtype.elem
    return DataType.from_numpy(dtype).elem


def _host_view(t: Any) -> Tuple[np.ndarray, bool]:
    """`t` as a NumPy array, and whether it shares `t`'s memory."""
    if isinstance(t, np.ndarray):
        if t.flags.c_contiguous:
            return t, True
        return np.ascontiguousarray(t), False
    if type(t).__module__.startswith("torch"):
        if t.device.type != "cpu":
            return t.detach().cpu().numpy(), False
        a = t.detach().numpy()
        if a.flags.c_contiguous:
            return a, True
        return np.ascontiguousarray(a), False
    if isinstance(t, Buffer):
        return t.numpy(), True
    return np.ascontiguousarray(np.asarray(t)), False


class Buffer:
    """An array in a backend's memory (host memory for Cpu)."""

    __slots__ = ("buf", "shape", "dtype", "backend", "__weakref__")

    def __init__(self, buf: _Storage, dtype: DataType, backend: Optional[CompileBackend]) -> None:
        self.buf = buf
        self.shape: Tuple[int, ...] = tuple(buf.array.shape)
        self.dtype = dtype
        self.backend = backend

    # the array jit functions see (parpy's argument reader asks for it)
    @property
    def __parpy_host_array__(self) -> np.ndarray:
        return self.buf.array

    @property
    def __array_interface__(self) -> Any:
        return self.buf.array.__array_interface__

    def _get_ptr(self) -> int:
        return int(self.buf.array.ctypes.data)

    def size(self) -> int:
        """The size of the data in bytes."""
        return int(self.buf.array.nbytes)

    def sync(self) -> None:
        """Waits for work on the buffer (nothing to wait for in host memory)."""

    def numpy(self) -> np.ndarray:
        """The data as a NumPy array (sharing the buffer's host memory)."""
        return self.buf.array

    def torch(self) -> Any:
        """The data as a torch tensor (sharing the buffer's host memory)."""
        import torch

        return torch.from_numpy(self.buf.array)

    def copy_from(self, src: Any) -> None:
        """Copies the data of `src` (a buffer, NumPy array, torch tensor or
        anything NumPy can read, of the buffer's shape) into the buffer."""
        if isinstance(src, Buffer):
            data = src.buf.array
        elif hasattr(src, "detach") and hasattr(src, "cpu"):
            data = src.detach().cpu().numpy()
        else:
            data = np.asarray(src)
        if tuple(data.shape) != self.shape:
            raise ValueError(
                f"cannot copy data of shape {tuple(data.shape)} into a buffer of shape {self.shape}"
            )
        np.copyto(self.buf.array, data, casting="same_kind")

    def copy(self) -> "Buffer":
        return Buffer(_Storage(self.buf.array.copy()), self.dtype, self.backend)

    def reshape(self, *dims: Union[int, Sequence[int]]) -> "Buffer":
        shape = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else dims
        if int(np.prod(shape, dtype=np.int64)) != self.buf.array.size:
            raise ValueError(f"Cannot reshape buffer of shape {self.shape} to {tuple(shape)}")
        return Buffer(_Storage(self.buf.array.reshape(shape), self.buf.src), self.dtype,
                      self.backend)

    def with_type(self, elem: ElemType) -> "Buffer":
        """The data as element type `elem`: the same memory when the size is
        the same and both are integers (a sign change), else a converted copy."""
        e = _elem(elem)
        a = self.buf.array
        same_size = e.size() == a.dtype.itemsize
        if same_size and e.to_numpy().kind in "iu" and a.dtype.kind in "iu":
            return Buffer(_Storage(a.view(e.to_numpy()), self.buf.src), DataType(e), self.backend)
        return Buffer(_Storage(a.astype(e.to_numpy())), DataType(e), self.backend)

    def _scalar(self, what: str) -> Any:
        if self.buf.array.size != 1:
            raise ValueError(
                f"only a buffer with one element can be converted to {what}, this one has "
                f"shape {self.shape}"
            )
        return self.buf.array.reshape(()).item()

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def __index__(self) -> int:
        if self.buf.array.dtype.kind not in "iu":
            raise TypeError("only an integer buffer can be used as an index")
        return int(self._scalar("int"))

    def __getitem__(self, idx: Any) -> Any:
        """An element (all dimensions indexed by ints) or a view buffer."""
        parts = idx if isinstance(idx, tuple) else (idx,)
        if not all(isinstance(i, (int, np.integer)) for i in parts):
            raise TypeError("parpy buffers are indexed by integers only")
        r = self.buf.array[idx]  # raises IndexError out of bounds
        if len(parts) == self.buf.array.ndim:
            return r.item() if isinstance(r, np.ndarray) else r
        return Buffer(_Storage(r, self.buf.src), self.dtype, self.backend)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d buffer")
        return self.shape[0]

    def __repr__(self) -> str:
        where = "host" if self.backend in (None, CompileBackend.Cpu) else str(self.backend)
        return f"parpy.buffer.Buffer(shape={self.shape}, dtype={self.dtype.elem!r}, {where})"


def from_array(t: Any, backend: Optional[CompileBackend]) -> Buffer:
    """A buffer holding the data of `t` (a NumPy array, a torch tensor or
    anything NumPy can read); in host memory it shares `t`'s memory when
    `t` is C-contiguous."""
    _check_backend(backend, "buffers")
    a, shared = _host_view(t)
    return Buffer(_Storage(a, t if shared else None), DataType.from_numpy(a.dtype), backend)


def empty(shape: Sequence[int], dtype: Any, backend: Optional[CompileBackend]) -> Buffer:
    _check_backend(backend, "buffers")
    e = _elem(dtype)
    return Buffer(_Storage(np.empty(tuple(shape), e.to_numpy())), DataType(e), backend)


def zeros(shape: Sequence[int], dtype: Any, backend: Optional[CompileBackend]) -> Buffer:
    _check_backend(backend, "buffers")
    e = _elem(dtype)
    return Buffer(_Storage(np.zeros(tuple(shape), e.to_numpy())), DataType(e), backend)


def empty_like(b: Buffer) -> Buffer:
    return empty(b.shape, b.dtype, b.backend)


def zeros_like(b: Buffer) -> Buffer:
    return zeros(b.shape, b.dtype, b.backend)


def from_raw(ptr: int, shape: Sequence[int], dtype: Any,
             backend: Optional[CompileBackend]) -> Buffer:
    """A buffer over memory at address `ptr` that the caller keeps alive."""
    _check_backend(backend, "raw buffers")
    e = _elem(dtype)
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64)) * e.size()
    raw = (ctypes.c_char * n).from_address(int(ptr))
    a = np.frombuffer(raw, dtype=e.to_numpy()).reshape(shape)
    return Buffer(_Storage(a), DataType(e), backend)


def sync(backend: Optional[CompileBackend] = None) -> None:
    """Waits for the backend's device (see `parpy.sync`)."""
    from . import sync as _sync

    _sync(backend)
