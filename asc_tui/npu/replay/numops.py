"""The pieces of a compiled numeric trace (npu/replay/numtrace.py, npu/replay/numprog.py): what an entry does
and how it runs on operand views, its operands, the loops found in a trace, and the copies a
loop body need not make.

Loops: the trace repeats a body with every GM start moving by the same step (a tile loop).
Elision: in a loop body, a DataCopy that only stages a GM tile in local memory for one reader
(or a result for one writer) is dropped and the reader reads GM (the writer writes it)
directly: the same bits, since the copy is exact, at a fraction of the memory traffic.
"""

from __future__ import annotations

import numpy as np

#: what an entry does (`run_entry`)
COPY, BINARY, UNARY, SCALAR, FILL = range(5)
#: operand kinds in a spec
GM, LOCAL = 0, 1
#: longest loop body (entries) looked for, and how many candidate bodies are tried at a place
MAX_PERIOD = 64
MAX_TRIES = 4


def run_entry(code: int, fn, extra, d, s0, s1) -> None:
    """One traced effect on operand views (the kernel API's own numpy calls, ascendc/vector/basic.py)."""
    if code == COPY:
        d[...] = s0
    elif code == BINARY:
        fn(s0, s1, out=d)
    elif code == UNARY:
        with np.errstate(all="ignore"):
            fn(s0, d)
    elif code == SCALAR:
        fn(s0, extra, out=d)
    else:  # FILL
        d[...] = extra


def root_of(arr: np.ndarray) -> np.ndarray:
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


class GmOp:
    """A GM operand of a compiled slot: `arr` the buffer's data in the operand's dtype; the
    element start in block b, iteration j: `v + a * b + step * j`."""

    __slots__ = ("arr", "dtype", "isz", "n", "v", "a", "step", "ext", "root", "addr", "write")

    def __init__(self, spec: tuple, v: int, step: int, reps: int, block: int, write: bool):
        buf, dtype, n, a = spec[1:]
        self.arr = buf.data if buf.data.dtype == dtype else buf.data.view(dtype)
        self.dtype, self.isz, self.n = dtype, dtype.itemsize, n
        self.v, self.a, self.step = v - a * block, a, step
        self.ext = step * (reps - 1) + n  # elements from the first iteration's start to the end
        self.root = id(root_of(buf.data))  # what GM arrays may overlap: those of one root
        self.addr = buf.data.__array_interface__["data"][0]
        self.write = write


class LocalOp:
    """A local operand: `off` its byte offset in a scratch row; `main`: read from the state
    before the loop (the loop never writes it)."""

    __slots__ = ("dtype", "isz", "n", "off", "main")

    def __init__(self, dtype, n: int, off: int, main: bool = False):
        self.dtype, self.isz, self.n, self.off, self.main = dtype, dtype.itemsize, n, off, main


class Segment:
    """Entries run in order (`reps` 1), or a loop body run `reps` times (iterations chunked)."""

    __slots__ = ("slots", "reps", "back", "finals", "scratch")

    def __init__(self, slots: list, reps: int, back: list, finals: list = ()):
        self.slots = slots  # (code, fn, extra, operands) per entry
        self.reps = reps
        self.back = back  # scratch byte ranges a loop writes: copied to the state after it
        self.finals = finals  # copies elided in the loop, run for its last iteration after it
        self.scratch = any(type(op) is LocalOp and not op.main for *_, ops in slots for op in ops)


def elide(slots: list) -> tuple[list, list]:
    """A loop body without the copies through local memory that only stage a GM tile for one
    reader (the element-wise ops read GM directly) or a result for one writer (the op writes
    GM directly): the same bits, each copy being exact, at a fraction of the memory traffic.
    Returns the body and the elided copies, whose local side the state after the loop needs
    (run for the last iteration). Only where nothing else in the body touches either side."""
    finals = []
    k = 0
    while k < len(slots):
        code, _, _, ops = slots[k]
        done = False
        if code == COPY and type(ops[0]) is LocalOp and type(ops[1]) is GmOp:
            done = _elide_load(slots, k, finals)
        elif code == COPY and type(ops[0]) is GmOp and type(ops[1]) is LocalOp:
            done = _elide_store(slots, k, finals)
        if not done:
            k += 1
    return slots, finals


def _same(a: LocalOp, b) -> bool:
    return type(b) is LocalOp and not b.main and a.off == b.off and a.n == b.n and a.dtype == b.dtype


def _touches(a: LocalOp, b) -> bool:
    return type(b) is LocalOp and not b.main and a.off < b.off + b.n * b.isz and b.off < a.off + a.n * a.isz


def _gm_free(slots: list, gm: GmOp, but: int) -> bool:
    """Whether no slot except `but` writes GM that `gm` touches in the same iteration (or, for
    a written `gm`, reads it). Other iterations never do (`Program._loop`)."""
    lo = gm.addr + gm.v * gm.isz
    hi = lo + gm.n * gm.isz
    for i, (_, _, _, ops) in enumerate(slots):
        if i == but:
            continue
        for j, op in enumerate(ops):
            if type(op) is not GmOp or op.root != gm.root or not (j == 0 or gm.write):
                continue
            olo = op.addr + op.v * op.isz
            if op.a * op.isz != gm.a * gm.isz or (olo < hi and lo < olo + op.n * op.isz):
                return False
    return True


def _elide_load(slots: list, k: int, finals: list) -> bool:
    loc, gm = slots[k][3][0], slots[k][3][1]
    if loc.dtype != gm.dtype or not _gm_free(slots, gm, k):
        return False
    readers = []
    for i, (_, _, _, ops) in enumerate(slots):
        if i == k:
            continue
        if _touches(loc, ops[0]):
            return False  # written again in the body
        for j in (1, 2):
            if _touches(loc, ops[j]):
                if i < k or not _same(loc, ops[j]):
                    return False
                readers.append((i, j))
    for i, j in readers:
        code, fn, extra, ops = slots[i]
        slots[i] = (code, fn, extra, [gm if x == j else op for x, op in enumerate(ops)])
    finals.append(slots.pop(k))
    return True


def _elide_store(slots: list, k: int, finals: list) -> bool:
    gm, loc = slots[k][3][0], slots[k][3][1]
    if loc.dtype != gm.dtype:
        return False
    writers = [i for i, (_, _, _, ops) in enumerate(slots) if _touches(loc, ops[0])]
    if len(writers) != 1 or writers[0] > k or not _same(loc, slots[writers[0]][3][0]):
        return False
    p = writers[0]
    for i, (_, _, _, ops) in enumerate(slots):
        if i != k and (_touches(loc, ops[1]) or _touches(loc, ops[2])):
            return False  # read by another slot (or the writer reads it itself)
    if not _gm_free(slots, gm, k):
        return False
    code, fn, extra, ops = slots[p]
    slots[p] = (code, fn, extra, [gm, *ops[1:]])
    slots.pop(k)
    finals.append((COPY, None, None, [loc, gm, None]))
    return True


def local_dsts(body):
    return [e[3] for e in body if e[3][0] == LOCAL]


def overlaps(lo: int, hi: int, lo2: int, n2: int) -> bool:
    return lo < lo2 + n2 and lo2 < hi


def covered(writes: list[tuple], lo: int, hi: int) -> bool:
    """Whether [lo, hi) lies in the union of `writes`."""
    for wlo, whi in sorted(writes):
        if wlo <= lo < whi:
            lo = whi
            if lo >= hi:
                return True
    return lo >= hi


def merge(ranges: list[tuple]) -> list[tuple]:
    out: list[list] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [tuple(r) for r in out]


def loops(ids: list[int], starts: list[int], gofs: list[int]):
    """The trace (`ids`: one per entry, equal for equal entries) as (first entry, body length,
    repetitions): loops where the same entries repeat with every GM start moving by the same
    step each time, runs of other entries between."""
    n = len(ids)
    ida, sa = np.asarray(ids, dtype=np.int64), np.asarray(starts, dtype=np.int64)
    out = []
    i = single = 0
    while i < n:
        p, r = _loop_at(ids, ida, sa, gofs, i)
        if r > 1:
            if single < i:
                out.append((single, i - single, 1))
            out.append((i, p, r))
            i += p * r
            single = i
        else:
            i += 1
    if single < n:
        out.append((single, n - single, 1))
    return out


def _loop_at(ids: list, ida: np.ndarray, sa: np.ndarray, gofs: list, i: int) -> tuple[int, int]:
    """The longest loop starting at entry i (body length, repetitions), (1, 1) if none. Counts
    repetitions 8 at a time, then all the rest at once: a place where no loop starts costs
    little, a long loop one pass."""
    n = len(ids)
    best = (1, 1)
    j = i
    for _ in range(MAX_TRIES):
        try:
            j = ids.index(ids[i], j + 1, min(n, i + MAX_PERIOD + 1))
        except ValueError:
            break
        p = j - i
        r = _repeats(ida, sa, gofs, i, p, min(8, (n - i) // p))
        if r == 8:
            r = _repeats(ida, sa, gofs, i, p, (n - i) // p)
        if p * r > best[0] * best[1]:
            best = (p, r)
    return best


def _repeats(ida: np.ndarray, sa: np.ndarray, gofs: list, i: int, p: int, most: int) -> int:
    """How many of the first `most` bodies of p entries from i repeat the first, with every GM
    start moving by the same step from one to the next."""
    if most < 2:
        return 1
    body = ida[i : i + most * p].reshape(most, p)
    same = (body == body[0]).all(axis=1)
    r = most if same.all() else int(np.argmin(same))
    if r < 2:
        return 1
    g0 = gofs[i]
    G = gofs[i + p] - g0
    if G:
        st = sa[g0 : g0 + r * G].reshape(r, G)
        d = st[1:] - st[:-1]
        ok = (d == d[0]).all(axis=1)
        if not ok.all():
            r = int(np.argmin(ok)) + 1
    return r
