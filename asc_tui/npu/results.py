"""Plain, immutable results of an emulation: per-block timelines and per-pipe totals."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import numpy as np

from .pipes import N_PIPES, PIPE_NAMES, S
from .records import KIND_SET, KIND_WAIT, KIND_WORK, N_KINDS, RECORD_COLUMNS  # noqa: F401 - KIND_SET re-exported


class Mode(StrEnum):
    """How a launch was emulated: numbers and timing, or timing alone (identical timelines)."""

    FULL = "full"
    TIMING = "timing"


@dataclass(frozen=True)
class LogEntry:
    """Kernel-side output (printf, DumpTensor, assert) tagged with where and when it happened."""

    time_us: float
    block: int
    pipe: str
    file: str
    line: int
    text: str
    level: str = "info"

    def format(self) -> str:
        import os

        return (
            f"[{self.time_us:10.3f} us][block {self.block}][{self.pipe}] "
            f"{os.path.basename(self.file)}:{self.line}: {self.text}"
        )


def in_log_order(entries) -> tuple:
    """Log entries as a result holds them: by time, then block (stable: each block's entries in
    the order it wrote them)."""
    return tuple(sorted(entries, key=lambda e: (e.time_us, e.block)))


def retimed_log(log, rerun) -> list:
    """A pass's log entries at the times of the pass whose timeline replaced its own (a
    shared-HBM rerun, npu/memory/shared_hbm.py; a full launch re-timed on the L2 counts it read,
    npu/memory/l2guess.py): entry i of a block takes the time of the rerun's entry i of that block.
    Texts stay the first pass's (a rerun reads shadows, not the data); a log the rerun's does
    not pair with entry for entry (same block, file and line) keeps its own times. Both in
    each block's writing order (`in_log_order` keeps it)."""
    if len(log) != len(rerun):
        return list(log)
    by_block: dict[int, list] = {}
    for e in rerun:  # sorted by time: each block's entries in the order it wrote them
        by_block.setdefault(e.block, []).append(e)
    taken = dict.fromkeys(by_block, 0)
    out = []
    for e in log:
        i = taken.get(e.block, 0)
        theirs = by_block.get(e.block, ())
        if i >= len(theirs) or (theirs[i].file, theirs[i].line) != (e.file, e.line):
            return list(log)
        taken[e.block] = i + 1
        out.append(replace(e, time_us=theirs[i].time_us))
    return out


@dataclass(frozen=True)
class BlockTimeline:
    """Every instruction one block issued, as columns (times in cycles from kernel start).

    kind: a `records.Kind` (work on the pipe, the pipe blocked on an event, a SetFlag marker).
    link: for waits, the index of the record whose completion set the event (-1 if none).
    nbytes: bytes the instruction moved (0 for waits and SetFlag markers).
    """

    block: int
    core: int
    wave: int
    t_start: float
    t_end: float
    pipe: np.ndarray
    start: np.ndarray
    end: np.ndarray
    op: np.ndarray
    line: np.ndarray
    nbytes: np.ndarray
    kind: np.ndarray
    link: np.ndarray
    scalar_cycles: float  # issue + scalar work of this block (cycles)

    def __len__(self) -> int:
        return len(self.pipe)


@dataclass(frozen=True)
class Records:
    """Every block's records concatenated (block order of `EmulationResult.blocks`).

    `block` is the owning block's position; `link` stays an index within the block.
    """

    block: np.ndarray
    pipe: np.ndarray
    start: np.ndarray
    end: np.ndarray
    op: np.ndarray
    line: np.ndarray
    nbytes: np.ndarray
    kind: np.ndarray
    link: np.ndarray
    offsets: np.ndarray  # first index of each block

    def __len__(self) -> int:
        return len(self.pipe)

    def timeline(
        self, i: int, block: int, core: int, wave: int, t_start: float, t_end: float, scalar_cycles: float
    ) -> BlockTimeline:
        """The i-th block's timeline, its columns views into these."""
        lo = int(self.offsets[i])
        hi = int(self.offsets[i + 1]) if i + 1 < len(self.offsets) else len(self.pipe)
        sl = slice(lo, hi)
        return BlockTimeline(
            block,
            core,
            wave,
            t_start,
            t_end,
            self.pipe[sl],
            self.start[sl],
            self.end[sl],
            self.op[sl],
            self.line[sl],
            self.nbytes[sl],
            self.kind[sl],
            self.link[sl],
            scalar_cycles,
        )

    def timelines(self, metas) -> tuple[BlockTimeline, ...]:
        """Each block's timeline (`timeline` of every (block, core, wave, t_start, t_end,
        scalar_cycles) of `metas`, in order), remembered: `backs` knows them without looking
        at their memory (a 24-block launch's results checked theirs block by block, ~0.1 ms)."""
        out = tuple(self.timeline(i, *meta) for i, meta in enumerate(metas))
        object.__setattr__(self, "_made", out)
        return out

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_made", None)  # (views of these columns: pickled as copies, and not needed)
        return state

    @classmethod
    def concat(cls, parts: list[dict]) -> Records:
        """Each block's columns (name -> array, the names of RECORD_COLUMNS), joined in block
        order. The dicts are emptied column by column, so a block's own copy of a column is
        freed as soon as it is joined (a launch's records can be millions)."""
        sizes = [len(p["pipe"]) for p in parts]
        offsets = np.zeros(len(parts), dtype=np.int64)
        if len(parts) > 1:
            offsets[1:] = np.cumsum(sizes)[:-1]
        cols = {}
        for name, dtype in RECORD_COLUMNS.items():
            joined = [p.pop(name) for p in parts]
            cols[name] = np.concatenate(joined).astype(dtype, copy=False) if joined else np.zeros(0, dtype)
        return cls(block=np.repeat(np.arange(len(parts), dtype=np.int64), sizes), offsets=offsets, **cols)

    @classmethod
    def of_blocks(cls, blocks) -> Records:
        """The columns of timelines that were not built by a launch (hand-made, imported)."""
        return cls.concat([{name: getattr(b, name) for name in RECORD_COLUMNS} for b in blocks])

    def backs(self, blocks) -> bool:
        """Whether each block's columns are exactly its slice of these, in order (what
        `timeline` makes): false after e.g. `dataclasses.replace(result, blocks=...)`."""
        if self.__dict__.get("_made") is blocks:
            return True
        if len(self.offsets) != len(blocks):
            return False
        base = self.pipe.ctypes.data  # int8: a record's byte offset is its index
        ends = [*self.offsets.tolist()[1:], len(self.pipe)]
        return all(
            b.pipe.base is self.pipe and b.pipe.ctypes.data - base == lo and lo + len(b) == hi
            for b, lo, hi in zip(blocks, self.offsets.tolist(), ends)
        )


@dataclass(frozen=True)
class PipeStats:
    """Totals for one pipe over all cores (busy/wait in µs summed over cores)."""

    name: str
    busy_us: float
    wait_us: float
    instructions: int
    ratio: float  # busy / (cores used × kernel time)
    wait_ratio: float  # wait / (cores used × kernel time)

    def to_dict(self, n_cores: int) -> dict:
        n = max(n_cores, 1)
        return {
            "busy_us": self.busy_us / n,
            "ratio": self.ratio,
            "wait_ratio": self.wait_ratio,
            "instructions": self.instructions,
            "instructions_per_core": self.instructions / n,
        }


@dataclass(frozen=True)
class EmulationResult:
    """Everything one launch produced. Times in cycles of `clock_mhz` unless named `_us`."""

    chip: str
    clock_mhz: float
    mode: Mode
    block_dim: int
    cores_used: int
    kernel_cycles: float
    launch_overhead_us: float
    blocks: tuple[BlockTimeline, ...]
    ops: tuple[str, ...]
    lines: tuple[tuple[str, int], ...]
    gm_read: int
    gm_write: int
    log: tuple[LogEntry, ...] = ()
    warnings: tuple = ()
    outputs: dict | None = field(default=None, compare=False)
    capacity: dict = field(default_factory=dict)  # memory -> (peak bytes used, capacity)
    l2_hit: int = 0  # bytes of gm_read served by L2 (re-reads; see npu/memory/l2.py)
    pipe_cores: tuple = ()  # mixed kernels: per pipe, how many core timelines have it
    # the ChipModel the launch ran on (`chip` is only its name, which a user's chip file may
    # not resolve back to); lets the profile use the exact model without reloading it
    chip_model: Any = field(default=None, compare=False, repr=False)
    # all blocks' records as one set of columns (the launch builds it; else made from blocks)
    records: Records | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.records is None or not self.records.backs(self.blocks):
            object.__setattr__(self, "records", Records.of_blocks(self.blocks))

    def __getstate__(self) -> dict:
        """Pickle every record once (the TUI's worker and the tuner's processes send results
        through pipes): blocks travel as their scalars and come back as views of `records`."""
        state = dict(self.__dict__)
        state["blocks"] = tuple(
            (b.block, b.core, b.wave, b.t_start, b.t_end, b.scalar_cycles) for b in self.blocks
        )
        return state

    def __setstate__(self, state: dict) -> None:
        r = state["records"]
        state["blocks"] = r.timelines(state["blocks"])
        self.__dict__.update(state)

    @property
    def hbm_read(self) -> int:
        """Bytes read from HBM itself (gm_read minus L2 hits)."""
        return self.gm_read - self.l2_hit

    @property
    def kernel_us(self) -> float:
        return self.kernel_cycles / self.clock_mhz

    @property
    def time_us(self) -> float:
        """Task duration as msprof reports it: kernel time plus the launch head overhead."""
        return self.kernel_us + self.launch_overhead_us

    @property
    def instructions(self) -> int:
        return int(np.count_nonzero(self.records.kind == KIND_WORK))

    def pipe_stats(self) -> dict[str, PipeStats]:
        r = self.records
        slot = r.kind.astype(np.int64) * N_PIPES + r.pipe  # work and wait slots, one pass
        by = np.bincount(slot, weights=r.end - r.start, minlength=N_KINDS * N_PIPES).reshape(N_KINDS, N_PIPES)
        busy, wait = by[KIND_WORK].copy(), by[KIND_WAIT]
        count = np.bincount(slot, minlength=N_KINDS * N_PIPES).reshape(N_KINDS, N_PIPES)[KIND_WORK]
        busy[S] += sum(b.scalar_cycles for b in self.blocks)
        denom = max(self.cores_used, 1) * max(self.kernel_cycles, 1e-9)
        out = {}
        for i, name in enumerate(PIPE_NAMES):
            d = denom
            if self.pipe_cores:  # mixed kernels: the AIC and AIV timelines that have this pipe
                d = max(self.pipe_cores[i], 1) * max(self.kernel_cycles, 1e-9)
            out[name] = PipeStats(
                name,
                busy[i] / self.clock_mhz,
                wait[i] / self.clock_mhz,
                int(count[i]),
                float(busy[i] / d),
                float(wait[i] / d),
            )
        return out

    def timeline_key(self) -> tuple:
        """A hashable digest of the timeline (equal for full and timing-only runs)."""
        parts = []
        for b in self.blocks:
            parts.append(
                (
                    b.block,
                    b.core,
                    b.t_start,
                    b.t_end,
                    b.pipe.tobytes(),
                    b.start.tobytes(),
                    b.end.tobytes(),
                    b.op.tobytes(),
                    b.line.tobytes(),
                    b.nbytes.tobytes(),
                    b.kind.tobytes(),
                )
            )
        return (self.kernel_cycles, self.ops, self.lines, tuple(parts))
