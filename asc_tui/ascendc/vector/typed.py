"""Typed vector instructions (PIPE_V): Duplicate, Axpy, Cast, the reductions, Compare and
Select, `(dst, src..., count)` in Ascend C order, with their level-0 forms' entry points
(`l0.py`, `reduce.py`). The element-wise families and the shared checks: `basic.py`.
"""

from __future__ import annotations

import sys
from functools import cache

import numpy as np

from ...npu import state
from ...npu.fp16 import cast_into
from ...npu.pipes import V
from ...npu.replay.numtrace import FILL, UNARY
from .. import int4
from ..dtypes import is_int4
from ..enums import CMPMODE, SELMODE, RoundMode
from ..memory.tensors import LocalTensor
from . import l0 as vector_l0
from . import level0, reduce
from .basic import check, cost, fail, issue


def Duplicate(dst, scalar, count, *l0) -> None:
    """Fill `count` elements of dst with a scalar; level-0: `(dst, scalar, mask, repeatTimes,
    dstBlockStride, dstRepeatStride)`."""
    core = state.core
    fr = sys._getframe(1)
    if l0 or type(dst) is not LocalTensor:
        args = level0.peel((dst, scalar, count, *l0))
        if len(args) > 3:
            d, sc, mask, reps, blk, rep = (*args, 1, 8)[:6]
            return vector_l0.duplicate(d, sc, mask, reps, blk, rep, fr)
        dst, scalar, count = args
    n = check("Duplicate", count, fr, dst)
    if core.numeric:
        if core.lazy is not None:  # cube regions kept as lineage (lineage.py)
            core.lazy.settle()
        value = dst.dtype.type(scalar)
        dst.arr[:n] = value
        if core.trace is not None:
            core.trace.add(len(core.rec), FILL, None, value, n, dst)
    issue(core, "Duplicate", n * dst.dtype.itemsize, fr, (), ((dst, n),))


def Axpy(dst, src, scalar, count) -> None:
    """dst += src * scalar (src may be half with a float dst, as in Ascend C)."""
    core = state.core
    fr = sys._getframe(1)
    n = check("Axpy", count, fr, dst, src)
    if core.numeric:
        if core.lazy is not None:  # cube regions kept as lineage (lineage.py)
            core.lazy.settle()
        prod = src.arr[:n] * src.dtype.type(scalar)
        dst.arr[:n] = (dst.arr[:n] + prod.astype(dst.dtype)).astype(dst.dtype)
    issue(
        core, "Axpy", n * max(dst.dtype.itemsize, src.dtype.itemsize), fr, ((src, n), (dst, n)), ((dst, n),)
    )


_ROUND = vector_l0.ROUND  # one table of round modes for both forms of Cast


def _cast_numbers(a: np.ndarray, dtype: np.dtype, round_mode) -> np.ndarray:
    """Cast's counter form: float→int honours the round mode and saturates; a narrowing
    CAST_ODD goes through float64 (the level-0 form also rounds other narrowing float casts:
    vector_l0.cast_values)."""
    if dtype.kind in "iu" and a.dtype.kind == "f":
        f = _ROUND.get(round_mode, np.rint)
        info = np.iinfo(dtype)
        with np.errstate(all="ignore"):
            a = np.clip(f(a.astype(np.float64)), info.min, info.max)
    elif round_mode is RoundMode.CAST_ODD and dtype.itemsize < a.dtype.itemsize:
        a = a.astype(np.float64)
    out = np.empty(a.shape, dtype)
    with np.errstate(all="ignore"):  # inf/NaN and overflow convert as numpy does, silently
        cast_into(out, a)  # (fp16 ↔ fp32 in C: npu/fp16.py)
    return out


@cache
def _cast_fn(round_mode):
    """Cast's traced callable for `round_mode`: one object per mode, so that equal traced Casts
    are equal entries (a trace's loops are found by comparing them, npu/replay/numops.py)."""

    def fn(src, dst):
        dst[...] = _cast_numbers(src, dst.dtype, round_mode)

    return fn


def Cast(dst, src, round_mode: RoundMode, count, *l0) -> None:
    """Convert src to dst's type; float→int conversions honour the round mode.

    Level-0: `Cast(dst, src, roundMode, mask, repeatTimes, UnaryRepeatParams)`."""
    core = state.core
    fr = sys._getframe(1)
    if l0 or type(dst) is not LocalTensor:
        args = level0.peel((dst, src, round_mode, count, *l0))
        if len(args) > 4:
            d, a, rm, mask, reps, params = (*args, None)[:6]
            if is_int4(d.dtype) or is_int4(a.dtype):
                return int4.cast(d, a, rm, mask, (reps, params), fr)
            return vector_l0.cast(d, a, rm, mask, reps, params, fr)
        dst, src, round_mode, count = args
    if is_int4(dst.dtype) or is_int4(src.dtype):
        return int4.cast(dst, src, round_mode, count, (), fr)
    n = check("Cast", count, fr, dst, src)
    if core.numeric:
        if core.lazy is not None:  # cube regions kept as lineage (lineage.py)
            core.lazy.settle()
        dst.arr[:n] = _cast_numbers(src.arr[:n], dst.dtype, round_mode)
        if core.trace is not None:  # the same conversion, per replayed block (npu/replay/numtrace.py)
            core.trace.add(len(core.rec), UNARY, _cast_fn(round_mode), None, n, dst, src)
    issue(core, "Cast", n * max(dst.dtype.itemsize, src.dtype.itemsize), fr, ((src, n),), ((dst, n),))


def _reduce(op: str, fn, arg=None):
    def instr(dst, src, work, count, *more, calIndex=False):
        core = state.core
        fr = sys._getframe(1)
        if len(more) > 1 or type(dst) is not LocalTensor:  # level-0 or template arguments
            args = level0.peel((dst, src, work, count, *more))
            if len(args) > 5:
                d, s, w, mask, reps, rep, ci = (*args, calIndex)[:7]
                return reduce.reduce_all(op, _KIND[op], d, s, w, mask, reps, rep, bool(ci), fr)
            dst, src, work, count, *more = args
        if more:
            calIndex = more[0]
        n = check(op, count, fr, src)
        if dst.count < (2 if calIndex else 1):
            fail(f"{op}: dst needs room for {2 if calIndex else 1} element(s)", fr)
        if core.numeric and n:
            if core.lazy is not None:  # cube regions kept as lineage (lineage.py)
                core.lazy.settle()
            a = src.arr[:n]
            acc = a.astype(np.float32) if src.dtype.kind == "f" else a
            dst.arr[0] = dst.dtype.type(fn(acc))
            level0.registers(core)[3]["sum" if op == "ReduceSum" else "maxmin"] = (dst.arr[0], None)
            if calIndex and arg is not None:
                idx = int(arg(a))
                ints = dst.arr[:2].view(np.dtype(f"u{dst.dtype.itemsize}"))
                ints[1] = idx
        nb = n * src.dtype.itemsize
        # a tree of halving passes after the element pass
        extra = max(int(np.ceil(np.log2(max(nb / core.chip.repeat_bytes, 1)))), 0)
        core.work(V, cost(core, op, nb) + extra * core.chip.vec_startup, op, nb, fr)
        san = core.san
        if san is not None:
            san.access(core, src, 0, n, False, fr)
            san.access(core, dst, 0, 2 if calIndex else 1, True, fr)
            if work is not None:
                san.access(core, work, 0, min(work.count, n), True, fr)

    instr.__name__ = op
    instr.__doc__ = f"{op}(dst, src, workLocal, count[, calIndex]): result in dst[0]."
    return instr


_KIND = {
    "ReduceSum": reduce.ReduceType.SUM,
    "ReduceMax": reduce.ReduceType.MAX,
    "ReduceMin": reduce.ReduceType.MIN,
}
ReduceSum = _reduce("ReduceSum", np.sum)
ReduceMax = _reduce("ReduceMax", np.max, np.argmax)
ReduceMin = _reduce("ReduceMin", np.min, np.argmin)

_CMP = vector_l0.CMP  # one table of compare modes for both forms of Compare


def Compare(dst, src0, src1, mode: CMPMODE, count, *l0) -> None:
    """dst (uint8) receives one bit per element, little-endian within each byte.

    Level-0: `Compare(dst, src0, src1, cmpMode, mask, repeatTimes, BinaryRepeatParams)`, and
    `Compare(src0, src1, cmpMode, mask, BinaryRepeatParams)` into the CMPMASK register."""
    core = state.core
    fr = sys._getframe(1)
    if l0 or type(dst) is not LocalTensor or isinstance(src1, CMPMODE):
        args = level0.peel((dst, src0, src1, mode, count, *l0))
        if isinstance(args[2], CMPMODE):
            a, b, m, mask, params = (*args, None)[:5]
            return vector_l0.compare_register(a, b, m, mask, params, fr)
        if len(args) > 5:
            d, a, b, m, mask, reps, params = (*args, None)[:7]
            return vector_l0.compare(d, a, b, m, mask, reps, params, fr)
        dst, src0, src1, mode, count = args
    n = check("Compare", count, fr, src0, src1)
    need_bytes = -(-n // 8)
    if dst.count * dst.dtype.itemsize < need_bytes:
        fail(
            f"Compare of {n} elements needs a {need_bytes} B mask; dst has "
            f"{dst.count * dst.dtype.itemsize} B",
            fr,
        )
    if core.numeric:
        if core.lazy is not None:  # cube regions kept as lineage (lineage.py)
            core.lazy.settle()
        bits = np.packbits(_CMP[mode](src0.arr[:n], src1.arr[:n]), bitorder="little")
        dst.arr.view(np.uint8)[: len(bits)] = bits
    issue(
        core,
        "Compare",
        n * src0.dtype.itemsize,
        fr,
        ((src0, n), (src1, n)),
        ((dst, -(-need_bytes // dst.dtype.itemsize)),),
    )


def CompareScalar(dst, src0, scalar, mode: CMPMODE, count) -> None:
    core = state.core
    fr = sys._getframe(1)
    n = check("CompareScalar", count, fr, src0)
    if core.numeric:
        if core.lazy is not None:  # cube regions kept as lineage (lineage.py)
            core.lazy.settle()
        bits = np.packbits(_CMP[mode](src0.arr[:n], src0.dtype.type(scalar)), bitorder="little")
        dst.arr.view(np.uint8)[: len(bits)] = bits
    issue(core, "CompareScalar", n * src0.dtype.itemsize, fr, ((src0, n),), ())


def Select(dst, mask, src0, src1, mode: SELMODE, count, *l0) -> None:
    """Where the mask bit is 1 take src0, else src1 (a tensor, or a scalar in scalar mode).

    In `VSEL_CMPMASK_SPR` mode the first repeat's bits (256 B / sizeof(T) of them) apply to every
    repeat. Level-0: `Select(dst, selMask, src0, src1, selMode, mask, repeatTimes, params)`, and
    `Select(dst, src0, src1, repeatTimes, params)` with the CMPMASK register."""
    core = state.core
    fr = sys._getframe(1)
    if l0 or type(dst) is not LocalTensor or not isinstance(mode, SELMODE):
        args = level0.peel((dst, mask, src0, src1, mode, count, *l0))
        if not isinstance(args[4], SELMODE):
            d, a, b, reps, params = (*args, None)[:5]
            return vector_l0.select(
                d, None, a, b, SELMODE.VSEL_CMPMASK_SPR, level0.MASK_PLACEHOLDER, reps, params, fr
            )
        if len(args) > 6:
            d, sel, a, b, m, mk, reps, params = (*args, None)[:8]
            return vector_l0.select(d, sel, a, b, m, mk, reps, params, fr)
        dst, mask, src0, src1, mode, count = args
    scalar_mode = mode is SELMODE.VSEL_TENSOR_SCALAR_MODE
    n = check("Select", count, fr, dst, src0) if scalar_mode else check("Select", count, fr, dst, src0, src1)
    if core.numeric:
        if core.lazy is not None:  # cube regions kept as lineage (lineage.py)
            core.lazy.settle()
        bits = vector_l0.select_bits(mask, mode, n, 256 // dst.dtype.itemsize)
        other = dst.dtype.type(src1) if scalar_mode else src1.arr[:n]
        dst.arr[:n] = np.where(bits, src0.arr[:n], other)
    reads = ((src0, n),) if scalar_mode else ((src0, n), (src1, n))
    issue(core, "Select", n * dst.dtype.itemsize, fr, reads, ((dst, n),))
