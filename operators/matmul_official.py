"""C = A · B (+ bias) through the high-level Matmul object: the tuned baseline to compare against.

The host side is Ascend C's recipe: `MultiCoreMatmulTiling` splits C into singleCoreM ×
singleCoreN units that the cores take round-robin, and picks base blocks (baseM × baseN × baseK) that fill L0C;
L1 keeps stepK base slices of K per copy, double-buffered, so each GM→L1 copy is big enough to
hide its latency and re-reads of A and B come from L2.
"""

import numpy as np

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    GM_ADDR,
    REGIST_MATMUL_OBJ,
    CubeFormat,
    GetSysWorkSpacePtr,
    GlobalTensor,
    Matmul,
    MatmulType,
    MultiCoreMatmulTiling,
    TCubeTiling,
    TPipe,
    TPosition,
    float32,
    half,
)
from asc_tui.operator import Constraint, In, Launch, Out, Param

CASES = {  # the fp16 cases of matmul.py, same names and shapes, plus a bias case
    "default": dict(m=1024, n=1024, k=1024, bias=False),
    "small": dict(m=256, n=192, k=320, bias=False),
    "tails": dict(m=100, n=75, k=130, bias=False),
    "bias": dict(m=200, n=136, k=100, bias=True),
    "large": dict(m=4096, n=4096, k=4096, bias=False),
}

PARAMS = {
    "base_m": Param(128, values=[64, 128, 256]),
    "base_n": Param(256, values=[64, 128, 256]),
    "base_k": Param(64, values=[32, 64, 128]),
    "step_ka": Param(8, values=[1, 2, 4, 8]),
    "step_kb": Param(4, values=[1, 2, 4, 8]),
    "block_dim": Param(24, values=[1, 8, 20, 24]),
}


def _fits(case, p):
    from asc_tui.ascendc.matmul.matmul import check_tiling

    return "; ".join(check_tiling(_tiling(case, p), MEMORY)) or True


MEMORY = {"l1": 524288, "l0a": 65536, "l0b": 65536, "l0c": 131072, "bt": 1024}
CONSTRAINTS = [Constraint(_fits, "the tiling overflows a local memory")]
PRECISION = {"float16": (2e-3, 2e-3)}


def _tiling(case, p) -> TCubeTiling:
    t = MultiCoreMatmulTiling(MEMORY)
    t.SetDim(p.block_dim)
    t.SetAType(TPosition.GM, CubeFormat.ND, half)
    t.SetBType(TPosition.GM, CubeFormat.ND, half)
    t.SetCType(TPosition.GM, CubeFormat.ND, half)
    t.SetBiasType(TPosition.GM, CubeFormat.ND, float32)
    t.SetShape(case.m, case.n, case.k)
    t.SetOrgShape(case.m, case.n, case.k)
    t.SetBias(case.bias)
    t.SetFixSplit(p.base_m, p.base_n, p.base_k)
    t.SetStepK(p.step_ka, p.step_kb)
    return t.GetTiling()


def tensors(case):
    t = {
        "a": In((case.m, case.k), half, "uniform"),
        "b": In((case.k, case.n), half, "uniform"),
        "c": Out((case.m, case.n), half),
    }
    if case.bias:
        t["bias"] = In(case.n, float32, "uniform")
    return t


def tiling(case, p):
    t = _tiling(case, p)
    return Launch(t.usedCoreNum, t)


def golden(case, a, b, bias=None):
    c = a.astype(np.float32) @ b.astype(np.float32)
    return c + bias if case.bias else c


def flops(case):
    return 2.0 * case.m * case.n * case.k


@AscendC.kernel(core_type="aic")
def matmul_official(a: GM_ADDR, b: GM_ADDR, c: GM_ADDR, *bias_tiling):
    """(a, b, c, tiling), or (a, b, c, bias, tiling) when the case has a bias."""
    t: TCubeTiling = bias_tiling[-1]
    a_gm, b_gm, c_gm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    bias_gm = GlobalTensor(float32)
    a_gm.SetGlobalBuffer(a, t.M * t.Ka)
    b_gm.SetGlobalBuffer(b, t.Kb * t.N)
    c_gm.SetGlobalBuffer(c, t.M * t.N)
    if t.isBias:
        bias_gm.SetGlobalBuffer(bias_tiling[0], t.N)
    pipe = TPipe()
    mm = Matmul(
        MatmulType(TPosition.GM, CubeFormat.ND, half),
        MatmulType(TPosition.GM, CubeFormat.ND, half),
        MatmulType(TPosition.GM, CubeFormat.ND, half),
        MatmulType(TPosition.GM, CubeFormat.ND, float32),
    )
    REGIST_MATMUL_OBJ(pipe, GetSysWorkSpacePtr(), mm, t)
    m_units, n_units = -(-t.M // t.singleCoreM), -(-t.N // t.singleCoreN)
    for unit in range(AscendC.GetBlockIdx(), m_units * n_units, AscendC.GetBlockNum()):
        mi, ni = unit // n_units, unit % n_units
        tail_m = min(t.M - mi * t.singleCoreM, t.singleCoreM)
        tail_n = min(t.N - ni * t.singleCoreN, t.singleCoreN)
        mm.SetTensorA(a_gm[mi * t.singleCoreM * t.Ka])
        mm.SetTensorB(b_gm[ni * t.singleCoreN])
        if t.isBias:
            mm.SetBias(bias_gm[ni * t.singleCoreN])
        mm.SetTail(tail_m, tail_n)
        mm.IterateAll(c_gm[mi * t.singleCoreM * t.N + ni * t.singleCoreN])
    mm.End()
