"""GM atomics (SetAtomicAdd/Max/Min<T>, SetAtomicNone, DisableDmaAtomic) and the all-core
cross-core flag (CrossCoreSetFlag mode 0) that orders the blocks writing with them."""

from __future__ import annotations

import numpy as np
import pytest
from apikit import CHIP, load, run, store, ub

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import float32, int32
from asc_tui.devkit.debug.sanitizer import Sanitizer
from asc_tui.npu.errors import OperatorError

N = 64


def _accumulate(setter, dtype=float32):
    def body(gx, gy):
        b = AscendC.GetBlockIdx()
        (t,) = ub((dtype, N))
        load(t, gx + b * N)
        setter(dtype)
        store(gy, t)
        AscendC.DisableDmaAtomic()

    return body


@pytest.mark.parametrize(
    "setter,reduce",
    [(AscendC.SetAtomicAdd, np.sum), (AscendC.SetAtomicMax, np.max), (AscendC.SetAtomicMin, np.min)],
)
def test_atomic_writes_of_every_block_combine_in_gm(setter, reduce):
    x = np.random.default_rng(3).standard_normal(4 * N).astype(np.float32)
    y = np.full(N, 0.5, np.float32)
    run(_accumulate(setter), x, y, block_dim=4)
    want = reduce(np.vstack([x.reshape(4, N), np.full((1, N), 0.5, np.float32)]), axis=0)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


def test_set_atomic_none_makes_writes_plain_again():
    x = np.arange(2 * N, dtype=np.float32)
    y = np.full(N, 100.0, np.float32)

    def body(gx, gy):
        (t,) = ub((float32, N))
        load(t, gx + AscendC.GetBlockIdx() * N)
        AscendC.SetAtomicAdd(float32)
        AscendC.SetAtomicNone()
        store(gy, t)

    run(body, x, y, block_dim=2)
    np.testing.assert_array_equal(y, x[N:])  # the last block's plain write wins


def test_the_atomic_type_must_match_the_data_written():
    body = _accumulate(lambda _dt: AscendC.SetAtomicAdd(float32), dtype=int32)
    with pytest.raises(OperatorError, match="SetAtomicAdd<float32> is on, but this write stores int32"):
        run(body, np.zeros(N, np.int32), np.zeros(N, np.int32))


def test_an_atomic_write_costs_the_chips_extra_cycles():
    def body(atomic):
        def k(gx, gy):
            (t,) = ub((float32, N))
            load(t, gx)
            if atomic:
                AscendC.SetAtomicAdd(float32)
            store(gy, t)

        return k

    arrays = (np.zeros(N, np.float32), np.zeros(N, np.float32))
    plain, atomic = run(body(False), *arrays), run(body(True), *arrays)
    extra = CHIP.section("dma")["atomic_extra_cycles"]
    assert extra > 0
    assert atomic.kernel_cycles - plain.kernel_cycles == pytest.approx(
        extra
    )  # the scalar set hides under MTE2


def test_atomic_writes_of_different_blocks_are_no_race_but_plain_ones_are():
    x = np.zeros(4 * N, np.float32)
    san = Sanitizer()
    run(_accumulate(AscendC.SetAtomicAdd), x, np.zeros(N, np.float32), block_dim=4, sanitizer=san)
    assert not san.findings()
    san = Sanitizer()
    run(_accumulate(lambda _dt: None), x, np.zeros(N, np.float32), block_dim=4, sanitizer=san)
    assert any(f.kind == "race-waw" for f in san.findings())


def _mode0_kernel(skip_block: int | None):
    @AscendC.kernel(core_type="mix")
    def k(gx, gy, _tiling):
        AscendC.InitSocState()
        if AscendC.GetCoreType() != "aiv":
            return
        b = AscendC.GetBlockIdx()  # the AIV's index in the launch
        (t,) = ub((float32, N))
        load(t, gx)
        AscendC.Muls(t, t, float(b), N)
        AscendC.SetFlag(AscendC.HardEvent.V_MTE3, AscendC.EVENT_ID0)
        AscendC.WaitFlag(AscendC.HardEvent.V_MTE3, AscendC.EVENT_ID0)
        AscendC.SetAtomicAdd(float32)
        g = AscendC.GlobalTensor(float32)
        g.SetGlobalBuffer(gy)
        AscendC.DataCopy(g, t, N)
        if b == skip_block:
            return
        AscendC.CrossCoreSetFlag(0, AscendC.PIPE_MTE3, 3)
        AscendC.CrossCoreWaitFlag(3)  # the mode of this core's own set: 0
        AscendC.DisableDmaAtomic()
        if b == 0:  # every AIV added its share: read the sum back, double it
            load(t, gy)
            AscendC.Muls(t, t, 2.0, N)
            store(gy, t)

    return k


def _launch(kernel, blocks):
    from asc_tui.npu.launch import launch, make_gm

    x, y = np.ones(N, np.float32), np.zeros(N, np.float32)
    em = launch(kernel, [make_gm("x", np.float32, N, x), make_gm("y", np.float32, N, y)], None, blocks, CHIP)
    return em, y


def test_mode_0_waits_for_every_aiv_of_the_launch():
    em, y = _launch(_mode0_kernel(None), 3)
    n_aiv = 3 * 2
    np.testing.assert_array_equal(y, np.full(N, 2.0 * sum(range(n_aiv)), np.float32))
    assert em.block_dim == 3


def test_mode_0_with_an_aiv_that_never_sets_is_a_deadlock():
    with pytest.raises(OperatorError) as info:
        _launch(_mode0_kernel(4), 3)
    assert "deadlock" in info.value.message and "CrossCoreWaitFlag(0, PIPE_S, 3)" in info.value.message
