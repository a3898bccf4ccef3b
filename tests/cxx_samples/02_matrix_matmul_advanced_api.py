import numpy as np

from asc_tui.ascendc import CubeFormat, MultiCoreMatmulTiling, TPosition, float32, half
from asc_tui.operator import In, Launch, Out

# K = 128 is summed in baseK slices of 64 (two Mmads into L0C): float32 rounding of sums ~1000
# differs from numpy's order by a few ulps.
PRECISION = {"float32": (1e-3, 1e-5)}
CASES = {"default": dict(M=512, N=512, K=128)}


def tensors(case):
    return {
        "a": In((case.M, case.K), "float16", (-10, 10)),
        "b": In((case.K, case.N), "float16", (-10, 10)),
        "c": Out((case.M, case.N), "float32"),
    }


def tiling(case, p):
    t = MultiCoreMatmulTiling()
    t.SetDim(2)
    t.SetAType(TPosition.GM, CubeFormat.ND, half)
    t.SetBType(TPosition.GM, CubeFormat.ND, half)
    t.SetCType(TPosition.GM, CubeFormat.ND, float32)
    t.SetOrgShape(case.M, case.N, case.K)
    t.SetShape(case.M, case.N, case.K)
    t.SetBias(False) if hasattr(t, "SetBias") else None
    tc = t.GetTiling()
    return Launch(tc.usedCoreNum, tc)


def golden(case, a, b):
    return a.astype(np.float32) @ b.astype(np.float32)
