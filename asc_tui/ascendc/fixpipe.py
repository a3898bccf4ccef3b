"""Fixpipe: L0C → GM (or L1) on PIPE_FIX, with NZ→ND, quantisation (fp32→fp16/bf16) and ReLU.

The template configuration picks the output layout: `CFG_ROW_MAJOR` (the default) converts the
NZ tile to ND rows of dstStride elements; `CFG_NZ` keeps it NZ: each column block of 16 (8 for a
channel-split fp32 output) lands as mSize rows of that width, blocks dstStride × 32 B apart.

Cost (cycles): fixpipe latency + max(L0C bytes / fixpipe bytes per cycle, GM bytes / the core's
GM write bandwidth). Reading L0C first completes any Mmads still pending on it (see mmad_numbers.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import Enum
from functools import partial

import numpy as np

from ..npu import state
from ..npu.offload import numbers
from ..npu.pipes import FIX
from .cube import _fail, _gm_extent, _need_mem
from .dtypes import bfloat16, dtype_name, float32, half, int32
from .fractal import strided
from .lineage import gm_written
from .mmad_numbers import flush_cube
from .tensors import GlobalTensor, LocalTensor


class CO2Layout(Enum):
    """The layout Fixpipe writes: NZ fractals, ND rows, or ND columns (dav-3510 only)."""

    NZ = 0
    ROW_MAJOR = 1
    COLUMN_MAJOR = 2


@dataclass(frozen=True)
class FixpipeConfig:
    """Fixpipe's template configuration (`Fixpipe<T, U, CFG_NZ>`)."""

    format: CO2Layout = CO2Layout.ROW_MAJOR


CFG_ROW_MAJOR = FixpipeConfig(CO2Layout.ROW_MAJOR)
CFG_NZ = FixpipeConfig(CO2Layout.NZ)
CFG_COLUMN_MAJOR = FixpipeConfig(CO2Layout.COLUMN_MAJOR)


class QuantMode_t(Enum):  # noqa: N801 - Ascend C's spelling
    """Fixpipe's conversion of the L0C result on its way out."""

    NoQuant = "none"
    F322F16 = "f32_f16"
    F322BF16 = "f32_bf16"
    DEQF16 = "deq_f16"  # int32 × deqScalar → half


_QUANT_OUT = {
    QuantMode_t.F322F16: (float32, half),
    QuantMode_t.F322BF16: (float32, bfloat16),
    QuantMode_t.DEQF16: (int32, half),
}


@dataclass
class FixpipeParamsV220:
    """L0C (NZ) → ND: nSize columns × mSize rows; srcStride = m stride of the NZ tile (the
    padded row count, multiple of 16); dstStride = destination row stride in elements."""

    nSize: int = 0
    mSize: int = 0
    srcStride: int = 0
    dstStride: int = 0
    quantPre: QuantMode_t = QuantMode_t.NoQuant
    deqScalar: float = 1.0
    ndNum: int = 1
    srcNdStride: int = 0
    dstNdStride: int = 0
    reluEn: bool = False
    unitFlag: int = 0
    isChannelSplit: bool = False


FixpipeParams = FixpipeParamsV220


def Fixpipe(*args) -> None:
    """Fixpipe(dst_GM_or_L1, src_L0C, FixpipeParamsV220) on PIPE_FIX (NZ→ND or NZ, quantise,
    ReLU); C++ template arguments lead (`Fixpipe(float, float, CFG_NZ, dst, src, params)`)."""
    core = state.core
    if core.run.l2_record:
        return  # the L2 pre-pass only counts GM reads (npu/l2.py); this moves none
    fr = sys._getframe(1)
    config, dst, src, params = _operands(args, fr)
    if not isinstance(params, FixpipeParamsV220):
        _fail(f"Fixpipe expects FixpipeParamsV220, got {type(params).__name__}", fr)
    _need_mem(src, ("l0c",), "Fixpipe", "src", fr)
    n, m = int(params.nSize), int(params.mSize)
    sstride, dstride = int(params.srcStride), int(params.dstStride)
    if n <= 0 or m <= 0:
        _fail(f"FixpipeParams(nSize={n}, mSize={m}): both must be positive", fr)
    if sstride < m or sstride % 16:
        _fail(
            f"FixpipeParams.srcStride={sstride}: must be a multiple of 16 and at least "
            f"mSize={m} (it is the padded row count of the L0C tile)",
            fr,
        )
    q = params.quantPre
    _check_types(q, src, dst, fr)
    isz = dst.dtype.itemsize
    nz = config.format is CO2Layout.NZ
    if nz:
        c0 = _nz_width(params, dst, n, fr)
        if dstride * 32 < m * c0 * isz:
            _fail(
                f"FixpipeParams.dstStride={dstride} (x 32 B) is smaller than one NZ column block "
                f"of mSize={m} rows x {c0} {dtype_name(dst.dtype)} ({m * c0 * isz} B): blocks "
                "would overlap",
                fr,
                hint="with CFG_NZ, dstStride is the distance between column blocks in 32 B units",
            )
        d_need = (n // c0 - 1) * dstride * 32 // isz + m * c0
    else:
        if config.format is not CO2Layout.ROW_MAJOR:
            _fail(f"Fixpipe with {config.format.name} output exists only on dav-3510", fr)
        if dstride < n:
            _fail(
                f"FixpipeParams.dstStride={dstride} is smaller than nSize={n}: output rows would overlap", fr
            )
        d_need = (m - 1) * dstride + n
    n1 = -(-n // 16)
    need_c = n1 * sstride * 16
    if need_c > src.count:
        _fail(
            f"Fixpipe reads {need_c * 4} B of L0C (nSize={n}, srcStride={sstride}) but the "
            f"tensor holds {src.count * 4} B",
            fr,
        )
    to_gm = type(dst) is GlobalTensor
    if to_gm:
        if d_need > _gm_extent(dst):
            _fail(
                f"Fixpipe writes {d_need} elements of GlobalTensor '{dst.name}' from element "
                f"{dst.start}, but only {_gm_extent(dst)} are there",
                fr,
                hint="check mSize/nSize of the last (tail) tile",
            )
    elif not isinstance(dst, LocalTensor) or dst.mem not in ("l1", "ub"):
        _fail("Fixpipe writes to GM or L1", fr)
    elif d_need > dst.count:
        _fail(f"Fixpipe writes {d_need} elements but the local tensor holds {dst.count}", fr)
    if core.numeric:
        flush_cube(core, wait=False)
        if to_gm:
            gm_written(dst.buffer)
        elif core.lazy is not None:
            core.lazy.settle()
        d0 = dst.start if to_gm else 0
        if nz:
            views = _nz_views(dst.arr, d0, src.arr, m, n, c0, sstride, dstride * 32, isz)
        else:
            sv = strided(src.arr, 0, (m, n1, 16), (64, sstride * 64, 4))
            if n == n1 * 16:  # whole fractal columns: NZ → ND without a reshape's copy
                dv = strided(dst.arr, d0, (m, n1, 16), (dstride * isz, 16 * isz, isz))
            else:
                dv = strided(dst.arr, d0, (m, n), (dstride * isz, isz))
            views = [(dv, sv)]
        job = partial(_convert, views, q, float(params.deqScalar), bool(params.reluEn))
        if to_gm:  # on the numbers thread, after the tile's Mmads (npu/offload.py)
            numbers.submit(job, dst.buffer, lane=core)
        else:
            numbers.drain()
            job()
    cfg = core.chip.cube_timing
    src_bytes, out_bytes = m * n * src.dtype.itemsize, m * n * isz
    cycles = src_bytes / cfg["fix_bpc"]
    if to_gm:
        wr = core.gm_write_cycles(out_bytes)
        cycles = wr if wr > cycles else cycles
        core.gm_write += out_bytes
    core.work(FIX, cfg["fix_lat"] + cycles, "Fixpipe", out_bytes, fr)
    san = core.san
    if san is not None:
        san.access(core, src, 0, need_c, False, fr, span=True)
        san.access(core, dst, 0, d_need, True, fr, span=True)


def _operands(args: tuple, fr) -> tuple:
    """(config, dst, src, params) from `Fixpipe`'s arguments: leading template arguments (the
    element types and a FixpipeConfig), then dst, src and the parameters."""
    i = 0
    while i < len(args) and not isinstance(args[i], (LocalTensor, GlobalTensor)):
        i += 1
    config = next((a for a in args[:i] if isinstance(a, FixpipeConfig)), CFG_ROW_MAJOR)
    rest = args[i:]
    if len(rest) == 4:
        _fail(
            "Fixpipe with a quantisation tensor (cbufWorkspace) is not modelled yet",
            fr,
            hint="use a scalar quantPre mode",
        )
    if len(rest) != 3:
        _fail(f"Fixpipe takes (dst, src, params), got {len(rest)} operands", fr)
    return (config, *rest)


def _check_types(q: QuantMode_t, src, dst, fr) -> None:
    if q is QuantMode_t.NoQuant:
        if dst.dtype != src.dtype:
            _fail(
                f"Fixpipe from {dtype_name(src.dtype)} to {dtype_name(dst.dtype)} needs a "
                f"conversion: set quantPre (e.g. QuantMode_t.F322F16)",
                fr,
            )
        return
    want = _QUANT_OUT[q]
    if (src.dtype, dst.dtype) != want:
        _fail(
            f"Fixpipe quantPre={q.name} converts {dtype_name(want[0])} → "
            f"{dtype_name(want[1])}, but the tensors are {dtype_name(src.dtype)} → "
            f"{dtype_name(dst.dtype)}",
            fr,
        )


def _nz_width(params: FixpipeParamsV220, dst, n: int, fr) -> int:
    """Elements per row of one NZ output column block: 16, or 8 for a channel-split fp32
    output; nSize must be whole blocks."""
    split = bool(params.isChannelSplit)
    if split and dst.dtype != float32:
        _fail(f"Fixpipe isChannelSplit splits fp32 outputs, not {dtype_name(dst.dtype)}", fr)
    if dst.dtype.itemsize == 1:
        _fail("Fixpipe NZ output of 8-bit types (channel merge) is not modelled yet", fr)
    c0 = 8 if split else 16
    if n % c0:
        _fail(
            f"Fixpipe with CFG_NZ writes whole column blocks of {c0}: nSize={n} is not a multiple of {c0}",
            fr,
        )
    return c0


def _nz_views(darr, d0: int, sarr, m: int, n: int, c0: int, sstride: int, dstep_b: int, isz: int) -> list:
    """[(destination, source)] views of an NZ → NZ Fixpipe: column block j of the L0C tile
    (fractal j, or half j % 2 of fractal j // 2 when split) lands at j × dstep_b bytes."""
    if c0 == 16:
        sv = strided(sarr, 0, (n // 16, m, 16), (sstride * 64, 64, 4))
        return [(strided(darr, d0, (n // 16, m, 16), (dstep_b, 16 * isz, isz)), sv)]
    nf, odd = divmod(n // 8, 2)  # channel split: two 8-wide blocks per fractal
    views = []
    if nf:
        sv = strided(sarr, 0, (nf, 2, m, 8), (sstride * 64, 32, 64, 4))
        views.append((strided(darr, d0, (nf, 2, m, 8), (2 * dstep_b, dstep_b, 8 * isz, isz)), sv))
    if odd:  # the last fractal's first half
        sv = strided(sarr, nf * sstride * 16, (m, 8), (64, 4))
        views.append((strided(darr, d0 + 2 * nf * dstep_b // isz, (m, 8), (8 * isz, isz)), sv))
    return views


def _convert(views: list, q: QuantMode_t, deq: float, relu: bool) -> None:
    """Fixpipe's numbers: each L0C view `sv` (fp32/int32) quantised and ReLU'd into its `dv`.
    ND: sv is m × n1 × 16 and dv m × n1 × 16, or m × n when n is not whole fractals (the
    reshape that copies is made here: L0C is final only once the jobs before ran)."""
    for dv, sv in views:
        if dv.ndim == 2 and sv.ndim == 3:
            m, n = dv.shape
            sv = sv.reshape(m, -1)[:, :n]
        if q is QuantMode_t.DEQF16:
            sv = sv.astype(np.float32) * np.float32(deq)
        if relu:
            sv = np.maximum(sv, 0)
        np.copyto(dv, sv, casting="unsafe")  # = dv[...] = sv.astype(dv.dtype), without the copy


__all__ = [
    "CFG_COLUMN_MAJOR",
    "CFG_NZ",
    "CFG_ROW_MAJOR",
    "CO2Layout",
    "Fixpipe",
    "FixpipeConfig",
    "FixpipeParams",
    "FixpipeParamsV220",
    "QuantMode_t",
]
