"""Ascend C scalar types as numpy dtypes (bfloat16 and int4 via ml_dtypes).

`int4b_t` is the one packed type: two elements per byte, element 2i in the low nibble of byte i.
Its dtype identifies it (numpy's int4 itemsize is 1, and Ascend C's sizeof(int4b_t) is 1 too),
but a tensor of it keeps the packed bytes as its array (`typed_view`); only the APIs that take
int4b_t operands (Cast, the cube path: Nd2Nz copies, LoadData, Mmad) read them, via `int4.py`.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

half = np.dtype(np.float16)
float16 = half
float32 = np.dtype(np.float32)
float = float32  # noqa: A001 - Ascend C spells it `float`
bfloat16 = np.dtype(ml_dtypes.bfloat16)
int8 = np.dtype(np.int8)
uint8 = np.dtype(np.uint8)
int16 = np.dtype(np.int16)
uint16 = np.dtype(np.uint16)
int32 = np.dtype(np.int32)
uint32 = np.dtype(np.uint32)
int64 = np.dtype(np.int64)
uint64 = np.dtype(np.uint64)
int4b_t = np.dtype(ml_dtypes.int4)

_BY_NAME = {
    "half": half,
    "float16": half,
    "fp16": half,
    "float": float32,
    "float32": float32,
    "fp32": float32,
    "bfloat16": bfloat16,
    "bf16": bfloat16,
    "int8": int8,
    "uint8": uint8,
    "int16": int16,
    "uint16": uint16,
    "int32": int32,
    "uint32": uint32,
    "int64": int64,
    "uint64": uint64,
    "int4b_t": int4b_t,
    "int4": int4b_t,
}


_RESOLVED: dict = {}


def as_dtype(value) -> np.dtype:
    """Accept an Ascend C type object, a numpy dtype or a name such as "half" or "bf16"."""
    try:
        return _RESOLVED[value]
    except (KeyError, TypeError):
        pass
    dt = _as_dtype(value)
    try:
        _RESOLVED[value] = dt
    except TypeError:
        pass
    return dt


def _as_dtype(value) -> np.dtype:
    if isinstance(value, str):
        try:
            return _BY_NAME[value]
        except KeyError:
            raise ValueError(f"unknown dtype {value!r}; known: {', '.join(sorted(_BY_NAME))}") from None
    return np.dtype(value)


def sizeof(dtype) -> int:
    """`sizeof(half)` in bytes, as in C++."""
    return as_dtype(dtype).itemsize


def dtype_name(dtype) -> str:
    dt = as_dtype(dtype)
    return "bfloat16" if dt == bfloat16 else "int4b_t" if dt == int4b_t else dt.name


def is_int4(dtype) -> bool:
    return dtype == int4b_t


def nbytes_of(dtype, count: int) -> int:
    """Bytes that `count` elements occupy (packed for int4b_t)."""
    return (count + 1) // 2 if dtype == int4b_t else count * dtype.itemsize


def typed_view(raw: np.ndarray, dtype) -> np.ndarray:
    """Memory bytes `raw` (uint8) as a tensor's array: the elements, or the packed bytes of int4b_t."""
    return raw if dtype == int4b_t else raw.view(dtype)
