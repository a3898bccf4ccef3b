"""Breakdown, Sync Wait, overlap and roofline: definitions checked on a hand-made timeline and
on bundled operators."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profsrc import synthetic

from asc_tui.devkit.profile.breakdown import (
    _CLASS,
    _UNIONS,
    block_unions,
    columns,
    core_profiles,
    overlap_share,
    pipe_totals,
    record_slots,
    union_length,
)
from asc_tui.devkit.profile.profiler import profile
from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.npu.chip import load_chip
from asc_tui.npu.pipes import MTE2, N_PIPES, V
from asc_tui.npu.results import BlockTimeline, EmulationResult


def test_union_length_merges_overlapping_and_touching_intervals():
    assert union_length(np.array([5.0, 0, 10, 30]), np.array([12.0, 6, 20, 31])) == 21.0
    assert union_length(np.zeros(0), np.zeros(0)) == 0.0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1000), st.integers(0, 300), st.integers(0, 3 * N_PIPES - 1)), max_size=60
    )
)
def test_block_unions_equal_one_union_length_per_class(spans):
    """Each of a block's five unions is `union_length` of the records of that class (any
    order of starts, ties, zero lengths, waits and SetFlag markers mixed in)."""
    start = np.array([float(a) for a, _, _ in spans])
    end = start + np.array([float(d) for _, d, _ in spans])
    slot = np.array([k for _, _, k in spans], dtype=np.int64)
    member = (_CLASS[slot] & _UNIONS) != 0
    want = [union_length(start[m], end[m]) for m in member]
    assert block_unions(slot, start, end) == pytest.approx(want, abs=1e-9)


def _block(i: int, spans: list, shift: float) -> BlockTimeline:
    start = np.array([float(a) for a, _, _ in spans]) + shift
    n = len(spans)
    return BlockTimeline(
        block=i,
        core=i,
        wave=0,
        t_start=float(start.min()) if n else 0.0,
        t_end=float((start + [float(d) for _, d, _ in spans]).max()) if n else 0.0,
        pipe=np.array([k % N_PIPES for _, _, k in spans], np.int8),
        start=start,
        end=start + np.array([float(d) for _, d, _ in spans]),
        op=np.zeros(n, np.int32),
        line=np.zeros(n, np.int32),
        nbytes=np.full(n, 64, np.int64),
        kind=np.array([k // N_PIPES for _, _, k in spans], np.int8),
        link=np.full(n, -1, np.int32),
        scalar_cycles=5.0,
    )


_SPANS = st.lists(
    st.tuples(st.integers(0, 500), st.integers(0, 200), st.integers(0, 3 * N_PIPES - 1)),
    min_size=1,
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_SPANS, min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(0, 2), st.sampled_from([0.0, 0.0, 7.5])), min_size=1, max_size=8),
)
def test_blocks_in_lockstep_share_their_figures_and_equal_one_block_at_a_time(streams, picks):
    """Blocks with equal records (a wave in lockstep) get their unions and per-core figures
    once; they equal each block's own, bit for bit, whatever mix of equal, shifted and other
    blocks (all of one length or not) the run has."""
    blocks = [_block(i, streams[k % len(streams)], shift) for i, (k, shift) in enumerate(picks)]

    def run_of(bs) -> EmulationResult:
        return replace(synthetic(), blocks=tuple(bs), block_dim=len(bs), cores_used=len(bs), records=None)

    em = run_of(blocks)
    cols = columns(em)
    totals = pipe_totals(em, cols)
    rows = [block_unions(record_slots(b.kind, b.pipe), b.start, b.end) for b in blocks]
    assert totals.block_overlaps == tuple(overlap_share(*r[2:]) for r in rows)
    assert (totals.compute, totals.move) == (sum(r[2] for r in rows), sum(r[3] for r in rows))
    for got, b in zip(core_profiles(em, cols), blocks):
        alone = run_of([b])
        assert got.to_dict() == core_profiles(alone, columns(alone))[0].to_dict()


def test_blocks_at_the_same_cycles_doing_other_work_are_not_taken_as_equal():
    """Same starts, other ends or other pipes: each block keeps its own figures."""
    spans = [(0, 10, 0), (5, 10, 0)]
    for other in ([(0, 10, 0), (5, 20, 0)], [(0, 10, 0), (5, 10, N_PIPES + 1)], [(0, 10, 3), (5, 10, 0)]):
        blocks = [_block(0, spans, 0.0), _block(1, other, 0.0)]
        em = replace(synthetic(), blocks=tuple(blocks), block_dim=2, cores_used=2, records=None)
        rows = [block_unions(record_slots(b.kind, b.pipe), b.start, b.end) for b in blocks]
        totals = pipe_totals(em, columns(em))
        assert totals.block_overlaps == tuple(overlap_share(*r[2:]) for r in rows)
        assert (totals.compute, totals.move) == (rows[0][2] + rows[1][2], rows[0][3] + rows[1][3])


def test_blocks_of_other_lengths_are_never_read_as_rows_of_one_length():
    """Three blocks of 2, 1 and 3 records (6 = 3 × 2) whose flat columns repeat: each keeps
    its own figures."""
    x, y = (0, 10, V), (5, 10, MTE2)  # (work records: slot = pipe)
    blocks = [_block(i, spans, 0.0) for i, spans in enumerate([[x, y], [x], [y, x, y]])]
    em = replace(synthetic(), blocks=tuple(blocks), block_dim=3, cores_used=3, records=None)
    rows = [block_unions(record_slots(b.kind, b.pipe), b.start, b.end) for b in blocks]
    totals = pipe_totals(em, columns(em))
    assert totals.block_overlaps == tuple(overlap_share(*r[2:]) for r in rows)
    assert totals.compute == sum(r[2] for r in rows) and totals.move == sum(r[3] for r in rows)
    assert totals.sync_wait == max(sum(r[1] for r in rows) - sum(r[0] for r in rows), 0.0)


def test_sync_wait_counts_only_time_when_the_core_did_nothing_but_wait():
    p = profile(synthetic())
    rows = {b.key: b for b in p.breakdown}
    assert rows["sync_wait"].time_us == pytest.approx(0.020)  # 100-110 and 150-160
    assert p.pipeline.wait_ratios["vec"] == pytest.approx(110 / 200)
    assert p.pipeline.wait_ratios["mte3"] == pytest.approx(60 / 200)
    assert p.pipeline.blocked_us["vec"] == pytest.approx(0.110)  # every wait record counts here


def test_breakdown_times_are_per_pipe_busy_and_shares_sum_to_one():
    p = profile(synthetic())
    rows = {b.key: b for b in p.breakdown}
    assert rows["mte2"].time_us == pytest.approx(0.120)
    assert rows["vec"].time_us == pytest.approx(0.040)
    assert rows["mte3"].time_us == pytest.approx(0.040)
    assert rows["scalar"].time_us == pytest.approx(0.010)  # issue cycles count as scalar work
    total = sum(b.time_us for b in p.breakdown)
    assert total == pytest.approx(0.230)
    assert sum(b.share for b in p.breakdown) == pytest.approx(1.0)
    assert rows["mte2"].share == pytest.approx(0.120 / 0.230)
    assert p.bottleneck == "mte2"


def test_overlap_is_the_hidden_share_of_the_shorter_activity():
    p = profile(synthetic())
    # compute 110-150 (40), movement 0-100,120-140,160-200 (160); both 120-140 (20)
    assert p.pipeline.overlap == pytest.approx(20 / 40)
    assert p.pipeline.overlap_kernel == pytest.approx(20 / 200)


def test_breakdown_matches_the_run_pipe_table_on_a_bundled_operator():
    report = run(RunRequest("add_custom", timing_only=True))
    p = profile(report)
    em = report.emulation
    stats = em.pipe_stats()
    rows = {b.key: b for b in p.breakdown}
    for key in ("vec", "scalar", "mte2", "mte3"):
        assert rows[key].time_us == pytest.approx(stats[key].busy_us / em.cores_used)
    assert sum(b.share for b in p.breakdown) == pytest.approx(1.0)
    assert p.to_dict()["breakdown_total_us"] == pytest.approx(sum(b.time_us for b in p.breakdown))
    assert p.bottleneck == max(p.breakdown, key=lambda b: b.time_us).key


def test_profiling_is_pure_and_repeatable():
    report = run(RunRequest("vector_add_bias", timing_only=True))
    key = report.emulation.timeline_key()
    a, b = profile(report).to_dict(), profile(report).to_dict()
    assert a == b
    assert report.emulation.timeline_key() == key


def test_json_has_the_documented_shape():
    d = profile(run(RunRequest("add_custom", timing_only=True))).to_dict()
    for k in ("time_us", "breakdown", "bottleneck", "roofline", "pipeline", "lines"):
        assert k in d
    assert {"name", "time_us", "share"} <= set(d["breakdown"][0])
    assert {"bound", "fraction"} <= set(d["roofline"])
    assert {"utilisation", "overlap", "wait_ratios", "advice", "core_balance"} <= set(d["pipeline"])
    assert {"file", "line", "calls", "cycles", "share", "pipe"} <= set(d["lines"][0])
    names = [b["name"] for b in d["breakdown"]]
    assert names == [
        "Compute (Cube)",
        "Compute (Vector)",
        "Scalar",
        "HBM Read (MTE2)",
        "HBM Write (MTE3)",
        "L1→L0 (MTE1)",
        "FixPipe",
        "Sync Wait",
    ]


def test_small_kernels_are_latency_bound_and_big_tiles_on_all_cores_approach_the_roof():
    small = profile(run(RunRequest("add_custom", timing_only=True)))
    assert small.roofline.bound == "latency"
    big = profile(
        run(
            RunRequest(
                "add_custom", case="large", timing_only=True, params={"tile_length": 8192, "block_dim": 48}
            )
        )
    )
    assert big.roofline.bound == "memory"
    assert big.roofline.fraction > 4 * small.roofline.fraction


def test_roofline_uses_the_chip_peaks():
    chip = load_chip("ascend910b")
    p = profile(run(RunRequest("add_custom", timing_only=True)), chip)
    r = p.roofline
    assert r.peak_gbps == pytest.approx(chip.hbm_gbps)
    assert r.memory_us == pytest.approx((p.gm_read + p.gm_write) / (chip.hbm_gbps * 1e3))
    assert r.fraction == pytest.approx(max(r.memory_us, r.compute_us) / p.time_us)


def test_full_and_timing_only_runs_profile_identically():
    full = profile(run(RunRequest("add_custom", params={"buffer_num": 1}))).to_dict()
    timing = profile(run(RunRequest("add_custom", params={"buffer_num": 1}, timing_only=True))).to_dict()
    for key in ("time_us", "breakdown", "bottleneck", "roofline", "pipeline", "lines"):
        assert full[key] == timing[key], key


def test_a_failed_run_cannot_be_profiled():
    report = run(RunRequest("add_custom", params={"tile_length": 999999}, timing_only=True))
    with pytest.raises(ValueError, match="nothing to profile"):
        profile(report)
