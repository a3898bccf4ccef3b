"""C = A · B on the cube, hand-written: GM →(MTE2) L1 →(MTE1) L0A/L0B →(cube) L0C →(fixpipe) GM.

Output-stationary tiling: each core owns tile_m × tile_n blocks of C (round-robin over cores)
and walks K in steps of tile_k, accumulating in L0C. Every queue is `double_buffer` deep, so
with 2 the next tile's copies overlap this tile's Mmad. GM traffic of this scheme is
2·(M·K·⌈N/tn⌉ + K·N·⌈M/tm⌉) bytes read (fp16) + 2·M·N written: bigger tiles read less.

Layouts: A lands in L1 as ZZ fractals (one Nd2Nz "ND matrix" per 16 rows), so one LoadData
moves a whole tile to L0A; B (K×N) lands the same way per 16 rows of K and LoadData transposes
each fractal into L0B's ZN order. int8 keeps B as N×K (weights layout) and needs no transpose.
"""

from dataclasses import dataclass

import numpy as np

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    GM_ADDR,
    FixpipeParamsV220,
    GlobalTensor,
    LoadData2DParams,
    MmadParams,
    Nd2NzParams,
    QuantMode_t,
    TPipe,
    TPosition,
    TQue,
)
from asc_tui.operator import Constraint, In, Launch, Out, Param

CASES = {
    "default": dict(m=1024, n=1024, k=1024, dtype="float16"),
    "small": dict(m=256, n=192, k=320, dtype="float16"),
    "tails": dict(m=100, n=75, k=130, dtype="float16"),
    "int8": dict(m=1024, n=1024, k=1024, dtype="int8"),
    "int8_tails": dict(m=70, n=50, k=90, dtype="int8"),
    "bf16": dict(m=256, n=256, k=256, dtype="bfloat16"),
    "large": dict(m=4096, n=4096, k=4096, dtype="float16"),
}

PARAMS = {  # value sets sized for tuning sweeps: 16-wide tiles work but emulate slowly
    "tile_m": Param(128, values=[64, 128, 256], doc="rows of C per tile"),
    "tile_n": Param(256, values=[64, 128, 256], doc="columns of C per tile"),
    "tile_k": Param(64, values=[32, 64, 128, 256], doc="K per Mmad step"),
    "double_buffer": Param(2, values=[1, 2], doc="buffers per L1/L0A/L0B queue"),
    "l0c_buffers": Param(1, values=[1, 2], doc="L0C buffers (2 overlaps Fixpipe with Mmad)"),
    "block_dim": Param(24, values=[8, 24], doc="AI Cores used (capped at the tile count)"),
}

# Capacities of the 910B core (L1 512 KB, L0A/L0B 64 KB, L0C 128 KB): rejected before running.
L1, L0A, L0B, L0C = 512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024


def _up(x: int, a: int) -> int:
    return -(-x // a) * a


def footprint(case, p) -> dict:
    """Bytes each memory needs for these tiles (padded to fractals)."""
    isz = np.dtype(case.dtype).itemsize
    c0 = 32 // isz
    tm, tn, tk = _up(p.tile_m, 16), _up(p.tile_n, 16), _up(p.tile_k, c0)
    acc = 4
    return {
        "l1": (tm * tk + tk * tn) * isz * p.double_buffer,
        "l0a": tm * tk * isz * p.double_buffer,
        "l0b": tk * tn * isz * p.double_buffer,
        "l0c": tm * tn * acc * p.l0c_buffers,
    }


def _fits(mem: str, cap: int):
    return lambda case, p: (
        footprint(case, p)[mem] <= cap
        or (
            f"{mem.upper()} needs {footprint(case, p)[mem]} B for tile_m={p.tile_m} "
            f"tile_n={p.tile_n} tile_k={p.tile_k} x{p.double_buffer if mem != 'l0c' else p.l0c_buffers}"
            f" buffers but has {cap} B"
        )
    )


CONSTRAINTS = [
    Constraint(_fits("l1", L1), "L1 (512 KB) overflows"),
    Constraint(_fits("l0a", L0A), "L0A (64 KB) overflows"),
    Constraint(_fits("l0b", L0B), "L0B (64 KB) overflows"),
    Constraint(_fits("l0c", L0C), "L0C (128 KB) overflows"),
    Constraint(
        lambda case, p: p.tile_k % (32 // np.dtype(case.dtype).itemsize) == 0,
        "tile_k must be a multiple of C0 (16 for half, 32 for int8)",
    ),
]

PRECISION = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 1e-2)}
BASELINE = "matmul_official"  # `asc-tui bench matmul` compares against it (fp16 cases)


@dataclass(frozen=True)
class MatmulTiling:
    m: int
    n: int
    k: int
    tile_m: int
    tile_n: int
    tile_k: int
    buffers: int
    l0c_buffers: int
    dtype: str


def _out_dtype(dtype: str) -> str:
    return "int32" if dtype == "int8" else dtype


def tensors(case):
    b_shape = (case.n, case.k) if case.dtype == "int8" else (case.k, case.n)
    init = (-8, 8) if case.dtype == "int8" else "uniform"
    return {
        "a": In((case.m, case.k), case.dtype, init),
        "b": In(b_shape, case.dtype, init),
        "c": Out((case.m, case.n), _out_dtype(case.dtype)),
    }


def tiling(case, p):
    tiles = -(-case.m // p.tile_m) * -(-case.n // p.tile_n)
    return Launch(
        min(p.block_dim, tiles),
        MatmulTiling(
            case.m, case.n, case.k, p.tile_m, p.tile_n, p.tile_k, p.double_buffer, p.l0c_buffers, case.dtype
        ),
    )


def golden(case, a, b):
    if case.dtype == "int8":
        return (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.int32)
    return a.astype(np.float32) @ b.astype(np.float32)


def flops(case):
    return 2.0 * case.m * case.n * case.k


def traffic(case, p):
    """GM bytes this tiling moves (A re-read per N tile, B per M tile): the tuner's model."""
    isz = np.dtype(case.dtype).itemsize
    mt, nt = -(-case.m // p.tile_m), -(-case.n // p.tile_n)
    return isz * (case.m * case.k * nt + case.k * case.n * mt) + case.m * case.n * isz


class KernelMatmul:
    def Init(self, a: GM_ADDR, b: GM_ADDR, c: GM_ADDR, t: MatmulTiling):
        self.t = t
        self.dt = AscendC.as_dtype(t.dtype)
        self.acc = AscendC.int32 if t.dtype == "int8" else AscendC.float32
        self.trans_b = t.dtype == "int8"
        self.c0 = 32 // AscendC.sizeof(self.dt)
        self.a_gm, self.b_gm = GlobalTensor(self.dt), GlobalTensor(self.dt)
        self.c_gm = GlobalTensor(AscendC.as_dtype(_out_dtype(t.dtype)))
        self.a_gm.SetGlobalBuffer(a, t.m * t.k)
        self.b_gm.SetGlobalBuffer(b, t.k * t.n)
        self.c_gm.SetGlobalBuffer(c, t.m * t.n)
        self.tm, self.tn = _up(t.tile_m, 16), _up(t.tile_n, 16)
        self.tk = _up(t.tile_k, self.c0)
        isz = AscendC.sizeof(self.dt)
        self.pipe = TPipe()
        self.q_a1 = TQue(TPosition.A1, t.buffers)
        self.q_b1 = TQue(TPosition.B1, t.buffers)
        self.q_a2 = TQue(TPosition.A2, t.buffers)
        self.q_b2 = TQue(TPosition.B2, t.buffers)
        self.q_c = TQue(TPosition.CO1, t.l0c_buffers)
        self.pipe.InitBuffer(self.q_a1, t.buffers, self.tm * self.tk * isz)
        self.pipe.InitBuffer(self.q_b1, t.buffers, self.tk * self.tn * isz)
        self.pipe.InitBuffer(self.q_a2, t.buffers, self.tm * self.tk * isz)
        self.pipe.InitBuffer(self.q_b2, t.buffers, self.tk * self.tn * isz)
        self.pipe.InitBuffer(self.q_c, t.l0c_buffers, self.tm * self.tn * 4)

    def Process(self):
        t = self.t
        mt_n, nt_n = -(-t.m // t.tile_m), -(-t.n // t.tile_n)
        for tile in range(AscendC.GetBlockIdx(), mt_n * nt_n, AscendC.GetBlockNum()):
            m0 = tile // nt_n * t.tile_m
            n0 = tile % nt_n * t.tile_n
            mt, nt = min(t.tile_m, t.m - m0), min(t.tile_n, t.n - n0)
            c = self.q_c.AllocTensor(self.acc)
            for k0 in range(0, t.k, t.tile_k):
                kt = min(t.tile_k, t.k - k0)
                self.CopyIn(m0, n0, k0, mt, nt, kt)
                self.SplitAB(mt, nt, kt)
                self.Compute(c, mt, nt, kt, k0 == 0)
            self.q_c.EnQue(c)
            self.CopyOut(m0, n0, mt, nt)

    def _rows16(self, dst, src: GlobalTensor, rows: int, cols: int, stride: int, c1: int):
        """Nd2Nz `rows` x `cols` into ZZ order: one ND matrix per 16 rows, plus the tail."""
        full, rem = rows // 16, rows % 16
        frac = c1 * 16 * self.c0
        if full:
            AscendC.DataCopy(dst, src, Nd2NzParams(full, 16, cols, 16 * stride, stride, 16, 1, frac))
        if rem:
            AscendC.DataCopy(
                dst[full * frac], src[full * 16 * stride], Nd2NzParams(1, rem, cols, 0, stride, 16, 1, 0)
            )

    def CopyIn(self, m0, n0, k0, mt, nt, kt):
        t = self.t
        a1 = self.q_a1.AllocTensor(self.dt)
        self._rows16(a1, self.a_gm[m0 * t.k + k0], mt, kt, t.k, -(-kt // self.c0))
        self.q_a1.EnQue(a1)
        b1 = self.q_b1.AllocTensor(self.dt)
        if self.trans_b:  # B is N x K: plain NZ is already L0B's ZN order
            AscendC.DataCopy(b1, self.b_gm[n0 * t.k + k0], Nd2NzParams(1, nt, kt, 0, t.k, _up(nt, 16), 1, 0))
        else:
            self._rows16(b1, self.b_gm[k0 * t.n + n0], kt, nt, t.n, -(-nt // 16))
        self.q_b1.EnQue(b1)

    def SplitAB(self, mt, nt, kt):
        a1, b1 = self.q_a1.DeQue(self.dt), self.q_b1.DeQue(self.dt)
        a2, b2 = self.q_a2.AllocTensor(self.dt), self.q_b2.AllocTensor(self.dt)
        k1 = -(-kt // self.c0)
        self._load(a2, a1, -(-mt // 16) * k1, False)
        self._load(b2, b1, k1 * -(-nt // 16), not self.trans_b)
        self.q_a2.EnQue(a2)
        self.q_b2.EnQue(b2)
        self.q_a1.FreeTensor(a1)
        self.q_b1.FreeTensor(b1)

    def _load(self, dst, src, fractals: int, transpose: bool):
        per = 512 // AscendC.sizeof(self.dt)
        for f in range(0, fractals, 255):
            AscendC.LoadData(
                dst[f * per] if f else dst,
                src,
                LoadData2DParams(f, min(255, fractals - f), 1, 0, 0, transpose),
            )

    def Compute(self, c, mt, nt, kt, first):
        a2, b2 = self.q_a2.DeQue(self.dt), self.q_b2.DeQue(self.dt)
        AscendC.Mmad(c, a2, b2, MmadParams(mt, nt, kt, cmatrixInitVal=first))
        self.q_a2.FreeTensor(a2)
        self.q_b2.FreeTensor(b2)

    def CopyOut(self, m0, n0, mt, nt):
        t = self.t
        c = self.q_c.DeQue(self.acc)
        quant = (
            QuantMode_t.NoQuant
            if t.dtype == "int8"
            else (QuantMode_t.F322BF16 if t.dtype == "bfloat16" else QuantMode_t.F322F16)
        )
        AscendC.Fixpipe(
            self.c_gm[m0 * t.n + n0],
            c,
            FixpipeParamsV220(nSize=nt, mSize=mt, srcStride=_up(mt, 16), dstStride=t.n, quantPre=quant),
        )
        self.q_c.FreeTensor(c)


@AscendC.kernel(core_type="aic")
def matmul(a: GM_ADDR, b: GM_ADDR, c: GM_ADDR, tiling: MatmulTiling):
    op = KernelMatmul()
    op.Init(a, b, c, tiling)
    op.Process()
