"""Gather, Gatherb, GatherMask, Sort32 and MrgSort against independent numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from apikit import load, run, sanitized, store, ub
from hypothesis import given
from hypothesis import strategies as st

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import MrgSort4Info, MrgSortSrcList, float32, half, uint8, uint16, uint32
from asc_tui.npu.errors import KernelError


@pytest.mark.parametrize("resized", [False, True])
def test_gather_takes_elements_at_byte_offsets(resized):
    x = np.arange(128, dtype=np.float16)
    offs = (np.arange(128)[::-1] * 2).astype(np.uint32)
    out = np.zeros(128, np.float16)

    def body(gx, gi, go):
        if resized:  # SetSize grows the last allocation (the UB after it is free) to 128
            ti, to, tx = ub((uint32, 128), (half, 128), (half, 64))
            tx.SetSize(128)
            assert tx.GetSize() == 128
        else:
            tx, ti, to = ub((half, 128), (uint32, 128), (half, 128))
        load(tx, gx)
        load(ti, gi)
        AscendC.Gather(to, tx, ti, np.uint32(0), 128)
        store(go, to)

    run(body, x, offs, out)
    np.testing.assert_array_equal(out, x[::-1])


def test_gatherb_moves_whole_blocks():
    x = np.arange(128, dtype=np.uint16)
    offs = (np.arange(8)[::-1] * 32).astype(np.uint32)
    out = np.zeros(128, np.uint16)

    def body(gx, gi, go):
        tx, ti, to = ub((uint16, 128), (uint32, 8), (uint16, 128))
        load(tx, gx)
        load(ti, gi)
        AscendC.Gatherb(uint16, to, tx, ti, 1, AscendC.GatherRepeatParams(1, 8))
        store(go, to)

    run(body, x, offs, out)
    np.testing.assert_array_equal(out, x.reshape(8, 16)[::-1].reshape(-1))


def test_a_gather_past_a_tensor_shrunk_by_set_size_stops():
    offs = (np.arange(128)[::-1] * 2).astype(np.uint32)

    def shrunk(gx, gi, go):
        tx, ti, to = ub((half, 128), (uint32, 128), (half, 128))
        load(ti, gi)
        tx.SetSize(32)
        AscendC.Gather(to, tx, ti, np.uint32(0), 128)

    _san, exc = sanitized(shrunk, np.zeros(128, np.float16), offs, np.zeros(128, np.float16))
    assert isinstance(exc, KernelError) and "tx" in str(exc)


@given(pattern=st.integers(1, 7))
def test_gather_mask_builtin_patterns_pack_the_kept_elements(pattern):
    x = np.arange(1, 257, dtype=np.uint32)
    out = np.zeros(256, np.uint32)
    kept = []

    def body(gx, go):
        tx, to = ub((uint32, 256), (uint32, 256))
        load(tx, gx)
        AscendC.Duplicate(to, 0, 256)
        cnt = [0]
        AscendC.GatherMask(to, tx, pattern, False, 0, (1, 4, 8, 0), cnt)
        kept.append(cnt[0])
        store(go, to)

    run(body, x, out)
    k = np.arange(256)
    keep = {1: k % 2 == 0, 2: k % 2 == 1, 7: np.ones(256, bool)}.get(pattern, k % 4 == pattern - 3)
    want = x[keep]
    assert kept == [want.size]
    np.testing.assert_array_equal(out[: want.size], want)


def test_gather_mask_with_a_bit_tensor_in_counter_mode():
    x = np.random.default_rng(0).integers(0, 2**31, 256).astype(np.uint32)
    bits = np.full(32, 0x7E7C00A5, np.uint32)
    out = np.zeros(256, np.uint32)

    def body(gx, gb, go):
        tx, tb, to = ub((uint32, 256), (uint32, 32), (uint32, 256))
        load(tx, gx)
        load(tb, gb)
        AscendC.Duplicate(to, 0, 256)
        AscendC.GatherMask(to, tx, tb, True, 70, (1, 2, 4, 0))
        store(go, to)

    run(body, x, bits, out)
    on = np.unpackbits(bits.view(np.uint8), bitorder="little").astype(bool)[:70]
    want = np.concatenate([x[r * 32 : r * 32 + 70][on] for r in range(2)])
    np.testing.assert_array_equal(out[: want.size], want)


def _structs(raw: np.ndarray):
    v = raw.view(np.float32).reshape(-1, 2)[:, 0]
    i = raw.view(np.uint32).reshape(-1, 2)[:, 1]
    return v, i


def test_sort32_then_mrgsort_sorts_128_descending_with_indices():
    rng = np.random.default_rng(1)
    x = rng.uniform(-100, 100, 128).astype(np.float32)
    idx = np.arange(128, dtype=np.uint32)
    out = np.zeros(256, np.float32)

    def body(gx, gi, go):
        tx, ti, work, to = ub((float32, 128), (uint32, 128), (float32, 256), (float32, 256))
        load(tx, gx)
        load(ti, gi)
        AscendC.Sort32(float32, work, tx, ti, 4)
        AscendC.PipeBarrier(AscendC.PIPE_V)
        info = MrgSort4Info([32, 32, 32, 32], False, 0b1111, 1)
        srcs = MrgSortSrcList(work[0], work[64], work[128], work[192])
        AscendC.MrgSort(float32, to, srcs, info)
        store(go, to)

    run(body, x, idx, out)
    v, i = _structs(out)
    order = np.argsort(-x, kind="stable")
    np.testing.assert_array_equal(v, x[order])
    np.testing.assert_array_equal(i, order)


def test_mrgsort_needs_at_least_two_valid_lists():
    def body(gx):
        (t,) = ub((float32, 256))
        load(t, gx)
        AscendC.MrgSort(t, MrgSortSrcList(t, t, t, t), MrgSort4Info([32, 0, 0, 0], False, 0b0001, 1))

    _, err = sanitized(body, np.zeros(256, np.float32))
    assert isinstance(err, KernelError) and "validBit" in str(err)


def test_region_proposal_pipeline_sorts_scores_descending():
    x = np.random.default_rng(9).uniform(-1000, 1000, 64).astype(np.float16)
    out = np.zeros(64, np.float16)

    def body(gx, go):
        src, work, merged, ext = ub((half, 64), (half, 512), (half, 512), (half, 64))
        load(src, gx)
        AscendC.Duplicate(work, 0, 512)
        for g in range(4):
            AscendC.ProposalConcat(work[g * 128], src[g * 16], 1, 4)
            AscendC.PipeBarrier(AscendC.PIPE_V)
            AscendC.RpSort16(work[g * 128], work[g * 128], 1)
        srcs = MrgSortSrcList(work[0], work[128], work[256], work[384])
        AscendC.MrgSort4(merged, srcs, MrgSort4Info([16, 16, 16, 16], False, 15, 1))
        AscendC.PipeBarrier(AscendC.PIPE_V)
        AscendC.ProposalExtract(ext, merged, 4, 4)
        store(go, ext)

    run(body, x, out)
    np.testing.assert_array_equal(out, np.sort(x)[::-1])


def test_full_and_timing_only_runs_agree_for_gathers_sorts_and_selects():
    def body(gx, gi, go):
        tx, ti, work, to, bits = ub(
            (float32, 256), (uint32, 256), (float32, 512), (float32, 512), (uint8, 64)
        )
        load(tx, gx)
        load(ti, gi)
        AscendC.Gather(to, tx, ti, 0, 64)
        AscendC.GatherMask(to, tx, 3, False, 0, (1, 4, 8, 0))
        AscendC.Sort32(work, tx, ti, 8)
        AscendC.MrgSort(to, MrgSortSrcList(work[0], work[64], work[128], work[192]), MrgSort4Info([32] * 4))
        AscendC.Compares(bits, tx, 0.5, AscendC.CMPMODE.GT, 256)
        AscendC.Select(to, bits, tx, tx, AscendC.SELMODE.VSEL_TENSOR_TENSOR_MODE, 256)
        AscendC.Transpose(to.ReinterpretCast(half), tx.ReinterpretCast(half))
        store(go, to)

    x = np.linspace(0, 1, 256).astype(np.float32)
    offs = (np.arange(256) * 4 % 1024).astype(np.uint32)
    full = run(body, x, offs, np.zeros(512, np.float32))
    timing = run(body, x, offs, np.zeros(512, np.float32), numeric=False)
    assert full.timeline_key() == timing.timeline_key()
