"""Fixpipe's quantisation words, DataCopy from CO1 and LoadDataWithTranspose, each against an
independent numpy reference."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from apikit import run, sanitized
from cubekit import gm, l1_nz, load_a, sync, up

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    DataCopyCO12DstParams,
    FixpipeParamsV220,
    HardEvent,
    Hardware,
    LoadData2dTransposeParams,
    LocalMemAllocator,
    QuantMode_t,
)
from asc_tui.ascendc.cube.fixquant import decode
from asc_tui.ascendc.cube.loadtrans import transpose_squares


def word(scale: float, offset: int = 0, signed: bool = False, shift: int | None = None) -> int:
    """A quantisation word built from its documented fields."""
    w = struct.unpack("<I", struct.pack("<f", scale))[0] & 0xFFFFE000
    if shift is not None:
        w |= (shift & 0xF) << 32 | 1 << 36
    return w | (offset & 0x1FF) << 37 | int(signed) << 46


def test_a_word_decodes_to_its_scale_offset_shift_and_sign():
    scale, off, shift, on, signed = decode(np.array([word(0.75, -3, True, 2), word(2.0)], np.uint64))
    assert scale.tolist() == [0.75, 2.0] and off.tolist() == [-3, 0]
    assert shift.tolist() == [2, 0] and on.tolist() == [True, False] and signed.tolist() == [True, False]


def _int8_mm(m, k, n, seed=5):
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 4, (m, k)).astype(np.int8)
    b = rng.integers(-4, 4, (k, n)).astype(np.int8)
    return a, b, a.astype(np.int32) @ b.astype(np.int32)


def _int8_to_l0c(ga, gb, m, k, n):
    """A (m × k) · B (k × n) in int8: B goes through LoadDataWithTranspose (32 × 32 squares)."""
    l1 = LocalMemAllocator(Hardware.L1)
    ta, tb = l1_nz(ga, AscendC.int8, m, k, l1), l1_nz(gb, AscendC.int8, k, n, l1)
    sync(HardEvent.MTE2_MTE1)
    a2 = LocalMemAllocator(Hardware.L0A).Alloc(AscendC.int8, up(m, 16) * k)
    b2 = LocalMemAllocator(Hardware.L0B).Alloc(AscendC.int8, k * n)
    load_a(ta, a2, m, k)
    for i in range(k // 32):  # one k square row per call: n / 32 squares, k / 32 apart in L1
        p = LoadData2dTransposeParams(0, n // 32, k // 32, 1, 0)
        AscendC.LoadDataWithTranspose(b2[i * n * 32], tb[i * 1024], p)
    sync(HardEvent.MTE1_M)
    c = LocalMemAllocator(Hardware.L0C).Alloc(AscendC.int32, up(m, 16) * n)
    AscendC.Mmad(c, a2, b2, AscendC.MmadParams(m, n, k))
    sync(HardEvent.M_FIX)
    return c


@pytest.mark.parametrize(
    ("signed", "dtype", "lo", "hi"), [(True, np.int8, -128, 127), (False, np.uint8, 0, 255)]
)
def test_req8_scales_rounds_offsets_and_saturates_by_the_sign_bit(signed, dtype, lo, hi):
    m, k, n = 32, 64, 64
    a, b, c = _int8_mm(m, k, n)
    out = np.zeros(m * n, dtype)
    w = word(0.375, offset=-5, signed=signed)

    def body(ga, gb, gc):
        l0c = _int8_to_l0c(ga, gb, m, k, n)
        p = FixpipeParamsV220(n, m, m, n, QuantMode_t.REQ8, w)
        AscendC.Fixpipe(gm(gc, np.dtype(dtype)), l0c, p)

    run(body, a, b, out, core_type="aic")
    want = np.clip(np.clip(np.rint(c.astype(np.float32) * np.float32(0.375)), -256, 255) - 5, lo, hi)
    np.testing.assert_array_equal(out.reshape(m, n), want.astype(dtype))


def test_vdeqf16_takes_one_word_per_column_from_l1_and_relu_zeroes_negatives():
    m, k, n = 16, 32, 32
    a, b, c = _int8_mm(m, k, n, seed=9)
    scales = ((np.arange(n) + 1) * 0.125).astype(np.float32)  # exact in the word's 10-bit mantissa
    words = np.array([word(float(s)) for s in scales], np.uint64)
    out = np.zeros(m * n, np.float16)

    def body(ga, gb, gw, gc):
        l0c = _int8_to_l0c(ga, gb, m, k, n)
        cbuf = LocalMemAllocator(Hardware.L1).Alloc(AscendC.uint64, n)
        AscendC.DataCopy(cbuf, gm(gw, AscendC.uint64), n)
        sync(HardEvent.MTE2_FIX)
        p = FixpipeParamsV220(n, m, 16, n, QuantMode_t.VDEQF16, reluEn=True)
        AscendC.Fixpipe(gm(gc, AscendC.half), l0c, cbuf, p)

    run(body, a, b, words, out, core_type="aic")
    want = np.maximum(c.astype(np.float32) * scales, 0).astype(np.float16)
    np.testing.assert_array_equal(out.reshape(m, n), want)


def test_datacopy_from_co1_writes_nd_matrices_from_the_nz2nd_register():
    m, k, n = 16, 32, 32  # two 16 x 16 ND matrices: the two fractal columns of C, 300 apart
    a, b, c = _int8_mm(m, k, n, seed=2)
    out = np.full(600, -1, np.float16)

    def body(ga, gb, gc):
        l0c = _int8_to_l0c(ga, gb, m, k, n)
        AscendC.SetFixpipeNz2ndFlag(2, 1, 300)  # srcNdStride 1 KB = one 16 x 16 fp32 fractal
        AscendC.SetFixpipePreQuantFlag(word(0.5))
        p = DataCopyCO12DstParams(16, m, 16, 16, QuantMode_t.DEQF16, 0, False, True)
        AscendC.DataCopy(gm(gc, AscendC.half), l0c, p)

    run(body, a, b, out, core_type="aic")
    want = (c.astype(np.float32) * 0.5).astype(np.float16)
    np.testing.assert_array_equal(out[:256].reshape(16, 16), want[:, :16])
    np.testing.assert_array_equal(out[300:556].reshape(16, 16), want[:, 16:])
    assert (out[256:300] == -1).all()


def test_a_scalar_quant_mode_without_its_word_is_refused():
    m, k, n = 16, 32, 32
    a, b, _ = _int8_mm(m, k, n)

    def body(ga, gb, gc):
        l0c = _int8_to_l0c(ga, gb, m, k, n)
        p = DataCopyCO12DstParams(n, m, n, 16, QuantMode_t.REQ8, 0, False, True)
        AscendC.DataCopy(gm(gc, AscendC.int8), l0c, p)

    with pytest.raises(Exception, match="SetFixpipePreQuantFlag"):
        run(body, a, b, np.zeros(m * n, np.int8), core_type="aic")


@pytest.mark.parametrize(("cf", "nfr", "vertical"), [(32, 2, True), (16, 1, True), (8, 2, False)])
def test_transposed_squares_are_built_and_split_as_documented(cf, nfr, vertical):
    rng = np.random.default_rng(cf)
    frs = rng.integers(0, 100, (3, nfr, 16, cf))
    square = np.concatenate(list(frs.transpose(1, 0, 2, 3)), axis=1 if vertical else 2)  # rep x side x side
    t = square.transpose(0, 2, 1)
    want = np.split(t, nfr, axis=1 if vertical else 2)
    for got, w in zip(transpose_squares(frs), want, strict=True):
        np.testing.assert_array_equal(got, w)


def test_load_with_transpose_places_fractals_by_dst_gap_and_frac_gap():
    src = np.arange(2 * 1024, dtype=np.int8)  # two 32 x 32 int8 squares in L1 (wrapping values)
    out = np.zeros(6 * 512, np.int8)

    def body(gs, go):
        l1 = LocalMemAllocator(Hardware.L1).Alloc(AscendC.int8, 2048)
        AscendC.DataCopy(l1, gm(gs, AscendC.int8), 2048)
        sync(HardEvent.MTE2_MTE1)
        l0b = LocalMemAllocator(Hardware.L0B).Alloc(AscendC.int8, 6 * 512)
        AscendC.LoadDataWithTranspose(l0b, l1, LoadData2dTransposeParams(0, 2, 1, 0, 1))
        sync(HardEvent.MTE1_FIX)
        g = gm(go, AscendC.int8)
        # read L0B back through L1 is not a hardware path: the test peeks at the twin's memory
        g.arr[:] = l0b.arr[: 6 * 512]

    run(body, src, out, core_type="aic")
    sq = src.reshape(2, 32, 32).transpose(0, 2, 1)
    frac = out.reshape(6, 16, 32)
    # repeat i: first fractal at i x (1 + dstGap) = i, second (1 + dstFracGap) = 2 later
    for i in range(2):
        np.testing.assert_array_equal(frac[i], sq[i, :16])
        np.testing.assert_array_equal(frac[i + 2], sq[i, 16:])


@pytest.mark.parametrize(("copied", "flagged"), [(32, False), (16, True)])
def test_the_sanitizer_sees_the_per_column_words_fixpipe_reads(copied, flagged):
    m, k, n = 16, 32, 32
    a, b, _ = _int8_mm(m, k, n)
    words = np.full(n, word(1.0), np.uint64)

    def body(ga, gb, gw, gc):
        l0c = _int8_to_l0c(ga, gb, m, k, n)
        cbuf = LocalMemAllocator(Hardware.L1).Alloc(AscendC.uint64, n)
        AscendC.DataCopy(cbuf, gm(gw, AscendC.uint64), copied)  # all the words, or half of them
        sync(HardEvent.MTE2_FIX)
        AscendC.Fixpipe(gm(gc, AscendC.half), l0c, cbuf, FixpipeParamsV220(n, m, 16, n, QuantMode_t.VDEQF16))

    san, err = sanitized(body, a, b, words, np.zeros(m * n, np.float16), core_type="aic")
    unin = [f for f in san.findings() if f.kind == "uninitialized"]
    assert err is None and bool(unin) == flagged
