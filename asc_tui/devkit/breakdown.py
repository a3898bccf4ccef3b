"""Where the time goes, computed from the recorded timeline alone (no re-emulation).

All blocks' records are flattened into one set of columns (`Columns`) so that every figure is a
handful of vectorised numpy passes, however many blocks ran. Times are cycles unless a name
ends in `_us`.

Definitions (documented in README.md, "Where the time goes"):

* busy(pipe): summed duration of the pipe's work records (kind 0); the scalar pipe also gets the
  block's `scalar_cycles` (instruction issue, not recorded per instruction).
* blocked(pipe): summed duration of the pipe's wait records (kind 1). A wait record is exactly an
  interval during which the pipe had its next instruction queued but was held by an event
  (WaitFlag, TQue DeQue/AllocTensor, PipeBarrier). Reported per pipe as wait ratios.
* Sync Wait (breakdown): per core, the time during which at least one pipe was blocked on an
  event *and no pipe did any work* — the time the core spent on synchronisation alone. Blocked
  time that overlaps useful work elsewhere is a symptom of the busy pipe, not a cost of its own,
  so it is not counted twice. (Scalar issue cycles have no intervals, so they never mask a wait.)
* overlap: |C ∩ M| / min(|C|, |M|) where C is the union of compute (vec, cube) work and M the
  union of data movement (mte1, mte2, mte3, fixpipe) work on the same core: the share of the
  shorter activity hidden under the other. 1.0 = perfectly pipelined, 0.0 = strictly serial.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..npu.pipes import FIX, MTE1, MTE2, MTE3, N_PIPES, PIPE_NAMES, M, S, V
from ..npu.results import KIND_SET, KIND_WAIT, KIND_WORK, EmulationResult, Records

COMPUTE_PIPES = (V, M)
MOVE_PIPES = (MTE1, MTE2, MTE3, FIX)
CUBE_PIPES = (M, MTE1, FIX)

# A record's classes as bits, by kind * N_PIPES + pipe, and the bits of each union that
# pipe_totals needs: all work, work or wait, compute work, movement work, either of those.
_WORK_BIT, _WAIT_BIT, _COMPUTE_BIT, _MOVE_BIT = 1, 2, 4, 8
_CLASS = np.zeros(3 * N_PIPES, dtype=np.int64)
_CLASS[KIND_WORK * N_PIPES : (KIND_WORK + 1) * N_PIPES] = _WORK_BIT
_CLASS[[KIND_WORK * N_PIPES + p for p in COMPUTE_PIPES]] |= _COMPUTE_BIT
_CLASS[[KIND_WORK * N_PIPES + p for p in MOVE_PIPES]] |= _MOVE_BIT
_CLASS[KIND_WAIT * N_PIPES : (KIND_WAIT + 1) * N_PIPES] = _WAIT_BIT
_UNIONS = np.array([_WORK_BIT, _WORK_BIT | _WAIT_BIT, _COMPUTE_BIT, _MOVE_BIT, _COMPUTE_BIT | _MOVE_BIT])[
    :, None
]

#: (key, display name, pipe index or None for Sync Wait), in the order users expect.
CATEGORIES = (
    ("cube", "Compute (Cube)", M),
    ("vec", "Compute (Vector)", V),
    ("scalar", "Scalar", S),
    ("mte2", "HBM Read (MTE2)", MTE2),
    ("mte3", "HBM Write (MTE3)", MTE3),
    ("mte1", "L1→L0 (MTE1)", MTE1),
    ("fixpipe", "FixPipe", FIX),
    ("sync_wait", "Sync Wait", None),
)


@dataclass(frozen=True)
class Columns:
    """Every record of every block (the launch's `Records`) with the derived columns and
    per-block sums the figures share; `block` indexes `result.blocks`."""

    records: Records
    block: np.ndarray
    pipe: np.ndarray
    start: np.ndarray
    end: np.ndarray
    kind: np.ndarray
    line: np.ndarray
    nbytes: np.ndarray
    slot: np.ndarray  # kind * N_PIPES + pipe: a record's kind and pipe as one small key
    dur: np.ndarray  # end - start
    # per block, kind and pipe ([blocks, 3, N_PIPES]): summed durations, records, bytes
    sums: np.ndarray
    counts: np.ndarray
    moved: np.ndarray

    def __len__(self) -> int:
        return len(self.pipe)

    @property
    def offsets(self) -> np.ndarray:
        """First global index of each block."""
        return self.records.offsets

    @property
    def busy(self) -> np.ndarray:
        """[blocks, N_PIPES] cycles of work records."""
        return self.sums[:, KIND_WORK]

    @property
    def blocked(self) -> np.ndarray:
        """[blocks, N_PIPES] cycles of wait records."""
        return self.sums[:, KIND_WAIT]

    @property
    def count(self) -> np.ndarray:
        """[blocks, N_PIPES] work records."""
        return self.counts[:, KIND_WORK]

    @property
    def nbytes_moved(self) -> np.ndarray:
        """[blocks, N_PIPES] bytes moved by work records."""
        return self.moved[:, KIND_WORK]

    @property
    def op(self) -> np.ndarray:
        return self.records.op

    @cached_property
    def link(self) -> np.ndarray:
        """Global index of the linked record, -1 if none (only the trace export needs it)."""
        link = self.records.link.astype(np.int64)
        if not len(link):
            return link
        return np.where(link >= 0, link + self.offsets[self.block], -1)


def columns(result: EmulationResult) -> Columns:
    r = result.records
    nb = len(result.blocks)
    slot = r.kind.astype(np.int64) * N_PIPES + r.pipe
    dur = r.end - r.start
    # One bincount per figure over (block, kind, pipe) keys instead of a masked pass per kind.
    key = r.block * (3 * N_PIPES) + slot
    shape = (nb, 3, N_PIPES)
    size = nb * 3 * N_PIPES
    return Columns(
        r,
        r.block,
        r.pipe,
        r.start,
        r.end,
        r.kind,
        r.line,
        r.nbytes,
        slot,
        dur,
        np.bincount(key, weights=dur, minlength=size).reshape(shape),
        np.bincount(key, minlength=size).reshape(shape),
        np.bincount(key, weights=r.nbytes, minlength=size).reshape(shape),
    )


def union_length(start: np.ndarray, end: np.ndarray) -> float:
    """Length of the union of intervals [start, end) (any order, may overlap)."""
    if len(start) == 0:
        return 0.0
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    prev = np.empty_like(reach)
    prev[0] = -np.inf
    prev[1:] = reach[:-1]
    return float(np.clip(e - np.maximum(s, prev), 0.0, None).sum())


def union_lengths(start: np.ndarray, end: np.ndarray, masks) -> list[float]:
    """`union_length` of each masked subset of intervals sorted by start, in one numpy pass.

    Why: the breakdown needs five unions and small runs pay per numpy call, not per record.
    Each subset is a row; intervals outside it get end -inf: they never extend the running
    reach, and their gain (end - max(start, reach so far)) is negative, so it counts as 0.
    """
    if len(start) == 0:
        return [0.0] * len(masks)
    member = masks if isinstance(masks, np.ndarray) else np.stack(masks)
    e = np.where(member, end, -np.inf)
    prev = np.empty_like(e)  # the reach of the intervals before each one
    prev[:, 0] = -np.inf
    for row, out in zip(e, prev):  # row by row: numpy's 2-D accumulate with `out` is ~4× slower
        np.maximum.accumulate(row[:-1], out=out[1:])
    gain = e - np.maximum(start, prev, out=prev)
    return np.maximum(gain, 0.0, out=gain).sum(axis=1).tolist()


@dataclass(frozen=True)
class PipeTotals:
    """Per-pipe sums over all blocks (cycles), plus the per-core interval figures."""

    busy: list[float]  # [N_PIPES] cycles, scalar includes issue cycles
    blocked: list[float]  # [N_PIPES] cycles of wait records
    instructions: list[int]  # [N_PIPES] work records
    sync_wait: float  # cycles summed over blocks: blocked with no pipe working
    compute: float  # cycles: union of compute work, summed over blocks
    move: float  # cycles: union of data movement work, summed over blocks
    overlap_cycles: float  # cycles: compute ∩ movement, summed over blocks

    @property
    def overlap(self) -> float | None:
        """Share of the shorter of compute/movement hidden under the other (None if one is 0)."""
        shorter = min(self.compute, self.move)
        return self.overlap_cycles / shorter if shorter > 0 else None


def pipe_totals(result: EmulationResult, cols: Columns) -> PipeTotals:
    busy, blocked, _ = cols.sums.sum(axis=0).tolist()  # per kind, per pipe
    busy[S] += sum(b.scalar_cycles for b in result.blocks)
    count = cols.counts[:, KIND_WORK].sum(axis=0).tolist()
    # Blocks shifted apart in time so that their unions never merge.
    shift = cols.block * (max((b.t_end for b in result.blocks), default=0.0) + 1.0)
    s, e = cols.start + shift, cols.end + shift
    order = np.argsort(s, kind="stable")  # one sort; every subset below stays sorted
    cls = _CLASS[cols.slot][order]
    worked, either, c, m, both = union_lengths(s[order], e[order], (cls & _UNIONS) != 0)
    return PipeTotals(busy, blocked, count, max(either - worked, 0.0), c, m, max(c + m - both, 0.0))


@dataclass(frozen=True)
class CoreProfile:
    """One block as msprof reports a row: its time and per-pipe figures (µs, ratios, bytes).

    `ratio[p]` = busy / this block's time; `wait_ratio[p]` = blocked / this block's time.
    """

    block: int
    core: int
    wave: int
    time_us: float
    cycles: float
    busy_us: dict
    ratio: dict
    wait_ratio: dict
    instructions: dict
    read_bytes: float  # GM → local (MTE2)
    write_bytes: float  # local → GM (MTE3 + FixPipe)

    def to_dict(self) -> dict:
        return {
            "block": self.block,
            "core": self.core,
            "wave": self.wave,
            "time_us": self.time_us,
            "cycles": self.cycles,
            "busy_us": dict(self.busy_us),
            "ratio": dict(self.ratio),
            "wait_ratio": dict(self.wait_ratio),
            "instructions": dict(self.instructions),
            "read_bytes": self.read_bytes,
            "write_bytes": self.write_bytes,
        }


def core_profiles(result: EmulationResult, cols: Columns) -> tuple[CoreProfile, ...]:
    """One CoreProfile per block, from the per-block sums in `cols` (plain Python: a block has
    only N_PIPES figures each, and small runs pay per numpy call)."""
    busy, blocked = cols.busy.tolist(), cols.blocked.tolist()
    count, moved = cols.count.tolist(), cols.nbytes_moved.tolist()
    mhz = result.clock_mhz
    names: dict[tuple, tuple] = {}  # which pipes a block used: the same few sets repeat
    out = []
    for i, b in enumerate(result.blocks):
        bu, bl, co, by = busy[i], blocked[i], count[i], moved[i]
        bu[S] += b.scalar_cycles
        cyc = b.t_end - b.t_start
        d = cyc if cyc > 0 else 1.0
        used = tuple([x + y + z > 0 for x, y, z in zip(bu, co, bl)])  # all are ≥ 0
        pipes = names.get(used)
        if pipes is None:
            pipes = names[used] = tuple((p, PIPE_NAMES[p]) for p in range(N_PIPES) if used[p])
        out.append(
            CoreProfile(
                b.block,
                b.core,
                b.wave,
                cyc / mhz,
                cyc,
                {n: bu[p] / mhz for p, n in pipes},
                {n: bu[p] / d for p, n in pipes},
                {n: bl[p] / d for p, n in pipes},
                {n: co[p] for p, n in pipes},
                by[MTE2],
                by[MTE3] + by[FIX],
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class BreakdownItem:
    """One row of the breakdown: mean time per core and its share of the breakdown total."""

    key: str
    name: str
    time_us: float | None  # None: not measured (e.g. imported from a tool that lacks it)
    share: float
    ratio: float  # time_us / kernel time: how busy the unit was while the kernel ran

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "name": self.name,
            "time_us": self.time_us,
            "share": self.share,
            "ratio": self.ratio,
        }


def breakdown_items(times_us: dict[str, float | None], kernel_us: float) -> tuple[BreakdownItem, ...]:
    """Rows for every category; shares are of the sum of the measured rows (they sum to 1)."""
    total = sum(v for v in times_us.values() if v)
    rows = []
    for key, name, _ in CATEGORIES:
        t = times_us.get(key)
        rows.append(
            BreakdownItem(
                key,
                name,
                t,
                (t / total) if t and total > 0 else 0.0,
                (t / kernel_us) if t and kernel_us > 0 else 0.0,
            )
        )
    return tuple(rows)


def breakdown_times(totals: PipeTotals, cores_used: int, clock_mhz: float) -> dict:
    """Per-core mean µs of each category."""
    n = max(cores_used, 1) * clock_mhz
    out = {}
    for key, _, pipe in CATEGORIES:
        out[key] = (totals.sync_wait if pipe is None else totals.busy[pipe]) / n
    return out


def uses_cube(totals_busy: list[float]) -> bool:
    return any(totals_busy[p] > 0 for p in CUBE_PIPES)


__all__ = [
    "CATEGORIES",
    "Columns",
    "columns",
    "union_length",
    "union_lengths",
    "PipeTotals",
    "pipe_totals",
    "CoreProfile",
    "core_profiles",
    "BreakdownItem",
    "breakdown_items",
    "breakdown_times",
    "KIND_SET",
    "KIND_WAIT",
    "KIND_WORK",
]
