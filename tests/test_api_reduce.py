"""The reduction family: per repeat, per block, per pair, the level-0 whole reductions, the
counter-mode chains of the reduce sample, and the registers they leave behind."""

from __future__ import annotations

import numpy as np
import pytest
from apikit import load, run, store, ub, vec_ops
from hypothesis import given
from hypothesis import strategies as st

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import MASK_PLACEHOLDER, MaskMode, ReduceOrder, ReduceType, float32, half


def _reduce(call, x: np.ndarray, n_out: int):
    dt = AscendC.as_dtype(x.dtype)
    out = np.zeros(n_out, x.dtype)

    def body(gx, go):
        ts, to = ub((dt, x.size), (dt, max(n_out, 16)))
        load(ts, gx)
        AscendC.Duplicate(to, 0, max(n_out, 16))
        call(to, ts)
        store(go, to, n_out)

    em = run(body, x, out)
    return out, em


@given(reps=st.integers(1, 8), mask=st.integers(1, 64))
def test_reduce_repeat_sum_per_repeat_over_the_active_lanes(reps, mask):
    x = np.random.default_rng(reps * 100 + mask).uniform(1, 10, 512).astype(np.float32)
    out, _ = _reduce(
        lambda d, s: AscendC.ReduceRepeat(ReduceType.SUM, float32, d, s, mask, reps, 1, 1, 8), x, 16
    )
    want = x[: reps * 64].reshape(reps, 64)[:, :mask].astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(out[:reps], want, rtol=1e-5)


def test_reduce_repeat_min_writes_value_index_pairs():
    x = np.random.default_rng(4).uniform(1, 10, 1024).astype(np.float16)
    out, _ = _reduce(lambda d, s: AscendC.ReduceRepeat(ReduceType.MIN, half, d, s, 128, 8, 1, 1, 8), x, 16)
    rows = x.reshape(8, 128)
    np.testing.assert_array_equal(out[0::2], rows.min(axis=1))
    np.testing.assert_array_equal(out[1::2].view(np.uint16), rows.argmin(axis=1))


def test_whole_reduce_max_only_value():
    x = np.random.default_rng(5).uniform(-1, 1, 1024).astype(np.float16)
    out, _ = _reduce(
        lambda d, s: AscendC.WholeReduceMax(d, s, 128, 8, 1, 1, 8, ReduceOrder.ORDER_ONLY_VALUE), x, 16
    )
    np.testing.assert_array_equal(out[:8], x.reshape(8, 128).max(axis=1))


def test_reduce_repeat_rows_with_an_aligned_row_stride():
    rows, cols, stride_blocks = 13, 57, 8  # 57 floats padded to 64 per row
    x = np.zeros(rows * 64, np.float32)
    data = np.random.default_rng(6).uniform(1, 10, (rows, cols)).astype(np.float32)
    x.reshape(rows, 64)[:, :cols] = data
    out, _ = _reduce(
        lambda d, s: AscendC.ReduceRepeat(ReduceType.SUM, d, s, cols, rows, 1, 1, stride_blocks), x, 16
    )
    np.testing.assert_allclose(out[:rows], data.astype(np.float64).sum(axis=1), rtol=1e-5)


@pytest.mark.parametrize(
    "kind,fn", [(ReduceType.MAX, np.max), (ReduceType.MIN, np.min), (ReduceType.SUM, np.sum)]
)
def test_reduce_data_block_gives_one_result_per_32_bytes(kind, fn):
    x = np.random.default_rng(7).uniform(-10, 10, 256).astype(np.float16)
    out, _ = _reduce(lambda d, s: AscendC.ReduceDataBlock(kind, half, d, s, 128, 2, 1, 1, 8), x, 16)
    blocks = x.reshape(16, 16).astype(np.float32)
    np.testing.assert_allclose(out, fn(blocks, axis=1).astype(np.float16), rtol=1e-3)


def test_block_reduce_sum_takes_repeat_before_mask():
    x = np.random.default_rng(8).uniform(-10, 10, 128).astype(np.float32)
    out, _ = _reduce(lambda d, s: AscendC.BlockReduceSum(d, s, 2, 64, 1, 1, 8), x, 16)
    np.testing.assert_allclose(out, x.reshape(16, 8).astype(np.float64).sum(axis=1), rtol=1e-5)


def test_reduce_pair_elem_adds_neighbours():
    x = np.random.default_rng(9).uniform(-1000, 1000, 128).astype(np.float16)
    mask = [2**64 - 1, 2**64 - 1]
    out, _ = _reduce(lambda d, s: AscendC.ReducePairElem(ReduceType.SUM, half, d, s, mask, 1, 1, 1, 8), x, 64)
    np.testing.assert_allclose(out, (x[0::2].astype(np.float32) + x[1::2]).astype(np.float16), rtol=1e-3)


def test_level0_reduce_max_with_index_over_all_repeats():
    x = np.random.default_rng(10).uniform(-1, 1, 512).astype(np.float16)

    def call(d, s):
        (work,) = ub((half, 512))
        AscendC.ReduceMax(half, d, s, work, 128, 4, 8, True)

    out, _ = _reduce(call, x, 16)
    assert out[0] == x.max() and out[1].view(np.uint16) == x.argmax()


def test_get_reduce_repeat_sum_spr_reads_the_last_sum():
    x = np.ones(256, np.float16)
    got = []

    def call(d, s):
        (work,) = ub((half, 256))
        AscendC.ReduceSum(half, d, s, work, 256)
        AscendC.SetFlag(AscendC.HardEvent.V_S, 0)
        AscendC.WaitFlag(AscendC.HardEvent.V_S, 0)
        got.append(AscendC.GetReduceRepeatSumSpr(half))

    _reduce(call, x, 16)
    assert got == [256]


def test_counter_mode_chain_of_the_reduce_sample_sums_everything():
    n = 10000
    x = np.random.default_rng(11).uniform(0, 1, n).astype(np.float32)
    out = np.zeros(16, np.float32)

    def body(gx, go):
        ts, to = ub((float32, n), (float32, 16))
        load(ts, gx)
        AscendC.SetMaskCount()
        total, src, dst = n, ts, ts
        while total > 1:
            AscendC.SetVectorMask(AscendC.uint8, MaskMode.COUNTER, 0, total)
            AscendC.ReduceRepeat(
                ReduceType.SUM, float32, float32, False, dst, src, MASK_PLACEHOLDER, 1, 1, 1, 8
            )
            AscendC.PipeBarrier(AscendC.PIPE_V)
            total = AscendC.DivCeil(total, 64)
            src = dst
        AscendC.ResetMask()
        AscendC.SetMaskNorm()
        AscendC.DataCopy(to, ts, 8)
        store(go, to)

    em = run(body, x, out)
    assert out[0] == pytest.approx(x.astype(np.float64).sum(), rel=1e-5)
    assert len(vec_ops(em, "ReduceRepeat")) == 3  # 10000 → 157 → 3 → 1


@pytest.mark.parametrize("n", [200, 512])
def test_block_then_repeat_reduction_in_counter_mode_as_in_the_reduce_sample(n):
    x = np.random.default_rng(n).uniform(0, 1, n).astype(np.float32)
    out = np.zeros(8, np.float32)

    def body(gx, go):
        ts, tmp, to = ub((float32, n), (float32, n), (float32, 8))
        load(ts, gx)
        AscendC.Duplicate(to, 0.0, 8)
        AscendC.SetMaskCount()
        AscendC.SetVectorMask(float32, 0, n)
        AscendC.ReduceDataBlock(
            ReduceType.SUM, float32, float32, False, tmp, ts, MASK_PLACEHOLDER, 1, 1, 1, 8
        )
        AscendC.PipeBarrier(AscendC.PIPE_V)
        AscendC.SetVectorMask(float32, 0, -(-n // 8))
        AscendC.ReduceRepeat(ReduceType.SUM, float32, float32, False, to, tmp, MASK_PLACEHOLDER, 1, 1, 1, 8)
        AscendC.PipeBarrier(AscendC.PIPE_V)
        AscendC.SetMaskNorm()
        store(go, to)

    run(body, x, out)
    assert out[0] == pytest.approx(x.astype(np.float64).sum(), rel=1e-5)
