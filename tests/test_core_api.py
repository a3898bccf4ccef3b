"""The kernel API twin: Ascend C semantics of queues, buffers, copies and vector ops."""

from __future__ import annotations

import numpy as np
import pytest

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    CMPMODE,
    SELMODE,
    GlobalTensor,
    HardEvent,
    QuePosition,
    RoundMode,
    TBuf,
    TPipe,
    TQue,
    float32,
    half,
    int16,
    int32,
    uint8,
)
from asc_tui.npu.chip import load_chip
from asc_tui.npu.errors import KernelError
from asc_tui.npu.launch import launch, make_gm

CHIP = load_chip("ascend910b")


def run_kernel(body, *arrays, block_dim: int = 1, numeric: bool = True):
    """Launch `body(gm_addrs...)` on the emulator; returns the result (arrays are updated)."""
    gms = [
        make_gm(f"a{i}", a.dtype, a.size, a.reshape(-1) if numeric else None) for i, a in enumerate(arrays)
    ]

    @AscendC.kernel
    def k(*args):
        body(*args[:-1])

    return launch(k, gms, None, block_dim, CHIP, numeric=numeric)


def load(pipe, buf: TBuf, gm, n, dtype):
    """GM → UB through a scratch buffer (with the MTE2→V event a real kernel needs)."""
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(gm, n)
    t = buf.Get(dtype, n)
    AscendC.DataCopy(t, g, n)
    AscendC.SetFlag(HardEvent.MTE2_V, 0)
    AscendC.WaitFlag(HardEvent.MTE2_V, 0)
    return t


def store(gm, t, n, dtype):
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(gm, n)
    AscendC.SetFlag(HardEvent.V_MTE3, 0)
    AscendC.WaitFlag(HardEvent.V_MTE3, 0)
    AscendC.DataCopy(g, t, n)


def test_gm_addr_plus_n_moves_by_elements_of_the_declared_type():
    src = np.arange(64, dtype=np.float32)
    out = np.zeros(16, dtype=np.float32)

    def body(a, o):
        pipe = TPipe()
        b = TBuf(QuePosition.VECCALC)
        pipe.InitBuffer(b, 64)
        t = load(pipe, b, a + 32, 16, float32)
        store(o, t, 16, float32)

    run_kernel(body, src, out)
    np.testing.assert_array_equal(out, src[32:48])


@pytest.mark.parametrize(
    "op,ref",
    [
        ("Add", np.add),
        ("Sub", np.subtract),
        ("Mul", np.multiply),
        ("Div", np.divide),
        ("Max", np.maximum),
        ("Min", np.minimum),
    ],
)
def test_binary_ops_compute_in_the_tensor_dtype(op, ref):
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 2, 128).astype(np.float16)
    b = rng.uniform(0.5, 2, 128).astype(np.float16)
    out = np.zeros(128, np.float16)

    def body(x, y, o):
        pipe = TPipe()
        bx, by, bo = TBuf(), TBuf(), TBuf()
        for buf in (bx, by, bo):
            pipe.InitBuffer(buf, 256)
        tx, ty = load(pipe, bx, x, 128, half), load(pipe, by, y, 128, half)
        to = bo.Get(half)
        getattr(AscendC, op)(to, tx, ty, 128)
        store(o, to, 128, half)

    run_kernel(body, a, b, out)
    np.testing.assert_array_equal(out, ref(a, b).astype(np.float16))


def test_unary_scalar_cast_and_reduce():
    a = np.linspace(-3, 3, 64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    red = np.zeros(8, np.float32)
    ints = np.zeros(64, np.int32)

    def body(x, o, r, i):
        pipe = TPipe()
        bx, bo, br, bi = TBuf(), TBuf(), TBuf(), TBuf()
        for buf in (bx, bo, br, bi):
            pipe.InitBuffer(buf, 256)
        tx = load(pipe, bx, x, 64, float32)
        to = bo.Get(float32)
        AscendC.Relu(to, tx, 64)
        AscendC.Muls(to, to, 2.0, 64)
        AscendC.Adds(to, to, 1.0, 64)
        tr = br.Get(float32)
        AscendC.Duplicate(tr, 0.0, 64)
        AscendC.ReduceMax(tr, tx, to, 64, True)
        ti = bi.Get(int32)
        AscendC.Cast(ti, tx, RoundMode.CAST_FLOOR, 64)
        store(o, to, 64, float32)
        store(r, tr, 8, float32)
        store(i, ti, 64, int32)

    run_kernel(body, a, out, red, ints)
    np.testing.assert_allclose(out, np.maximum(a, 0) * 2 + 1)
    assert red[0] == a.max()
    assert red[:2].view(np.uint32)[1] == a.argmax()
    np.testing.assert_array_equal(ints, np.floor(a).astype(np.int32))


def test_compare_writes_a_bit_mask_and_select_uses_it():
    a = np.arange(64, dtype=np.float16)
    b = np.full(64, 31.5, np.float16)
    out = np.zeros(64, np.float16)

    def body(x, y, o):
        pipe = TPipe()
        bx, by, bm, bo = TBuf(), TBuf(), TBuf(), TBuf()
        for buf in (bx, by, bm, bo):
            pipe.InitBuffer(buf, 128)
        tx, ty = load(pipe, bx, x, 64, half), load(pipe, by, y, 64, half)
        mask = bm.Get(uint8)
        AscendC.Compare(mask, tx, ty, CMPMODE.LT, 64)
        to = bo.Get(half)
        AscendC.Select(to, mask, tx, ty, SELMODE.VSEL_TENSOR_TENSOR_MODE, 64)
        store(o, to, 64, half)

    run_kernel(body, a, b, out)
    np.testing.assert_array_equal(out, np.minimum(a, b))


def test_and_or_not_on_int16():
    a = np.arange(32, dtype=np.int16)
    out = np.zeros(32, np.int16)

    def body(x, o):
        pipe = TPipe()
        bx, bo = TBuf(), TBuf()
        pipe.InitBuffer(bx, 64)
        pipe.InitBuffer(bo, 64)
        tx = load(pipe, bx, x, 32, int16)
        to = bo.Get(int16)
        AscendC.And(to, tx, tx, 32)
        AscendC.Or(to, to, tx, 32)
        AscendC.Not(to, to, 32)
        store(o, to, 32, int16)

    run_kernel(body, a, out)
    np.testing.assert_array_equal(out, ~a)


def test_queue_depth_and_vacancy():
    seen = {}

    def body():
        pipe = TPipe()
        q = TQue(QuePosition.VECIN, 1)
        pipe.InitBuffer(q, 2, 64)
        t1 = q.AllocTensor(half)
        seen["vacant_before"] = q.VacantInQue()
        q.EnQue(t1)
        seen["vacant_after"] = q.VacantInQue()
        seen["has"] = q.HasTensorInQue()
        t2 = q.AllocTensor(half)
        q.EnQue(t2)

    with pytest.raises(KernelError, match="depth is 1"):
        run_kernel(body)
    assert seen == {"vacant_before": True, "vacant_after": False, "has": True}


def test_tbuf_cannot_give_more_than_it_has():
    def body():
        pipe = TPipe()
        b = TBuf()
        pipe.InitBuffer(b, 64)
        b.Get(float32, 17)

    with pytest.raises(KernelError, match="asks for 68 B"):
        run_kernel(body)


def test_misaligned_datacopy_is_rounded_down_like_hardware_and_warned():
    a = np.arange(40, dtype=np.float16)
    out = np.zeros(40, np.float16)

    def body(x, o):
        pipe = TPipe()
        b = TBuf()
        pipe.InitBuffer(b, 128)
        t = load(pipe, b, x, 20, half)  # 40 B: only 32 B move
        store(o, t, 16, half)

    res = run_kernel(body, a, out)
    np.testing.assert_array_equal(out[:16], a[:16])
    assert out[16:].max() == 0
    assert res.warnings and res.warnings[0].kind == "misaligned-length"


def test_datacopy_params_strides_in_32_byte_blocks():
    a = np.arange(64, dtype=np.float32)  # 8 blocks of 8 floats
    out = np.zeros(32, np.float32)

    def body(x, o):
        pipe = TPipe()
        b = TBuf()
        pipe.InitBuffer(b, 128)
        g = GlobalTensor(float32)
        g.SetGlobalBuffer(x, 64)
        t = b.Get(float32)
        # 4 blocks of 1 block each, skipping one block between them in GM
        AscendC.DataCopy(t, g, AscendC.DataCopyParams(4, 1, 1, 0))
        store(o, t, 32, float32)

    run_kernel(body, a, out)
    np.testing.assert_array_equal(out, np.concatenate([a[0:8], a[16:24], a[32:40], a[48:56]]))


def test_printf_and_dumptensor_reach_the_log_with_block_and_line():
    def body():
        AscendC.printf("block %d of %d", AscendC.GetBlockIdx(), AscendC.GetBlockNum())

    res = run_kernel(body, block_dim=3)
    texts = sorted(e.text for e in res.log)
    assert texts == ["block 0 of 3", "block 1 of 3", "block 2 of 3"]
    assert {e.block for e in res.log} == {0, 1, 2}
    assert all(e.file == __file__ for e in res.log)


def test_blocks_beyond_the_core_count_run_in_waves():
    def body():
        pipe = TPipe()
        b = TBuf()
        pipe.InitBuffer(b, 64)
        AscendC.Duplicate(b.Get(half), 1.0, 32)

    res = run_kernel(body, block_dim=CHIP.aiv * 2, numeric=False)
    waves = {b.wave for b in res.blocks}
    assert waves == {0, 1}
    first = {b.core: b.t_end for b in res.blocks if b.wave == 0}
    for b in res.blocks:
        if b.wave == 1:
            assert b.t_start == first[b.core]


def test_sizeof_and_enum_spellings():
    assert AscendC.sizeof(half) == 2 and AscendC.sizeof(AscendC.float) == 4
    assert AscendC.pipe_t.PIPE_V is AscendC.PIPE_V
    assert AscendC.QuePosition.VECIN is AscendC.TPosition.VECIN
    assert HardEvent.MTE2_V.src is AscendC.PIPE_MTE2
