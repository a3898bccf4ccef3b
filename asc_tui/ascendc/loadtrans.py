"""LoadDataWithTranspose (PIPE_MTE1): square blocks from L1, transposed, into L0A / L0B.

Each repeat takes one square of the source — 32 × 32 for 8-bit types (two 16 × 32 fractals one
above the other), 16 × 16 for 2-byte types (one fractal), 16 × 16 for 4-byte types (two 16 × 8
fractals side by side) — transposes it and splits it back into fractals of the same shape. The
i-th square is at startIndex + i·srcStride squares of the source; the first fractal of repeat i
lands at i·(1 + dstGap) fractals (512 B) of the destination, its second (1 + dstFracGap)
fractals after it. Timing as LoadData: mte1 latency + bytes / the L0 port's bytes per cycle.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ..npu import state
from ..npu.pipes import MTE1
from .cube import _fail
from .dtypes import dtype_name
from .fractal import FRACTAL_BYTES, strided
from .loaddata import _load_operands


@dataclass
class LoadData2dTransposeParams:
    """repeatTimes squares from startIndex, srcStride squares apart; dstGap / dstFracGap in
    fractals (512 B) between repeats / between the fractals of one repeat."""

    startIndex: int = 0
    repeatTimes: int = 0
    srcStride: int = 0
    dstGap: int = 0
    dstFracGap: int = 0
    addrMode: int = 0


def _shape(isz: int) -> tuple[int, int]:
    """(fractals per square, elements per fractal row) for an element size."""
    return {1: (2, 32), 2: (1, 16), 4: (2, 8)}[isz]


def LoadDataWithTranspose(dst, src, params: LoadData2dTransposeParams) -> None:
    """LoadDataWithTranspose(dst_L0A|L0B, src_L1, LoadData2dTransposeParams) on PIPE_MTE1."""
    core = state.core
    if core.run.l2_record:
        return
    fr = sys._getframe(1)
    if not isinstance(params, LoadData2dTransposeParams):
        _fail(f"LoadDataWithTranspose expects LoadData2dTransposeParams, got {type(params).__name__}", fr)
    isz = _load_operands(dst, src, fr)
    if isz not in (1, 2, 4):
        _fail(f"LoadDataWithTranspose of {dtype_name(src.dtype)} is not supported", fr)
    rep, start, sstride = int(params.repeatTimes), int(params.startIndex), int(params.srcStride)
    gap, fgap = int(params.dstGap), int(params.dstFracGap)
    if not 0 < rep <= 255:
        _fail(f"LoadData2dTransposeParams.repeatTimes={rep}: must be 1..255", fr)
    nfr, cf = _shape(isz)
    fr_el = FRACTAL_BYTES // isz
    sq_el = nfr * fr_el
    s_need = (start + (rep - 1) * sstride + 1) * sq_el
    frac_step = 1 + fgap if nfr > 1 else 0
    d_need = ((rep - 1) * (1 + gap) + (nfr - 1) * frac_step + 1) * fr_el
    if (dst.offset % FRACTAL_BYTES) or (src.offset % FRACTAL_BYTES):
        _fail("LoadDataWithTranspose: source and destination must start on a 512 B fractal", fr)
    if s_need > src.count:
        _fail(
            f"LoadDataWithTranspose reads squares up to #{start + (rep - 1) * sstride} "
            f"({s_need * isz} B) but the L1 tensor holds {src.count * isz} B",
            fr,
        )
    if d_need > dst.count:
        _fail(
            f"LoadDataWithTranspose writes {d_need * isz} B but the {dst.mem.upper()} tensor "
            f"holds {dst.count * isz} B",
            fr,
        )
    if core.numeric:
        lz = core.lazy
        if lz is not None:
            lz.settle_range("l1", src.offset, src.offset + s_need * isz)
            lz.settle_range(dst.mem, dst.offset, dst.offset + d_need * isz)
        sq = strided(
            src.arr, start * sq_el, (rep, nfr, 16, cf), (sstride * sq_el * isz, FRACTAL_BYTES, cf * isz, isz)
        )
        for p, part in enumerate(transpose_squares(sq)):
            strided(
                dst.arr, p * frac_step * fr_el, (rep, 16, cf), ((1 + gap) * FRACTAL_BYTES, cf * isz, isz)
            )[...] = part
    cfg = core.chip.cube_timing
    nbytes = rep * nfr * FRACTAL_BYTES
    bpc = cfg["l0a_bpc"] if dst.mem == "l0a" else cfg["l0b_bpc"]
    core.work(MTE1, cfg["mte1_lat"] + nbytes / bpc, "LoadDataWithTranspose", nbytes, fr)
    san = core.san
    if san is not None:
        san.access(core, src, start * sq_el, s_need - start * sq_el, False, fr, span=True)
        san.access(core, dst, 0, d_need, True, fr, span=True)


def transpose_squares(sq: np.ndarray) -> list[np.ndarray]:
    """(rep, fractals, 16, cf) source fractals → the transposed fractals, one (rep, 16, cf)
    array per fractal position: 8-bit squares stack their fractals vertically, 4-byte ones
    side by side."""
    rep, nfr, _, cf = sq.shape
    if nfr == 1:
        return [sq[:, 0].transpose(0, 2, 1)]
    if cf == 32:  # 8-bit: 32 rows x 32
        t = sq.reshape(rep, 32, 32).transpose(0, 2, 1)
        return [t[:, :16], t[:, 16:]]
    t = sq.transpose(0, 2, 1, 3).reshape(rep, 16, 16).transpose(0, 2, 1)  # 4-byte: 16 x (8 | 8)
    return [t[:, :, :8], t[:, :, 8:]]
