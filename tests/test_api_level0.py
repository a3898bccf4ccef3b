"""The level-0 vector API: masks as counts or bits, repeats, repeat strides, counter mode, and
the hardware's rules for them (checked by guard rails the sanitizer reports)."""

from __future__ import annotations

import numpy as np
import pytest
from apikit import CHIP, lanes_ref, load, run, sanitized, store, ub, vec_ops
from hypothesis import given
from hypothesis import strategies as st

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    MASK_PLACEHOLDER,
    BinaryRepeatParams,
    MaskMode,
    UnaryRepeatParams,
    float32,
    half,
)
from asc_tui.devkit.debug.sanitizer import findings_from_errors
from asc_tui.npu.errors import KernelError


def _binary_case(mask, reps, params, n=1024, dtype=np.float16):
    rng = np.random.default_rng(3)
    a = rng.uniform(-4, 4, n).astype(dtype)
    b = rng.uniform(-4, 4, n).astype(dtype)
    out = np.full(n, -99, dtype)
    dt = half if dtype == np.float16 else float32

    def body(x, y, o):
        ta, tb, to = ub((dt, n), (dt, n), (dt, n))
        load(ta, x)
        load(tb, y)
        AscendC.Duplicate(to, -99.0, n)
        AscendC.Add(to, ta, tb, mask, reps, params)
        store(o, to)

    em = run(body, a, b, out)
    return a, b, out, em


def test_count_mask_covers_the_first_lanes_of_every_repeat():
    a, b, out, _ = _binary_case(100, 3, BinaryRepeatParams())
    want = np.full(1024, -99, np.float16)
    for r in range(3):
        sl = slice(r * 128, r * 128 + 100)
        want[sl] = a[sl] + b[sl]
    np.testing.assert_array_equal(out, want)


def test_bit_mask_selects_lanes_low_word_first():
    mask = [0b1011, 1 << 63]  # lanes 0, 1, 3 and 127
    a, b, out, _ = _binary_case(mask, 2, BinaryRepeatParams())
    on = [0, 1, 3, 127, 128, 129, 131, 255]
    want = np.full(1024, -99, np.float16)
    want[on] = a[on] + b[on]
    np.testing.assert_array_equal(out, want)


def test_brace_init_tuple_is_the_params_struct():
    _, _, o1, _ = _binary_case(128, 2, (1, 1, 1, 16, 8, 8))
    _, _, o2, _ = _binary_case(128, 2, BinaryRepeatParams(1, 1, 1, 16, 8, 8))
    np.testing.assert_array_equal(o1, o2)


@given(
    mask=st.integers(1, 64),
    reps=st.integers(1, 4),
    blk=st.integers(0, 2),
    rep=st.integers(0, 18),
    sblk=st.integers(1, 2),
    srep=st.integers(8, 16),
)
def test_unary_strides_follow_blocks_of_32_bytes(mask, reps, blk, rep, sblk, srep):
    n = 4096
    src = (np.arange(n) % 13).astype(np.float32) / 4
    out = np.zeros(n, np.float32)

    def body(x, o):
        ts, to = ub((float32, n), (float32, n))
        load(ts, x)
        AscendC.Duplicate(to, 0.0, n)
        AscendC.Exp(to, ts, mask, reps, UnaryRepeatParams(blk, sblk, rep, srep))
        store(o, to)

    run(body, src, out)
    i_src = lanes_ref(n, 4, mask, reps, sblk, srep)
    i_dst = lanes_ref(n, 4, mask, reps, blk, rep)
    want = np.zeros(n, np.float32)
    want[i_dst] = np.exp(src[i_src])  # later lanes win where strides overlap, as in order
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_scalar_ops_take_the_level0_form():
    src = np.linspace(-2, 2, 256).astype(np.float16)
    out = np.zeros(256, np.float16)

    def body(x, o):
        ts, to = ub((half, 256), (half, 256))
        load(ts, x)
        AscendC.Duplicate(to, 0.0, 256)
        AscendC.Adds(to, ts, 1.0, 64, 2, UnaryRepeatParams())
        store(o, to)

    run(body, src, out)
    want = np.zeros(256, np.float16)
    for r in range(2):
        want[r * 128 : r * 128 + 64] = src[r * 128 : r * 128 + 64] + np.float16(1)
    np.testing.assert_array_equal(out, want)


def test_counter_mode_runs_ceil_count_over_lanes_repeats_and_ignores_repeat_times():
    n = 200
    a = np.arange(256, dtype=np.float32)
    out = np.zeros(256, np.float32)

    def body(x, o):
        ta, to = ub((float32, 256), (float32, 256))
        load(ta, x)
        AscendC.Duplicate(to, 0.0, 256)
        AscendC.SetMaskCount()
        AscendC.SetVectorMask(float32, MaskMode.COUNTER, 0, n)
        AscendC.Add(float32, False, to, ta, ta, MASK_PLACEHOLDER, 1, BinaryRepeatParams())
        AscendC.SetMaskNorm()
        AscendC.ResetMask()
        store(o, to)

    em = run(body, a, out)
    want = np.zeros(256, np.float32)
    want[:n] = a[:n] * 2
    np.testing.assert_array_equal(out, want)
    (start, end), *_ = vec_ops(em, "Add")
    assert end - start == pytest.approx(CHIP.vec_startup + 4 * CHIP.vec_cycles_per_repeat("Add"))


def test_mask_placeholder_in_normal_mode_uses_the_register():
    a = np.ones(128, np.float16)
    out = np.zeros(128, np.float16)

    def body(x, o):
        ta, to = ub((half, 128), (half, 128))
        load(ta, x)
        AscendC.Duplicate(to, 0.0, 128)
        AscendC.SetVectorMask(half, MaskMode.NORMAL, 0, 0xFF)  # maskHigh, maskLow
        AscendC.Muls(to, ta, 3.0, MASK_PLACEHOLDER, 1, UnaryRepeatParams())
        store(o, to)

    run(body, a, out)
    assert list(out[:9]) == [3] * 8 + [0]


def test_level0_cost_is_startup_plus_repeats_times_the_chip_figure():
    _, _, _, em = _binary_case(128, 5, BinaryRepeatParams())
    (start, end), *_ = vec_ops(em, "Add")
    assert end - start == pytest.approx(CHIP.vec_startup + 5 * CHIP.vec_cycles_per_repeat("Add"))


def test_full_and_timing_only_runs_give_the_same_timeline():
    def body(x, o):
        ta, tb, to = ub((half, 1024), (float32, 512), (half, 1024))
        load(ta, x)
        AscendC.Duplicate(to, 0.0, 128, 2, 1, 8)
        AscendC.Cast(tb, ta, AscendC.RoundMode.CAST_NONE, 64, 8, UnaryRepeatParams(1, 1, 8, 4))
        AscendC.LeakyRelu(to, ta, 0.1, 128, 8, (1, 1, 8, 8))
        AscendC.ReduceRepeat(AscendC.ReduceType.SUM, half, to, ta, 128, 8, 1, 1, 8)
        AscendC.ReduceDataBlock(AscendC.ReduceType.MAX, half, to[64], ta, 128, 2, 1, 1, 8)
        AscendC.Brcb(to[256], ta, 2, (1, 8))
        AscendC.CreateVecIndex(to[512], 0, 128)
        AscendC.SetMaskCount()
        AscendC.SetVectorMask(0, 300)
        AscendC.Add(to, ta, ta, MASK_PLACEHOLDER, 1, BinaryRepeatParams())
        AscendC.SetMaskNorm()
        store(o, to)

    x = np.ones(1024, np.float16)
    full = run(body, x, np.zeros(1024, np.float16))
    timing = run(body, x, np.zeros(1024, np.float16), numeric=False)
    assert full.timeline_key() == timing.timeline_key()


# ---- the hardware's rules -------------------------------------------------------------------------
def _illegal(call):
    a = np.ones(512, np.float32)

    def body(x):
        ta, to = ub((float32, 512), (float32, 512))
        load(ta, x)
        call(to, ta)

    return sanitized(body, a)


@pytest.mark.parametrize(
    "call,text",
    [
        (lambda d, s: AscendC.Exp(d, s, 65, 1, UnaryRepeatParams()), "count 65 is outside [1, 64]"),
        (lambda d, s: AscendC.Exp(d, s, 0, 1, UnaryRepeatParams()), "count 0 is outside"),
        (lambda d, s: AscendC.Exp(d, s, [1, 1], 1, UnaryRepeatParams()), "mask[1] must be 0"),
        (lambda d, s: AscendC.Exp(d, s, 64, 256, UnaryRepeatParams(1, 1, 0, 0)), "repeatTimes 256"),
        (lambda d, s: AscendC.Exp(d, s, 64, 1, UnaryRepeatParams(1, -1, 8, 8)), "stride srcBlkStride=-1"),
        (lambda d, s: AscendC.Exp(d, s, 64, 1, UnaryRepeatParams(1, 1, 256, 8)), "dstRepStride=256"),
        (lambda d, s: AscendC.Exp(d, s, [0, 0], 1, UnaryRepeatParams()), "at least one lane"),
    ],
)
def test_illegal_mask_repeat_or_stride_stops_the_run_and_is_a_finding(call, text):
    san, err = _illegal(call)
    assert isinstance(err, KernelError) and text in str(err)
    found, rest = findings_from_errors([err.info()], ("memcheck",), san)
    assert [f.kind for f in found] == ["illegal-vector-param"] and not rest


def test_a_repeat_past_the_tensor_is_an_out_of_bounds_finding_with_its_extent():
    san, err = _illegal(lambda d, s: AscendC.Exp(d, s, 64, 9, UnaryRepeatParams()))
    assert isinstance(err, KernelError)
    (f,) = [f for f in san.findings() if f.kind == "out-of-bounds"]
    assert f.tool == "memcheck" and f.access == "Read" and f.size == 9 * 64 * 4


def test_strided_writes_mark_only_the_lanes_written_for_initcheck():
    a = np.ones(512, np.float32)

    def body(x):
        ta, to, t2 = ub((float32, 512), (float32, 512), (float32, 512))
        load(ta, x)
        AscendC.Exp(to, ta, 64, 2, UnaryRepeatParams(2, 1, 16, 8))  # every other block
        AscendC.Add(t2, to, to, 8, 1, BinaryRepeatParams(1, 2, 2, 8, 8, 8))  # reads those blocks
        AscendC.Add(t2, to, to, 16, 1, BinaryRepeatParams())  # reads block 1: never written

    san, err = sanitized(body, a)
    assert err is None
    unin = [f for f in san.findings() if f.kind == "uninitialized"]
    assert len(unin) == 1 and unin[0].offset % 32 == 0


def test_racecheck_sees_a_level0_read_of_a_copy_in_flight():
    a = np.ones(512, np.float32)

    def body(x):
        ta, to = ub((float32, 512), (float32, 512))
        g = AscendC.GlobalTensor(float32)
        g.SetGlobalBuffer(x)
        AscendC.DataCopy(ta, g, 512)  # no MTE2_V event before the vector read
        AscendC.Exp(to, ta, 64, 2, UnaryRepeatParams(1, 2, 8, 16))

    san, err = sanitized(body, a)
    assert err is None
    races = [f for f in san.findings() if f.kind == "race-raw"]
    assert races and races[0].tool == "racecheck"


def test_counter_mode_blocks_follow_on_at_the_block_stride_across_implicit_repeats():
    src = np.arange(18 * 64, dtype=np.int32)
    out = np.zeros(144, np.int32)

    def body(x, o):
        ts, to = ub((AscendC.int32, 18 * 64), (AscendC.int32, 144))
        load(ts, x)
        AscendC.SetMaskCount()
        AscendC.SetVectorMask(AscendC.int32, MaskMode.COUNTER, 144)
        AscendC.Copy(AscendC.int32, False, to, ts, MASK_PLACEHOLDER, 1, (1, 8, 8, 8))
        AscendC.SetMaskNorm()
        AscendC.ResetMask()
        store(o, to)

    run(body, src, out)
    np.testing.assert_array_equal(out, src.reshape(18, 64)[:, :8].reshape(-1))


def test_multi_block_timing_only_runs_match_full_runs_with_level0_calls():
    def body(x, o):
        ta, to = ub((half, 1024), (half, 1024))
        g = AscendC.GlobalTensor(half)
        g.SetGlobalBuffer(x + AscendC.GetBlockIdx() * 1024)
        AscendC.DataCopy(ta, g, 1024)
        AscendC.SetFlag(AscendC.HardEvent.MTE2_V, 0)
        AscendC.WaitFlag(AscendC.HardEvent.MTE2_V, 0)
        AscendC.SetMaskCount()
        AscendC.SetVectorMask(half, MaskMode.COUNTER, 0, 1000)
        AscendC.Add(to, ta, ta, MASK_PLACEHOLDER, 1, BinaryRepeatParams())
        AscendC.SetMaskNorm()
        AscendC.ReduceRepeat(AscendC.ReduceType.MAX, half, to, to, 128, 8, 1, 1, 8)
        store(o + AscendC.GetBlockIdx() * 1024, to)

    x = np.ones(4096, np.float16)
    full = run(body, x, np.zeros(4096, np.float16), block_dim=4)
    timing = run(body, x, np.zeros(4096, np.float16), block_dim=4, numeric=False)
    assert full.timeline_key() == timing.timeline_key()
