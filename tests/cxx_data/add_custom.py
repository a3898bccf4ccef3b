"""Spec of the C++ add kernel beside it (tests/cxx_data/add_custom.asc)."""

from dataclasses import dataclass

from asc_tui.operator import In, Launch, Out, Param

CASES = {"default": dict(n=8 * 2048 * 4, dtype="float16"), "small": dict(n=8 * 2048, dtype="float16")}
PARAMS = {
    "TILE_LENGTH": Param(2048, values=[512, 1024, 2048]),
    "BUFFER_NUM": Param(2, values=[1, 2]),
    "block_dim": Param(8, values=[1, 2, 4, 8]),
}


@dataclass(frozen=True)
class AddTiling:
    totalLength: int


def tensors(case):
    return {"x": In(case.n, case.dtype), "y": In(case.n, case.dtype), "z": Out(case.n, case.dtype)}


def tiling(case, p):
    return Launch(p.block_dim, AddTiling(case.n))


def golden(case, x, y):
    return x + y


def flops(case):
    return case.n
