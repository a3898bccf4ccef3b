"""The numbers of Mmad: issued Mmads accumulate lazily and are computed as one wide matmul.

Why lazily: a K loop of small Mmads (e.g. 128x64 @ 64x256) is dominated by per-call BLAS
overhead; concatenating the K slices makes full emulation of a matmul cost about one numpy
matmul. The result is bit-for-bit the fp32 sum a single matmul gives (order of K within BLAS).

Each Mmad keeps a raw snapshot of its L0A/L0B fractals (L0 may be reloaded before the flush).
The flush widens them (fp16/bf16 → fp32, int8 → float64 for exact int32 sums) straight into the
K-concatenated operands by table lookup, and reuses operands already widened in this launch when
their raw fractals are bit-for-bit the same (`Widened`).
"""

from __future__ import annotations

from collections import OrderedDict
from functools import cache

import numpy as np

from ..npu.offload import numbers
from .dtypes import int32

_BITS = {1: np.uint8, 2: np.uint16}


@cache
def _widen_table(src, wide):
    """Every value of the 1- or 2-byte type `src` as `wide`, indexed by its bit pattern.

    Why: numpy's fp16→fp32 `astype` costs ~1.65 ns per element; a table lookup costs ~0.75 (and
    fuses with the fractal transpose), and a 1024³ matmul widens 12 M elements (A is re-read per
    N tile, B per M tile). Built with `astype` itself, so every entry — NaN payloads included — is
    bit-identical to converting directly.
    """
    bits = np.arange(1 << (8 * src.itemsize), dtype=_BITS[src.itemsize])
    return bits.view(src).astype(wide)


def _widen_into(out, tile, wide) -> None:
    """out[...] = tile.astype(wide) for a (transposed) view `tile`, by table where that pays."""
    bits = _BITS.get(tile.dtype.itemsize)
    if bits is None or tile.dtype == np.dtype(wide):
        out[...] = tile
        return
    np.take(_widen_table(tile.dtype, np.dtype(wide)), tile.view(bits), out=out, mode="clip")


def _split(arr: np.ndarray, shape: tuple) -> np.ndarray:
    """`arr` reshaped as a view (raises instead of silently copying: results are written
    through it)."""
    v = arr.view()
    v.shape = shape
    return v


class KSteps:
    """Consecutive Mmads of one K step (k, k1, c0) into a pending L0C tile: their raw L0A and
    L0B fractals, stacked (grown by doubling) so that the flush widens them in one pass."""

    __slots__ = ("k", "k1", "c0", "a", "b", "count")

    def __init__(self, k: int, k1: int, c0: int, need_a: int, need_b: int, dtype):
        self.k, self.k1, self.c0 = k, k1, c0
        self.a = np.empty((8, need_a), dtype)
        self.b = np.empty((8, need_b), dtype)
        self.count = 0

    def add(self, l0a: np.ndarray, l0b: np.ndarray) -> None:
        i = self.count
        if i == len(self.a):
            self.a = np.concatenate((self.a, np.empty_like(self.a)))
            self.b = np.concatenate((self.b, np.empty_like(self.b)))
        row = self.a[i]
        row[...] = l0a[: row.size]
        row = self.b[i]
        row[...] = l0b[: row.size]
        self.count = i + 1


class Widened:
    """Mmad operands widened earlier in this launch, found again by their raw fractals.

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
        self.entries[slot] = (bits, out, nbytes)
        self.bytes += nbytes + sum(map(_held_bytes, bits))
        while self.bytes > self.budget and len(self.entries) > 1:
            _, (old_bits, _, old_bytes) = self.entries.popitem(last=False)
            self.bytes -= old_bytes + sum(map(_held_bytes, old_bits))
        return out


class Later:
    """A widened operand computed on first use (on the numbers thread), then shared read-only."""

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


class Pending:
    """Mmads accumulating into one L0C tile, computed as one wide matmul when C is next read."""

    __slots__ = ("key", "dst", "m", "n", "m1", "n1", "out_t", "init", "bias", "runs")

    def __init__(self, key, dst, m, n, m1, n1, out_t, init, bias):
        self.key, self.dst, self.m, self.n, self.m1, self.n1 = key, dst, m, n, m1, n1
        self.out_t, self.init, self.bias = out_t, init, bias
        self.runs: list[KSteps] = []

    def operands(self, widened: Widened) -> tuple[Later, Later]:
        """A (m × Σk) and B (Σk × n), widened (fp32, or float64 for int8: exact int32 sums)."""
        wide = np.float64 if self.out_t == int32 else np.float32
        shape = tuple((r.k, r.k1, r.c0, r.count, r.a.dtype) for r in self.runs)
        ks = sum(r.k * r.count for r in self.runs) * np.dtype(wide).itemsize
        a = widened.get(("A", self.m, self.m1, wide, shape), [r.a[:r.count] for r in self.runs],
                        self.m * ks, lambda: self._widen_a(wide))
        b = widened.get(("B", self.n, self.n1, wide, shape), [r.b[:r.count] for r in self.runs],
                        self.n * ks, lambda: self._widen_b(wide))
        return a, b

    def _widen_a(self, wide) -> np.ndarray:
        """ZZ fractals of L0A → rows m, then (step, k) per run of K steps."""
        m, m1 = self.m, self.m1
        a = np.empty((m, sum(r.k * r.count for r in self.runs)), wide)
        k0 = 0
        for r in self.runs:
            t, k, k1, c0 = r.count, r.k, r.k1, r.c0
            kp, kt = k1 * c0, t * k
            za = r.a[:t].reshape(t, m1, k1, 16, c0).transpose(1, 3, 0, 2, 4)
            if m == m1 * 16 and k == kp:
                _widen_into(_split(a[:, k0:k0 + kt], (m1, 16, t, k1, c0)), za, wide)
            else:
                full = np.empty((m1, 16, t, k1, c0), wide)
                _widen_into(full, za, wide)
                a[:, k0:k0 + kt] = full.reshape(m1 * 16, t, kp)[:m, :, :k].reshape(m, kt)
            k0 += kt
        return a

    def _widen_b(self, wide) -> np.ndarray:
        """ZN fractals of L0B → (step, k) per run of K steps, then n."""
        n, n1 = self.n, self.n1
        b = np.empty((sum(r.k * r.count for r in self.runs), n), wide)
        k0 = 0
        for r in self.runs:
            t, k, k1, c0 = r.count, r.k, r.k1, r.c0
            kp, kt = k1 * c0, t * k
            zb = r.b[:t].reshape(t, k1, n1, 16, c0).transpose(0, 1, 4, 2, 3)
            if n == n1 * 16 and k == kp:
                _widen_into(_split(b[k0:k0 + kt], (t, k1, c0, n1, 16)), zb, wide)
            else:
                full = np.empty((t, k1, c0, n1, 16), wide)
                _widen_into(full, zb, wide)
                b[k0:k0 + kt] = full.reshape(t, kp, n1 * 16)[:, :k, :n].reshape(kt, n)
            k0 += kt
        return b

    def flush(self, core) -> None:
        """Hand the tile to the numbers thread (npu/offload.py): operands are matched against
        those widened before here (the snapshots are this thread's); widening, the matmul and
        the write into L0C run there, after the jobs before it."""
        core.mmad_pending = None
        run = core.run
        if run.mmad_widened is None:
            run.mmad_widened = Widened()
        a, b = self.operands(run.mmad_widened)
        bias = None if self.bias is None else self.bias.arr[: self.n].copy()
        m1, n1 = self.m1, self.n1
        c4 = self.dst.arr[: m1 * n1 * 256].reshape(n1, m1, 16, 16).transpose(1, 2, 0, 3)
        numbers.submit(lambda: self._compute(a, b, bias, c4))

    def _compute(self, a: Later, b: Later, bias: np.ndarray | None, c4: np.ndarray) -> None:
        r = a() @ b()  # BLAS on one thread during a launch (npu/blas.py)
        if self.out_t == int32:
            r = r.astype(np.int32)
        if bias is not None:
            r = r + bias.astype(r.dtype)
        m, n, m1, n1 = self.m, self.n, self.m1, self.n1
        if m != m1 * 16 or n != n1 * 16:
            full = np.zeros((m1 * 16, n1 * 16), dtype=r.dtype)
            full[:m, :n] = r
            r = full
        r4 = r.reshape(m1, 16, n1, 16)
        if self.init:
            c4[...] = r4
        else:
            c4 += r4
