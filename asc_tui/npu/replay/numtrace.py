"""The numbers of replayed blocks: a template's numeric effects, traced once, run for every block.

Why: a full run used to execute the Python kernel in every block for its numbers, although block
replay (npu/replay/replay.py) already proves that later blocks issue the template's instructions, only at
other GM addresses. Per instruction that Python costs more than numpy's own work on a tile. So a
template of a full run also writes down, at the hot kernel-API sites (DataCopy count form, the
element-wise vector ops, Duplicate), what numpy did: the callable and its operands as specs — a GM
operand by buffer, element start (affine in the block index) and count, a local one by memory,
byte offset and count. A replayed block's numbers are that trace run with the block's GM starts.

Exact only when the trace is everything the template computed, so `compile_trace` checks it
rather than assuming it: every work record on a non-scalar pipe must carry a trace entry (any
other instruction could have changed numbers), and there must be no scalar-unit work at all
(GetValue hands data to the kernel's Python, which could branch on it; SetValue, atomics,
printf...). `LocalTensor.numpy()` refuses the trace too; a kernel reading a tensor's `arr`
itself is outside the kernel API and this check.

Fast because a trace runs op-major over a batch of blocks, and a loop's body over chunks of its
iterations (npu/replay/numprog.py; loops and elided copies: npu/replay/numops.py).
"""

from __future__ import annotations

import numpy as np

from ..pipes import S
from ..records import KIND_WORK
from .blockindex import BlockIndex
from .numops import BINARY, COPY, FILL, GM, LOCAL, SCALAR, UNARY
from .numprog import Program

__all__ = ["BINARY", "COPY", "FILL", "SCALAR", "UNARY", "NumTrace", "Pending", "Program", "compile_trace"]


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

    def compile(self, columns: dict, block: int) -> Program | None:
        return compile_trace(self, columns, block)

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


def complete(trace, columns: dict) -> bool:
    """Whether a template's trace (this module's, or npu/replay/cubetrace.py's) may stand for all it
    computed: not marked bad, no scalar-unit work, and each work record (`recs`, ascending)
    covered."""
    if trace is None or trace.bad:
        return False
    kind, pipe = columns["kind"], columns["pipe"]
    work = kind == KIND_WORK
    if (work & (pipe == S)).any():
        return False
    need = np.flatnonzero(work)
    return len(need) == len(trace.recs) and np.array_equal(need, trace.recs)


def compile_trace(trace: NumTrace | None, columns: dict, block: int) -> Program | None:
    """The program that gives a replayed block its numbers, or None when the trace may miss
    something the template computed (see the module doc)."""
    if not complete(trace, columns):
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
    (ascendc/lineage.py, npu/numbers/offload.py), or not one contiguous array the views can address."""
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
