from dataclasses import dataclass

import numpy as np

from asc_tui.operator import In, Launch, Out

CASES = {"default": dict(M=512, K=128, N=128)}


@dataclass(frozen=True)
class T:
    M: int
    K: int
    N: int
    singleCoreM: int
    singleCoreK: int
    singleCoreN: int
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
    return Launch(2, T(case.M, case.K, case.N, 256, 128, 128, 256, 128, 128))


def golden(case, a, b):
    c = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    return np.where(c > 0, c, c * np.float16(0.001)).astype(np.float16)
