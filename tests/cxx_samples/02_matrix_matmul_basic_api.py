from dataclasses import dataclass

import numpy as np

from asc_tui.operator import In, Launch, Out

CASES = {"default": dict(M=256, K=64, N=256)}


@dataclass(frozen=True)
class T:
    M: int
    K: int
    N: int
    singleCoreM: int
    baseM: int
    baseK: int
    baseN: int


def tensors(case):
    return {
        "a": In((case.M, case.K), "float16", (-10, 10)),
        "b": In((case.K, case.N), "float16", (-10, 10)),
        "c": Out((case.M, case.N), "float16"),
    }


def tiling(case, p):
    return Launch(case.M // 128, T(case.M, case.K, case.N, 128, 128, 64, 256))


def golden(case, a, b):
    return (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
