from dataclasses import dataclass

from asc_tui.operator import In, Launch, Out

CASES = {"default": dict(n=256 * 256)}


@dataclass(frozen=True)
class T:
    singleCoreLength: int


def tensors(case):
    return {"x": In(case.n, "float32"), "y": Out(case.n, "float32")}


def tiling(case, p):
    return Launch(4, T(case.n // 4))


def golden(case, x):
    return x + x
