"""Scalar GM access that bypasses the data cache: `ReadGmByPassDCache<T>(addr)` and
`WriteGmByPassDCache<T>(addr, value)`, with `addr` a GM_ADDR (`(__gm__ T*)x + n`) or a
GlobalTensor (its first element). Each costs a scalar GM access (`scalar.gm_value_cycles`).

Blocks run one after another on the emulator, so a value one block writes is visible to every
later block: a flag handshake where the earlier block writes and the later one polls works; one
where an earlier block waits for a later one would spin (the launch's timeout stops it).
"""

from __future__ import annotations

import sys

import numpy as np

from ...npu import state
from ...npu.errors import KernelError, user_line_of
from ...npu.memory.gm import GM_ADDR
from ...npu.numbers.offload import gm_ready
from ..dtypes import as_dtype
from ..lineage import gm_written
from ..memory.tensors import GlobalTensor


def _split(args: tuple):
    dtype = None
    rest = list(args)
    while rest and not isinstance(rest[0], (GM_ADDR, GlobalTensor)):
        dtype = as_dtype(rest.pop(0))
    return dtype, rest


def _place(dtype, addr, fr) -> GlobalTensor:
    if isinstance(addr, GlobalTensor):
        g = addr if dtype is None or addr.dtype == dtype else None
        if g is None:
            raise KernelError("the GlobalTensor's type differs from the template type", *_where(fr))
        if g.limit < 1:
            raise KernelError(f"GM access outside the GlobalTensor '{g.name}'", *_where(fr))
        return g
    if not isinstance(addr, GM_ADDR):
        raise KernelError(f"expected a GM address, got {type(addr).__name__}", *_where(fr))
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(addr, 1)
    if g.limit < 1:
        raise KernelError(
            f"GM access outside the GlobalTensor '{g.name}': element {g.start} of a buffer of "
            f"{addr.buffer.count} elements",
            *_where(fr),
        )
    return g


def _where(fr):
    return user_line_of(fr)


def ReadGmByPassDCache(*args):
    g, _ = _scalar_access("ReadGmByPassDCache", args, False, sys._getframe(1))
    if g.arr is None:
        return g.dtype.type(1)  # shadow data, as GlobalTensor.GetValue
    gm_ready(g.buffer)
    return g.arr[g.start]


def WriteGmByPassDCache(*args) -> None:
    g, rest = _scalar_access("WriteGmByPassDCache", args, True, sys._getframe(1))
    if g.arr is not None:
        gm_ready(g.buffer)
        gm_written(g.buffer)
        g.arr[g.start] = np.asarray(rest[1]).astype(g.dtype)


def _scalar_access(op: str, args, is_write: bool, fr):
    """The one-element GlobalTensor at the address, timed as a scalar GM access and shown to
    the sanitizer; with the arguments after the address."""
    dtype, rest = _split(args)
    g = _place(dtype, rest[0], fr)
    core = state.core
    core.scalar(core.chip.scalar_gm_value, op, fr)
    if core.san is not None:
        core.san.access(core, g, 0, 1, is_write, fr)
    return g, rest
