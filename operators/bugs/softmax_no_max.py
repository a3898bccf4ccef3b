"""BUG (teaching case): softmax in fp16 without subtracting the row max -> overflow -> FAIL.

exp(x) overflows fp16 (max 65504) as soon as x > 11.09. The reference subtracts the row max first
(see operators/softmax.py); this kernel skips it and computes exp in fp16, so rows with a large
input produce inf, the sum becomes inf and the outputs become 0 or NaN.
`asc-tui debug bugs/softmax_no_max --precision-check` shows the NaN/Inf count and worst elements.
"""

from dataclasses import dataclass

import numpy as np

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GM_ADDR, GlobalTensor, HardEvent, QuePosition, TBuf, TPipe, TQue, half
from asc_tui.operator import In, Launch, Out

CASES = {"default": dict(rows=8, cols=256)}


@dataclass(frozen=True)
class Tiling:
    rows: int
    cols: int


def tensors(case):
    shape = (case.rows, case.cols)
    return {"x": In(shape, half, init=(0.0, 16.0)), "y": Out(shape, half)}


def tiling(case, p):
    return Launch(1, Tiling(case.rows, case.cols))


def golden(case, x):
    x32 = x.astype(np.float32)
    e = np.exp(x32 - x32.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float16)


class KernelSoftmax:
    def Init(self, x: GM_ADDR, y: GM_ADDR, t: Tiling):
        self.rows, self.cols = t.rows, t.cols
        self.x_gm = GlobalTensor(half)
        self.y_gm = GlobalTensor(half)
        self.x_gm.SetGlobalBuffer(x, t.rows * t.cols)
        self.y_gm.SetGlobalBuffer(y, t.rows * t.cols)
        self.pipe = TPipe()
        self.in_q = TQue(QuePosition.VECIN, 1)
        self.out_q = TQue(QuePosition.VECOUT, 1)
        self.red_buf = TBuf(QuePosition.VECCALC)
        self.pipe.InitBuffer(self.in_q, 1, t.cols * 2)
        self.pipe.InitBuffer(self.out_q, 1, t.cols * 2)
        self.pipe.InitBuffer(self.red_buf, t.cols * 2 + 32)

    def Process(self):
        for r in range(self.rows):
            x_local = self.in_q.AllocTensor(half)
            AscendC.DataCopy(x_local, self.x_gm[r * self.cols], self.cols)
            self.in_q.EnQue(x_local)
            x_local = self.in_q.DeQue(half)
            y_local = self.out_q.AllocTensor(half)
            red = self.red_buf.Get(half)
            AscendC.Exp(y_local, x_local, self.cols)  # BUG: no ReduceMax / Adds(-max) first
            AscendC.ReduceSum(red, y_local, red[16], self.cols)
            AscendC.SetFlag(HardEvent.V_S, 0)
            AscendC.WaitFlag(HardEvent.V_S, 0)
            total = float(red.GetValue(0))
            AscendC.Muls(y_local, y_local, 1.0 / total, self.cols)
            self.out_q.EnQue(y_local)
            self.in_q.FreeTensor(x_local)
            y_local = self.out_q.DeQue(half)
            AscendC.DataCopy(self.y_gm[r * self.cols], y_local, self.cols)
            self.out_q.FreeTensor(y_local)


@AscendC.kernel
def softmax_no_max(x: GM_ADDR, y: GM_ADDR, tiling: Tiling):
    op = KernelSoftmax()
    op.Init(x, y, tiling)
    op.Process()
