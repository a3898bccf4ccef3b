"""2-D convolution (NHWC, half) as img2col + cube: the strided-DMA way to feed a matmul.

C[pixels × Cout] = A[pixels × (KH·KW·Cin)] · W[(KH·KW·Cin) × Cout]. A row of A (one output
pixel) for kernel row kh and columns kw0..kw0+kw_merge is a contiguous run of kw_merge·Cin
elements of the NHWC input, and the next pixel's run starts stride·Cin elements later — so one
Nd2Nz DataCopy with srcDValue = stride·Cin (smaller than dValue: rows overlap) *is* the img2col
of a tile. The weights of the core's Cout block stay resident in L1 (weight-stationary), and
every (kh, kw-group) chunk goes L1 → L0A/L0B → one Mmad accumulating in L0C.

The input is given already zero-padded ((H + 2·pad) × (W + 2·pad)), as the hardware's Load3D
would pad on the fly; the output is N × Ho × Wo × Cout.
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
    half,
)
from asc_tui.operator import Constraint, In, Launch, Out, Param

CASES = {
    "default": dict(n=1, h=16, w=16, cin=16, cout=32, kh=3, kw=3, stride=1, pad=1),
    "guide": dict(n=1, h=224, w=224, cin=64, cout=128, kh=3, kw=3, stride=1, pad=1),
    "stride2": dict(n=2, h=17, w=15, cin=32, cout=48, kh=3, kw=3, stride=2, pad=1),
    "tails": dict(n=1, h=13, w=11, cin=16, cout=40, kh=3, kw=3, stride=1, pad=1),
    "k1x1": dict(n=1, h=8, w=20, cin=48, cout=64, kh=1, kw=1, stride=1, pad=0),
}

PARAMS = {
    "tile_m": Param(112, values=[16, 32, 64, 112, 128], doc="output pixels per tile (one row)"),
    "tile_n": Param(128, values=[16, 32, 64, 128, 256], doc="output channels per tile"),
    "kw_merge": Param(1, values=[1, 3], doc="kernel columns per L0 chunk"),
    "block_dim": Param(24, values=[1, 8, 24]),
}

L1, L0A, L0B, L0C = 512 * 1024, 64 * 1024, 64 * 1024, 128 * 1024
PRECISION = {"float16": (4e-3, 4e-3)}


def _up(x, a):
    return -(-x // a) * a


def _geometry(case):
    hp, wp = case.h + 2 * case.pad, case.w + 2 * case.pad
    ho, wo = (hp - case.kh) // case.stride + 1, (wp - case.kw) // case.stride + 1
    return hp, wp, ho, wo


def _footprint(case, p):
    merge = min(p.kw_merge, case.kw)
    chunk = _up(merge * case.cin, 16)
    tm, tn = _up(p.tile_m, 16), _up(p.tile_n, 16)
    k_all = case.kh * case.kw * case.cin
    return {
        "l1": _up(k_all, 16) * tn * 2 + 2 * tm * chunk * 2,
        "l0a": 2 * tm * chunk * 2,
        "l0b": 2 * chunk * tn * 2,
        "l0c": tm * tn * 4,
    }


def _fits(case, p):
    caps = {"l1": L1, "l0a": L0A, "l0b": L0B, "l0c": L0C}
    bad = [f"{m.upper()} needs {v} B of {caps[m]}" for m, v in _footprint(case, p).items() if v > caps[m]]
    return "; ".join(bad) or True


CONSTRAINTS = [
    "cin % 16 == 0",
    "kw % kw_merge == 0 or kw_merge > kw",
    Constraint(_fits, "a local memory overflows"),
]


@dataclass(frozen=True)
class ConvTiling:
    n: int
    hp: int
    wp: int
    cin: int
    cout: int
    kh: int
    kw: int
    stride: int
    ho: int
    wo: int
    tile_m: int
    tile_n: int
    kw_merge: int


def _padded_input(case):
    def init(rng, shape):
        x = np.zeros(shape, np.float16)
        p = case.pad
        x[:, p : shape[1] - p, p : shape[2] - p, :] = rng.uniform(-1, 1, (shape[0], case.h, case.w, shape[3]))
        return x

    return init


def tensors(case):
    hp, wp, ho, wo = _geometry(case)
    return {
        "x": In((case.n, hp, wp, case.cin), half, _padded_input(case)),
        "weight": In((case.kh * case.kw * case.cin, case.cout), half, "uniform"),
        "y": Out((case.n, ho, wo, case.cout), half),
    }


def tiling(case, p):
    hp, wp, ho, wo = _geometry(case)
    tiles = case.n * ho * -(-wo // p.tile_m) * -(-case.cout // p.tile_n)
    return Launch(
        min(p.block_dim, tiles),
        ConvTiling(
            case.n,
            hp,
            wp,
            case.cin,
            case.cout,
            case.kh,
            case.kw,
            case.stride,
            ho,
            wo,
            p.tile_m,
            p.tile_n,
            min(p.kw_merge, case.kw),
        ),
    )


def golden(case, x, weight):
    _, _, ho, wo = _geometry(case)
    s = case.stride
    w = weight.astype(np.float32).reshape(case.kh, case.kw, case.cin, case.cout)
    xf = x.astype(np.float32)
    y = np.zeros((case.n, ho, wo, case.cout), np.float32)
    for i in range(case.kh):
        for j in range(case.kw):
            patch = xf[:, i : i + (ho - 1) * s + 1 : s, j : j + (wo - 1) * s + 1 : s, :]
            y += patch @ w[i, j]
    return y


def flops(case):
    _, _, ho, wo = _geometry(case)
    return 2.0 * case.n * ho * wo * case.cout * case.kh * case.kw * case.cin


class KernelConv2d:
    def Init(self, x: GM_ADDR, weight: GM_ADDR, y: GM_ADDR, t: ConvTiling):
        self.t = t
        self.x_gm, self.w_gm, self.y_gm = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
        self.x_gm.SetGlobalBuffer(x, t.n * t.hp * t.wp * t.cin)
        self.k_all = t.kh * t.kw * t.cin
        self.w_gm.SetGlobalBuffer(weight, self.k_all * t.cout)
        self.y_gm.SetGlobalBuffer(y, t.n * t.ho * t.wo * t.cout)
        self.chunk = t.kw_merge * t.cin  # K per Mmad: kw_merge kernel columns x Cin
        tm, tn = _up(t.tile_m, 16), _up(t.tile_n, 16)
        self.pipe = TPipe()
        self.q_w = TQue(TPosition.B1, 1)
        self.q_a1 = TQue(TPosition.A1, 2)
        self.q_a2, self.q_b2 = TQue(TPosition.A2, 2), TQue(TPosition.B2, 2)
        self.q_c = TQue(TPosition.CO1, 1)
        self.pipe.InitBuffer(self.q_w, 1, _up(self.k_all, 16) * tn * 2)
        self.pipe.InitBuffer(self.q_a1, 2, tm * _up(self.chunk, 16) * 2)
        self.pipe.InitBuffer(self.q_a2, 2, tm * _up(self.chunk, 16) * 2)
        self.pipe.InitBuffer(self.q_b2, 2, _up(self.chunk, 16) * tn * 2)
        self.pipe.InitBuffer(self.q_c, 1, tm * tn * 4)

    def Process(self):
        t = self.t
        per_row = -(-t.wo // t.tile_m)
        pixel_tiles = t.n * t.ho * per_row
        n_blocks = -(-t.cout // t.tile_n)
        w1, nb_loaded = None, -1
        for tile in range(AscendC.GetBlockIdx(), pixel_tiles * n_blocks, AscendC.GetBlockNum()):
            nb, pt = tile // pixel_tiles, tile % pixel_tiles
            n0 = nb * t.tile_n
            nt = min(t.tile_n, t.cout - n0)
            if nb != nb_loaded:  # weight-stationary: this Cout block's weights stay in L1
                if w1 is not None:
                    self.q_w.FreeTensor(w1)
                w1 = self.LoadWeights(n0, nt)
                nb_loaded = nb
            row, ow0 = pt // per_row, pt % per_row * t.tile_m
            mt = min(t.tile_m, t.wo - ow0)
            self.ComputeTile(w1, row // t.ho, row % t.ho, ow0, mt, nt)
            self.CopyOut(row, ow0, mt, n0, nt)
        if w1 is not None:
            self.q_w.FreeTensor(w1)

    def LoadWeights(self, n0, nt):
        """All K rows of W[:, n0:n0+nt] into L1, one ND matrix per 16 rows (ZZ order)."""
        t = self.t
        w1 = self.q_w.AllocTensor(half)
        full, rem = self.k_all // 16, self.k_all % 16
        frac = -(-nt // 16) * 256
        if full:
            AscendC.DataCopy(w1, self.w_gm[n0], Nd2NzParams(full, 16, nt, 16 * t.cout, t.cout, 16, 1, frac))
        if rem:
            AscendC.DataCopy(
                w1[full * frac],
                self.w_gm[full * 16 * t.cout + n0],
                Nd2NzParams(1, rem, nt, 0, t.cout, 16, 1, 0),
            )
        self.q_w.EnQue(w1)
        return self.q_w.DeQue(half)

    def ComputeTile(self, w1, img, oh, ow0, mt, nt):
        t = self.t
        c = self.q_c.AllocTensor(AscendC.float32)
        k1 = -(-self.chunk // 16)
        m1, n1 = -(-mt // 16), -(-nt // 16)
        first = True
        for i in range(t.kh):
            for j in range(0, t.kw, t.kw_merge):
                a1 = self.q_a1.AllocTensor(half)
                src = ((img * t.hp + oh * t.stride + i) * t.wp + ow0 * t.stride + j) * t.cin
                self.Img2col(a1, src, mt)
                self.q_a1.EnQue(a1)
                a1 = self.q_a1.DeQue(half)
                a2 = self.q_a2.AllocTensor(half)
                self.Load(a2, a1, 0, m1 * k1, False)
                self.q_a2.EnQue(a2)
                self.q_a1.FreeTensor(a1)
                b2 = self.q_b2.AllocTensor(half)
                k_row = (i * t.kw + j) * t.cin  # first K row of this chunk in W
                self.Load(b2, w1, k_row // 16 * n1, k1 * n1, True)
                self.q_b2.EnQue(b2)
                a2, b2 = self.q_a2.DeQue(half), self.q_b2.DeQue(half)
                AscendC.Mmad(c, a2, b2, MmadParams(mt, nt, self.chunk, cmatrixInitVal=first))
                first = False
                self.q_a2.FreeTensor(a2)
                self.q_b2.FreeTensor(b2)
        self.q_c.EnQue(c)

    def Load(self, dst, src, start, fractals, transpose):
        """LoadData of consecutive fractals, at most 255 per instruction."""
        for f in range(0, fractals, 255):
            AscendC.LoadData(
                dst[f * 256], src, LoadData2DParams(start + f, min(255, fractals - f), 1, 0, 0, transpose)
            )

    def Img2col(self, a1, src, mt):
        """mt pixels x chunk: rows overlap in GM (srcDValue = stride * Cin < dValue)."""
        t = self.t
        full, rem = mt // 16, mt % 16
        frac = -(-self.chunk // 16) * 256
        step = t.stride * t.cin
        if full:
            AscendC.DataCopy(
                a1, self.x_gm[src], Nd2NzParams(full, 16, self.chunk, 16 * step, step, 16, 1, frac)
            )
        if rem:
            AscendC.DataCopy(
                a1[full * frac],
                self.x_gm[src + full * 16 * step],
                Nd2NzParams(1, rem, self.chunk, 0, step, 16, 1, 0),
            )

    def CopyOut(self, row, ow0, mt, n0, nt):
        t = self.t
        c = self.q_c.DeQue(AscendC.float32)
        AscendC.Fixpipe(
            self.y_gm[(row * t.wo + ow0) * t.cout + n0],
            c,
            FixpipeParamsV220(
                nSize=nt, mSize=mt, srcStride=_up(mt, 16), dstStride=t.cout, quantPre=QuantMode_t.F322F16
            ),
        )
        self.q_c.FreeTensor(c)


@AscendC.kernel(core_type="aic")
def conv2d(x: GM_ADDR, weight: GM_ADDR, y: GM_ADDR, tiling: ConvTiling):
    op = KernelConv2d()
    op.Init(x, weight, y, tiling)
    op.Process()
