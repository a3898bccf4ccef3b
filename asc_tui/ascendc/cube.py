"""Tier-2 cube instructions: GM→L1 Nd2Nz copies, LoadData (MTE1), Mmad (PIPE_M); Fixpipe
(PIPE_FIX) is in fixpipe.py and cross-core flags in crosscore.py.

Local memories hold data in the hardware's fractal layouts, so a kernel transliterated from an
Ascend C sample computes the same thing here. A fractal is 512 B: 16 rows of C0 = 32 B /
sizeof(T) elements (16 for half/bf16, 32 for int8, 8 for float).

- L1 after `DataCopy(l1, gm, Nd2NzParams)`: "NZ" — column blocks of C0 elements, each block a
  run of rows (element (r, c) at (c // C0)·dstNzC0Stride·C0 + r·dstNzNStride·C0 + c % C0).
  Columns past dValue and rows past nValue up to the 16-row fractal boundary are zeroed (the
  hardware leaves them stale; zeros keep K tails exact and the sanitizer's initcheck quiet).
- L0A for Mmad: "ZZ" — fractals row-major over (m1, k1), each fractal [16 m][C0 k].
- L0B for Mmad: "ZN" — fractals row-major over (k1, n1), each fractal [16 n][C0 k]
  (what `LoadData(..., ifTranspose=True)` makes of an NZ tile of B = K×N).
- L0C: "NZ" — fractals column-major over (n1, m1), each [16 m][16 n], fp32/int32.

Timing (cycles): LoadData = mte1 latency + bytes / (L1→L0A or L1→L0B bytes per cycle);
Mmad = startup + ⌈m/16⌉·⌈n/16⌉·⌈k/C0⌉ fractal steps (16×16×16 fp16, 16×32×16 int8 per cycle);
GM→L1 copies cost latency + first-read bytes / HBM share + re-read bytes / L2 bandwidth (see
`npu/l2.py`). Numerically, the Mmads accumulating into one L0C tile are computed together when
the tile is next read (`mmad_numbers.Pending`), which makes full emulation about one numpy
matmul's work.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import PACKAGE_DIR
from ..npu import state
from ..npu.errors import KernelError, user_frame
from ..npu.l2 import l2_of
from ..npu.offload import gm_ready, numbers
from .dtypes import bfloat16, dtype_name, float32, half, int8, int32
from .enums import Pipe
from .lineage import lazy_of, load_map, nd2nz_map
from .mmad_numbers import KSteps, Pending
from .tensors import GlobalTensor, LocalTensor

M, MTE1, MTE2, FIX = int(Pipe.PIPE_M), int(Pipe.PIPE_MTE1), int(Pipe.PIPE_MTE2), int(Pipe.PIPE_FIX)
FRACTAL_BYTES = 512
_PKG = str(PACKAGE_DIR)


def _frame():
    """The calling frame: inside the high-level Matmul that is its own line (a detailed
    timeline); errors are moved to the user's line by `_fail`."""
    return sys._getframe(2)


def _fail(msg: str, fr, hint: str | None = None):
    if fr.f_code.co_filename.startswith(_PKG):  # raised inside asc_tui (e.g. Matmul)
        fr = user_frame(3) or fr
    raise KernelError(msg, fr.f_code.co_filename, fr.f_lineno, hint=hint)


def strided(arr: np.ndarray, offset: int, shape: tuple, strides: tuple) -> np.ndarray:
    """A strided view of the contiguous 1-D `arr` from element `offset` (bounds pre-checked).

    `np.ndarray(buffer=...)` instead of `as_strided`: ~0.3 µs instead of ~4 µs per view, and
    the cube path makes several views per instruction.
    """
    return np.ndarray(shape, arr.dtype, arr, offset * arr.itemsize, strides)


def c0_of(dtype) -> int:
    """Elements per 32 B block: the width of one fractal row."""
    return 32 // np.dtype(dtype).itemsize


def _need_mem(t, mems: tuple[str, ...], what: str, role: str, fr) -> None:
    if not isinstance(t, LocalTensor) or t.mem not in mems:
        where = f"{t.pos.name} ({t.mem.upper()})" if isinstance(t, LocalTensor) else type(t).__name__
        _fail(
            f"{what}: {role} must be a local tensor in {' or '.join(m.upper() for m in mems)}, got {where}",
            fr,
            hint="A1/B1 live in L1, A2 in L0A, B2 in L0B, CO1 in L0C",
        )


# ---- GM → L1 ---------------------------------------------------------------------------------


@dataclass
class Nd2NzParams:
    """ND (row-major) → NZ (fractal) conversion during a GM→L1 DataCopy; strides in elements
    except dstNzC0Stride / dstNzNStride (units of C0 = 32 B) and the matrix strides."""

    ndNum: int = 1
    nValue: int = 0
    dValue: int = 0
    srcNdMatrixStride: int = 0
    srcDValue: int = 0
    dstNzC0Stride: int = 0
    dstNzNStride: int = 1
    dstNzMatrixStride: int = 0


def _gm_extent(g: GlobalTensor) -> int:
    buf = g.buffer
    return min(g.size, buf.count * buf.dtype.itemsize // g.dtype.itemsize - g.start)


@dataclass(frozen=True, slots=True)
class _Nd2NzPlan:
    """What one Nd2NzParams combination copies, derived once (kernels repeat a few combos).

    Element counts unless named `_b` (bytes); `s_need`/`d_need` are the source and destination
    extents the bounds checks compare against the tensors."""

    nd: int
    n: int
    d: int
    d1: int
    n_pad: int
    full: int  # whole C0 blocks per row
    tail: int  # elements of the last, partial C0 block
    s_need: int
    d_need: int
    nbytes: int
    sd_b: int
    ms_b: int
    dms_b: int
    c0s_b: int  # bytes between C0 column blocks in L1
    ns_b: int  # bytes between rows in L1


@lru_cache(maxsize=4096)
def _nd2nz_plan(
    nd: int, n: int, d: int, ms: int, sd: int, c0s: int, ns: int, dms: int, isz: int
) -> _Nd2NzPlan | tuple | None:
    """The plan, None for an empty copy, or (message, hint) for parameters that are wrong
    whatever the tensors (checked in the order the errors are reported)."""
    c0 = 32 // isz
    if nd < 1 or n < 0 or d < 0:
        return f"Nd2NzParams(ndNum={nd}, nValue={n}, dValue={d}): counts must be positive", None
    if n == 0 or d == 0:
        return None
    if sd <= 0:  # srcDValue < dValue (overlapping rows, img2col-style reads) is legal
        return f"Nd2NzParams.srcDValue={sd}: the source row stride must be positive", None
    if c0s < n:
        return (
            f"Nd2NzParams.dstNzC0Stride={c0s} is smaller than nValue={n}: the C0 column "
            f"blocks of the NZ tile would overlap",
            "dstNzC0Stride is the padded row count, usually ceil(nValue / 16) * 16",
        )
    d1 = -(-d // c0)
    n_pad = min(-(-n // 16) * 16, c0s) if ns == 1 else n  # rows up to the fractal boundary
    s_need = (nd - 1) * ms + (n - 1) * sd + d
    d_need = (nd - 1) * dms + (d1 - 1) * c0s * c0 + (n_pad - 1) * ns * c0 + c0
    full = d // c0
    return _Nd2NzPlan(
        nd,
        n,
        d,
        d1,
        n_pad,
        full,
        d - full * c0,
        s_need,
        d_need,
        nd * n * d * isz,
        sd * isz,
        ms * isz,
        dms * isz,
        c0s * 32,
        ns * 32,
    )


def copy_nd2nz(core, dst, src, p: Nd2NzParams, fr=None) -> None:
    """DataCopy(dst_L1, src_GM, Nd2NzParams): called by `DataCopy` for this parameter type."""
    fr = fr or _frame()
    if type(src) is not GlobalTensor:
        _fail("DataCopy with Nd2NzParams copies GM → L1: the source must be a GlobalTensor", fr)
    if type(dst) is not LocalTensor or dst.mem != "l1":
        _need_mem(dst, ("l1",), "DataCopy with Nd2NzParams", "the destination", fr)
    dt = src.dtype
    if dt != dst.dtype:
        _fail(
            f"DataCopy with Nd2NzParams: source is {dtype_name(dt)} but destination is "
            f"{dtype_name(dst.dtype)} (Nd2Nz does not convert types)",
            fr,
        )
    isz = dt.itemsize
    plan = _nd2nz_plan(
        int(p.ndNum),
        int(p.nValue),
        int(p.dValue),
        int(p.srcNdMatrixStride),
        int(p.srcDValue),
        int(p.dstNzC0Stride),
        int(p.dstNzNStride),
        int(p.dstNzMatrixStride),
        isz,
    )
    if type(plan) is not _Nd2NzPlan:
        if plan is None:
            return
        _fail(plan[0], fr, hint=plan[1])
    if dst.offset % 32:
        _fail(f"DataCopy with Nd2NzParams: destination offset {dst.offset} B in L1 is not 32 B aligned", fr)
    if plan.s_need > _gm_extent(src):
        _fail(
            f"DataCopy with Nd2NzParams reads {plan.s_need} elements of GlobalTensor "
            f"'{src.name}' from element {src.start}, but only {_gm_extent(src)} are there",
            fr,
            hint="check nValue/dValue/srcDValue of the last (tail) tile",
        )
    if plan.d_need > dst.count:
        c0 = 32 // isz
        _fail(
            f"DataCopy with Nd2NzParams writes {plan.d_need} elements ({plan.d_need * isz} B) "
            f"of NZ tile but the L1 tensor holds {dst.count} ({dst.count * isz} B)",
            fr,
            hint=f"an NZ tile of {plan.n}x{plan.d} {dtype_name(dt)} needs "
            f"{plan.d1} x dstNzC0Stride x {c0} elements",
        )
    if core.numeric:
        lmap = nd2nz_map(plan, isz) if core.lineage else None
        if lmap is not None:  # L1 holds "these GM elements" until the bytes are needed
            lazy_of(core).add("l1", dst.offset, src.arr, src.buffer, src.start, lmap)
        else:
            if core.lazy is not None:
                core.lazy.settle_range("l1", dst.offset, dst.offset + plan.d_need * isz)
            gm_ready(src.buffer)
            _nd2nz_numbers(plan, dst.arr, src.arr, src.start * isz, isz)
    gm_read_cost(
        core, src, plan.nbytes, fr, "DataCopy(Nd2Nz)", plan.nd, plan.n, plan.d * isz, plan.sd_b, plan.ms_b
    )
    san = core.san
    if san is not None:
        san.access(core, src, 0, plan.s_need, False, fr, span=True)
        san.access(core, dst, 0, plan.d_need, True, fr, span=True)


_V32 = np.dtype("V32")


def _nd2nz_numbers(q: _Nd2NzPlan, dst: np.ndarray, src: np.ndarray, src_off_b: int, isz: int) -> None:
    """Move the data of one Nd2Nz copy (bounds already checked).

    Whole C0 blocks move as opaque 32 B items (`V32`): one fractal row per element is about
    twice as fast as copying 2-byte elements through a 4-D transpose.
    """
    nd, n, full = q.nd, q.n, q.full
    if full:
        sv = np.ndarray((nd, full, n), _V32, src, src_off_b, (q.ms_b, 32, q.sd_b))
        np.ndarray((nd, full, n), _V32, dst, 0, (q.dms_b, q.c0s_b, q.ns_b))[...] = sv
    c0 = 32 // isz
    if q.tail:
        dv = np.ndarray((nd, n, c0), dst.dtype, dst, full * q.c0s_b, (q.dms_b, q.ns_b, isz))
        dv[:, :, : q.tail] = np.ndarray(
            (nd, n, q.tail), src.dtype, src, src_off_b + full * 32, (q.ms_b, q.sd_b, isz)
        )
        dv[:, :, q.tail :] = 0
    if q.n_pad > n:  # zero the fractal's padding rows (stale on hardware; Mmad ignores them)
        np.ndarray((nd, q.d1, q.n_pad - n, c0), dst.dtype, dst, n * 32, (q.dms_b, q.c0s_b, 32, isz))[...] = 0


def gm_read_cost(
    core,
    src: GlobalTensor,
    nbytes: int,
    fr,
    op: str,
    nd: int,
    rows: int,
    row_bytes: int,
    stride_bytes: int,
    matrix_stride_bytes: int,
) -> None:
    """Charge one GM→L1 MTE2 instruction, splitting its bytes into HBM first reads and L2 hits."""
    l2 = l2_of(core.run)
    base = src.start * src.dtype.itemsize
    hit = l2.read(src.buffer, base, nd, rows, row_bytes, stride_bytes, matrix_stride_bytes)
    if l2.record:
        return  # the pre-pass only counts reads; its timeline is never looked at
    miss = nbytes - hit
    cycles = core.dma_lat + miss / core.rd_bpc + (hit / l2.bpc if hit else 0.0)
    core.work(MTE2, cycles, op, nbytes, fr)
    core.gm_read += nbytes


# ---- L1 → L0A / L0B ----------------------------------------------------------------------------


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


@lru_cache(maxsize=4096)
def _load_plan(rep: int, start: int, sstride: int, gap: int, transpose: bool, isz: int) -> tuple:
    """(s_need, d_need) in elements for one LoadData2DParams combination, or which parameter
    is wrong whatever the tensors ("repeat", "transpose"; checked in the order reported)."""
    if not 0 < rep <= 255:
        return "repeat"
    if transpose and isz != 2:
        return "transpose"
    fr_el = FRACTAL_BYTES // isz
    return (start + (rep - 1) * sstride + 1) * fr_el, ((rep - 1) * (1 + gap) + 1) * fr_el


def LoadData(dst, src, params: LoadData2DParams) -> None:
    """LoadData(dst_L0A|L0B, src_L1, LoadData2DParams) on PIPE_MTE1."""
    core = state.core
    if core.run.l2_record:
        return  # the L2 pre-pass only counts GM reads (npu/l2.py); this moves none
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
    isz = _load_operands(dst, src, fr)
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
    isz = _load_operands(dst, src, fr)
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


def _load_operands(dst, src, fr) -> int:
    """Check LoadData's memories and types; the element size."""
    if type(dst) is not LocalTensor or (dst.mem != "l0a" and dst.mem != "l0b"):
        _need_mem(dst, ("l0a", "l0b"), "LoadData", "dst", fr)
    if type(src) is not LocalTensor or src.mem != "l1":
        _need_mem(src, ("l1",), "LoadData", "src", fr)
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
    plan = _load_plan(rep, start, sstride, gap, transpose, isz)
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
        _load_numbers(dst.arr, doff, src.arr, soff + start * fr_el, rep, sstride, gap, transpose, isz)
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
    if e is not None:
        lmap = load_map(e.map, (s0 - e.start) // isz, rep, sstride, transpose, isz)
        lz.add(dst.mem, d0, e.gm, e.buffer, e.base, lmap)
        return True
    lz.settle_range("l1", s0, s0 + s_bytes)
    lz.settle_range(dst.mem, d0, d0 + d_need * isz)
    return False


def _load_numbers(
    dst: np.ndarray,
    base: int,
    src: np.ndarray,
    first: int,
    rep: int,
    sstride: int,
    gap: int,
    transpose: bool,
    isz: int,
) -> None:
    """Move `rep` fractals for LoadData (bounds already checked) to dst from element `base`,
    from src's element `first`."""
    c0 = 32 // isz
    fr_el = FRACTAL_BYTES // isz
    if sstride == 1:  # contiguous run of fractals: a plain reshape, no stride tricks
        sv = src[first : first + rep * fr_el].reshape(rep, 16, c0)
    else:
        sv = strided(src, first, (rep, 16, c0), (sstride * FRACTAL_BYTES, c0 * isz, isz))
    if gap == 0:
        dv = dst[base : base + rep * fr_el].reshape(rep, 16, c0)
    else:
        dv = strided(dst, base, (rep, 16, c0), ((1 + gap) * FRACTAL_BYTES, c0 * isz, isz))
    dv[...] = sv.transpose(0, 2, 1) if transpose else sv


# ---- Mmad ----------------------------------------------------------------------------------------


@dataclass
class MmadParams:
    """C[m×n] (+)= A[m×k] · B[k×n]; cmatrixInitVal=True overwrites C, False accumulates."""

    m: int = 0
    n: int = 0
    k: int = 0
    isBias: bool = False
    fmOffset: int = 0
    enSsparse: bool = False
    enWinogradA: bool = False
    enWinogradB: bool = False
    unitFlag: int = 0
    kDirectionAlign: bool = False
    cmatrixSource: bool = False
    cmatrixInitVal: bool = True


#: (A dtype, B dtype) → L0C dtype the cube produces.
_MMAD_TYPES = {
    (half, half): float32,
    (bfloat16, bfloat16): float32,
    (int8, int8): int32,
    (float32, float32): float32,
}


def Mmad(dst, fm, filter_, bias_or_params, params: MmadParams | None = None) -> None:
    """Mmad(c_L0C, a_L0A, b_L0B, MmadParams) or Mmad(c, a, b, bias, MmadParams) on PIPE_M."""
    core = state.core
    if core.run.l2_record:
        return  # the L2 pre-pass only counts GM reads (npu/l2.py); this moves none
    fr = sys._getframe(1)
    bias = None
    if params is None:
        params = bias_or_params
    else:
        bias = bias_or_params
    if not isinstance(params, MmadParams):
        _fail(f"Mmad expects MmadParams, got {type(params).__name__}", fr)
    sub = getattr(core, "kind", None)
    if sub == "aiv":
        _fail(
            "Mmad on a vector core (AIV): the cube runs on the AIC",
            fr,
            hint="guard cube code with `if AscendC.ASCEND_IS_AIC:`",
        )
    if type(dst) is not LocalTensor or dst.mem != "l0c":
        _need_mem(dst, ("l0c",), "Mmad", "dst (C)", fr)
    if type(fm) is not LocalTensor or fm.mem != "l0a":
        _need_mem(fm, ("l0a",), "Mmad", "A", fr)
    if type(filter_) is not LocalTensor or filter_.mem != "l0b":
        _need_mem(filter_, ("l0b",), "Mmad", "B", fr)
    out_t = _MMAD_TYPES.get((fm.dtype, filter_.dtype))
    if out_t is None:
        _fail(
            f"Mmad of {dtype_name(fm.dtype)} x {dtype_name(filter_.dtype)} is not a cube "
            "type combination (half/bf16 → float, int8 → int32, float → float)",
            fr,
        )
    if dst.dtype != out_t:
        _fail(
            f"Mmad of {dtype_name(fm.dtype)} accumulates in {dtype_name(out_t)}, but the L0C "
            f"tensor is {dtype_name(dst.dtype)}",
            fr,
        )
    m, n, k = int(params.m), int(params.n), int(params.k)
    if m <= 0 or n <= 0 or k <= 0:
        _fail(f"MmadParams(m={m}, n={n}, k={k}): all must be positive", fr)
    c0 = 32 // fm.dtype.itemsize
    m1, n1, k1 = -(-m // 16), -(-n // 16), -(-k // c0)
    need_a, need_b, need_c = m1 * k1 * 16 * c0, k1 * n1 * 16 * c0, m1 * n1 * 256
    if need_a > fm.count or need_b > filter_.count or need_c > dst.count:
        _mmad_too_small(
            ((fm, need_a, "A (L0A)"), (filter_, need_b, "B (L0B)"), (dst, need_c, "C (L0C)")),
            m,
            n,
            k,
            m1,
            n1,
            k1,
            fr,
        )
    if core.numeric:
        key = (dst.mem, dst.offset, m, n)
        pend = core.mmad_pending
        if pend is not None and (pend.key != key or params.cmatrixInitVal):
            if pend.key == key:
                core.mmad_pending = None  # about to be overwritten: never computed
            else:
                pend.flush(core)
        pend = core.mmad_pending
        if pend is None:
            init = params.cmatrixInitVal
            pend = core.mmad_pending = Pending(key, dst, m, n, m1, n1, out_t, init, bias if init else None)
        # snapshots: L0A/L0B may be reloaded before the pending Mmads are computed
        steps = pend.runs[-1] if pend.runs else None
        if steps is None or steps.k != k or steps.k1 != k1 or steps.dtype != fm.dtype:
            steps = KSteps(k, k1, c0, need_a, need_b, fm.dtype, pend)
            pend.runs.append(steps)
        steps.add(core, fm, filter_)
    core.work(M, core.chip.cube_timing["mmad_startup"] + m1 * n1 * k1, "Mmad", 0, fr)
    san = core.san
    if san is not None:
        san.access(core, fm, 0, need_a, False, fr, span=True)
        san.access(core, filter_, 0, need_b, False, fr, span=True)
        san.access(core, dst, 0, need_c, True, fr, span=True)


def _mmad_too_small(operands, m, n, k, m1, n1, k1, fr) -> None:
    """Report the first operand tensor too small for an Mmad of m×n×k."""
    for t, need, role in operands:
        if need > t.count:
            isz = t.dtype.itemsize
            _fail(
                f"Mmad m={m} n={n} k={k} needs {need * isz} B of {role} "
                f"({'x'.join(map(str, _fr_shape(role, m1, n1, k1)))} fractals) but the "
                f"tensor holds {t.count * isz} B",
                fr,
            )


def flush_cube(core, wait: bool = True) -> None:
    """Make L0C hold every issued Mmad's result (before anything reads it); with wait=False
    only queue their computation, for a job that follows them on the numbers thread."""
    pend = core.mmad_pending
    if pend is not None:
        pend.flush(core)
    if wait:
        numbers.drain()


def _fr_shape(role: str, m1: int, n1: int, k1: int) -> tuple[int, int]:
    return {"A (L0A)": (m1, k1), "B (L0B)": (k1, n1)}.get(role, (n1, m1))


def __getattr__(name: str):
    """Fixpipe and its parameter types live in fixpipe.py; keep `cube.Fixpipe` working."""
    if name in ("Fixpipe", "FixpipeParams", "FixpipeParamsV220", "QuantMode_t"):
        from . import fixpipe

        return getattr(fixpipe, name)
    raise AttributeError(name)


__all__ = [
    "Nd2NzParams",
    "LoadData2DParams",
    "LoadData",
    "MmadParams",
    "Mmad",
    "c0_of",
    "flush_cube",
]
