"""Ascend C names the kernel API twin does not have yet, built from what it has.

Only thin compositions of twin calls (no second engine): `LocalMemAllocator` carves buffers
with a TPipe and TBufs, `EVENT_ID0..7` are event ids, `InitSocState` sets nothing the emulator
models. Generated code reaches them as `_cx.shims.<name>`.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from .. import ascendc as _AC
from ..ascendc.dtypes import as_dtype
from ..ascendc.enums import TPosition
from ..ascendc.vector import _scalar_op

EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 = range(8)


class Hardware(Enum):
    UB = "ub"
    L1 = "l1"
    L0A = "l0a"
    L0B = "l0b"
    L0C = "l0c"
    BIAS = "bt"
    FIXBUF = "fb"


_DEFAULT_POSITION = {
    Hardware.UB: TPosition.VECCALC,
    Hardware.L1: TPosition.A1,
    Hardware.L0A: TPosition.A2,
    Hardware.L0B: TPosition.B2,
    Hardware.L0C: TPosition.CO1,
}


def InitSocState() -> None:  # noqa: N802 - Ascend C's spelling
    """Hardware state set-up: nothing the emulator models."""


def DivCeil(a: int, b: int) -> int:  # noqa: N802
    """`DivCeil(a, b)` on non-negative integers."""
    return -(-int(a) // int(b))


class LocalMemAllocator:
    """`LocalMemAllocator<Hardware::X>`: hands out consecutive buffers of one local memory.

    `Alloc<T, N>()`, `Alloc<TPosition::P, T>(count)` arrive as `Alloc(T, N)` and
    `Alloc(P, T, count)` (template arguments first)."""

    def __init__(self, hardware: Hardware = Hardware.UB):
        self.hardware = hardware
        self._pipe = None

    def Alloc(self, *args):  # noqa: N802
        args = list(args)
        pos = args.pop(0) if args and isinstance(args[0], TPosition) else _DEFAULT_POSITION[self.hardware]
        dtype = as_dtype(args.pop(0))
        count = int(args.pop(0))
        if self._pipe is None:
            self._pipe = _AC.TPipe()
        buf = _AC.TBuf(pos)
        self._pipe.InitBuffer(buf, count * dtype.itemsize)
        return buf.Get(dtype, count)


def _leaky(a, alpha, out):
    np.copyto(out, np.where(a >= 0, a, a * alpha))


#: `LeakyRelu(dst, src, alpha, count)`: one PIPE_V instruction, built like the twin's Muls/Maxs.
LeakyRelu = _scalar_op("LeakyRelu", _leaky)

NAMES = {
    n
    for n in dir()
    if not n.startswith("_") and n not in ("annotations", "Enum", "TPosition", "as_dtype", "np")
}
