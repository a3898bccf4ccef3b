"""LoadData with LoadData3DParamsV2 (PIPE_MTE1): img2col from an L1 feature map into L0A / L0B.

The L1 source is a feature map in NC1HWC0 layout: channelSize / C0 blocks of l1H × l1W × C0
(C0 = 32 B of elements). img2col makes a matrix X with one row per kernel position (Hout × Wout,
row-major; the map padded by padList = [left, right, top, bottom] with padValue, strided and
dilated, filter + 256 when filterSizeW/H) and one column per (channel block, kernel row, kernel
column, C0) — the usual convolution lowering. The load takes the rows [mStartPt, + mExtension)
and columns [kStartPt, + kExtension) of X and writes them in the layout Mmad reads:
L0A gets X (or Xᵀ with enTranspose) as ZZ fractals (16 rows × C0, row-major over fractals);
L0B gets X as ZN fractals (X's rows are Mmad's K, its columns N: [16 n][C0 k] fractals, K
groups outer). Fractal padding the matrix does not cover is left as it was.

Timing: mte1 latency + written bytes / the L0 port's bytes per cycle, as LoadData.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...npu.pipes import MTE1
from ..dtypes import is_int4, nbytes_of
from ..int4 import as_bytes, move_arrays, pack
from ..lineage_maps import moved_map
from .fractal import strided
from .mmad import c0_of, past_tensor
from .mmad import fail as _fail


@dataclass
class LoadData3DParamsV2:
    """img2col geometry (see the module docstring); the C++ template argument is the element
    type, implied here by the tensors."""

    padList: list = field(default_factory=lambda: [0, 0, 0, 0])
    l1H: int = 0
    l1W: int = 0
    channelSize: int = 0
    kExtension: int = 0
    mExtension: int = 0
    kStartPt: int = 0
    mStartPt: int = 0
    strideW: int = 1
    strideH: int = 1
    filterW: int = 1
    filterH: int = 1
    dilationFilterW: int = 1
    dilationFilterH: int = 1
    enTranspose: bool = False
    enSmallK: bool = False
    padValue: object = 0
    filterSizeW: bool = False
    filterSizeH: bool = False
    fMatrixCtrl: bool = False


@dataclass(frozen=True)
class _Geometry:
    c1: int
    h: int
    w: int
    c0: int
    kh: int
    kw: int
    hout: int
    wout: int


def _geometry(p: LoadData3DParamsV2, c0: int, fr) -> _Geometry:
    h, w, ch = int(p.l1H), int(p.l1W), int(p.channelSize)
    if h <= 0 or w <= 0 or ch <= 0:
        _fail(f"LoadData3DParamsV2(l1H={h}, l1W={w}, channelSize={ch}): all must be positive", fr)
    if ch % c0:
        _fail(f"LoadData3DParamsV2.channelSize={ch} is not a multiple of C0={c0} (32 B of elements)", fr)
    kh = int(p.filterH) + (256 if p.filterSizeH else 0)
    kw = int(p.filterW) + (256 if p.filterSizeW else 0)
    left, right, top, bottom = (int(v) for v in p.padList)
    eff_h = (kh - 1) * int(p.dilationFilterH) + 1
    eff_w = (kw - 1) * int(p.dilationFilterW) + 1
    if min(int(p.strideH), int(p.strideW), kh, kw) <= 0:
        _fail("LoadData3DParamsV2: strides and filter sizes must be positive", fr)
    hout = (h + top + bottom - eff_h) // int(p.strideH) + 1
    wout = (w + left + right - eff_w) // int(p.strideW) + 1
    if hout <= 0 or wout <= 0:
        _fail(
            f"LoadData3DParamsV2: the kernel does not fit the padded {h}x{w} map (Hout={hout}, Wout={wout})",
            fr,
        )
    return _Geometry(ch // c0, h, w, c0, kh, kw, hout, wout)


def img2col(fmap: np.ndarray, p: LoadData3DParamsV2, g: _Geometry) -> np.ndarray:
    """Rows [mStartPt, + mExtension) × columns [kStartPt, + kExtension) of X, from the
    (C1, H, W, C0) map."""
    left, right, top, bottom = (int(v) for v in p.padList)
    padded = np.pad(
        fmap,
        ((0, 0), (top, bottom), (left, right), (0, 0)),
        constant_values=np.asarray(p.padValue, fmap.dtype),
    )
    m = np.arange(int(p.mStartPt), int(p.mStartPt) + int(p.mExtension))
    kb = np.arange(int(p.kStartPt) // g.c0, (int(p.kStartPt) + int(p.kExtension)) // g.c0)
    c1, rest = np.divmod(kb, g.kh * g.kw)
    fh, fw = np.divmod(rest, g.kw)
    oh, ow = np.divmod(m, g.wout)
    hh = oh[:, None] * int(p.strideH) + fh[None, :] * int(p.dilationFilterH)
    ww = ow[:, None] * int(p.strideW) + fw[None, :] * int(p.dilationFilterW)
    return padded[c1[None, :], hh, ww, :].reshape(len(m), len(kb) * g.c0)


def load3d_v2(core, dst, src, p: LoadData3DParamsV2, fr) -> None:
    """LoadData(dst_L0A|L0B, src_L1, LoadData3DParamsV2): called by `LoadData`."""
    c0 = c0_of(src.dtype)
    g = _geometry(p, c0, fr)
    m_ext, k_ext, k_start = int(p.mExtension), int(p.kExtension), int(p.kStartPt)
    if m_ext <= 0 or k_ext <= 0 or m_ext % 16:
        _fail(
            f"LoadData3DParamsV2.mExtension={m_ext} must be a positive multiple of 16 (whole fractal rows)",
            fr,
        )
    if k_start % c0 or k_ext % c0:
        _fail(f"LoadData3DParamsV2 kStartPt={k_start}, kExtension={k_ext}: must be multiples of C0={c0}", fr)
    if int(p.mStartPt) + m_ext > g.hout * g.wout:
        _fail(
            f"LoadData3DParamsV2 takes img2col rows up to {int(p.mStartPt) + m_ext} but the kernel has "
            f"{g.hout}x{g.wout} = {g.hout * g.wout} positions",
            fr,
        )
    if k_start + k_ext > g.c1 * g.kh * g.kw * c0:
        _fail(
            f"LoadData3DParamsV2 takes img2col columns up to {k_start + k_ext} but there are "
            f"{g.c1 * g.kh * g.kw * c0} (channelSize x filter)",
            fr,
        )
    s_need = g.c1 * g.h * g.w * c0
    if s_need > src.count:
        _fail(
            f"LoadData3DParamsV2 reads a {g.c1}x{g.h}x{g.w}x{c0} map but the L1 tensor holds {src.count}", fr
        )
    to_a = dst.mem == "l0a"
    transpose = to_a and bool(p.enTranspose)
    rows, cols = (k_ext, m_ext) if transpose else (m_ext, k_ext)
    shape, last = _extent(rows, cols, c0, to_a)
    full = shape[0] * shape[1] * 16 * c0
    if last > dst.count:  # hardware writes on into the memory; the twin follows and warns
        dst = past_tensor(core, dst, full, "LoadData3DParamsV2", fr)
    s_bytes, full_bytes = nbytes_of(src.dtype, s_need), nbytes_of(dst.dtype, full)
    if core.numeric and not _lazily(core, dst, src, p, g, s_need, full, shape, to_a, transpose):
        fmap, darr, packed = move_arrays(core, src, s_bytes, dst, full_bytes)
        _move(fmap[:s_need], darr, p, g, shape, to_a, transpose)
        if packed:
            dst.arr[:full_bytes] = pack(darr)
    cfg = core.chip.cube_timing
    nbytes = nbytes_of(dst.dtype, rows * cols)
    bpc = cfg["l0a_bpc"] if to_a else cfg["l0b_bpc"]
    core.work(MTE1, cfg["mte1_lat"] + nbytes / bpc, "LoadData3Dv2", nbytes, fr)
    san = core.san
    if san is not None:
        san.access(core, as_bytes(src), 0, s_bytes, False, fr, span=True)
        san.access(core, as_bytes(dst), 0, nbytes_of(dst.dtype, last), True, fr, span=True)


def _move(
    fmap: np.ndarray, darr: np.ndarray, p, g: _Geometry, shape: tuple, to_a: bool, transpose: bool
) -> None:
    """The load itself: img2col of the (C1, H, W, C0) map `fmap`, written into `darr`."""
    x = img2col(fmap.reshape(g.c1, g.h, g.w, g.c0), p, g)
    _write(darr, x.T if transpose else x, shape, g.c0, to_a)


def _lazily(
    core, dst, src, p, g: _Geometry, s_need: int, full: int, shape, to_a: bool, transpose: bool
) -> bool:
    """Record the load from a lazy L1 region as a lazy L0 region (ascendc/lineage.py): its map
    is img2col run on the region's map; False if the bytes must move. Not for int4b_t, nor
    for padding of a value other than zero (a map holds GM elements and written zeros)."""
    lz = core.lazy
    if lz is None or is_int4(src.dtype) or dst.dtype != src.dtype:
        return False
    if any(int(v) for v in p.padList) and np.asarray(p.padValue, src.dtype) != 0:
        return False
    isz = src.dtype.itemsize
    e = lz.find("l1", src.offset, s_need * isz)
    if e is None or e.gm.dtype != src.dtype:
        return False
    key = (  # what img2col and the layout read (`_geometry` holds the map's and kernel's sizes)
        g,
        tuple(int(v) for v in p.padList),
        *(int(v) for v in (p.mStartPt, p.mExtension, p.kStartPt, p.kExtension, p.strideH, p.strideW)),
        int(p.dilationFilterH),
        int(p.dilationFilterW),
        shape,
        to_a,
        transpose,
    )

    def move(values: np.ndarray) -> np.ndarray:  # untouched elements stay unwritten (all ones)
        out = np.full(full, np.iinfo(values.dtype).max, values.dtype)
        _move(values, out, p, g, shape, to_a, transpose)
        return out

    lmap = moved_map(e.map, (src.offset - e.start) // isz, s_need, key, move)
    lz.add(dst.mem, dst.offset, e.gm, e.buffer, e.orig, lmap)
    if lmap.hole is not None:  # L1 holds its holes as bytes: they move now (the rest stays lineage)
        _move(src.arr[:s_need], dst.arr, p, g, shape, to_a, transpose)
    if core.trace is not None:  # lineage only: no bytes move (npu/replay/cubetrace.py)
        core.trace.cover(len(core.rec))
    return True


def _extent(rows: int, cols: int, c0: int, to_a: bool) -> tuple[tuple[int, int], int]:
    """(fractal grid, elements from the start to the last one written) of a rows × cols matrix:
    L0A fractals hold 16 rows × C0 columns, L0B fractals C0 rows × 16 columns (stored [16][C0])."""
    fr_el = 16 * c0
    if to_a:
        r1, q1 = -(-rows // 16), -(-cols // c0)
        tail = (rows - 1 - (r1 - 1) * 16) * c0 + cols - 1 - (q1 - 1) * c0
    else:
        r1, q1 = -(-rows // c0), -(-cols // 16)
        tail = (cols - 1 - (q1 - 1) * 16) * c0 + rows - 1 - (r1 - 1) * c0
    return (r1, q1), (r1 * q1 - 1) * fr_el + tail + 1


def _write(darr: np.ndarray, mat: np.ndarray, shape: tuple, c0: int, to_a: bool) -> None:
    """`mat` into L0 fractals: ZZ ([16 rows][C0 cols], row-major over fractals) for L0A; ZN
    ([16 cols][C0 rows], row groups outer) for L0B; uncovered padding keeps its bytes."""
    r1, q1 = shape
    isz = darr.itemsize
    fr_b = 16 * c0 * isz
    if to_a:  # [i1, j1, r, c] = mat[i1 * 16 + r, j1 * C0 + c]
        dv = strided(darr, 0, (r1, q1, 16, c0), (q1 * fr_b, fr_b, c0 * isz, isz))
        full = np.ascontiguousarray(dv.transpose(0, 2, 1, 3)).reshape(r1 * 16, q1 * c0)
        full[: mat.shape[0], : mat.shape[1]] = mat
        dv[...] = full.reshape(r1, 16, q1, c0).transpose(0, 2, 1, 3)
    else:  # [k1, n1, r, c] = mat[k1 * C0 + c, n1 * 16 + r]
        dv = strided(darr, 0, (r1, q1, 16, c0), (q1 * fr_b, fr_b, c0 * isz, isz))
        full = np.ascontiguousarray(dv.transpose(0, 3, 1, 2)).reshape(r1 * c0, q1 * 16)
        full[: mat.shape[0], : mat.shape[1]] = mat
        dv[...] = full.reshape(r1, c0, q1, 16).transpose(0, 2, 3, 1)
