"""The L2 cache model: GM data re-read by many cores costs L2 bandwidth instead of HBM bandwidth.

Why: in a tiled matmul every row of A is read ⌈N/tn⌉ times and every column of B ⌈M/tm⌉ times,
by different cores. On 910B those re-reads hit the 192 MB L2, which delivers
`dma.l2_bytes_per_cycle` per core (110 B/cycle, GetCoreMemBw stub) instead of the core's HBM
share. Without this a 4096³ matmul would be HBM-bound in the emulator but is cube-bound on
hardware.

How (deliberately simple, stated so users can judge it):
- GM is tracked in 512 B chunks per buffer. A GM→L1 read splits its bytes into chunks already
  read by any core in this launch (L2 hits) and chunks read for the first time (HBM).
- Blocks are emulated one after another, so "first" means first in emulation order, not in
  emulated time: the first block that touches a tile pays for it. Totals are right; which block
  pays is approximate.
- Capacity: when the bytes first-read since the last flush exceed the chip's L2 size, the whole
  L2 is considered flushed (a crude stand-in for LRU eviction).
- Writes are not modelled as L2 fills (outputs go to HBM).
Off (`run.l2_enabled = False`, or `l2_model = false` under [dma] in the chip file), every read is
an HBM read — the setting under which the textbook GM-traffic formulas hold exactly.
"""

from __future__ import annotations

import numpy as np

CHUNK = 512  # bytes per tracked GM chunk


class L2Model:
    """Per-launch record of which GM chunks are resident in L2."""

    def __init__(self, capacity: int, bpc: float, enabled: bool = True):
        self.capacity = int(capacity)
        self.bpc = float(bpc)
        self.enabled = enabled and capacity > 0
        self.maps: dict[int, np.ndarray] = {}
        self.resident = 0  # bytes first-read since the last flush
        self.hit_bytes = 0
        self.miss_bytes = 0

    def _map(self, buf) -> np.ndarray:
        m = self.maps.get(id(buf))
        if m is None:
            nbytes = buf.count * buf.dtype.itemsize
            m = self.maps[id(buf)] = np.zeros(-(-nbytes // CHUNK), dtype=bool)
        return m

    def read(self, buf, base: int, nd: int, rows: int, row_bytes: int, stride: int,
             matrix_stride: int) -> int:
        """Record a 2-D (or `nd` stacked 2-D) GM read; return how many of its bytes hit L2."""
        nbytes = nd * rows * row_bytes
        if not self.enabled or nbytes <= 0:
            self.miss_bytes += nbytes
            return 0
        bm = self._map(buf)
        starts = base + np.arange(rows, dtype=np.int64) * stride
        if nd > 1:
            starts = (starts[None, :] + np.arange(nd, dtype=np.int64)[:, None] * matrix_stride
                      ).reshape(-1)
        first = starts // CHUNK
        span = int((starts[0] + row_bytes - 1) // CHUNK - first[0]) + 1
        idx = first[:, None] + np.arange(span + 1, dtype=np.int64)[None, :]
        last = (starts + row_bytes - 1) // CHUNK
        idx = idx[idx <= last[:, None]]
        idx = idx[idx < bm.size]
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


def l2_of(run) -> L2Model:
    """The launch's L2 model, created on first use from the chip file."""
    l2 = run.__dict__.get("l2")
    if l2 is None:
        chip = run.chip
        enabled = bool(getattr(run, "l2_enabled", True)) and bool(
            chip.raw.get("dma", {}).get("l2_model", True))
        l2 = run.l2 = L2Model(chip.memory.get("l2", 0), chip.l2_bpc, enabled)
    return l2
