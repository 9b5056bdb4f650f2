"""Element types (`parpy.types.F32`, also `parpy.ElemSize.F32`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._builtins import convert_value

__all__ = [
    "ElemType", "Bool", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64",
    "F16", "F32", "F64", "ElemSize", "Symbol", "TypeVar", "Buffer", "symbol",
    "type_var", "buffer",
]


class ElemType:
    """One element type. Usable in jit code wherever a dtype is expected
    (`parpy.builtin.convert(e, parpy.types.F32)`)."""

    __slots__ = ("name", "__parpy_dtype__")

    def __init__(self, name: str, numpy_name: str) -> None:
        self.name = name
        self.__parpy_dtype__ = numpy_name

    @property
    def dtype(self) -> np.dtype[Any]:
        """The NumPy dtype of this element type."""
        return np.dtype(self.__parpy_dtype__)

    def __call__(self, value: Any) -> Any:
        """Converts a value as `parpy.builtin.convert` does
        (`parpy.types.F32(1.5)`; integers wrap at the width)."""
        return convert_value(value, self.dtype)

    def to_numpy(self) -> np.dtype[Any]:
        """The NumPy dtype (ParPy's spelling of `.dtype`)."""
        return self.dtype

    def to_torch(self) -> Any:
        """The torch dtype of this element type (imports torch)."""
        import torch

        return getattr(torch, self.__parpy_dtype__)

    def size(self) -> int:
        """The size of one element in bytes."""
        return self.dtype.itemsize

    def __repr__(self) -> str:
        return f"parpy.types.{self.name}"


Bool = ElemType("Bool", "bool")
I8 = ElemType("I8", "int8")
I16 = ElemType("I16", "int16")
I32 = ElemType("I32", "int32")
I64 = ElemType("I64", "int64")
U8 = ElemType("U8", "uint8")
U16 = ElemType("U16", "uint16")
U32 = ElemType("U32", "uint32")
U64 = ElemType("U64", "uint64")
F16 = ElemType("F16", "float16")
F32 = ElemType("F32", "float32")
F64 = ElemType("F64", "float64")


class ElemSize:
    """The element types as a class namespace (`parpy.ElemSize.F32`)."""

    __parpy_namespace__ = True
    Bool = Bool
    I8 = I8
    I16 = I16
    I32 = I32
    I64 = I64
    U8 = U8
    U16 = U16
    U32 = U32
    U64 = U64
    F16 = F16
    F32 = F32
    F64 = F64


class Symbol:
    """A shape variable (`N = parpy.types.symbol()`): parameters annotated
    `parpy.types.buffer(T, [N])` must agree on `N`."""

    __slots__ = ("__weakref__",)
    __parpy_annotation__ = "symbol"

    def __repr__(self) -> str:
        return f"<parpy.types.symbol at {id(self):#x}>"


class TypeVar:
    """An element-type variable (`T = parpy.types.type_var()`): parameters
    annotated with the same variable must have the same element type."""

    __slots__ = ("__weakref__",)
    __parpy_annotation__ = "type_var"

    def __repr__(self) -> str:
        return f"<parpy.types.type_var at {id(self):#x}>"


class Buffer:
    """`parpy.types.buffer(elem, shape)`: an array annotation; `elem` is an
    element type or a `type_var()`, `shape` a list of ints and symbols."""

    __slots__ = ("elem", "shape")
    __parpy_annotation__ = "buffer"

    def __init__(self, elem: Any, shape: Any) -> None:
        if not isinstance(elem, (ElemType, TypeVar)):
            raise TypeError(
                "parpy.types.buffer(elem, shape): elem must be a parpy.types element "
                f"type or a type_var(), got {type(elem).__name__}"
            )
        dims = list(shape)
        for d in dims:
            if not isinstance(d, (int, Symbol)) or isinstance(d, bool):
                raise TypeError(
                    "parpy.types.buffer(elem, shape): shape must hold ints and "
                    f"parpy.types.symbol() values, got {type(d).__name__}"
                )
        self.elem = elem
        self.shape = tuple(dims)

    def __repr__(self) -> str:
        return f"parpy.types.buffer({self.elem!r}, {list(self.shape)!r})"


def symbol() -> Symbol:
    """A new shape variable."""
    return Symbol()


def type_var() -> TypeVar:
    """A new element-type variable."""
    return TypeVar()


def buffer(elem: Any, shape: Any) -> Buffer:
    """An array annotation with element type `elem` and dimensions `shape`."""
    return Buffer(elem, shape)
