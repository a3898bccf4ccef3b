"""Host tiling of the high-level Matmul: `TCubeTiling` and `matmul_tiling::MultiCoreMatmulTiling`
/ `MatmulApiTiling` (shape + types + buffer space → TCubeTiling).

How C is split over cores follows CANN's tiling, since samples rely on which axis it splits
(their kernels offset A or B by blockIdx × singleCoreM/N). With SetShape (what samples do) that
is its general search (matmul_dims.py: least L1 load per core). Without it, on the 910B family
and for a large enough problem ("split MN": M ≥ 128 and M·N > 26214 per core), each
factorisation mDim × nDim of the core count is scored on base blocks of 128 × 256 (or the
SetFixSplit sizes) — the highest compute per byte moved first, then (at equal cycles) the higher
band ratio — and N is rounded up to 256 bytes when that still leaves work for every core. The
single-core shape is ceil(M/mDim) × ceil(N/nDim). Base block sizes and L1 steps are the twin's
own choice (SetFixSplit's when given), not CANN's L0/L1 factor search.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from enum import Enum

import numpy as np

from ...npu.errors import TilingError
from .. import dtypes
from ..cube.mmad import c0_of
from ..dtypes import as_dtype, float32, half, int8, int32
from ..enums import TPosition
from .dims import split_dims


class CubeFormat(Enum):
    ND = "ND"
    NZ = "NZ"
    ND_ALIGN = "ND_ALIGN"
    SCALAR = "SCALAR"
    VECTOR = "VECTOR"


class MatrixTraverse:
    """`matmul_tiling::MatrixTraverse`: which way Iterate walks C's base blocks (SetTraverse)."""

    NOSET = 0
    FIRSTM = 1  # iterateOrder 0: along N within a row of blocks, then the next M
    FIRSTN = 2  # iterateOrder 1


class _BF16Later(type):
    """DT_BF16 and DT_BFLOAT16 are made on first use (dtypes.py: ml_dtypes is slow to import)."""

    def __getattr__(cls, name):
        if name in ("DT_BF16", "DT_BFLOAT16"):
            return dtypes.bfloat16
        raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}")


class DataType(metaclass=_BF16Later):
    """`matmul_tiling::DataType::DT_*`: the element types the tiling takes, as twin dtypes
    (and DT_BF16 / DT_BFLOAT16, from the metaclass)."""

    DT_FLOAT16 = half
    DT_FLOAT = float32
    DT_INT8 = int8
    DT_INT32 = int32


@dataclass
class TCubeTiling:
    """Host tiling of one matmul: Ascend C's TCubeTiling, its 50 int32 fields in order (so that
    sizeof and a word-by-word copy agree with the real struct). A C++ struct: a kernel may
    declare one and fill it word by word from GM (`CopyTiling`)."""

    usedCoreNum: int = 0
    M: int = 0
    N: int = 0
    Ka: int = 0
    Kb: int = 0
    singleCoreM: int = 0
    singleCoreN: int = 0
    singleCoreK: int = 0
    baseM: int = 0
    baseN: int = 0
    baseK: int = 0
    depthA1: int = 2
    depthB1: int = 2
    stepM: int = 1
    stepN: int = 1
    isBias: int = 0
    transLength: int = 0
    iterateOrder: int = 0  # 0: M outer (walk N inside), 1: N outer
    shareMode: int = 0
    shareL1Size: int = 0
    shareL0CSize: int = 0
    shareUbSize: int = 0
    batchM: int = 1
    batchN: int = 1
    singleBatchM: int = 1
    singleBatchN: int = 1
    stepKa: int = 1
    stepKb: int = 1
    depthAL1CacheUB: int = 0
    depthBL1CacheUB: int = 0
    dbL0A: int = 2
    dbL0B: int = 2
    dbL0C: int = 1
    ALayoutInfoB: int = 0
    ALayoutInfoS: int = 0
    ALayoutInfoN: int = 0
    ALayoutInfoG: int = 0
    ALayoutInfoD: int = 0
    BLayoutInfoB: int = 0
    BLayoutInfoS: int = 0
    BLayoutInfoN: int = 0
    BLayoutInfoG: int = 0
    BLayoutInfoD: int = 0
    CLayoutInfoB: int = 0
    CLayoutInfoS1: int = 0
    CLayoutInfoN: int = 0
    CLayoutInfoG: int = 0
    CLayoutInfoS2: int = 0
    BatchNum: int = 0
    mxTypePara: int = 0


TILING_FIELDS = tuple(f.name for f in fields(TCubeTiling))


def up(x: int, a: int) -> int:
    """x rounded up to a multiple of a (fractal and buffer sizes)."""
    return -(-x // a) * a


def tiling_footprint(t: TCubeTiling, dtype=half) -> dict[str, int]:
    """Bytes of L1/L0A/L0B/L0C (and BiasTable) the tiling needs, padded to fractals."""
    isz = np.dtype(dtype).itemsize
    c0 = c0_of(dtype)
    bm, bn, bk = up(t.baseM, 16), up(t.baseN, 16), up(t.baseK, c0)
    a1 = bm * bk * t.stepKa * isz
    b1 = bk * t.stepKb * bn * isz
    return {
        "l1": a1 * t.depthA1 // max(t.stepKa, 1) + b1 * t.depthB1 // max(t.stepKb, 1),
        "l0a": bm * bk * isz * t.dbL0A,
        "l0b": bk * bn * isz * t.dbL0B,
        "l0c": bm * bn * 4 * t.dbL0C,
        "bt": bn * 4 if t.isBias else 0,
    }


def check_tiling(t: TCubeTiling, chip_memory: dict[str, int], dtype=half) -> list[str]:
    """Reasons the tiling does not fit the chip's memories (empty when it fits)."""
    out = []
    for mem, need in tiling_footprint(t, dtype).items():
        cap = chip_memory.get(mem, 0)
        if need > cap:
            out.append(
                f"{mem.upper()} needs {need} B (baseM={t.baseM} baseN={t.baseN} "
                f"baseK={t.baseK} stepKa={t.stepKa} stepKb={t.stepKb}) but has {cap} B"
            )
    if t.depthA1 % t.stepKa or t.depthB1 % t.stepKb:
        out.append("depthA1/depthB1 must be multiples of stepKa/stepKb")
    if max(t.stepKa, t.stepKb) % min(t.stepKa, t.stepKb):
        out.append("the larger of stepKa/stepKb must be a multiple of the smaller")
    return out


_DEFAULT_MEMORY = {"l1": 524288, "l0a": 65536, "l0b": 65536, "l0c": 131072, "bt": 1024, "ub": 196608}
_SPLIT_MN_AREA = 26214  # M·N per core above which CANN splits M and N by compute intensity


def _platform_memory(platform) -> tuple[dict[str, int], bool]:
    """(memory sizes, whether CANN's 910B split rules apply) of a PlatformAscendC or a dict."""
    if platform is None:
        return dict(_DEFAULT_MEMORY), True
    if isinstance(platform, dict):
        return dict(platform), True
    from ..platform import CoreMemType, SocVersion

    keys = {"l1": CoreMemType.L1, "l0a": CoreMemType.L0_A, "l0b": CoreMemType.L0_B, "l0c": CoreMemType.L0_C,
            "bt": CoreMemType.BT, "ub": CoreMemType.UB}  # fmt: skip
    return {k: platform.mem_size(v) for k, v in keys.items()}, platform.soc == SocVersion.ASCEND910B


@dataclass
class _Operand:
    pos: object = TPosition.GM
    fmt: CubeFormat = CubeFormat.ND
    dtype: object = half
    trans: bool = False


class MultiCoreMatmulTiling:
    """`matmul_tiling::MultiCoreMatmulTiling(platform)`: shape, types and buffer space → TCubeTiling.

    `platform` is a PlatformAscendC (its chip's memory sizes) or, from Python, a dict of
    memory sizes. `GetTiling()` returns the TCubeTiling (raising TilingError when none fits);
    `GetTiling(out)`, as in C++, fills `out` and returns 0, or -1 when no tiling fits.
    """

    def __init__(self, platform=None):
        self.memory, self.cann_split = _platform_memory(platform)
        self.dim = 24
        self.m = self.n = self.k = 0
        self.org: tuple[int, int, int, int] | None = None
        self.a, self.b, self.c, self.bias_t = (
            _Operand(),
            _Operand(),
            _Operand(dtype=float32),
            _Operand(dtype=float32),
        )
        self.bias = False
        self.fixed: tuple[int, int, int] | None = None
        self.step_ka = self.step_kb = 4
        self.error = ""
        self.single = (-1, -1, -1)  # SetSingleShape: one core's M, N, K (-1: not fixed)
        self.traverse = MatrixTraverse.NOSET
        self.last: TCubeTiling | None = None

    @property
    def dtype(self):
        return self.a.dtype

    # ---- set-up (the C++ setters) ----------------------------------------------------------------
    def SetDim(self, n: int) -> int:
        self.dim = int(n)
        return 0

    def _set(self, op: _Operand, pos, fmt, dtype, isTrans) -> int:
        op.pos, op.fmt, op.dtype, op.trans = pos, fmt, as_dtype(dtype), bool(isTrans)
        return 0

    def SetAType(self, pos=TPosition.GM, fmt=CubeFormat.ND, dtype=half, isTrans=False):
        return self._set(self.a, pos, fmt, dtype, isTrans)

    def SetBType(self, pos=TPosition.GM, fmt=CubeFormat.ND, dtype=half, isTrans=False):
        return self._set(self.b, pos, fmt, dtype, isTrans)

    def SetCType(self, pos=TPosition.GM, fmt=CubeFormat.ND, dtype=float32, isTrans=False):
        return self._set(self.c, pos, fmt, dtype, isTrans)

    def SetBiasType(self, pos=TPosition.GM, fmt=CubeFormat.ND, dtype=float32, isTrans=False):
        return self._set(self.bias_t, pos, fmt, dtype, isTrans)

    def SetShape(self, m: int, n: int, k: int) -> int:
        self.m, self.n, self.k = int(m), int(n), int(k)
        return 0

    def SetOrgShape(self, m: int, n: int, ka: int, kb: int | None = None) -> int:
        self.org = (int(m), int(n), int(ka), int(ka if kb is None else kb))
        return 0

    def SetBias(self, flag: bool = True) -> int:
        self.bias = bool(flag)
        return 0

    EnableBias = SetBias

    def SetBufferSpace(self, l1Size: int = -1, l0CSize: int = -1, ubSize: int = -1, btSize: int = -1) -> int:
        """Bytes the Matmul may use (-1: the whole memory of the chip)."""
        for key, v in (("l1", l1Size), ("l0c", l0CSize), ("ub", ubSize), ("bt", btSize)):
            if int(v) >= 0:
                self.memory[key] = int(v)
        return 0

    def SetFixSplit(self, baseM: int = -1, baseN: int = -1, baseK: int = -1) -> int:
        self.fixed = (int(baseM), int(baseN), int(baseK))
        return 0

    def SetSingleShape(self, singleMIn: int = -1, singleNIn: int = -1, singleKIn: int = -1) -> int:
        """Fix one core's share (no multi-core search: usedCoreNum is SetDim's)."""
        self.single = (int(singleMIn), int(singleNIn), int(singleKIn))
        return 0

    def SetTraverse(self, traverse: int) -> int:
        self.traverse = int(traverse)
        return 0

    def GetSingleShape(self, m, n, k) -> int:
        """The single-core shape of the last GetTiling into `m`, `n`, `k` (references)."""
        t = self.last or self._tiling()
        for ref, v in ((m, t.singleCoreM), (n, t.singleCoreN), (k, t.singleCoreK)):
            ref.set(v)
        return 0

    def GetBaseM(self) -> int:
        return (self.last or self._tiling()).baseM

    def GetBaseN(self) -> int:
        return (self.last or self._tiling()).baseN

    def GetBaseK(self) -> int:
        return (self.last or self._tiling()).baseK

    def SetStepK(self, stepKa: int, stepKb: int | None = None) -> None:
        """Base-K slices per L1 copy of A and of B (bigger copies hide DMA latency)."""
        self.step_ka = int(stepKa)
        self.step_kb = int(stepKb if stepKb is not None else stepKa)

    # ---- the tiling ------------------------------------------------------------------------------
    def GetTiling(self, out=None):
        if out is None:
            self.last = self._tiling()
            return self.last
        try:
            t = self.last = self._tiling()
        except TilingError as exc:
            self.error = str(exc)
            return -1
        for name in TILING_FIELDS:
            setattr(out, name, getattr(t, name))
        return 0

    def _shape(self) -> tuple[int, int, int]:
        m, n, k = self.m, self.n, self.k
        if min(m, n, k) <= 0 and self.org is not None:
            m, n, k = self.org[:3]
        if min(m, n, k) <= 0:
            raise TilingError(f"SetShape({m}, {n}, {k}): all dimensions must be positive")
        return m, n, k

    def _tiling(self) -> TCubeTiling:
        m, n, k = self._shape()
        org_m, org_n, org_ka, org_kb = self.org or (m, n, k, k)
        c0 = c0_of(self.dtype)
        bm, bn, bk = self.fixed or (-1, -1, -1)
        sm, sn, sk, used, split_base = self._cores(m, n, k, bm, bn)
        if split_base is not None:
            bm, bn, bk = split_base
        elif bm <= 0 or bn <= 0 or bk <= 0:
            bm0, bn0 = (128, 256) if sn >= sm else (256, 128)
            bm = bm if bm > 0 else min(bm0, up(sm, 16))
            bn = bn if bn > 0 else min(bn0, up(sn, 16))
            bk = bk if bk > 0 else min(64 * 2 // np.dtype(self.dtype).itemsize, up(sk, c0))
        order = max(0, self.traverse - 1)
        k_slices = -(-sk // bk)
        sa, sb = max(1, min(self.step_ka, k_slices)), max(1, min(self.step_kb, k_slices))
        t = TCubeTiling(
            usedCoreNum=used, M=org_m, N=org_n, Ka=org_ka, Kb=org_kb, singleCoreM=sm, singleCoreN=sn,
            singleCoreK=sk, baseM=bm, baseN=bn, baseK=bk, depthA1=2 * sa, depthB1=2 * sb, stepKa=sa,
            stepKb=sb, isBias=int(self.bias), iterateOrder=order, dbL0A=2, dbL0B=2, dbL0C=1,
        )  # fmt: skip
        while check_tiling(t, self.memory, self.dtype) and max(t.stepKa, t.stepKb) > 1:
            sa, sb = t.stepKa, t.stepKb
            sa, sb = (max(1, sa // 2), sb) if sa * bm >= sb * bn else (sa, max(1, sb // 2))
            t = replace(t, stepKa=sa, stepKb=sb, depthA1=2 * sa, depthB1=2 * sb)
        bad = check_tiling(t, self.memory, self.dtype)
        if bad:
            raise TilingError("no tiling fits: " + "; ".join(bad))
        return t

    def _cores(self, m: int, n: int, k: int, fix_m: int, fix_n: int):
        """(singleCoreM, singleCoreN, singleCoreK, usedCoreNum, split-MN base block or None)."""
        if max(self.single) > 0:  # SetSingleShape: the user's share per core, SetDim's core count
            sm, sn, sk = (v if v > 0 else d for v, d in zip(self.single, (m, n, k)))
            return sm, sn, sk, self.dim, None
        given = min(self.m, self.n, self.k) > 0  # SetShape: CANN's general split, never split-MN
        split = self._split_mn(m, n, fix_m, fix_n) if self.dim > 1 and not given else None
        if split is not None:
            (m_dim, n_dim), base = split
            sm, sn = -(-m // m_dim), self._single_n(n, n_dim)
        else:
            m_dim, n_dim, base = 1, 1, None
            if self.dim > 1:
                mem, c0 = self.memory, c0_of(self.dtype)
                trans = (self.a.trans, self.b.trans)
                m_dim, n_dim = split_dims(m, n, k, c0, self.dim, mem["l1"], mem["l0c"], mem["l0a"], *trans)
            sm, sn = -(-m // m_dim), -(-n // n_dim)
        return sm, sn, k, -(-m // sm) * -(-n // sn), base  # fewer cores when rounding idles one

    def _split_mn(self, m: int, n: int, fix_m: int, fix_n: int):
        """CANN's 910B multi-core split for big M·N: ((mDim, nDim), (baseM, baseN, baseK)), or None."""
        if not self.cann_split or m < 128 or m * n <= _SPLIT_MN_AREA * self.dim:
            return None
        bits = np.dtype(self.dtype).itemsize * 8
        bm = fix_m if fix_m > 0 else (256 if self.memory.get("l0c") == 262144 else 128)
        bn = fix_n if fix_n > 0 else 256
        bk = min(128 * 8 // bits, up(self.k or self._shape()[2], c0_of(self.dtype)))
        a_bytes = b_bytes = bits // 8
        ranked = []
        for m_dim in (d for d in range(1, self.dim + 1) if self.dim % d == 0):
            n_dim = self.dim // m_dim
            sm, sn = -(-m // m_dim), self._single_n(n, n_dim)
            cycles = memory = 0.0
            for rows, cols, count in _blocks(sm, sn, bm, bn):
                cycles += rows * cols * bk / (16 * 16 * (256 // bits)) * count
                memory += (rows * bk * a_bytes + cols * bk * b_bytes) * count
            band = ((self.dim - m_dim) * bm + (self.dim - n_dim) * bn) / ((bm + bn) * self.dim)
            ranked.append((cycles / memory if memory else 0.0, cycles, band, (m_dim, n_dim)))
        best = ranked[0]
        for cand in ranked[1:]:
            if _better(cand, best):
                best = cand
        return best[3], (bm, bn, bk)

    def _single_n(self, n: int, n_dim: int) -> int:
        """ceil(N/nDim), rounded up to 256 bytes of B when B is not transposed and that still
        leaves every one of the nDim cores some columns."""
        sn = -(-n // n_dim)
        align = 256 // np.dtype(self.b.dtype).itemsize
        if self.b.trans or n_dim <= 1 or n % align:
            return sn
        aligned = up(sn, align)
        return aligned if aligned < -(-n // (n_dim - 1)) else sn


def _blocks(sm: int, sn: int, bm: int, bn: int):
    """(rows, cols, count) of the full, N-tail, M-tail and corner base blocks of sm × sn."""
    mm, tm = divmod(sm, bm)
    mn, tn = divmod(sn, bn)
    parts = [
        (bm, bn, mm * mn),
        (bm, tn, mm if tn else 0),
        (tm, bn, mn if tm else 0),
        (tm, tn, 1 if tm and tn else 0),
    ]
    return [p for p in parts if p[2] and p[0] and p[1]]


def _better(a, b) -> bool:
    """CANN's ranking of core splits: compute intensity, then band ratio at ~equal cycles."""
    if abs(a[0] - b[0]) > 1e-4:
        return a[0] > b[0]
    if abs(a[1] - b[1]) < 0.01 * b[1]:
        return a[2] > b[2]
    return a[1] < b[1]


class MatmulApiTiling(MultiCoreMatmulTiling):
    """`matmul_tiling::MatmulApiTiling(platform)`: the single-core tiling (one core's shape)."""

    def __init__(self, platform=None):
        super().__init__(platform)
        self.dim = 1

    def SetDim(self, n: int) -> int:
        return 0


__all__ = [
    "CubeFormat",
    "MatrixTraverse",
    "DataType",
    "TCubeTiling",
    "MultiCoreMatmulTiling",
    "MatmulApiTiling",
    "tiling_footprint",
    "check_tiling",
]
