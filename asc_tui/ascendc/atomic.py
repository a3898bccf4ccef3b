"""GM atomics: `SetAtomicAdd<T>()`, `SetAtomicMax<T>()`, `SetAtomicMin<T>()` make every later
write to GM by DataCopy, DataCopyPad and Fixpipe combine with what GM holds (sum, max or min)
instead of overwriting it, until `SetAtomicNone()` or `DisableDmaAtomic()`. `SetAtomicType<T>()`
changes T and keeps the operation. The mode is per core (it lives with the core's special
registers, `corestate.py`); T must be the type the write stores.

Atomic writes from different blocks to the same GM do not race (racecheck knows them apart).
Timing: an atomic write is a read-modify-write near the memory: it costs
`dma.atomic_extra_cycles` on top of the write (chip TOML).
"""

from __future__ import annotations

import sys

import numpy as np

from ..npu import state
from ..npu.errors import KernelError
from .corestate import registers
from .dtypes import as_dtype, dtype_name

_OPS = {"add": np.add, "max": np.maximum, "min": np.minimum}


def _set(op: str | None, targs: tuple) -> None:
    core = state.core
    fr = sys._getframe(2)
    core.scalar(core.chip.scalar_value, f"SetAtomic{(op or 'none').capitalize()}", fr)
    dt = as_dtype(targs[0]) if targs else None
    extras = registers(core)[3]
    if op is None:
        extras.pop("atomic", None)
    else:
        extras["atomic"] = (op, dt)


def SetAtomicAdd(*targs) -> None:
    _set("add", targs)


def SetAtomicMax(*targs) -> None:
    _set("max", targs)


def SetAtomicMin(*targs) -> None:
    _set("min", targs)


def SetAtomicNone() -> None:
    _set(None, ())


DisableDmaAtomic = SetAtomicNone


def SetAtomicType(*targs) -> None:
    """`SetAtomicType<T>()`: the atomic operation stays, its element type becomes T."""
    core = state.core
    extras = registers(core)[3]
    op = extras.get("atomic", ("add", None))[0]
    extras["atomic"] = (op, as_dtype(targs[0]) if targs else None)


def atomic_of(core):
    """(op name, T or None) while an atomic mode is on, else None."""
    m = core.vmask
    return None if m is None else m[3].get("atomic")


def combine(core, dtype, fr):
    """The ufunc a GM write of `dtype` applies now (None: a plain store); checks T."""
    a = atomic_of(core)
    if a is None:
        return None
    op, dt = a
    if dt is not None and dt != dtype:
        raise KernelError(
            f"SetAtomic{op.capitalize()}<{dtype_name(dt)}> is on, but this write stores "
            f"{dtype_name(dtype)}: the atomic type must match the data written",
            fr.f_code.co_filename,
            fr.f_lineno,
        )
    return _OPS[op]


def store(core, arr: np.ndarray, where, values, fr) -> None:
    """`arr[where] = values` for a GM write, combined with GM's data when atomics are on."""
    fn = combine(core, arr.dtype, fr)
    if fn is None:
        arr[where] = values
    else:
        arr[where] = fn(arr[where], np.asarray(values).astype(arr.dtype, copy=False))


def store_bytes(core, dv: np.ndarray, sv: np.ndarray, dtype, fr) -> None:
    """`dv[...] = sv` over byte views (rows of whole `dtype` elements) of a GM write."""
    fn = combine(core, dtype, fr)
    if fn is None:
        dv[...] = sv
        return
    d, s = dv.view(dtype), sv.view(dtype)
    d[...] = fn(d, s)


def extra_cycles(core) -> float:
    """What atomics add to a GM write now (0 when off)."""
    if atomic_of(core) is None:
        return 0.0
    return float(core.chip.section("dma").get("atomic_extra_cycles", 0.0))


__all__ = [
    "SetAtomicAdd",
    "SetAtomicMax",
    "SetAtomicMin",
    "SetAtomicNone",
    "SetAtomicType",
    "DisableDmaAtomic",
]
