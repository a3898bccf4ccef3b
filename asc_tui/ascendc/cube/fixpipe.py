"""Fixpipe: L0C → GM (or L1) on PIPE_FIX, with NZ→ND, quantisation (`fixquant.py`) and ReLU.

The template configuration picks the output layout: `CFG_ROW_MAJOR` (the default) converts the
NZ tile to ND rows of dstStride elements (ndNum matrices, srcNdStride × 1 KB / dstNdStride
elements apart); `CFG_NZ` keeps it NZ: each column block of 16 (8 for a channel-split fp32
output, 32 for 8-bit outputs, whose fractal pairs merge) lands as mSize rows of that width,
blocks dstStride × 32 B apart.

Cost (cycles): fixpipe latency + max(L0C bytes / fixpipe bytes per cycle, GM bytes / the core's
GM write bandwidth). Reading L0C first completes any Mmads still pending on it (see mmad_numbers.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import Enum
from functools import partial

import numpy as np

from ...npu import state
from ...npu.fp16 import cast_into
from ...npu.numbers.offload import numbers
from ...npu.pipes import FIX
from ...npu.replay.blockindex import BlockIndex
from ...npu.replay.cubetrace import FIXPIPE
from .. import atomic
from ..dtypes import dtype_name, float32
from ..lineage import gm_written
from ..memory.tensors import GlobalTensor, LocalTensor
from ..mmad_numbers import flush_cube
from . import fixquant
from .fixquant import VECTOR_MODES, QuantMode_t, quant_types
from .fractal import strided
from .mmad import fail as _fail
from .mmad import gm_extent, need_mem


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


@dataclass
class FixpipeParamsV220:
    """L0C (NZ) → GM/L1: nSize columns × mSize rows; srcStride = m stride of the NZ tile (the
    padded row count, multiple of 16); dstStride = destination row stride in elements (ND) or
    column block stride in 32 B (NZ). deqScalar: a quantisation word (`fixquant.py`)."""

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


@dataclass(frozen=True)
class FixOut:
    """One L0C → dst transfer, whatever API spelled it (Fixpipe or DataCopy from CO1)."""

    n: int
    m: int
    sstride: int  # rows of the L0C tile (16-aligned)
    dstride: int  # ND: elements between rows; NZ: 32 B units between column blocks
    nz: bool
    split: bool  # fp32 channel split (NZ)
    q: QuantMode_t
    words: object  # a float scale, a uint64 word, or a per-column uint64 array
    relu: bool
    nd: tuple = (1, 0, 0)  # ndNum, srcNdStride (1 KB), dstNdStride (elements)
    words_from: object = None  # the local tensor per-column words are read from (sanitizer)


def Fixpipe(*args) -> None:
    """Fixpipe(dst_GM_or_L1, src_L0C, [cbufWorkspace,] FixpipeParamsV220) on PIPE_FIX; C++
    template arguments lead (`Fixpipe(float, float, CFG_NZ, dst, src, params)`)."""
    core = state.core
    if core.run.l2_record:
        return  # the L2 pre-pass only counts GM reads (npu/memory/l2.py); this moves none
    fr = sys._getframe(1)
    config, dst, src, cbuf, params = _operands(args, fr)
    if not isinstance(params, FixpipeParamsV220):
        _fail(f"Fixpipe expects FixpipeParamsV220, got {type(params).__name__}", fr)
    if config.format is CO2Layout.COLUMN_MAJOR:
        _fail("Fixpipe with COLUMN_MAJOR output exists only on dav-3510", fr)
    q = params.quantPre
    words = params.deqScalar
    vec = q in VECTOR_MODES
    if vec:
        words = vector_words(cbuf, int(params.nSize), ("l1",), "cbufWorkspace", fr)
    out = FixOut(
        int(params.nSize),
        int(params.mSize),
        int(params.srcStride),
        int(params.dstStride),
        config.format is CO2Layout.NZ,
        bool(params.isChannelSplit),
        q,
        words,
        bool(params.reluEn),
        (int(params.ndNum), int(params.srcNdStride), int(params.dstNdStride)),
        cbuf if vec else None,
    )
    fix_out(core, dst, src, out, "Fixpipe", fr)


def _operands(args: tuple, fr) -> tuple:
    """(config, dst, src, cbufWorkspace or None, params) from `Fixpipe`'s arguments: leading
    template arguments (the element types and a FixpipeConfig), then the operands."""
    i = 0
    while i < len(args) and not isinstance(args[i], (LocalTensor, GlobalTensor)):
        i += 1
    config = next((a for a in args[:i] if isinstance(a, FixpipeConfig)), CFG_ROW_MAJOR)
    rest = args[i:]
    if len(rest) == 3:
        return config, rest[0], rest[1], None, rest[2]
    if len(rest) == 4:
        return (config, *rest)
    _fail(f"Fixpipe takes (dst, src, [cbufWorkspace,] params), got {len(rest)} operands", fr)


def vector_words(t, n: int, mems: tuple, role: str, fr):
    """The per-column quantisation words of a vector mode: n uint64 of a local tensor."""
    if not isinstance(t, LocalTensor) or t.mem not in mems:
        _fail(f"a per-column (V…) quantPre needs {role}: a uint64 tensor in {'/'.join(mems).upper()}", fr)
    if t.dtype != np.uint64 or t.count < n:
        _fail(f"{role} must hold nSize={n} uint64 words, it is {t.count} x {dtype_name(t.dtype)}", fr)
    return t.arr[:n] if t.arr is not None else None


def fix_out(core, dst, src, p: FixOut, op: str, fr) -> None:
    """Check, move and convert one L0C → dst transfer on PIPE_FIX (and let the sanitizer see it)."""
    need_mem(src, ("l0c",), op, "src", fr)
    n, m, sstride, dstride = p.n, p.m, p.sstride, p.dstride
    if n <= 0 or m <= 0:
        _fail(f"{op} params (nSize={n}, mSize={m}): both must be positive", fr)
    if sstride < m or sstride % 16:
        _fail(
            f"{op} srcStride={sstride}: must be a multiple of 16 and at least mSize={m} (it is "
            "the padded row count of the L0C tile)",
            fr,
        )
    _check_types(p.q, src, dst, op, fr)
    isz = dst.dtype.itemsize
    nd_num, src_nd, dst_nd = p.nd
    if p.nz:
        c0 = _nz_width(p, dst, op, fr)
        if dstride * 32 < m * c0 * isz:
            _fail(
                f"{op} dstStride={dstride} (x 32 B) is smaller than one NZ column block of mSize={m} "
                f"rows x {c0} {dtype_name(dst.dtype)} ({m * c0 * isz} B): blocks would overlap",
                fr,
                hint="with an NZ output, dstStride is the distance between column blocks in 32 B units",
            )
        d_need = (-(-n // c0) - 1) * dstride * 32 // isz + m * c0
        nd_num = 1
    else:
        if dstride < n:
            _fail(f"{op} dstStride={dstride} is smaller than nSize={n}: output rows would overlap", fr)
        if nd_num < 1 or (nd_num > 1 and (src_nd < 1 or dst_nd < 1)):
            _fail(
                f"{op} ndNum={nd_num}, srcNdStride={src_nd}, dstNdStride={dst_nd}: "
                "several ND matrices need both strides",
                fr,
            )
        d_need = (nd_num - 1) * dst_nd + (m - 1) * dstride + n
    n1 = -(-n // 16)
    need_c = (nd_num - 1) * src_nd * 256 + n1 * sstride * 16
    if need_c > src.count:
        _fail(
            f"{op} reads {need_c * 4} B of L0C (nSize={n}, srcStride={sstride}) but the tensor "
            f"holds {src.count * 4} B",
            fr,
        )
    to_gm = type(dst) is GlobalTensor
    if to_gm:
        if d_need > gm_extent(dst):
            _fail(
                f"{op} writes {d_need} elements of GlobalTensor '{dst.name}' from element "
                f"{dst.start}, but only {gm_extent(dst)} are there",
                fr,
                hint="check mSize/nSize of the last (tail) tile",
            )
    elif not isinstance(dst, LocalTensor) or dst.mem not in ("l1", "ub"):
        _fail(f"{op} writes to GM or L1", fr)
    elif d_need > dst.count:
        _fail(f"{op} writes {d_need} elements but the local tensor holds {dst.count}", fr)
    if core.numeric:
        _numbers(core, dst, src, p, to_gm, fr, d_need)
    cfg = core.chip.cube_timing
    src_bytes, out_bytes = nd_num * m * n * src.dtype.itemsize, nd_num * m * n * isz
    cycles = src_bytes / cfg["fix_bpc"]
    if to_gm and out_bytes > 0:  # its bytes go through the HBM at the slower of it and the path
        core.gm_write += out_bytes
        fixed = cfg["fix_lat"] + atomic.extra_cycles(core)  # an atomic write: a read-modify-write
        core.work(FIX, core.gm_write_cycles(out_bytes, cycles, fixed), op, out_bytes, fr)
    else:
        core.work(FIX, cfg["fix_lat"] + cycles, op, out_bytes, fr)
    san = core.san
    if san is not None:
        san.access(core, src, 0, need_c, False, fr, span=True)
        if p.words_from is not None:
            san.access(core, p.words_from, 0, n, False, fr, span=True)
        san.access(core, dst, 0, d_need, True, fr, span=True)


def _numbers(core, dst, src, p: FixOut, to_gm: bool, fr, d_need: int) -> None:
    flush_cube(core, wait=False)
    if to_gm:
        gm_written(dst.buffer)
    elif core.lazy is not None:
        core.lazy.settle()
    d0 = dst.start if to_gm else 0
    words = p.words
    if isinstance(words, np.ndarray):
        words = words.copy()  # the tensor may be rewritten before the job runs
    fn = atomic.combine(core, dst.dtype, fr) if to_gm else None  # GM atomics (atomic.py)
    tr = core.trace
    if tr is not None:  # a template of block replay (npu/replay/cubetrace.py)
        if to_gm and fn is None and not isinstance(words, np.ndarray):
            tr.cover(len(core.rec))
            make = partial(_job, p, words, dst.dtype)
            tr.entries.append(
                (
                    FIXPIPE,
                    make,
                    dst.buffer,
                    dst.arr,
                    tr.starts(d0),
                    d_need,
                    src.offset,
                    src.dtype,
                    src.count,
                    gm_written,
                )
            )
        else:
            tr.bad = True
        if type(d0) is BlockIndex:  # its own value, unpinned: the trace keeps every block's
            d0 = d0.v
    job = _job(p, words, dst.dtype, dst.arr, d0, src.arr, fn)
    if to_gm:  # on the numbers thread, after the tile's Mmads (npu/numbers/offload.py)
        numbers.submit(job, dst.buffer, lane=core)
    else:
        numbers.drain()
        job()


def _job(p: FixOut, words, dtype, darr, d0: int, sarr, fn=None):
    """The conversion of L0C array `sarr` into `darr` from element `d0`, as a job."""
    isz = dtype.itemsize
    if p.nz or not fixquant.is_plain(p.q, words) or p.nd[0] > 1:
        return partial(_convert_any, darr, d0, dtype, sarr, p, words, isz, fn)
    n, m, n1 = p.n, p.m, -(-p.n // 16)
    sv = strided(sarr, 0, (m, n1, 16), (64, p.sstride * 64, 4))
    if p.n == n1 * 16:  # whole fractal columns: NZ → ND without a reshape's copy
        dv = strided(darr, d0, (m, n1, 16), (p.dstride * isz, 16 * isz, isz))
    else:
        dv = strided(darr, d0, (m, n), (p.dstride * isz, isz))
    scale = words if p.q is QuantMode_t.DEQF16 else None
    return partial(_convert, dv, sv, scale, p.relu, fn)


def _check_types(q: QuantMode_t, src, dst, op: str, fr) -> None:
    if q is QuantMode_t.NoQuant:
        if dst.dtype != src.dtype:
            _fail(
                f"{op} from {dtype_name(src.dtype)} to {dtype_name(dst.dtype)} needs a "
                f"conversion: set quantPre (e.g. QuantMode_t.F322F16)",
                fr,
            )
        return
    acc, outs = quant_types(q)
    if src.dtype != acc or dst.dtype not in outs:
        _fail(
            f"{op} quantPre={q.name} converts {dtype_name(acc)} → "
            f"{' or '.join(dtype_name(o) for o in outs)}, but the tensors are "
            f"{dtype_name(src.dtype)} → {dtype_name(dst.dtype)}",
            fr,
        )


def _nz_width(p: FixOut, dst, op: str, fr) -> int:
    """Elements per row of one NZ output column block: 16; 8 for a channel-split fp32 output;
    32 for 8-bit outputs (two fractals merge; an odd last one stays 16 wide)."""
    if p.split and dst.dtype != float32:
        _fail(f"{op} channel split splits fp32 outputs, not {dtype_name(dst.dtype)}", fr)
    c0 = 8 if p.split else 32 if dst.dtype.itemsize == 1 else 16
    step = min(c0, 16)
    if p.n % step:
        _fail(
            f"{op} with an NZ output writes whole column blocks: nSize={p.n} is not a multiple of {step}", fr
        )
    return c0


def _convert(dv: np.ndarray, sv: np.ndarray, scale, relu: bool, atomic_fn=None) -> None:
    """The plain conversions' numbers: the NZ L0C view `sv` (m × n1 × 16) cast (and scaled by
    a float) into `dv`: m × n1 × 16, or m × n when n is not whole fractals (the reshape that
    copies is made here: L0C is final only once the jobs before ran); combined with GM's
    data by `atomic_fn` when atomics were on (atomic.py)."""
    if dv.ndim == 2:
        m, n = dv.shape
        sv = sv.reshape(m, -1)[:, :n]
    if scale is not None:
        sv = sv.astype(np.float32) * np.float32(scale)
    if relu:
        sv = np.maximum(sv, 0)
    if atomic_fn is not None:
        sv = atomic_fn(dv, sv.astype(dv.dtype, copy=False))
    cast_into(dv, sv)  # = dv[...] = sv.astype(dv.dtype), without the copy (fp32 → fp16 in C)


def _put(view: np.ndarray, y: np.ndarray, atomic_fn) -> None:
    """view[...] = y, or combined with what GM holds when atomics are on."""
    view[...] = y if atomic_fn is None else atomic_fn(view, y.astype(view.dtype, copy=False))


def _convert_any(darr, d0: int, dtype, sarr, p: FixOut, words, isz: int, atomic_fn=None) -> None:
    """Every other conversion: gather each ND block from L0C, quantise it, lay it out."""
    n, m, n1 = p.n, p.m, -(-p.n // 16)
    nd_num, src_nd, dst_nd = p.nd
    for i in range(nd_num):
        sv = strided(sarr, i * src_nd * 256, (m, n1, 16), (64, p.sstride * 64, 4))
        x = sv.reshape(m, n1 * 16)[:, :n]
        y = fixquant.apply(x, p.q, words, p.relu, dtype)
        if not p.nz:
            _put(strided(darr, d0 + i * dst_nd, (m, n), (p.dstride * isz, isz)), y, atomic_fn)
            continue
        c0 = 8 if p.split else 32 if isz == 1 else 16
        step_b, whole = p.dstride * 32, n // c0
        if whole:
            dv = strided(darr, d0, (whole, m, c0), (step_b, c0 * isz, isz))
            _put(dv, y[:, : whole * c0].reshape(m, whole, c0).transpose(1, 0, 2), atomic_fn)
        if n > whole * c0:  # 8-bit output with an odd fractal count: the last stays 16 wide
            _put(
                strided(darr, d0 + whole * step_b // isz, (m, 16), (16 * isz, isz)),
                y[:, whole * c0 :],
                atomic_fn,
            )


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
