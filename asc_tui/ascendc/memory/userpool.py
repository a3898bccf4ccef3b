"""`EXTERN_IMPL_BUFPOOL(Cls, pos, n)`: a user's class made a buffer pool (cxx/source/preprocess.py
expands the macro into an `ExternBufPool` member and the macro's methods forwarding to it).

The pool's memory comes from `pipe.InitBufPool(pool, len)` as for a TBufPool; the user then
places each buffer himself (`que.InitStartBufHandle(handle, num, len)` and
`que.InitBufHandle(pool, i, handle, addr, len)`, queue.py), anywhere inside the pool, which lets
queues share or skip memory. A buffer outside the pool, misaligned, or a handle past
BUFID_SIZE is an error at the user's line.
"""

from __future__ import annotations

from ..enums import TPosition
from .bufpool import TBufPool, round_up


class ExternBufPool(TBufPool):
    """What `EXTERN_IMPL_BUFPOOL(Cls, pos, n)` gives a user's class: a pool whose buffers the
    user places himself (TQue/TBuf `InitStartBufHandle` + `InitBufHandle` at any address of the
    pool), with the macro's Reset/Init/GetBufHandle/Get|SetCurAddr/Get|SetCurBufSize."""

    def __init__(self, position: TPosition = TPosition.VECCALC, bufIDSize: int = 16):
        super().__init__(position, bufIDSize)
        self.buf_ids = int(bufIDSize)
        self.cur_addr = 0
        self.cur_buf = 0

    def _reserve(self, owner, length: int, shared=None) -> None:
        super()._reserve(owner, length, shared)
        self.cur_addr, self.cur_buf = self.base, 0

    def Init(self) -> None:
        self.cur_addr, self.cur_buf = self.base, 0

    def Reset(self) -> None:
        self.Init()

    def GetBufHandle(self, index: int) -> int:
        """The handle of buffer `index` (a number here; the hardware's is a pointer)."""
        if not 0 <= int(index) < self.buf_ids:
            self._fail(f"GetBufHandle({int(index)}): the pool has {self.buf_ids} buffer ids (BUFID_SIZE)")
        return int(index)

    def GetCurAddr(self) -> int:
        return self.cur_addr

    def SetCurAddr(self, addr: int) -> None:
        self.cur_addr = int(addr)

    def GetCurBufSize(self) -> int:
        return self.cur_buf

    def SetCurBufSize(self, n: int) -> None:
        self.cur_buf = int(n)

    def place(self, handle: int, addr: int, length: int) -> int:
        """Check buffer `handle` at [addr, addr+length) lies in the pool; its aligned length."""
        if self.pipe is None:
            self._fail("InitBufHandle before pipe.InitBufPool gave the pool memory")
        if not 0 <= int(handle) < self.buf_ids:
            self._fail(f"InitBufHandle with handle {int(handle)}: the pool has {self.buf_ids} buffer ids")
        align = max(self.pipe.core.chip.alignment.get(self.mem, 32), 32)
        n = round_up(int(length), align)
        if addr % align or addr < self.base or addr + n > self.base + self.size:
            self._fail(
                f"InitBufHandle places {n} B at {self.mem.upper()}+{addr}, outside the pool "
                f"[{self.base}, {self.base + self.size}) or not {align} B aligned"
            )
        return n
