"""More element-wise vector instructions, each in its level-2 `(…, count)` and level-0
`(…, mask, repeatTimes, params)` forms: LeakyRelu, AddRelu, SubRelu, Ors, Ands, ShiftLeft,
ShiftRight, CreateVecIndex, Brcb, Copy (transposes: `transpose.py`).

Built with `basic.py`'s factories so that they record, time and sanitize exactly as Add or
Adds do. Spelling rules for template arguments: `level0.py`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ...npu import state
from . import level0 as L
from .basic import binary, scalar_op
from .l0 import unary


def _leaky(a, alpha, out):
    np.copyto(out, np.where(a >= 0, a, a * alpha).astype(out.dtype))


def _add_relu(a, b, out):
    np.add(a, b, out=out)
    np.maximum(out, out.dtype.type(0), out=out)


def _sub_relu(a, b, out):
    np.subtract(a, b, out=out)
    np.maximum(out, out.dtype.type(0), out=out)


def _shift_left(a, n, out):
    np.left_shift(a, a.dtype.type(n), out=out)


def _shift_right(a, n, out):
    np.right_shift(a, a.dtype.type(n), out=out)


LeakyRelu = scalar_op("LeakyRelu", _leaky)
AddRelu = binary("AddRelu", _add_relu)
SubRelu = binary("SubRelu", _sub_relu)
Ors = scalar_op("Ors", np.bitwise_or)
Ands = scalar_op("Ands", np.bitwise_and)
ShiftLeft = scalar_op("ShiftLeft", _shift_left)
ShiftRight = scalar_op("ShiftRight", _shift_right)


def CreateVecIndex(*args) -> None:
    """`CreateVecIndex(dst, firstValue, count)`: dst[i] = firstValue + i; level-0:
    `(dst, firstValue, mask, repeatTimes, dstBlkStride, dstRepStride)` (lane i of repeat r
    gets firstValue + r * lanes + i)."""
    fr = sys._getframe(1)
    rest = L.peel(args)
    core = state.core
    if len(rest) == 3:
        dst, first, count = rest
        n = int(count)
        if n > dst.count or n < 0:
            L.oob("CreateVecIndex", dst, n, fr, True, 1)
        idx = np.arange(n)
        reps = -(-n * dst.dtype.itemsize // L.REPEAT)
        vals = idx
    else:
        dst, first, mask, reps, blk, rep = (*rest, 1, 8)[:6]
        L.check_strides("CreateVecIndex", fr, dstBlkStride=blk, dstRepStride=rep)
        pl = L.plan("CreateVecIndex", mask, reps, dst.dtype.itemsize, fr)
        idx = L.indices("CreateVecIndex", dst, pl, blk, rep, fr, True)
        reps = pl.repeats
        vals = np.arange(pl.repeats * pl.lanes).reshape(pl.repeats, pl.lanes)[pl.active]
    if core.numeric:
        L.settle(core)
        dst.arr[idx] = (np.asarray(vals, dtype=np.float64) + float(first)).astype(dst.dtype)
    L.account("CreateVecIndex", reps, reps * L.REPEAT, fr, (), ((dst, idx),))


@dataclass
class BrcbRepeatParams:
    dstBlkStride: int = 1
    dstRepStride: int = 8


def Brcb(*args) -> None:
    """`Brcb(dst, src, repeatTimes, BrcbRepeatParams)`: each repeat takes 8 elements of src and
    fills one 32 B block of dst with each (block b of repeat r at r * dstRepStride + b *
    dstBlkStride blocks)."""
    fr = sys._getframe(1)
    dst, src, reps, params = (*L.peel(args), None)[:4]
    p = L.params_of(BrcbRepeatParams, params)
    L.check_strides("Brcb", fr, dstBlkStride=p.dstBlkStride, dstRepStride=p.dstRepStride)
    reps = int(reps)
    if not 0 <= reps <= L.MAX_REPEAT:
        L.fail(f"Brcb: level-0 repeatTimes {reps} is outside [0, {L.MAX_REPEAT}]", fr)
    epb = L.BLOCK // dst.dtype.itemsize
    i_src = np.arange(reps * 8)
    if reps * 8 > src.count:
        L.oob("Brcb", src, reps * 8, fr, False, reps)
    blocks = (np.arange(reps)[:, None] * p.dstRepStride + np.arange(8)[None, :] * p.dstBlkStride).reshape(-1)
    i_dst = (blocks[:, None] * epb + np.arange(epb)[None, :]).reshape(-1)
    if i_dst.size and int(i_dst.max()) >= dst.count:
        L.oob("Brcb", dst, int(i_dst.max()) + 1, fr, True, reps)
    core = state.core
    if core.numeric:
        L.settle(core)
        dst.arr[i_dst] = np.repeat(src.arr[i_src], epb).astype(dst.dtype)
    L.account("Brcb", reps, reps * L.REPEAT, fr, ((src, i_src),), ((dst, i_dst),))


@dataclass
class CopyRepeatParams:
    dstStride: int = 1
    srcStride: int = 1
    dstRepeatSize: int = 8
    srcRepeatSize: int = 8


def Copy(*args) -> None:
    """`Copy(dst, src, mask, repeatTimes, CopyRepeatParams{dstStride, srcStride, dstRepeatSize,
    srcRepeatSize})`: a level-0 UB→UB move (block strides and repeat sizes in 32 B blocks)."""
    fr = sys._getframe(1)
    dst, src, mask, reps, params = (*L.peel(args), None)[:5]
    p = L.params_of(CopyRepeatParams, params)
    u = L.UnaryRepeatParams(p.dstStride, p.srcStride, p.dstRepeatSize, p.srcRepeatSize)
    unary("Copy", lambda a: a, dst, src, mask, reps, u, fr)
