"""The L2 cache model: GM data re-read by many cores costs L2 bandwidth instead of HBM bandwidth.

Why: in a tiled matmul every row of A is read ⌈N/tn⌉ times and every column of B ⌈M/tm⌉ times,
by different cores. On 910B those re-reads hit the 192 MB L2, which delivers
`dma.l2_bytes_per_cycle` per core (110 B/cycle, GetCoreMemBw stub) instead of the core's HBM
share. Without this a 4096³ matmul would be HBM-bound in the emulator but is cube-bound on
hardware.

How (deliberately simple, stated so users can judge it):
- GM is tracked in 512 B chunks per buffer. Blocks are emulated one after another, so "who
  reads first" in emulation order says nothing about who pays in emulated time. Cube launches
  therefore run a cheap timing-only pre-pass (npu/memory/prepass.py) that counts how often
  each chunk is read (R). In the real pass every read of a chunk pays 1/R of it as an HBM miss
  and the rest as an L2 hit: the launch's HBM traffic is exactly the distinct bytes read,
  spread evenly over the readers.
  A launch may instead run on counts guessed from earlier launches of the kernel, tallying its
  own reads to check them (npu/memory/l2guess.py): the kernel then runs once.
- Without a pre-pass (reads outside cube launches) the first read in emulation order misses.
- Capacity: when the distinct bytes read exceed the chip's L2 size, hits are scaled down by
  capacity / footprint (a stand-in for LRU eviction).
- Writes are not modelled as L2 fills (outputs go to HBM).
Off (`run.l2_enabled = False`, or `l2_model = false` under [dma] in the chip file), every read is
an HBM read — the setting under which the textbook GM-traffic formulas hold exactly.
"""

from __future__ import annotations

from collections import _count_elements
from functools import lru_cache
from itertools import repeat

import numpy as np

from .. import state
from ..replay.blockindex import BlockIndex
from .prepass import Prepass

CHUNK = 512  # bytes per tracked GM chunk


class L2Model:
    """Per-launch L2 state: read counts (pre-pass) or resident chunks (first-read fallback)."""

    def __init__(
        self,
        capacity: int,
        bpc: float,
        enabled: bool = True,
        prepass: Prepass | None = None,
        record: bool = False,
        tally: bool = False,
    ):
        self.capacity = int(capacity)
        self.bpc = float(bpc)
        self.enabled = enabled and capacity > 0
        self.record = record
        # the real pass counts its own reads too (as the pre-pass does), to check guessed
        # counts (npu/memory/l2guess.py): `recorded` then gives what a pre-pass would have
        self.tally = record or tally
        counts = prepass.counts if prepass is not None else None
        self.counts = counts  # buffer name -> reads per chunk (from the pre-pass)
        self.scale = 1.0
        if counts:
            footprint = sum(int(np.count_nonzero(c)) for c in counts.values()) * CHUNK
            if footprint > self.capacity > 0:
                self.scale = self.capacity / footprint
        self.maps: dict[str, np.ndarray] = {}
        # region -> L2-hit bytes per read (pre-pass counts), for every region the pre-pass saw
        self.hits: dict[tuple, int] = {}
        if counts:  # (worked out once per counts and capacity: a launch's passes share them)
            known = prepass.hits.get(self.capacity)
            if known is None:
                known = prepass.hits[self.capacity] = self._region_hits(prepass.regions)
            self.hits = dict(known)
        self.prepass = prepass
        self.reads: dict[tuple, int] = {}  # region -> times read (when tallying)
        self.sizes: dict[str, int] = {}  # buffer name -> bytes (when tallying)
        # replay.L2Reads of templates -> the blocks that replayed them (when tallying)
        self.pending: dict[int, tuple] = {}
        self.resident = 0  # bytes first-read since the last flush (fallback model)
        self.hit_bytes = 0
        self.miss_bytes = 0
        # (buffer, region args, hit bytes) of each read while a loop is watched for its
        # periodic regime (npu/extrapolate/periodic.py), else None
        self.tap: list | None = None

    def _region_hits(self, regions: list[tuple]) -> dict[tuple, int]:
        """L2-hit bytes per read of each region: its bytes times the mean over its chunks of
        (1 - 1/reads), scaled for capacity — what `read` would work out region by region, for
        all regions of a buffer in one vectorised pass (~15 µs saved per region)."""
        hits: dict[tuple, int] = {}
        by_buffer: dict[str, list[tuple]] = {}
        for key in regions:
            by_buffer.setdefault(key[0], []).append(key)
        for name, keys in by_buffer.items():
            counts = self.counts.get(name)
            if counts is None:
                continue
            idx = [self._chunks(*key[1:], counts.size) for key in keys]
            sizes = np.array([i.size for i in idx], dtype=np.int64)
            inv = 1.0 / np.maximum(counts[np.concatenate(idx)], 1)
            missed = np.bincount(np.repeat(np.arange(len(keys)), sizes), weights=inv, minlength=len(keys))
            for key, n, m in zip(keys, sizes.tolist(), missed.tolist()):
                nbytes = key[2] * key[3] * key[4]
                hits[key] = int(nbytes * (1.0 - m / n) * self.scale) if n else 0
        return hits

    def _map(self, buf) -> np.ndarray:
        """Which chunks of `buf` are resident (the first-read fallback model)."""
        m = self.maps.get(buf.name)
        if m is None:
            nbytes = buf.count * buf.dtype.itemsize
            m = self.maps[buf.name] = np.zeros(-(-nbytes // CHUNK), dtype=bool)
        return m

    @staticmethod
    @lru_cache(maxsize=8192)
    def _chunks(
        base: int, nd: int, rows: int, row_bytes: int, stride: int, matrix_stride: int, size: int
    ) -> np.ndarray:
        """Indices of the 512 B chunks a strided read touches (cached: tiles are re-read)."""
        starts = base + np.arange(rows, dtype=np.int64) * stride
        if nd > 1:
            starts = (starts[None, :] + np.arange(nd, dtype=np.int64)[:, None] * matrix_stride).reshape(-1)
        first = starts // CHUNK
        span = int((starts[0] + row_bytes - 1) // CHUNK - first[0]) + 1
        idx = first[:, None] + np.arange(span + 1, dtype=np.int64)[None, :]
        last = (starts + row_bytes - 1) // CHUNK
        idx = idx[idx <= last[:, None]]
        idx = idx[idx < size]
        idx.flags.writeable = False  # shared through the cache
        return idx

    @staticmethod
    @lru_cache(maxsize=8192)
    def _unique(*key) -> bool:
        """Whether a region's chunk list has no repeats (rows closer than a chunk share one)."""
        idx = L2Model._chunks(*key)
        return bool(idx.size < 2 or np.all(np.diff(idx) > 0))

    def read(
        self, buf, base: int, nd: int, rows: int, row_bytes: int, stride: int, matrix_stride: int
    ) -> int:
        """Record a 2-D (or `nd` stacked 2-D) GM read; return how many of its bytes hit L2."""
        core = state.core
        if core is not None and type(core.block_index) is BlockIndex:  # a template run (replay.py)
            hit = self._template_read(
                core.block_index.g, buf, (base, nd, rows, row_bytes, stride, matrix_stride)
            )
        else:
            hit = self._read(buf, base, nd, rows, row_bytes, stride, matrix_stride)
        if self.tap is not None:
            self.tap.append((buf, (base, nd, rows, row_bytes, stride, matrix_stride), hit))
        return hit

    def prefetch(self, buf, regions: list) -> None:
        """Work out the L2-hit bytes of many regions of `buf` (argument tuples of `read`; block
        indices count at this block's value) in one vectorised pass, so that `hit_of` and
        `read` find them ready (a loop's extrapolated reads, npu/extrapolate/periodic.py)."""
        if not self.counts or self.counts.get(buf.name) is None or self.record:
            return
        keys = {(buf.name, *(a.v if type(a) is BlockIndex else a for a in args)) for args in regions}
        missing = [k for k in keys if k not in self.hits]
        if missing:
            self.hits.update(self._region_hits(missing))

    def hit_of(self, buf, args: tuple) -> int | None:
        """The L2-hit bytes `read(buf, *args)` would return, without reading (no counts, no
        traffic); None when that depends on earlier reads (the first-read fallback) or the
        region is not inside the buffer. Block indices count at this block's value."""
        base, nd, rows, row_bytes, stride, matrix_stride = (a.v if type(a) is BlockIndex else a for a in args)
        if nd > 0 and rows > 0 and row_bytes > 0:
            end = base + (nd - 1) * matrix_stride + (rows - 1) * stride + row_bytes
            if base < 0 or end > buf.count * buf.dtype.itemsize:
                return None
        nbytes = nd * rows * row_bytes
        if not self.enabled or nbytes <= 0 or self.record:
            return 0
        counts = self.counts.get(buf.name) if self.counts else None
        if counts is None:
            return None
        key = (buf.name, base, nd, rows, row_bytes, stride, matrix_stride)
        hit = self.hits.get(key)
        if hit is None:
            hit = self.hits[key] = self._region_hits([key])[key]
        return hit

    def _read(
        self, buf, base: int, nd: int, rows: int, row_bytes: int, stride: int, matrix_stride: int
    ) -> int:
        nbytes = nd * rows * row_bytes
        if not self.enabled or nbytes <= 0:
            self.miss_bytes += nbytes
            return 0
        key = (buf.name, base, nd, rows, row_bytes, stride, matrix_stride)
        if self.tally:  # tallied per region; `recorded` spreads them over the chunks
            self.reads[key] = self.reads.get(key, 0) + 1
            self.sizes[buf.name] = buf.count * buf.dtype.itemsize
            if self.record:
                return 0
        counts = self.counts.get(buf.name) if self.counts else None
        if counts is not None:
            hit = self.hits.get(key)
            if hit is None:  # a region the pre-pass did not see (control flow on GM data)
                hit = self.hits[key] = self._region_hits([key])[key]
        else:
            bm = self._map(buf)
            idx = self._chunks(base, nd, rows, row_bytes, stride, matrix_stride, bm.size)
            if idx.size == 0:
                return 0
            seen = int(np.count_nonzero(bm[idx]))
            hit = int(nbytes * seen / idx.size)
            new = (idx.size - seen) * CHUNK
            if self.resident + new > self.capacity:
                for m in self.maps.values():
                    m[:] = False
                self.resident = 0
            bm[idx] = True
            self.resident += new
        self.hit_bytes += hit
        self.miss_bytes += nbytes - hit
        return hit

    def _template_read(self, g, buf, args: tuple) -> int:
        """`read` in a template run (npu/replay/replay.py): the template's own read, kept for the
        blocks that will replay it — its region per block for the pre-pass, or its hit bytes,
        which every admitted block must share (a guard) in the real pass."""
        base = args[0]
        tainted = True
        if type(base) is BlockIndex and BlockIndex not in map(type, args[1:]):
            bases = base.values()  # (the usual case: only the address varies by block)
            plain = (base.v, *args[1:])
            per_block = None
        elif BlockIndex in map(type, args):
            per_block = tuple([a.values() if type(a) is BlockIndex else a for a in args])
            plain = tuple([a.v if type(a) is BlockIndex else a for a in args])
        else:  # the same region in every block: nothing to narrow
            plain = per_block = args
            tainted = False
        if not self.record and (not self.counts or self.counts.get(buf.name) is None):
            g.pin()  # the first-read fallback keeps order-dependent state
        hit = self._read(buf, *plain)
        nbytes = plain[1] * plain[2] * plain[3]
        regions = per_block if per_block is not None else (bases, *args[1:])  # each block's
        if tainted and per_block is not None and BlockIndex in map(type, args[1:4]):
            nd, rows, row_bytes = per_block[1:4]
            same = (nd * rows * row_bytes > 0) == (nbytes > 0)
            if same is not True:  # (True: every block agrees, nothing to narrow)
                g.agree(np.broadcast_to(same, g.xs.shape))
        if self.tally and self.enabled and nbytes > 0:  # counted: so it is in every admitted block
            g.l2.regions.append((buf.name, regions))
        if self.record:
            return hit
        if tainted and not g.pinned:
            later = g.candidates()
            if len(later) and not (
                per_block is None
                and self.enabled
                and nbytes > 0  # (then `hit` is the region's, as `hits` has it)
                and self._same_bases(buf.name, bases[later], plain, hit)
            ):
                differ = self._differing(buf.name, regions, later, hit)
                if differ:
                    same = np.ones(len(g.xs), dtype=bool)
                    same[differ] = False
                    g.agree(same)
        g.l2.hit += hit
        g.l2.miss += nbytes - hit
        return hit

    def _same_bases(self, name: str, bases: np.ndarray, plain: tuple, hit: int) -> bool:
        """Whether every block of `bases` (a template read's base address in some blocks; the
        region otherwise the template's, `plain`) is known to hit L2 by `hit` bytes: False when
        some differ, or are not known (then `_differing` works them out block by block).

        Why: blocks of a template usually differ in a read's address only, share a few
        regions (a matmul's tile row of A, column of B), often the template's own, and the
        pre-pass saw them all: its hits by region shape, then base (`by_base`), answer with a
        lookup per distinct base, not a 7-tuple built, hashed and looked up per block.
        """
        known = self.prepass.hits_by_base(self.capacity).get((name, *plain[1:]))
        if known is None:
            return False
        others = set(bases.tolist())
        others.discard(plain[0])
        for base in others:
            if known.get(base) != hit:
                return False
        return True

    def _differing(self, name: str, per_block: tuple, later: np.ndarray, hit: int) -> list:
        """The `later` blocks whose own region of a template read (`per_block`: its arguments,
        an array of one value per block where they vary) hits L2 by other than `hit` bytes, the
        template's: block by block, working out the regions not in `hits` yet."""
        cols = [a[later].tolist() if isinstance(a, np.ndarray) else repeat(a) for a in per_block]
        hits = self.hits
        keys = list(zip(repeat(name), *cols))
        missing = [k for k in keys if k not in hits]
        if missing:  # (one vectorised pass for them all)
            hits.update(self._region_hits(list(dict.fromkeys(missing))))
        return [x for x, key in zip(later.tolist(), keys) if hits[key] != hit]

    def read_moved(self, buf, args: tuple, step: list, m: int, hit: int, tap: bool = True) -> None:
        """`read(buf, *moved)` for the regions `args` moved by t * `step`, t = 1..m, in bulk:
        the reads of a loop's extrapolated periods (npu/extrapolate/periodic.py), each known to hit L2 by
        `hit` bytes at this block (`hit_of`). The same counts, traffic and replay guards as
        those m calls of `read` (`_template_read`, vectorised over the periods); `tap`: note
        them in the tap, for a loop around the one that skipped them."""
        if step[1] or step[2] or step[3]:  # the sizes move too: one by one
            for t in range(1, m + 1):
                self.read(buf, *(x + s * t if s else x for x, s in zip(args, step)))
            return
        periods = range(1, m + 1)
        plain = [a.v if type(a) is BlockIndex else a for a in args]
        for t in periods:
            self._read(buf, *(x + s * t for x, s in zip(plain, step)))
        if tap and self.tap is not None:
            self.tap.extend(
                (buf, tuple([x + s * t if s else x for x, s in zip(args, step)]), hit) for t in periods
            )
        core = state.core
        if core is None or type(core.block_index) is not BlockIndex:
            return
        g = core.block_index.g
        tainted = BlockIndex in map(type, args)
        if not self.record and (not self.counts or self.counts.get(buf.name) is None):
            g.pin()
        nbytes = plain[1] * plain[2] * plain[3]
        if tainted:
            nd, rows, row_bytes = (a.values() if type(a) is BlockIndex else a for a in args[1:4])
            same = (nd * rows * row_bytes > 0) == (nbytes > 0)
            if same is not True:
                g.agree(np.broadcast_to(same, g.xs.shape))
        if self.tally and self.enabled and nbytes > 0:
            per_block = [a.values() if type(a) is BlockIndex else a for a in args]
            for t in periods:
                g.l2.regions.append(
                    (buf.name, tuple([x + s * t if s else x for x, s in zip(per_block, step)]))
                )
        if self.record:
            return
        later = g.candidates() if tainted and not g.pinned else ()
        if len(later):
            xs = later.tolist()
            cols = [a.values()[later] if type(a) is BlockIndex else None for a in args]
            keys = [
                (buf.name, *key)
                for t in periods
                for key in zip(
                    *(
                        (c + s * t).tolist() if c is not None else repeat(x + s * t, len(xs))
                        for c, x, s in zip(cols, plain, step)
                    )
                )
            ]
            hits = self.hits
            missing = [k for k in set(keys) if k not in hits]
            if missing:
                hits.update(self._region_hits(missing))
            differ = {x for x, k in zip(xs * m, keys) if hits[k] != hit}
            if differ:
                same = np.ones(len(g.xs), dtype=bool)
                same[list(differ)] = False
                g.agree(same)
        g.l2.hit += hit * m
        g.l2.miss += (nbytes - hit) * m

    def repeat(self, reads, block: int) -> None:
        """A replayed `block` reads what its template read (`replay.L2Reads`): the pre-pass
        counts its regions (tallied in `recorded`, all replays of a template at once), the
        real pass its hit and miss bytes."""
        if not self.record:
            self.hit_bytes += reads.hit
            self.miss_bytes += reads.miss
            if not self.tally:
                return
        pending = self.pending.get(id(reads))
        if pending is None:
            pending = self.pending[id(reads)] = (reads, [])
        pending[1].append(block)

    def _tally_replays(self) -> None:
        """Count the regions of every replayed block: per template region, one C-level pass
        over the blocks that replayed it."""
        for reads, blocks in self.pending.values():
            idx = np.array(blocks, dtype=np.int64)
            for name, args in reads.regions:
                n = len(blocks)
                cols = [a[idx].tolist() if isinstance(a, np.ndarray) else repeat(a, n) for a in args]
                _count_elements(self.reads, zip(repeat(name, n), *cols))
        self.pending.clear()

    def recorded(self) -> Prepass:
        """The pre-pass result: reads per 512 B chunk of each buffer read (int32), and the
        regions read.

        Why tallied per region first: a kernel re-reads the same few regions many times, and
        one vectorised add per distinct region is much cheaper than one per read.
        """
        self._tally_replays()
        maps: dict[str, np.ndarray] = {}
        for (name, *region), times in self.reads.items():
            m = maps.get(name)
            if m is None:
                m = maps[name] = np.zeros(-(-self.sizes[name] // CHUNK), dtype=np.int32)
            key = (*region, m.size)
            if self._unique(*key):
                m[self._chunks(*key)] += times
            else:
                np.add.at(m, self._chunks(*key), times)
        return Prepass(maps, list(self.reads), tally=(dict(self.reads), dict(self.sizes)))

    def read_as(self, prepass: Prepass) -> bool:
        """Whether this launch tallied the very reads `prepass` was counted from: then
        `recorded()` would give its counts, without working them out (a full launch checking
        its guessed counts, npu/l2guess.check_full)."""
        self._tally_replays()
        return prepass.tally is not None and prepass.tally == (self.reads, self.sizes)


def l2_enabled(run) -> bool:
    return (
        run.l2_enabled
        and bool(run.chip.raw.get("dma", {}).get("l2_model", True))
        and run.chip.memory.get("l2", 0) > 0
    )


def l2_of(run) -> L2Model:
    """The launch's L2 model, created on first use from the chip file (and pre-pass counts)."""
    l2 = run.l2
    if l2 is None:
        chip = run.chip
        l2 = run.l2 = L2Model(
            chip.memory.get("l2", 0),
            chip.l2_bpc,
            l2_enabled(run),
            prepass=run.l2_counts,
            record=run.l2_record,
            tally=run.l2_tally,
        )
    return l2
