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
first. The operands, their stacks and the widened ones reused: ascendc/mmad_operands.py.
"""

from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from ..npu import state
from ..npu.numbers.offload import numbers
from ..npu.numbers.widen import widen_into as _widen_into
from ..npu.replay.blockindex import steady_offset
from ..npu.replay.cubetrace import MMAD, nz_tile
from .dtypes import int32
from .lineage import untrack
from .mmad_operands import KSteps, Later, LinStack, Widened, as_raw, wide_grid


def _split(arr: np.ndarray, shape: tuple) -> np.ndarray:
    """`arr` reshaped as a view (raises instead of silently copying: results are written
    through it)."""
    v = arr.view()
    v.shape = shape
    return v


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
            setattr(r, side, as_raw(getattr(r, side), r.count, need, r.dtype))
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
