"""Tier-2 LoadData (PIPE_MTE1): fractals from L1 into L0A / L0B, as `Mmad` wants them.

Layouts, fractal sizes and the timing rule are described in `cube.py`; the element movement
itself is `fractal.load_numbers`. A LoadData from an L1 region kept as lineage becomes a lazy L0
region instead of moving bytes (`lineage.py`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ...npu import state
from ...npu.pipes import MTE1
from ..dtypes import dtype_name, is_int4
from ..int4 import as_bytes
from ..lineage_maps import load_map
from ..memory.tensors import LocalTensor
from .fractal import FRACTAL_BYTES, load_numbers, load_plan
from .load3d import LoadData3DParamsV2, load3d_v2
from .mmad import fail as _fail
from .mmad import need_mem


@dataclass
class LoadData2DParams:
    """LoadData 2D: `repeatTimes` fractals (512 B) from L1, the i-th at fractal
    startIndex + i·srcStride, land at i·(1 + dstGap) fractals in L0; ifTranspose transposes
    each 16×16 fractal (2-byte types)."""

    startIndex: int = 0
    repeatTimes: int = 1
    srcStride: int = 0
    sid: int = 0
    dstGap: int = 0
    ifTranspose: bool = False
    addrMode: int = 0


def LoadData(dst, src, params: LoadData2DParams) -> None:
    """LoadData(dst_L0A|L0B, src_L1, LoadData2DParams | LoadData3DParamsV2) on PIPE_MTE1."""
    core = state.core
    if core.run.l2_record:
        return  # the L2 pre-pass only counts GM reads (npu/memory/l2.py); this moves none
    if type(params) is LoadData3DParamsV2:
        fr = sys._getframe(1)
        load_operands(dst, src, fr)
        return load3d_v2(core, dst, src, params, fr)
    if is_int4(dst.dtype) and is_int4(src.dtype):  # 512 B fractals either way: move bytes
        if params.ifTranspose:
            _fail(
                "LoadData with ifTranspose transposes 2-byte fractals; int4b_t needs LoadDataWithTranspose",
                sys._getframe(1),
            )
        dst, src = as_bytes(dst), as_bytes(src)
    _load(core, dst, 0, src, 0, params, sys._getframe(1))


def load_at(dst, dst_off: int, src, src_off: int, params: LoadData2DParams) -> None:
    """`LoadData(dst[dst_off], src[src_off], params)` for library code (the high-level Matmul
    issues one per row group of every slice) without building the two offset tensors.

    Same checks, data and timeline. With a sanitizer attached, or offsets outside the tensors,
    the offset tensors are built after all, so that every check and message sees exactly the
    operands the plain call would.
    """
    core = state.core
    if (
        core.san is not None
        or type(dst) is not LocalTensor
        or type(src) is not LocalTensor
        or not 0 <= dst_off <= dst.count
        or not 0 <= src_off <= src.count
    ):
        dst, src, dst_off, src_off = dst[dst_off], src[src_off], 0, 0
    if core.run.l2_record:
        return
    _load(core, dst, dst_off, src, src_off, params, sys._getframe(1))


def load_rows(
    dst, dst_step: int, src, count: int, start: int, start_step: int, rep: int, sstride: int, transpose: bool
) -> None:
    """`count` LoadData instructions for library code (the high-level Matmul's row groups), the
    i-th exactly `LoadData(dst[i * dst_step], src, LoadData2DParams(start + i * start_step, rep,
    sstride, 0, 0, transpose))` issued from the caller's line.

    Why: a 4096³ Matmul issues ~300 k of them; checking the shared operands once and building
    no offset tensors or parameter objects (unless a sanitizer needs real operands) halves
    their cost. Same checks in the same order, same data and timeline.
    """
    core = state.core
    fr = sys._getframe(1)
    if core.san is not None or type(dst) is not LocalTensor or type(src) is not LocalTensor:
        for i in range(count):
            sub = dst[i * dst_step]
            params = LoadData2DParams(start + i * start_step, rep, sstride, 0, 0, transpose)
            if not core.run.l2_record:
                _load(core, sub, 0, src, 0, params, fr)
        return
    if core.run.l2_record:
        for i in range(count):
            if i * dst_step > dst.count:
                dst[i * dst_step]  # raises what the offset tensor would
        return
    isz = load_operands(dst, src, fr)
    for i in range(count):
        doff = i * dst_step
        if doff > dst.count:
            dst[doff]  # raises what the offset tensor would
        _load_one(core, dst, doff, src, 0, rep, start + i * start_step, sstride, 0, transpose, isz, fr)


def _load(core, dst, doff: int, src, soff: int, params, fr) -> None:
    """LoadData into dst from element `doff` (the destination operand), from src's element
    `soff` (the source operand)."""
    if not isinstance(params, LoadData2DParams):
        _fail(f"LoadData expects LoadData2DParams, got {type(params).__name__}", fr)
    isz = load_operands(dst, src, fr)
    _load_one(
        core,
        dst,
        doff,
        src,
        soff,
        int(params.repeatTimes),
        int(params.startIndex),
        int(params.srcStride),
        int(params.dstGap),
        bool(params.ifTranspose),
        isz,
        fr,
    )


def load_operands(dst, src, fr) -> int:
    """Check LoadData's memories and types (LoadDataWithTranspose's too); the element size."""
    if type(dst) is not LocalTensor or (dst.mem != "l0a" and dst.mem != "l0b"):
        need_mem(dst, ("l0a", "l0b"), "LoadData", "dst", fr)
    if type(src) is not LocalTensor or src.mem != "l1":
        need_mem(src, ("l1",), "LoadData", "src", fr)
    isz = src.dtype.itemsize
    if isz != dst.dtype.itemsize:
        _fail(f"LoadData: src is {dtype_name(src.dtype)} but dst is {dtype_name(dst.dtype)}", fr)
    return isz


def _load_one(
    core,
    dst,
    doff: int,
    src,
    soff: int,
    rep: int,
    start: int,
    sstride: int,
    gap: int,
    transpose: bool,
    isz: int,
    fr,
) -> None:
    """One LoadData whose operands are checked: its parameters, bounds, data and timing."""
    plan = load_plan(rep, start, sstride, gap, transpose, isz)
    if plan == "repeat":
        _fail(f"LoadData2DParams.repeatTimes={rep}: must be 1..255", fr)
    if plan == "transpose":
        _fail(
            f"LoadData with ifTranspose transposes 16x16 fractals of 2-byte types; "
            f"{dtype_name(src.dtype)} needs LoadDataWithTranspose",
            fr,
            hint="for int8 keep B as N x K in GM so that no transpose is needed",
        )
    s_need, d_need = plan
    offset = dst.offset + doff * isz
    if offset % FRACTAL_BYTES:
        _fail(
            f"LoadData: destination offset {offset} B in {dst.mem.upper()} is not 512 B "
            "aligned (one fractal)",
            fr,
        )
    fr_el = FRACTAL_BYTES // isz
    if s_need > src.count - soff:
        _fail(
            f"LoadData reads fractals up to #{start + (rep - 1) * sstride} "
            f"({s_need * isz} B) but the L1 tensor holds {(src.count - soff) * isz} B",
            fr,
        )
    if d_need > dst.count - doff:
        _fail(
            f"LoadData writes {rep} fractal(s) ({d_need * isz} B) but the "
            f"{dst.mem.upper()} tensor holds {(dst.count - doff) * isz} B",
            fr,
        )
    if core.numeric and not _load_lazily(
        core, dst, doff, src, soff + start * fr_el, rep, sstride, gap, transpose, isz, d_need
    ):
        load_numbers(dst.arr, doff, src.arr, soff + start * fr_el, rep, sstride, gap, transpose, isz)
    cfg = core.chip.cube_timing
    nbytes = rep * FRACTAL_BYTES
    bpc = cfg["l0a_bpc"] if dst.mem == "l0a" else cfg["l0b_bpc"]
    core.work(MTE1, cfg["mte1_lat"] + nbytes / bpc, "LoadData", nbytes, fr)
    san = core.san
    if san is not None:  # (offsets are 0 here: load_at/load_rows hand it real operands)
        san.access(core, src, soff + start * fr_el, s_need - start * fr_el, False, fr, span=True)
        san.access(core, dst, doff, d_need, True, fr, span=True)


def _load_lazily(
    core,
    dst,
    doff: int,
    src,
    first: int,
    rep: int,
    sstride: int,
    gap: int,
    transpose: bool,
    isz: int,
    d_need: int,
) -> bool:
    """Record a LoadData from a lazy L1 region as a lazy L0 region (ascendc/lineage.py);
    False if the bytes must move (after materialising what the copy reads or overwrites)."""
    lz = core.lazy
    if lz is None:
        return False
    if sstride < 0:
        lz.settle()
        return False
    s0 = src.offset + first * isz
    s_bytes = ((rep - 1) * sstride + 1) * FRACTAL_BYTES if sstride > 0 else FRACTAL_BYTES
    d0 = dst.offset + doff * isz
    e = lz.find("l1", s0, s_bytes) if gap == 0 else None
    if e is not None and (e.gm.dtype != src.dtype or src.dtype != dst.dtype):
        e = None  # (a tile viewed as another type: its bytes move)
    if e is not None:
        lmap = load_map(e.map, (s0 - e.start) // isz, rep, sstride, transpose, isz)
        lz.add(dst.mem, d0, e.gm, e.buffer, e.orig, lmap)
        if lmap.hole is not None:  # L1 holds its holes as bytes: they move now (the rest stays lineage)
            load_numbers(dst.arr, doff, src.arr, first, rep, sstride, 0, transpose, isz)
        if core.trace is not None:  # lineage only: no bytes move (npu/replay/cubetrace.py)
            core.trace.cover(len(core.rec))
        return True
    lz.settle_range("l1", s0, s0 + s_bytes)
    lz.settle_range(dst.mem, d0, d0 + d_need * isz)
    return False
