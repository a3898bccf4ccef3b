import numpy as np

from asc_tui.ascendc import CubeFormat, MultiCoreMatmulTiling, TPosition, float32, half
from asc_tui.operator import In, Launch, Out

# K = 128 is summed in baseK slices of 64 (two Mmads into L0C): float32 rounding of sums ~1000
# differs from numpy's order by a few ulps.
PRECISION = {"float32": (1e-3, 1e-5)}
CASES = {"default": dict(M=512, N=128, K=128)}


def tensors(case):
    return {
        "a": In((case.M, case.K), "float16", (-10, 10)),
        "b": In((case.K, case.N), "float16", (-10, 10)),
        "bias": In(case.N, "float32"),
        "c": Out((case.M, case.N), "float32"),
    }


def tiling(case, p):
    t = MultiCoreMatmulTiling()
    t.SetDim(2)
    t.SetAType(TPosition.GM, CubeFormat.ND, half)
    t.SetBType(TPosition.GM, CubeFormat.ND, half)
    t.SetCType(TPosition.VECIN, CubeFormat.ND, float32)
    t.SetBiasType(TPosition.GM, CubeFormat.ND, float32)
    t.SetOrgShape(case.M, case.N, case.K)
    t.SetShape(case.M, case.N, case.K)
    t.SetBias(True)
    t.SetFixSplit(128, 64, 128)
    tc = t.GetTiling()
    return Launch(1, tc)  # __mix__(1, 2): one AI Core = the 2 AIVs SetDim(2) split N over


def golden(case, a, b, bias):
    c = a.astype(np.float32) @ b.astype(np.float32) + bias
    return np.where(c > 0, c, c * np.float32(0.001))
