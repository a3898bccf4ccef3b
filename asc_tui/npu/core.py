"""One block running on one core: pipe clocks, events and the instruction record.

The timing model (npu-model.md): the scalar unit issues instructions in program order, each
costing `scalar.issue_cycles`; each pipe runs its queue in order; an instruction starts when its
pipe is free and it has been issued; WaitFlag (explicit or implied by a TQue) holds the waiting
pipe until the event's producer pipe had finished everything issued before the SetFlag, plus
`events.latency_cycles`. Costs: a GM transfer's duration is decided in one place, `Core.dma`
(its fixed part plus its bytes through the HBM shared with every other transfer in flight:
npu/memory/hbm.py); vector = startup + repeats x cycles per repeat.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .columns import ClosedBlock, close_columns
from .cores import CoreType
from .errors import SyncError, user_location
from .memory.lockstep import lockstep_price
from .pipes import N_PIPES, PIPE_NAMES, S
from .records import KIND_SET, KIND_WAIT, KIND_WORK, record


class Core:
    """Mutable per-block emulation state. Hot methods are kept lean: they run per instruction.

    Every attribute is declared (`__slots__`); the kernel API updates the clocks and the
    record inline on its hottest paths, and keeps its lazy cube state here (`mmad_pending`,
    `lazy`).
    """

    __slots__ = (
        "run",
        "chip",
        "block",
        "block_index",
        "core_id",
        "wave",
        "numeric",
        "san",
        "t0",
        "tp",
        "ts",
        "rec",
        "ext",
        "last",
        "events",
        "issue",
        "ev_lat",
        "dma_lat",
        "rd_bpc",
        "wr_bpc",
        "q_lat",
        "share",
        "lat_q",
        "rd_rate",
        "wr_rate",
        "gm_read",
        "gm_write",
        "seq",
        "xfers",
        "plan",
        "mem",
        "allocated",
        "mmad_pending",
        "lineage",
        "lazy",
        "kind",
        "sub_block",
        "sub_block_num",
        "group",
        "vmask",
        "trace",
    )

    def __init__(self, run, block: int, core_id: int, wave: int, t0: float, n_active: int):
        chip = run.chip
        self.run = run
        self.chip = chip
        self.block = block
        # what GetBlockIdx() returns: the block, or in a template run a `blockindex.BlockIndex`
        self.block_index = block
        self.core_id = core_id
        self.wave = wave
        self.numeric = run.numeric
        self.san = run.san  # sanitizer hooks, or None (checked once per instruction)
        self.t0 = t0
        self.tp = [t0] * N_PIPES  # time each pipe becomes free (cycles)
        self.ts = t0  # scalar issue clock
        self.rec: list[tuple] = []
        # records extrapolated by npu/extrapolate/periodic.py: (index in `rec`, `shifted.Shifted`); `rec`
        # holds None in their places
        self.ext: list[tuple] = []
        self.last = [-1] * N_PIPES  # index of the last record on each pipe
        self.events: dict = {}
        self.issue = chip.scalar_issue
        self.ev_lat = chip.event_latency
        # a transfer's own start-up and its path's cap (MTE2 GM→UB/L1, MTE3 UB→GM); what the
        # shared HBM adds is npu/memory/hbm.py's, through `dma`: first priced as if the wave's cores ran
        # in lockstep (`hbm.lockstep_price`), which is exact when they do (`hbm.lockstep_exact`)
        self.dma_lat = chip.dma_latency
        self.rd_bpc = chip.gm_read_bpc
        self.wr_bpc = chip.gm_write_bpc
        self.q_lat, self.share = lockstep_price(chip, n_active)
        # the same, folded for the hot paths: a plain read's fixed phase and each path's rate
        self.lat_q = self.dma_lat + self.q_lat
        self.rd_rate = min(self.rd_bpc, self.share)
        self.wr_rate = min(self.wr_bpc, self.share)
        self.gm_read = 0
        self.gm_write = 0
        # the GM transfers its records cannot tell (record index, fixed cycles, HBM bytes, cap):
        # L2 hits and Fixpipe writes (on a pass that follows a plan, every transfer), and the
        # durations a later pass of the launch gives them (npu/memory/hbm.py), or None
        self.seq = run.cores_made
        run.cores_made += 1
        self.xfers: list[tuple] = []
        plan = run.hbm_plan
        self.plan = plan[self.seq] if plan is not None and self.seq < len(plan) else None
        self.mem: dict[str, np.ndarray] = {}
        self.allocated: dict[str, int] = {}
        self.mmad_pending = None  # Mmads whose numbers are computed lazily (ascendc/mmad_numbers.py)
        # L1/L0 regions kept as GM lineage instead of bytes (ascendc/lineage.py): whether this
        # core may, and its lazy regions while it has some (None otherwise)
        self.lineage = self.numeric and self.san is None and run.lineage
        self.lazy = None
        # a sub-core of a mixed block (npu/mix.py sets these): AIC or AIV (None outside mixed
        # kernels), its index among the block's AIVs and their number, and its `mix.Group`
        self.kind: CoreType | None = None
        self.sub_block = 0
        self.sub_block_num = 1
        self.group = None
        # the vector mask register (ascendc/vector/level0.py): None = normal mode, every lane on
        self.vmask = None
        # a template of a full run's block replay traces its numbers here (npu/replay/numtrace.py)
        self.trace = None

    # ---- the DMA seam -------------------------------------------------------------------------
    #: Whether a DMA's duration depends only on this core's own inputs: its transfers on a
    #: launch's first pass (each timed alone), its `plan` on a pass that follows the shared HBM
    #: (npu/memory/hbm.py). Block replay (npu/replay/replay.py) copies a template's records only while this
    #: holds, and only for a block with the same plan; False runs every block step by step.
    dma_is_local = True

    @property
    def dma_time_invariant(self) -> bool:
        """Whether a DMA's duration is the same whenever it starts. Loop extrapolation
        (npu/extrapolate/periodic.py) shifts a period's records in time, which is exact only then. On a
        first pass it holds (lockstep prices depend on the wave alone); a pass that follows the
        shared HBM's plan gives each transfer its own duration, and runs every loop step by
        step."""
        return self.plan is None

    # Every GM transfer of the kernel API is timed by `dma_read_cycles`, `dma_write_cycles` or
    # `gm_write_cycles`, which all end in `dma`: the one place a DMA's duration is decided.
    # Each is called just before the transfer's record is appended (the record's index is
    # `len(self.rec)` then).

    def dma_read_cycles(self, miss: int, hit: int = 0, l2_bpc: float = 0.0) -> float:
        """Cycles of one GM→local DMA (MTE2): `miss` bytes through the HBM at up to the read
        path's rate; `hit` bytes from L2 at `l2_bpc`, part of its fixed phase with the latency."""
        if hit or self.plan is not None:
            return self.dma(self.dma_lat + hit / l2_bpc if hit else self.dma_lat, miss, self.rd_bpc)
        # `dma` for the hottest case (a first pass, no L2 hit), inlined: nothing is noted, the
        # record says it all (npu/memory/shared_hbm.py reads a plain transfer back from its record)
        return self.lat_q + miss / self.rd_rate

    def dma_write_cycles(self, nbytes: int, extra: float = 0.0) -> float:
        """Cycles of one local→GM DMA (MTE3) of `nbytes`: the latency (plus `extra` cycles of an
        atomic write's read-modify-write), then the HBM."""
        if extra or self.plan is not None:
            return self.dma(self.dma_lat + extra, nbytes, self.wr_bpc)
        return self.lat_q + nbytes / self.wr_rate  # `dma`, inlined as in `dma_read_cycles`

    def gm_write_cycles(self, nbytes: int, own: float = 0.0, fixed: float = 0.0) -> float:
        """Cycles of a GM write by another unit (Fixpipe): `fixed` cycles of its own start-up,
        then `nbytes` through the HBM at the slower of the write path and the unit's own rate
        (`own` cycles for the whole transfer)."""
        cap = self.wr_bpc
        if own > 0 and nbytes / own < cap:
            cap = nbytes / own
        return self.dma(fixed, nbytes, cap)

    def dma(self, fixed: float, nbytes: float, cap: float) -> float:
        """The duration (cycles) of the GM transfer about to be recorded: `fixed` cycles of its
        own start-up, then `nbytes` HBM bytes at up to `cap` bytes/cycle. On a launch's first
        pass it is priced as if every core of the wave did the same at the same moment (the
        queueing latency of the others, and at most 1/n of the HBM: `hbm.lockstep_price`); when
        the launch turns out not to be in lockstep, later passes follow the shared-HBM solution
        for the whole launch (`plan`, npu/memory/hbm.py)."""
        xf = self.xfers
        k = len(xf)
        xf.append((len(self.rec), fixed, nbytes, cap))
        plan = self.plan
        if plan is not None and k < len(plan):
            return plan[k]
        if nbytes <= 0:
            return fixed + self.q_lat
        share = self.share
        return fixed + self.q_lat + nbytes / (cap if cap < share else share)

    # ---- recording -------------------------------------------------------------------------
    def work(self, pipe: int, cycles: float, op: str, nbytes: int, fr) -> None:
        """Issue one instruction on `pipe` costing `cycles`; `fr` is the user's frame."""
        ts = self.ts + self.issue
        self.ts = ts
        tp = self.tp
        t = tp[pipe]
        start = t if t > ts else ts
        end = start + cycles
        tp[pipe] = end
        rec = self.rec
        self.last[pipe] = len(rec)
        # records.record(), inlined here and below: these run once per instruction
        rec.append((pipe, start, end, op, fr.f_code.co_filename, fr.f_lineno, nbytes, KIND_WORK, -1))

    def scalar(self, cycles: float, op: str, fr) -> None:
        """Work on the scalar unit itself (GetValue, SetValue, printf...)."""
        start = self.ts
        end = start + cycles
        self.ts = end
        self.tp[S] = end
        rec = self.rec
        self.last[S] = len(rec)
        rec.append((S, start, end, op, fr.f_code.co_filename, fr.f_lineno, 0, KIND_WORK, -1))

    def set_time(self, pipe: int) -> float:
        """When an event set now on `pipe` becomes visible to its waiter."""
        t = self.tp[pipe]
        ts = self.ts
        return (t if t > ts else ts) + self.ev_lat

    def wait_until(self, pipe: int, t_evt: float, link: int, op: str, fr) -> None:
        """Hold `pipe` until `t_evt`; record the blocked interval if there is one."""
        if pipe == S:
            if t_evt > self.ts:
                rec = self.rec
                rec.append((S, self.ts, t_evt, op, fr.f_code.co_filename, fr.f_lineno, 0, KIND_WAIT, link))
                self.ts = t_evt
                self.tp[S] = t_evt
            return
        tp = self.tp
        t = tp[pipe]
        ts = self.ts
        ready = t if t > ts else ts
        if t_evt > ready:
            self.rec.append((pipe, ready, t_evt, op, fr.f_code.co_filename, fr.f_lineno, 0, KIND_WAIT, link))
            tp[pipe] = t_evt
        elif ready > t:
            tp[pipe] = ready

    # ---- explicit events ---------------------------------------------------------------------
    def set_flag(self, key, src: int, op: str, fr) -> None:
        t = self.set_time(src)
        rec = self.rec
        link = self.last[src]
        rec.append(
            (src, t - self.ev_lat, t - self.ev_lat, op, fr.f_code.co_filename, fr.f_lineno, 0, KIND_SET, link)
        )
        q = self.events.get(key)
        if q is None:
            q = self.events[key] = deque()
        q.append((t, len(rec) - 1))
        self.ts += self.issue

    def wait_flag(self, key, dst: int, op: str, fr) -> None:
        q = self.events.get(key)
        if not q:
            file, line = fr.f_code.co_filename, fr.f_lineno
            raise SyncError(
                f"{op} waits for an event that no earlier SetFlag provides: the "
                f"{PIPE_NAMES[dst]} pipe would hang (in-core deadlock)",
                file,
                line,
                hint="every WaitFlag needs a SetFlag with the same event and id before it in program order",
            )
        t_evt, link = q.popleft()
        ts = self.ts = self.ts + self.issue
        t = self.tp[dst]
        ready = t if t > ts else ts
        done = t_evt if t_evt > ready else ready
        self.rec.append((dst, ready, done, op, fr.f_code.co_filename, fr.f_lineno, 0, KIND_WAIT, link))
        self.tp[dst] = done
        if dst == S:
            self.ts = done

    def barrier(self, pipe: int | None, fr) -> None:
        """PipeBarrier: PIPE_ALL waits for every pipe; one pipe is already in order."""
        self.ts += self.issue
        if pipe is None:
            t = self.end_time()
            for p in range(N_PIPES):
                if self.tp[p] < t and p != S:
                    self.tp[p] = t
            if t > self.ts:
                self.rec.append(record(S, self.ts, t, "PipeBarrier(PIPE_ALL)", fr, kind=KIND_WAIT))
            self.ts = t
            self.tp[S] = t

    def check_event_id(self, event, event_id: int) -> None:
        if not 0 <= int(event_id) < self.chip.event_ids:
            file, line = user_location()
            raise SyncError(
                f"event id {event_id} for {event.name} is out of range: {self.chip.name} has "
                f"{self.chip.event_ids} ids per event type (0..{self.chip.event_ids - 1})",
                file,
                line,
            )

    # ---- memory -------------------------------------------------------------------------------
    def memory(self, name: str) -> np.ndarray:
        m = self.mem.get(name)
        if m is None:
            cap = self.chip.memory.get(name, 0)
            m = self.mem[name] = np.zeros(cap, dtype=np.uint8)
        return m

    # ---- finish -------------------------------------------------------------------------------
    def end_time(self) -> float:
        """When every pipe and the scalar unit are done: what a PIPE_ALL barrier waits for, and,
        at the end of a block, when its core is free again."""
        return max(max(self.tp), self.ts)

    def close(self, ops: dict, lines: dict) -> ClosedBlock:
        """The finished block, its op names and source sites interned into `ops`/`lines`."""
        columns = close_columns(self.rec, ops, lines, self.ext)
        # Drop the record tuples and local memories now: kernel objects (TPipe → core) form
        # cycles that only the garbage collector frees, and it is paused during a launch.
        self.rec = []
        self.ext = []
        self.mem = {}
        if self.lazy is not None:
            self.lazy.drop()
        return ClosedBlock(
            self.block, self.core_id, self.wave, self.t0, self.end_time(), self.ts - self.t0, columns
        )
