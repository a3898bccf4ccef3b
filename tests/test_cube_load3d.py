"""LoadData with LoadData3DParamsV2 (img2col) and Mmad's kDirectionAlign, checked end to end
through Mmad against numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from apikit import run
from cubekit import gm, l1_nz, load_b, sync, up

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    FixpipeParamsV220,
    HardEvent,
    Hardware,
    LoadData3DParamsV2,
    LocalMemAllocator,
    MmadParams,
)
from asc_tui.ascendc.cube.load3d import _geometry, img2col


def _out(c, gc, m, n):
    sync(HardEvent.M_FIX)
    AscendC.Fixpipe(gm(gc, AscendC.float32), c, FixpipeParamsV220(n, m, up(m, 16), n))


def test_img2col_into_l0a_computes_a_padded_strided_dilated_convolution():
    h, w, cin, n = 4, 8, 16, 16  # one C1 block of half; 3 x 3 kernel, pad 1: 4 x 8 positions
    rng = np.random.default_rng(1)
    fmap = rng.integers(-3, 4, (1, h, w, cin)).astype(np.float16)  # NC1HWC0
    wts = rng.integers(-3, 4, (3, 3, cin, n)).astype(np.float16)
    kk = 9 * cin
    out = np.zeros(h * w * n, np.float32)

    def body(gf, gw, gc):
        l1 = LocalMemAllocator(Hardware.L1)
        tf = l1.Alloc(AscendC.half, fmap.size)
        AscendC.DataCopy(tf, gm(gf, AscendC.half), fmap.size)
        tw = l1_nz(gw, AscendC.half, kk, n, l1)
        sync(HardEvent.MTE2_MTE1)
        a2 = LocalMemAllocator(Hardware.L0A).Alloc(AscendC.half, h * w * kk)
        p = LoadData3DParamsV2([1, 1, 1, 1], h, w, cin, kk, h * w, 0, 0, 1, 1, 3, 3, 1, 1)
        AscendC.LoadData(a2, tf, p)
        b2 = LocalMemAllocator(Hardware.L0B).Alloc(AscendC.half, kk * n)
        load_b(tw, b2, kk, n)
        sync(HardEvent.MTE1_M)
        c = LocalMemAllocator(Hardware.L0C).Alloc(AscendC.float32, h * w * n)
        AscendC.Mmad(c, a2, b2, MmadParams(h * w, n, kk))
        _out(c, gc, h * w, n)

    run(body, fmap, wts.reshape(kk, n), out, core_type="aic")
    x = np.pad(fmap[0].astype(np.float32), ((1, 1), (1, 1), (0, 0)))
    want = sum(
        np.einsum("hwc,cn->hwn", x[i : i + h, j : j + w], wts[i, j].astype(np.float32))
        for i in range(3)
        for j in range(3)
    )
    np.testing.assert_array_equal(out.reshape(h, w, n), want)


def test_stride_dilation_padding_value_and_start_points_pick_the_right_window():
    rng = np.random.default_rng(2)
    fmap = rng.integers(1, 9, (2, 6, 9, 16)).astype(np.float16)  # C1 = 2
    p = LoadData3DParamsV2(
        [2, 0, 1, 0],
        6,
        9,
        32,
        32,
        16,
        32,
        4,
        strideW=2,
        strideH=1,
        filterW=2,
        filterH=2,
        dilationFilterW=3,
        dilationFilterH=2,
        padValue=-1,
    )
    g = _geometry(p, 16, None)
    x = img2col(fmap, p, g)
    padded = np.pad(fmap, ((0, 0), (1, 0), (2, 0), (0, 0)), constant_values=-1)
    assert (g.hout, g.wout) == (5, 4)
    for row in range(16):
        oh, ow = divmod(4 + row, g.wout)
        for blk in range(2):  # K blocks 2 and 3 of (c1, kh, kw): (0, 1, 0) and (0, 1, 1)
            c1, kh, kw = np.unravel_index(2 + blk, (2, 2, 2))
            want = padded[c1, oh + 2 * kh, 2 * ow + 3 * kw]
            np.testing.assert_array_equal(x[row, blk * 16 : blk * 16 + 16], want)


def test_load3d_into_l0b_and_a_transposed_fp32_a_with_k_direction_align():
    m, k, n = 32, 24, 16  # fp32: C0 = 8; A comes transposed (K x M) and k is not 16-aligned
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (m, k)).astype(np.float32)
    b = rng.integers(-4, 5, (k, n)).astype(np.float32)
    out = np.zeros(m * n, np.float32)
    kp = up(k, 16)

    def body(gat, gb, gc):
        l1 = LocalMemAllocator(Hardware.L1)
        ta, tb = l1_nz(gat, AscendC.float32, k, m, l1), l1_nz(gb, AscendC.float32, k, n, l1)
        sync(HardEvent.MTE2_MTE1)
        a2 = LocalMemAllocator(Hardware.L0A).Alloc(AscendC.float32, m * kp)
        AscendC.LoadData(
            a2,
            ta,
            LoadData3DParamsV2(l1H=1, l1W=kp, channelSize=m, kExtension=m, mExtension=kp, enTranspose=True),
        )
        b2 = LocalMemAllocator(Hardware.L0B).Alloc(AscendC.float32, kp * n)
        AscendC.LoadData(
            b2,
            tb,
            LoadData3DParamsV2(l1H=kp, l1W=1, channelSize=n, kExtension=n, mExtension=kp, enTranspose=True),
        )
        sync(HardEvent.MTE1_M)
        c = LocalMemAllocator(Hardware.L0C).Alloc(AscendC.float32, m * n)
        AscendC.Mmad(c, a2, b2, MmadParams(m, n, k, kDirectionAlign=True))
        _out(c, gc, m, n)

    run(body, np.ascontiguousarray(a.T), b, out, core_type="aic")
    np.testing.assert_array_equal(out.reshape(m, n), a @ b)


def test_rows_past_the_kernel_positions_are_refused():
    fmap = np.zeros(16 * 4 * 4, np.float16)

    def body(gf):
        tf = LocalMemAllocator(Hardware.L1).Alloc(AscendC.half, fmap.size)
        a2 = LocalMemAllocator(Hardware.L0A).Alloc(AscendC.half, 32 * 16)
        AscendC.LoadData(
            a2, tf, LoadData3DParamsV2(l1H=4, l1W=4, channelSize=16, kExtension=16, mExtension=32)
        )

    with pytest.raises(Exception, match="4x4 = 16 positions"):
        run(body, fmap, core_type="aic")
