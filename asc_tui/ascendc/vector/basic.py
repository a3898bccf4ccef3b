"""Element-wise vector instructions (PIPE_V), `(dst, src..., count)` in Ascend C order: the
binary, unary and scalar families, and the count checks and costs every vector instruction
shares. The typed ones (Duplicate, Axpy, Cast, reductions, Compare, Select) are in `typed.py`;
the level-0 forms (mask, repeatTimes, repeat strides) in `level0.py`, `l0.py` and `reduce.py`.

Numerics run in the tensors' own dtype (so fp16 rounds like fp16); cost is
startup + repeats x cycles-per-repeat, one repeat = 256 B, a new startup every 255 repeats.
"""

from __future__ import annotations

import sys

import numpy as np

from ...npu import state
from ...npu.errors import KernelError
from ...npu.fp16 import Binary
from ...npu.pipes import V
from ...npu.replay.numtrace import BINARY, SCALAR, UNARY
from ..memory.tensors import LocalTensor
from . import l0 as vector_l0
from . import level0


def cost(core, op: str, nbytes: int) -> float:
    """Cycles of a vector instruction over `nbytes`: startup + repeats x cycles-per-repeat."""
    chip = core.chip
    reps = -(-nbytes // chip.repeat_bytes)
    starts = 1 + (reps - 1) // chip.max_repeat if reps else 1
    cpr = chip.vec_cpr
    return chip.vec_startup * starts + reps * cpr.get(op, cpr["default"])


def fail(message: str, fr, hint: str | None = None):
    """Raise a KernelError at the kernel's line (frame `fr`)."""
    raise KernelError(message, fr.f_code.co_filename, fr.f_lineno, hint=hint)


def check(op: str, n, fr, *tensors) -> int:
    """The element count `n` of a level-2 call, refused when it is not a count, negative, or
    more than a tensor holds (reported to the sanitizer first)."""
    if type(n) is not int:
        if hasattr(n, "__index__"):
            n = int(n)
        else:
            fail(
                f"{op}: expected an element count, got {type(n).__name__} (the mask/repeat "
                "form of the level-0 API is not emulated; pass a count)",
                fr,
            )
    for t in tensors:
        if n > t.count:
            from ..memory.queue import name_in_frame

            name = name_in_frame(t, fr) or "tensor"
            core = state.core
            if core.san is not None:
                core.san.oob(
                    core,
                    t,
                    0,
                    n,
                    t is tensors[0] and not op.startswith(("Reduce", "Compare")),
                    fr,
                    f"{op} on {n} elements but '{name}' holds {t.count} ({t.count * t.dtype.itemsize} B)",
                )
            fail(f"{op} on {n} elements but '{name}' holds {t.count} ({t.count * t.dtype.itemsize} B)", fr)
    if n < 0:
        fail(f"{op}: negative count {n}", fr)
    return n


def issue(core, op: str, nbytes: int, fr, reads, writes) -> None:
    """Issue the instruction on PIPE_V and tell the sanitizer its (tensor, count) reads and
    writes."""
    core.work(V, cost(core, op, nbytes), op, nbytes, fr)
    san = core.san
    if san is not None:
        for t, n in reads:
            san.access(core, t, 0, n, False, fr)
        for t, n in writes:
            san.access(core, t, 0, n, True, fr)


def binary(op: str, fn):
    """The level-2 and level-0 instruction `op`: dst = fn(src0, src1), element-wise."""

    def instr(dst, src0, src1, count, *l0):
        core = state.core
        fr = sys._getframe(1)
        if l0 or type(dst) is not LocalTensor:  # level-0 (mask, repeatTimes, params) or template args
            args = level0.peel((dst, src0, src1, count, *l0))
            if len(args) != 4:
                d, a, b, mask, reps, params = (*args, None)[:6]
                return vector_l0.binary(op, fn, d, a, b, mask, reps, params, fr)
            dst, src0, src1, count = args
        n = (
            count
            if (
                type(count) is int
                and count <= dst.count
                and count <= src0.count
                and count <= src1.count
                and count >= 0
            )
            else check(op, count, fr, dst, src0, src1)
        )
        if core.numeric:
            if core.lazy is not None:  # cube regions kept as lineage (lineage.py)
                core.lazy.settle()
            if dst.dtype is not src0.dtype and dst.dtype != src0.dtype:
                fail(f"{op}: dst and src must have the same type", fr)
            fn(src0.arr[:n], src1.arr[:n], out=dst.arr[:n])
            if core.trace is not None:  # a template of block replay (npu/replay/numtrace.py)
                core.trace.add(len(core.rec), BINARY, fn, None, n, dst, src0, src1)
        nb = n * dst.dtype.itemsize
        core.work(V, cost(core, op, nb), op, nb, fr)
        san = core.san
        if san is not None:
            san.access(core, src0, 0, n, False, fr)
            san.access(core, src1, 0, n, False, fr)
            san.access(core, dst, 0, n, True, fr)

    instr.__name__ = op
    instr.__doc__ = f"{op}(dst, src0, src1, count): elementwise on PIPE_V."
    return instr


def _unary(op: str, fn):
    def instr(dst, src, count, *l0):
        core = state.core
        fr = sys._getframe(1)
        if l0 or type(dst) is not LocalTensor:
            args = level0.peel((dst, src, count, *l0))
            if len(args) != 3:
                d, a, mask, reps, params = (*args, None)[:5]
                return vector_l0.unary(op, vector_l0.into(fn), d, a, mask, reps, params, fr)
            dst, src, count = args
        n = (
            count
            if (type(count) is int and 0 <= count <= dst.count and count <= src.count)
            else check(op, count, fr, dst, src)
        )
        if core.numeric:
            if core.lazy is not None:  # cube regions kept as lineage (lineage.py)
                core.lazy.settle()
            with np.errstate(all="ignore"):
                fn(src.arr[:n], dst.arr[:n])
            if core.trace is not None:
                core.trace.add(len(core.rec), UNARY, fn, None, n, dst, src)
        issue(core, op, n * dst.dtype.itemsize, fr, ((src, n),), ((dst, n),))

    instr.__name__ = op
    instr.__doc__ = f"{op}(dst, src, count): elementwise on PIPE_V."
    return instr


def scalar_op(op: str, fn):
    """The level-2 and level-0 instruction `op`: dst = fn(src, scalar), element-wise."""

    def instr(dst, src, scalar, count, *l0):
        core = state.core
        fr = sys._getframe(1)
        if l0 or type(dst) is not LocalTensor:
            args = level0.peel((dst, src, scalar, count, *l0))
            if len(args) != 4:
                d, a, sc, mask, reps, params = (*args, None)[:6]
                return vector_l0.unary(op, vector_l0.scalar_fn(fn, sc, d.dtype), d, a, mask, reps, params, fr)
            dst, src, scalar, count = args
        n = (
            count
            if (type(count) is int and 0 <= count <= dst.count and count <= src.count)
            else check(op, count, fr, dst, src)
        )
        if core.numeric:
            if core.lazy is not None:  # cube regions kept as lineage (lineage.py)
                core.lazy.settle()
            value = dst.dtype.type(scalar)
            fn(src.arr[:n], value, out=dst.arr[:n])
            if core.trace is not None:
                core.trace.add(len(core.rec), SCALAR, fn, value, n, dst, src)
        issue(core, op, n * dst.dtype.itemsize, fr, ((src, n),), ((dst, n),))

    instr.__name__ = op
    instr.__doc__ = f"{op}(dst, src, scalar, count): elementwise with a scalar on PIPE_V."
    return instr


def _with_errstate(fn):
    def wrapped(a, b, out):
        with np.errstate(all="ignore"):
            return fn(a, b, out=out)

    return wrapped


# (fp16 operands compute through fp32 in C: npu/fp16.Binary, the same bits as numpy's)
Add = binary("Add", Binary(np.add))
Sub = binary("Sub", Binary(np.subtract))
Mul = binary("Mul", Binary(np.multiply))
Div = binary("Div", _with_errstate(Binary(np.divide)))
Max = binary("Max", np.maximum)
Min = binary("Min", np.minimum)
And = binary("And", np.bitwise_and)
Or = binary("Or", np.bitwise_or)

Adds = scalar_op("Adds", np.add)
Muls = scalar_op("Muls", np.multiply)
Maxs = scalar_op("Maxs", np.maximum)
Mins = scalar_op("Mins", np.minimum)


def _into(fn):
    def apply(src, dst):
        fn(src, out=dst)

    return apply


def _rsqrt(src, dst):
    np.sqrt(src, out=dst)
    np.reciprocal(dst, out=dst)


def _relu(src, dst):
    np.maximum(src, src.dtype.type(0), out=dst)


def _recip(src, dst):
    np.reciprocal(src, out=dst)


Exp = _unary("Exp", _into(np.exp))
Ln = _unary("Ln", _into(np.log))
Abs = _unary("Abs", _into(np.abs))
Sqrt = _unary("Sqrt", _into(np.sqrt))
Rsqrt = _unary("Rsqrt", _rsqrt)
Reciprocal = _unary("Reciprocal", _recip)
Relu = _unary("Relu", _relu)
Not = _unary("Not", _into(np.invert))
