"""y = x + bias in half: the C++ kernel vector_add_bias.asc, twin of operators/vector_add_bias.py.

The kernel takes its tiling as plain scalars (totalLength, tileNum), filled by name from the
Launch's tiling object; TILE_LENGTH and BUFFER_NUM are the kernel's constexprs.
"""

from dataclasses import dataclass

from asc_tui.operator import In, Launch, Out, Param

FULL = 80 * 1024 * 1024  # the samples' size: 80M elements, 160 MB per tensor

CASES = {
    "default": dict(n=8 * 2048 * 16),
    "full": dict(n=FULL),
    "tail_free_small": dict(n=2048),
}

PARAMS = {
    "block_dim": Param(8, values=[1, 2, 4, 8, 16, 20, 40]),
    "TILE_LENGTH": Param(2048, values=[1024, 2048, 4096, 8192, 10240, 20480]),
    "BUFFER_NUM": Param(1, values=[1, 2]),
}

CONSTRAINTS = [
    "n % (block_dim * TILE_LENGTH) == 0",
    "TILE_LENGTH * 2 * BUFFER_NUM * 3 <= 196352",
]


@dataclass(frozen=True)
class TilingData:
    totalLength: int
    tileNum: int


def tensors(case):
    return {"x": In(case.n, "float16"), "bias": In(case.n, "float16"), "y": Out(case.n, "float16")}


def tiling(case, p):
    return Launch(p.block_dim, TilingData(case.n, case.n // p.block_dim // p.TILE_LENGTH))


def golden(case, x, bias):
    return x + bias
