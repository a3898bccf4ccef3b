"""Fixpipe's output layouts (CFG_ROW_MAJOR / CFG_NZ, channel split) and its template spelling."""

from __future__ import annotations

import numpy as np
import pytest
from apikit import run
from cubekit import matmul_to_l0c

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import CFG_NZ, FixpipeParamsV220, GlobalTensor, HardEvent
from asc_tui.npu.errors import OperatorError


def _ab(m, k, n):
    """Small integers (exact in fp16 and fp32), the same for the same shape."""
    rng = np.random.default_rng(m * 10000 + k * 100 + n)
    a = rng.integers(-3, 4, (m, k)).astype(np.float16)
    b = rng.integers(-3, 4, (k, n)).astype(np.float16)
    return a, b, a.astype(np.float32) @ b.astype(np.float32)


def _fixpipe_run(m, k, n, out, *targs, **fp):
    a, b, c = _ab(m, k, n)

    def body(ga, gb, gc):
        l0c = matmul_to_l0c(ga, gb, AscendC.half, m, k, n)
        g = GlobalTensor(AscendC.float32)
        g.SetGlobalBuffer(gc)
        AscendC.Fixpipe(*targs, g, l0c, FixpipeParamsV220(**fp))

    run(body, a, b, out, core_type="aic")
    return c


def test_all_dav_2201_hard_events_exist_with_their_pipes():
    pairs = {e.name: (e.src.name, e.dst.name) for e in HardEvent}
    assert pairs["M_MTE2"] == ("PIPE_M", "PIPE_MTE2") and pairs["MTE2_M"] == ("PIPE_MTE2", "PIPE_M")
    for name in (
        "MTE3_MTE1",
        "MTE1_MTE3",
        "MTE1_V",
        "V_MTE1",
        "FIX_MTE3",
        "MTE1_FIX",
        "FIX_MTE1",
        "V_V",
        "FIX_FIX",
    ):
        src, dst = name.split("_")
        assert pairs[name] == (f"PIPE_{src}", f"PIPE_{dst}")


def test_nz_output_keeps_column_blocks_dst_stride_apart():
    m, k, n, stride_blocks = 32, 16, 48, 80  # blocks 80 x 32 B = 640 floats apart (> 32 x 16)
    out = np.full((n // 16) * 640, -1, np.float32)
    c = _fixpipe_run(
        m,
        k,
        n,
        out,
        AscendC.float,
        AscendC.float,
        CFG_NZ,
        nSize=n,
        mSize=m,
        srcStride=32,
        dstStride=stride_blocks,
    )
    blocks = out.reshape(n // 16, 640)
    for j in range(n // 16):
        np.testing.assert_array_equal(blocks[j, : m * 16].reshape(m, 16), c[:, 16 * j : 16 * j + 16])
        assert (blocks[j, m * 16 :] == -1).all()  # the gap is left alone


def test_channel_split_writes_blocks_of_eight_fp32_columns():
    m, k, n = 16, 16, 40  # five 8-wide blocks: two whole fractals and half of the third
    out = np.zeros((n // 8) * m * 8, np.float32)
    c = _fixpipe_run(
        m, k, n, out, CFG_NZ, nSize=n, mSize=m, srcStride=16, dstStride=m * 8 * 4 // 32, isChannelSplit=True
    )
    np.testing.assert_array_equal(out.reshape(n // 8, m, 8), c.reshape(m, n // 8, 8).transpose(1, 0, 2))


def test_row_major_is_the_default_and_may_be_spelled_as_a_template_argument():
    m, k, n = 16, 32, 32
    plain, spelled = np.zeros(m * n, np.float32), np.zeros(m * n, np.float32)
    c = _fixpipe_run(m, k, n, plain, nSize=n, mSize=m, srcStride=16, dstStride=n)
    _fixpipe_run(
        m,
        k,
        n,
        spelled,
        AscendC.float,
        AscendC.float,
        AscendC.CFG_ROW_MAJOR,
        nSize=n,
        mSize=m,
        srcStride=16,
        dstStride=n,
    )
    np.testing.assert_array_equal(plain.reshape(m, n), c)
    np.testing.assert_array_equal(spelled, plain)


def test_nz_blocks_that_would_overlap_are_refused():
    with pytest.raises(OperatorError, match="dstStride=16 .* blocks would overlap"):
        _fixpipe_run(
            32, 16, 32, np.zeros(2048, np.float32), CFG_NZ, nSize=32, mSize=32, srcStride=32, dstStride=16
        )


def test_a_null_gm_address_is_fine_until_it_is_read():
    def body(gx, gnull):
        g = GlobalTensor(AscendC.float32)
        g.SetGlobalBuffer(None)  # an argument the host never set: unused, so harmless
        t = AscendC.LocalMemAllocator(AscendC.Hardware.UB).Alloc(AscendC.float32, 8)
        AscendC.DataCopy(t, g, 8)

    with pytest.raises(OperatorError, match="nullptr"):
        run(body, np.zeros(8, np.float32), np.zeros(8, np.float32))
