"""Element types (`parpy.types.F32`, also `parpy.ElemSize.F32`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._builtins import convert_value

__all__ = [
    "ElemType", "Bool", "I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64",
    "F16", "F32", "F64", "ElemSize",
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
