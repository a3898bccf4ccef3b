"""Waiting for the other blocks of the launch: `SyncAll()`.

The launcher runs the blocks of a multi-block launch as cooperative threads (`npu/coop.py`): a
block that reaches `SyncAll` drains its pipes, arrives, and is held until every block of the
launch arrived at its own SyncAll of the same rank (the first with the first, ...). It resumes
at the latest arrival plus `sync.sync_all_cycles` (the software barrier's flag write and poll in
GM), recorded as a wait on the scalar unit. A block that ends without arriving leaves the others
waiting: a deadlock error naming their lines (the device would hang).

Not held: a one-block launch (nothing to wait for) and mixed AIC+AIV kernels, whose blocks run
one after another (a `sync-all` warning says that later blocks' data is not there yet).
"""

from __future__ import annotations

import sys

from ..npu import state
from ..npu.pipes import S
from .enums import PIPE_ALL
from .sync import PipeBarrier


class NeedsOtherBlocks(Exception):
    """A replay template run (npu/replay.py) reached a rendezvous: its timing now depends on
    other blocks, so the launch starts over with every block step by step."""


def sync_latency(core) -> float:
    """Cycles from the last arrival to the release (chip `sync.sync_all_cycles`; by default one
    GM flag write and one poll, two DMA latencies)."""
    sec = core.chip.section("sync")
    return float(sec.get("sync_all_cycles", 2 * core.chip.dma_latency_for(1)))


def rendezvous(core, family: str, t_arrive: float, need: int, what: str, fr) -> float | None:
    """Arrive at the next rendezvous of `family` and wait for `need` arrivals: the release time
    (None when this launch does not hold blocks: see the module note)."""
    run = core.run
    if type(core.block_index) is not int:
        raise NeedsOtherBlocks(what)
    coop = run.blocks
    if coop is None:
        return None
    k = coop.next(core.block, family)
    coop.post((family, k), t_arrive)
    return coop.wait((family, k), need, what, fr)


def SyncAll(*_targs) -> None:
    """`SyncAll()` / `SyncAll<isAIVOnly>()`: every block of the launch meets here."""
    fr = sys._getframe(1)
    core = state.core
    PipeBarrier(PIPE_ALL, _depth=2)
    run = core.run
    if run.block_dim == 1:
        return
    t = rendezvous(core, "SyncAll", core.ts, run.block_dim, "SyncAll()", fr)
    if t is None:
        run.warn(
            "sync-all",
            "SyncAll does not hold the blocks of a mixed AIC+AIV kernel (they run one after "
            "another): an earlier block reads GM that later blocks write before their SyncAll too early",
            fr,
        )
        return
    core.wait_until(S, t + sync_latency(core), -1, "SyncAll", fr)
    if core.san is not None:
        core.san.block_sync(core)
