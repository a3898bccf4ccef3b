"""Transposes: the 16 x 16 `Transpose(dst, src)`, the enhanced `Transpose(dst, src, tmp,
TransposeParamsExt)` (NCHW ↔ NHWC) and `TransDataTo5HD` (16 blocks in, 16 blocks out).

`TransDataTo5HD(dstList, srcList, TransDataTo5HDParams)` takes two lists of 16 UB addresses (the
`GetPhyAddr()` of local tensors, or the tensors themselves). For 2-byte types, each repeat reads
one 32 B block at every source address — a 16 x 16 matrix whose row i comes from srcList[i] — and
writes its column j to dstList[j]. Repeat r moves every address by r * srcRepStride (dst:
dstRepStride) blocks; with repeatTimes 1 the strides are ignored, as on hardware.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import Enum

import numpy as np

from ...npu import state
from ...npu.positions import TPosition
from ..memory.tensors import LocalTensor
from . import level0 as L


def _transpose16(dst, src, fr) -> None:
    if src.dtype.itemsize != 2 or dst.dtype.itemsize != 2:
        L.fail("Transpose(dst, src) works on 2-byte elements (half, int16, uint16)", fr)
    for t, w in ((src, False), (dst, True)):
        if t.count < 256:
            L.oob("Transpose", t, 256, fr, w, 2)
    core = state.core
    if core.numeric:
        L.settle(core)
        dst.arr[:256] = np.array(src.arr[:256]).reshape(16, 16).T.reshape(-1)
    whole = np.arange(256)
    L.account("Transpose", 2, 512, fr, ((src, whole),), ((dst, whole),))


class TransposeType(Enum):
    TRANSPOSE_TYPE_NONE = 0
    TRANSPOSE_NZ2ND_0213 = 1
    TRANSPOSE_NZ2NZ_0213 = 2
    TRANSPOSE_NZ2NZ_012_WITH_N = 3
    TRANSPOSE_NZ2ND_012_WITH_N = 4
    TRANSPOSE_NZ2ND_012_WITHOUT_N = 5
    TRANSPOSE_NZ2NZ_012_WITHOUT_N = 6
    TRANSPOSE_ND2ND_ONLY = 7
    TRANSPOSE_ND_UB_GM = 8
    TRANSPOSE_GRAD_ND_UB_GM = 9
    TRANSPOSE_ND2ND_B16 = 10
    TRANSPOSE_NCHW2NHWC = 11
    TRANSPOSE_NHWC2NCHW = 12


@dataclass
class TransposeParamsExt:
    nSize: int = 0
    cSize: int = 0
    hSize: int = 0
    wSize: int = 0
    transposeType: TransposeType = TransposeType.TRANSPOSE_NCHW2NHWC


_AXES = {
    TransposeType.TRANSPOSE_NCHW2NHWC: ((0, 2, 3, 1), "nchw"),
    TransposeType.TRANSPOSE_NHWC2NCHW: ((0, 3, 1, 2), "nhwc"),
}


def Transpose(*args) -> None:
    """`Transpose(dst, src)` (16 x 16) or `Transpose(dst, src, sharedTmpBuffer, params)`."""
    fr = sys._getframe(1)
    rest = L.peel(args)
    if len(rest) == 2:
        return _transpose16(rest[0], rest[1], fr)
    dst, src, tmp, p = rest[:4]
    kind = _AXES.get(p.transposeType)
    if kind is None:
        L.fail(f"Transpose: {p.transposeType.name} is not emulated (NCHW2NHWC and NHWC2NCHW are)", fr)
    n, c, h, w = int(p.nSize), int(p.cSize), int(p.hSize), int(p.wSize)
    total = n * c * h * w
    for t, wr in ((src, False), (dst, True)):
        if total > t.count:
            L.oob("Transpose", t, total, fr, wr, 1)
    core = state.core
    if core.numeric:
        L.settle(core)
        shape = (n, c, h, w) if kind[1] == "nchw" else (n, h, w, c)
        dst.arr[:total] = np.array(src.arr[:total]).reshape(shape).transpose(kind[0]).reshape(-1)
    whole = np.arange(total)
    reps = max(-(-total * src.dtype.itemsize // L.REPEAT), 1)
    writes = [(dst, whole)]
    if isinstance(tmp, LocalTensor) and tmp.count:
        writes.append((tmp, np.arange(min(tmp.count, total * src.dtype.itemsize // tmp.dtype.itemsize))))
    L.account("Transpose", reps * 2, total * src.dtype.itemsize, fr, ((src, whole),), writes)


@dataclass
class TransDataTo5HDParams:
    dstHighHalf: bool = False
    srcHighHalf: bool = False
    repeatTimes: int = 1
    dstRepStride: int = 0
    srcRepStride: int = 0


def _address(a) -> int:
    return int(a.GetPhyAddr()) if isinstance(a, LocalTensor) else int(a)


def TransDataTo5HD(*args) -> None:
    fr = sys._getframe(1)
    targs, rest = L.template_args(args)
    if rest:  # lists of tensors
        dsts, srcs, p = rest[:3]
    else:  # lists of addresses, after a leading dtype
        dsts, srcs, p = (list(a) if isinstance(a, (list, tuple, np.ndarray)) else a for a in targs[-3:])
    dtype = next((a for a in targs if isinstance(a, np.dtype)), None)
    if dtype is None and srcs and isinstance(srcs[0], LocalTensor):
        dtype = srcs[0].dtype
    dtype = np.dtype(dtype or np.float16)
    if dtype.itemsize != 2:
        L.fail("TransDataTo5HD: only 2-byte element types are emulated", fr)
    if len(dsts) != 16 or len(srcs) != 16:
        L.fail("TransDataTo5HD: dstList and srcList hold 16 addresses each", fr)
    reps = int(p.repeatTimes)
    if not 0 <= reps <= L.MAX_REPEAT:
        L.fail(f"TransDataTo5HD: level-0 repeatTimes {reps} is outside [0, {L.MAX_REPEAT}]", fr)
    d_step = int(p.dstRepStride) * L.BLOCK if reps > 1 else 0
    s_step = int(p.srcRepStride) * L.BLOCK if reps > 1 else 0
    core = state.core
    cap = core.chip.usable.get("ub", 0)
    s_addr = np.array([_address(a) for a in srcs])[None, :] + np.arange(reps)[:, None] * s_step
    d_addr = np.array([_address(a) for a in dsts])[None, :] + np.arange(reps)[:, None] * d_step
    for addr, wr in ((s_addr, False), (d_addr, True)):
        if addr.size and (int(addr.max()) + L.BLOCK > cap or int(addr.min()) < 0 or (addr % L.BLOCK).any()):
            msg = (
                f"TransDataTo5HD {'writes' if wr else 'reads'} a 32 B block at UB+{int(addr.max())}: "
                f"addresses must be 32 B aligned and inside UB ({cap} B)"
            )
            L.fail(msg, fr)
    if core.numeric:
        L.settle(core)
        ub = core.memory("ub")
        for r in range(reps):
            m = np.stack([ub[a : a + L.BLOCK].view(dtype) for a in s_addr[r]])
            for j, a in enumerate(d_addr[r]):
                ub[a : a + L.BLOCK] = np.ascontiguousarray(m[:, j]).view(np.uint8)
    san = core.san
    L.account("TransDataTo5HD", max(reps, 1) * 2, reps * 16 * L.BLOCK, fr, (), ())
    if san is not None:
        for addr, wr in ((s_addr, False), (d_addr, True)):
            for a in addr.reshape(-1):
                view = LocalTensor(TPosition.VECCALC, "ub", dtype, int(a), 16, None)
                san.access(core, view, 0, 16, wr, fr)
