"""Waiting for the other blocks of the launch: `SyncAll()`.

The launcher runs the blocks of a multi-block launch as cooperative threads (`npu/coop.py`): a
block that reaches `SyncAll` drains its pipes, arrives, and is held until every block of the
launch arrived at its own SyncAll of the same rank (the first with the first, ...). It resumes
at the latest arrival plus `sync.sync_all_cycles` (the software barrier's flag write and poll in
GM), recorded as a wait on the scalar unit. A block that ends without arriving leaves the others
waiting: a deadlock error naming their lines (the device would hang).

Not emulated: SyncAll in mixed AIC+AIV kernels (an error names the line).
"""

from __future__ import annotations

import sys

from ...npu import state
from ...npu.errors import KernelError
from ...npu.pipes import S
from ..enums import PIPE_ALL
from .sync import PipeBarrier


class NeedsOtherBlocks(Exception):
    """A replay template run (npu/replay/replay.py) reached a rendezvous: its timing now depends on
    other blocks, so the launch starts over with every block step by step."""


def sync_latency(core) -> float:
    """Cycles from the last arrival to the release (chip `sync.sync_all_cycles`; by default one
    GM flag write and one poll, two DMA latencies)."""
    sec = core.chip.section("sync")
    return float(sec.get("sync_all_cycles", 2 * core.chip.dma_latency_for(1)))


def blocks_of(core, what: str, fr):
    """The launch's cooperative blocks (npu/coop.py), for a call that waits for other blocks."""
    if type(core.block_index) is not int:
        raise NeedsOtherBlocks(what)
    coop = core.run.blocks
    if coop is None:
        raise KernelError(
            f"{what} waits for the other blocks, but the launcher did not find it in the kernel's "
            "code and ran the blocks one after another",
            fr.f_code.co_filename,
            fr.f_lineno,
            hint="call it from code in the kernel's own module (the launcher reads that module "
            "for calls that wait for other blocks)",
        )
    return coop


def rendezvous(core, family: str, t_arrive: float, need: int, what: str, fr) -> float:
    """Arrive at the next rendezvous of `family` and wait for `need` arrivals: the release time."""
    coop = blocks_of(core, what, fr)
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
    if core.group is not None:
        raise KernelError(
            "SyncAll in a mixed AIC+AIV kernel is not emulated: use CrossCoreSetFlag/WaitFlag "
            "with modeId 0 to sync every AIV (or AIC) of the launch",
            fr.f_code.co_filename,
            fr.f_lineno,
        )
    t = rendezvous(core, "SyncAll", core.ts, run.block_dim, "SyncAll()", fr)
    core.wait_until(S, t + sync_latency(core), -1, "SyncAll", fr)
    if core.san is not None:
        core.san.block_sync(core)
