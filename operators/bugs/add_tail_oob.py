"""BUG (teaching case): vector add whose tile count is off by one -> out-of-bounds tail read.

`tile_num = block_length // tile_length + 1` was meant to round up for a partial tail tile, but
here the block length is a whole number of tiles, so the last iteration copies a whole tile past
the end of this block's window of x. On hardware that reads a neighbour's data (or faults);
`asc-tui debug bugs/add_tail_oob` reports the line, tensor, offset and size.
"""

from dataclasses import dataclass

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GM_ADDR, GlobalTensor, QuePosition, TPipe, TQue, half
from asc_tui.operator import In, Launch, Out

CASES = {"default": dict(n=4 * 1024)}


@dataclass(frozen=True)
class Tiling:
    block_length: int
    tile_length: int


def tensors(case):
    return {"x": In(case.n, half), "y": In(case.n, half), "z": Out(case.n, half)}


def tiling(case, p):
    return Launch(2, Tiling(case.n // 2, 512))


def golden(case, x, y):
    return x + y


class KernelAdd:
    def Init(self, x: GM_ADDR, y: GM_ADDR, z: GM_ADDR, t: Tiling):
        self.tile = t.tile_length
        self.tile_num = t.block_length // t.tile_length + 1  # BUG: off by one
        offset = t.block_length * AscendC.GetBlockIdx()
        self.x_gm, self.y_gm, self.z_gm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
        self.x_gm.SetGlobalBuffer(x + offset, t.block_length)
        self.y_gm.SetGlobalBuffer(y + offset, t.block_length)
        self.z_gm.SetGlobalBuffer(z + offset, t.block_length)
        self.pipe = TPipe()
        self.in_x, self.in_y = TQue(QuePosition.VECIN, 1), TQue(QuePosition.VECIN, 1)
        self.out_z = TQue(QuePosition.VECOUT, 1)
        for q in (self.in_x, self.in_y, self.out_z):
            self.pipe.InitBuffer(q, 1, self.tile * AscendC.sizeof(half))

    def Process(self):
        for i in range(self.tile_num):
            x_local = self.in_x.AllocTensor(half)
            y_local = self.in_y.AllocTensor(half)
            AscendC.DataCopy(x_local, self.x_gm[i * self.tile], self.tile)
            AscendC.DataCopy(y_local, self.y_gm[i * self.tile], self.tile)
            self.in_x.EnQue(x_local)
            self.in_y.EnQue(y_local)
            x_local, y_local = self.in_x.DeQue(half), self.in_y.DeQue(half)
            z_local = self.out_z.AllocTensor(half)
            AscendC.Add(z_local, x_local, y_local, self.tile)
            self.out_z.EnQue(z_local)
            self.in_x.FreeTensor(x_local)
            self.in_y.FreeTensor(y_local)
            z_local = self.out_z.DeQue(half)
            AscendC.DataCopy(self.z_gm[i * self.tile], z_local, self.tile)
            self.out_z.FreeTensor(z_local)


@AscendC.kernel
def add_tail_oob(x: GM_ADDR, y: GM_ADDR, z: GM_ADDR, tiling: Tiling):
    op = KernelAdd()
    op.Init(x, y, z, tiling)
    op.Process()
