"""The numbers of replayed cube blocks: a template's L0C tile jobs, traced once, run per block.

Why: a full run of a tiled matmul ran the kernel's Python in every block for its numbers,
although block replay (npu/replay/replay.py) proves the later blocks issue the template's instructions
at other GM addresses; that Python (Nd2Nz, LoadData, Mmad, Fixpipe and the lineage bookkeeping,
ascendc/lineage.py) was half of the emulating thread. The cube's numbers are decided at two
places only: a pending L0C tile's matmul (ascendc/mmad_numbers.Pending.flush: operands that are
strided views of a GM buffer widened to fp32) and a Fixpipe's conversion into GM. A template
traces both, with GM starts as the block index's values in every block; a replayed block runs
the same jobs, built by the same functions on its own GM starts, in the same order, on the same
numbers thread (npu/numbers/offload.py): the same BLAS calls on the same views, so the same bits.

Exact only when those jobs are everything the template computed, so `compile_cube` checks it:
every work record must be covered — a copy kept as lineage (no bytes moved), an Mmad, a traced
Fixpipe — and no scalar-unit work may exist (data read into the kernel's Python). The kernel
API sets `bad` for anything else: a lineage region materialised, an operand that is not a
regular grid of GM, a bias, atomics, a vector-path effect (numtrace's `add`). The traced jobs
must not read a GM buffer they write (blocks run in order, but a read's widened twin would be
keyed by the version the template saw), and each replayed block's operands must form the same
grids inside their buffers (`ok`, per block).
"""

from __future__ import annotations

import numpy as np

from ..numbers.offload import numbers
from .numops import root_of
from .numtrace import complete

#: entry kinds
MMAD, FIXPIPE = 0, 1


class CubeTrace:
    """A cube template's numeric jobs in submission order (built by the kernel API, ascendc).

    `entries`: (MMAD, compute, wide, dict of widened twins, A spec, B spec, L0C byte offset,
    tile dtype, m1, n1) with a spec (gm array, buffer, start per block, shape, strides, per
    block whether its operand is that grid) — or (FIXPIPE, make job, buffer, GM array, start per
    block, elements written, L0C byte offset, dtype, count, before-write hook). `recs`: the
    work records covered.
    """

    __slots__ = ("entries", "recs", "bad", "l0c", "block_dim")

    def __init__(self, l0c_bytes: int, block_dim: int):
        self.entries: list[tuple] = []
        self.recs: list[int] = []
        self.bad = False
        self.l0c = l0c_bytes
        self.block_dim = block_dim

    def add(self, *_args) -> None:
        """A vector-path effect (npu/replay/numtrace.py): no cube job describes it."""
        self.bad = True

    def cover(self, rec: int) -> None:
        """Work record `rec` (about to be written: they come in order) moves no numbers beyond
        the traced jobs."""
        self.recs.append(rec)

    def compile(self, columns: dict, block: int) -> CubeProgram | None:
        return compile_cube(self, columns)

    def starts(self, v) -> np.ndarray:
        """Per block, `v` (an int or a blockindex.BlockIndex: its value in every block)."""
        if type(v) is int:
            return np.full(self.block_dim, v, dtype=np.int64)
        return v.values()


def compile_cube(trace: CubeTrace | None, columns: dict) -> CubeProgram | None:
    """The program giving a replayed block its numbers, or None when the trace may miss
    something the template computed (see the module doc)."""
    if not complete(trace, columns):
        return None
    written = {id(root_of(e[3])) for e in trace.entries if e[0] == FIXPIPE}
    read = {id(root_of(spec[0])) for e in trace.entries if e[0] == MMAD for spec in (e[4], e[5])}
    if written & read:
        return None
    return CubeProgram(trace)


def nz_tile(c: np.ndarray, m1: int, n1: int) -> np.ndarray:
    """An L0C tile of m1 x n1 fractals (NZ: fractal columns of m1 fractals each) as an
    (m1, 16, n1, 16) view, indexed like the row-major result it holds."""
    return c[: m1 * n1 * 256].reshape(n1, m1, 16, 16).transpose(1, 2, 0, 3)


def _true() -> bool:
    return True


class CubeProgram:
    """A compiled cube trace: each entry's GM starts per block, and which blocks may run it."""

    def __init__(self, trace: CubeTrace):
        self.l0c = trace.l0c
        self.entries = trace.entries
        ok = np.ones(trace.block_dim, dtype=bool)
        for e in self.entries:
            if e[0] == MMAD:
                for gm, _, at, shape, strides, grid in (e[4], e[5]):
                    last = at + (shape[0] - 1) * strides[0] + (shape[1] - 1) * strides[1]
                    ok &= grid & (at >= 0) & (last < gm.size)
            else:
                arr, at, n = e[3], e[4], e[5]
                ok &= (at >= 0) & (at + n <= len(arr))
        self.ok = ok

    def in_bounds(self, b: int) -> bool:
        return bool(self.ok[b])

    def run(self, blocks: list[int]) -> None:
        """The numbers of `blocks`, in order, as if each had run its Python step by step."""
        for b in blocks:
            self._run(b)

    def _run(self, b: int) -> None:
        l0c = np.zeros(self.l0c, dtype=np.uint8)  # a fresh core's L0C (Core.memory)
        lane = _Lane()
        for e in self.entries:
            if e[0] == MMAD:
                _, compute, wide, twins, sa, sb, off, dtype, m1, n1 = e
                a = wide(twins, sa[0], sa[1], int(sa[2][b]), sa[3], sa[4])
                bb = wide(twins, sb[0], sb[1], int(sb[2][b]), sb[3], sb[4])
                c4 = nz_tile(l0c[off : off + m1 * n1 * 256 * dtype.itemsize].view(dtype), m1, n1)
                numbers.submit(lambda a=a, bb=bb, c4=c4, f=compute: f(a, bb, c4), lane=lane, ready=_true)
            else:
                _, make, buf, arr, at, _, off, dtype, count, before = e
                before(buf)
                src = l0c[off : off + count * dtype.itemsize].view(dtype)
                numbers.submit(make(arr, int(at[b]), src), buf, lane=lane)


class _Lane:
    """One replayed block's L0C on the numbers thread (jobs of a lane run in order)."""

    __slots__ = ()
