"""Small operator sources for the debug tests: one kernel body per bug class.

`source(body)` wraps kernel lines (indented 4, using x_gm, y_gm, pipe, N) into a complete
operator module with one half input x and one half output y of N elements; `line_of` finds the
line a test expects a report on by a marker comment.
"""

from __future__ import annotations

HEADER = """
from dataclasses import dataclass

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (GM_ADDR, GlobalTensor, HardEvent, QuePosition, TBuf, TPipe, TQue,
                             half)
from asc_tui.operator import In, Launch, Out

N = 1024
CASES = {"default": dict(n=N)}


def tensors(case):
    return {"x": In(case.n, half), "y": Out(case.n, half)}


def tiling(case, p):
    return Launch(1, None)


def golden(case, x):
    return x


@AscendC.kernel
def k(x: GM_ADDR, y: GM_ADDR, tiling):
    x_gm, y_gm = GlobalTensor(half), GlobalTensor(half)
    x_gm.SetGlobalBuffer(x, N)
    y_gm.SetGlobalBuffer(y, N)
    pipe = TPipe()
"""


def source(body: str) -> str:
    lines = [("    " + ln if ln.strip() else ln) for ln in body.strip("\n").splitlines()]
    return HEADER + "\n".join(lines) + "\n"


def line_of(text: str, marker: str) -> int:
    for i, ln in enumerate(text.splitlines(), 1):
        if marker in ln:
            return i
    raise AssertionError(f"marker {marker!r} not in source")


# A correct copy kernel through one VECIN and one VECOUT queue (used as the clean baseline).
COPY = """
qi, qo = TQue(QuePosition.VECIN, 1), TQue(QuePosition.VECOUT, 1)
pipe.InitBuffer(qi, 1, N * 2)
pipe.InitBuffer(qo, 1, N * 2)
a = qi.AllocTensor(half)
AscendC.DataCopy(a, x_gm, N)
qi.EnQue(a)
a = qi.DeQue(half)
b = qo.AllocTensor(half)
AscendC.Adds(b, a, 0.0, N)
qo.EnQue(b)
qi.FreeTensor(a)
b = qo.DeQue(half)
AscendC.DataCopy(y_gm, b, N)
qo.FreeTensor(b)
"""
