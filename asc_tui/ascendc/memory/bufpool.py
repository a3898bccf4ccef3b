"""`TBufPool<pos, bufIDSize>`: a region of one local memory that queues and buffers share.

`pipe.InitBufPool(pool, len[, sharedPool])` reserves the region (or reuses the region of
`sharedPool`, so two pools overlap as on hardware); `pool.InitBufPool(sub, len[, shared])` carves
a sub-pool; `pool.InitBuffer(que, num, len)` / `pool.InitBuffer(buf, len)` place buffers in it
one after another; `pool.Reset()` rewinds the pool so that later InitBuffers reuse its bytes.
Queues of a pool take part in the owning TPipe's event-id accounting.
"""

from __future__ import annotations

from ...npu.errors import KernelError, user_frame
from ..enums import POSITION_MEMORY, TPosition
from .pipe import TBuf, TPipe
from .queue import pool_of


def round_up(n: int, a: int) -> int:
    """n rounded up to a multiple of a (buffer sizes and alignments, bytes)."""
    return (n + a - 1) // a * a


class TBufPool:
    def __init__(self, position: TPosition = TPosition.VECCALC, bufIDSize: int = 4):
        self.position = position
        self.mem = POSITION_MEMORY[position]
        self.pipe: TPipe | None = None
        self.base = 0
        self.size = 0
        self.cursor = 0

    def _fail(self, message: str):
        fr = user_frame()
        raise KernelError(message, fr.f_code.co_filename, fr.f_lineno, hint="make the pool larger")

    def _reserve(self, owner, length: int, shared=None) -> None:
        """Take `length` bytes from `owner` (a TPipe, or a parent pool)."""
        pipe = owner if isinstance(owner, TPipe) else owner.pipe
        core = pipe.core
        align = max(core.chip.alignment.get(self.mem, 32), 32)
        length = round_up(length, align)
        self.pipe, self.size, self.cursor = pipe, length, 0
        if shared is not None:
            if length > shared.size:
                self._fail(f"InitBufPool of {length} B shares a pool of only {shared.size} B")
            self.base = shared.base
            return
        if isinstance(owner, TPipe):
            used = core.allocated.get(self.mem, 0)
            cap = core.chip.usable.get(self.mem, 0)
            if used + length > cap:
                self._fail(
                    f"InitBufPool needs {length} B of {self.mem.upper()}; {used} B are already "
                    f"taken and {core.chip.name} has {cap} B"
                )
            self.base = used
            core.allocated[self.mem] = used + length
            peak = core.run.peak
            peak[self.mem] = max(peak.get(self.mem, 0), used + length)
        else:
            if owner.cursor + length > owner.size:
                self._fail(
                    f"InitBufPool needs {length} B but the parent pool has {owner.size - owner.cursor} B left"
                )
            self.base = owner.base + owner.cursor
            owner.cursor += length

    def InitBufPool(self, sub: TBufPool, length: int, shared: TBufPool | None = None) -> None:
        sub = pool_of(sub)
        sub._reserve(self, int(length), None if shared is None else pool_of(shared))

    def InitBuffer(self, que, num_or_len: int, length: int | None = None) -> None:
        if self.pipe is None:
            self._fail("TBufPool.InitBuffer before pipe.InitBufPool gave the pool memory")
        core = self.pipe.core
        nbuf, nbytes = (1, int(num_or_len)) if isinstance(que, TBuf) else (int(num_or_len), int(length))
        align = max(core.chip.alignment.get(self.mem, 32), 32)
        need = nbuf * round_up(max(nbytes, 0), align)
        if self.cursor + need > self.size:
            self._fail(
                f"TBufPool.InitBuffer needs {need} B but the pool has {self.size - self.cursor} B "
                f"of its {self.size} B left"
            )
        # place the buffers at the pool's cursor, with TPipe's checks and bookkeeping
        saved = core.allocated.get(self.mem, 0)
        core.allocated[self.mem] = self.base + self.cursor
        try:
            if isinstance(que, TBuf):
                self.pipe.InitBuffer(que, nbytes)
            else:
                self.pipe.InitBuffer(que, nbuf, nbytes)
        finally:
            core.allocated[self.mem] = saved
        self.cursor += need

    def Reset(self) -> None:
        """Rewind: later InitBuffers reuse the pool's bytes from its start."""
        self.cursor = 0
