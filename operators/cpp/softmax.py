"""Row-wise softmax in half: the C++ kernel softmax.asc, twin of operators/softmax.py (fp16 cases).

The kernel reads its tiling with GET_TILING_DATA: the fields of the Launch's tiling object fill the
tiling struct by name. BUFFER_NUM is the kernel's constexpr.
"""

from dataclasses import dataclass

import numpy as np

from asc_tui.operator import Constraint, In, Launch, Out, Param

CASES = {
    "default": dict(rows=64, cols=1024),
    "wide": dict(rows=16, cols=8192),
    "small": dict(rows=5, cols=48),
}

PARAMS = {
    "block_dim": Param(8, values=[1, 2, 4, 8, 16, 32, 48]),
    "BUFFER_NUM": Param(2, values=[1, 2]),
}


def _fits(case, p):
    row = -(-case.cols * 2 // 32) * 32
    work = -(-case.cols * 4 // 32) * 32
    return 2 * p.BUFFER_NUM * row + 2 * work + 64 <= 196352


CONSTRAINTS = [
    Constraint(_fits, "a row (in, out and two fp32 work rows) must fit in UB"),
    Constraint(lambda c, p: c.cols * 2 % 32 == 0, "a row must be a multiple of 32 B"),
]


@dataclass(frozen=True)
class SoftmaxTilingData:
    rows: int
    cols: int
    rowsPerBlock: int


def tensors(case):
    shape = (case.rows, case.cols)
    return {"x": In(shape, "float16", init=(-8.0, 8.0)), "y": Out(shape, "float16")}


def tiling(case, p):
    per_block = -(-case.rows // p.block_dim)
    return Launch(-(-case.rows // per_block), SoftmaxTilingData(case.rows, case.cols, per_block))


def golden(case, x):
    x32 = x.astype(np.float32)
    e = np.exp(x32 - x32.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(x.dtype)


def flops(case):
    return 5 * case.rows * case.cols
