"""The numbers of replayed blocks: a template's numeric effects, traced once, run for every block.

Why: a full run used to execute the Python kernel in every block for its numbers, although block
replay (npu/replay.py) already proves that later blocks issue the template's instructions, only at
other GM addresses. Per instruction that Python costs more than numpy's own work on a tile. So a
template of a full run also writes down, at the hot kernel-API sites (DataCopy count form, the
element-wise vector ops, Duplicate), what numpy did: the callable and its operands as specs — a GM
operand by buffer, element start (affine in the block index) and count, a local one by memory,
byte offset and count. A replayed block's numbers are that trace run with the block's GM starts.

Exact only when the trace is everything the template computed, so `compile` checks it rather than
assuming it: every work record on a non-scalar pipe must carry a trace entry (any other
instruction could have changed numbers), and there must be no scalar-unit work at all (GetValue
hands data to the kernel's Python, which could branch on it; SetValue, atomics, printf...).

Fast because a trace runs op-major: each entry is one numpy call over a (blocks, count) view of
a batch of consecutive replayed blocks, and a loop's entries (the trace repeats with GM starts
advancing by a constant step) over (iterations × blocks), a chunk of iterations at a time. Local
memory becomes a scratch array with one row per block (per iteration in a loop). Both reorder
work, so both are checked: blocks of a batch must not write GM another of them touches, a loop's
iterations must not write GM another iteration touches nor read local memory an earlier iteration
wrote; otherwise the batch runs block by block, the loop entry by entry.
"""

from __future__ import annotations

import numpy as np

from .pipes import S
from .records import KIND_WORK
from .replay import BlockIndex

#: what an entry does (`run_entry`)
COPY, BINARY, UNARY, SCALAR, FILL = range(5)
#: operand kinds in a spec
GM, LOCAL = 0, 1
#: longest loop body (entries) looked for, and how many candidate bodies are tried at a place
MAX_PERIOD = 64
MAX_TRIES = 4
#: bytes of scratch a chunk of loop iterations may take (so it stays in cache), and the local
#: state of a batch of blocks (a batch of thousands of blocks is run in several)
CHUNK_BYTES = 1 << 19
BATCH_BYTES = 1 << 25


class NumTrace:
    """A template's numeric effects in program order (built by the kernel API, ascendc).

    `entries`: one hashable key per effect, (code, fn, extra, dst, src0, src1), operands as
    specs `(GM, buffer, dtype, n, a)` or `(LOCAL, mem, byte offset, n, dtype)` (`a`: elements
    the start moves per block); `starts`: each GM operand's start in the template, flat, in
    order; `gofs`: per entry, its first operand's place in `starts`; `recs`: per entry, the
    index of the record its instruction wrote. `bad`: an effect no spec describes happened.
    """

    __slots__ = ("entries", "starts", "gofs", "recs", "bad")

    def __init__(self):
        self.entries: list[tuple] = []
        self.starts: list[int] = []
        self.gofs: list[int] = []
        self.recs: list[int] = []
        self.bad = False

    def add(self, rec: int, code: int, fn, extra, n: int, dst, src0=None, src1=None) -> None:
        """Trace one effect on `n` elements of each operand (tensors of the kernel API: a GM one
        has `buffer` and `start`, a local one `mem` and `offset`), whose record will be `rec`."""
        g = len(self.starts)
        d = self._spec(dst, n)
        a = None if src0 is None else self._spec(src0, n)
        b = None if src1 is None else self._spec(src1, n)
        if d is None or (a is None and src0 is not None) or (b is None and src1 is not None):
            del self.starts[g:]
            self.bad = True
            return
        self.entries.append((code, fn, extra, d, a, b))
        self.gofs.append(g)
        self.recs.append(rec)

    def _spec(self, t, n: int) -> tuple | None:
        arr = t.arr
        if arr is None or (arr.dtype is not t.dtype and arr.dtype != t.dtype):
            return None  # packed int4b_t: bytes, not elements
        is_gm = _IS_GM.get(type(t))
        if is_gm is None:
            is_gm = _IS_GM[type(t)] = hasattr(t, "buffer")
        if not is_gm:
            return (LOCAL, t.mem, t.offset, n, t.dtype)
        s = t.start
        if type(s) is int:
            a = 0
        elif type(s) is BlockIndex and s.vals is None and s.a > 0:
            a, s = s.a, s.v
        else:  # starts not affine in the block index (or moving backwards): not traced
            return None
        self.starts.append(s)
        return (GM, t.buffer, t.dtype, n, a)


#: tensor class -> whether it is a GM tensor (has `buffer`)
_IS_GM: dict = {}


def run_entry(code: int, fn, extra, d, s0, s1) -> None:
    """One traced effect on operand views (the kernel API's own numpy calls, ascendc/vector.py)."""
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


def compile_trace(trace: NumTrace | None, columns: dict, block: int) -> Program | None:
    """The program that gives a replayed block its numbers, or None when the trace may miss
    something the template computed (see the module doc)."""
    if trace is None or trace.bad:
        return None
    kind, pipe = columns["kind"], columns["pipe"]
    work = kind == KIND_WORK
    if (work & (pipe == S)).any():
        return None
    need = np.flatnonzero(work)
    if len(need) != len(trace.recs) or not np.array_equal(need, trace.recs):
        return None
    ids_of: dict = {}  # distinct entries -> their id
    ids = [ids_of.setdefault(e, len(ids_of)) for e in trace.entries]
    for e in ids_of:
        for spec in e[3:]:
            if spec is not None and spec[0] == GM and _unplain(spec[1]):
                return None
    return Program(trace, block, ids_of, ids)


def _unplain(buf) -> bool:
    """Whether GM buffer `buf` is more than a plain array: lazily read or written by cube numbers
    (ascendc/lineage.py, npu/offload.py), or not one contiguous array the views can address."""
    return buf.lineage or buf.busy or buf.data is None or not buf.data.flags.c_contiguous


class Pending:
    """Replayed blocks whose numbers are still to run: consecutive ones of one template, run as a
    batch when a block of another template or one run step by step comes, or the launch ends."""

    __slots__ = ("program", "blocks")

    def __init__(self):
        self.program: Program | None = None
        self.blocks: list[int] = []

    def add(self, program: Program, block: int) -> None:
        if program is not self.program:
            self.flush()
            self.program = program
        self.blocks.append(block)

    def flush(self) -> None:
        if self.blocks:
            blocks, self.blocks = self.blocks, []
            self.program.run(blocks)
        self.program = None


def _root(arr: np.ndarray) -> np.ndarray:
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


class _Gm:
    """A GM operand of a compiled slot: `arr` the buffer's data in the operand's dtype; the
    element start in block b, iteration j: `v + a * b + step * j`."""

    __slots__ = ("arr", "dtype", "isz", "n", "v", "a", "step", "ext", "root", "addr", "write")

    def __init__(self, spec: tuple, v: int, step: int, reps: int, block: int, write: bool):
        buf, dtype, n, a = spec[1:]
        self.arr = buf.data if buf.data.dtype == dtype else buf.data.view(dtype)
        self.dtype, self.isz, self.n = dtype, dtype.itemsize, n
        self.v, self.a, self.step = v - a * block, a, step
        self.ext = step * (reps - 1) + n  # elements from the first iteration's start to the end
        self.root = id(_root(buf.data))  # what GM arrays may overlap: those of one root
        self.addr = buf.data.__array_interface__["data"][0]
        self.write = write


class _Local:
    """A local operand: `off` its byte offset in a scratch row; `main`: read from the state
    before the loop (the loop never writes it)."""

    __slots__ = ("dtype", "isz", "n", "off", "main")

    def __init__(self, dtype, n: int, off: int, main: bool = False):
        self.dtype, self.isz, self.n, self.off, self.main = dtype, dtype.itemsize, n, off, main


class _Segment:
    """Entries run in order (`reps` 1), or a loop body run `reps` times (iterations chunked)."""

    __slots__ = ("slots", "reps", "back", "finals", "scratch")

    def __init__(self, slots: list, reps: int, back: list, finals: list = ()):
        self.slots = slots  # (code, fn, extra, operands) per entry
        self.reps = reps
        self.back = back  # scratch byte ranges a loop writes: copied to the state after it
        self.finals = finals  # copies elided in the loop, run for its last iteration after it
        self.scratch = any(type(op) is _Local and not op.main for *_, ops in slots for op in ops)


class Program:
    """A compiled trace: segments, the scratch row layout, the GM operands for the checks."""

    def __init__(self, trace: NumTrace, block: int, ids_of: dict, ids: list[int]):
        self.block = block
        entries, starts, gofs = trace.entries, trace.starts, trace.gofs
        self.layout, self.row = _layout(ids_of)
        self.gms: list[_Gm] = []
        loops = _loops(ids, starts, gofs)
        self.segments = [self._segment(entries, starts, gofs, i, p, r) for i, p, r in loops]
        gms = self.gms
        self._v = np.array([g.v for g in gms], dtype=np.int64)
        self._a = np.array([g.a for g in gms], dtype=np.int64)
        self._ext = np.array([g.ext for g in gms], dtype=np.int64)
        self._len = np.array([len(g.arr) for g in gms], dtype=np.int64)
        self._isz = np.array([g.isz for g in gms], dtype=np.int64)
        self._addr = np.array([g.addr for g in gms], dtype=np.int64)
        self._write = np.array([g.write for g in gms], dtype=bool)
        self._root = np.array([g.root for g in gms], dtype=np.int64)
        #: GM buffers the trace writes
        self._written = list({id(e[3][1]): e[3][1] for e in ids_of if e[3][0] == GM}.values())

    # ---- compiling --------------------------------------------------------------------------------
    def _segment(self, entries, starts, gofs, i: int, p: int, reps: int) -> _Segment:
        if reps > 1:
            seg = self._loop(entries, starts, gofs, i, p, reps)
            if seg is not None:
                return seg
            p, reps = p * reps, 1
        slots = [self._slot(entries[k], starts, gofs[k], None, None, 1) for k in range(i, i + p)]
        return _Segment(slots, 1, [])

    def _slot(self, e: tuple, starts, g: int, steps, local_main, reps: int) -> tuple:
        ops = []
        for k, spec in enumerate(e[3:]):
            if spec is None:
                ops.append(None)
            elif spec[0] == GM:
                step = steps[k] if steps else 0
                gm = _Gm(spec, starts[g], step, reps, self.block, k == 0)
                self.gms.append(gm)
                ops.append(gm)
                g += 1
            else:
                _, mem, off, n, dtype = spec
                main = bool(local_main and local_main[k])
                ops.append(_Local(dtype, n, self.layout[mem] + off, main))
        return (e[0], e[1], e[2], ops)

    def _loop(self, entries, starts, gofs, i: int, p: int, reps: int) -> _Segment | None:
        """A loop body run over chunks of iterations, if reordering it is exact: no iteration
        writes GM another iteration touches, and each local read is of bytes the same
        iteration wrote before (a loop-carried value would cross scratch rows) or of bytes
        no iteration writes (read from the state before the loop)."""
        g0, g1 = gofs[i], gofs[i + p]
        g2 = gofs[i + 2 * p] if i + 2 * p < len(gofs) else len(starts)
        steps_all = [b - a for a, b in zip(starts[g0:g1], starts[g1:g2])]
        if any(s < 0 for s in steps_all):
            return None
        body = entries[i : i + p]
        # local memory: writes and reads in body order
        writes: list[tuple] = []
        mains = []
        for e in body:
            row = [False, False, False]
            for k in (1, 2):
                spec = e[3 + k]
                if spec is None or spec[0] != LOCAL:
                    continue
                lo = self.layout[spec[1]] + spec[2]
                hi = lo + spec[3] * spec[4].itemsize
                if _covered(writes, lo, hi):
                    continue
                if any(
                    _overlaps(lo, hi, self.layout[f[1]] + f[2], f[3] * f[4].itemsize)
                    for f in _local_dsts(body)
                ):
                    return None  # a value carried from one iteration to the next
                row[k] = True
            d = e[3]
            if d[0] == LOCAL:
                lo = self.layout[d[1]] + d[2]
                writes.append((lo, lo + d[3] * d[4].itemsize))
            mains.append(row)
        # GM: per array written in the body, every operand on it moves by the same step, at
        # least as far as one iteration's footprint on it spans (all in bytes: operands may
        # view one array as different types, or start at other addresses)
        per_root: dict = {}
        g = g0
        for e in body:
            for k, spec in enumerate(e[3:]):
                if spec is not None and spec[0] == GM:
                    buf, isz = spec[1], spec[2].itemsize
                    at = buf.data.__array_interface__["data"][0] + starts[g] * isz
                    moves = (spec[4] * isz, steps_all[g - g0] * isz)  # per block, per iteration
                    per_root.setdefault(id(_root(buf.data)), []).append((at, spec[3] * isz, moves, k == 0))
                    g += 1
        for ops in per_root.values():
            if not any(w for *_, w in ops):
                continue
            if len({moves for _, _, moves, _ in ops}) != 1:
                return None
            step = ops[0][2][1]
            width = max(at + nb for at, nb, *_ in ops) - min(at for at, *_ in ops)
            if step < width:
                return None
        slots = []
        g = g0
        for e, main in zip(body, mains):
            n_gm = sum(1 for spec in e[3:] if spec is not None and spec[0] == GM)
            steps = [0, 0, 0]
            gk = g
            for k, spec in enumerate(e[3:]):
                if spec is not None and spec[0] == GM:
                    steps[k] = steps_all[gk - g0]
                    gk += 1
            slots.append(self._slot(e, starts, g, steps, main, reps))
            g += n_gm
        slots, finals = _elide(slots)
        return _Segment(slots, reps, _merge(writes), finals)

    # ---- running ----------------------------------------------------------------------------------
    def run(self, blocks: list[int]) -> None:
        """The numbers of `blocks` (ascending, each admitted by the template), as if each had run
        its Python step by step after the one before it."""
        for buf in self._written:  # GM written: what `lineage.gm_written` does for a plain buffer
            buf.version += 1
        most = max(1, BATCH_BYTES // max(1, self.row))
        for b0, count in _runs(blocks, most):
            if count > 1 and not self._apart(b0, count):
                for b in range(b0, b0 + count):
                    self._run(b, 1)
            else:
                self._run(b0, count)

    def _apart(self, b0: int, count: int) -> bool:
        """Whether no block of b0..b0+count-1 writes GM another of them reads or writes."""
        if not len(self._v):
            return True
        bs = np.arange(b0, b0 + count, dtype=np.int64)
        lo = self._addr[:, None] + self._isz[:, None] * (self._v[:, None] + self._a[:, None] * bs[None, :])
        hi = lo + self._isz[:, None] * self._ext[:, None]
        for root in np.unique(self._root[self._write]):
            on = self._root == root
            w = on & self._write
            wlo, whi = lo[w].min(axis=0), hi[w].max(axis=0)
            alo, ahi = lo[on].min(axis=0), hi[on].max(axis=0)
            clash = (wlo[:, None] < ahi[None, :]) & (alo[None, :] < whi[:, None])
            np.fill_diagonal(clash, False)
            if clash.any():
                return False
        return True

    def in_bounds(self, b: int) -> bool:
        """Whether every GM operand of block b lies inside its buffer (guards make it so; a
        view outside would raise midway through a batch)."""
        if not len(self._v):
            return True
        lo = self._v + self._a * b
        return bool((lo >= 0).all() and (lo + self._ext <= self._len).all())

    def _run(self, b0: int, nb: int) -> None:
        main = np.zeros((nb, self.row), dtype=np.uint8)
        for seg in self.segments:
            if seg.reps == 1:
                _run_slots(seg.slots, main, main, b0, nb, 0, 1, self.row)
                continue
            per = max(1, CHUNK_BYTES // max(1, nb * self.row)) if seg.scratch else seg.reps
            tmp = np.empty((min(per, seg.reps), nb, self.row if seg.scratch else 0), dtype=np.uint8)
            for j0 in range(0, seg.reps, per):
                _run_slots(seg.slots, tmp, main, b0, nb, j0, min(per, seg.reps - j0), self.row)
            if seg.scratch:
                last = tmp[(seg.reps - 1) % per]
                for lo, hi in seg.back:
                    main[:, lo:hi] = last[:, lo:hi]
            _run_slots(seg.finals, main, main, b0, nb, seg.reps - 1, 1, self.row)


def _elide(slots: list) -> tuple[list, list]:
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
        if code == COPY and type(ops[0]) is _Local and type(ops[1]) is _Gm:
            done = _elide_load(slots, k, finals)
        elif code == COPY and type(ops[0]) is _Gm and type(ops[1]) is _Local:
            done = _elide_store(slots, k, finals)
        if not done:
            k += 1
    return slots, finals


def _same(a: _Local, b) -> bool:
    return type(b) is _Local and not b.main and a.off == b.off and a.n == b.n and a.dtype == b.dtype


def _touches(a: _Local, b) -> bool:
    return type(b) is _Local and not b.main and a.off < b.off + b.n * b.isz and b.off < a.off + a.n * a.isz


def _gm_free(slots: list, gm: _Gm, but: int) -> bool:
    """Whether no slot except `but` writes GM that `gm` touches in the same iteration (or, for
    a written `gm`, reads it). Other iterations never do (`Program._loop`)."""
    lo = gm.addr + gm.v * gm.isz
    hi = lo + gm.n * gm.isz
    for i, (_, _, _, ops) in enumerate(slots):
        if i == but:
            continue
        for j, op in enumerate(ops):
            if type(op) is not _Gm or op.root != gm.root or not (j == 0 or gm.write):
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


def _run_slots(slots, scratch, main, b0: int, nb: int, j0: int, ni: int, row: int) -> None:
    """Each slot over iterations j0..j0+ni-1 of blocks b0..b0+nb-1: one numpy call each."""
    ndarray = np.ndarray
    irow = nb * row
    for code, fn, extra, ops in slots:
        views = []
        for op in ops:
            if op is None:
                views.append(None)
            elif type(op) is _Local:
                if op.main or scratch is main:
                    views.append(ndarray((ni, nb, op.n), op.dtype, main, op.off, (0, row, op.isz)))
                else:
                    views.append(ndarray((ni, nb, op.n), op.dtype, scratch, op.off, (irow, row, op.isz)))
            else:
                isz = op.isz
                off = (op.v + op.a * b0 + op.step * j0) * isz
                views.append(ndarray((ni, nb, op.n), op.dtype, op.arr, off, (op.step * isz, op.a * isz, isz)))
        run_entry(code, fn, extra, *views)


def _runs(blocks: list[int], most: int):
    """(first, count) of each run of consecutive blocks, at most `most` blocks each."""
    start = prev = blocks[0]
    for b in blocks[1:]:
        if b != prev + 1 or b - start == most:
            yield start, prev - start + 1
            start = b
        prev = b
    yield start, prev - start + 1


def _layout(entries) -> tuple[dict, int]:
    """Where each memory's bytes go in a scratch row: memory -> row offset of its byte 0 (the
    bytes the trace touches, from the lowest to the highest, 64 B aligned); the row's length."""
    span: dict = {}
    for e in entries:
        for spec in e[3:]:
            if spec is not None and spec[0] == LOCAL:
                _, mem, off, n, dtype = spec
                lo, hi = span.get(mem, (off, off))
                span[mem] = (min(lo, off), max(hi, off + n * dtype.itemsize))
    layout, row = {}, 0
    for mem, (lo, hi) in span.items():
        start = lo // 64 * 64
        layout[mem] = row - start
        row += -(-(hi - start) // 64) * 64
    return layout, row


def _local_dsts(body):
    return [e[3] for e in body if e[3][0] == LOCAL]


def _overlaps(lo: int, hi: int, lo2: int, n2: int) -> bool:
    return lo < lo2 + n2 and lo2 < hi


def _covered(writes: list[tuple], lo: int, hi: int) -> bool:
    """Whether [lo, hi) lies in the union of `writes`."""
    for wlo, whi in sorted(writes):
        if wlo <= lo < whi:
            lo = whi
            if lo >= hi:
                return True
    return lo >= hi


def _merge(ranges: list[tuple]) -> list[tuple]:
    out: list[list] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [tuple(r) for r in out]


def _loops(ids: list[int], starts: list[int], gofs: list[int]):
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
