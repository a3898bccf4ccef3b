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

from ...npu.pipes import FIX, MTE1, MTE2, MTE3, N_PIPES, PIPE_NAMES, M, S, V
from ...npu.results import KIND_SET, KIND_WAIT, KIND_WORK, EmulationResult, Records

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


def record_slots(kind: np.ndarray, pipe: np.ndarray) -> np.ndarray:
    """Each record's kind and pipe as one key, kind * N_PIPES + pipe (`Columns.slot`)."""
    return kind.astype(np.int64) * N_PIPES + pipe


def columns(result: EmulationResult) -> Columns:
    r = result.records
    nb = len(result.blocks)
    slot = record_slots(r.kind, r.pipe)
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
    order = np.argsort(start, kind="stable")
    return _union_sorted(start[order], end[order])


def _union_sorted(s: np.ndarray, e: np.ndarray) -> float:
    """`union_length` of intervals already sorted by start."""
    if len(s) == 0:
        return 0.0
    prev = np.empty_like(e)  # the reach of the intervals before each one
    prev[0] = -np.inf
    np.maximum.accumulate(e[:-1], out=prev[1:])
    gain = e - np.maximum(s, prev, out=prev)
    return float(np.maximum(gain, 0.0, out=gain).sum())


def block_unions(slot: np.ndarray, start: np.ndarray, end: np.ndarray) -> list[float]:
    """One block's five unions (cycles): all work, work or wait, compute work, movement work,
    and compute or movement work; `slot` is each record's kind * N_PIPES + pipe.

    Why one block at a time: a 16384³ matmul has 25M records, and the whole-launch pass this
    replaced made five rows of every record (2 GB of temporaries, 6–13 s); five rows of one
    block's records are a few MB. The five unions share one sort and one pass of each numpy
    call (a small run pays per call). A block's figures are also what its own overlap shows
    (`overlap`), so one function computes both and they agree to the bit.
    """
    if len(start) == 0:
        return [0.0] * len(_UNIONS)
    order = np.argsort(start, kind="stable")
    s = start[order]
    # one row per union: a record outside it ends at -inf, so it neither reaches past the
    # intervals before it nor adds any length (its gain is clipped to 0)
    e = np.where((_CLASS[slot[order]] & _UNIONS) != 0, end[order], -np.inf)
    prev = np.empty_like(e)  # the reach of the intervals before each one, per union
    prev[:, 0] = -np.inf
    np.maximum.accumulate(e[:, :-1], axis=1, out=prev[:, 1:])
    gain = np.subtract(e, np.maximum(s, prev, out=prev), out=prev)
    return np.maximum(gain, 0.0, out=gain).sum(axis=1).tolist()


def _same_block(a: tuple, b: tuple) -> bool:
    """Whether two blocks' (or runs of blocks') (slot, start, end) columns are equal: the
    blocks of a wave in lockstep (npu/memory/lockstep.py) have the same records at the same cycles,
    and their unions are then computed once (a small run's profile paid ~36 numpy calls per
    block for each)."""
    s, t = a[1], b[1]
    if len(s) != len(t) or (len(s) and (s[0] != t[0] or s[-1] != t[-1])):
        return False  # (other blocks mostly differ in length or start: no full compare)
    if len(s) <= 1 << 16:  # (bytes compare: ~10x cheaper than `array_equal` on small blocks)
        return all(x.tobytes() == y.tobytes() for x, y in zip(a, b))
    return all(np.array_equal(x, y) for x, y in zip(a, b))


def overlap_share(compute: float, move: float, either: float) -> float | None:
    """OVERLAP_DEF from the unions of compute work, movement work and either (cycles): the
    hidden share of the shorter activity, None when one of them is empty."""
    return _hidden_share(max(compute + move - either, 0.0), min(compute, move))


def _hidden_share(hidden: float, shorter: float) -> float | None:
    """hidden / shorter to 12 decimals: the unions are sums of float intervals (cycles like
    123.08), good to ~1e-13, so an exact 87.5% came out as 0.87499999999999 or 0.87500000000001
    depending on the order of the sums, and was shown as 87% or 88%."""
    return round(hidden / shorter, 12) if shorter > 0 else None


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
    block_overlaps: tuple = ()  # each block's own overlap figure (None: nothing to overlap)

    @property
    def overlap(self) -> float | None:
        """Share of the shorter of compute/movement hidden under the other (None if one is 0)."""
        return _hidden_share(self.overlap_cycles, min(self.compute, self.move))


def pipe_totals(result: EmulationResult, cols: Columns) -> PipeTotals:
    busy, blocked, _ = cols.sums.sum(axis=0).tolist()  # per kind, per pipe
    busy[S] += sum(b.scalar_cycles for b in result.blocks)
    count = cols.counts[:, KIND_WORK].sum(axis=0).tolist()
    rows = _unions_by_block(cols)
    worked, either, c, m, both = np.array(rows).reshape(-1, len(_UNIONS)).sum(axis=0).tolist()
    shares: dict[int, float | None] = {}  # by row: blocks in lockstep share theirs
    for row in rows:
        if id(row) not in shares:
            shares[id(row)] = overlap_share(*row[2:])
    return PipeTotals(
        busy,
        blocked,
        count,
        max(either - worked, 0.0),
        c,
        m,
        max(c + m - both, 0.0),
        tuple([shares[id(row)] for row in rows]),
    )


def _unions_by_block(cols: Columns) -> list[list[float]]:
    """`block_unions` of every block, computed once for blocks with equal columns.

    Why: the blocks of a wave in lockstep (npu/memory/lockstep.py) have the same records at the same
    cycles, and a small run's profile paid ~36 numpy calls per block for the same figures.
    All blocks equal is one compare of the columns with themselves shifted by a block;
    otherwise each block is compared with the one before.
    """
    bounds = [*np.asarray(cols.offsets, dtype=np.int64).tolist(), len(cols.start)]
    columns = (cols.slot, cols.start, cols.end)
    nb = len(bounds) - 1
    if nb < 1:
        return []
    size = bounds[1] - bounds[0]
    if (
        nb > 1
        and size > 0
        and all(b - a == size for a, b in zip(bounds, bounds[1:]))
        and _same_block(tuple(x[size:] for x in columns), tuple(x[:-size] for x in columns))
    ):  # (every block equals the one before it: the columns equal themselves one block on)
        row = block_unions(cols.slot[:size], cols.start[:size], cols.end[:size])
        return [row] * nb
    rows = []
    last = None  # the block before: its columns and unions
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        here = tuple(x[lo:hi] for x in columns)
        if last is None or not _same_block(here, last[0]):
            last = (here, block_unions(*here))
        rows.append(last[1])
    return rows


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
    last = figures = None  # the block before: its sums and its figures (blocks in lockstep repeat)
    for i, b in enumerate(result.blocks):
        bu, bl, co, by = busy[i], blocked[i], count[i], moved[i]
        bu[S] += b.scalar_cycles
        cyc = b.t_end - b.t_start
        here = (bu, bl, co, by, cyc)
        if here != last:
            last = here
            d = cyc if cyc > 0 else 1.0
            used = tuple([x + y + z > 0 for x, y, z in zip(bu, co, bl)])  # all are ≥ 0
            pipes = names.get(used)
            if pipes is None:
                pipes = names[used] = tuple((p, PIPE_NAMES[p]) for p in range(N_PIPES) if used[p])
            figures = (
                cyc / mhz,
                cyc,
                {n: bu[p] / mhz for p, n in pipes},
                {n: bu[p] / d for p, n in pipes},
                {n: bl[p] / d for p, n in pipes},
                {n: co[p] for p, n in pipes},
                by[MTE2],
                by[MTE3] + by[FIX],
            )
        out.append(CoreProfile(b.block, b.core, b.wave, *figures))  # (equal blocks share dicts)
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
    "block_unions",
    "overlap_share",
    "record_slots",
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
