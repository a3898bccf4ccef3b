"""Spec of add_custom.asc: the cases, parameters and tiling of operators/add_custom.py."""

from dataclasses import dataclass

from asc_tui.operator import In, Launch, Out, Param

CASES = {
    "default": dict(n=8 * 2048 * 8, dtype="float16"),
    "tail": dict(n=100_003, dtype="float16"),
    "fp32": dict(n=8 * 4096 * 4, dtype="float32"),
    "large": dict(n=8 * 1024 * 1024, dtype="float16"),
}

PARAMS = {
    "tile_length": Param(2048, values=[256, 512, 1024, 2048, 4096, 8192, 16384]),
    "BUFFER_NUM": Param(2, values=[1, 2]),
    "block_dim": Param(8, values=[1, 2, 4, 8, 16, 24, 48]),
}


@dataclass(frozen=True)
class AddTiling:
    total_length: int
    block_length: int
    tile_length: int
    dtype: str


def tensors(case):
    return {"x": In(case.n, case.dtype), "y": In(case.n, case.dtype), "z": Out(case.n, case.dtype)}


def tiling(case, p):
    per_32b = 32 // (2 if case.dtype == "float16" else 4)
    block_length = -(-case.n // p.block_dim)
    block_length = -(-block_length // per_32b) * per_32b
    block_dim = -(-case.n // block_length)
    return Launch(block_dim, AddTiling(case.n, block_length, p.tile_length, case.dtype))


def golden(case, x, y):
    return x + y


def flops(case):
    return case.n
