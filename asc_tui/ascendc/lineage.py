"""Cube operand lineage: which GM elements an L1/L0A/L0B region holds, kept instead of the bytes.

Why: full emulation of a tiled matmul spent half of its emulating thread moving bytes that only
Mmad ever reads: Nd2Nz copies GM → L1, LoadData copies L1 → L0A/L0B, Mmad snapshots L0A/L0B
and compares the snapshots with operands widened before. With lineage, Nd2Nz and LoadData record
*which GM element lands where* (an index `Map`, cached per parameter combination), Mmad keeps
(GM buffer, base, map), operands are matched by lineage (exact) instead of by their bytes, and
a new operand is a strided view of its GM buffer widened once to fp32 (mmad_numbers.wide_grid),
or is gathered from GM where it is not such a regular grid. Measured on 1024³ fp16 (2-core VM,
benchmarks/bench_cube.py in alternation with the previous tree): process CPU 63–65 → 55–57 ms
at the same wall time (40–41 → 39–41 ms: the numbers thread's BLAS and the pre-pass now bound
it); on one CPU (jobs inline) a launch takes 51–52 ms instead of 70.

Results cannot change:
- maps are built by running the byte-moving code itself (`fractal.nd2nz_numbers`, `fractal.load_numbers`) on
  the digits of element numbers, so a lazy region holds exactly what the copy would write;
- a region stays lazy only if the copy writes every element of it (no stale holes);
- anything else that reads or writes a core's local memory first materialises its lazy regions
  (`settle`, a no-op while there are none), and a write to a GM buffer first materialises what
  was taken from it, waits for submitted jobs that may gather from it and bumps its version
  (`gm_written`).
Lineage is off in timing-only runs, under the sanitizer, and with `run.lineage = False`.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from functools import lru_cache

import numpy as np

from ..npu.blockindex import BlockIndex
from ..npu.offload import gm_ready, numbers
from .fractal import load_numbers, nd2nz_numbers

_serials = itertools.count(1)


class Map:
    """Element i of a region is GM element `base + index[i]`, or zero where `pad[i]`.

    Built from `digits`: arrays of the region's element size holding the little-endian digits
    of (GM element + 1) as a copy would have moved them; 0 is a zero the copy wrote, all ones
    an element it did not write.
    """

    __slots__ = ("serial", "digits", "index", "pad", "dense", "size")

    def __init__(self, digits: list[np.ndarray]):
        self.serial = next(_serials)
        self.digits = digits
        bits = 8 * digits[0].itemsize
        val = np.zeros(digits[0].size, np.int64)
        for k, d in enumerate(digits):
            val |= d.astype(np.int64) << (bits * k)
        self.size = val.size
        self.dense = not np.any(val == (1 << (bits * len(digits))) - 1)
        pad = val == 0
        self.pad = pad if pad.any() else None
        val -= 1
        if self.pad is not None:
            val[pad] = 0
        self.index = val
        for a in (*digits, self.index, *(() if self.pad is None else (self.pad,))):
            a.flags.writeable = False

    def gather(self, gm: np.ndarray, bases, rel: int = 0, count: int | None = None) -> np.ndarray:
        """The region's values (`count` elements from `rel`) for each GM base element in
        `bases` (an int or a sequence: one row per base)."""
        stop = self.size if count is None else rel + count
        idx = self.index[rel:stop]
        if np.ndim(bases):
            out = gm.take(np.add.outer(np.asarray(bases, np.int64), idx))
        else:
            out = gm.take(idx + bases)
        if self.pad is not None:
            out[..., self.pad[rel:stop]] = 0
        return out


def _digit_type(isz: int):
    return np.dtype(f"u{isz}") if isz in (1, 2, 4) else None


@lru_cache(maxsize=512)
def nd2nz_map(plan, isz: int) -> Map | None:
    """The map of one Nd2Nz plan (fractal.Nd2NzPlan), or None if it leaves holes."""
    dt = _digit_type(isz)
    if dt is None:
        return None
    numbers_ = np.arange(1, plan.s_need + 1, dtype=np.int64)
    bits, mask = 8 * isz, (1 << 8 * isz) - 1
    digits = []
    for k in range(4 // isz):
        src = ((numbers_ >> (bits * k)) & mask).astype(dt)
        dst = np.full(plan.d_need, mask, dt)
        nd2nz_numbers(plan, dst, src, 0, isz)
        digits.append(dst)
    m = Map(digits)
    return m if m.dense else None


_load_maps: dict[tuple, Map] = {}
_load_lock = threading.Lock()


def load_map(src: Map, first: int, rep: int, sstride: int, transpose: bool, isz: int) -> Map:
    """The map of a LoadData (no dstGap) from region `src`, from its element `first`."""
    key = (src.serial, first, rep, sstride, transpose)
    m = _load_maps.get(key)
    if m is None:
        digits = []
        for d in src.digits:
            out = np.empty(rep * (512 // isz), d.dtype)
            load_numbers(out, 0, d, first, rep, sstride, 0, transpose, isz)
            digits.append(out)
        m = Map(digits)
        with _load_lock:
            if len(_load_maps) > 4096:
                _load_maps.clear()
            _load_maps[key] = m
    return m


class Entry:
    """Bytes [start, end) of local memory `mem` hold `map` over GM array `gm` from `base`;
    `orig`: the base as the kernel gave it — in a template of block replay a `BlockIndex`,
    whose values in every block the cube trace keeps (npu/cubetrace.py), else `base`."""

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
        if old:
            for o in old:
                if o.end <= start or o.start >= end:
                    keep.append(o)
                elif o.start < start or o.end > end:
                    self._materialise(o)  # partly overwritten: the rest must stay right
        self.mems[mem] = keep
        if not buffer.lineage:
            buffer.lineage = True
        if self.core.lazy is None:
            self.core.lazy = self
            with _live_lock:
                _live.add(self)

    def find(self, mem: str, start: int, nbytes: int) -> Entry | None:
        """The region holding all of [start, start + nbytes) of `mem`, if one does."""
        end = start + nbytes
        for e in self.mems.get(mem, ()):
            if e.start <= start and end <= e.end:
                return e
        return None

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
        if self.core.trace is not None:  # bytes no cube job describes (npu/cubetrace.py)
            self.core.trace.bad = True
        gm_ready(e.buffer)
        region = self.core.memory(e.mem)[e.start : e.end].view(e.gm.dtype)
        region[...] = e.map.gather(e.gm, e.base)

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
    buffer.version += 1  # (widened copies of GM are keyed by version: mmad_numbers.wide_grid)
    if not buffer.lineage:
        return
    numbers.drain()  # first: jobs may still write it (Fixpipe) or read it (operands)
    with _live_lock:
        lazies = list(_live)
    for lz in lazies:
        lz.settle(buffer)
    for pend in list(_pending):
        pend.settle(buffer)
