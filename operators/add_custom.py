"""z = x + y, double-buffered: the Ascend C "AddCustom" sample with tunable tiling.

Each block takes a contiguous slice (a multiple of 32 B, the last block takes the rest); tiles
of TILE elements flow CopyIn → Compute → CopyOut through BUFFER_NUM-deep queues, and the tail
tile uses DataCopyPad so any length works.
"""

from dataclasses import dataclass

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GM_ADDR, GlobalTensor, QuePosition, TPipe, TQue
from asc_tui.operator import Constraint, In, Launch, Out, Param

CASES = {
    "default": dict(n=8 * 2048 * 8, dtype="float16"),
    "tail": dict(n=100_003, dtype="float16"),
    "fp32": dict(n=8 * 4096 * 4, dtype="float32"),
    "bf16": dict(n=65_536, dtype="bfloat16"),
    "large": dict(n=8 * 1024 * 1024, dtype="float16"),
}

PARAMS = {
    "tile_length": Param(2048, values=[256, 512, 1024, 2048, 4096, 8192, 16384], doc="elements per tile"),
    "buffer_num": Param(2, values=[1, 2], doc="queue depth: 2 overlaps copy and compute"),
    "block_dim": Param(8, values=[1, 2, 4, 8, 16, 24, 48], doc="blocks launched"),
}

UB_BYTES = 196352  # ascend910b usable UB per AIV core


def _fits_ub(case, p):
    return p.tile_length * AscendC.sizeof(case.dtype) * p.buffer_num * 3 <= UB_BYTES


CONSTRAINTS = [Constraint(_fits_ub, "3 queues x buffer_num x tile_length must fit in UB")]


@dataclass(frozen=True)
class AddTiling:
    total_length: int
    block_length: int  # elements per block (multiple of 32 B), the last block takes the rest
    tile_length: int
    buffer_num: int
    dtype: str


def tensors(case):
    return {"x": In(case.n, case.dtype), "y": In(case.n, case.dtype), "z": Out(case.n, case.dtype)}


def tiling(case, p):
    per_32b = 32 // AscendC.sizeof(case.dtype)
    block_length = -(-case.n // p.block_dim)
    block_length = -(-block_length // per_32b) * per_32b
    block_dim = -(-case.n // block_length)
    return Launch(block_dim, AddTiling(case.n, block_length, p.tile_length, p.buffer_num, case.dtype))


def golden(case, x, y):
    return x + y


def flops(case):
    return case.n


class KernelAdd:
    def Init(self, x: GM_ADDR, y: GM_ADDR, z: GM_ADDR, t: AddTiling):
        self.dtype = AscendC.as_dtype(t.dtype)
        start = t.block_length * AscendC.GetBlockIdx()
        self.length = min(t.block_length, t.total_length - start)
        self.tile = min(t.tile_length, self.length)
        self.x_gm = GlobalTensor(self.dtype)
        self.y_gm = GlobalTensor(self.dtype)
        self.z_gm = GlobalTensor(self.dtype)
        self.x_gm.SetGlobalBuffer(x + start, self.length)
        self.y_gm.SetGlobalBuffer(y + start, self.length)
        self.z_gm.SetGlobalBuffer(z + start, self.length)
        self.pipe = TPipe()
        self.in_x = TQue(QuePosition.VECIN, t.buffer_num)
        self.in_y = TQue(QuePosition.VECIN, t.buffer_num)
        self.out_z = TQue(QuePosition.VECOUT, t.buffer_num)
        nbytes = self.tile * AscendC.sizeof(self.dtype)
        self.pipe.InitBuffer(self.in_x, t.buffer_num, nbytes)
        self.pipe.InitBuffer(self.in_y, t.buffer_num, nbytes)
        self.pipe.InitBuffer(self.out_z, t.buffer_num, nbytes)

    def Process(self):
        tiles = -(-self.length // self.tile)
        for i in range(tiles):
            n = min(self.tile, self.length - i * self.tile)
            self.CopyIn(i, n)
            self.Compute(n)
            self.CopyOut(i, n)

    def CopyIn(self, i, n):
        x_local = self.in_x.AllocTensor(self.dtype)
        y_local = self.in_y.AllocTensor(self.dtype)
        if n * self.dtype.itemsize % 32 == 0:
            AscendC.DataCopy(x_local, self.x_gm[i * self.tile], n)
            AscendC.DataCopy(y_local, self.y_gm[i * self.tile], n)
        else:
            params = AscendC.DataCopyExtParams(1, n * self.dtype.itemsize, 0, 0, 0)
            pad = AscendC.DataCopyPadExtParams(False, 0, 0, 0)
            AscendC.DataCopyPad(x_local, self.x_gm[i * self.tile], params, pad)
            AscendC.DataCopyPad(y_local, self.y_gm[i * self.tile], params, pad)
        self.in_x.EnQue(x_local)
        self.in_y.EnQue(y_local)

    def Compute(self, n):
        x_local = self.in_x.DeQue(self.dtype)
        y_local = self.in_y.DeQue(self.dtype)
        z_local = self.out_z.AllocTensor(self.dtype)
        AscendC.Add(z_local, x_local, y_local, n)
        self.out_z.EnQue(z_local)
        self.in_x.FreeTensor(x_local)
        self.in_y.FreeTensor(y_local)

    def CopyOut(self, i, n):
        z_local = self.out_z.DeQue(self.dtype)
        if n * self.dtype.itemsize % 32 == 0:
            AscendC.DataCopy(self.z_gm[i * self.tile], z_local, n)
        else:
            AscendC.DataCopyPad(
                self.z_gm[i * self.tile],
                z_local,
                AscendC.DataCopyExtParams(1, n * self.dtype.itemsize, 0, 0, 0),
            )
        self.out_z.FreeTensor(z_local)


@AscendC.kernel
def add_custom(x: GM_ADDR, y: GM_ADDR, z: GM_ADDR, tiling: AddTiling):
    op = KernelAdd()
    op.Init(x, y, z, tiling)
    op.Process()
