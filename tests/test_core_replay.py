"""Block replay (npu/replay/replay.py) is exact: a replayed launch gives the step-by-step timeline,
and the block-index taint turns every comparison into a constraint and every other use into a pin."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from replaykit import patched

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.errors import TilingError
from asc_tui.npu.launch import launch
from asc_tui.npu.replay.blockindex import BlockIndex
from asc_tui.npu.replay.replay import Guards

FAST = settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow], deadline=None)
CHIP = load_chip("ascend910b4")


def _launch(op, case, params, replay: bool, chip=CHIP):
    _, _, _, lnch, _, gm = prepare(op, case, params, timing_only=True, seed=0)

    def configure(run):
        run.replay = replay

    return launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=False, configure=configure)


def assert_same_launch(op, case, params) -> None:
    """Replayed and step-by-step launches: the same timeline, traffic and warnings."""
    try:
        fast = _launch(op, case, params, True)
    except TilingError:
        reject()  # a tiling the operator's constraints refuse (hypothesis draws another)
    slow = _launch(op, case, params, False)
    assert fast.timeline_key() == slow.timeline_key()
    assert (fast.gm_read, fast.gm_write, fast.l2_hit) == (slow.gm_read, slow.gm_write, slow.l2_hit)
    assert fast.warnings == slow.warnings
    for name in ("block", "pipe", "start", "end", "op", "line", "nbytes", "kind", "link", "offsets"):
        assert np.array_equal(getattr(fast.records, name), getattr(slow.records, name)), name


@FAST
@given(
    n=st.integers(1, 40_000),
    tile=st.sampled_from([64, 128, 256, 1024, 4096]),
    bufs=st.sampled_from([1, 2]),
    blocks=st.integers(1, 100),
    dtype=st.sampled_from(["float16", "float32"]),
)
def test_replayed_add_custom_equals_step_by_step(n, tile, bufs, blocks, dtype):
    op = patched(load_operator("add_custom"), n=n, dtype=dtype)
    assert_same_launch(op, "h", dict(tile_length=tile, buffer_num=bufs, block_dim=blocks))


@FAST
@given(
    tiles=st.integers(1, 12),
    tile=st.sampled_from([1024, 2048, 4096]),
    bufs=st.sampled_from([1, 2]),
    blocks=st.sampled_from([1, 2, 4, 8, 16, 20, 40, 80]),
)
def test_replayed_vector_add_bias_equals_step_by_step(tiles, tile, bufs, blocks):
    op = patched(load_operator("vector_add_bias"), n=blocks * tile * tiles)
    assert_same_launch(op, "h", dict(tile_length=tile, buffer_num=bufs, block_dim=blocks))


@FAST
@given(
    rows=st.integers(1, 40),
    cols16=st.integers(1, 64),
    bufs=st.sampled_from([1, 2]),
    blocks=st.integers(1, 48),
)
def test_replayed_row_kernels_equal_step_by_step(rows, cols16, bufs, blocks):
    for name in ("softmax", "rms_norm"):
        op = patched(load_operator(name), rows=rows, cols=cols16 * 16, dtype="float16")
        assert_same_launch(op, "h", dict(buffer_num=bufs, block_dim=blocks))


BUNDLED = [
    (name, case)
    for name, cases in {
        "matmul": ["default", "small", "tails", "int8_tails", "bf16"],
        "matmul_official": ["default", "small", "tails", "bias"],
        "conv2d": ["default", "stride2", "tails", "k1x1"],
        "matmul_leaky": ["default", "small"],
        "add_custom": ["default"],
        "softmax": ["default"],
        "rms_norm": ["default"],
        "vector_add_bias": ["default"],
    }.items()
    for case in cases
]


@pytest.mark.parametrize(("name", "case"), BUNDLED)
def test_bundled_operators_give_the_same_launch_with_replay_on(name, case):
    assert_same_launch(load_operator(name), case, {})


@FAST
@given(
    m=st.integers(1, 300),
    n=st.integers(1, 300),
    k=st.integers(1, 300),
    tm=st.sampled_from([64, 128, 256]),
    tn=st.sampled_from([64, 128, 256]),
    tk=st.sampled_from([32, 64, 128]),
    blocks=st.sampled_from([1, 3, 8, 20, 24]),
)
def test_replayed_matmul_equals_step_by_step_for_random_tilings(m, n, k, tm, tn, tk, blocks):
    """Tiles dealt round-robin (`range(GetBlockIdx(), tiles, GetBlockNum())`), tails, waves
    and L2 hits per region: replay only where all of them repeat."""
    op = patched(load_operator("matmul"), m=m, n=n, k=k, dtype="float16")
    assert_same_launch(op, "h", dict(tile_m=tm, tile_n=tn, tile_k=tk, block_dim=blocks))


@FAST
@given(
    m=st.integers(16, 700),
    n=st.integers(16, 700),
    k=st.integers(16, 400),
    base=st.sampled_from([(64, 64, 32), (128, 256, 64), (128, 128, 64)]),
    steps=st.sampled_from([(1, 1), (2, 4), (8, 4)]),
    blocks=st.sampled_from([1, 8, 20, 24]),
)
def test_replayed_matmul_official_equals_step_by_step(m, n, k, base, steps, blocks):
    op = patched(load_operator("matmul_official"), m=m, n=n, k=k, bias=False)
    params = dict(base_m=base[0], base_n=base[1], base_k=base[2], step_ka=steps[0], step_kb=steps[1])
    assert_same_launch(op, "h", {**params, "block_dim": blocks})


def test_matmul_official_4096_runs_a_few_templates_not_every_block():
    import asc_tui.npu.replay.replay as replay

    learned = []
    real = replay.Replayer.learn

    def learn(self, template):
        learned.append(template.guards.block)
        real(self, template)

    replay.Replayer.learn = learn
    try:
        em = _launch(load_operator("matmul_official"), "large", {}, True)
    finally:
        replay.Replayer.learn = real
    assert len(em.blocks) == 24
    # per pass (L2 pre-pass, real): a few templates, not 24. C is split 3 × 8 as CANN's tiling
    # does (bands of 1366 rows, the last 1364): the 16 blocks of the first two bands share a
    # template, the 8 of the tail band another; the real pass's second wave (blocks 20-23 on
    # a 20-core chip) starts later, so it learns a third
    assert learned == [0, 16, 0, 16, 20]


def test_vector_add_bias_runs_its_kernel_once_for_eight_identical_blocks():
    from dataclasses import replace

    from asc_tui.ascendc.kernel import KernelFunction

    op = load_operator("vector_add_bias")
    calls = []

    def counting(*args):
        calls.append(1)
        return op.kernel.fn(*args)

    counted = replace(op, kernel=KernelFunction(counting, op.kernel.core_type))
    em = _launch(counted, "default", {}, True)
    assert len(em.blocks) == 8 and len(calls) == 1
    calls.clear()
    _launch(counted, "default", {}, False)
    assert len(calls) == 8


def _index(block=3, n=10):
    g = Guards(block, n)
    return BlockIndex(block, 1, g), g


def test_affine_arithmetic_keeps_the_taint_and_comparisons_bound_the_block():
    i, g = _index(3, 10)
    off = 2048 * i + 100
    assert type(off) is BlockIndex and off.v == 2048 * 3 + 100
    assert (off // 2048).v == 3 and off % 2048 == 100
    assert off < 2048 * 7  # holds for blocks 0..6
    assert not off >= 2048 * 7
    assert [b for b in range(10) if g.admits(b)] == [0, 1, 2, 3, 4, 5, 6]
    assert i != 5
    assert not g.admits(5) and g.admits(4)


def test_range_indexing_and_formatting_pin_the_template():
    for use in (
        lambda i: range(i, 20, 4),
        lambda i: [0] * 10 and [1, 2, 3, 4, 5][i],
        lambda i: f"{i}",
        hash,
        float,
    ):
        i, g = _index()
        use(i)
        assert g.pinned and not g.admits(4)


def test_a_value_the_admitted_blocks_share_may_be_used_as_an_int():
    """A tail band's row count: the comparisons that set the band apart leave its blocks one
    value, so the kernel may index or format with it and the template still serves the band."""
    i, g = _index(7, 12)
    band = i // 4  # blocks 0-3, 4-7, 8-11: one value per band, not affine in the block
    assert type(band) is BlockIndex and band.v == 1
    rows = 1366 - 2 * band  # 1366, 1364, 1362
    assert rows < 1366 and rows > 1362  # the template's band only: blocks 4..7
    assert [b for b in range(12) if g.admits(b)] == [4, 5, 6, 7]
    assert [0, 10, 20][band] == 10 and f"{rows}" == "1364"
    assert not g.pinned and g.admits(5)
    assert f"{i}" == "7"  # the block itself differs within the band: that pins
    assert g.pinned and not g.admits(5)


def test_min_and_max_of_a_template_run_give_an_int_the_admitted_blocks_share():
    """`min(N - col * 512, 512)` is 512 in every column: the last one's tie (512 vs 512) takes
    the other branch of the builtin `min`, but the result is the same, so it is no constraint.
    A result that differs between blocks is the builtin's, and constrains the block."""
    from asc_tui.npu.replay.blockindex import tmax, tmin

    i, g = _index(3, 8)
    assert tmin(4096 - i * 512, 512) == 512 and type(tmin(4096 - i * 512, 512)) is int
    assert tmax(i * 0 + 7, 7, 2) == 7 and tmax(3, 5) == 5 and tmin([4, 2]) == 2
    assert [b for b in range(8) if g.admits(b)] == list(range(8))
    tail = tmin(1000 - i * 256, 256)  # 256 for blocks 0..2, 232 for block 3, less beyond
    assert type(tail) is BlockIndex and tail.v == 232
    assert not g.admits(2) and g.admits(3)


def _kernel(body):
    from asc_tui import ascendc as AscendC

    @AscendC.kernel
    def k(x, tiling):
        g = AscendC.GlobalTensor(AscendC.half)
        g.SetGlobalBuffer(x + 256 * AscendC.GetBlockIdx(), 256)
        body(AscendC.GetBlockIdx())
        AscendC.GetBlockIdx()

    return k


def _run_kernel(k, replay: bool):
    from asc_tui.npu.launch import make_gm

    def configure(run):
        run.replay = replay

    return launch(k, [make_gm("x", np.float16, 256 * 6)], None, 6, CHIP, numeric=False, configure=configure)


def test_a_kernel_that_insists_on_an_int_block_index_still_runs():
    def body(i):
        if not isinstance(i, int):
            raise TypeError("the block index must be an int")

    k = _kernel(body)
    assert _run_kernel(k, True).timeline_key() == _run_kernel(k, False).timeline_key()


def test_a_failing_block_is_reported_as_step_by_step_reports_it():
    from asc_tui.npu.errors import OperatorError

    def body(i):
        if i == 4:
            raise ValueError("block four is broken")

    k = _kernel(body)
    errors = []
    for replay in (True, False):
        with pytest.raises(OperatorError) as info:
            _run_kernel(k, replay)
        errors.append((info.value.message, info.value.line))
    assert errors[0] == errors[1] and "block 4" in errors[0][0]


def test_a_dma_model_that_depends_on_other_cores_turns_replay_off(monkeypatch):
    """The DMA seam's contract: when a DMA's duration is not this core's alone
    (`Core.dma_is_local = False`, e.g. HBM bandwidth shared moment by moment), every block runs
    step by step, and the launch is the step-by-step one."""
    from asc_tui.npu.core import Core

    k_runs = []

    def body(i):
        k_runs.append(1)

    k = _kernel(body)
    _run_kernel(k, True)
    assert len(k_runs) == 1  # 6 blocks, one template
    k_runs.clear()
    monkeypatch.setattr(Core, "dma_is_local", False)
    assert _run_kernel(k, True).timeline_key() == _run_kernel(k, False).timeline_key()
    assert len(k_runs) == 12  # both launches ran all 6 blocks
    op = load_operator("vector_add_bias")
    assert_same_launch(op, "default", {})
