"""y = AllReduce-sum over ranks of (x * scale): a distributed operator using the Tier 3 Hccl API.

Each rank scales its own x on the vector pipe into a GM staging buffer, then every rank calls the
same AllReduce on that buffer and waits for it. Run alone (`asc-tui run allreduce_sum`) it is one
rank; `asc-tui debug allreduce_sum --deadlock-check --ranks 4` runs four ranks together and checks
every rank's result with `golden_ranks`.
"""

from dataclasses import dataclass

import numpy as np

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    GM_ADDR,
    GlobalTensor,
    Hccl,
    HcclDataType,
    HcclReduceOp,
    QuePosition,
    TPipe,
    TQue,
    half,
)
from asc_tui.operator import In, Launch, Out, Param

CASES = {
    "default": dict(n=4096),
    "small": dict(n=1024),
}

PARAMS = {
    "tile_length": Param(1024, values=[256, 512, 1024, 2048]),
}

CONSTRAINTS = ["n % tile_length == 0"]

RANKS = 4  # default rank count for --deadlock-check
SCALE = 0.5


@dataclass(frozen=True)
class Tiling:
    n: int
    tile_length: int


def tensors(case):
    return {"x": In(case.n, half), "staging": Out(case.n, half), "y": Out(case.n, half)}


def tiling(case, p):
    return Launch(1, Tiling(case.n, p.tile_length))


def golden(case, x):
    """One rank alone: the reduction over one rank is its own scaled input."""
    s = (x * np.float16(SCALE)).astype(half)
    return s, s


def golden_ranks(case, inputs):
    scaled = [(inp["x"] * np.float16(SCALE)).astype(half) for inp in inputs]
    total = sum(s.astype("float32") for s in scaled).astype(half)
    return [(s, total) for s in scaled]


class KernelAllReduceSum:
    def Init(self, x: GM_ADDR, staging: GM_ADDR, y: GM_ADDR, t: Tiling):
        self.n = t.n
        self.tile = t.tile_length
        self.x_gm = GlobalTensor(half)
        self.s_gm = GlobalTensor(half)
        self.x_gm.SetGlobalBuffer(x, t.n)
        self.s_gm.SetGlobalBuffer(staging, t.n)
        self.staging, self.y = staging, y
        self.pipe = TPipe()
        self.in_q = TQue(QuePosition.VECIN, 1)
        self.out_q = TQue(QuePosition.VECOUT, 1)
        self.pipe.InitBuffer(self.in_q, 1, self.tile * AscendC.sizeof(half))
        self.pipe.InitBuffer(self.out_q, 1, self.tile * AscendC.sizeof(half))
        self.hccl = Hccl()
        self.hccl.Init(AscendC.GetHcclContext())

    def Process(self):
        for i in range(self.n // self.tile):
            x_local = self.in_q.AllocTensor(half)
            AscendC.DataCopy(x_local, self.x_gm[i * self.tile], self.tile)
            self.in_q.EnQue(x_local)
            x_local = self.in_q.DeQue(half)
            s_local = self.out_q.AllocTensor(half)
            AscendC.Muls(s_local, x_local, SCALE, self.tile)
            self.out_q.EnQue(s_local)
            self.in_q.FreeTensor(x_local)
            s_local = self.out_q.DeQue(half)
            AscendC.DataCopy(self.s_gm[i * self.tile], s_local, self.tile)
            self.out_q.FreeTensor(s_local)
        handle = self.hccl.AllReduce(
            self.staging, self.y, self.n, HcclDataType.HCCL_DATA_TYPE_FP16, HcclReduceOp.HCCL_REDUCE_SUM
        )
        self.hccl.Commit(handle)
        self.hccl.Wait(handle)
        self.hccl.Finalize()


@AscendC.kernel
def allreduce_sum(x: GM_ADDR, staging: GM_ADDR, y: GM_ADDR, tiling: Tiling):
    op = KernelAllReduceSum()
    op.Init(x, staging, y, tiling)
    op.Process()
