"""Block replay of full cube launches (npu/replay/cubetrace.py) is exact: with replay on, a launch gives
the step-by-step outputs bit for bit and the same timeline, traffic, L2 hits and tables, whether
the replayed blocks' numbers come from the template's traced tile jobs or, where the trace
cannot be trusted (an operand that is not a grid of GM, a bias, int8), from running them
step by step."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from replaykit import assert_same, counted_runs, patched

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.errors import TilingError
from asc_tui.npu.launch import launch
from asc_tui.npu.replay import cubetrace

FAST = settings(max_examples=16, suppress_health_check=[HealthCheck.too_slow], deadline=None)
CHIP = load_chip("ascend910b")
#: a side: any (a K tail is gathered, not a grid: untraced; a tile of part of its last fractal
#: is still a grid), or whole fractals (and K steps: traced)
SIDE = st.one_of(st.integers(1, 300), st.integers(1, 20).map(lambda x: 16 * x))


@pytest.fixture
def traced(monkeypatch):
    """The blocks whose numbers came from a cube template's trace (CubeProgram.run)."""
    return counted_runs(monkeypatch, cubetrace.CubeProgram)


def _same_both_ways(op, case, params):
    """The launch with replay on and off: the same outputs, timeline, traffic and L2 hits."""
    got = []
    for replay in (True, False):
        try:
            _, _, _, lnch, arrays, gm = prepare(op, case, params, timing_only=False, seed=0)
        except TilingError:
            reject()  # a tiling the operator's constraints refuse (hypothesis draws another)

        def configure(run, replay=replay):
            run.replay = replay

        res = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, CHIP, numeric=True, configure=configure)
        got.append((res, arrays))
    (fast, a), (slow, b) = got
    assert_same(fast, slow, a, b)
    assert fast.l2_hit == slow.l2_hit
    return fast


@FAST
@given(
    m=SIDE,
    n=SIDE,
    k=st.one_of(st.integers(1, 200), st.integers(1, 4).map(lambda x: 64 * x)),
    dtype=st.sampled_from(["float16", "bfloat16", "int8"]),
    tile_m=st.sampled_from([16, 64, 128]),
    tile_n=st.sampled_from([16, 64, 128]),
    tile_k=st.sampled_from([32, 64]),
    bufs=st.sampled_from([1, 2]),
    l0c=st.sampled_from([1, 2]),
    blocks=st.sampled_from([1, 3, 8, 24]),
)
def test_full_matmul_with_replay_equals_step_by_step(
    m, n, k, dtype, tile_m, tile_n, tile_k, bufs, l0c, blocks
):
    op = patched(load_operator("matmul"), m=m, n=n, k=k, dtype=dtype)
    params = dict(
        tile_m=tile_m, tile_n=tile_n, tile_k=tile_k, double_buffer=bufs, l0c_buffers=l0c, block_dim=blocks
    )
    _same_both_ways(op, "h", params)


def test_the_default_matmul_takes_its_replayed_numbers_from_the_trace(traced):
    """1024³ fp16 on 24 cores: 32 tiles, so blocks 0-7 take two and 8-23 one — two templates,
    every other block's numbers from their traces."""
    _same_both_ways(load_operator("matmul"), "default", {})
    assert traced == [*range(1, 8), *range(9, 24)]


def test_int8_tiles_leave_the_blocks_step_by_step(traced):
    """int8 operands are gathered and widened to float64, not strided fp32 grids: untraced."""
    _same_both_ways(load_operator("matmul"), "int8_tails", dict(tile_m=16, tile_n=16, block_dim=8))
    assert traced == []


def test_a_bias_leaves_the_blocks_step_by_step(traced):
    """matmul_official's bias case: a Mmad whose C starts from a bias row is not traced."""
    _same_both_ways(load_operator("matmul_official"), "bias", dict(base_m=64, base_n=64))
    assert traced == []


def test_the_high_level_matmul_takes_its_replayed_numbers_from_the_trace(traced):
    """matmul_official 1024³ (the high-level Matmul): L0A is loaded a row group at a time and
    each K step through its own map; joined and stacked by lineage, the operands are grids of
    GM, so blocks replay their numbers — the 86-column tail block of each core as well."""
    _same_both_ways(load_operator("matmul_official"), "default", {})
    assert len(traced) > 12, traced


def test_rows_a_copy_leaves_unwritten_do_not_stop_the_replay(traced):
    """baseM 256 over a core's 128 rows: the L1 tile's rows 128-255 are holes of every copy of
    A (lineage_maps.Map.hole), outside the product — the blocks still replay from the trace."""
    _same_both_ways(load_operator("matmul_official"), "default", dict(base_m=256, base_n=64))
    assert len(traced) > 12, traced


@pytest.mark.parametrize("params", [dict(base_m=64, base_n=64), dict(base_m=32, base_n=48)])
def test_the_high_level_matmul_with_tails_equals_step_by_step(params):
    _same_both_ways(load_operator("matmul_official"), "tails", params)


@pytest.mark.parametrize("case", ["default", "stride2", "tails", "k1x1"])
def test_conv2d_with_replay_equals_step_by_step(case):
    _same_both_ways(load_operator("conv2d"), case, {})


def test_a_trace_missing_a_record_is_refused():
    """Every work record must be covered by the trace (a copy kept as lineage, an Mmad, a
    traced Fixpipe): one uncovered record refuses the program."""
    import numpy as np

    from asc_tui.npu.pipes import S
    from asc_tui.npu.records import KIND_WORK

    tr = cubetrace.CubeTrace(1024, 4)
    tr.cover(0)
    cols = {"kind": np.array([KIND_WORK, KIND_WORK]), "pipe": np.array([S + 1, S + 1])}
    assert cubetrace.compile_cube(tr, cols) is None
    tr.cover(1)
    assert cubetrace.compile_cube(tr, cols) is not None
    tr.bad = True
    assert cubetrace.compile_cube(tr, cols) is None


def test_a_scalar_read_of_gm_leaves_the_blocks_step_by_step(traced, monkeypatch):
    """A GetValue hands data to the kernel's Python (scalar-unit work): the trace is refused."""
    op = load_operator("matmul")
    cls = op.kernel.fn.__globals__["KernelMatmul"]
    copy_out = cls.CopyOut

    def peeking(self, m0, n0, mt, nt):
        self.a_gm.GetValue(0)
        copy_out(self, m0, n0, mt, nt)

    monkeypatch.setattr(cls, "CopyOut", peeking)
    _same_both_ways(op, "small", dict(tile_m=64, tile_n=64, block_dim=8))
    assert traced == []


def test_the_small_matmul_on_small_tiles_is_traced(traced):
    """The same launch as above without the scalar read: its blocks do come from the trace."""
    _same_both_ways(load_operator("matmul"), "small", dict(tile_m=64, tile_n=64, block_dim=8))
    assert traced
