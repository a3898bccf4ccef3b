"""The issue's motivating case: cores that alternate between copying and computing.

Under a fixed share a core gets 1/N of the HBM whatever the others do; under the shared HBM
(npu/memory/hbm.py) a core that copies while the others compute gets up to its own path's cap.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GlobalTensor, QuePosition, TPipe, TQue, half
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch, make_gm
from asc_tui.npu.pipes import MTE2

B4 = load_chip("ascend910b4")
CORES = 8
#: HBM for 20 B/cycle per core when all eight copy at once (264 GB/s at 1650 MHz)
CHIP = replace(B4, hbm_gbps=CORES * 20.0 * B4.clock_mhz / 1e3)


@dataclass(frozen=True)
class Plan:
    tile: int
    rounds: int
    repeats: int  # Adds per compute phase
    alternate: bool  # odd blocks compute while even blocks copy (else all copy at once)


def _alternating(x, t: Plan):
    """Each block reads a tile (MTE2), then computes on another (Adds), `rounds` times; with
    `alternate`, odd blocks compute first."""
    b = AscendC.GetBlockIdx()
    span = t.rounds * t.tile
    xg = GlobalTensor(half)
    xg.SetGlobalBuffer(x + b * span, span)
    pipe = TPipe()
    q = TQue(QuePosition.VECIN, 1)
    pipe.InitBuffer(q, 1, t.tile * 2)
    for i in range(2 * t.rounds):
        if (i + (b if t.alternate else 0)) % 2 == 0:
            local = q.AllocTensor(half)
            AscendC.DataCopy(local, xg[(i // 2) * t.tile], t.tile)
            q.EnQue(local)
            q.FreeTensor(q.DeQue(half))
        else:
            local = q.AllocTensor(half)
            for _ in range(t.repeats):
                AscendC.Adds(local, local, 1.0, t.tile)
            q.FreeTensor(local)


alternating = AscendC.kernel(_alternating)


def _reads(plan: Plan) -> list[np.ndarray]:
    n = CORES * plan.rounds * plan.tile
    gm = [make_gm("x", np.float16, n)]
    em = launch(alternating, gm, plan, CORES, CHIP, numeric=False)
    out = []
    for b in em.blocks:
        dma = (b.kind == 0) & (b.pipe == MTE2) & (b.nbytes > 0)
        out.append((b.end - b.start)[dma])
    return out


def test_a_core_copying_while_the_others_compute_gets_more_than_its_fixed_share():
    tile = 8192
    fixed_share = CHIP.hbm_bpc / CORES  # 20 B/cycle: what a wave-wide share would give
    # the eight cores copy at once: each gets 1/8 of the HBM
    together = _reads(Plan(tile, 4, 0, False))
    # odd blocks compute (long enough to cover a copy) while even ones copy, then swap
    apart = _reads(Plan(tile, 4, 20, True))
    worst_fixed = B4.dma_latency + B4.dma_latency_per_active_core * (CORES - 1) + tile * 2 / fixed_share
    for d in together:
        assert np.allclose(d, worst_fixed, rtol=1e-9)
    for d in apart:
        # four cores copy at a time: each runs at its MTE2 path's cap (38.7 < 160 / 4); the
        # rate below counts the whole transfer but its own start-up as moving bytes
        rate = tile * 2 / (d - B4.dma_latency)
        assert np.all(rate > 1.5 * fixed_share)
        assert np.all(d >= B4.dma_latency + tile * 2 / CHIP.gm_read_bpc - 1e-6)  # never above the cap
        assert np.all(d < 0.6 * worst_fixed)
