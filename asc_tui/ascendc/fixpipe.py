"""Fixpipe: L0C → GM (or L1) on PIPE_FIX, with NZ→ND, quantisation (fp32→fp16/bf16) and ReLU.

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


def Fixpipe(dst, src, params: FixpipeParamsV220) -> None:
    """Fixpipe(dst_GM_or_L1, src_L0C, FixpipeParamsV220) on PIPE_FIX (NZ→ND, quantise, ReLU)."""
    core = state.core
    if core.run.l2_record:
        return  # the L2 pre-pass only counts GM reads (npu/l2.py); this moves none
    fr = sys._getframe(1)
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
    if dstride < n:
        _fail(f"FixpipeParams.dstStride={dstride} is smaller than nSize={n}: output rows would overlap", fr)
    q = params.quantPre
    if q is QuantMode_t.NoQuant:
        if dst.dtype != src.dtype:
            _fail(
                f"Fixpipe from {dtype_name(src.dtype)} to {dtype_name(dst.dtype)} needs a "
                f"conversion: set quantPre (e.g. QuantMode_t.F322F16)",
                fr,
            )
    else:
        want = _QUANT_OUT[q]
        if (src.dtype, dst.dtype) != want:
            _fail(
                f"Fixpipe quantPre={q.name} converts {dtype_name(want[0])} → "
                f"{dtype_name(want[1])}, but the tensors are {dtype_name(src.dtype)} → "
                f"{dtype_name(dst.dtype)}",
                fr,
            )
    n1 = -(-n // 16)
    need_c = n1 * sstride * 16
    if need_c > src.count:
        _fail(
            f"Fixpipe reads {need_c * 4} B of L0C (nSize={n}, srcStride={sstride}) but the "
            f"tensor holds {src.count * 4} B",
            fr,
        )
    to_gm = type(dst) is GlobalTensor
    isz = dst.dtype.itemsize
    d_need = (m - 1) * dstride + n
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
        sv = strided(src.arr, 0, (m, n1, 16), (64, sstride * 64, 4))
        d0 = dst.start if to_gm else 0
        if n == n1 * 16:  # whole fractal columns: NZ → ND without a reshape's copy
            dv = strided(dst.arr, d0, (m, n1, 16), (dstride * isz, 16 * isz, isz))
        else:
            dv = strided(dst.arr, d0, (m, n), (dstride * isz, isz))
        job = partial(_convert, dv, sv, q, float(params.deqScalar), bool(params.reluEn))
        if to_gm:  # on the numbers thread, after the tile's Mmads (npu/offload.py)
            numbers.submit(job, dst.buffer, lane=core)
        else:
            numbers.drain()
            job()
    cfg = core.chip.cube_timing
    src_bytes, out_bytes = m * n * src.dtype.itemsize, m * n * isz
    cycles = src_bytes / cfg["fix_bpc"]
    if to_gm and out_bytes > 0:  # its bytes go through the HBM at the slower of it and the path
        core.gm_write += out_bytes
        core.work(FIX, core.gm_write_cycles(out_bytes, cycles, cfg["fix_lat"]), "Fixpipe", out_bytes, fr)
    else:
        core.work(FIX, cfg["fix_lat"] + cycles, "Fixpipe", out_bytes, fr)
    san = core.san
    if san is not None:
        san.access(core, src, 0, need_c, False, fr, span=True)
        san.access(core, dst, 0, d_need, True, fr, span=True)


def _convert(dv: np.ndarray, sv: np.ndarray, q: QuantMode_t, deq: float, relu: bool) -> None:
    """Fixpipe's numbers: the NZ L0C view `sv` (m × n1 × 16, fp32/int32) quantised and ReLU'd
    into `dv`: m × n1 × 16, or m × n when n is not whole fractals (the reshape that copies is
    made here: L0C is final only once the jobs before ran)."""
    if dv.ndim == 2:
        m, n = dv.shape
        sv = sv.reshape(m, -1)[:, :n]
    if q is QuantMode_t.DEQF16:
        sv = sv.astype(np.float32) * np.float32(deq)
    if relu:
        sv = np.maximum(sv, 0)
    np.copyto(dv, sv, casting="unsafe")  # = dv[...] = sv.astype(dv.dtype), without the copy


__all__ = ["QuantMode_t", "FixpipeParamsV220", "FixpipeParams", "Fixpipe"]
