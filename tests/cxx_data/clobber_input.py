"""Spec of the C++ clobbered-input kernel beside it (tests/cxx_data/clobber_input.asc)."""

from dataclasses import dataclass

import numpy as np

from asc_tui.operator import In, Launch, Out

CASES = {"default": dict(n=4 * 1024)}


@dataclass(frozen=True)
class Tiling:
    blockLength: int


def tensors(case):
    return {"x": In(case.n, "float16"), "y": Out(case.n, "float16")}


def tiling(case, p):
    return Launch(2, Tiling(case.n // 2))


def golden(case, x):
    return np.maximum(x, 0)
