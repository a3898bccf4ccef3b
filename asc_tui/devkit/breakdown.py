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

import numpy as np

from ..ascendc.enums import N_PIPES, PIPE_NAMES
from ..npu.results import KIND_SET, KIND_WAIT, KIND_WORK, EmulationResult

S, V, M, MTE1, MTE2, MTE3, FIX = range(7)
COMPUTE_PIPES = (V, M)
MOVE_PIPES = (MTE1, MTE2, MTE3, FIX)
CUBE_PIPES = (M, MTE1, FIX)
_IS_COMPUTE = np.isin(np.arange(N_PIPES), COMPUTE_PIPES)
_IS_MOVE = np.isin(np.arange(N_PIPES), MOVE_PIPES)

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
    """Every record of every block, concatenated; `block` indexes `result.blocks`."""

    block: np.ndarray
    pipe: np.ndarray
    start: np.ndarray
    end: np.ndarray
    kind: np.ndarray
    line: np.ndarray
    op: np.ndarray
    nbytes: np.ndarray
    link: np.ndarray  # global index of the linked record, -1 if none
    offsets: np.ndarray  # first global index of each block

    @property
    def dur(self) -> np.ndarray:
        return self.end - self.start

    def __len__(self) -> int:
        return len(self.pipe)


def columns(result: EmulationResult) -> Columns:
    blocks = result.blocks
    sizes = np.array([len(b) for b in blocks], dtype=np.int64)
    offsets = np.zeros(len(blocks), dtype=np.int64)
    if len(blocks) > 1:
        offsets[1:] = np.cumsum(sizes)[:-1]

    def cat(name, dtype):
        if not blocks:
            return np.zeros(0, dtype)
        return np.concatenate([getattr(b, name) for b in blocks]).astype(dtype, copy=False)

    link = cat("link", np.int64)
    owner = np.repeat(np.arange(len(blocks), dtype=np.int64), sizes)
    link = np.where(link >= 0, link + offsets[owner] if len(blocks) else link, -1)
    return Columns(owner, cat("pipe", np.int64), cat("start", np.float64), cat("end", np.float64),
                   cat("kind", np.int8), cat("line", np.int64), cat("op", np.int64),
                   cat("nbytes", np.int64), link, offsets)


def bin_sums(index: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Float sums of `weights` per index in [0, size) (np.bincount, always float64)."""
    return np.bincount(index, weights=weights.astype(np.float64, copy=False),
                       minlength=size)[:size].astype(np.float64, copy=False)


def union_length(start: np.ndarray, end: np.ndarray, presorted: bool = False) -> float:
    """Length of the union of intervals [start, end) (any order, may overlap)."""
    if len(start) == 0:
        return 0.0
    if presorted:
        s, e = start, end
    else:
        order = np.argsort(start, kind="stable")
        s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    prev = np.empty_like(reach)
    prev[0] = -np.inf
    prev[1:] = reach[:-1]
    return float(np.clip(e - np.maximum(s, prev), 0.0, None).sum())


def _separated(cols: Columns, span: float) -> tuple[np.ndarray, np.ndarray]:
    """Start/end shifted so different blocks never overlap (unions stay per block)."""
    shift = cols.block.astype(np.float64) * span
    return cols.start + shift, cols.end + shift


@dataclass(frozen=True)
class PipeTotals:
    """Per-pipe sums over all blocks (cycles), plus the per-core interval figures."""

    busy: np.ndarray  # [N_PIPES] cycles, scalar includes issue cycles
    blocked: np.ndarray  # [N_PIPES] cycles of wait records
    instructions: np.ndarray  # [N_PIPES] work records
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
    dur = cols.dur
    work = cols.kind == KIND_WORK
    wait = cols.kind == KIND_WAIT
    busy = bin_sums(cols.pipe[work], dur[work], N_PIPES)
    busy[S] += sum(b.scalar_cycles for b in result.blocks)
    blocked = bin_sums(cols.pipe[wait], dur[wait], N_PIPES)
    count = np.bincount(cols.pipe[work], minlength=N_PIPES)[:N_PIPES]
    span = max((b.t_end for b in result.blocks), default=0.0) + 1.0
    s, e = _separated(cols, span)
    order = np.argsort(s, kind="stable")  # one sort; every subset below stays sorted
    s, e, kind, pipe = s[order], e[order], cols.kind[order], cols.pipe[order]
    w_s = kind == KIND_WORK

    def u(mask):
        return union_length(s[mask], e[mask], presorted=True)

    worked = u(w_s)
    either = u(w_s | (kind == KIND_WAIT))
    is_c = w_s & _IS_COMPUTE[pipe]
    is_m = w_s & _IS_MOVE[pipe]
    c, m, both = u(is_c), u(is_m), u(is_c | is_m)
    return PipeTotals(busy, blocked, count.astype(np.int64), max(either - worked, 0.0), c, m,
                      max(c + m - both, 0.0))


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
        return {"block": self.block, "core": self.core, "wave": self.wave,
                "time_us": self.time_us, "cycles": self.cycles, "busy_us": dict(self.busy_us),
                "ratio": dict(self.ratio), "wait_ratio": dict(self.wait_ratio),
                "instructions": dict(self.instructions), "read_bytes": self.read_bytes,
                "write_bytes": self.write_bytes}


def core_profiles(result: EmulationResult, cols: Columns) -> tuple[CoreProfile, ...]:
    nb = len(result.blocks)
    if nb == 0:
        return ()
    dur = cols.dur
    key = cols.block * N_PIPES + cols.pipe
    size = nb * N_PIPES
    work = cols.kind == KIND_WORK
    wait = cols.kind == KIND_WAIT
    busy = bin_sums(key[work], dur[work], size).reshape(nb, N_PIPES)
    blocked = bin_sums(key[wait], dur[wait], size).reshape(nb, N_PIPES)
    count = np.bincount(key[work], minlength=size).reshape(nb, N_PIPES)
    nbytes = bin_sums(key[work], cols.nbytes[work], size).reshape(nb, N_PIPES)
    mhz = result.clock_mhz
    busy[:, S] += [b.scalar_cycles for b in result.blocks]
    cyc = np.array([b.t_end - b.t_start for b in result.blocks], dtype=np.float64)
    d = np.where(cyc > 0, cyc, 1.0)[:, None]
    used = ((busy > 0) | (count > 0) | (blocked > 0)).tolist()
    busy_us, ratio, wait = (busy / mhz).tolist(), (busy / d).tolist(), (blocked / d).tolist()
    count_l = count.tolist()
    rd, wr = nbytes[:, MTE2].tolist(), (nbytes[:, MTE3] + nbytes[:, FIX]).tolist()
    out = []
    for i, b in enumerate(result.blocks):
        ps = [p for p in range(N_PIPES) if used[i][p]]
        out.append(CoreProfile(
            block=b.block, core=b.core, wave=b.wave, time_us=float(cyc[i]) / mhz,
            cycles=float(cyc[i]), busy_us={PIPE_NAMES[p]: busy_us[i][p] for p in ps},
            ratio={PIPE_NAMES[p]: ratio[i][p] for p in ps},
            wait_ratio={PIPE_NAMES[p]: wait[i][p] for p in ps},
            instructions={PIPE_NAMES[p]: count_l[i][p] for p in ps},
            read_bytes=rd[i], write_bytes=wr[i]))
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
        return {"key": self.key, "name": self.name, "time_us": self.time_us,
                "share": self.share, "ratio": self.ratio}


def breakdown_items(times_us: dict[str, float | None], kernel_us: float) -> tuple[BreakdownItem,
                                                                                  ...]:
    """Rows for every category; shares are of the sum of the measured rows (they sum to 1)."""
    total = sum(v for v in times_us.values() if v)
    rows = []
    for key, name, _ in CATEGORIES:
        t = times_us.get(key)
        rows.append(BreakdownItem(key, name, t, (t / total) if t and total > 0 else 0.0,
                                  (t / kernel_us) if t and kernel_us > 0 else 0.0))
    return tuple(rows)


def breakdown_times(totals: PipeTotals, cores_used: int, clock_mhz: float) -> dict:
    """Per-core mean µs of each category."""
    n = max(cores_used, 1) * clock_mhz
    out = {}
    for key, _, pipe in CATEGORIES:
        out[key] = float((totals.sync_wait if pipe is None else totals.busy[pipe]) / n)
    return out


def uses_cube(totals_busy: np.ndarray) -> bool:
    return bool(any(totals_busy[p] > 0 for p in CUBE_PIPES))


__all__ = ["bin_sums", "CATEGORIES", "Columns", "columns", "union_length", "PipeTotals", "pipe_totals",
           "CoreProfile", "core_profiles", "BreakdownItem", "breakdown_items", "breakdown_times",
           "KIND_SET", "KIND_WAIT", "KIND_WORK"]
