"""LoadDataWithTranspose (PIPE_MTE1): square blocks from L1, transposed, into L0A / L0B.

Each repeat takes one square of the source — 64 × 64 for int4b_t (four 16 × 64 fractals one
above the other), 32 × 32 for 8-bit types (two 16 × 32 fractals), 16 × 16 for 2-byte types
(one fractal), 16 × 16 for 4-byte types (two 16 × 8 fractals side by side) — transposes it and
splits it back into fractals of the same shape. The i-th square is at startIndex + i·srcStride
squares of the source; the first fractal of repeat i lands at i·(1 + dstGap) fractals (512 B)
of the destination, each next one (1 + dstFracGap) fractals after the one before. Timing as
LoadData: mte1 latency + bytes / the L0 port's bytes per cycle.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ...npu import state
from ...npu.pipes import MTE1
from ..dtypes import dtype_name, is_int4, nbytes_of
from ..int4 import as_bytes, move_arrays, pack
from .fractal import FRACTAL_BYTES, strided
from .loaddata import load_operands
from .mmad import fail as _fail


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


def _shape(dtype) -> tuple[int, int]:
    """(fractals per square, elements per fractal row) for an element type."""
    if is_int4(dtype):
        return 4, 64
    return {1: (2, 32), 2: (1, 16), 4: (2, 8)}[dtype.itemsize]


def LoadDataWithTranspose(dst, src, params: LoadData2dTransposeParams) -> None:
    """LoadDataWithTranspose(dst_L0A|L0B, src_L1, LoadData2dTransposeParams) on PIPE_MTE1."""
    core = state.core
    if core.run.l2_record:
        return
    fr = sys._getframe(1)
    if not isinstance(params, LoadData2dTransposeParams):
        _fail(f"LoadDataWithTranspose expects LoadData2dTransposeParams, got {type(params).__name__}", fr)
    load_operands(dst, src, fr)
    if src.dtype.itemsize not in (1, 2, 4):
        _fail(f"LoadDataWithTranspose of {dtype_name(src.dtype)} is not supported", fr)
    rep, start, sstride = int(params.repeatTimes), int(params.startIndex), int(params.srcStride)
    gap, fgap = int(params.dstGap), int(params.dstFracGap)
    if not 0 < rep <= 255:
        _fail(f"LoadData2dTransposeParams.repeatTimes={rep}: must be 1..255", fr)
    nfr, cf = _shape(src.dtype)
    fr_el = 16 * cf
    sq_el = nfr * fr_el
    s_need = (start + (rep - 1) * sstride + 1) * sq_el
    frac_step = 1 + fgap if nfr > 1 else 0
    d_need = ((rep - 1) * (1 + gap) + (nfr - 1) * frac_step + 1) * fr_el
    s_bytes, d_bytes = nbytes_of(src.dtype, s_need), nbytes_of(dst.dtype, d_need)
    if (dst.offset % FRACTAL_BYTES) or (src.offset % FRACTAL_BYTES):
        _fail("LoadDataWithTranspose: source and destination must start on a 512 B fractal", fr)
    if s_need > src.count:
        _fail(
            f"LoadDataWithTranspose reads squares up to #{start + (rep - 1) * sstride} "
            f"({s_bytes} B) but the L1 tensor holds {nbytes_of(src.dtype, src.count)} B",
            fr,
        )
    if d_need > dst.count:
        _fail(
            f"LoadDataWithTranspose writes {d_bytes} B but the {dst.mem.upper()} tensor "
            f"holds {nbytes_of(dst.dtype, dst.count)} B",
            fr,
        )
    if core.numeric:
        sarr, darr, packed = move_arrays(core, src, s_bytes, dst, d_bytes)
        esz = sarr.itemsize
        sq = strided(
            sarr, start * sq_el, (rep, nfr, 16, cf), (sstride * sq_el * esz, fr_el * esz, cf * esz, esz)
        )
        for p, part in enumerate(transpose_squares(sq)):
            view = strided(
                darr, p * frac_step * fr_el, (rep, 16, cf), ((1 + gap) * fr_el * esz, cf * esz, esz)
            )
            view[...] = part
        if packed:
            dst.arr[:d_bytes] = pack(darr)
    cfg = core.chip.cube_timing
    nbytes = rep * nfr * FRACTAL_BYTES
    bpc = cfg["l0a_bpc"] if dst.mem == "l0a" else cfg["l0b_bpc"]
    core.work(MTE1, cfg["mte1_lat"] + nbytes / bpc, "LoadDataWithTranspose", nbytes, fr)
    san = core.san
    if san is not None:
        first = nbytes_of(src.dtype, start * sq_el)
        san.access(core, as_bytes(src), first, s_bytes - first, False, fr, span=True)
        san.access(core, as_bytes(dst), 0, d_bytes, True, fr, span=True)


def transpose_squares(sq: np.ndarray) -> list[np.ndarray]:
    """(rep, fractals, 16, cf) source fractals → the transposed fractals, one (rep, 16, cf)
    array per fractal position: 8-bit and int4 squares stack their fractals vertically,
    4-byte ones side by side."""
    rep, nfr, _, cf = sq.shape
    if nfr == 1:
        return [sq[:, 0].transpose(0, 2, 1)]
    if cf == 16 * nfr:  # 8-bit (32 x 32) and int4 (64 x 64): fractals one above the other
        t = sq.reshape(rep, cf, cf).transpose(0, 2, 1)
        return [t[:, 16 * i : 16 * i + 16] for i in range(nfr)]
    t = sq.transpose(0, 2, 1, 3).reshape(rep, 16, 16).transpose(0, 2, 1)  # 4-byte: 16 x (8 | 8)
    return [t[:, :, :8], t[:, :, 8:]]
