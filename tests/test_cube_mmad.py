"""Where Mmad's C starts (0, the bias tensor, the bias table, or the C it accumulates onto) and
an Mmad whose rounded-up n writes past its L0C tensor."""

from __future__ import annotations

import numpy as np
import pytest
from apikit import run
from cubekit import gm, l1_nz, load_a, load_b, sync

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    DataCopyParams,
    FixpipeParamsV220,
    HardEvent,
    Hardware,
    LocalMemAllocator,
    MmadParams,
    TPosition,
)

M, K, N = 16, 32, 32


def _case(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (M, K)).astype(np.float16)
    b = rng.integers(-4, 5, (K, N)).astype(np.float16)
    bias = rng.integers(-50, 50, N).astype(np.float32)
    return a, b, bias, a.astype(np.float32) @ b.astype(np.float32)


def _mmad_run(
    params: MmadParams, with_tensor: bool, c_count: int = M * N, twice: bool = False, fix_n: int = N
):
    a, b, bias, ab = _case()
    out = np.zeros(M * N, np.float32)

    def body(ga, gb, gbias, gc):
        l1 = LocalMemAllocator(Hardware.L1)
        ta, tb = l1_nz(ga, AscendC.half, M, K, l1), l1_nz(gb, AscendC.half, K, N, l1)
        tbias = l1.Alloc(AscendC.float32, N)
        AscendC.DataCopy(tbias, gm(gbias, AscendC.float32), N)
        sync(HardEvent.MTE2_MTE1)
        a2 = LocalMemAllocator(Hardware.L0A).Alloc(AscendC.half, M * K)
        b2 = LocalMemAllocator(Hardware.L0B).Alloc(AscendC.half, K * N)
        load_a(ta, a2, M, K)
        load_b(tb, b2, K, N)
        bt = AscendC.LocalTensor(AscendC.float32, TPosition.C2, 0, N)
        AscendC.DataCopy(bt, tbias, DataCopyParams(1, N * 4 // 64, 0, 0))  # C1 -> C2: 64 B units
        sync(HardEvent.MTE1_M)
        c = AscendC.LocalTensor(AscendC.float32, TPosition.CO1, 0, c_count)
        if twice:
            AscendC.Mmad(c, a2, b2, MmadParams(M, N, K))
        if with_tensor:
            AscendC.Mmad(c, a2, b2, bt, params)
        else:
            AscendC.Mmad(c, a2, b2, params)
        sync(HardEvent.M_FIX)
        AscendC.Fixpipe(gm(gc, AscendC.float32), c, FixpipeParamsV220(fix_n, M, M, N))

    res = run(body, a, b, bias, out, core_type="aic")
    return out.reshape(M, N), ab, bias, res


def test_a_bias_tensor_starts_c_from_the_bias():
    got, ab, bias, _ = _mmad_run(MmadParams(M, N, K, cmatrixInitVal=False), with_tensor=True)
    np.testing.assert_array_equal(got, ab + bias)


def test_cmatrix_source_without_a_tensor_starts_c_from_the_bias_table():
    got, ab, bias, _ = _mmad_run(
        MmadParams(M, N, K, cmatrixInitVal=False, cmatrixSource=True), with_tensor=False
    )
    np.testing.assert_array_equal(got, ab + bias)


@pytest.mark.parametrize(("init", "source", "factor"), [(True, True, 1), (False, False, 2)])
def test_init_val_zeroes_c_and_without_it_c_accumulates(init, source, factor):
    p = MmadParams(M, N, K, cmatrixInitVal=init, cmatrixSource=source)
    got, ab, _, _ = _mmad_run(p, with_tensor=False, twice=True)
    np.testing.assert_array_equal(got, factor * ab)


def test_an_mmad_writing_past_its_l0c_tensor_warns_and_keeps_the_numbers():
    # the tensor holds the first 16 columns; Fixpipe reads only those, as the samples do
    got, ab, _, res = _mmad_run(MmadParams(M, N, K), with_tensor=False, c_count=M * 16, fix_n=16)
    np.testing.assert_array_equal(got[:, :16], ab[:, :16])
    (w,) = [w for w in res.warnings if w.kind == "tensor-overrun"]
    assert "Mmad" in w.message and "2048 B" in w.message and "1024 B" in w.message
