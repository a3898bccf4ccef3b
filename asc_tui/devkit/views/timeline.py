"""Screen-sized views of a pipeline timeline, computed in O(width · log n) per frame.

Per pipe the records are serialised intervals, so the busy time before any instant t is a
prefix sum plus the part of the interval containing t. Evaluating that at the width+1 column
edges gives each column's busy fraction exactly, whatever the zoom: a million-instruction run
costs a few `searchsorted` calls per lane per frame, never a pass over the records. Records
back to back share an end and a start, which cancel: the index keeps one value per run of
them (`_drop_shared`), so a 25M-record run's searches stay in cache.
No Textual here: the TUI widget only turns these arrays into characters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ascendc.enums import PIPE_NAMES
from ...npu.results import KIND_WAIT, KIND_WORK, EmulationResult
from ..profile.timing import UNKNOWN, overlap

#: windows whose answers a model keeps (each is a few KB: columns × pipes or blocks)
KEPT = 16


@dataclass(frozen=True)
class _Intervals:
    """Intervals (possibly overlapping: several blocks) indexed for "busy time before t".

    busy(t) = Σ clamp(t − s_i, 0, e_i − s_i) = Σ_{s_i<t} (t − s_i) − Σ_{e_i<t} (t − e_i): two
    `searchsorted` calls on the sorted starts and ends and their prefix sums, exact for any
    mix of intervals, vectorised over all column edges at once.
    """

    starts: np.ndarray
    start_prefix: np.ndarray  # [0, s0, s0+s1, ...] over sorted starts
    ends: np.ndarray
    end_prefix: np.ndarray

    @classmethod
    def build(cls, starts: np.ndarray, ends: np.ndarray) -> _Intervals:
        # Records come nearly sorted (per block, per pipe): the stable sort's runs make it cheap.
        starts = starts.astype(np.float64, copy=False)
        s = np.sort(starts, kind="stable")
        e = np.sort(np.maximum(ends.astype(np.float64, copy=False), starts), kind="stable")
        return cls.of_sorted(s, e)

    @classmethod
    def joined(cls, parts: list[_Intervals]) -> _Intervals:
        """The index of all of `parts`' intervals together (every block's, for the all-blocks
        view), from their kept values: a value dropped as both a start and an end in one part
        cancels in the whole too, so the joined values equal those of building from every
        record (the same multiset after `_drop_shared`) — sorting tens of thousands of kept
        values instead of 25M records."""
        s = np.sort(np.concatenate([p.starts for p in parts] or [np.zeros(0)]), kind="stable")
        e = np.sort(np.concatenate([p.ends for p in parts] or [np.zeros(0)]), kind="stable")
        return cls.of_sorted(s, e)

    @classmethod
    def of_sorted(cls, s: np.ndarray, e: np.ndarray) -> _Intervals:
        """The index of sorted starts `s` and sorted ends `e`."""
        s, e = _drop_shared(s, e)
        return cls(s, np.concatenate(([0.0], np.cumsum(s))), e, np.concatenate(([0.0], np.cumsum(e))))

    def busy_before(self, t: np.ndarray) -> np.ndarray:
        """Busy cycles in [0, t) for every t (vectorised)."""
        ks = np.searchsorted(self.starts, t, side="left")
        ke = np.searchsorted(self.ends, t, side="left")
        return (ks * t - self.start_prefix[ks]) - (ke * t - self.end_prefix[ke])


def _drop_shared(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted starts and ends less every value that is both (as often as both have it).

    Why: an end at v and a start at v add (t − v) − (t − v) = 0 to `busy_before(t)` for any
    t, so dropping the pair changes no answer, and records back to back (a pipe's usual
    stream) collapse into one run: matmul 16384³'s MTE1 keeps 1 value in 12, and a frame's
    binary searches stay in cache instead of missing it at every level.
    """
    if not len(s) or not len(e):
        return s, e
    vs, at_s, n_s = _runs(s)
    ve, at_e, n_e = _runs(e)
    _, i, j = np.intersect1d(vs, ve, assume_unique=True, return_indices=True)
    if not len(i):
        return s, e
    k = np.minimum(n_s[i], n_e[j])
    return _drop_first(s, at_s[i], k), _drop_first(e, at_e[j], k)


def _runs(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A sorted array's distinct values, where each one's run starts, and its length."""
    at = np.flatnonzero(np.concatenate(([True], a[1:] != a[:-1])))
    return a[at], at, np.diff(np.append(at, len(a)))


def _drop_first(a: np.ndarray, at: np.ndarray, k: np.ndarray) -> np.ndarray:
    """`a` without the first k[r] elements of the run starting at at[r], for every r."""
    before = np.concatenate(([0], np.cumsum(k)[:-1]))
    keep = np.ones(len(a), dtype=bool)
    keep[np.repeat(at - before, k) + np.arange(int(k.sum()))] = False
    return a[keep]


@dataclass(frozen=True)
class _Stacked:
    """Every block's `_Intervals` of one pipe in one array: block i's times are shifted by
    i × span so one `searchsorted` answers all blocks; prefix sums stay unshifted."""

    span: float
    starts: np.ndarray  # shifted, sorted block after block
    start_prefix: np.ndarray
    start_first: np.ndarray  # index of each block's first start
    ends: np.ndarray
    end_prefix: np.ndarray
    end_first: np.ndarray

    @classmethod
    def build(cls, per_block: list[_Intervals], span: float) -> _Stacked:
        off = [i * span for i in range(len(per_block))]
        first_s = np.cumsum([0] + [len(iv.starts) for iv in per_block])[:-1]
        first_e = np.cumsum([0] + [len(iv.ends) for iv in per_block])[:-1]
        starts = np.concatenate([iv.starts + o for iv, o in zip(per_block, off)] or [[]])
        ends = np.concatenate([iv.ends + o for iv, o in zip(per_block, off)] or [[]])
        raw_s = np.concatenate([iv.starts for iv in per_block] or [[]])
        raw_e = np.concatenate([iv.ends for iv in per_block] or [[]])
        return cls(
            span,
            starts,
            np.concatenate(([0.0], np.cumsum(raw_s))),
            first_s,
            ends,
            np.concatenate(([0.0], np.cumsum(raw_e))),
            first_e,
        )

    def busy_before(self, t: np.ndarray) -> np.ndarray:
        """[n_blocks, len(t)] busy cycles of each block in [0, t)."""
        n = len(self.start_first)
        # Beyond a block's own [0, span − 1] the answer no longer changes: clip so a query
        # never reaches a neighbour's shifted times.
        t = np.clip(t, -0.5, self.span - 0.5)
        shift = (np.arange(n) * self.span)[:, None]
        q = (t[None, :] + shift).ravel()
        ks = np.searchsorted(self.starts, q, side="left").reshape(n, -1)
        ke = np.searchsorted(self.ends, q, side="left").reshape(n, -1)
        fs, fe = self.start_first[:, None], self.end_first[:, None]
        started = (ks - fs) * t - (self.start_prefix[ks] - self.start_prefix[fs])
        ended = (ke - fe) * t - (self.end_prefix[ke] - self.end_prefix[fe])
        return started - ended


@dataclass(frozen=True)
class LaneView:
    pipe: str
    busy: np.ndarray  # per column, fraction 0..1 of the column's time the pipe works
    wait: np.ndarray  # per column, fraction the pipe is blocked on an event
    utilisation: float  # busy share of the whole window


@dataclass(frozen=True)
class Frame:
    """What one screen of the timeline shows."""

    t0: float
    t1: float
    lanes: tuple[LaneView, ...]
    block: int | None  # None: the average over all blocks


class TimelineModel:
    """Per-block interval indexes (built lazily, once per result) and window queries."""

    def __init__(self, em: EmulationResult, overlap: float | None | object = UNKNOWN, block_overlaps=()):
        """`overlap`: the all-blocks figure when the caller has it (the profile's), and
        `block_overlaps` each block's (`PipeTotals.block_overlaps`), so they are not computed
        a second time."""
        self.em = em
        self.kernel_cycles = max(float(em.kernel_cycles), 1.0)
        self.n_blocks = len(em.blocks)
        present = set()
        for b in em.blocks:
            present.update(int(p) for p in np.unique(b.pipe))
        self.pipes = tuple(i for i in range(len(PIPE_NAMES)) if i in present)
        self._index: dict[int, dict[int, tuple[_Intervals, _Intervals]]] = {}
        self._stacked: dict[int, _Stacked] = {}
        self._overlap: dict[int | None, float | None] = {} if overlap is UNKNOWN else {None: overlap}
        self._overlap.update(enumerate(block_overlaps))
        self._views: dict[tuple, object] = {}  # the last few windows' answers (see `_kept`)

    @property
    def ready(self) -> bool:
        """Indexed (`prepare()` ran): frames are pure queries from here on."""
        return bool(self._index)

    def prepare(self, width: int | None = None) -> TimelineModel:
        """Build every index and every overlap figure (callable from a worker thread), and with
        `width` (the lanes' columns) the whole-run view a new result is first shown at.

        Why all blocks' overlaps now: one block's figure sorts that block's records (~25 ms
        for a million), so computing it lazily made the first frame showing each block the
        slowest frame of the view. Why the first view: its queries are the first touch of an
        index of hundreds of MB (25M records: 50–90 ms of cache misses, against ~7 ms once
        warm); done here, in the thread, the first frame is a lookup. After `prepare` a frame
        only queries.
        """
        if not self._index:
            self._build()
        for block in (None, *range(self.n_blocks)):
            self.overlap(block)
        if width:
            self.frame(0.0, self.kernel_cycles, width)
            self.block_activity(0.0, self.kernel_cycles, width)
        return self

    @property
    def instructions(self) -> int:
        """The instructions issued (work records: waits and flags are not instructions)."""
        return self.em.instructions

    def _block_index(self, i: int) -> dict[int, tuple[_Intervals, _Intervals]]:
        """Per pipe (work, wait) indexes of block i; i = -1 indexes all blocks together."""
        if not self._index:
            self._build()
        return self._index[i]

    def _build(self) -> None:
        """Every block's indexes and the all-blocks ones, once per result (first frame)."""
        blocks = self.em.blocks
        for i, b in enumerate(blocks):
            pipe, kind, start, end = b.pipe, b.kind, b.start, b.end
            is_work, is_wait = kind == KIND_WORK, kind == KIND_WAIT
            idx = {}
            for p in self.pipes:
                on = pipe == p
                work, wait = on & is_work, on & is_wait
                idx[p] = (_Intervals.build(start[work], end[work]), _Intervals.build(start[wait], end[wait]))
            self._index[i] = idx
        self._index[-1] = {  # all blocks at once, from their indexes (`_Intervals.joined`)
            p: tuple(_Intervals.joined([self._index[i][p][k] for i in range(len(blocks))]) for k in (0, 1))
            for p in self.pipes
        }
        span = float(max((b.end.max() for b in blocks if len(b)), default=0.0)) + 1.0
        self._stacked = {
            p: _Stacked.build([self._index[i][p][0] for i in range(len(blocks))], span) for p in self.pipes
        }

    def _kept(self, key: tuple, compute):
        """`compute()`'s answer for a window, kept for the last `KEPT` windows: going back to a
        view (home, a block and back) is a lookup, and so is the view `prepare` built."""
        got = self._views.pop(key, None)
        if got is None:
            got = compute()
        self._views[key] = got  # newest last
        while len(self._views) > KEPT:
            del self._views[next(iter(self._views))]
        return got

    def frame(self, t0: float, t1: float, width: int, block: int | None = None) -> Frame:
        """Column fractions for [t0, t1) cycles over `width` columns (block None = average)."""
        return self._kept(("frame", t0, t1, width, block), lambda: self._frame(t0, t1, width, block))

    def _frame(self, t0: float, t1: float, width: int, block: int | None) -> Frame:
        width = max(int(width), 1)
        t1 = max(t1, t0 + 1e-9)
        edges = np.linspace(t0, t1, width + 1)
        col = (t1 - t0) / width
        n = max(self.n_blocks, 1) if block is None else 1
        index = self._block_index(-1 if block is None else block)
        lanes = []
        for p in self.pipes:
            work_iv, wait_iv = index[p]
            b = work_iv.busy_before(edges)
            lanes.append(
                LaneView(
                    PIPE_NAMES[p],
                    np.clip(np.diff(b) / (col * n), 0, 1),
                    np.clip(np.diff(wait_iv.busy_before(edges)) / (col * n), 0, 1),
                    float(b[-1] - b[0]) / ((t1 - t0) * n),
                )
            )
        return Frame(t0, t1, tuple(lanes), block)

    def block_activity(self, t0: float, t1: float, width: int) -> tuple[np.ndarray, np.ndarray]:
        """Per block and column, the busiest pipe's busy fraction ([n_blocks, width]) and per
        block the busiest pipe's share of the window: the load-balance overview. All blocks are
        answered by one `searchsorted` per pipe (see `_Stacked`)."""
        return self._kept(("blocks", t0, t1, width), lambda: self._block_activity(t0, t1, width))

    def _block_activity(self, t0: float, t1: float, width: int) -> tuple[np.ndarray, np.ndarray]:
        width = max(int(width), 1)
        t1 = max(t1, t0 + 1e-9)
        edges = np.linspace(t0, t1, width + 1)
        col = (t1 - t0) / width
        if not self._index:
            self._build()
        act = np.zeros((self.n_blocks, width))
        share = np.zeros(self.n_blocks)
        for st in self._stacked.values():
            b = st.busy_before(edges)  # [n_blocks, width + 1]
            np.maximum(act, np.diff(b, axis=1) / col, out=act)
            np.maximum(share, (b[:, -1] - b[:, 0]) / (t1 - t0), out=share)
        return np.clip(act, 0, 1), share

    def overlap(self, block: int | None = None) -> float | None:
        """`views.timing.OVERLAP_DEF` for one block or all of them (None: nothing to overlap)."""
        if block not in self._overlap:
            self._overlap[block] = overlap(self.em, block)
        return self._overlap[block]
