"""The shared HBM's closed form for cores in lockstep: why most launches need no solver.

When the n cores of a wave run the same stream from the same cycle, every GM transfer has n - 1
twins issued at the same moment on the other cores. In the fluid model of npu/memory/hbm.py each of
them then finds the n - 1 other cores in flight at issue (its fixed phase grows by
`latency_per_active_core × (n - 1)`), and the n twins share the HBM evenly: a transfer runs at
min(its path's cap, HBM / n), as long as its own core has no other transfer in its fluid phase
whose caps together exceed HBM / n. So `Core.dma` prices each transfer that way at issue
(`lockstep_price`), and after the launch `lockstep_exact` checks, on the record columns, that
the cores were indeed in lockstep and never contended inside one core. When both hold the
priced timeline *is* the fluid model's solution and the launch is done in one pass; otherwise
npu/launch/ falls back to solving the shared HBM (npu/memory/hbm.py `settle`).
"""

from __future__ import annotations

import numpy as np

from ..chip import wave_cores
from ..pipes import FIX, MTE2, MTE3
from ..records import KIND_WORK

#: the record columns that must be equal for two blocks to be in lockstep
SAME = ("pipe", "start", "end", "nbytes", "kind")


def lockstep_price(chip, n_active: int) -> tuple[float, float]:
    """(extra fixed cycles, HBM bytes/cycle a transfer may use) for a core of a wave of
    `n_active` cores all doing the same at the same moment."""
    n = max(n_active, 1)
    bpc = chip.hbm_bpc
    share = bpc / n if bpc > 0 else float("inf")
    return chip.dma_latency_per_active_core * (n - 1), share


class Groups:
    """A launch's blocks as they close, in groups of blocks that ran the same records from the
    same cycle (in lockstep): for each block the index of its group's first block, and for
    those first blocks (the leads) their core, GM transfers (`Core.xfers`) and closed block."""

    def __init__(self):
        self.group: list[int] = []
        self.leads: dict[int, tuple] = {}  # lead index -> (core, xfers, ClosedBlock)
        self._by_key: dict[tuple, list[int]] = {}

    def __len__(self) -> int:
        return len(self.group)

    def add(self, core_id: int, xfers, closed) -> None:
        """One more block (closed in block order); only a lead keeps its transfers."""
        i = len(self.group)
        cols = closed.columns
        key = (closed.wave, closed.t_start, closed.t_end, len(cols["end"]))
        firsts = self._by_key.setdefault(key, [])
        for j in firsts:
            if _same(self.leads[j][2].columns, cols):
                self.group.append(j)
                return
        firsts.append(i)
        self.group.append(i)
        self.leads[i] = (core_id, xfers, closed)

    def blocks_by_wave(self) -> dict[int, list[int]]:
        waves: dict[int, list[int]] = {}
        for i, g in enumerate(self.group):
            waves.setdefault(self.leads[g][2].wave, []).append(i)
        return waves


def lockstep_exact(groups: Groups, chip, block_dim: int, n_cores: int) -> bool:
    """Whether the first pass's lockstep prices are the shared HBM's exact solution: in every
    wave all blocks ran the same records from the same cycle (one group per wave), and no core
    ever had transfers on two GM paths in flight at once whose caps together exceed its share
    of the HBM."""
    for wave, members in groups.blocks_by_wave().items():
        n = len(members)
        if n != wave_cores(block_dim, wave, n_cores):
            return False  # several units per block (mixed kernels): not one stream per core
        lead = groups.group[members[0]]
        if any(groups.group[i] != lead for i in members):
            return False
        if not _uncontended(groups.leads[lead][2].columns, chip, lockstep_price(chip, n)[1]):
            return False
    return True


def _same(a: dict, b: dict) -> bool:
    for name in SAME:
        x, y = a[name], b[name]
        if x is not y and not np.array_equal(x, y):
            return False
    return True


def _uncontended(columns: dict, chip, share: float) -> bool:
    """No two GM transfers of this block on different paths overlap in time (whole records,
    fixed phase included: a conservative test) while their caps add up to more than `share`."""
    caps = {MTE2: chip.gm_read_bpc, MTE3: chip.gm_write_bpc, FIX: chip.gm_write_bpc}
    pipe, nbytes, kind = columns["pipe"], columns["nbytes"], columns["kind"]
    gm = (kind == KIND_WORK) & (nbytes > 0)
    lanes = [p for p in caps if np.any(gm & (pipe == p))]
    if sum(caps[p] for p in lanes) <= share:
        return True
    start, end = columns["start"], columns["end"]
    for i, p in enumerate(lanes):
        for q in lanes[i + 1 :]:
            if caps[p] + caps[q] <= share:
                continue
            mp, mq = gm & (pipe == p), gm & (pipe == q)
            if _overlap(start[mp], end[mp], start[mq], end[mq]):
                return False
    return True


def _overlap(s1: np.ndarray, e1: np.ndarray, s2: np.ndarray, e2: np.ndarray) -> bool:
    """Whether any interval [s1, e1) meets any [s2, e2); each lane's intervals run one after
    another (sorted, disjoint)."""
    # the first interval of lane 2 ending after each interval of lane 1 starts
    j = np.searchsorted(e2, s1, side="right")
    ok = j < len(s2)
    return bool(np.any(s2[j[ok]] < e1[ok]))
