"""Row-wise softmax, numerically stable: y = exp(x - max(x)) / sum(exp(x - max(x))).

fp16 inputs are widened to fp32 in UB for the max/exp/sum chain and narrowed on the way out, as
production kernels do. Each block owns a band of rows; rows flow through BUFFER_NUM-deep queues.
The row max and sum reach the scalar unit through an explicit V→S event.
"""

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

CASES = {
    "default": dict(rows=64, cols=1024, dtype="float16"),
    "fp32": dict(rows=48, cols=768, dtype="float32"),
    "wide": dict(rows=16, cols=8192, dtype="float16"),
    "small": dict(rows=5, cols=48, dtype="float16"),
}

PARAMS = {
    "block_dim": Param(8, values=[1, 2, 4, 8, 16, 32, 48]),
    "buffer_num": Param(2, values=[1, 2]),
}


def _fits(case, p):
    isz = AscendC.sizeof(case.dtype)
    row = -(-case.cols * isz // 32) * 32
    work = -(-case.cols * 4 // 32) * 32
    return 2 * p.buffer_num * row + 2 * work + 64 <= 196352


CONSTRAINTS = [
    Constraint(_fits, "a row (in, out and two fp32 work rows) must fit in UB"),
    Constraint(lambda c, p: c.cols * AscendC.sizeof(c.dtype) % 32 == 0, "a row must be a multiple of 32 B"),
]


@dataclass(frozen=True)
class SoftmaxTiling:
    rows: int
    cols: int
    rows_per_block: int
    buffer_num: int
    dtype: str


def tensors(case):
    shape = (case.rows, case.cols)
    return {"x": In(shape, case.dtype, init=(-8.0, 8.0)), "y": Out(shape, case.dtype)}


def tiling(case, p):
    per_block = -(-case.rows // p.block_dim)
    block_dim = -(-case.rows // per_block)
    return Launch(block_dim, SoftmaxTiling(case.rows, case.cols, per_block, p.buffer_num, case.dtype))


def golden(case, x):
    x32 = x.astype(np.float32)
    e = np.exp(x32 - x32.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(x.dtype)


def flops(case):
    return 5 * case.rows * case.cols


class KernelSoftmax:
    def Init(self, x: GM_ADDR, y: GM_ADDR, t: SoftmaxTiling):
        self.dtype = AscendC.as_dtype(t.dtype)
        self.cols = t.cols
        first = t.rows_per_block * AscendC.GetBlockIdx()
        self.rows = min(t.rows_per_block, t.rows - first)
        self.x_gm = GlobalTensor(self.dtype)
        self.y_gm = GlobalTensor(self.dtype)
        self.x_gm.SetGlobalBuffer(x + first * t.cols, self.rows * t.cols)
        self.y_gm.SetGlobalBuffer(y + first * t.cols, self.rows * t.cols)
        self.pipe = TPipe()
        self.in_q = TQue(QuePosition.VECIN, t.buffer_num)
        self.out_q = TQue(QuePosition.VECOUT, t.buffer_num)
        self.pipe.InitBuffer(self.in_q, t.buffer_num, t.cols * self.dtype.itemsize)
        self.pipe.InitBuffer(self.out_q, t.buffer_num, t.cols * self.dtype.itemsize)
        self.work_buf = TBuf(QuePosition.VECCALC)
        self.red_buf = TBuf(QuePosition.VECCALC)
        self.pipe.InitBuffer(self.work_buf, 2 * t.cols * 4)
        self.pipe.InitBuffer(self.red_buf, 64)

    def Process(self):
        for r in range(self.rows):
            self.CopyIn(r)
            self.Compute()
            self.CopyOut(r)

    def CopyIn(self, r):
        x_local = self.in_q.AllocTensor(self.dtype)
        AscendC.DataCopy(x_local, self.x_gm[r * self.cols], self.cols)
        self.in_q.EnQue(x_local)

    def Compute(self):
        n = self.cols
        x_local = self.in_q.DeQue(self.dtype)
        y_local = self.out_q.AllocTensor(self.dtype)
        work = self.work_buf.Get(float32)
        row = work[0]
        scratch = work[n]
        red = self.red_buf.Get(float32)
        if self.dtype == float32:
            AscendC.DataCopy(row, x_local, n)
        else:
            AscendC.Cast(row, x_local, RoundMode.CAST_NONE, n)
        AscendC.ReduceMax(red, row, scratch, n)
        AscendC.SetFlag(HardEvent.V_S, 0)
        AscendC.WaitFlag(HardEvent.V_S, 0)
        row_max = red.GetValue(0)
        AscendC.Adds(row, row, -row_max, n)
        AscendC.Exp(row, row, n)
        AscendC.ReduceSum(red, row, scratch, n)
        AscendC.SetFlag(HardEvent.V_S, 0)
        AscendC.WaitFlag(HardEvent.V_S, 0)
        total = red.GetValue(0)
        AscendC.Muls(row, row, 1.0 / total, n)
        if self.dtype == float32:
            AscendC.DataCopy(y_local, row, n)
        else:
            AscendC.Cast(y_local, row, RoundMode.CAST_RINT, n)
        self.out_q.EnQue(y_local)
        self.in_q.FreeTensor(x_local)

    def CopyOut(self, r):
        y_local = self.out_q.DeQue(self.dtype)
        AscendC.DataCopy(self.y_gm[r * self.cols], y_local, self.cols)
        self.out_q.FreeTensor(y_local)


@AscendC.kernel
def softmax(x: GM_ADDR, y: GM_ADDR, tiling: SoftmaxTiling):
    op = KernelSoftmax()
    op.Init(x, y, tiling)
    op.Process()
