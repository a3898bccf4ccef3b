"""Cube operand lineage: which GM elements an L1/L0A/L0B region holds, kept instead of the bytes.

Why: full emulation of a tiled matmul spent half of its emulating thread moving bytes that only
Mmad ever reads: Nd2Nz copies GM → L1, LoadData copies L1 → L0A/L0B, Mmad snapshots L0A/L0B
and compares the snapshots with operands widened before. With lineage, Nd2Nz and LoadData record
*which GM element lands where* (an index `Map`, cached per parameter combination), Mmad keeps
(GM buffer, base, map), operands are matched by lineage (exact) instead of by their bytes, and
a new operand is a strided view of its GM buffer widened once to fp32 (mmad_operands.wide_grid),
or is gathered from GM where it is not such a regular grid. Measured on 1024³ fp16 (2-core VM,
benchmarks/bench_cube.py in alternation with the previous tree): process CPU 63–65 → 55–57 ms
at the same wall time (40–41 → 39–41 ms: the numbers thread's BLAS and the pre-pass now bound
it); on one CPU (jobs inline) a launch takes 51–52 ms instead of 70.

Results cannot change:
- maps are built by running the byte-moving code itself (`fractal.nd2nz_numbers`, `fractal.load_numbers`) on
  the digits of element numbers, so a lazy region holds exactly what the copy would write;
- an element the copy does not write (a hole: Nd2Nz rows past nValue padded to 16, in a tile
  of more rows) keeps what the memory held: its bytes are made right before the region goes
  lazy (`Lazy._fill_holes`), a LoadData moves them as bytes, and an Mmad operand with one is
  taken as bytes;
- a region partly overwritten keeps the rest by lineage (`Lazy._rest`);
- anything else that reads or writes a core's local memory first materialises its lazy regions
  (`settle`, a no-op while there are none), and a write to a GM buffer first materialises what
  was taken from it, waits for submitted jobs that may gather from it and bumps its version
  (`gm_written`).
Lineage is off in timing-only runs, under the sanitizer, and with `run.lineage = False`.

The maps and their caches: ascendc/lineage_maps.py; here the regions that hold them.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from ..npu.numbers.offload import gm_ready, numbers
from ..npu.replay.blockindex import BlockIndex
from .lineage_maps import Map, joined, sliced


class Entry:
    """Bytes [start, end) of local memory `mem` hold `map` over GM array `gm` from `base`;
    `orig`: the base as the kernel gave it — in a template of block replay a `BlockIndex`,
    whose values in every block the cube trace keeps (npu/replay/cubetrace.py), else `base`."""

    __slots__ = ("mem", "start", "end", "gm", "buffer", "base", "map", "orig")

    def __init__(self, mem, start, gm, buffer, base, map_):
        self.mem, self.start, self.end = mem, start, start + map_.size * gm.itemsize
        self.orig = base
        if type(base) is BlockIndex:  # its own value, unpinned: the trace keeps every block's
            base = base.v
        self.gm, self.buffer, self.base, self.map = gm, buffer, base, map_


#: lazy memories with regions, of every live core (a GM write may concern any of them); weak:
#: a block that failed never dropped its own
_live: weakref.WeakSet = weakref.WeakSet()
_live_lock = threading.Lock()
#: pending Mmads (mmad_numbers.Pending) holding operands by lineage
_pending: weakref.WeakSet = weakref.WeakSet()


def track(pending) -> None:
    """`pending` holds operands by lineage until it is flushed: GM writes must see it."""
    _pending.add(pending)


def untrack(pending) -> None:
    _pending.discard(pending)


class Lazy:
    """One core's lazy regions, per memory (disjoint within one). `core.lazy` is this object
    while it has regions and None otherwise, so that other instructions test one attribute."""

    __slots__ = ("core", "mems", "__weakref__")

    def __init__(self, core):
        self.core = core
        self.mems: dict[str, list[Entry]] = {}

    def add(self, mem: str, start: int, gm, buffer, base: int, map_: Map) -> None:
        """Region [start, +map) of `mem` now holds `map_` (what was there is overwritten)."""
        e = Entry(mem, start, gm, buffer, base, map_)
        end = e.end
        old = self.mems.get(mem)
        keep = [e]
        if old and map_.hole is not None:
            self._fill_holes(e, old)
        if old:
            for o in old:
                if o.end <= start or o.start >= end:
                    keep.append(o)
                elif o.start < start or o.end > end:
                    keep += self._rest(o, start, end)  # partly overwritten: the rest stays
        self.mems[mem] = keep
        if not buffer.lineage:
            buffer.lineage = True
        if self.core.lazy is None:
            self.core.lazy = self
            with _live_lock:
                _live.add(self)

    def _fill_holes(self, e: Entry, old: list[Entry]) -> None:
        """Before `e` (with holes) replaces regions under it: write their values where `e` has
        holes, which keep what the memory held before the copy — and a lazy region's values
        are not in the memory's bytes."""
        isz = e.gm.itemsize
        at = e.start + np.flatnonzero(e.map.hole) * isz  # the holes' byte offsets
        for o in old:
            if o.end <= e.start or o.start >= e.end:
                continue
            if o.gm.itemsize != isz or (o.start - e.start) % isz:
                self._materialise(o)  # (elements of other sizes: all of it, simply)
                continue
            inside = at[(at >= o.start) & (at < o.end)]
            rel = (inside - o.start) // isz
            if o.map.hole is not None:
                rel = rel[~o.map.hole[rel]]  # (there the memory is right already)
            if not len(rel):
                continue
            gm_ready(o.buffer)
            vals = o.gm[o.base + o.map.index[rel]]
            if o.map.pad is not None:
                vals[o.map.pad[rel]] = 0
            self.core.memory(o.mem)[o.start : o.end].view(o.gm.dtype)[rel] = vals

    def _rest(self, o: Entry, start: int, end: int) -> list[Entry]:
        """What region `o` still holds around bytes [start, end) written over it: its parts
        before and after, by lineage (a tail tile copied over a whole one's region leaves the
        rest of it as it was); materialised instead when the cut is inside an element."""
        isz = o.gm.itemsize
        if (start - o.start) % isz or (end - o.start) % isz:
            self._materialise(o)
            return []
        rest = []
        if o.start < start:
            head = sliced(o.map, 0, (start - o.start) // isz)
            rest.append(Entry(o.mem, o.start, o.gm, o.buffer, o.orig, head))
        if o.end > end:
            tail = sliced(o.map, (end - o.start) // isz, o.map.size)
            rest.append(Entry(o.mem, end, o.gm, o.buffer, o.orig, tail))
        return rest

    def find(self, mem: str, start: int, nbytes: int) -> Entry | None:
        """The region holding all of [start, start + nbytes) of `mem`, if one does."""
        end = start + nbytes
        for e in self.mems.get(mem, ()):
            if e.start <= start and end <= e.end:
                return e
        return None

    def find_run(self, mem: str, start: int, nbytes: int) -> Entry | None:
        """`find`, or else one region made of adjacent ones that cover [start, start + nbytes)
        exactly, each the same GM array from the same base. Why: an operand loaded in pieces
        (the high-level Matmul loads L0A a row group at a time) is then taken whole by lineage."""
        e = self.find(mem, start, nbytes)
        if e is not None:
            return e
        end = start + nbytes
        parts = sorted((o for o in self.mems.get(mem, ()) if o.start < end and start < o.end), key=_start)
        if len(parts) < 2 or parts[0].start > start or parts[-1].end < end:
            return None
        first = parts[0]
        map_ = first.map
        for prev, o in zip(parts, parts[1:]):
            if o.start != prev.end or o.gm is not first.gm or o.buffer is not first.buffer:
                return None
            if o.base != first.base or not (
                o.orig is first.orig or (type(o.orig) is int and type(first.orig) is int)
            ):
                return None
            map_ = joined(map_, o.map)
        return Entry(mem, first.start, first.gm, first.buffer, first.orig, map_)

    def settle_range(self, mem: str, start: int, end: int) -> None:
        """Materialise the regions of `mem` overlapping [start, end)."""
        old = self.mems.get(mem)
        if old:
            keep = []
            for e in old:
                if e.start < end and start < e.end:
                    self._materialise(e)
                else:
                    keep.append(e)
            self.mems[mem] = keep
            self._retire_if_empty()

    def settle(self, buffer=None) -> None:
        """Materialise every region (taken from `buffer`, if given)."""
        for mem, old in self.mems.items():
            keep = []
            for e in old:
                if buffer is None or e.buffer is buffer:
                    self._materialise(e)
                else:
                    keep.append(e)
            self.mems[mem] = keep
        self._retire_if_empty()

    def _materialise(self, e: Entry) -> None:
        if self.core.trace is not None:  # bytes no cube job describes (npu/replay/cubetrace.py)
            self.core.trace.bad = True
        gm_ready(e.buffer)
        region = self.core.memory(e.mem)[e.start : e.end].view(e.gm.dtype)
        if e.map.hole is None:
            region[...] = e.map.gather(e.gm, e.base)
        else:  # (the holes' bytes are right already)
            live = ~e.map.hole
            region[live] = e.map.gather(e.gm, e.base)[live]

    def _retire_if_empty(self) -> None:
        if any(self.mems.values()):
            return
        if self.core.lazy is self:
            self.core.lazy = None
            with _live_lock:
                _live.discard(self)

    def drop(self) -> None:
        """The block is over: its local memories are gone."""
        self.mems = {}
        self._retire_if_empty()


def _start(e: Entry) -> int:
    return e.start


def lazy_of(core) -> Lazy | None:
    """The core's lazy-region bookkeeping if lineage may be used on it, else None."""
    lz = core.lazy
    if lz is not None:
        return lz
    if core.lineage:
        return Lazy(core)
    return None


def gm_written(buffer) -> None:
    """Before GM `buffer` is written: nothing may still read its old contents lazily."""
    buffer.version += 1  # (widened copies of GM are keyed by version: mmad_operands.wide_grid)
    if not buffer.lineage:
        return
    numbers.drain()  # first: jobs may still write it (Fixpipe) or read it (operands)
    with _live_lock:
        lazies = list(_live)
    for lz in lazies:
        lz.settle(buffer)
    for pend in list(_pending):
        pend.settle(buffer)
