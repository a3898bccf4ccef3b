"""The wider vector instruction set: numerics against independent numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from apikit import load, run, store, ub, vec_ops
from hypothesis import given
from hypothesis import strategies as st

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    CMPMODE,
    SELMODE,
    RoundMode,
    UnaryRepeatParams,
    float32,
    half,
    int32,
    uint8,
    uint16,
)


def _one(call, src: np.ndarray, out_dtype, n_out: int, extra=()):
    dt_in = AscendC.as_dtype(src.dtype)
    out = np.zeros(n_out, out_dtype)

    def body(x, o, *more):
        ts, to = ub((dt_in, src.size), (AscendC.as_dtype(out_dtype), n_out))
        load(ts, x)
        AscendC.Duplicate(to, 0, n_out)
        tensors = []
        for gm, arr in zip(more, extra):
            (t,) = ub((AscendC.as_dtype(arr.dtype), arr.size))
            load(t, gm)
            tensors.append(t)
        call(to, ts, *tensors)
        store(o, to)

    em = run(body, src, out, *extra)
    return out, em


@given(alpha=st.floats(0.001, 0.5), n=st.sampled_from([128, 256, 512]))
def test_leaky_relu_scales_the_negatives(alpha, n):
    x = np.linspace(-3, 3, n).astype(np.float16)
    a = np.float16(alpha)
    out, _ = _one(lambda d, s: AscendC.LeakyRelu(d, s, a, n), x, np.float16, n)
    np.testing.assert_array_equal(out, np.where(x >= 0, x, x * a))


def test_leaky_relu_level0_as_in_the_sample():
    x = np.linspace(-3, 3, 512).astype(np.float16)
    a = np.float16(0.01)
    out, _ = _one(lambda d, s: AscendC.LeakyRelu(d, s, a, 128, 4, (1, 1, 8, 8)), x, np.float16, 512)
    np.testing.assert_array_equal(out, np.where(x >= 0, x, x * a))


def test_add_relu_sub_relu_ors_and_shifts():
    rng = np.random.default_rng(0)
    a = rng.uniform(-2, 2, 256).astype(np.float16)
    b = rng.uniform(-2, 2, 256).astype(np.float16)
    out, _ = _one(lambda d, s, t: AscendC.AddRelu(d, s, t, 256), a, np.float16, 256, (b,))
    np.testing.assert_array_equal(out, np.maximum(a + b, np.float16(0)))
    out, _ = _one(lambda d, s, t: AscendC.SubRelu(d, s, t, 256), a, np.float16, 256, (b,))
    np.testing.assert_array_equal(out, np.maximum(a - b, np.float16(0)))
    u = rng.integers(0, 60000, 256).astype(np.uint16)
    out, _ = _one(lambda d, s: AscendC.Ors(d, s, np.uint16(0x0F0F), 256), u, np.uint16, 256)
    np.testing.assert_array_equal(out, u | 0x0F0F)
    out, _ = _one(lambda d, s: AscendC.ShiftRight(d, s, 2, 256), u, np.uint16, 256)
    np.testing.assert_array_equal(out, u >> 2)
    out, _ = _one(lambda d, s: AscendC.ShiftLeft(d, s, 3, 256), u, np.uint16, 256)
    np.testing.assert_array_equal(out, (u.astype(np.uint32) << 3).astype(np.uint16))


@pytest.mark.parametrize("mode,fn", [(RoundMode.CAST_CEIL, np.ceil), (RoundMode.CAST_FLOOR, np.floor)])
def test_cast_level0_rounds_and_lays_out_by_repeat(mode, fn):
    x = np.linspace(-50, 50, 256).astype(np.float16)
    # half → int32: 64 lanes per repeat, src repeats every 4 blocks (64 halves), dst every 8
    out, _ = _one(
        lambda d, s: AscendC.Cast(d, s, mode, 64, 4, UnaryRepeatParams(1, 1, 8, 4)), x, np.int32, 256
    )
    np.testing.assert_array_equal(out, fn(x.astype(np.float64)).astype(np.int32))


def test_duplicate_level0_fills_strided_blocks():
    out, _ = _one(
        lambda d, s: AscendC.Duplicate(d, 7.0, 16, 2, 2, 16), np.zeros(16, np.float16), np.float16, 512
    )
    want = np.zeros(512, np.float16)
    for r in range(2):
        for b in (0,):  # 16 lanes = block 0 only
            want[r * 256 + b * 32 : r * 256 + b * 32 + 16] = 7
    np.testing.assert_array_equal(out, want)


def test_compare_level0_writes_lane_bits_per_repeat_and_compares_with_a_scalar():
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, 128).astype(np.float32)
    b = rng.uniform(-1, 1, 128).astype(np.float32)
    out, _ = _one(
        lambda d, s, t: AscendC.Compare(d, s, t, CMPMODE.LT, 64, 2, AscendC.BinaryRepeatParams()),
        a,
        np.uint8,
        32,
        (b,),
    )
    np.testing.assert_array_equal(out[:16], np.packbits(a < b, bitorder="little"))
    out, _ = _one(lambda d, s: AscendC.Compares(d, s, np.float32(0.25), CMPMODE.GE, 128), a, np.uint8, 32)
    np.testing.assert_array_equal(out[:16], np.packbits(a >= 0.25, bitorder="little"))


def test_compare_into_the_register_then_get_cmp_mask():
    a = np.arange(64, dtype=np.float32)
    b = np.full(64, 10, np.float32)
    out, _ = _one(
        lambda d, s, t: (
            AscendC.Compare(s, t, CMPMODE.GT, 64, AscendC.BinaryRepeatParams()),
            AscendC.GetCmpMask(d),
        ),
        a,
        np.uint8,
        32,
        (b,),
    )
    np.testing.assert_array_equal(out[:8], np.packbits(a > 10, bitorder="little"))
    assert not out[8:16].any()


def test_select_cmpmask_mode_reuses_one_repeat_of_bits():
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, 256).astype(np.float32)
    y = rng.uniform(-1, 1, 256).astype(np.float32)
    sel = rng.integers(0, 256, 32).astype(np.uint8)
    out = np.zeros(256, np.float32)

    def body(gx, gy, gs, go):
        tx, ty, ts, to = ub((float32, 256), (float32, 256), (uint8, 32), (float32, 256))
        load(tx, gx)
        load(ty, gy)
        load(ts, gs)
        AscendC.Select(to, ts, tx, ty, SELMODE.VSEL_CMPMASK_SPR, 256)
        store(go, to)

    run(body, x, y, sel, out)
    bits = np.unpackbits(sel, bitorder="little")[np.arange(256) % 64].astype(bool)
    np.testing.assert_array_equal(out, np.where(bits, x, y))


def test_create_vec_index_and_brcb():
    out, _ = _one(lambda d, s: AscendC.CreateVecIndex(d, 5, 200), np.zeros(16, np.int32), np.int32, 256)
    np.testing.assert_array_equal(out[:200], np.arange(200) + 5)
    src = np.arange(16, dtype=np.uint16)
    out, _ = _one(lambda d, s: AscendC.Brcb(d, s, 2, (1, 8)), src, np.uint16, 256)
    np.testing.assert_array_equal(out, np.repeat(src, 16))


def test_copy_level0_moves_strided_blocks():
    src = np.arange(512, dtype=np.int32)
    out, _ = _one(lambda d, s: AscendC.Copy(d, s, 64, 2, (1, 2, 8, 16)), src, np.int32, 512)
    want = np.zeros(512, np.int32)
    for r in range(2):
        for b in range(8):
            want[r * 64 + b * 8 : r * 64 + b * 8 + 8] = src[r * 128 + b * 16 : r * 128 + b * 16 + 8]
    np.testing.assert_array_equal(out, want)


def test_transpose_16x16():
    src = np.arange(256, dtype=np.float16)
    out, em = _one(lambda d, s: AscendC.Transpose(half, d, s), src, np.float16, 256)
    np.testing.assert_array_equal(out, src.reshape(16, 16).T.reshape(-1))
    assert vec_ops(em, "Transpose")


def test_int_types_still_work_in_level2_forms():
    src = np.arange(64, dtype=np.int32)
    out, _ = _one(lambda d, s: AscendC.Adds(int32, d, s, 1, 64), src, np.int32, 64)
    np.testing.assert_array_equal(out, src + 1)
    out, _ = _one(lambda d, s: AscendC.Duplicate(uint16, d.ReinterpretCast(uint16), 3, 8), src, np.int32, 64)
    assert out[0] == 3 + (3 << 16)


def test_enhanced_transpose_nchw_to_nhwc_and_back():
    n, c, h, w = 3, 3, 2, 8
    src = np.random.default_rng(3).uniform(-1, 1, n * c * h * w).astype(np.float16)
    p = AscendC.TransposeParamsExt(n, c, h, w, AscendC.TransposeType.TRANSPOSE_NCHW2NHWC)

    def call(d, s):
        (tmp,) = ub((uint8, 1024))
        AscendC.Transpose(d, s, tmp, p)

    out, _ = _one(call, src, np.float16, src.size)
    np.testing.assert_array_equal(out, src.reshape(n, c, h, w).transpose(0, 2, 3, 1).reshape(-1))
    back = AscendC.TransposeParamsExt(n, c, h, w, AscendC.TransposeType.TRANSPOSE_NHWC2NCHW)
    again, _ = _one(lambda d, s: AscendC.Transpose(d, s, None, back), out, np.float16, src.size)
    np.testing.assert_array_equal(again, src)


def test_trans_data_to_5hd_turns_nchw_into_nc1hwc0():
    n, c, h, w = 2, 32, 16, 16
    x = np.random.default_rng(4).standard_normal(n * c * h * w).astype(np.float16)

    def call(d, s):
        p = AscendC.TransDataTo5HDParams(False, False, 16, 16, 1)
        for j in range(4):
            dst_list = [d[j * 16 * h * w + w * i].GetPhyAddr() for i in range(16)]
            src_list = [s[j * 16 * h * w + h * w * i].GetPhyAddr() for i in range(16)]
            AscendC.TransDataTo5HD(half, dst_list, src_list, p)

    out, _ = _one(call, x, np.float16, x.size)
    want = x.reshape(n, 2, 16, h, w).transpose(0, 1, 3, 4, 2).reshape(-1)
    np.testing.assert_array_equal(out, want)
