"""A small tunable copy operator for the tuner's tests (one source, knobs as format fields)."""

from __future__ import annotations

TUNE_OP = '''"""y = x, tiled: a tiny tunable operator for the tuner's tests."""
import time
from dataclasses import dataclass

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GM_ADDR, GlobalTensor, QuePosition, TPipe, TQue, half
from asc_tui.operator import Constraint, In, Launch, Out, Param

CASES = {{"default": dict(n={n})}}

PARAMS = {{
    "tile": Param(256, values={tiles}),  # elements per tile
    "bufs": Param(1, values=[1, 2]),
    "block_dim": Param(2, values=[1, 2, 4]),
}}

CONSTRAINTS = [
    "n % (block_dim * tile) == 0",
    Constraint(lambda case, p: p.tile != {refused}, "tile {refused} is refused by the author"),
]

SLEEP_S = {sleep}


@dataclass(frozen=True)
class T:
    n: int
    tile: int
    bufs: int


def tensors(case):
    return {{"x": In(case.n, half), "y": Out(case.n, half)}}


def tiling(case, p):
    if p.tile == {tiling_refuses}:
        raise ValueError("tiling cannot handle this tile")
    return Launch(p.block_dim, T(case.n, p.tile, p.bufs))


def golden(case, x):
    return x


@AscendC.kernel
def copy(x: GM_ADDR, y: GM_ADDR, t: T):
    per = t.n // AscendC.GetBlockNum()
    xg, yg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x + per * AscendC.GetBlockIdx(), per)
    yg.SetGlobalBuffer(y + per * AscendC.GetBlockIdx(), per)
    pipe = TPipe()
    q = TQue(QuePosition.VECIN, t.bufs)
    pipe.InitBuffer(q, t.bufs, t.tile * 2)
    for i in range(per // t.tile):
        a = q.AllocTensor(half)
        AscendC.DataCopy(a, xg[i * t.tile], t.tile)
        if SLEEP_S:
            time.sleep(SLEEP_S)
        q.EnQue(a)
        b = q.DeQue(half)
        AscendC.DataCopy(yg[i * t.tile], b, t.tile)
        q.FreeTensor(b)
'''


def tune_op_source(
    n: int = 524288,
    tiles=(256, 1024, 4096, 65536, 131072),
    refused: int = 1024,
    tiling_refuses: int = 4096,
    sleep: float = 0.0,
) -> str:
    """Tiles of 65536 and 131072 half elements (128/256 KB x bufs) overflow the 192 KB UB."""
    return TUNE_OP.format(n=n, tiles=list(tiles), refused=refused, tiling_refuses=tiling_refuses, sleep=sleep)
