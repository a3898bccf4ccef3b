"""z = x + y: the C++ kernel add_custom.asc, twin of operators/add_custom.py.

The kernel is a template over its element type T, instantiated at launch from the tiling
object's `T` field (the case's dtype). TILE_LENGTH and BUFFER_NUM are the kernel's constexprs:
`--param TILE_LENGTH=4096` overrides the C++ literal, and `asc-tui tune --apply` edits it.
"""

from dataclasses import dataclass

from asc_tui.ascendc import sizeof
from asc_tui.operator import Constraint, In, Launch, Out, Param

CASES = {
    "default": dict(n=8 * 2048 * 8, dtype="float16"),
    "tail": dict(n=100_003, dtype="float16"),
    "fp32": dict(n=8 * 4096 * 4, dtype="float32"),
    "bf16": dict(n=65_536, dtype="bfloat16"),
    "large": dict(n=8 * 1024 * 1024, dtype="float16"),
}

PARAMS = {
    "TILE_LENGTH": Param(2048, values=[256, 512, 1024, 2048, 4096, 8192, 16384], doc="elements per tile"),
    "BUFFER_NUM": Param(2, values=[1, 2], doc="queue depth: 2 overlaps copy and compute"),
    "block_dim": Param(8, values=[1, 2, 4, 8, 16, 24, 48], doc="blocks launched"),
}

UB_BYTES = 196352  # ascend910b usable UB per AIV core

CONSTRAINTS = [
    Constraint(
        lambda case, p: p.TILE_LENGTH * sizeof(case.dtype) * p.BUFFER_NUM * 3 <= UB_BYTES,
        "3 queues x BUFFER_NUM x TILE_LENGTH elements must fit in UB",
    )
]


@dataclass(frozen=True)
class AddCustomTilingData:
    totalLength: int
    blockLength: int  # elements per block (multiple of 32 B), the last block takes the rest
    T: str  # the kernel's template argument: the element type


def tensors(case):
    return {"x": In(case.n, case.dtype), "y": In(case.n, case.dtype), "z": Out(case.n, case.dtype)}


def tiling(case, p):
    block_length = -(-case.n // p.block_dim)
    per_32b = 32 // sizeof(case.dtype)
    block_length = -(-block_length // per_32b) * per_32b
    return Launch(-(-case.n // block_length), AddCustomTilingData(case.n, block_length, case.dtype))


def golden(case, x, y):
    return x + y


def flops(case):
    return case.n
