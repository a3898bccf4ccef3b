"""BUG (teaching case): y = relu(x) whose kernel never loads x and writes its result over x.

The CopyIn stage lost its DataCopy, so Relu reads a UB tile that nothing wrote; CopyOut then
writes the result to y and, by a slip, also back over x. A golden computed from the inputs
after the launch would agree (relu of y is y); asc-tui gives golden() the inputs as they were
before the launch, so `asc-tui run bugs/clobber_input` FAILs and names the overwritten input,
and `asc-tui debug bugs/clobber_input` reports the unwritten read (initcheck) and the write into
x (memcheck) at their lines.
"""

from dataclasses import dataclass

import numpy as np

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GM_ADDR, GlobalTensor, QuePosition, TPipe, TQue, half
from asc_tui.operator import In, Launch, Out

CASES = {"default": dict(n=4 * 1024)}


@dataclass(frozen=True)
class Tiling:
    block_length: int
    tile_length: int


def tensors(case):
    return {"x": In(case.n, half), "y": Out(case.n, half)}


def tiling(case, p):
    return Launch(2, Tiling(case.n // 2, 512))


def golden(case, x):
    return np.maximum(x, 0)


class KernelRelu:
    def Init(self, x: GM_ADDR, y: GM_ADDR, t: Tiling):
        self.tile = t.tile_length
        self.tile_num = t.block_length // t.tile_length
        offset = t.block_length * AscendC.GetBlockIdx()
        self.x_gm, self.y_gm = GlobalTensor(half), GlobalTensor(half)
        self.x_gm.SetGlobalBuffer(x + offset, t.block_length)
        self.y_gm.SetGlobalBuffer(y + offset, t.block_length)
        self.pipe = TPipe()
        self.in_x, self.out_y = TQue(QuePosition.VECIN, 1), TQue(QuePosition.VECOUT, 1)
        for q in (self.in_x, self.out_y):
            self.pipe.InitBuffer(q, 1, self.tile * AscendC.sizeof(half))

    def Process(self):
        for i in range(self.tile_num):
            x_local = self.in_x.AllocTensor(half)  # BUG: no DataCopy(x_local, self.x_gm[...])
            self.in_x.EnQue(x_local)
            x_local = self.in_x.DeQue(half)
            y_local = self.out_y.AllocTensor(half)
            AscendC.Relu(y_local, x_local, self.tile)
            self.out_y.EnQue(y_local)
            self.in_x.FreeTensor(x_local)
            y_local = self.out_y.DeQue(half)
            AscendC.DataCopy(self.y_gm[i * self.tile], y_local, self.tile)
            AscendC.DataCopy(self.x_gm[i * self.tile], y_local, self.tile)  # BUG: writes over x
            self.out_y.FreeTensor(y_local)


@AscendC.kernel
def clobber_input(x: GM_ADDR, y: GM_ADDR, tiling: Tiling):
    op = KernelRelu()
    op.Init(x, y, tiling)
    op.Process()
