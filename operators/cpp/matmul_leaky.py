"""C = LeakyReLU(A · B): the mixed AIC + AIV C++ kernel matmul_leaky.asc, twin of
operators/matmul_leaky.py.

`asc-tui run operators/cpp/matmul_leaky.asc --param tile_m=256 --param tile_n=256 --param
tile_k=128` asks for a 256 KB fp32 accumulator in a 128 KB L0C: the kernel's InitBuffer line in
the .asc refuses it.
"""

from dataclasses import dataclass

import numpy as np

from asc_tui.operator import In, Launch, Out, Param

CASES = {
    "default": dict(m=512, n=512, k=256),
    "small": dict(m=128, n=96, k=64),
    "wide": dict(m=1024, n=1024, k=1024),
}

PARAMS = {
    "tile_m": Param(128, values=[64, 128, 256]),
    "tile_n": Param(128, values=[64, 128, 256]),
    "tile_k": Param(64, values=[32, 64, 128]),
    "block_dim": Param(24, values=[1, 8, 24]),
}
#: The parameter set that reproduces the classic L0C overflow (256 KB of a 128 KB L0C).
LEAKY_PARAMS = dict(tile_m=256, tile_n=256, tile_k=128)

CONSTRAINTS = ["n % 16 == 0", "tile_n % 16 == 0", "tile_m % 2 == 0"]
ALPHA = 0.1
PRECISION = {"float16": (2e-3, 2e-3)}


@dataclass(frozen=True)
class LeakyTilingData:
    m: int
    n: int
    k: int
    tileM: int
    tileN: int
    tileK: int
    alpha: float


def tensors(case):
    return {
        "a": In((case.m, case.k), "float16", "uniform"),
        "b": In((case.k, case.n), "float16", "uniform"),
        "c": Out((case.m, case.n), "float16"),
        "workspace": Out((case.m, case.n), "float16"),
    }


def tiling(case, p):
    tiles = -(-case.m // p.tile_m) * -(-case.n // p.tile_n)
    return Launch(
        min(p.block_dim, tiles),
        LeakyTilingData(case.m, case.n, case.k, p.tile_m, p.tile_n, p.tile_k, ALPHA),
    )


def golden(case, a, b):
    w = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    return {"c": np.maximum(w, (w * np.float16(ALPHA)).astype(np.float16)), "workspace": w}


def flops(case):
    return 2.0 * case.m * case.n * case.k
