"""y = x + bias in half: the msopprof calibration kernel (sample_inter_core_balance & co).

Three TQue (two VECIN, one VECOUT), CopyIn (2 x DataCopy GM->UB) -> Compute (Add) ->
CopyOut (DataCopy UB->GM) per tile, exactly as the public samples run it on a 910B4. The
`*_8adds` cases add the bias eight times per tile (y = x + 8 * bias, rounded after each Add):
a kernel whose cores spend longer computing between their copies.
"""

from dataclasses import dataclass

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GM_ADDR, GlobalTensor, QuePosition, TPipe, TQue, half
from asc_tui.operator import In, Launch, Out, Param

FULL = 80 * 1024 * 1024  # the samples' size: 80M elements, 160 MB per tensor

CASES = {
    "default": dict(n=8 * 2048 * 16),
    "full": dict(n=FULL),
    "tail_free_small": dict(n=2048),
    "default_8adds": dict(n=8 * 2048 * 16, adds=8),
    "full_8adds": dict(n=FULL, adds=8),
}

PARAMS = {
    "block_dim": Param(8, values=[1, 2, 4, 8, 16, 20, 40]),
    "tile_length": Param(2048, values=[1024, 2048, 4096, 8192, 10240, 20480]),
    "buffer_num": Param(1, values=[1, 2]),
}

CONSTRAINTS = [
    "n % (block_dim * tile_length) == 0",
    "tile_length * 2 * buffer_num * 3 <= 196352",
]


@dataclass(frozen=True)
class TilingData:
    total_length: int
    tile_num: int
    tile_length: int
    buffer_num: int
    adds: int = 1  # Adds of the bias per tile


def tensors(case):
    return {"x": In(case.n, half), "bias": In(case.n, half), "y": Out(case.n, half)}


def tiling(case, p):
    per_core = case.n // p.block_dim
    adds = getattr(case, "adds", 1)
    return Launch(
        p.block_dim, TilingData(case.n, per_core // p.tile_length, p.tile_length, p.buffer_num, adds)
    )


def golden(case, x, bias):
    y = x + bias
    for _ in range(getattr(case, "adds", 1) - 1):
        y = y + bias
    return y


class KernelAddBias:
    def Init(self, x: GM_ADDR, bias: GM_ADDR, y: GM_ADDR, t: TilingData):
        self.block_length = t.total_length // AscendC.GetBlockNum()
        self.tile_num = t.tile_num
        self.tile_length = t.tile_length
        self.adds = t.adds
        offset = self.block_length * AscendC.GetBlockIdx()
        self.x_gm = GlobalTensor(half)
        self.bias_gm = GlobalTensor(half)
        self.y_gm = GlobalTensor(half)
        self.x_gm.SetGlobalBuffer(x + offset, self.block_length)
        self.bias_gm.SetGlobalBuffer(bias + offset, self.block_length)
        self.y_gm.SetGlobalBuffer(y + offset, self.block_length)
        self.pipe = TPipe()
        self.in_queue_x = TQue(QuePosition.VECIN, t.buffer_num)
        self.in_queue_bias = TQue(QuePosition.VECIN, t.buffer_num)
        self.out_queue_y = TQue(QuePosition.VECOUT, t.buffer_num)
        self.pipe.InitBuffer(self.in_queue_x, t.buffer_num, self.tile_length * AscendC.sizeof(half))
        self.pipe.InitBuffer(self.in_queue_bias, t.buffer_num, self.tile_length * AscendC.sizeof(half))
        self.pipe.InitBuffer(self.out_queue_y, t.buffer_num, self.tile_length * AscendC.sizeof(half))

    def Process(self):
        for i in range(self.tile_num):
            self.CopyIn(i)
            self.Compute(i)
            self.CopyOut(i)

    def CopyIn(self, progress):
        x_local = self.in_queue_x.AllocTensor(half)
        bias_local = self.in_queue_bias.AllocTensor(half)
        AscendC.DataCopy(x_local, self.x_gm[progress * self.tile_length], self.tile_length)
        AscendC.DataCopy(bias_local, self.bias_gm[progress * self.tile_length], self.tile_length)
        self.in_queue_x.EnQue(x_local)
        self.in_queue_bias.EnQue(bias_local)

    def Compute(self, progress):
        x_local = self.in_queue_x.DeQue(half)
        bias_local = self.in_queue_bias.DeQue(half)
        y_local = self.out_queue_y.AllocTensor(half)
        AscendC.Add(y_local, x_local, bias_local, self.tile_length)
        for _ in range(self.adds - 1):
            AscendC.Add(y_local, y_local, bias_local, self.tile_length)
        self.out_queue_y.EnQue(y_local)
        self.in_queue_x.FreeTensor(x_local)
        self.in_queue_bias.FreeTensor(bias_local)

    def CopyOut(self, progress):
        y_local = self.out_queue_y.DeQue(half)
        AscendC.DataCopy(self.y_gm[progress * self.tile_length], y_local, self.tile_length)
        self.out_queue_y.FreeTensor(y_local)


@AscendC.kernel
def vector_add_bias(x: GM_ADDR, bias: GM_ADDR, y: GM_ADDR, tiling: TilingData):
    op = KernelAddBias()
    op.Init(x, bias, y, tiling)
    op.Process()
