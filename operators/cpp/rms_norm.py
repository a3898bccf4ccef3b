"""RMSNorm: the C++ kernel rms_norm.asc, twin of operators/rms_norm.py.

The kernel takes its tiling as a struct by value (RmsNormTilingData, declared in
rms_norm_tiling.h), filled field by field from the Launch's tiling object, and its element type
as the template argument T (the tiling object's `T` field).
"""

from dataclasses import dataclass

import numpy as np

from asc_tui.ascendc import sizeof
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
    "BUFFER_NUM": Param(2, values=[1, 2]),
}


def _fits(case, p):
    return (2 * p.BUFFER_NUM + 1) * case.cols * sizeof(case.dtype) + 3 * case.cols * 4 + 64 <= 196352


CONSTRAINTS = [
    Constraint(_fits, "queues, gamma and three fp32 work rows must fit in UB"),
    Constraint(lambda c, p: c.cols * sizeof(c.dtype) % 32 == 0, "a row must be a multiple of 32 B"),
]

PRECISION = {"float16": (2e-3, 2e-3)}


@dataclass(frozen=True)
class RmsNormTilingData:
    rows: int
    cols: int
    rowsPerBlock: int
    eps: float
    T: str  # the kernel's template argument: the element type


def tensors(case):
    return {
        "x": In((case.rows, case.cols), case.dtype),
        "gamma": In(case.cols, case.dtype, init=(0.5, 1.5)),
        "y": Out((case.rows, case.cols), case.dtype),
    }


def tiling(case, p):
    per_block = -(-case.rows // p.block_dim)
    return Launch(
        -(-case.rows // per_block), RmsNormTilingData(case.rows, case.cols, per_block, EPS, case.dtype)
    )


def golden(case, x, gamma):
    x32 = x.astype(np.float32)
    rstd = 1.0 / np.sqrt((x32 * x32).mean(axis=1, keepdims=True) + EPS)
    return (x32 * rstd * gamma.astype(np.float32)).astype(x.dtype)


def flops(case):
    return 4 * case.rows * case.cols
