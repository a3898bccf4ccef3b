"""A compiled numeric trace (npu/replay/numtrace.py) and how it runs for a batch of replayed blocks.

Op-major: each entry is one numpy call over a (blocks, count) view of a batch of consecutive
blocks, a loop body's entries over (iterations × blocks), a chunk of iterations at a time. Local
memory becomes a scratch array with one row per block (per iteration in a loop). Both reorder
work, so both are checked: blocks of a batch must not write GM another of them touches (else
they run one by one), a loop's iterations must not write GM another iteration touches nor read
local memory an earlier iteration wrote (else its entries run one by one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .numops import (
    GM,
    LOCAL,
    GmOp,
    LocalOp,
    Segment,
    covered,
    elide,
    local_dsts,
    loops,
    merge,
    overlaps,
    root_of,
    run_entry,
)

if TYPE_CHECKING:
    from .numtrace import NumTrace

#: bytes of scratch a chunk of loop iterations may take (so it stays in cache), and the local
#: state of a batch of blocks (a batch of thousands of blocks is run in several)
CHUNK_BYTES = 1 << 19
BATCH_BYTES = 1 << 25


class Program:
    """A compiled trace: segments, the scratch row layout, the GM operands for the checks."""

    def __init__(self, trace: NumTrace, block: int, ids_of: dict, ids: list[int]):
        self.block = block
        entries, starts, gofs = trace.entries, trace.starts, trace.gofs
        self.layout, self.row = _layout(ids_of)
        self.gms: list[GmOp] = []
        found = loops(ids, starts, gofs)
        self.segments = [self._segment(entries, starts, gofs, i, p, r) for i, p, r in found]
        gms = self.gms
        self._v = np.array([g.v for g in gms], dtype=np.int64)
        self._a = np.array([g.a for g in gms], dtype=np.int64)
        self._ext = np.array([g.ext for g in gms], dtype=np.int64)
        self._len = np.array([len(g.arr) for g in gms], dtype=np.int64)
        self._isz = np.array([g.isz for g in gms], dtype=np.int64)
        self._addr = np.array([g.addr for g in gms], dtype=np.int64)
        self._write = np.array([g.write for g in gms], dtype=bool)
        self._root = np.array([g.root for g in gms], dtype=np.int64)
        #: GM buffers the trace writes
        self._written = list({id(e[3][1]): e[3][1] for e in ids_of if e[3][0] == GM}.values())

    # ---- compiling --------------------------------------------------------------------------------
    def _segment(self, entries, starts, gofs, i: int, p: int, reps: int) -> Segment:
        if reps > 1:
            seg = self._loop(entries, starts, gofs, i, p, reps)
            if seg is not None:
                return seg
            p, reps = p * reps, 1
        slots = [self._slot(entries[k], starts, gofs[k], None, None, 1) for k in range(i, i + p)]
        return Segment(slots, 1, [])

    def _slot(self, e: tuple, starts, g: int, steps, local_main, reps: int) -> tuple:
        ops = []
        for k, spec in enumerate(e[3:]):
            if spec is None:
                ops.append(None)
            elif spec[0] == GM:
                step = steps[k] if steps else 0
                gm = GmOp(spec, starts[g], step, reps, self.block, k == 0)
                self.gms.append(gm)
                ops.append(gm)
                g += 1
            else:
                _, mem, off, n, dtype = spec
                main = bool(local_main and local_main[k])
                ops.append(LocalOp(dtype, n, self.layout[mem] + off, main))
        return (e[0], e[1], e[2], ops)

    def _loop(self, entries, starts, gofs, i: int, p: int, reps: int) -> Segment | None:
        """A loop body run over chunks of iterations, if reordering it is exact: no iteration
        writes GM another iteration touches, and each local read is of bytes the same
        iteration wrote before (a loop-carried value would cross scratch rows) or of bytes
        no iteration writes (read from the state before the loop)."""
        g0, g1 = gofs[i], gofs[i + p]
        g2 = gofs[i + 2 * p] if i + 2 * p < len(gofs) else len(starts)
        steps_all = [b - a for a, b in zip(starts[g0:g1], starts[g1:g2])]
        if any(s < 0 for s in steps_all):
            return None
        body = entries[i : i + p]
        # local memory: writes and reads in body order
        writes: list[tuple] = []
        mains = []
        written = [(self.layout[f[1]] + f[2], f[3] * f[4].itemsize) for f in local_dsts(body)]
        for e in body:
            row = [False, False, False]
            for k in (1, 2):
                spec = e[3 + k]
                if spec is None or spec[0] != LOCAL:
                    continue
                lo = self.layout[spec[1]] + spec[2]
                hi = lo + spec[3] * spec[4].itemsize
                if covered(writes, lo, hi):
                    continue
                if any(overlaps(lo, hi, at, n) for at, n in written):
                    return None  # a value carried from one iteration to the next
                row[k] = True
            d = e[3]
            if d[0] == LOCAL:
                lo = self.layout[d[1]] + d[2]
                writes.append((lo, lo + d[3] * d[4].itemsize))
            mains.append(row)
        # GM: per array written in the body, every operand on it moves by the same step, at
        # least as far as one iteration's footprint on it spans (all in bytes: operands may
        # view one array as different types, or start at other addresses)
        per_root: dict = {}
        g = g0
        for e in body:
            for k, spec in enumerate(e[3:]):
                if spec is not None and spec[0] == GM:
                    buf, isz = spec[1], spec[2].itemsize
                    at = buf.data.__array_interface__["data"][0] + starts[g] * isz
                    moves = (spec[4] * isz, steps_all[g - g0] * isz)  # per block, per iteration
                    per_root.setdefault(id(root_of(buf.data)), []).append((at, spec[3] * isz, moves, k == 0))
                    g += 1
        for ops in per_root.values():
            if not any(w for *_, w in ops):
                continue
            if len({moves for _, _, moves, _ in ops}) != 1:
                return None
            step = ops[0][2][1]
            width = max(at + nb for at, nb, *_ in ops) - min(at for at, *_ in ops)
            if step < width:
                return None
        slots = []
        g = g0
        for e, main in zip(body, mains):
            steps = [0, 0, 0]
            gk = g
            for k, spec in enumerate(e[3:]):
                if spec is not None and spec[0] == GM:
                    steps[k] = steps_all[gk - g0]
                    gk += 1
            slots.append(self._slot(e, starts, g, steps, main, reps))
            g = gk
        slots, finals = elide(slots)
        return Segment(slots, reps, merge(writes), finals)

    # ---- running ----------------------------------------------------------------------------------
    def run(self, blocks: list[int]) -> None:
        """The numbers of `blocks` (ascending, each admitted by the template), as if each had run
        its Python step by step after the one before it."""
        for buf in self._written:  # GM written: what `lineage.gm_written` does for a plain buffer
            buf.version += 1
        most = max(1, BATCH_BYTES // max(1, self.row))
        for b0, count in _runs(blocks, most):
            if count > 1 and not self._apart(b0, count):
                for b in range(b0, b0 + count):
                    self._run(b, 1)
            else:
                self._run(b0, count)

    def _apart(self, b0: int, count: int) -> bool:
        """Whether no block of b0..b0+count-1 writes GM another of them reads or writes."""
        if not len(self._v):
            return True
        bs = np.arange(b0, b0 + count, dtype=np.int64)
        lo = self._addr[:, None] + self._isz[:, None] * (self._v[:, None] + self._a[:, None] * bs[None, :])
        hi = lo + self._isz[:, None] * self._ext[:, None]
        for root in np.unique(self._root[self._write]):
            on = self._root == root
            w = on & self._write
            wlo, whi = lo[w].min(axis=0), hi[w].max(axis=0)
            alo, ahi = lo[on].min(axis=0), hi[on].max(axis=0)
            clash = (wlo[:, None] < ahi[None, :]) & (alo[None, :] < whi[:, None])
            np.fill_diagonal(clash, False)
            if clash.any():
                return False
        return True

    def in_bounds(self, b: int) -> bool:
        """Whether every GM operand of block b lies inside its buffer (guards make it so; a
        view outside would raise midway through a batch)."""
        if not len(self._v):
            return True
        lo = self._v + self._a * b
        return bool((lo >= 0).all() and (lo + self._ext <= self._len).all())

    def _run(self, b0: int, nb: int) -> None:
        main = np.zeros((nb, self.row), dtype=np.uint8)
        for seg in self.segments:
            if seg.reps == 1:
                _run_slots(seg.slots, main, main, b0, nb, 0, 1, self.row)
                continue
            per = max(1, CHUNK_BYTES // max(1, nb * self.row)) if seg.scratch else seg.reps
            tmp = np.empty((min(per, seg.reps), nb, self.row if seg.scratch else 0), dtype=np.uint8)
            for j0 in range(0, seg.reps, per):
                _run_slots(seg.slots, tmp, main, b0, nb, j0, min(per, seg.reps - j0), self.row)
            if seg.scratch:
                last = tmp[(seg.reps - 1) % per]
                for lo, hi in seg.back:
                    main[:, lo:hi] = last[:, lo:hi]
            _run_slots(seg.finals, main, main, b0, nb, seg.reps - 1, 1, self.row)


def _run_slots(slots, scratch, main, b0: int, nb: int, j0: int, ni: int, row: int) -> None:
    """Each slot over iterations j0..j0+ni-1 of blocks b0..b0+nb-1: one numpy call each."""
    ndarray = np.ndarray
    irow = nb * row
    for code, fn, extra, ops in slots:
        views = []
        for op in ops:
            if op is None:
                views.append(None)
            elif type(op) is LocalOp:
                if op.main or scratch is main:
                    views.append(ndarray((ni, nb, op.n), op.dtype, main, op.off, (0, row, op.isz)))
                else:
                    views.append(ndarray((ni, nb, op.n), op.dtype, scratch, op.off, (irow, row, op.isz)))
            else:
                isz = op.isz
                off = (op.v + op.a * b0 + op.step * j0) * isz
                views.append(ndarray((ni, nb, op.n), op.dtype, op.arr, off, (op.step * isz, op.a * isz, isz)))
        run_entry(code, fn, extra, *views)


def _runs(blocks: list[int], most: int):
    """(first, count) of each run of consecutive blocks, at most `most` blocks each."""
    start = prev = blocks[0]
    for b in blocks[1:]:
        if b != prev + 1 or b - start == most:
            yield start, prev - start + 1
            start = b
        prev = b
    yield start, prev - start + 1


def _layout(entries) -> tuple[dict, int]:
    """Where each memory's bytes go in a scratch row: memory -> row offset of its byte 0 (the
    bytes the trace touches, from the lowest to the highest, 64 B aligned); the row's length."""
    span: dict = {}
    for e in entries:
        for spec in e[3:]:
            if spec is not None and spec[0] == LOCAL:
                _, mem, off, n, dtype = spec
                lo, hi = span.get(mem, (off, off))
                span[mem] = (min(lo, off), max(hi, off + n * dtype.itemsize))
    layout, row = {}, 0
    for mem, (lo, hi) in span.items():
        start = lo // 64 * 64
        layout[mem] = row - start
        row += -(-(hi - start) // 64) * 64
    return layout, row
