"""RMSNorm over the last axis: y = x / sqrt(mean(x^2) + eps) * gamma.

gamma is loaded once per block into its own buffer; each row is widened to fp32, squared and
summed on the vector unit, the reciprocal root is taken on the scalar unit (as real kernels do
for one value per row), and the row is scaled, multiplied by gamma and narrowed back.
"""

import math
from dataclasses import dataclass

import numpy as np

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    GM_ADDR,
    GlobalTensor,
    HardEvent,
    QuePosition,
    RoundMode,
    TBuf,
    TPipe,
    TQue,
    float32,
)
from asc_tui.operator import Constraint, In, Launch, Out, Param

EPS = 1e-6

CASES = {
    "default": dict(rows=64, cols=2048, dtype="float16"),
    "fp32": dict(rows=32, cols=1024, dtype="float32"),
    "llama": dict(rows=128, cols=4096, dtype="float16"),
    "small": dict(rows=3, cols=64, dtype="float16"),
}

PARAMS = {
    "block_dim": Param(8, values=[1, 2, 4, 8, 16, 32, 48]),
    "buffer_num": Param(2, values=[1, 2]),
}


def _fits(case, p):
    isz = AscendC.sizeof(case.dtype)
    return (2 * p.buffer_num + 1) * case.cols * isz + 3 * case.cols * 4 + 64 <= 196352


CONSTRAINTS = [
    Constraint(_fits, "queues, gamma and three fp32 work rows must fit in UB"),
    Constraint(lambda c, p: c.cols * AscendC.sizeof(c.dtype) % 32 == 0, "a row must be a multiple of 32 B"),
]

PRECISION = {"float16": (2e-3, 2e-3)}


@dataclass(frozen=True)
class NormTiling:
    rows: int
    cols: int
    rows_per_block: int
    buffer_num: int
    dtype: str
    eps: float


def tensors(case):
    return {
        "x": In((case.rows, case.cols), case.dtype),
        "gamma": In(case.cols, case.dtype, init=(0.5, 1.5)),
        "y": Out((case.rows, case.cols), case.dtype),
    }


def tiling(case, p):
    per_block = -(-case.rows // p.block_dim)
    block_dim = -(-case.rows // per_block)
    return Launch(block_dim, NormTiling(case.rows, case.cols, per_block, p.buffer_num, case.dtype, EPS))


def golden(case, x, gamma):
    x32 = x.astype(np.float32)
    rstd = 1.0 / np.sqrt((x32 * x32).mean(axis=1, keepdims=True) + EPS)
    return (x32 * rstd * gamma.astype(np.float32)).astype(x.dtype)


def flops(case):
    return 4 * case.rows * case.cols


class KernelRmsNorm:
    def Init(self, x: GM_ADDR, gamma: GM_ADDR, y: GM_ADDR, t: NormTiling):
        self.dtype = AscendC.as_dtype(t.dtype)
        self.cols = t.cols
        self.eps = t.eps
        first = t.rows_per_block * AscendC.GetBlockIdx()
        self.rows = min(t.rows_per_block, t.rows - first)
        self.x_gm = GlobalTensor(self.dtype)
        self.g_gm = GlobalTensor(self.dtype)
        self.y_gm = GlobalTensor(self.dtype)
        self.x_gm.SetGlobalBuffer(x + first * t.cols, self.rows * t.cols)
        self.g_gm.SetGlobalBuffer(gamma, t.cols)
        self.y_gm.SetGlobalBuffer(y + first * t.cols, self.rows * t.cols)
        self.pipe = TPipe()
        self.in_q = TQue(QuePosition.VECIN, t.buffer_num)
        self.g_q = TQue(QuePosition.VECIN, 1)
        self.out_q = TQue(QuePosition.VECOUT, t.buffer_num)
        row_bytes = t.cols * self.dtype.itemsize
        self.pipe.InitBuffer(self.in_q, t.buffer_num, row_bytes)
        self.pipe.InitBuffer(self.g_q, 1, row_bytes)
        self.pipe.InitBuffer(self.out_q, t.buffer_num, row_bytes)
        self.work_buf = TBuf(QuePosition.VECCALC)
        self.red_buf = TBuf(QuePosition.VECCALC)
        self.pipe.InitBuffer(self.work_buf, 3 * t.cols * 4)
        self.pipe.InitBuffer(self.red_buf, 64)

    def Process(self):
        g_local = self.g_q.AllocTensor(self.dtype)
        AscendC.DataCopy(g_local, self.g_gm, self.cols)
        self.g_q.EnQue(g_local)
        g_local = self.g_q.DeQue(self.dtype)
        work = self.work_buf.Get(float32)
        gamma32 = work[2 * self.cols]
        AscendC.Cast(gamma32, g_local, RoundMode.CAST_NONE, self.cols)
        for r in range(self.rows):
            self.CopyIn(r)
            self.Compute(gamma32)
            self.CopyOut(r)
        self.g_q.FreeTensor(g_local)

    def CopyIn(self, r):
        x_local = self.in_q.AllocTensor(self.dtype)
        AscendC.DataCopy(x_local, self.x_gm[r * self.cols], self.cols)
        self.in_q.EnQue(x_local)

    def Compute(self, gamma32):
        n = self.cols
        x_local = self.in_q.DeQue(self.dtype)
        y_local = self.out_q.AllocTensor(self.dtype)
        work = self.work_buf.Get(float32)
        row, sq = work[0], work[n]
        red = self.red_buf.Get(float32)
        AscendC.Cast(row, x_local, RoundMode.CAST_NONE, n)
        AscendC.Mul(sq, row, row, n)
        AscendC.ReduceSum(red, sq, sq, n)
        AscendC.SetFlag(HardEvent.V_S, 0)
        AscendC.WaitFlag(HardEvent.V_S, 0)
        rstd = 1.0 / math.sqrt(float(red.GetValue(0)) / n + self.eps)
        AscendC.Muls(row, row, rstd, n)
        AscendC.Mul(row, row, gamma32, n)
        AscendC.Cast(y_local, row, RoundMode.CAST_RINT, n)
        self.out_q.EnQue(y_local)
        self.in_q.FreeTensor(x_local)

    def CopyOut(self, r):
        y_local = self.out_q.DeQue(self.dtype)
        AscendC.DataCopy(self.y_gm[r * self.cols], y_local, self.cols)
        self.out_q.FreeTensor(y_local)


@AscendC.kernel
def rms_norm(x: GM_ADDR, gamma: GM_ADDR, y: GM_ADDR, tiling: NormTiling):
    op = KernelRmsNorm()
    op.Init(x, gamma, y, tiling)
    op.Process()
