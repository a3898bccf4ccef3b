from dataclasses import dataclass

from asc_tui.operator import In, Launch, Out

CASES = {"default": dict(n=8 * 2048)}


@dataclass(frozen=True)
class T:
    blockLength: int


def tensors(case):
    return {"x": In(case.n, "float32"), "y": In(case.n, "float32"), "z": Out(case.n, "float32")}


def tiling(case, p):
    return Launch(8, T(2048))


def golden(case, x, y):
    return x + y
