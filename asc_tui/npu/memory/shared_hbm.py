"""The passes of a launch under the shared HBM: when the first pass is not already the answer.

A launch's first pass prices every GM transfer as if the cores of its wave ran in lockstep
(npu/memory/lockstep.py); when they did, that is the fluid model's exact solution and nothing here
runs. Otherwise the launch's transfers go to the fluid model (npu/memory/hbm.py), one block per
lockstep group weighted by the group's size, and timing-only passes follow the solved
durations (`Run.hbm_plan`) until they are a fixed point (`hbm.settle`). A launch of at least
`SLACK_FROM` records stops sooner: once the
solution is within `SLACK` of the pass, i.e. for every group the solved durations differ from
the pass's by at most SLACK of its block's span in total (a block's end moves by at most that
sum when its transfer durations change).

A rerun issues the first pass's instruction streams, only at other times: what a kernel does
depends on its code, tiling and block index, not on when — unless it reads the clock
(GetSystemCycle), or reads data into its Python (GetValue, a C++ `*p`), which the rerun reads as
shadows. Otherwise its templates run with their plain block index on the guards the first
pass derived for them (`Run.known`), instead of deriving them again through a `BlockIndex`
(matmul 1024³ fp16 full: about 1.3 ms of a 36–44 ms launch). Blocks of one plan already had
identical first-pass records (one lockstep group); the guards keep replay as sound as there.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

from ..errors import OperatorError
from ..pipes import MTE2, MTE3
from ..records import KIND_WORK
from .gm import shadows
from .hbm import HbmModel, Transfers, settle
from .lockstep import Groups, lockstep_exact

#: A pass whose solved durations move no block by more than this share of its span stands...
SLACK = 1e-2
#: ...in launches of at least this many records (smaller ones always reach the fixed point).
#: The passes after the first are timing-only, and a full run of a small cube kernel (matmul
#: 1024³: 4144 records, 99 transfers in 2 groups) would otherwise spend a quarter of its time in
#: three of them chasing queueing-latency ties of 4 to 64 cycles.
SLACK_FROM = 2_000


@dataclass(frozen=True)
class Pass:
    """What one pass issued, for the fluid model: one block of each lockstep group."""

    xf: Transfers  # the leads' transfers, each weighted by its group's size
    used: np.ndarray  # the durations the pass gave them
    offsets: np.ndarray  # group k's transfers are xf[offsets[k]:offsets[k+1]]
    group: list[int]  # for each block of the launch, its group
    span: np.ndarray  # each group's block: t_end - t_start (cycles)
    records: int  # records of the whole pass


def transfers_unless_lockstep(run, block_dim: int, n_cores: int) -> Pass | None:
    """The pass's transfers (read from the leads' columns before they are joined), or None
    when the first pass is exact already (its cores ran in lockstep, npu/memory/lockstep.py)."""
    groups: Groups = run.groups
    if run.hbm_plan is None and lockstep_exact(groups, run.chip, block_dim, n_cores):
        return None
    leads = sorted(groups.leads)
    index = {g: k for k, g in enumerate(leads)}
    size = np.bincount([index[g] for g in groups.group], minlength=len(leads))
    parts, used, weight, lengths, span = [], [], [], [], []
    for k, g in enumerate(leads):
        core_id, xfers, closed = groups.leads[g]
        columns = closed.columns
        lengths.append(len(xfers))
        span.append(closed.t_end - closed.t_start)
        a = _block_transfers(columns, xfers, run.chip)
        lengths[-1] = len(a)
        if not len(a):
            continue
        idx = a[:, 0].astype(np.int64)
        start = columns["start"][idx]
        owner = np.full(len(idx), core_id, dtype=np.float64)
        parts.append(np.column_stack([start, a[:, 1], a[:, 2], a[:, 3], columns["pipe"][idx], owner]))
        used.append(columns["end"][idx] - start)
        weight.append(np.full(len(idx), float(size[k])))
    offsets = np.cumsum([0] + lengths)
    by_block = [index[g] for g in groups.group]
    n = sum(int(size[index[g]]) * len(c.columns["pipe"]) for g, (_, _, c) in groups.leads.items())
    if not parts:
        return Pass(Transfers.of([]), np.zeros(0), offsets, by_block, np.array(span), n)
    xf = Transfers.rows(np.concatenate(parts), np.concatenate(weight))
    return Pass(xf, np.concatenate(used), offsets, by_block, np.array(span), n)


def _block_transfers(columns: dict, noted: list, chip) -> np.ndarray:
    """A block's GM transfers in issue order as (record index, fixed cycles, HBM bytes, cap):
    every MTE2/MTE3 work record is one (a plain DataCopy: the DMA latency, its bytes, its
    path's cap), unless `Core.dma` noted it otherwise (`noted`: L2 hits, Fixpipe writes)."""
    pipe, kind = columns["pipe"], columns["kind"]
    rows = np.flatnonzero((kind == KIND_WORK) & ((pipe == MTE2) | (pipe == MTE3)))
    plain = np.empty((len(rows), 4))
    plain[:, 0] = rows
    plain[:, 1] = chip.dma_latency
    plain[:, 2] = columns["nbytes"][rows]
    plain[:, 3] = np.where(pipe[rows] == MTE2, chip.gm_read_bpc, chip.gm_write_bpc)
    if not noted:
        return plain
    told = np.fromiter(chain.from_iterable(noted), np.float64, 4 * len(noted)).reshape(-1, 4)
    idx = told[:, 0].astype(np.int64)
    if idx.min() >= 0 and idx.max() < len(pipe):  # (always: they index the block's records)
        mine = np.zeros(len(pipe), dtype=bool)  # the records `noted` speaks for
        mine[idx] = True
        keep = plain[~mine[rows]]
    else:
        keep = plain[~np.isin(rows, idx)]
    both = np.concatenate([keep, told]) if len(keep) else told
    return both[np.argsort(both[:, 0], kind="stable")]


def share_hbm(launch, run, kernel, gm_args, tiling, block_dim: int, timeout_s, held: list | None = None):
    """Re-time the launch under the shared HBM (npu/memory/hbm.py); None when the first pass holds.
    `launch` is npu/launch.launch (the passes are launches of their own). `held`, a timing-only
    first pass's [its closed blocks], is emptied before the first rerun (the passes' records
    need not fit in memory side by side); if no rerun then holds, the first pass is run again,
    which gives the same timeline (lockstep prices, no sharing)."""
    first: Pass = run.hbm_xf
    xf = first.xf
    if not len(xf):
        return None
    chip = run.chip
    shadow_args = shadows(gm_args)

    def again(plan, seen: list):
        def setup(r) -> None:
            r.hbm_plan = plan
            r.hbm_shared = plan is not None
            r.l2_enabled = run.l2_enabled
            r.l2_counts = run.l2_counts
            r.lineage = False
            r.known = None if run.clock_read or run.read_data else run.learned  # (module doc)
            seen.append(r)

        return launch(
            kernel, shadow_args, tiling, block_dim, chip, numeric=False, configure=setup, timeout_s=timeout_s
        )

    def rerun(durations):
        per_group = [durations[a:b].tolist() for a, b in zip(first.offsets[:-1], first.offsets[1:])]
        plan = [per_group[g] for g in first.group]
        seen: list = []
        if held is not None:
            held.clear()
        try:
            res = again(plan, seen)
        except OperatorError as exc:
            if exc.kind == "timeout":
                raise
            return None  # e.g. control flow on GM data: the first pass stands
        got: Pass | None = seen[0].hbm_xf
        if got is None or got.group != first.group:
            return None  # the blocks fell into other groups: keep the last pass
        return res, got.xf

    def close_enough(want: np.ndarray, used: np.ndarray) -> bool:
        total = np.concatenate([[0.0], np.cumsum(np.abs(want - used))])
        moved = total[first.offsets[1:]] - total[first.offsets[:-1]]
        return bool(np.all(moved <= SLACK * first.span))

    slack = close_enough if first.records >= SLACK_FROM else None
    result, passes, _ = settle(HbmModel.of(chip), xf, rerun, first.used, slack)
    run.hbm_passes = passes + 1
    if result is None and held is not None and not held:
        result = again(None, [])  # no rerun held, and the first pass was let go
    return result
