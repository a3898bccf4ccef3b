"""C = A · B in half on the cube: the C++ kernel matmul.asc, twin of operators/matmul.py (fp16).

The tile sizes and queue depths are the kernel's constexprs (TILE_M, TILE_N, TILE_K, BUFFER_NUM,
L0C_BUFFER_NUM), so the tuner searches them and `--apply` writes the winner into the C++.
"""

from dataclasses import dataclass

import numpy as np

from asc_tui.operator import Constraint, In, Launch, Out, Param

CASES = {
    "default": dict(m=1024, n=1024, k=1024),
    "small": dict(m=256, n=192, k=320),
    "tails": dict(m=100, n=75, k=130),
    "large": dict(m=4096, n=4096, k=4096),
}

PARAMS = {
    "TILE_M": Param(128, values=[64, 128, 256], doc="rows of C per tile"),
    "TILE_N": Param(256, values=[64, 128, 256], doc="columns of C per tile"),
    "TILE_K": Param(64, values=[32, 64, 128, 256], doc="K per Mmad step"),
    "BUFFER_NUM": Param(2, values=[1, 2], doc="buffers per L1/L0A/L0B queue"),
    "L0C_BUFFER_NUM": Param(1, values=[1, 2], doc="L0C buffers (2 overlaps Fixpipe with Mmad)"),
    "block_dim": Param(24, values=[8, 24], doc="AI Cores used (capped at the tile count)"),
}

L1, L0A, L0B, L0C = 512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024


def _up(x: int, a: int) -> int:
    return -(-x // a) * a


def footprint(case, p) -> dict:
    """Bytes each memory needs for these tiles (padded to fractals)."""
    tm, tn, tk = _up(p.TILE_M, 16), _up(p.TILE_N, 16), _up(p.TILE_K, 16)
    return {
        "l1": (tm * tk + tk * tn) * 2 * p.BUFFER_NUM,
        "l0a": tm * tk * 2 * p.BUFFER_NUM,
        "l0b": tk * tn * 2 * p.BUFFER_NUM,
        "l0c": tm * tn * 4 * p.L0C_BUFFER_NUM,
    }


CONSTRAINTS = [
    Constraint(lambda case, p: footprint(case, p)["l1"] <= L1, "L1 (512 KB) overflows"),
    Constraint(lambda case, p: footprint(case, p)["l0a"] <= L0A, "L0A (64 KB) overflows"),
    Constraint(lambda case, p: footprint(case, p)["l0b"] <= L0B, "L0B (64 KB) overflows"),
    Constraint(lambda case, p: footprint(case, p)["l0c"] <= L0C, "L0C (128 KB) overflows"),
    Constraint(lambda case, p: p.TILE_K % 16 == 0, "TILE_K must be a multiple of C0 (16 halves)"),
]

PRECISION = {"float16": (2e-3, 2e-3)}


@dataclass(frozen=True)
class MatmulTilingData:
    m: int
    n: int
    k: int


def tensors(case):
    return {
        "a": In((case.m, case.k), "float16", "uniform"),
        "b": In((case.k, case.n), "float16", "uniform"),
        "c": Out((case.m, case.n), "float16"),
    }


def tiling(case, p):
    tiles = -(-case.m // p.TILE_M) * -(-case.n // p.TILE_N)
    return Launch(min(p.block_dim, tiles), MatmulTilingData(case.m, case.n, case.k))


def golden(case, a, b):
    return a.astype(np.float32) @ b.astype(np.float32)


def flops(case):
    return 2.0 * case.m * case.n * case.k
