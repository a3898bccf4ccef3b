"""Gather family: Gather (per element), Gatherb (per 32 B block), GatherMask (compaction).

- `Gather(dst, src, srcOffset, srcBaseAddr, count)`: dst[i] = the element at byte
  `srcOffset[i] + srcBaseAddr` of src (offsets are uint32 byte offsets).
- `Gatherb(dst, src, offset, repeatTimes, GatherRepeatParams)`: block b of repeat r of dst is the
  32 B block at byte `offset[r * 8 + b]` of src.
- `GatherMask(dst, src0, src1Pattern, reduceMode, mask, GatherMaskParams, rsvdCnt)`: keeps the
  elements whose bit is set (a uint tensor of bits, or a built-in pattern 1..7) and packs them
  into dst. Normal mode (`reduceMode=False`): every repeat covers 256 B and mask is ignored;
  counter mode (`True`): each repeat covers `mask` elements. C++ returns the kept count through
  `rsvdCnt` (a reference): here it is returned, and also stored in `rsvdCnt[0]` when a list is
  passed.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ...npu import state
from ..memory.tensors import LocalTensor
from . import level0 as L


def _bounds(op, t, idx, fr, is_write, reps=1):
    if idx.size and (int(idx.max()) >= t.count or int(idx.min()) < 0):
        L.oob(op, t, int(idx.max()) + 1, fr, is_write, reps)


def Gather(*args) -> None:
    fr = sys._getframe(1)
    dst, src, offset, base, count = L.peel(args)[:5]
    n = int(count)
    _bounds("Gather", dst, np.arange(n), fr, True)
    _bounds("Gather", offset, np.arange(n), fr, False)
    core = state.core
    isz = src.dtype.itemsize
    i_src = np.empty(0, dtype=np.int64)
    if core.numeric:
        L.settle(core)
        byte = offset.arr[:n].astype(np.int64) + int(base)
        if np.any(byte % isz):
            L.fail(f"Gather: offsets must be multiples of sizeof(T) = {isz} B", fr)
        i_src = byte // isz
        _bounds("Gather", src, i_src, fr, False)
        dst.arr[:n] = src.arr[i_src]
    reps = -(-n * dst.dtype.itemsize // L.REPEAT)
    reads = [(offset, np.arange(n))] + ([(src, i_src)] if i_src.size else [])
    L.account("Gather", reps, n * isz, fr, reads, ((dst, np.arange(n)),))


def Gatherb(*args) -> None:
    fr = sys._getframe(1)
    dst, src, offset, reps, params = (*L.peel(args), None)[:5]
    p = L.params_of(L.GatherRepeatParams, params)
    L.check_strides("Gatherb", fr, dstBlkStride=p.dstBlkStride, dstRepStride=p.dstRepStride)
    reps = int(reps)
    if not 0 <= reps <= L.MAX_REPEAT:
        L.fail(f"Gatherb: level-0 repeatTimes {reps} is outside [0, {L.MAX_REPEAT}]", fr)
    nblk = reps * 8
    _bounds("Gatherb", offset, np.arange(nblk), fr, False, reps)
    epb = L.BLOCK // dst.dtype.itemsize
    blocks = (np.arange(reps)[:, None] * p.dstRepStride + np.arange(8)[None, :] * p.dstBlkStride).reshape(-1)
    i_dst = (blocks[:, None] * epb + np.arange(epb)[None, :]).reshape(-1)
    _bounds("Gatherb", dst, i_dst, fr, True, reps)
    core = state.core
    i_src = np.empty(0, dtype=np.int64)
    if core.numeric:
        L.settle(core)
        byte = offset.arr[:nblk].astype(np.int64)
        if np.any(byte % L.BLOCK):
            L.fail("Gatherb: block offsets must be multiples of 32 B", fr)
        i_src = ((byte // src.dtype.itemsize)[:, None] + np.arange(epb)[None, :]).reshape(-1)
        _bounds("Gatherb", src, i_src, fr, False, reps)
        dst.arr[i_dst] = src.arr[i_src]
    reads = [(offset, np.arange(nblk))] + ([(src, i_src)] if i_src.size else [])
    L.account("Gatherb", reps, reps * L.REPEAT, fr, reads, ((dst, i_dst),))


@dataclass
class GatherMaskParams:
    src0BlockStride: int = 1
    repeatTimes: int = 1
    src0RepeatStride: int = 8
    src1RepeatStride: int = 0


_PATTERNS = {
    1: lambda k: k % 2 == 0,
    2: lambda k: k % 2 == 1,
    3: lambda k: k % 4 == 0,
    4: lambda k: k % 4 == 1,
    5: lambda k: k % 4 == 2,
    6: lambda k: k % 4 == 3,
    7: lambda k: np.ones_like(k, dtype=bool),
}


def GatherMask(*args) -> int:
    fr = sys._getframe(1)
    targs, rest = L.template_args(args)
    dst, src0, pattern, reduce_mode, mask, params, cnt = (*rest, None, None)[:7]
    p = L.params_of(GatherMaskParams, params)
    reps = int(p.repeatTimes)
    if not 0 <= reps <= L.MAX_REPEAT:
        L.fail(f"GatherMask: repeatTimes {reps} is outside [0, {L.MAX_REPEAT}]", fr)
    L.check_strides("GatherMask", fr, src0BlockStride=p.src0BlockStride, src0RepeatStride=p.src0RepeatStride)
    isz = src0.dtype.itemsize
    epb = L.BLOCK // isz
    per = int(mask) if reduce_mode else L.REPEAT // isz
    if reduce_mode and not 1 <= per <= 65535:
        L.fail(f"GatherMask: level-0 mask: counter-mode count {per} is outside [1, 65535]", fr)
    k = np.arange(per)
    off = (
        np.arange(reps)[:, None] * p.src0RepeatStride * epb
        + ((k // epb) * p.src0BlockStride * epb + k % epb)[None, :]
    )
    i_src = off.reshape(-1)
    _bounds("GatherMask", src0, i_src, fr, False, reps)
    core = state.core
    kept = 0
    i_dst = np.empty(0, dtype=np.int64)
    reads = [(src0, i_src)]
    if isinstance(pattern, LocalTensor):
        nbits = (reps - 1) * p.src1RepeatStride * 256 + per if reps else 0
        reads.append((pattern, np.arange(-(-nbits // (8 * pattern.dtype.itemsize)))))
        _bounds("GatherMask", pattern, reads[-1][1], fr, False, reps)
    if core.numeric:
        L.settle(core)
        if isinstance(pattern, LocalTensor):
            raw = np.unpackbits(pattern.arr[: pattern.count].view(np.uint8), bitorder="little").astype(bool)
            start = np.arange(reps)[:, None] * p.src1RepeatStride * 256
            keep = raw[start + k[None, :]]
        else:
            keep = np.broadcast_to(_PATTERNS[int(pattern)](k), (reps, per))
        vals = src0.arr[off][keep]
        kept = int(vals.size)
        i_dst = np.arange(kept)
        _bounds("GatherMask", dst, i_dst, fr, True, reps)
        dst.arr[:kept] = vals
    else:
        if isinstance(pattern, LocalTensor):
            kept = reps * per  # shadow data: the upper bound
        else:
            kept = reps * int(np.count_nonzero(_PATTERNS[int(pattern)](k)))
        i_dst = np.arange(min(kept, dst.count))
    if isinstance(cnt, list):
        cnt[:1] = [kept]
    L.account("GatherMask", reps, reps * per * isz, fr, reads, ((dst, i_dst),))
    return kept
