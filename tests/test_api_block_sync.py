"""SyncAll holds every block of a launch until all of them got there: in the numbers (data other
blocks wrote before it is there after it), in the timeline (the waits), and as a deadlock error
when some block never comes."""

from __future__ import annotations

import numpy as np
import pytest
from apikit import CHIP, load, run, store, ub

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import float32
from asc_tui.npu.errors import OperatorError
from asc_tui.npu.records import KIND_WAIT

N = 32  # elements per block


def _exchange(gx, gwork, gout):
    """Each block doubles its tile into a shared workspace, meets the others, then sums every
    other block's tile into its own (what the Ascend C sync_all sample does)."""
    b, nb = AscendC.GetBlockIdx(), AscendC.GetBlockNum()
    mine, other = ub((float32, N), (float32, N))
    x = AscendC.GlobalTensor(float32)
    x.SetGlobalBuffer(gx + b * N)
    AscendC.DataCopy(mine, x, N)
    AscendC.SetFlag(AscendC.HardEvent.MTE2_V, AscendC.EVENT_ID0)
    AscendC.WaitFlag(AscendC.HardEvent.MTE2_V, AscendC.EVENT_ID0)
    if b == 0:  # the slow block: everyone else must wait for it at SyncAll
        for _ in range(20):
            AscendC.Exp(other, mine, N)
    AscendC.Muls(mine, mine, 2.0, N)
    store(gwork + b * N, mine)
    AscendC.SyncAll()
    for i in range(nb):
        if i != b:
            AscendC.SetFlag(AscendC.HardEvent.V_MTE2, AscendC.EVENT_ID0)  # the last Add read it
            AscendC.WaitFlag(AscendC.HardEvent.V_MTE2, AscendC.EVENT_ID0)
            load(other, gwork + i * N)
            AscendC.Add(mine, mine, other, N)
    store(gout + b * N, mine)


def test_blocks_read_what_the_others_wrote_before_sync_all():
    nb = 4
    x = np.random.default_rng(1).standard_normal(nb * N).astype(np.float32)
    work = np.zeros(nb * N, np.float32)
    out = np.zeros(nb * N, np.float32)
    run(_exchange, x, work, out, block_dim=nb)
    want = np.tile((2 * x.reshape(nb, N)).sum(axis=0), nb)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_the_other_blocks_wait_for_the_slowest_in_the_timeline():
    nb = 3
    arrays = (np.ones(nb * N, np.float32), np.zeros(nb * N, np.float32), np.zeros(nb * N, np.float32))
    em = run(_exchange, *arrays, block_dim=nb)
    assert [t.block for t in em.blocks] == list(range(nb))

    def sync_wait(blk):
        r = em.records
        names = np.array(em.ops)[r.op]
        on = (r.block == blk) & (names == "SyncAll") & (r.kind == KIND_WAIT)
        return float(r.start[on][0]), float(r.end[on][0])

    ends = [sync_wait(b)[1] for b in range(nb)]
    assert ends[0] == ends[1] == ends[2]  # everyone leaves together
    assert sync_wait(1)[1] - sync_wait(1)[0] > 20 * 30  # block 1 waited for block 0's 20 Exps
    sync_all = CHIP.section("sync")["sync_all_cycles"]
    assert sync_wait(0)[1] - sync_wait(0)[0] == pytest.approx(
        sync_all
    )  # the last to arrive: only the latency


def test_timing_only_runs_agree_with_full_runs():
    arrays = (np.ones(4 * N, np.float32), np.zeros(4 * N, np.float32), np.zeros(4 * N, np.float32))
    full = run(_exchange, *arrays, block_dim=4)
    timing = run(_exchange, *arrays, block_dim=4, numeric=False)
    assert timing.kernel_cycles == pytest.approx(full.kernel_cycles)
    assert [b.t_end for b in timing.blocks] == pytest.approx([b.t_end for b in full.blocks])


def test_a_block_that_never_arrives_is_a_deadlock_naming_the_waiting_lines():
    def body(gx):
        (t,) = ub((float32, N))
        load(t, gx)
        if AscendC.GetBlockIdx() == 2:
            return
        AscendC.SyncAll()

    with pytest.raises(OperatorError) as info:
        run(body, np.zeros(N, np.float32), block_dim=3)
    msg = info.value.message
    assert "deadlock between blocks" in msg and "block 0 waits" in msg and "block 1 waits" in msg
    assert "block(s) 2 ended without getting there" in msg
    assert info.value.line == body.__code__.co_firstlineno + 5
    assert info.value.file == __file__


def test_more_blocks_than_cores_cannot_all_meet():
    def body(gx):
        AscendC.SyncAll()

    with pytest.raises(OperatorError) as info:
        run(body, np.zeros(N, np.float32), block_dim=CHIP.aiv + 1)
    assert "needs no more blocks than cores" in str(info.value.hint)
    assert f"block {CHIP.aiv} can only start" in info.value.message


def test_sync_all_twice_and_errors_after_it_name_their_block():
    def body(gx):
        AscendC.SyncAll()
        AscendC.SyncAll()
        if AscendC.GetBlockIdx() == 1:
            raise ValueError("boom")

    with pytest.raises(OperatorError) as info:
        run(body, np.zeros(N, np.float32), block_dim=3)
    assert "ValueError: boom (block 1)" in info.value.message


def test_an_endless_loop_while_others_wait_is_stopped_by_the_timeout():
    import threading

    from asc_tui.npu.launch import KernelTimeout, launch, make_gm

    @AscendC.kernel
    def k(gx, _tiling):
        AscendC.InitSocState()
        if AscendC.GetBlockIdx() == 1:
            while True:
                pass
        AscendC.SyncAll()

    gm = make_gm("x", np.float32, N, np.zeros(N, np.float32))
    with pytest.raises(KernelTimeout) as info:
        launch(k, [gm], None, 2, CHIP, timeout_s=0.5)
    assert info.value.line == k.fn.__code__.co_firstlineno + 4
    assert not [t for t in threading.enumerate() if t.name.startswith("asc-tui block")]


def test_the_sanitizer_sees_sync_all_order_the_blocks_gm_accesses():
    from asc_tui.devkit.debug.sanitizer import Sanitizer

    arrays = (np.ones(3 * N, np.float32), np.zeros(3 * N, np.float32), np.zeros(3 * N, np.float32))
    san = Sanitizer()
    run(_exchange, *arrays, block_dim=3, sanitizer=san)
    assert not san.findings(), [(f.kind, f.line, f.reason) for f in san.findings()]

    def unsynced(gx, gwork, gout):  # the same exchange without the SyncAll: a cross-block race
        b = AscendC.GetBlockIdx()
        (t,) = ub((float32, N))
        load(t, gx + b * N)
        store(gwork + b * N, t)
        load(t, gwork + ((b + 1) % 3) * N)
        store(gout + b * N, t)

    san = Sanitizer()
    run(unsynced, *arrays, block_dim=3, sanitizer=san)
    assert any(f.tool == "racecheck" and f.kind == "race-raw" for f in san.findings())


def _module(src: str) -> dict:
    """A kernel module of its own (the launcher reads a kernel's whole module)."""
    ns = {"AscendC": AscendC, "__name__": "kernel_module"}
    exec(compile(src, __file__, "exec"), ns)  # noqa: S102 - the test's own source
    return ns


def test_kernels_that_never_wait_run_their_blocks_in_the_launching_thread():
    from asc_tui.npu.coop import may_wait

    waits = _module("def helper():\n    AscendC.SyncAll()\ndef k(x):\n    helper()\n")["k"]
    plain = _module("def helper():\n    AscendC.PipeBarrier(AscendC.PIPE_ALL)\ndef k(x):\n    helper()\n")[
        "k"
    ]
    assert may_wait(waits) and not may_wait(plain)
    assert may_wait(_exchange)


def test_a_sync_all_the_launcher_could_not_see_is_an_error_not_a_wrong_result():
    hidden = _module('def k(gx):\n    getattr(AscendC, "Sync" + "All")()\n')["k"]
    with pytest.raises(OperatorError) as info:
        run(hidden, np.zeros(N, np.float32), block_dim=2)
    assert "did not find it in the kernel's code" in info.value.message
