"""C = LeakyReLU(A · B): a mixed AIC+AIV kernel, and the classic L0C mistake to reproduce.

The AIC of each AI Core computes tile_m × tile_n tiles of A·B on the cube and writes them to a
GM workspace (Fixpipe, fp32 → fp16), then raises cross-core flag 0. Its two AIVs wait for the
flag, each takes half of the tile's rows through UB, applies LeakyReLU (Muls + Max) and writes C.

The mistake: `asc-tui run matmul_leaky -p tile_m=256 -p tile_n=256 -p tile_k=128` asks for a
256×256 fp32 accumulator = 256 KB of L0C, but the 910B core has 128 KB. There is deliberately
no static constraint for it here, so the kernel's InitBuffer refuses it, naming its line and
the numbers (matmul.py rejects the same tiles up front through CONSTRAINTS).
"""

from dataclasses import dataclass

import numpy as np

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    GM_ADDR,
    DataCopyParams,
    FixpipeParamsV220,
    GlobalTensor,
    LoadData2DParams,
    MmadParams,
    Nd2NzParams,
    QuantMode_t,
    TPipe,
    TPosition,
    TQue,
    half,
)
from asc_tui.operator import In, Launch, Out, Param

CASES = {
    "default": dict(m=512, n=512, k=256),
    "small": dict(m=128, n=96, k=64),
    "wide": dict(m=1024, n=1024, k=1024),
}

PARAMS = {
    "tile_m": Param(128, values=[64, 128, 256]),
    "tile_n": Param(128, values=[64, 128, 256]),
    "tile_k": Param(64, values=[32, 64, 128]),
    "block_dim": Param(24, values=[1, 8, 24]),
}
#: The parameter set that reproduces the classic L0C overflow (256 KB of a 128 KB L0C).
LEAKY_PARAMS = dict(tile_m=256, tile_n=256, tile_k=128)

CONSTRAINTS = ["n % 16 == 0", "tile_n % 16 == 0", "tile_m % 2 == 0"]
ALPHA = 0.1
ROWS = 32  # rows per AIV pass through UB
PRECISION = {"float16": (2e-3, 2e-3)}


@dataclass(frozen=True)
class LeakyTiling:
    m: int
    n: int
    k: int
    tile_m: int
    tile_n: int
    tile_k: int
    alpha: float


def tensors(case):
    return {
        "a": In((case.m, case.k), half, "uniform"),
        "b": In((case.k, case.n), half, "uniform"),
        "c": Out((case.m, case.n), half),
        "workspace": Out((case.m, case.n), half),
    }


def tiling(case, p):
    tiles = -(-case.m // p.tile_m) * -(-case.n // p.tile_n)
    return Launch(
        min(p.block_dim, tiles), LeakyTiling(case.m, case.n, case.k, p.tile_m, p.tile_n, p.tile_k, ALPHA)
    )


def golden(case, a, b):
    w = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    return {"c": np.maximum(w, (w * np.float16(ALPHA)).astype(np.float16)), "workspace": w}


def flops(case):
    return 2.0 * case.m * case.n * case.k


def _up(x, a):
    return -(-x // a) * a


class CubePart:
    """AIC: C tiles of A·B into the workspace, one Mmad per tile_k slice (single-buffered)."""

    def Init(self, a, b, ws, t: LeakyTiling):
        self.t = t
        self.a_gm, self.b_gm, self.ws = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
        self.a_gm.SetGlobalBuffer(a, t.m * t.k)
        self.b_gm.SetGlobalBuffer(b, t.k * t.n)
        self.ws.SetGlobalBuffer(ws, t.m * t.n)
        tm, tn, tk = _up(t.tile_m, 16), _up(t.tile_n, 16), _up(t.tile_k, 16)
        self.pipe = TPipe()
        self.q_c, self.q_a1, self.q_b1 = TQue(TPosition.CO1, 1), TQue(TPosition.A1, 1), TQue(TPosition.B1, 1)
        self.q_a2, self.q_b2 = TQue(TPosition.A2, 1), TQue(TPosition.B2, 1)
        self.pipe.InitBuffer(self.q_c, 1, tm * tn * 4)  # the L0C accumulator: tile_m x tile_n fp32
        self.pipe.InitBuffer(self.q_a1, 2, tm * tk * 2)
        self.pipe.InitBuffer(self.q_b1, 2, tk * tn * 2)
        self.pipe.InitBuffer(self.q_a2, 2, tm * tk * 2)
        self.pipe.InitBuffer(self.q_b2, 2, tk * tn * 2)

    def Process(self):
        t = self.t
        nt_n = -(-t.n // t.tile_n)
        for tile in range(AscendC.GetBlockIdx(), -(-t.m // t.tile_m) * nt_n, AscendC.GetBlockNum()):
            m0, n0 = tile // nt_n * t.tile_m, tile % nt_n * t.tile_n
            mt, nt = min(t.tile_m, t.m - m0), min(t.tile_n, t.n - n0)
            c = self.q_c.AllocTensor(AscendC.float32)
            for k0 in range(0, t.k, t.tile_k):
                kt = min(t.tile_k, t.k - k0)
                a1, b1 = self.q_a1.AllocTensor(half), self.q_b1.AllocTensor(half)
                AscendC.DataCopy(
                    a1, self.a_gm[m0 * t.k + k0], Nd2NzParams(1, mt, kt, 0, t.k, _up(mt, 16), 1, 0)
                )
                AscendC.DataCopy(
                    b1, self.b_gm[k0 * t.n + n0], Nd2NzParams(1, kt, nt, 0, t.n, _up(kt, 16), 1, 0)
                )
                self.q_a1.EnQue(a1)
                self.q_b1.EnQue(b1)
                a1, b1 = self.q_a1.DeQue(half), self.q_b1.DeQue(half)
                a2, b2 = self.q_a2.AllocTensor(half), self.q_b2.AllocTensor(half)
                m1, k1, n1 = -(-mt // 16), -(-kt // 16), -(-nt // 16)
                for i in range(m1):  # the classic per-row LoadData: NZ (L1) -> ZZ (L0A)
                    AscendC.LoadData(a2[i * k1 * 256], a1, LoadData2DParams(i, k1, m1, 0, 0))
                for i in range(k1):  # NZ (L1) -> ZN (L0B), each fractal transposed
                    AscendC.LoadData(b2[i * n1 * 256], b1, LoadData2DParams(i, n1, k1, 0, 0, True))
                self.q_a2.EnQue(a2)
                self.q_b2.EnQue(b2)
                self.q_a1.FreeTensor(a1)
                self.q_b1.FreeTensor(b1)
                a2, b2 = self.q_a2.DeQue(half), self.q_b2.DeQue(half)
                AscendC.Mmad(c, a2, b2, MmadParams(mt, nt, kt, cmatrixInitVal=k0 == 0))
                self.q_a2.FreeTensor(a2)
                self.q_b2.FreeTensor(b2)
            self.q_c.EnQue(c)
            c = self.q_c.DeQue(AscendC.float32)
            AscendC.Fixpipe(
                self.ws[m0 * t.n + n0],
                c,
                FixpipeParamsV220(
                    nSize=nt, mSize=mt, srcStride=_up(mt, 16), dstStride=t.n, quantPre=QuantMode_t.F322F16
                ),
            )
            self.q_c.FreeTensor(c)
            AscendC.CrossCoreSetFlag(2, AscendC.PIPE_FIX, 0)  # tile ready for the AIVs


class VecPart:
    """AIV: LeakyReLU of this sub-block's half of each tile, ROWS rows at a time."""

    def Init(self, ws, c, t: LeakyTiling):
        self.t = t
        self.ws, self.c_gm = GlobalTensor(half), GlobalTensor(half)
        self.ws.SetGlobalBuffer(ws, t.m * t.n)
        self.c_gm.SetGlobalBuffer(c, t.m * t.n)
        self.pipe = TPipe()
        self.q_in, self.q_out = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 2)
        self.tmp = AscendC.TBuf(TPosition.VECCALC)
        nbytes = ROWS * _up(t.tile_n, 16) * 2
        self.pipe.InitBuffer(self.q_in, 2, nbytes)
        self.pipe.InitBuffer(self.q_out, 2, nbytes)
        self.pipe.InitBuffer(self.tmp, nbytes)

    def Process(self):
        t = self.t
        nt_n = -(-t.n // t.tile_n)
        sub, nsub = AscendC.GetSubBlockIdx(), AscendC.GetSubBlockNum()
        core = AscendC.GetBlockIdx() // nsub
        for tile in range(core, -(-t.m // t.tile_m) * nt_n, AscendC.GetBlockNum()):
            m0, n0 = tile // nt_n * t.tile_m, tile % nt_n * t.tile_n
            mt, nt = min(t.tile_m, t.m - m0), min(t.tile_n, t.n - n0)
            AscendC.CrossCoreWaitFlag(2, AscendC.PIPE_S, 0)  # the AIC finished this tile
            half_rows = -(-mt // nsub)
            r_begin, r_end = m0 + sub * half_rows, min(m0 + mt, m0 + (sub + 1) * half_rows)
            for r0 in range(r_begin, r_end, ROWS):
                rows = min(ROWS, r_end - r0)
                self.Compute(r0 * t.n + n0, rows, nt)

    def Compute(self, offset, rows, nt):
        t = self.t
        gap = (t.n - nt) * 2 // 32
        x = self.q_in.AllocTensor(half)
        AscendC.DataCopy(x, self.ws[offset], DataCopyParams(rows, nt * 2 // 32, gap, 0))
        self.q_in.EnQue(x)
        x = self.q_in.DeQue(half)
        y = self.q_out.AllocTensor(half)
        tmp = self.tmp.Get(half)
        AscendC.Muls(tmp, x, t.alpha, rows * nt)
        AscendC.Max(y, x, tmp, rows * nt)
        self.q_out.EnQue(y)
        self.q_in.FreeTensor(x)
        y = self.q_out.DeQue(half)
        AscendC.DataCopy(self.c_gm[offset], y, DataCopyParams(rows, nt * 2 // 32, 0, gap))
        self.q_out.FreeTensor(y)


@AscendC.kernel(core_type="mix")
def matmul_leaky(a: GM_ADDR, b: GM_ADDR, c: GM_ADDR, workspace: GM_ADDR, tiling: LeakyTiling):
    if AscendC.ASCEND_IS_AIC:
        op = CubePart()
        op.Init(a, b, workspace, tiling)
    else:
        op = VecPart()
        op.Init(workspace, c, tiling)
    op.Process()
