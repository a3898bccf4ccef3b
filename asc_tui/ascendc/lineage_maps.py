"""Lineage maps (ascendc/lineage.py): which GM element each element of an L1/L0 region holds.

A `Map` is built by running the byte-moving code itself (`fractal.nd2nz_numbers`,
`fractal.load_numbers`) on the digits of element numbers, so a lazy region holds exactly what
the copy would write. The maps of the copies (Nd2Nz, LoadData, Load3Dv2's img2col) and of
regions joined, sliced or moved along GM are cached per parameter combination, keyed by map
serials.
"""

from __future__ import annotations

import itertools
import threading
from functools import lru_cache

import numpy as np

from .cube.fractal import load_numbers, nd2nz_numbers

_serials = itertools.count(1)


class Map:
    """Element i of a region is GM element `base + index[i]`, or zero where `pad[i]`, or where
    `hole[i]` whatever the memory holds (an element the copy did not write: `Lazy` keeps the
    memory's bytes right there).

    Built from `digits`: arrays of the region's element size holding the little-endian digits
    of (GM element + 1) as a copy would have moved them; 0 is a zero the copy wrote, all ones
    an element it did not write.
    """

    __slots__ = ("serial", "digits", "index", "pad", "hole", "size")

    def __init__(self, digits: list[np.ndarray]):
        self.serial = next(_serials)
        self.digits = digits
        bits = 8 * digits[0].itemsize
        val = np.zeros(digits[0].size, np.int64)
        for k, d in enumerate(digits):
            val |= d.astype(np.int64) << (bits * k)
        self.size = val.size
        hole = val == (1 << (bits * len(digits))) - 1
        self.hole = hole if hole.any() else None
        pad = val == 0
        self.pad = pad if pad.any() else None
        val -= 1
        if self.pad is not None:
            val[pad] = 0
        if self.hole is not None:
            val[hole] = 0
        self.index = val
        for a in (*digits, self.index, *(x for x in (self.pad, self.hole) if x is not None)):
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
    """The map of one Nd2Nz plan (fractal.Nd2NzPlan); None where elements are not 1–4 bytes."""
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
    return Map(digits)


_load_lock = threading.Lock()
_MISSING = object()


def _memo(cache: dict, key: tuple, make, *args):
    """`cache[key]`, made by `make(*args)` the first time (a cache of at most ~4096 entries,
    keyed by serials: it keeps no source map alive)."""
    v = cache.get(key, _MISSING)
    if v is _MISSING:
        v = make(*args)
        with _load_lock:
            if len(cache) > 4096:
                cache.clear()
            cache[key] = v
    return v


_load_maps: dict[tuple, Map] = {}
_joined: dict[tuple, Map] = {}
_slices: dict[tuple, Map] = {}
_shifts: dict[tuple, int | None] = {}


def load_map(src: Map, first: int, rep: int, sstride: int, transpose: bool, isz: int) -> Map:
    """The map of a LoadData (no dstGap) from region `src`, from its element `first`."""
    key = (src.serial, first, rep, sstride, transpose)
    return _memo(_load_maps, key, _load_map_of, src, first, rep, sstride, transpose, isz)


def _load_map_of(src: Map, first: int, rep: int, sstride: int, transpose: bool, isz: int) -> Map:
    digits = []
    for d in src.digits:
        out = np.empty(rep * (512 // isz), d.dtype)
        load_numbers(out, 0, d, first, rep, sstride, 0, transpose, isz)
        digits.append(out)
    return Map(digits)


_moved_maps: dict[tuple, Map] = {}


def moved_map(src: Map, rel: int, count: int, key: tuple, move) -> Map:
    """The map of an instruction that rearranges `count` elements of region `src` from its
    element `rel` by `move(values) -> values` (Load3Dv2's img2col): `move` run on the map's
    digits, as `load_map` runs LoadData's; `key` names the instruction's parameters."""
    return _memo(
        _moved_maps,
        (src.serial, rel, count, key),
        lambda: Map([move(d[rel : rel + count]) for d in src.digits]),
    )


def joined(first: Map, then: Map) -> Map:
    """The map of two regions side by side over the same GM base: `first`, then `then`."""
    return _memo(
        _joined,
        (first.serial, then.serial),
        lambda: Map([np.concatenate((a, b)) for a, b in zip(first.digits, then.digits)]),
    )


def sliced(map_: Map, lo: int, hi: int) -> Map:
    """The map of elements lo..hi of `map_`'s region."""
    return _memo(_slices, (map_.serial, lo, hi), lambda: Map([d[lo:hi] for d in map_.digits]))


def shift(map_: Map, rel: int, other: Map, other_rel: int, count: int) -> int | None:
    """c when `other`'s elements other_rel.. (`count` of them) are `map_`'s from rel.. plus c
    GM elements, zeros in the same places: `other` over GM from base b then holds what `map_`
    does from b + c; else None. Why: a K loop loads each slice of one L1 tile through its own
    map, the first slice's moved along K (the high-level Matmul's L0A and L0B)."""
    if other is map_ and other_rel == rel:
        return 0
    key = (map_.serial, rel, other.serial, other_rel, count)
    return _memo(_shifts, key, _shift_of, map_, rel, other, other_rel, count)


def _shift_of(map_: Map, rel: int, other: Map, other_rel: int, count: int) -> int | None:
    a, b = map_.index[rel : rel + count], other.index[other_rel : other_rel + count]
    if not len(a) or len(a) != len(b):
        return None
    for m, r in ((map_, rel), (other, other_rel)):  # a hole's value is the memory's, not GM's
        if m.hole is not None and m.hole[r : r + count].any():
            return None
    # zeros in the same places in both, and not compared
    pa = None if map_.pad is None else map_.pad[rel : rel + count]
    pb = None if other.pad is None else other.pad[other_rel : other_rel + count]
    some = pa is not None and pa.any()
    if some != (pb is not None and pb.any()) or (some and not np.array_equal(pa, pb)):
        return None
    d = (b - a)[~pa] if some else b - a
    if not len(d):
        return 0
    return int(d[0]) if np.all(d == d[0]) else None
