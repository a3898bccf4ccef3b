"""The operands of Mmad's lazy numbers (ascendc/mmad_numbers.py): stacked, then widened once.

Each Mmad keeps its L0A/L0B operands (L0 may be reloaded before the flush), stacked per K step
(`KSteps`): by lineage, the GM elements they hold (ascendc/lineage.py, `LinStack`), or else as a
raw snapshot of their fractals (`RawStack`). The flush finds operands widened before in this
launch (`Widened`: by lineage exactly, or by comparing raw fractals); an operand that forms a
regular grid of its GM buffer is a view of the buffer's fp32 twin (`wide_grid`).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..npu.numbers.offload import gm_ready
from ..npu.numbers.widen import widen_into as _widen_into
from .lineage import track
from .lineage_maps import shift


class KSteps:
    """Consecutive Mmads of one K step (k, k1, c0) into a pending L0C tile: their L0A and L0B
    operands, stacked so that the flush widens them in one pass — by lineage (`LinStack`: GM
    base elements, ascendc/lineage.py) while L0 holds lazy regions, else as raw snapshots."""

    __slots__ = ("k", "k1", "c0", "need_a", "need_b", "dtype", "a", "b", "count", "owner")

    def __init__(self, k: int, k1: int, c0: int, need_a: int, need_b: int, dtype, owner):
        self.k, self.k1, self.c0 = k, k1, c0
        self.need_a, self.need_b, self.dtype = need_a, need_b, dtype
        self.a = self.b = None
        self.count = 0
        self.owner = owner  # the Pending (tracked by lineage while it holds a LinStack)

    def add(self, core, l0a, l0b, a_values: np.ndarray | None = None, b_values: np.ndarray | None = None):
        """Stack one Mmad's operands; `a_values` / `b_values`: the fractals as the cube reads
        them when they are not the L0 bytes as laid out (fp32 kDirectionAlign skips padding
        fractals; int4b_t operands arrive unpacked)."""
        i = self.count
        self.a = self._put(self.a, i, core, l0a, self.need_a, a_values)
        self.b = self._put(self.b, i, core, l0b, self.need_b, b_values)
        self.count = i + 1

    def _put(self, stack, i: int, core, t, need: int, values):
        if values is None:
            return self._push(stack, i, core, t, need)
        stack = as_raw(stack, i, need, self.dtype)
        stack.put(i, values)
        return stack

    def _push(self, stack, i: int, core, t, need: int):
        """Stack operand `t` (`need` elements) as step i."""
        lz = core.lazy
        if lz is not None:
            isz = t.dtype.itemsize
            e = lz.find_run(t.mem, t.offset, need * isz)
            rel = 0 if e is None else (t.offset - e.start) // isz
            hole = None if e is None else e.map.hole
            if hole is not None and hole[rel : rel + need].any():
                e = None  # (the memory holds those elements: the operand is taken as bytes, below)
            if e is not None:
                if stack is None:
                    track(self.owner)
                    return LinStack(e, rel, need, t.dtype)
                c = stack.takes(e, rel) if type(stack) is LinStack else None
                if c is not None:
                    stack.bases.append(e.base + c)
                    stack.origs.append(e.orig + c if c else e.orig)
                    return stack
                stack = as_raw(stack, i, need, self.dtype)
                stack.put(i, e.map.gather(e.gm, e.base, rel, need).view(self.dtype))
                return stack
            lz.settle_range(t.mem, t.offset, t.offset + need * isz)
        stack = as_raw(stack, i, need, self.dtype)
        stack.put(i, t.arr)
        return stack

    def rows_a(self) -> np.ndarray:
        return self.a.rows(self.count)

    def rows_b(self) -> np.ndarray:
        return self.b.rows(self.count)

    def settle(self, buffer) -> None:
        """GM `buffer` is about to change: snapshot operands taken from it."""
        if type(self.a) is LinStack and self.a.buffer is buffer:
            self.a = as_raw(self.a, self.count, self.need_a, self.dtype)
        if type(self.b) is LinStack and self.b.buffer is buffer:
            self.b = as_raw(self.b, self.count, self.need_b, self.dtype)


class RawStack:
    """Raw snapshots of one operand, one row per K step (grown by doubling)."""

    __slots__ = ("data",)

    def __init__(self, need: int, dtype, rows: int = 8):
        self.data = np.empty((rows, need), dtype)

    def put(self, i: int, values: np.ndarray) -> None:
        if i == len(self.data):
            self.data = np.concatenate((self.data, np.empty_like(self.data)))
        row = self.data[i]
        row[...] = values[: row.size]

    def rows(self, t: int) -> np.ndarray:
        return self.data[:t]

    def key(self, t: int):
        return None


class LinStack:
    """One operand by lineage: the same map over one GM array, a base element per K step."""

    __slots__ = ("gm", "buffer", "map", "rel", "need", "dtype", "bases", "origs")

    def __init__(self, e, rel: int, need: int, dtype):
        self.gm, self.buffer, self.map = e.gm, e.buffer, e.map
        self.rel, self.need, self.dtype = rel, need, dtype
        self.bases = [e.base]
        self.origs = [e.orig]  # (the bases as the kernel gave them: lineage.Entry.orig)

    def takes(self, e, rel: int) -> int | None:
        """c when region `e` from its element `rel` holds this operand's elements from GM base
        `e.base + c` (the same map, or one moved along GM: `lineage_maps.shift`); None when it
        cannot be stacked."""
        if e.gm is not self.gm:
            return None
        return shift(self.map, self.rel, e.map, rel, self.need)

    def rows(self, t: int) -> np.ndarray:
        """The raw operands, gathered from GM (unchanged since, `lineage.gm_written`, once the
        jobs writing it ran). On the emulating thread only: it may wait for those jobs."""
        gm_ready(self.buffer)
        out = self.map.gather(self.gm, self.bases[:t], self.rel, self.need)
        return out if out.dtype == self.dtype else out.view(self.dtype)

    def key(self, t: int) -> tuple:
        return (
            id(self.gm),
            self.buffer.version,
            self.map.serial,
            self.rel,
            self.need,
            self.dtype,
            tuple(self.bases[:t]),
        )


def wide_grid(wide: dict, gm: np.ndarray, buffer, start: int, shape: tuple, strides: tuple) -> np.ndarray:
    """The 2-D grid of GM array `gm` (fp16/bf16, all of `buffer`) from element `start`, widened
    to fp32: a read-only view of the launch's fp32 twin of the buffer (`wide`: one per buffer
    version), where each grid is widened when an operand first needs it.

    Why per grid: the first tile's operands need a slab of A and of B, not all of them; widening
    whole buffers up front delayed the first matmul by ~2.6 ms of 1024³ (and doing it on the
    numbers thread during the L2 pre-pass measured no faster: the threads contend for the GIL).
    """
    key = (id(buffer), gm.dtype, buffer.version)
    twin = wide.get(key)
    if twin is None:
        twin = wide[key] = (np.empty(gm.size, np.float32), set())
    arr, done = twin
    grid = (start, shape, strides)
    view = np.ndarray(shape, np.float32, arr, start * 4, (strides[0] * 4, strides[1] * 4))
    if grid not in done:
        gm_ready(buffer)  # jobs may still write it
        isz = gm.itemsize
        _widen_into(
            view,
            np.ndarray(shape, gm.dtype, gm, start * isz, (strides[0] * isz, strides[1] * isz)),
            np.float32,
        )
        done.add(grid)
    view.flags.writeable = False
    return view


def as_raw(stack, t: int, need: int, dtype) -> RawStack:
    """`stack` (None, raw, or by lineage with `t` rows) as raw snapshots: what an operand
    becomes when it cannot stay by lineage, or must not (the numbers thread reads bytes)."""
    if type(stack) is RawStack:
        return stack
    raw = RawStack(need, dtype, max(8, t + 1))
    if stack is not None:
        raw.data[:t] = stack.rows(t)
    return raw


class Widened:
    """Mmad operands widened earlier in this launch, found again by their lineage (`get_exact`)
    or, for operands snapshotted as bytes, by their raw fractals (`get`).

    Why: a tiled matmul reads each K slab of A once per N tile and of B once per M tile, and
    widening the same bits again was the largest numeric cost after BLAS itself. An operand is
    reused only when every raw fractal is bit-for-bit equal (a sampled fingerprint narrows the
    candidates, a full compare decides), so reuse cannot change a result. Least recently used
    operands are dropped beyond `budget` bytes. The widening itself is deferred (`Later`) to
    the numbers thread: only the jobs there read operands, in submission order.
    """

    def __init__(self, budget: int = 64 << 20):
        self.budget = budget
        self.bytes = 0
        # (key, fingerprint, n) -> (raws, operand, its bytes)
        self.entries: OrderedDict = OrderedDict()

    def get_exact(self, key: tuple, nbytes: int, widen) -> Later:
        """The widened operand whose lineage `key` says exactly what it holds; a new one is
        made here, on the emulating thread (usually a view: nothing to copy, and keeping the
        numbers thread's jobs to BLAS made 1024³ 41 ms instead of 44)."""
        slot = (key, None, 0)
        hit = self.entries.get(slot)
        if hit is not None:
            self.entries.move_to_end(slot)
            return hit[1]
        out = Later(widen)
        out()
        self._keep(slot, (), out, nbytes)
        return out

    def _keep(self, slot, bits, out, nbytes: int) -> None:
        self.entries[slot] = (bits, out, nbytes)
        self.bytes += nbytes + sum(map(_held_bytes, bits))
        while self.bytes > self.budget and len(self.entries) > 1:
            _, (old_bits, _, old_bytes) = self.entries.popitem(last=False)
            self.bytes -= old_bytes + sum(map(_held_bytes, old_bits))

    def get(self, key: tuple, raws: list[np.ndarray], nbytes: int, widen) -> Later:
        """The widened operand (`nbytes`) for `raws` (arrays of shapes fixed by `key`): cached,
        or `widen()` once it is first needed."""
        bits = [r.view(np.dtype(f"u{r.dtype.itemsize}")) for r in raws]
        fp = hash(b"".join(b.reshape(-1)[::61].tobytes() for b in bits))
        n = 0
        while True:
            slot = (key, fp, n)
            hit = self.entries.get(slot)
            if hit is None:
                break
            if all(np.array_equal(x, y) for x, y in zip(bits, hit[0])):
                self.entries.move_to_end(slot)
                return hit[1]
            n += 1
        out = Later(widen)
        self._keep(slot, bits, out, nbytes)
        return out


class Later:
    """A widened operand computed on first use (by lineage: at once; by bytes: on the numbers
    thread), then shared read-only."""

    __slots__ = ("fn", "value")

    def __init__(self, fn):
        self.fn, self.value = fn, None

    def __call__(self) -> np.ndarray:
        if self.value is None:
            self.value = self.fn()
            self.value.flags.writeable = False
            self.fn = None
        return self.value


def _held_bytes(view: np.ndarray) -> int:
    """Memory an entry keeps alive through `view`: its whole buffer (the stacked K-step snapshots
    grow by doubling, so a view may hold up to twice its own size)."""
    return view.base.nbytes if view.base is not None else view.nbytes
