"""The reduction family beyond level-2 ReduceSum/Max/Min: per repeat, per block and per pair.

- `ReduceRepeat<ReduceType::X>` (alias `WholeReduceSum/Max/Min`): one result per repeat over its
  active lanes, `(dst, src, mask, repeatTimes, dstRepStride, srcBlkStride, srcRepStride[, order])`.
  MAX/MIN write (value, index) pairs by default (`ReduceOrder`); the index is the lane, stored as
  the raw bits of an unsigned integer of the element's width.
- `ReduceDataBlock<ReduceType::X>` (`BlockReduceSum/Max/Min`, whose arguments put repeatTimes
  before mask): one result per 32 B block, eight per repeat.
- `ReducePairElem<ReduceType::SUM>` (`PairReduceSum`): sums of adjacent lane pairs.
- the level-0 form of `ReduceSum/Max/Min(dst, src, work, mask, repeatTimes, srcRepStride[,
  calIndex])`: one result over all repeats (dst[0], and the element index in dst[1]).
`dstRepStride` counts one repeat's output (1 element, a pair, 8 block results, lanes/2 pair sums).
Sums accumulate in fp32 and round once to the element type. `GetReduceRepeatSumSpr` /
`GetReduceRepeatMaxMinSpr` read the last result the core's reduce registers kept.
"""

from __future__ import annotations

import sys
from enum import Enum

import numpy as np

from ...npu import state
from ..memory.tensors import LocalTensor
from . import level0 as L


class ReduceType(Enum):
    SUM = 0
    MAX = 1
    MIN = 2


class ReduceOrder(Enum):
    ORDER_VALUE_INDEX = 0
    ORDER_INDEX_VALUE = 1
    ORDER_ONLY_VALUE = 2
    ORDER_ONLY_INDEX = 3


def _split(args: tuple, kind: ReduceType | None):
    targs, rest = L.template_args(args)
    for a in targs:
        if isinstance(a, ReduceType):
            kind = a
    return kind, rest


def _values(a: np.ndarray, act: np.ndarray, kind: ReduceType, dtype):
    """Reduce each row of `a` over its active lanes: (values, lane index) per row."""
    if kind is ReduceType.SUM:
        acc = np.where(act, a.astype(np.float32) if a.dtype.kind == "f" else a, 0).sum(axis=1)
        return acc.astype(dtype), None
    wide = a.astype(np.float64)
    fill = -np.inf if kind is ReduceType.MAX else np.inf
    masked = np.where(act, wide, fill)
    idx = masked.argmax(axis=1) if kind is ReduceType.MAX else masked.argmin(axis=1)
    return a[np.arange(a.shape[0]), idx].astype(dtype), idx


def _index_bits(idx: np.ndarray, dtype) -> np.ndarray:
    return idx.astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)


def _gather(src, pl, blk, rep, fr, op):
    """Every (repeat, lane) value of src (inactive lanes included where in bounds) and the flat
    indices of the active ones."""
    isz = src.dtype.itemsize
    off = L._layout(isz, pl.repeats, pl.lanes, int(blk), pl.rep_stride(isz, blk, rep))
    idx = off[pl.active]
    if idx.size and int(idx.max()) >= src.count:
        L.oob(op, src, int(idx.max()) + 1, fr, False, pl.repeats)
    return np.minimum(off, max(src.count - 1, 0)), idx


def _run(op, kind, dst, src, mask, reps, dst_rep, blk, rep, order, fr, per: str) -> None:
    kind = ReduceType(kind) if not isinstance(kind, ReduceType) else kind
    L.check_strides(op, fr, dstRepStride=dst_rep, srcBlkStride=blk, srcRepStride=rep)
    pl = L.plan(op, mask, reps, src.dtype.itemsize, fr)
    off, i_src = _gather(src, pl, blk, rep, fr, op)
    core = state.core
    lanes = pl.lanes
    epb = L.BLOCK // src.dtype.itemsize
    if per == "repeat":
        groups, width = 1, lanes
    elif per == "block":
        groups, width = lanes // epb, epb
    else:  # pair
        groups, width = lanes // 2, 2
    with_index = per == "repeat" and kind is not ReduceType.SUM and order is not ReduceOrder.ORDER_ONLY_VALUE
    outs = 2 if with_index and order in (ReduceOrder.ORDER_VALUE_INDEX, ReduceOrder.ORDER_INDEX_VALUE) else 1
    step = max(int(dst_rep), 0) * groups * outs
    base = np.arange(pl.repeats)[:, None] * step + np.arange(groups)[None, :] * outs
    any_on = pl.active.reshape(pl.repeats, groups, width).any(axis=2)
    first = base[any_on]
    i_dst = np.concatenate([first + k for k in range(outs)]) if first.size else first
    if i_dst.size and int(i_dst.max()) >= dst.count:
        L.oob(op, dst, int(i_dst.max()) + 1, fr, True, pl.repeats)
    if core.numeric:
        L.settle(core)
        vals = src.arr[off].reshape(pl.repeats * groups, width)
        act = pl.active.reshape(pl.repeats * groups, width)
        v, ix = _values(vals, act, kind, dst.dtype)
        on = any_on.reshape(-1)
        v = v[on]
        pos = base.reshape(-1)[on]
        regs = L.registers(core)[3]
        if order is ReduceOrder.ORDER_ONLY_INDEX and ix is not None:
            dst.arr[pos] = _index_bits(ix[on], dst.dtype)
        elif outs == 2:
            bits = _index_bits(ix[on], dst.dtype)
            first_v = order is ReduceOrder.ORDER_VALUE_INDEX
            dst.arr[pos] = v if first_v else bits
            dst.arr[pos + 1] = bits if first_v else v
        else:
            dst.arr[pos] = v
        if v.size:
            regs["sum" if kind is ReduceType.SUM else "maxmin"] = (v[-1], None if ix is None else ix[on][-1])
    L.account(op, pl.repeats, pl.repeats * L.REPEAT, fr, ((src, i_src),), ((dst, i_dst),))


def _repeat_call(op: str, kind: ReduceType | None, args: tuple, fr) -> None:
    kind, rest = _split(args, kind)
    dst, src, mask, reps, dst_rep, blk, rep, order = (*rest, ReduceOrder.ORDER_VALUE_INDEX)[:8]
    _run(op, kind, dst, src, mask, reps, dst_rep, blk, rep, order, fr, "repeat")


def ReduceRepeat(*args) -> None:
    """`ReduceRepeat<ReduceType::X, T>(dst, src, mask, repeatTimes, dstRepStride, srcBlkStride,
    srcRepStride[, order])`."""
    _repeat_call("ReduceRepeat", ReduceType.SUM, args, sys._getframe(1))


def WholeReduceSum(*args) -> None:
    _repeat_call("WholeReduceSum", ReduceType.SUM, args, sys._getframe(1))


def WholeReduceMax(*args) -> None:
    _repeat_call("WholeReduceMax", ReduceType.MAX, args, sys._getframe(1))


def WholeReduceMin(*args) -> None:
    _repeat_call("WholeReduceMin", ReduceType.MIN, args, sys._getframe(1))


def ReduceDataBlock(*args) -> None:
    """`ReduceDataBlock<ReduceType::X, T>(dst, src, mask, repeatTimes, dstRepStride,
    srcBlkStride, srcRepStride)`: one result per 32 B block."""
    kind, rest = _split(args, ReduceType.SUM)
    dst, src, mask, reps, dst_rep, blk, rep = rest[:7]
    _run("ReduceDataBlock", kind, dst, src, mask, reps, dst_rep, blk, rep, None, sys._getframe(1), "block")


def _block(op: str, kind: ReduceType, args: tuple, fr) -> None:
    dst, src, reps, mask, dst_rep, blk, rep = L.peel(args)[:7]  # repeatTimes before mask here
    _run(op, kind, dst, src, mask, reps, dst_rep, blk, rep, None, fr, "block")


def BlockReduceSum(*args) -> None:
    _block("BlockReduceSum", ReduceType.SUM, args, sys._getframe(1))


def BlockReduceMax(*args) -> None:
    _block("BlockReduceMax", ReduceType.MAX, args, sys._getframe(1))


def BlockReduceMin(*args) -> None:
    _block("BlockReduceMin", ReduceType.MIN, args, sys._getframe(1))


def ReducePairElem(*args) -> None:
    """`ReducePairElem<ReduceType::SUM, T>(dst, src, mask, repeatTimes, dstRepStride,
    srcBlkStride, srcRepStride)`: adjacent lanes summed, lanes / 2 results per repeat."""
    kind, rest = _split(args, ReduceType.SUM)
    dst, src, mask, reps, dst_rep, blk, rep = rest[:7]
    _run("ReducePairElem", kind, dst, src, mask, reps, dst_rep, blk, rep, None, sys._getframe(1), "pair")


def PairReduceSum(*args) -> None:
    """`PairReduceSum(dst, src, repeatTimes, mask, dstRepStride, srcBlkStride, srcRepStride)`."""
    dst, src, reps, mask, dst_rep, blk, rep = L.peel(args)[:7]
    _run(
        "PairReduceSum",
        ReduceType.SUM,
        dst,
        src,
        mask,
        reps,
        dst_rep,
        blk,
        rep,
        None,
        sys._getframe(1),
        "pair",
    )


def reduce_all(op: str, kind: ReduceType, dst, src, work, mask, reps, rep, cal_index: bool, fr) -> None:
    """Level-0 `ReduceSum/Max/Min(dst, src, work, mask, repeatTimes, srcRepStride[, calIndex])`."""
    L.check_strides(op, fr, srcRepStride=rep)
    pl = L.plan(op, mask, reps, src.dtype.itemsize, fr)
    off, i_src = _gather(src, pl, 1, rep, fr, op)
    need = 2 if cal_index else 1
    if dst.count < need:
        L.oob(op, dst, need, fr, True, pl.repeats)
    core = state.core
    if core.numeric and i_src.size:
        L.settle(core)
        flat = src.arr[off].reshape(1, -1)
        v, ix = _values(flat, pl.active.reshape(1, -1), kind, dst.dtype)
        dst.arr[0] = v[0]
        if cal_index and ix is not None:
            dst.arr[1] = _index_bits(off.reshape(-1)[ix], dst.dtype)[0]
        L.registers(core)[3]["sum" if kind is ReduceType.SUM else "maxmin"] = (v[0], None)
    writes = [(dst, np.arange(need))]
    if work is not None and isinstance(work, LocalTensor):
        writes.append((work, np.arange(min(work.count, max(pl.repeats * 2, 1)))))
    # a tree of halving passes after the element pass, as the level-2 form (vector.py)
    L.account(
        op,
        pl.repeats + max(int(np.ceil(np.log2(max(pl.repeats, 1)))), 0),
        pl.repeats * L.REPEAT,
        fr,
        ((src, i_src),),
        writes,
    )


def GetReduceRepeatSumSpr(*_targs):
    """The last sum a reduction instruction left in the core's register."""
    core = state.core
    core.scalar(core.chip.scalar_value, "GetReduceRepeatSumSpr", sys._getframe(1))
    v = L.registers(core)[3].get("sum")
    return v[0] if v is not None else 0


def GetReduceRepeatMaxMinSpr(*_targs):
    """(value, index) of the last max/min reduction."""
    core = state.core
    core.scalar(core.chip.scalar_value, "GetReduceRepeatMaxMinSpr", sys._getframe(1))
    v = L.registers(core)[3].get("maxmin")
    return v if v is not None else (0, 0)
