"""An add-bias operator for the bench tests, with hooks to make one pipe slower on purpose."""

from __future__ import annotations

SOURCE = '''"""y = x + bias (bench test operator)."""
from dataclasses import dataclass

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GM_ADDR, GlobalTensor, QuePosition, TPipe, TQue, half
from asc_tui.operator import In, Launch, Out, Param

CASES = {"default": dict(n=4 * 2048 * 4), "small": dict(n=2 * 2048 * 2)}
PARAMS = {"block_dim": Param(BLOCK_DIM), "tile_length": Param(2048), "buffer_num": Param(1)}
BASELINE_DECL


@dataclass(frozen=True)
class TilingData:
    total_length: int
    tile_num: int
    tile_length: int
    buffer_num: int


def tensors(case):
    return {"x": In(case.n, half), "bias": In(case.n, half), "y": Out(case.n, half)}


def tiling(case, p):
    per_core = case.n // p.block_dim
    return Launch(p.block_dim, TilingData(case.n, per_core // p.tile_length, p.tile_length,
                                          p.buffer_num))


def golden(case, x, bias):
    return x + bias


@AscendC.kernel
def add_bias(x: GM_ADDR, bias: GM_ADDR, y: GM_ADDR, t: TilingData):
    n = t.total_length // AscendC.GetBlockNum()
    off = n * AscendC.GetBlockIdx()
    x_gm, b_gm, y_gm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    x_gm.SetGlobalBuffer(x + off, n)
    b_gm.SetGlobalBuffer(bias + off, n)
    y_gm.SetGlobalBuffer(y + off, n)
    pipe = TPipe()
    qx, qb = TQue(QuePosition.VECIN, t.buffer_num), TQue(QuePosition.VECIN, t.buffer_num)
    qy = TQue(QuePosition.VECOUT, t.buffer_num)
    size = t.tile_length * AscendC.sizeof(half)
    pipe.InitBuffer(qx, t.buffer_num, size)
    pipe.InitBuffer(qb, t.buffer_num, size)
    pipe.InitBuffer(qy, t.buffer_num, size)
    L = t.tile_length
    for i in range(t.tile_num):
        xl, bl = qx.AllocTensor(half), qb.AllocTensor(half)
        AscendC.DataCopy(xl, x_gm[i * L], L)
        AscendC.DataCopy(bl, b_gm[i * L], L)
        EXTRA_COPYIN
        qx.EnQue(xl)
        qb.EnQue(bl)
        xl, bl = qx.DeQue(half), qb.DeQue(half)
        yl = qy.AllocTensor(half)
        AscendC.Add(yl, xl, bl, L)
        EXTRA_COMPUTE
        qy.EnQue(yl)
        qx.FreeTensor(xl)
        qb.FreeTensor(bl)
        yl = qy.DeQue(half)
        AscendC.DataCopy(y_gm[i * L], yl, L)
        qy.FreeTensor(yl)
'''

SLOW_VEC = "AscendC.Muls(yl, yl, 1.0, L)  # slow-vec"
SLOW_MTE2 = "AscendC.DataCopy(xl, x_gm[i * L], L)  # slow-mte2"


def add_bias_source(
    extra_compute: str = "", extra_copyin: str = "", block_dim: int = 4, baseline: str | None = None
) -> str:
    return (
        SOURCE.replace("EXTRA_COMPUTE", extra_compute or "pass")
        .replace("EXTRA_COPYIN", extra_copyin or "pass")
        .replace("BLOCK_DIM", str(block_dim))
        .replace("BASELINE_DECL", f"BASELINE = {baseline!r}" if baseline else "")
    )


def line_of(source: str, marker: str) -> int:
    for i, line in enumerate(source.splitlines(), 1):
        if marker in line:
            return i
    raise AssertionError(f"{marker!r} not in source")
