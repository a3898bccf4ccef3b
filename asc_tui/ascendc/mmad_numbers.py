"""The numbers of Mmad: issued Mmads accumulate lazily and are computed as one wide matmul.

Why lazily: a K loop of small Mmads (e.g. 128x64 @ 64x256) is dominated by per-call BLAS
overhead; concatenating the K slices makes full emulation of a matmul cost about one numpy
matmul. The result is bit-for-bit the fp32 sum a single matmul gives (order of K within BLAS).

Each Mmad keeps its L0A/L0B operands (L0 may be reloaded before the flush): by lineage, the GM
elements they hold (ascendc/lineage.py), or else as a raw snapshot of their fractals. The flush
finds operands widened before in this launch (`Widened`: by lineage exactly, or by comparing raw
fractals); a new one is a strided view of its GM buffer widened to fp32 when it forms a regular
grid of it, or is widened (fp16/bf16 → fp32, int8 → float64 for exact int32 sums) straight into
the K-concatenated operands by table lookup. `flush_cube` is what every reader of L0C calls
first.

Past 400 lines; the seam to split on: operands (widening, the operand stacks, `Widened`) |
accumulation (`Pending`, its flush and `flush_cube`).
"""

from __future__ import annotations

from collections import OrderedDict
from functools import lru_cache, partial

import numpy as np

from ..npu import state
from ..npu.numbers.offload import gm_ready, numbers
from ..npu.numbers.widen import widen_into as _widen_into
from ..npu.replay.blockindex import steady_offset
from ..npu.replay.cubetrace import MMAD, nz_tile
from .dtypes import int32
from .lineage import shift, track, untrack


def _split(arr: np.ndarray, shape: tuple) -> np.ndarray:
    """`arr` reshaped as a view (raises instead of silently copying: results are written
    through it)."""
    v = arr.view()
    v.shape = shape
    return v


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
        stack = _as_raw(stack, i, need, self.dtype)
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
                stack = _as_raw(stack, i, need, self.dtype)
                stack.put(i, e.map.gather(e.gm, e.base, rel, need).view(self.dtype))
                return stack
            lz.settle_range(t.mem, t.offset, t.offset + need * isz)
        stack = _as_raw(stack, i, need, self.dtype)
        stack.put(i, t.arr)
        return stack

    def rows_a(self) -> np.ndarray:
        return self.a.rows(self.count)

    def rows_b(self) -> np.ndarray:
        return self.b.rows(self.count)

    def settle(self, buffer) -> None:
        """GM `buffer` is about to change: snapshot operands taken from it."""
        if type(self.a) is LinStack and self.a.buffer is buffer:
            self.a = _as_raw(self.a, self.count, self.need_a, self.dtype)
        if type(self.b) is LinStack and self.b.buffer is buffer:
            self.b = _as_raw(self.b, self.count, self.need_b, self.dtype)


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
        `e.base + c` (the same map, or one moved along GM: `lineage.shift`); None when it
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


def _as_rows(x: np.ndarray, side: str, cols: int, k1: int, c0: int) -> np.ndarray:
    """One K step's operand (L0 order) as rows of A, or as columns of B (then rows too), by K."""
    if side == "a":  # ZZ: (m1, k1, 16, c0) → rows m, then k
        return x.reshape(cols, k1, 16, c0).transpose(0, 2, 1, 3).reshape(cols * 16, k1 * c0)
    # ZN: (k1, n1, 16, c0) → k, then columns n; as (n, k) like A
    return x.reshape(k1, cols, 16, c0).transpose(1, 2, 0, 3).reshape(cols * 16, k1 * c0)


@lru_cache(maxsize=1024)
def _grid(map_, rel: int, need: int, side: str, cols: int, k1: int, c0: int, rows: int) -> tuple | None:
    """(GM element of operand (0, 0), step per row of A / column of B, step along K) if the
    operand of one K step — its first `rows` rows of A (columns of B): the fractals' padding
    beyond them is not part of the product — is a regular grid of GM, else None (cached per
    map and shape)."""
    if map_.pad is not None and _as_rows(map_.pad[rel : rel + need], side, cols, k1, c0)[:rows].any():
        return None
    g = _as_rows(map_.index[rel : rel + need], side, cols, k1, c0)[:rows]
    first = int(g[0, 0])
    s_row = int(g[1, 0] - g[0, 0]) if g.shape[0] > 1 else 0
    s_k = int(g[0, 1] - g[0, 0]) if g.shape[1] > 1 else 0
    expect = first + np.arange(g.shape[0])[:, None] * s_row + np.arange(g.shape[1]) * s_k
    return (first, s_row, s_k) if np.array_equal(g, expect) else None


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


def _as_raw(stack, t: int, need: int, dtype) -> RawStack:
    """`stack` (None, raw, or by lineage with `t` rows) as raw snapshots."""
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


class Pending:
    """Mmads accumulating into one L0C tile, computed as one wide matmul when C is next read."""

    __slots__ = ("key", "dst", "m", "n", "m1", "n1", "out_t", "init", "bias", "runs", "__weakref__")

    def __init__(self, key, dst, m, n, m1, n1, out_t, init, bias):
        self.key, self.dst, self.m, self.n, self.m1, self.n1 = key, dst, m, n, m1, n1
        self.out_t, self.init, self.bias = out_t, init, bias
        self.runs: list[KSteps] = []

    def operands(self, widened: Widened) -> tuple[Later, Later]:
        """A (m × Σk) and B (Σk × n), widened (fp32, or float64 for int8: exact int32 sums)."""
        wide = np.float64 if self.out_t == int32 else np.float32
        shape = tuple((r.k, r.k1, r.c0, r.count, r.dtype) for r in self.runs)
        ks = sum(r.k * r.count for r in self.runs) * np.dtype(wide).itemsize
        a = self._operand(
            widened, ("A", self.m, self.m1, wide, shape), "a", self.m * ks, lambda: self._widen_a(wide)
        )
        b = self._operand(
            widened, ("B", self.n, self.n1, wide, shape), "b", self.n * ks, lambda: self._widen_b(wide)
        )
        return a, b

    def _operand(self, widened: Widened, key: tuple, side: str, nbytes: int, widen) -> Later:
        """By lineage when every K step has it (exact key, nothing compared), else by bytes."""
        stacks = [getattr(r, side) for r in self.runs]
        keys = [s.key(r.count) for s, r in zip(stacks, self.runs)]
        if all(k is not None for k in keys):

            def by_lineage():  # on a miss only
                view = self._strided(side, key[3])
                return widen() if view is None else view

            return widened.get_exact((*key, *keys), nbytes, by_lineage)
        for r in self.runs:  # as bytes, here: the numbers thread must not gather from GM
            need = r.need_a if side == "a" else r.need_b
            setattr(r, side, _as_raw(getattr(r, side), r.count, need, r.dtype))
        raws = [getattr(r, "rows_" + side)() for r in self.runs]
        return widened.get(key, raws, nbytes, widen)

    def settle(self, buffer) -> None:
        """GM `buffer` is about to change: snapshot the operands taken from it."""
        for r in self.runs:
            r.settle(buffer)

    def _strided(self, side: str, wide) -> np.ndarray | None:
        """The operand as a strided view of its GM buffer widened once (`wide_grid`), when its
        elements form one 2-D grid of GM (a plain tiled matmul: rows of A, K steps along a
        row); None otherwise. Nothing is copied."""
        spec = self._grid_spec(side, wide)
        return None if spec is None else wide_grid(state.core.run.wide, *spec[:5])

    def _grid_spec(self, side: str, wide) -> tuple | None:
        """(gm, buffer, start, shape, strides, stack, first, step) of `_strided`'s grid, or
        None."""
        if len(self.runs) != 1 or wide is not np.float32:
            return None
        r = self.runs[0]
        st = getattr(r, side)
        if type(st) is not LinStack or r.k != r.k1 * r.c0:
            return None
        rows, cols = (self.m, self.m1) if side == "a" else (self.n, self.n1)
        grid = _grid(st.map, st.rel, st.need, side, cols, r.k1, r.c0, rows)
        if grid is None:
            return None
        first, s_row, s_k = grid  # GM element of (0, 0), steps along rows / cols and along K
        t, k = r.count, r.k
        bases = st.bases[:t]
        step = k * s_k
        if any(bases[i] - bases[0] != i * step for i in range(1, t)):
            return None
        gm = st.gm
        if gm.dtype.itemsize != 2 or gm.dtype.kind in "iu" or state.core.run.wide is None:
            return None
        start = bases[0] + first
        shape, strides = ((rows, t * k), (s_row, s_k)) if side == "a" else ((t * k, rows), (s_k, s_row))
        last = start + (shape[0] - 1) * strides[0] + (shape[1] - 1) * strides[1]
        if start < 0 or last >= gm.size or min(strides) < 0:
            return None
        return gm, st.buffer, start, shape, strides, st, first, step

    def _widen_a(self, wide) -> np.ndarray:
        """ZZ fractals of L0A → rows m, then (step, k) per run of K steps."""
        m, m1 = self.m, self.m1
        a = np.empty((m, sum(r.k * r.count for r in self.runs)), wide)
        k0 = 0
        for r in self.runs:
            t, k, k1, c0 = r.count, r.k, r.k1, r.c0
            kp, kt = k1 * c0, t * k
            za = r.rows_a().reshape(t, m1, k1, 16, c0).transpose(1, 3, 0, 2, 4)
            if m == m1 * 16 and k == kp:
                _widen_into(_split(a[:, k0 : k0 + kt], (m1, 16, t, k1, c0)), za, wide)
            else:
                full = np.empty((m1, 16, t, k1, c0), wide)
                _widen_into(full, za, wide)
                a[:, k0 : k0 + kt] = full.reshape(m1 * 16, t, kp)[:m, :, :k].reshape(m, kt)
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
            zb = r.rows_b().reshape(t, k1, n1, 16, c0).transpose(0, 1, 4, 2, 3)
            if n == n1 * 16 and k == kp:
                _widen_into(_split(b[k0 : k0 + kt], (t, k1, c0, n1, 16)), zb, wide)
            else:
                full = np.empty((t, k1, c0, n1, 16), wide)
                _widen_into(full, zb, wide)
                b[k0 : k0 + kt] = full.reshape(t, kp, n1 * 16)[:, :k, :n].reshape(kt, n)
            k0 += kt
        return b

    def flush(self, core) -> None:
        """Hand the tile to the numbers thread (npu/numbers/offload.py): operands are matched against
        those widened before here (the snapshots are this thread's); widening, the matmul and
        the write into L0C run there, after the jobs before it."""
        core.mmad_pending = None
        untrack(self)
        run = core.run
        if run.mmad_widened is None:
            run.mmad_widened = Widened()
        a, b = self.operands(run.mmad_widened)
        if self.bias is not None and core.lazy is not None:  # bytes about to be read
            core.lazy.settle()
        bias = None if self.bias is None else self.bias.arr[: self.n].copy()
        m1, n1 = self.m1, self.n1
        c4 = nz_tile(self.dst.arr, m1, n1)
        # lane: this core's L0C (Fixpipe's conversion follows in it); ready: the operands are
        # in (a job that would widen one may share it with another job)
        tile = partial(compute_tile, self.m, self.n, self.out_t, self.init, bias)
        if core.trace is not None:  # a template of block replay (npu/replay/cubetrace.py)
            self._trace(core, tile)
        numbers.submit(
            lambda: tile(a(), b(), c4),
            lane=core,
            ready=lambda: a.value is not None and b.value is not None,
        )

    def _trace(self, core, tile) -> None:
        """Trace this tile's job: both operands grids of GM widened (`_strided`), no bias."""
        tr = core.trace
        specs = [self._grid_spec(side, np.float32) for side in "ab"]
        if self.bias is not None or None in specs or self.out_t == int32:
            tr.bad = True
            return
        out = []
        for gm, buffer, _, shape, strides, st, first, step in specs:
            s0 = tr.starts(st.origs[0])
            at = s0 + first
            grid = np.ones(tr.block_dim, dtype=bool)
            for i in range(1, len(st.origs)):  # the K steps as far apart in every block
                d = steady_offset(st.origs[i], st.origs[0])  # (the same in all: no arrays)
                if d is None:
                    grid &= tr.starts(st.origs[i]) - s0 == i * step
                elif d != i * step:
                    grid[:] = False
            out.append((gm, buffer, at, shape, strides, grid))
        d = self.dst
        tr.entries.append((MMAD, tile, wide_grid, core.run.wide, *out, d.offset, d.dtype, self.m1, self.n1))


def compute_tile(m: int, n: int, out_t, init: bool, bias, a: np.ndarray, b: np.ndarray, c4) -> None:
    """One L0C tile's numbers: A @ B (widened), into (init) or onto the tile's NZ view `c4`."""
    r = a @ b  # BLAS on one thread during a launch (npu/numbers/blas.py)
    if out_t == int32:
        r = r.astype(np.int32)
    if bias is not None:
        r = r + bias.astype(r.dtype)
    m1, n1 = -(-m // 16), -(-n // 16)
    if m != m1 * 16 or n != n1 * 16:
        full = np.zeros((m1 * 16, n1 * 16), dtype=r.dtype)
        full[:m, :n] = r
        r = full
    r4 = r.reshape(m1, 16, n1, 16)
    if init:
        c4[...] = r4
    else:
        c4 += r4


def flush_cube(core, wait: bool = True) -> None:
    """Make L0C hold every issued Mmad's result (before anything reads it); with wait=False
    only queue their computation, for a job that follows them on the numbers thread."""
    pend = core.mmad_pending
    if pend is not None:
        pend.flush(core)
    if wait:
        numbers.drain()
