"""Kernel set-up, static allocation and the small utilities the Ascend C samples lean on.

`InitSocState`, `LocalMemAllocator<Hardware::X>`, `EVENT_ID0..7`, `ONE_BLK_SIZE`,
`IsSameType`, `Conditional`, `DivCeil`, `GetSystemCycle`, `DataSyncBarrier` / `MemDsbT`
(`SyncAll`: `blocksync.py`).
Template arguments arrive as leading call arguments (see `level0.py`):
`ubAllocator.Alloc<half, 256>()` → `ubAllocator.Alloc(half, 256)`,
`LocalMemAllocator<Hardware::UB>` → `LocalMemAllocator(Hardware.UB)`.
"""

from __future__ import annotations

import sys
from enum import Enum

from ..npu import state
from ..npu.errors import KernelError
from .corestate import registers
from .dtypes import as_dtype
from .enums import PIPE_ALL, TPosition
from .memory.pipe import TBuf, TPipe
from .sync.sync import PipeBarrier

EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 = range(8)
ONE_BLK_SIZE = 32  # bytes in one data block
ONE_REPEAT_BYTE_SIZE = 256  # bytes one vector repeat covers
DEFAULT_BLK_NUM = 8  # blocks per repeat
DEFAULT_C0_SIZE = 32  # bytes of one fractal row (C0)
MAX_REPEAT_TIMES = 255


class Hardware(Enum):
    """Local memories a `LocalMemAllocator` can carve (values are the emulator's memory names)."""

    GM = "gm"
    UB = "ub"
    L1 = "l1"
    L0A = "l0a"
    L0B = "l0b"
    L0C = "l0c"
    BIAS = "bt"
    FIXBUF = "fb"


_POSITION = {
    Hardware.UB: TPosition.VECCALC,
    Hardware.L1: TPosition.A1,
    Hardware.L0A: TPosition.A2,
    Hardware.L0B: TPosition.B2,
    Hardware.L0C: TPosition.CO1,
}


def GetTPipePtr():
    """The TPipe the kernel created last (`GetTPipePtr()->FetchEventID(...)`)."""
    pipe = registers(state.core)[3].get("tpipe")
    if pipe is None:
        fr = sys._getframe(1)
        raise KernelError("GetTPipePtr() before any TPipe was created", fr.f_code.co_filename, fr.f_lineno)
    return pipe


def InitSocState() -> None:
    """Reset the core's global state registers: here, the vector mask (normal mode, all on)."""
    core = state.core
    if core is not None:
        tpipe = core.vmask[3].get("tpipe") if core.vmask is not None else None
        core.vmask = None
        if tpipe is not None:
            registers(core)[3]["tpipe"] = tpipe


def IsSameType(a, b) -> bool:
    """`IsSameType<A, B>::value`."""
    try:
        return as_dtype(a) == as_dtype(b)
    except (TypeError, ValueError):
        return a is b


def Conditional(cond, if_true, if_false):
    """`Conditional<cond, A, B>::type` (as std::conditional): A when cond holds, else B. The C++
    front end evaluates it on the types of each template instantiation."""
    return if_true if cond else if_false


def DivCeil(a: int, b: int) -> int:
    """`DivCeil(a, b)`: ⌈a / b⌉ for non-negative integers."""
    return -(-int(a) // int(b))


CeilDivision = DivCeil


def GetSystemCycle() -> int:
    """The core's scalar clock in cycles (the emulator's time of this call)."""
    core = state.core
    core.scalar(core.chip.scalar_value, "GetSystemCycle", sys._getframe(1))
    core.run.clock_read = True  # (a shared-HBM rerun's path may then differ: npu/memory/shared_hbm.py)
    return int(core.ts)


def DataSyncBarrier(*_mem) -> None:
    """`DataSyncBarrier<MemDsbT::X>()`: memory writes complete before later scalar accesses.

    The emulator's memories are coherent at each instruction, so this orders only time: the
    scalar unit waits for every pipe, like `PipeBarrier<PIPE_ALL>`.
    """
    PipeBarrier(PIPE_ALL, _depth=2)


def SetPadValue(*args) -> None:
    """`SetPadValue<T>(value)`: what DataCopyPad writes into the 32 B tail of each block when
    its DataCopyPadExtParams do not ask for padding (`isPad = false`)."""
    core = state.core
    core.scalar(core.chip.scalar_value, "SetPadValue", sys._getframe(1))
    registers(core)[3]["pad"] = args[-1]


class MemDsbT(Enum):
    ALL = 0
    DDR = 1
    UB = 2
    SEQ = 3


class LocalMemAllocator:
    """`LocalMemAllocator<Hardware::X>`: consecutive buffers of one local memory.

    `Alloc(T, N)` (from `Alloc<T, N>()`), `Alloc(TPosition.P, T, N)` or `Alloc(T)` (the rest of
    the memory). The buffers count against the chip's capacity like `TPipe.InitBuffer`'s.
    """

    def __init__(self, hardware: Hardware = Hardware.UB):
        if not isinstance(hardware, Hardware):
            fr = sys._getframe(1)
            raise KernelError(
                f"LocalMemAllocator expects a Hardware member, got {hardware!r}",
                fr.f_code.co_filename,
                fr.f_lineno,
            )
        self.hardware = hardware
        self._pipe = None

    def Alloc(self, *args):
        pos = _POSITION.get(self.hardware, TPosition.VECCALC)
        dtype = None
        count = None
        for a in args:
            if isinstance(a, TPosition):
                pos = a
            elif isinstance(a, (int,)) and not isinstance(a, bool) or hasattr(a, "__index__"):
                count = int(a)
            else:
                dtype = as_dtype(a)
        if dtype is None:
            fr = sys._getframe(1)
            raise KernelError(
                "LocalMemAllocator.Alloc needs an element type", fr.f_code.co_filename, fr.f_lineno
            )
        core = state.core
        if self._pipe is None:
            extras = registers(core)[3]
            current = extras.get("tpipe")
            self._pipe = TPipe()  # a private pipe: GetTPipePtr() keeps the user's
            if current is None:
                extras.pop("tpipe", None)
            else:
                extras["tpipe"] = current
        if count is None:
            mem = self.hardware.value
            count = (core.chip.usable.get(mem, 0) - core.allocated.get(mem, 0)) // dtype.itemsize
        buf = TBuf(pos)
        self._pipe.InitBuffer(buf, count * dtype.itemsize)
        return buf.Get(dtype, count)

    def GetCurAddr(self) -> int:
        return state.core.allocated.get(self.hardware.value, 0)
