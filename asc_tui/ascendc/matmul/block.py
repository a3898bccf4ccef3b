"""How the high-level Matmul (matmul.py) moves one baseM × baseN block through L1 and L0.

For each block it walks K in baseK slices, copying A into L1 every stepKa slices and B every
stepKb slices (Nd2Nz DataCopy), loading each slice into L0A/L0B (LoadData) and accumulating it
in one L0C tile (Mmad) that a single Fixpipe writes out. Long K loops are extrapolated in whole
L1 rounds (npu/extrapolate/periodic.py).
"""

from __future__ import annotations

import math

from ...npu import state
from ...npu.extrapolate.periodic import Periodic
from ...npu.replay.blockindex import trange
from ..copy.datacopy import DataCopy, DataCopyExtParams, DataCopyPad
from ..cube.fixpipe import Fixpipe, FixpipeParamsV220, QuantMode_t
from ..cube.loaddata import LoadData2DParams, load_at, load_rows
from ..cube.mmad import Mmad, MmadParams, Nd2NzParams
from ..dtypes import half, int32, is_bf16
from ..memory.tensors import GlobalTensor
from .tiling import up

#: L1 rounds from which a base block's K loop is worth watching for its periodic regime
_LONG_K = 12


class BaseBlock:
    """The base of `Matmul` that computes one base block: it reads what `Matmul.Init` set up
    (the tiling, the TQue of each position, the element, accumulator and C types, `bm`/`bn`/`c0`)
    and the operands SetTensorA/B/SetBias gave."""

    def _block(self, m0: int, n0: int, mt: int, nt: int, sk: int):
        """Accumulate one block in L0C; returns the CO1 tensor (enqueued for the fixpipe)."""
        t = self.tiling
        co = self.q_c.AllocTensor(self.acc)
        bias_t = None
        if self.bt is not None:
            bias_t = self.bt.Get(self.bias.dtype)
            DataCopyPad(bias_t, self.bias[n0], DataCopyExtParams(1, nt * self.bias.dtype.itemsize, 0, 0, 0))
        ka, kb = t.baseK * t.stepKa, t.baseK * t.stepKb
        a1 = b1 = None
        steps = trange(0, sk, t.baseK)
        # Extrapolated (npu/extrapolate/periodic.py) in whole L1 rounds of `per` K steps, after which A and
        # B are both loaded afresh: a round's stream is decided by its steps' keys apart from
        # GM addresses, which are affine in its first ks. Only long loops: the first rounds
        # (the pipeline filling, then two periods to compare) run anyway.
        per = math.lcm(t.stepKa, t.stepKb)
        keys = [(ks % ka, ks % kb, min(t.baseK, sk - ks), min(ka, sk - ks), min(kb, sk - ks)) for ks in steps]
        ext = None
        if len(keys) >= _LONG_K * per:
            ext = Periodic.of(
                state.core,
                (self.q_a1, self.q_b1, self.q_a2, self.q_b2),
                [tuple(keys[r : r + per]) for r in range(0, len(keys), per)],
                list(steps[::per]),
            )
        i = 0
        while i < len(keys):
            if ext is not None and i % per == 0:
                i += ext.at(i // per) * per
                if i >= len(keys):
                    break
            ks = steps[i]
            i += 1
            kt = min(t.baseK, sk - ks)
            if ks % ka == 0:  # a new L1 chunk of A (stepKa base slices)
                if a1 is not None:
                    self.q_a1.FreeTensor(a1)
                a1 = self.q_a1.AllocTensor(self.dt)
                self._copy_a(a1, m0, ks, mt, min(ka, sk - ks))
                self.q_a1.EnQue(a1)
                a1 = self.q_a1.DeQue(self.dt)
            if ks % kb == 0:
                if b1 is not None:
                    self.q_b1.FreeTensor(b1)
                b1 = self.q_b1.AllocTensor(self.dt)
                self._copy_b(b1, n0, ks, nt, min(kb, sk - ks))
                self.q_b1.EnQue(b1)
                b1 = self.q_b1.DeQue(self.dt)
            a2 = self.q_a2.AllocTensor(self.dt)
            self._load_a(a2, a1, mt, ks % ka, kt)
            self.q_a2.EnQue(a2)
            b2 = self.q_b2.AllocTensor(self.dt)
            self._load_b(b2, b1, nt, ks % kb, kt)
            self.q_b2.EnQue(b2)
            a2 = self.q_a2.DeQue(self.dt)
            b2 = self.q_b2.DeQue(self.dt)
            p = MmadParams(mt, nt, kt, cmatrixInitVal=ks == 0)
            if ks == 0 and bias_t is not None:
                Mmad(co, a2, b2, bias_t, p)
            else:
                Mmad(co, a2, b2, p)
            self.q_a2.FreeTensor(a2)
            self.q_b2.FreeTensor(b2)
        if ext is not None:
            ext.done()
        self.q_a1.FreeTensor(a1)
        self.q_b1.FreeTensor(b1)
        self.q_c.EnQue(co)
        return co

    def _write(self, dst: GlobalTensor, co, mt: int, nt: int, stride: int) -> None:
        co = self.q_c.DeQue(self.acc)
        quant = QuantMode_t.NoQuant
        if self.cdt != self.acc:
            if self.cdt == half:
                quant = QuantMode_t.F322F16
            elif is_bf16(self.cdt):
                quant = QuantMode_t.F322BF16
            if self.acc == int32 and self.cdt == half:
                quant = QuantMode_t.DEQF16
        Fixpipe(
            dst,
            co,
            FixpipeParamsV220(nSize=nt, mSize=mt, srcStride=up(mt, 16), dstStride=stride, quantPre=quant),
        )
        self.q_c.FreeTensor(co)

    # L1 holds A as NZ (column blocks of C0, baseM padded rows each) so that a baseK slice is a
    # contiguous run of fractals per row group; B as ZZ rows of 16 (one ND matrix per 16 rows of
    # K) so that a baseK slice is one contiguous run LoadData can transpose in one go.
    def _copy_a(self, a1, m0: int, kc: int, mt: int, kl: int) -> None:
        ka = self.shape[2]
        DataCopy(a1, self.a[m0 * ka + kc], Nd2NzParams(1, mt, kl, 0, ka, self.bm, 1, 0))

    def _copy_b(self, b1, n0: int, kc: int, nt: int, kl: int) -> None:
        _m, n, _ka, kb = self.shape
        if self.b_type.isTrans:  # B stored N x K: NZ of the N×K tile is L0B's order per k1
            DataCopy(b1, self.b[n0 * kb + kc], Nd2NzParams(1, nt, kl, 0, kb, self.bn, 1, 0))
            return
        full, rem = kl // 16, kl % 16
        n1 = -(-nt // 16)
        frac = n1 * 256
        if full:
            DataCopy(b1, self.b[kc * n + n0], Nd2NzParams(full, 16, nt, 16 * n, n, 16, 1, frac))
        if rem:
            DataCopy(
                b1[full * frac],
                self.b[(kc + full * 16) * n + n0],
                Nd2NzParams(1, rem, nt, 0, n, 16, 1, 0),
            )

    def _load_a(self, a2, a1, mt: int, ks: int, kt: int) -> None:
        m1 = -(-mt // 16)
        bm1 = self.bm // 16
        k1s, k1 = ks // self.c0, -(-kt // self.c0)
        per = 512 // self.dt.itemsize
        # ZZ in L0A: row group r < m1 takes fractals (k1s.., r) of the NZ tile into a2[r·k1·per]
        load_rows(
            a2, k1 * per, a1, m1, k1s * bm1, 1, k1, bm1, False
        )  # LoadData2DParams(k1s * bm1 + r, k1, bm1, 0, 0, False)

    def _load_b(self, b2, b1, nt: int, ks: int, kt: int) -> None:
        k1s, k1 = ks // self.c0, -(-kt // self.c0)
        per = 512 // self.dt.itemsize
        if self.b_type.isTrans:
            bn1 = self.bn // 16
            n1 = -(-nt // 16)
            # K row r < k1 takes the n1 fractals of NZ row group k1s + r into b2[r·n1·per]
            load_rows(
                b2, n1 * per, b1, k1, k1s * bn1, bn1, n1, 1, False
            )  # LoadData2DParams((k1s + r) * bn1, n1, 1, 0, 0, False)
            return
        n1 = -(-nt // 16)
        total = k1 * n1
        for f in range(0, total, 255):
            load_at(
                b2, f * per, b1, (k1s * n1 + f) * per, LoadData2DParams(0, min(255, total - f), 1, 0, 0, True)
            )
