"""`parpy.buffer`: arrays that stay where a backend computes on them, so
several calls can share data without copies (ParPy's buffers).

On the Cpu backend (and with `backend=None`) a buffer is host memory: it
shares the memory of the NumPy array or CPU torch tensor it was made from
when that array is C-contiguous, and owns a NumPy array otherwise.

On the Cuda backend a buffer is device memory that parpy owns
(`_native.DeviceMemory`): `from_array` copies the data to the device (to
CUDA device `device`, 0 unless given or unless the data is a torch CUDA
tensor), and the data stays there across calls until `numpy()` or
`torch()` (a torch tensor sharing the device memory) asks for it. jit
functions take buffers as arguments like arrays, a Cuda buffer through
its `__cuda_array_interface__`. Buffers export their memory through
`__dlpack__` too (host memory as NumPy does; Cuda buffers as kDLCUDA
tensors sharing it). Buffers in Metal memory are not available
(parpy's Metal backend prints code; it does not run it).
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from ._native import CompileBackend
from .types import ElemType, ElemSize

__all__ = [
    "Buffer", "CudaBuffer", "DataType", "empty", "empty_like", "zeros", "zeros_like",
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


def _on_device(backend: Any, what: str) -> bool:
    """Whether `backend` keeps buffers in Cuda device memory (False: host
    memory); an error for Metal and for what is not a backend."""
    if backend is None or backend == CompileBackend.Cpu:
        return False
    if backend == CompileBackend.Cuda:
        return True
    if backend == CompileBackend.Metal:
        raise RuntimeError(
            f"parpy.buffer: {what} in Metal memory are not available: parpy's Metal backend "
            "prints code (print_compiled) and does not run it; use "
            "backend=parpy.CompileBackend.Cpu or parpy.CompileBackend.Cuda"
        )
    raise ValueError(f"Cannot convert to buffer of unknown backend {backend}")


class _DeviceStorage:
    """The memory of a Cuda buffer: `nbytes` bytes at byte `offset` of
    `mem` (a `_native.DeviceMemory`, shared by views), holding a C-ordered
    array of `shape` and NumPy dtype `dtype`."""

    __slots__ = ("mem", "offset", "shape", "dtype")

    def __init__(self, mem: Any, offset: int, shape: Tuple[int, ...], dtype: Any) -> None:
        self.mem = mem
        self.offset = offset
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)

    @staticmethod
    def alloc(shape: Tuple[int, ...], dtype: Any, device: int) -> "_DeviceStorage":
        from ._native import DeviceMemory

        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        return _DeviceStorage(DeviceMemory(n, int(device)), 0, shape, dt)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def ptr(self) -> int:
        return int(self.mem.ptr) + self.offset

    def to_host(self) -> np.ndarray:
        a = np.empty(self.shape, self.dtype)
        self.mem.read(self.offset, a)
        return a

    def write(self, data: np.ndarray) -> None:
        self.mem.write(self.offset, np.ascontiguousarray(data, dtype=self.dtype))


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


def _int_parts(idx: Any) -> Tuple[Any, ...]:
    """The indices of `buffer[idx]`, which must all be integers."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    if not all(isinstance(i, (int, np.integer)) for i in parts):
        raise TypeError("parpy buffers are indexed by integers only")
    return parts


def _reshaped(shape: Tuple[int, ...], dims: Tuple[Any, ...]) -> Tuple[int, ...]:
    """NumPy's new shape of an array of `shape` for `reshape(*dims)`: one
    dimension may be -1 (inferred); an error when the sizes differ."""
    new = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else tuple(dims)
    try:
        return tuple(np.empty(shape, np.bool_).reshape(new).shape)
    except ValueError:
        raise ValueError(f"Cannot reshape buffer of shape {shape} to {new}") from None


# DLPack's type codes (`DLDataTypeCode`) of NumPy's dtype kinds
_DLPACK_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}
_KDL_CPU = 1
_KDL_CUDA = 2


class BackendTag:
    """What `Buffer.backend` gives: it compares equal to the buffer's
    `CompileBackend` (`b.backend == parpy.CompileBackend.Cuda`) and, called,
    returns it (ParPy's `b.backend()`)."""

    __slots__ = ("value",)

    def __init__(self, value: CompileBackend) -> None:
        self.value = value

    def __call__(self) -> CompileBackend:
        return self.value

    def __eq__(self, other: object) -> bool:
        return self.value == (other.value if isinstance(other, BackendTag) else other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return repr(self.value)

    def __str__(self) -> str:
        return str(self.value)


class Buffer:
    """An array in a backend's memory (host memory for Cpu)."""

    __slots__ = ("buf", "shape", "dtype", "_backend", "__weakref__")

    def __init__(self, buf: _Storage, dtype: DataType, backend: Optional[CompileBackend]) -> None:
        self.buf = buf
        self.shape: Tuple[int, ...] = tuple(buf.array.shape)
        self.dtype = dtype
        self._backend = backend.value if isinstance(backend, BackendTag) else backend

    @property
    def backend(self) -> Optional[BackendTag]:
        """The backend whose memory holds the data (None: plain host
        memory); compares equal to a `CompileBackend`, and `b.backend()`
        returns it, as in ParPy."""
        return None if self._backend is None else BackendTag(self._backend)

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
        return Buffer(_Storage(self.buf.array.copy()), self.dtype, self._backend)

    def reshape(self, *dims: Union[int, Sequence[int]]) -> "Buffer":
        """A view of another shape (one dimension may be -1, as in NumPy)."""
        shape = _reshaped(self.shape, dims)
        return Buffer(_Storage(self.buf.array.reshape(shape), self.buf.src), self.dtype,
                      self._backend)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None,
                   dl_device: Any = None, copy: Any = None) -> Any:
        """The data through DLPack (`np.from_dlpack(b)`, `torch.from_dlpack(b)`):
        the host memory, shared (NumPy's own export of it)."""
        kw: Dict[str, Any] = {}
        for k, v in (("stream", stream), ("max_version", max_version),
                     ("dl_device", dl_device), ("copy", copy)):
            if v is not None:
                kw[k] = v
        return self.buf.array.__dlpack__(**kw)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (_KDL_CPU, 0)

    def with_type(self, elem: ElemType) -> "Buffer":
        """The data as element type `elem`: the same memory when the size is
        the same and both are integers (a sign change), else a converted copy."""
        e = _elem(elem)
        a = self.buf.array
        same_size = e.size() == a.dtype.itemsize
        if same_size and e.to_numpy().kind in "iu" and a.dtype.kind in "iu":
            return Buffer(_Storage(a.view(e.to_numpy()), self.buf.src), DataType(e), self._backend)
        return Buffer(_Storage(a.astype(e.to_numpy())), DataType(e), self._backend)

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

    def _np_dtype(self) -> np.dtype[Any]:
        return self.buf.array.dtype

    def __index__(self) -> int:
        if self._np_dtype().kind not in "iu":
            raise TypeError("only an integer buffer can be used as an index")
        return int(self._scalar("int"))

    def __getitem__(self, idx: Any) -> Any:
        """An element (all dimensions indexed by ints) or a view buffer."""
        parts = _int_parts(idx)
        r = self.buf.array[idx]  # raises IndexError out of bounds
        if len(parts) == self.buf.array.ndim:
            return r.item() if isinstance(r, np.ndarray) else r
        return Buffer(_Storage(r, self.buf.src), self.dtype, self._backend)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d buffer")
        return self.shape[0]

    def __repr__(self) -> str:
        where = "host" if self._backend in (None, CompileBackend.Cpu) else str(self._backend)
        return f"parpy.buffer.Buffer(shape={self.shape}, dtype={self.dtype.elem!r}, {where})"


class CudaBuffer(Buffer):
    """An array in CUDA device memory that parpy owns (`buf` is its
    `_DeviceStorage`; views made by indexing share it)."""

    __slots__ = ()

    def __init__(self, buf: Any, dtype: DataType, backend: Optional[CompileBackend] = None) -> None:
        self.buf = buf
        self.shape = buf.shape
        self.dtype = dtype
        self._backend = CompileBackend.Cuda

    @property
    def device(self) -> int:
        """The CUDA device index of the memory."""
        return int(self.buf.mem.device)

    # jit functions take the buffer in place, as a device array
    @property
    def __cuda_array_interface__(self) -> Any:
        return {
            "shape": self.shape,
            "typestr": self.buf.dtype.str,
            "data": (self.buf.ptr, False),
            "strides": None,
            "version": 3,
        }

    @property
    def __parpy_host_array__(self) -> Any:
        raise AttributeError("a Cuda buffer is not in host memory")

    @property
    def __array_interface__(self) -> Any:
        raise AttributeError("a Cuda buffer is not in host memory; use .numpy()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def _get_ptr(self) -> int:
        return self.buf.ptr

    def size(self) -> int:
        return self.buf.nbytes

    def sync(self) -> None:
        """Waits for all work parpy queued on the device."""
        sync(CompileBackend.Cuda)

    def numpy(self) -> np.ndarray:
        """A copy of the data in host memory (after the work queued before)."""
        sync(CompileBackend.Cuda)
        return self.buf.to_host()

    def torch(self) -> Any:
        """A torch tensor on the buffer's device sharing its memory."""
        import torch

        return torch.as_tensor(self, device=f"cuda:{self.device}")

    def copy_from(self, src: Any) -> None:
        if isinstance(src, CudaBuffer):
            if src.shape != self.shape or src.buf.dtype != self.buf.dtype:
                raise ValueError(
                    f"cannot copy a buffer of shape {src.shape} and {src.dtype} into one of "
                    f"shape {self.shape} and {self.dtype}"
                )
            sync(CompileBackend.Cuda)
            self.buf.mem.copy_from(self.buf.offset, src.buf.mem, src.buf.offset, self.size())
            return
        data, _ = _host_view(src)
        if tuple(data.shape) != self.shape:
            raise ValueError(
                f"cannot copy data of shape {tuple(data.shape)} into a buffer of shape {self.shape}"
            )
        tmp = np.empty(self.shape, self.buf.dtype)
        np.copyto(tmp, data, casting="same_kind")
        sync(CompileBackend.Cuda)
        self.buf.write(tmp)

    def copy(self) -> "CudaBuffer":
        out = _DeviceStorage.alloc(self.shape, self.buf.dtype, self.device)
        sync(CompileBackend.Cuda)
        out.mem.copy_from(0, self.buf.mem, self.buf.offset, self.size())
        return CudaBuffer(out, self.dtype)

    def reshape(self, *dims: Union[int, Sequence[int]]) -> "CudaBuffer":
        shape = _reshaped(self.shape, dims)
        b = self.buf
        return CudaBuffer(_DeviceStorage(b.mem, b.offset, shape, b.dtype), self.dtype)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None,
                   dl_device: Any = None, copy: Any = None) -> Any:
        """The device memory through DLPack (`torch.from_dlpack(b)`,
        `cupy.from_dlpack(b)`): a kDLCUDA tensor sharing it, after the work
        parpy queued on the device (ready for any stream)."""
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(
                f"parpy.buffer: a Cuda buffer on cuda:{self.device} cannot be exported to "
                f"DLPack device {tuple(dl_device)} (copy it with .numpy())"
            )
        if copy:
            raise BufferError("parpy.buffer: a Cuda buffer's DLPack export shares its memory "
                              "(copy=True is not supported; use .copy() first)")
        sync(CompileBackend.Cuda)
        b = self.buf
        return b.mem.dlpack(b.offset, list(self.shape), _DLPACK_CODES[b.dtype.kind],
                            b.dtype.itemsize * 8)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (_KDL_CUDA, self.device)

    def with_type(self, elem: ElemType) -> "CudaBuffer":
        e = _elem(elem)
        b = self.buf
        to = np.dtype(e.to_numpy())
        if to.itemsize == b.dtype.itemsize and to.kind in "iu" and b.dtype.kind in "iu":
            return CudaBuffer(_DeviceStorage(b.mem, b.offset, b.shape, to), DataType(e))
        out = _DeviceStorage.alloc(b.shape, to, self.device)
        out.write(self.numpy().astype(to))
        return CudaBuffer(out, DataType(e))

    def _scalar(self, what: str) -> Any:
        if int(np.prod(self.shape, dtype=np.int64)) != 1:
            raise ValueError(
                f"only a buffer with one element can be converted to {what}, this one has "
                f"shape {self.shape}"
            )
        return self.numpy().reshape(()).item()

    def _np_dtype(self) -> np.dtype[Any]:
        return self.buf.dtype

    def __getitem__(self, idx: Any) -> Any:
        parts = _int_parts(idx)
        if len(parts) > len(self.shape):
            raise IndexError(
                f"too many indices for a buffer of shape {self.shape}: {len(parts)}"
            )
        b = self.buf
        offset = b.offset
        stride = int(np.prod(self.shape, dtype=np.int64)) * b.dtype.itemsize
        for k, i in enumerate(parts):
            n = self.shape[k]
            stride //= max(n, 1)
            j = int(i) + n if int(i) < 0 else int(i)
            if not 0 <= j < n:
                raise IndexError(
                    f"index {int(i)} is out of bounds for dimension {k} with size {n}"
                )
            offset += j * stride
        view = CudaBuffer(_DeviceStorage(b.mem, offset, self.shape[len(parts):], b.dtype),
                          self.dtype)
        if len(parts) == len(self.shape):
            return view._scalar("a value")
        return view

    def __repr__(self) -> str:
        return (f"parpy.buffer.Buffer(shape={self.shape}, dtype={self.dtype.elem!r}, "
                f"cuda:{self.device})")


def _device_of(t: Any) -> int:
    """The CUDA device of a torch CUDA tensor (else 0)."""
    dev = getattr(t, "device", None)
    if getattr(dev, "type", None) == "cuda" and getattr(dev, "index", None) is not None:
        return int(dev.index)
    return 0


def _to_host(t: Any) -> np.ndarray:
    """`t` (a NumPy array, torch tensor on any device, CuPy array, buffer,
    or anything NumPy reads) as a C-contiguous NumPy array."""
    if isinstance(t, CudaBuffer):
        return t.numpy()
    if hasattr(t, "detach") and hasattr(t, "cpu"):
        return np.ascontiguousarray(t.detach().cpu().numpy())
    if hasattr(t, "__cuda_array_interface__") and hasattr(t, "get"):  # CuPy
        return np.ascontiguousarray(t.get())
    return _host_view(t)[0]


def _cuda_from_host(a: np.ndarray, device: int) -> CudaBuffer:
    st = _DeviceStorage.alloc(tuple(a.shape), a.dtype, device)
    st.write(a)
    return CudaBuffer(st, DataType.from_numpy(a.dtype))


def from_array(t: Any, backend: Optional[CompileBackend], device: Optional[int] = None) -> Buffer:
    """A buffer holding the data of `t` (a NumPy array, a torch tensor or
    anything NumPy can read); in host memory it shares `t`'s memory when
    `t` is C-contiguous."""
    if _on_device(backend, "buffers"):
        a = _to_host(t)
        DataType.from_numpy(a.dtype)  # a supported dtype, before allocating
        return _cuda_from_host(a, _device_of(t) if device is None else device)
    a, shared = _host_view(t)
    return Buffer(_Storage(a, t if shared else None), DataType.from_numpy(a.dtype), backend)


def empty(shape: Sequence[int], dtype: Any, backend: Optional[CompileBackend],
          device: int = 0) -> Buffer:
    e = _elem(dtype)
    if _on_device(backend, "buffers"):
        return CudaBuffer(_DeviceStorage.alloc(tuple(shape), e.to_numpy(), device), DataType(e))
    return Buffer(_Storage(np.empty(tuple(shape), e.to_numpy())), DataType(e), backend)


def zeros(shape: Sequence[int], dtype: Any, backend: Optional[CompileBackend],
          device: int = 0) -> Buffer:
    e = _elem(dtype)
    if _on_device(backend, "buffers"):
        st = _DeviceStorage.alloc(tuple(shape), e.to_numpy(), device)
        st.mem.zero(0, st.nbytes)
        return CudaBuffer(st, DataType(e))
    return Buffer(_Storage(np.zeros(tuple(shape), e.to_numpy())), DataType(e), backend)


def _device_kw(b: Buffer) -> int:
    return b.device if isinstance(b, CudaBuffer) else 0


def empty_like(b: Buffer) -> Buffer:
    return empty(b.shape, b.dtype, b._backend, _device_kw(b))


def zeros_like(b: Buffer) -> Buffer:
    return zeros(b.shape, b.dtype, b._backend, _device_kw(b))


def from_raw(ptr: int, shape: Sequence[int], dtype: Any,
             backend: Optional[CompileBackend]) -> Buffer:
    """A buffer over host memory at address `ptr` that the caller keeps
    alive (Cpu; device memory at a raw address is not taken: wrap it in an
    object with `__cuda_array_interface__` and pass that to jit functions)."""
    if _on_device(backend, "raw buffers"):
        raise RuntimeError(
            "parpy.buffer.from_raw: raw device addresses are not taken (parpy cannot know "
            "the memory's size or owner); pass an object with __cuda_array_interface__ "
            "(a torch or CuPy array) to jit functions instead, or use from_array"
        )
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
