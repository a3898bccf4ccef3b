"""The fractal layouts' data movement: what one Nd2Nz copy (GM → L1) or LoadData (L1 → L0A/L0B)
writes where, as plans derived once per parameter combination and the numpy code that moves the
elements.

Why a module of its own: the cube instructions (`cube.py`) run this code on the bytes, and
lineage (`lineage.py`) runs the very same code on the digits of element numbers to learn which
GM element lands where. Layouts and units are described in `cube.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

FRACTAL_BYTES = 512  # one fractal: 16 rows of 32 B


def strided(arr: np.ndarray, offset: int, shape: tuple, strides: tuple) -> np.ndarray:
    """A strided view of the contiguous 1-D `arr` from element `offset` (bounds pre-checked).

    `np.ndarray(buffer=...)` instead of `as_strided`: ~0.3 µs instead of ~4 µs per view, and
    the cube path makes several views per instruction.
    """
    return np.ndarray(shape, arr.dtype, arr, offset * arr.itemsize, strides)


@dataclass(frozen=True, slots=True, eq=False)
class Nd2NzPlan:
    """What one Nd2NzParams combination copies, derived once (kernels repeat a few combos).

    Compared and hashed by identity (`nd2nz_plan` hands out one object per combination): its
    lineage map is cached per plan (lineage_maps.nd2nz_map), and hashing 15 fields took ~0.4 µs of
    every full-mode Nd2Nz copy.

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
def nd2nz_plan(
    nd: int, n: int, d: int, ms: int, sd: int, c0s: int, ns: int, dms: int, isz: int
) -> Nd2NzPlan | tuple | None:
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
    return Nd2NzPlan(
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


_V32 = np.dtype("V32")


def nd2nz_numbers(q: Nd2NzPlan, dst: np.ndarray, src: np.ndarray, src_off_b: int, isz: int) -> None:
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


@lru_cache(maxsize=4096)
def load_plan(rep: int, start: int, sstride: int, gap: int, transpose: bool, isz: int) -> tuple:
    """(s_need, d_need) in elements for one LoadData2DParams combination, or which parameter
    is wrong whatever the tensors ("repeat", "transpose"; checked in the order reported)."""
    if not 0 < rep <= 255:
        return "repeat"
    if transpose and isz != 2:
        return "transpose"
    fr_el = FRACTAL_BYTES // isz
    return (start + (rep - 1) * sstride + 1) * fr_el, ((rep - 1) * (1 + gap) + 1) * fr_el


def load_numbers(
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
    from src's element `first`: their bits (a half tile loaded into a bf16 tensor is
    reinterpreted, as the hardware moves bytes, not converted)."""
    if src.dtype != dst.dtype:
        src = src.view(dst.dtype)
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
