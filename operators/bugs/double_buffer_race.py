"""BUG (teaching case): hand-synchronised double buffering with one WaitFlag missing -> race.

Two ping-pong halves of a TBuf, with explicit events instead of queues: MTE2 fills half b and
sets MTE2_V; the vector pipe must wait for it before computing. The WaitFlag(MTE2_V) was lost in
a refactor, so the vector pipe may read half b while MTE2 is still writing it. The emulator
executes the copy before the compute, so the numbers even look right; on hardware they would be
garbage now and then. `asc-tui debug bugs/double_buffer_race --tool racecheck` names both lines.
"""

from dataclasses import dataclass

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GM_ADDR, GlobalTensor, HardEvent, QuePosition, TBuf, TPipe, half
from asc_tui.operator import In, Launch, Out

CASES = {"default": dict(n=8 * 1024)}
TILE = 1024


@dataclass(frozen=True)
class Tiling:
    n: int
    tile: int


def tensors(case):
    return {"x": In(case.n, half), "y": Out(case.n, half)}


def tiling(case, p):
    return Launch(1, Tiling(case.n, TILE))


def golden(case, x):
    return (x * 2).astype(x.dtype)


class KernelScale:
    def Init(self, x: GM_ADDR, y: GM_ADDR, t: Tiling):
        self.n, self.tile = t.n, t.tile
        self.x_gm, self.y_gm = GlobalTensor(half), GlobalTensor(half)
        self.x_gm.SetGlobalBuffer(x, t.n)
        self.y_gm.SetGlobalBuffer(y, t.n)
        self.pipe = TPipe()
        self.in_buf, self.out_buf = TBuf(QuePosition.VECCALC), TBuf(QuePosition.VECCALC)
        self.pipe.InitBuffer(self.in_buf, 2 * t.tile * 2)
        self.pipe.InitBuffer(self.out_buf, 2 * t.tile * 2)

    def Process(self):
        x_all, y_all = self.in_buf.Get(half), self.out_buf.Get(half)
        tiles = self.n // self.tile
        for i in range(tiles):
            b = i % 2
            x_local, y_local = x_all[b * self.tile], y_all[b * self.tile]
            if i >= 2:
                AscendC.WaitFlag(HardEvent.V_MTE2, b)  # half b no longer read by the vector pipe
            AscendC.DataCopy(x_local, self.x_gm[i * self.tile], self.tile)
            AscendC.SetFlag(HardEvent.MTE2_V, b)
            # BUG: missing AscendC.WaitFlag(HardEvent.MTE2_V, b)
            if i >= 2:
                AscendC.WaitFlag(HardEvent.MTE3_V, b)  # out half b written back
            AscendC.Muls(y_local, x_local, 2.0, self.tile)
            AscendC.SetFlag(HardEvent.V_MTE2, b)
            AscendC.SetFlag(HardEvent.V_MTE3, b)
            AscendC.WaitFlag(HardEvent.V_MTE3, b)
            AscendC.DataCopy(self.y_gm[i * self.tile], y_local, self.tile)
            AscendC.SetFlag(HardEvent.MTE3_V, b)
        for b in range(min(tiles, 2)):  # drain the events of the last two tiles
            AscendC.WaitFlag(HardEvent.V_MTE2, b)
            AscendC.WaitFlag(HardEvent.MTE3_V, b)


@AscendC.kernel
def double_buffer_race(x: GM_ADDR, y: GM_ADDR, tiling: Tiling):
    op = KernelScale()
    op.Init(x, y, tiling)
    op.Process()
