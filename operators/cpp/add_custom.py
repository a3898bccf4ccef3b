"""z = x + y in half: the C++ kernel add_custom.asc, twin of operators/add_custom.py (fp16 cases).

TILE_LENGTH and BUFFER_NUM are the kernel's own constexprs: `--param TILE_LENGTH=4096` overrides
the C++ literal, and `asc-tui tune --apply` edits it.
"""

from dataclasses import dataclass

from asc_tui.operator import Constraint, In, Launch, Out, Param

CASES = {
    "default": dict(n=8 * 2048 * 8),
    "tail": dict(n=100_003),
    "large": dict(n=8 * 1024 * 1024),
}

PARAMS = {
    "TILE_LENGTH": Param(2048, values=[256, 512, 1024, 2048, 4096, 8192, 16384], doc="elements per tile"),
    "BUFFER_NUM": Param(2, values=[1, 2], doc="queue depth: 2 overlaps copy and compute"),
    "block_dim": Param(8, values=[1, 2, 4, 8, 16, 24, 48], doc="blocks launched"),
}

UB_BYTES = 196352  # ascend910b usable UB per AIV core

CONSTRAINTS = [
    Constraint(
        lambda case, p: p.TILE_LENGTH * 2 * p.BUFFER_NUM * 3 <= UB_BYTES,
        "3 queues x BUFFER_NUM x TILE_LENGTH halves must fit in UB",
    )
]


@dataclass(frozen=True)
class AddCustomTilingData:
    totalLength: int
    blockLength: int  # elements per block (multiple of 32 B), the last block takes the rest


def tensors(case):
    return {"x": In(case.n, "float16"), "y": In(case.n, "float16"), "z": Out(case.n, "float16")}


def tiling(case, p):
    block_length = -(-case.n // p.block_dim)
    block_length = -(-block_length // 16) * 16  # 16 halves = 32 B
    return Launch(-(-case.n // block_length), AddCustomTilingData(case.n, block_length))


def golden(case, x, y):
    return x + y


def flops(case):
    return case.n
