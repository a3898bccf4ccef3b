"""Ascend C scalar types as numpy dtypes (bfloat16 and int4 via ml_dtypes).

`bfloat16` and `int4b_t` are made on first use (`from .dtypes import bfloat16` or the name given
to `as_dtype`): importing ml_dtypes costs about 0.5 s of CPU (numpy registers each of its ufunc
loops), more than numpy and the whole emulator together, and every worker child and CLI start
would pay it for operators that use neither type. Only a user-defined dtype (`isbuiltin == 2`,
as ml_dtypes' are) can be one of them, so `is_int4` and `dtype_name` never load it for the
builtin ones.

`int4b_t` is the one packed type: two elements per byte, element 2i in the low nibble of byte i.
Its dtype identifies it (numpy's int4 itemsize is 1, and Ascend C's sizeof(int4b_t) is 1 too),
but a tensor of it keeps the packed bytes as its array (`typed_view`); only the APIs that take
int4b_t operands (Cast, the cube path: Nd2Nz copies, LoadData, Mmad) read them, via `int4.py`.
"""

from __future__ import annotations

import re

import numpy as np

half = np.dtype(np.float16)
float16 = half
float32 = np.dtype(np.float32)
float = float32  # noqa: A001 - Ascend C spells it `float`
int8 = np.dtype(np.int8)
uint8 = np.dtype(np.uint8)
int16 = np.dtype(np.int16)
uint16 = np.dtype(np.uint16)
int32 = np.dtype(np.int32)
uint32 = np.dtype(np.uint32)
int64 = np.dtype(np.int64)
uint64 = np.dtype(np.uint64)

_BY_NAME = {
    "half": half,
    "float16": half,
    "fp16": half,
    "float": float32,
    "float32": float32,
    "fp32": float32,
    "int8": int8,
    "uint8": uint8,
    "int16": int16,
    "uint16": uint16,
    "int32": int32,
    "uint32": uint32,
    "int64": int64,
    "uint64": uint64,
}
#: the names of ml_dtypes' types (added to _BY_NAME once it is loaded)
_ML_NAMES = {"bfloat16": "bfloat16", "bf16": "bfloat16", "int4b_t": "int4b_t", "int4": "int4b_t"}
LAZY = ("bfloat16", "int4b_t")


def _load_ml_dtypes() -> None:
    import ml_dtypes

    g = globals()
    g["bfloat16"] = np.dtype(ml_dtypes.bfloat16)
    g["int4b_t"] = np.dtype(ml_dtypes.int4)
    _BY_NAME.update({name: g[target] for name, target in _ML_NAMES.items()})


def __getattr__(name: str):
    """`bfloat16` and `int4b_t`, made on first use (see the module docstring)."""
    if name in LAZY:
        _load_ml_dtypes()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: ml_dtypes' type names (and the twin's): numpy knows them only once ml_dtypes is imported
_ML_NAME = re.compile(r"bf16|bfloat16|u?int[24]|int4b_t|float[468]_\w+")


def load_if_named(value) -> None:
    """Load ml_dtypes when `value` is a string naming one of its types, so that operator code
    given it (`np.dtype(case.dtype)` with dtype="bfloat16") finds numpy knowing the name."""
    if value.__class__ is str and "bfloat16" not in _BY_NAME and _ML_NAME.fullmatch(value):
        _load_ml_dtypes()


def _ml(name: str) -> np.dtype:
    dt = globals().get(name)
    if dt is None:
        _load_ml_dtypes()
        dt = globals()[name]
    return dt


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
            if value in _ML_NAMES:
                return _ml(_ML_NAMES[value])
            known = ", ".join(sorted({*_BY_NAME, *_ML_NAMES}))
            raise ValueError(f"unknown dtype {value!r}; known: {known}") from None
    return np.dtype(value)


def sizeof(dtype) -> int:
    """`sizeof(half)` in bytes, as in C++."""
    return as_dtype(dtype).itemsize


def dtype_name(dtype) -> str:
    dt = as_dtype(dtype)
    if dt.isbuiltin == 2:
        if dt == _ml("bfloat16"):
            return "bfloat16"
        if dt == _ml("int4b_t"):
            return "int4b_t"
    return dt.name


def is_int4(dtype) -> bool:
    """`dtype` (a numpy dtype) is int4b_t; never loads ml_dtypes for a builtin dtype."""
    return dtype.isbuiltin == 2 and dtype == _ml("int4b_t")


def is_bf16(dtype) -> bool:
    """`dtype` (a numpy dtype) is bfloat16; never loads ml_dtypes for a builtin dtype."""
    return dtype.isbuiltin == 2 and dtype == _ml("bfloat16")


def nbytes_of(dtype, count: int) -> int:
    """Bytes that `count` elements occupy (packed for int4b_t)."""
    return (count + 1) // 2 if is_int4(dtype) else count * dtype.itemsize


def typed_view(raw: np.ndarray, dtype) -> np.ndarray:
    """Memory bytes `raw` (uint8) as a tensor's array: the elements, or the packed bytes of int4b_t."""
    return raw if is_int4(dtype) else raw.view(dtype)
