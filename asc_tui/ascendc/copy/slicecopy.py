"""`DataCopy(dst, src, dstSliceInfo[], srcSliceInfo[], dimValue)`: GM ↔ UB copies of slices of
a multi-dimensional tensor (dimension 0 innermost).

`SliceInfo{startIndex, endIndex, stride, burstLen, shapeValue}` per dimension: bursts start at
startIndex, each `burstLen` long (dimension 0: in 32 B blocks; higher dimensions: in elements of
that dimension), separated by `stride` elements, while the burst ends at or before endIndex
(inclusive). Source and destination are walked in the same order and must select the same
number of elements. One DMA of all the bursts on MTE2 (GM→UB) or MTE3 (UB→GM), timed by the
Core's DMA seam (`dma_read_cycles` / `dma_write_cycles`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ...npu.errors import KernelError
from ...npu.numbers.offload import gm_ready
from ...npu.pipes import MTE2, MTE3
from .. import atomic
from ..lineage import gm_written
from ..memory.tensors import GlobalTensor

K_MAX_DIM = 8


@dataclass
class SliceInfo:
    startIndex: int = 0
    endIndex: int = 0
    stride: int = 0
    burstLen: int = 1
    shapeValue: int = 0


def _positions(s: SliceInfo, burst: int) -> list[int]:
    out, p = [], int(s.startIndex)
    step = burst + int(s.stride)
    while p + burst - 1 <= int(s.endIndex) and step > 0:
        out.extend(range(p, p + burst))
        p += step
    if step <= 0 and p + burst - 1 <= int(s.endIndex):
        out.extend(range(p, p + burst))
    return out


def slice_indices(infos, dims: int, isz: int) -> np.ndarray:
    """Flat element indices a slice description selects, outermost dimension first."""
    per_dim, strides, size = [], [], 1
    for d in range(dims):
        s = infos[d]
        burst = int(s.burstLen) * (32 // isz) if d == 0 else int(s.burstLen)
        per_dim.append(_positions(s, burst))
        strides.append(size)
        size *= int(s.shapeValue)
    idx = [
        sum(p * st for p, st in zip(combo[::-1], strides)) for combo in itertools.product(*reversed(per_dim))
    ]
    return np.array(idx, dtype=np.int64)


def copy_slices(core, dst, src, dst_info, src_info, dims: int, fr) -> None:
    isz = src.dtype.itemsize
    i_src = slice_indices(src_info, int(dims), isz)
    i_dst = slice_indices(dst_info, int(dims), isz)
    where = (fr.f_code.co_filename, fr.f_lineno)
    if i_src.size != i_dst.size:
        raise KernelError(
            f"DataCopy slices select {i_src.size} source and {i_dst.size} destination elements", *where
        )
    for t, idx, verb in ((src, i_src, "reads"), (dst, i_dst, "writes")):
        lim = t.limit if type(t) is GlobalTensor else t.count
        if idx.size and int(idx.max()) >= lim:
            msg = f"DataCopy (slices) {verb} element {int(idx.max())} but the tensor holds {lim}"
            if core.san is not None:
                core.san.oob(core, t, 0, int(idx.max()) + 1, verb == "writes", fr, msg)
            raise KernelError(msg, *where)
    if core.numeric:
        if core.lazy is not None:
            core.lazy.settle()
        if type(src) is GlobalTensor:
            gm_ready(src.buffer)
            dst.arr[i_dst] = src.arr[src.start + i_src]
        else:
            gm_ready(dst.buffer)
            gm_written(dst.buffer)
            atomic.store(core, dst.arr, dst.start + i_dst, src.arr[i_src], fr)
    nb = int(i_src.size) * isz
    if type(src) is GlobalTensor:
        core.work(MTE2, core.dma_read_cycles(nb), "DataCopy", nb, fr)
        core.gm_read += nb
    else:
        core.work(MTE3, core.dma_write_cycles(nb) + atomic.extra_cycles(core), "DataCopy", nb, fr)
        core.gm_write += nb
    san = core.san
    if san is not None:
        for t, idx, w in ((src, i_src, False), (dst, i_dst, True)):
            u = np.unique(idx)
            cut = np.flatnonzero(np.diff(u) != 1) + 1
            for a, b in zip(np.concatenate(([0], cut)), np.concatenate((cut, [u.size]))):
                san.access(core, t, int(u[a]), int(b - a), w, fr)
