"""Data movement: DataCopy / DataCopyPad between GM and local memory (MTE2 in, MTE3 out).

Real hardware moves whole 32 B blocks: a `count` form whose byte length is not a multiple of
32 is silently rounded down. We do the same (so results match the hardware) and record a
warning the sanitizer reports.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...npu import state
from ...npu.errors import KernelError, user_line_of
from ...npu.numbers.offload import gm_ready, numbers
from ...npu.pipes import MTE1, MTE2, MTE3, V
from ...npu.records import KIND_WORK
from ...npu.replay.blockindex import BlockIndex
from ...npu.replay.numtrace import COPY
from .. import atomic
from ..corestate import registers
from ..cube.fixcopy import DataCopyCO12DstParams, copy_co1
from ..cube.mmad import Nd2NzParams, copy_nd2nz
from ..int4 import as_bytes
from ..lineage import gm_written
from ..memory.tensors import GlobalTensor, LocalTensor
from .slicecopy import copy_slices

BLOCK = 32


@dataclass
class DataCopyParams:
    """Strided copy in units of 32 B blocks (strides = gap between blocks)."""

    blockCount: int = 1
    blockLen: int = 0
    srcStride: int = 0
    dstStride: int = 0


@dataclass
class DataCopyExtParams:
    """DataCopyPad geometry: blockLen and the GM-side stride in bytes, the UB side in blocks."""

    blockCount: int = 1
    blockLen: int = 0
    srcStride: int = 0
    dstStride: int = 0
    rsv: int = 0


@dataclass
class DataCopyPadExtParams:
    isPad: bool = False
    leftPadding: int = 0
    rightPadding: int = 0
    paddingValue: object = 0


#: `DataCopyPadParams{isPad, leftPadding, rightPadding, paddingValue}`: the padding of a DataCopyPad
#: with `DataCopyParams` geometry (DataCopyPadExtParams' fields, the value as a uint64).
DataCopyPadParams = DataCopyPadExtParams


def _where(fr):
    return user_line_of(fr)


def _local_oob(t: LocalTensor, need: int, what: str, fr):
    from ..memory.queue import name_in_frame

    name = name_in_frame(t, fr) or "local tensor"
    msg = (
        f"{what} touches {need} elements of '{name}' but it holds {t.count} "
        f"({t.count * t.dtype.itemsize} B in {t.mem.upper()})"
    )
    _san_oob(t, 0, need, "writes" in what, fr, msg)
    raise KernelError(msg, *_where(fr))


def _san_oob(t, first: int, count: int, is_write: bool, fr, msg: str) -> None:
    """Let the sanitizer record a bounds violation (tensor, offset, size) before the guard."""
    core = state.core
    if core is not None and core.san is not None:
        core.san.oob(core, t, first, count, is_write, fr, msg)


def _gm_oob(g: GlobalTensor, first: int, last: int, what: str, fr):
    cap = g.buffer.count * g.buffer.dtype.itemsize // g.dtype.itemsize
    msg = (
        f"{what} outside the GlobalTensor '{g.name}': elements [{g.start + first}, "
        f"{g.start + last}) but the tensor covers "
        f"[{g.base}, {g.base + min(g.base_size, cap - g.base)})"
    )
    _san_oob(g, first, last - first, "writes" in what, fr, msg)
    raise KernelError(msg, *_where(fr), hint="check the offset and length of the last (tail) tile")


def _rounded(core, nbytes: int, isz: int, fr, what: str) -> int:
    core.run.warn(
        "misaligned-length",
        f"{what} of {nbytes} B is not a multiple of 32 B: hardware copies only "
        f"{nbytes // BLOCK * BLOCK} B (use DataCopyPad for the tail)",
        fr,
    )
    return nbytes // BLOCK * BLOCK // isz


def DataCopy(dst, src, count_or_params, *slices) -> None:
    """DataCopy(dst, src, count), DataCopy(dst, src, DataCopyParams) or
    DataCopy(dst, src, dstSliceInfo, srcSliceInfo, dimValue) (slicecopy.py)."""
    core = state.core
    fr = sys._getframe(1)
    if type(count_or_params) is not int:
        if slices:
            return copy_slices(core, dst, src, count_or_params, slices[0], slices[1], fr)
        # every cube kernel's GM→L1, so asked first; int4b_t moves as element pairs (bytes)
        if isinstance(count_or_params, Nd2NzParams):
            return copy_nd2nz(core, as_bytes(dst), as_bytes(src), count_or_params, fr)
        if isinstance(count_or_params, DataCopyParams):
            return _copy_params(core, dst, src, count_or_params, fr)
        if hasattr(count_or_params, "__index__"):
            count_or_params = int(count_or_params)
        else:
            return _copy_other(core, dst, src, count_or_params, fr)
    n = count_or_params
    if type(src) is GlobalTensor:
        gm, local, read = src, dst, True
    elif type(dst) is GlobalTensor:
        gm, local, read = dst, src, False
    else:
        return _copy_local(core, dst, src, n, fr)
    isz = gm.dtype.itemsize
    if n > gm.limit or n < 0 or gm.limit < 0:
        _gm_oob(gm, 0, n, "DataCopy reads" if read else "DataCopy writes", fr)
    if n > local.count:
        _local_oob(local, n, "DataCopy writes" if read else "DataCopy reads", fr)
    nb = n * isz
    if nb & 31:
        n = _rounded(core, nb, isz, fr, "DataCopy GM→local" if read else "DataCopy local→GM")
        nb = n * isz
    if core.numeric:
        if gm.buffer.busy:  # offload.gm_ready, inlined: a pending Fixpipe writes it
            numbers.drain()
        if not read:
            gm_written(gm.buffer)
        if core.lazy is not None:  # L1/L0 regions kept as lineage (lineage.py)
            core.lazy.settle()
        s = gm.start
        if type(s) is BlockIndex:  # a template's GM offset: its own value, unpinned (the trace
            s = s.v  # keeps every block's: npu/replay/numtrace.py)
        if read:
            dst.arr[:n] = src.arr[s : s + n]
        else:
            atomic.store(core, dst.arr, slice(s, s + n), src.arr[:n], fr)
        tr = core.trace
        # a template of block replay traces its numbers (npu/replay/numtrace.py); an atomic GM write
        # combines with what GM holds, which no entry says: its blocks then run step by step
        if tr is not None:
            if read or atomic.atomic_of(core) is None:
                tr.add(len(core.rec), COPY, None, None, n, dst, src)
            else:
                tr.bad = True
    if read:
        pipe = MTE2
        core.gm_read += nb
    else:
        pipe = MTE3
        core.gm_write += nb
    # core.work(pipe, ...) inlined: this is the hottest path of every vector kernel
    ts = core.ts = core.ts + core.issue
    tp = core.tp
    t = tp[pipe]
    start = t if t > ts else ts
    end = tp[pipe] = start + (
        core.dma_read_cycles(nb) if read else core.dma_write_cycles(nb, atomic.extra_cycles(core))
    )
    rec = core.rec
    core.last[pipe] = len(rec)
    rec.append((pipe, start, end, "DataCopy", fr.f_code.co_filename, fr.f_lineno, nb, KIND_WORK, -1))
    san = core.san
    if san is not None:
        san.access(core, src, 0, n, False, fr)
        san.access(core, dst, 0, n, True, fr)


def _copy_local(core, dst: LocalTensor, src: LocalTensor, n: int, fr) -> None:
    if n > src.count:
        _local_oob(src, n, "DataCopy reads", fr)
    if n > dst.count:
        _local_oob(dst, n, "DataCopy writes", fr)
    nb = n * src.dtype.itemsize
    if core.numeric:
        if core.lazy is not None:
            core.lazy.settle()
        dst.arr[:n] = src.arr[:n]
        if core.trace is not None:
            core.trace.add(len(core.rec), COPY, None, None, n, dst, src)
    core.work(V, _local_copy_cycles(core, nb), "DataCopy", nb, fr)
    san = core.san
    if san is not None:
        san.access(core, src, 0, n, False, fr)
        san.access(core, dst, 0, n, True, fr)


def _local_copy_cycles(core, nbytes: int) -> float:
    """A local→local copy runs on the vector unit: startup + repeats × its cycles per repeat."""
    chip = core.chip
    reps = -(-nbytes // chip.repeat_bytes)
    return chip.vec_startup + reps * chip.vec_cycles_per_repeat("DataCopy")


def _copy_other(core, dst, src, params, fr) -> None:
    if isinstance(params, DataCopyCO12DstParams):
        return copy_co1(core, dst, src, params, fr)
    raise KernelError(
        f"DataCopy does not understand {type(params).__name__} here "
        "(expected a count, DataCopyParams, Nd2NzParams or DataCopyCO12DstParams)",
        *_where(fr),
    )


def _bytes_of(t) -> np.ndarray | None:
    if t.arr is None:
        return None
    if type(t) is GlobalTensor:
        gm_ready(t.buffer)
        return t.arr.view(np.uint8)
    return t.arr[: t.count].view(np.uint8)


def _base_offset(t) -> int:
    """Byte offset of the tensor's first element within `_bytes_of(t)`."""
    return t.start * t.dtype.itemsize if type(t) is GlobalTensor else 0


def _extent_bytes(t) -> int:
    if type(t) is GlobalTensor:
        cap = t.buffer.count * t.buffer.dtype.itemsize
        return min(t.size * t.dtype.itemsize, cap - t.start * t.dtype.itemsize)
    return t.count * t.dtype.itemsize


def _blocks(b: np.ndarray, off: int, count: int, blen: int, step: int) -> np.ndarray:
    """`count` blocks of `blen` bytes every `step` bytes from `off`, as a (count, blen) view.
    Slices where they can be (one block, or blocks at least `blen` apart inside the buffer):
    numpy's as_strided costs ~10 µs a call, which a loop of small DataCopyPads pays millions
    of times."""
    if count == 1:
        return b[off : off + blen].reshape(1, blen)
    if step >= blen and off + count * step <= len(b):
        return b[off : off + count * step].reshape(count, step)[:, :blen]
    return as_strided(b[off:], shape=(count, blen), strides=(step, 1))


def _strided_copy(core, dst, src, count: int, blen: int, sstep: int, dstep: int, fr, what: str) -> None:
    """Copy `count` blocks of `blen` bytes; blocks start every sstep / dstep bytes."""
    if count <= 0 or blen <= 0:
        return
    s_need = (count - 1) * sstep + blen
    d_need = (count - 1) * dstep + blen
    for t, need, verb in ((src, s_need, "reads"), (dst, d_need, "writes")):
        if need > _extent_bytes(t):
            isz = t.dtype.itemsize
            if type(t) is GlobalTensor:
                _gm_oob(t, 0, -(-need // isz), f"{what} {verb}", fr)
            _local_oob(t, -(-need // isz), f"{what} {verb}", fr)
    if core.numeric:
        if core.lazy is not None:  # L1/L0 regions kept as lineage (lineage.py)
            core.lazy.settle()
        if type(dst) is GlobalTensor:
            gm_written(dst.buffer)
        sb, db = _bytes_of(src), _bytes_of(dst)
        so, do = _base_offset(src), _base_offset(dst)
        sv = as_strided(sb[so:], shape=(count, blen), strides=(sstep, 1), writeable=False)
        dv = as_strided(db[do:], shape=(count, blen), strides=(dstep, 1))
        if type(dst) is GlobalTensor:
            atomic.store_bytes(core, dv, sv, dst.dtype, fr)
        else:
            dv[...] = sv


def _account(
    core,
    dst,
    src,
    nb: int,
    fr,
    op: str,
    blocks: int = 1,
    src_ext: int | None = None,
    dst_ext: int | None = None,
) -> None:
    """Time the copy; the sanitizer sees each side's extent in bytes (strided: first to last)."""
    if type(src) is GlobalTensor:
        core.work(MTE2, core.dma_read_cycles(nb), op, nb, fr)
        core.gm_read += nb
    elif type(dst) is GlobalTensor:
        core.work(MTE3, core.dma_write_cycles(nb, atomic.extra_cycles(core)), op, nb, fr)
        core.gm_write += nb
    elif src.mem == "l1" and dst.mem in _L1_OUT_UNIT:  # bias table / fixpipe buffer: MTE1
        cfg = core.chip.cube_timing
        core.work(MTE1, cfg["mte1_lat"] + nb / cfg["l0b_bpc"], op, nb, fr)
    else:
        core.work(V, _local_copy_cycles(core, nb), op, nb, fr)
    san = core.san
    if san is not None:
        isz_s, isz_d = src.dtype.itemsize, dst.dtype.itemsize
        san.access(core, src, 0, -(-(src_ext or nb) // isz_s), False, fr, span=True)
        san.access(core, dst, 0, -(-(dst_ext or nb) // isz_d), True, fr, span=True)


#: DataCopyParams block unit (bytes) of the L1 → bias table (C1 → C2) and L1 → fixpipe buffer
#: (C1 → C2PIPE2GM) copies; every other path counts 32 B blocks.
_L1_OUT_UNIT = {"bt": 64, "fb": 128}


def _copy_params(core, dst, src, p: DataCopyParams, fr) -> None:
    unit = BLOCK
    if type(src) is LocalTensor and type(dst) is LocalTensor and src.mem == "l1":
        unit = _L1_OUT_UNIT.get(dst.mem, BLOCK)
    blen = p.blockLen * unit
    _strided_copy(
        core,
        dst,
        src,
        p.blockCount,
        blen,
        (p.blockLen + p.srcStride) * unit,
        (p.blockLen + p.dstStride) * unit,
        fr,
        "DataCopy",
    )
    n = p.blockCount
    _account(
        core,
        dst,
        src,
        n * blen,
        fr,
        "DataCopy",
        n,
        (n - 1) * (p.blockLen + p.srcStride) * unit + blen if n > 0 else 0,
        (n - 1) * (p.blockLen + p.dstStride) * unit + blen if n > 0 else 0,
    )


def DataCopyPad(dst, src, params: DataCopyExtParams, pad: DataCopyPadExtParams | None = None):
    """Byte-exact copy with per-block padding to 32 B in local memory."""
    core = state.core
    fr = sys._getframe(1)
    blen = int(params.blockLen)
    if type(src) is GlobalTensor:
        isz = dst.dtype.itemsize
        left = int(pad.leftPadding) if pad and pad.isPad else 0
        right = int(pad.rightPadding) if pad and pad.isPad else 0
        padded = -(-(blen + (left + right) * isz) // BLOCK) * BLOCK
        dstep = padded + int(params.dstStride) * BLOCK
        sstep = blen + int(params.srcStride)
        need = (params.blockCount - 1) * dstep + padded
        if need > _extent_bytes(dst):
            _local_oob(dst, -(-need // isz), "DataCopyPad writes", fr)
        # isPad fills with paddingValue; without it the tail of each 32 B slot gets the value
        # SetPadValue left in the core's register (level0.registers), if any
        fill = pad.paddingValue if pad is not None and pad.isPad else registers(core)[3].get("pad")
        if core.numeric and fill is not None:
            if core.lazy is not None:
                core.lazy.settle()
            typed = dst.arr
            step_e = dstep // isz
            for i in range(params.blockCount):
                typed[i * step_e : i * step_e + padded // isz] = fill
        _strided_copy_into(core, dst, src, params.blockCount, blen, sstep, dstep, left * isz, fr)
        d_ext = need
    else:
        isz = src.dtype.itemsize
        sstep = -(-blen // BLOCK) * BLOCK + int(params.srcStride) * BLOCK
        dstep = blen + int(params.dstStride)
        _strided_copy(core, dst, src, params.blockCount, blen, sstep, dstep, fr, "DataCopyPad")
        d_ext = (params.blockCount - 1) * dstep + blen
    s_ext = (params.blockCount - 1) * sstep + blen
    _account(
        core,
        dst,
        src,
        params.blockCount * blen,
        fr,
        "DataCopyPad",
        params.blockCount,
        max(s_ext, 0),
        max(d_ext, 0),
    )


def _strided_copy_into(core, dst, src, count, blen, sstep, dstep, dst_skip, fr):
    """GM→local DataCopyPad: each block lands `dst_skip` bytes into its padded slot."""
    if count <= 0 or blen <= 0:
        return
    s_need = (count - 1) * sstep + blen
    if s_need > _extent_bytes(src):
        _gm_oob(src, 0, -(-s_need // src.dtype.itemsize), "DataCopyPad reads", fr)
    if core.numeric:
        if core.lazy is not None:  # L1/L0 regions kept as lineage (lineage.py)
            core.lazy.settle()
        if type(dst) is GlobalTensor:
            gm_written(dst.buffer)
        sb, db = _bytes_of(src), _bytes_of(dst)
        so = _base_offset(src)
        _blocks(db, dst_skip, count, blen, dstep)[...] = _blocks(sb, so, count, blen, sstep)
