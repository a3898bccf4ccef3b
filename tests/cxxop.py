"""A C++ operator for the C++ front-end tests: a kernel file with its spec beside it, and a
copy kernel (x -> y of n floats through one queue) with a body to fill in."""

from __future__ import annotations

import textwrap

SPEC = """
from dataclasses import dataclass
from asc_tui.operator import In, Launch, Out, Param

CASES = {"default": dict(n=N)}
PARAMS = {PARAMS}


@dataclass(frozen=True)
class Tiling:
    FIELDS


def tensors(case):
    return {"x": In(case.n, "float32"), "y": Out(case.n, "float32")}


def tiling(case, p):
    return Launch(1, Tiling(TILING))


def golden(case, x):
    return GOLDEN
"""

COPY = """
#include "kernel_operator.h"
using namespace AscendC;
constexpr int32_t DEPTH = 1;
extern "C" __global__ __aicore__ void copy(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    TPipe pipe;
    TQue<TPosition::VECIN, DEPTH> q;
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    yg.SetGlobalBuffer((__gm__ float*)y, n);
    pipe.InitBuffer(q, DEPTH, n * sizeof(float));
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopy(t, xg, n);
    q.EnQue(t);
    t = q.DeQue<float>();
    BODY
    DataCopy(yg, t, n);
    q.FreeTensor(t);
}
"""


def make_op(tmp_path, kernel, n=64, params="{}", fields="n: int", tiling="case.n", golden="x", name="copy"):
    spec = SPEC.replace("N)", f"{n})").replace("{PARAMS}", params).replace("FIELDS", fields)
    spec = spec.replace("TILING", tiling).replace("GOLDEN", golden)
    (tmp_path / f"{name}.py").write_text(spec)
    path = tmp_path / f"{name}.asc"
    path.write_text(textwrap.dedent(kernel))
    return path


def copy_kernel(body=""):
    return COPY.replace("BODY", body)
