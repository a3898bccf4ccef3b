"""Timeline downsampling: exact per-column busy fractions at any zoom, in O(width log n)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from asc_tui.devkit.views.timeline import TimelineModel
from asc_tui.npu.results import BlockTimeline, EmulationResult


def synthetic(intervals_by_pipe: dict[int, list[tuple[float, float]]], waits=()) -> EmulationResult:
    pipe, start, end, kind = [], [], [], []
    for p, ivs in intervals_by_pipe.items():
        for s, e in ivs:
            pipe.append(p), start.append(s), end.append(e), kind.append(0)
    for p, s, e in waits:
        pipe.append(p), start.append(s), end.append(e), kind.append(1)
    n = len(pipe)
    z = np.zeros(n, dtype=np.int32)
    b = BlockTimeline(
        0,
        0,
        0,
        0.0,
        float(max(end, default=1)),
        np.array(pipe, np.int8),
        np.array(start, float),
        np.array(end, float),
        z,
        z,
        z.astype(np.int64),
        np.array(kind, np.int8),
        z - 1,
        0.0,
    )
    return EmulationResult(
        "t", 1000.0, "timing", 1, 1, float(max(end, default=1)), 0.0, (b,), ("op",), (("f.py", 1),), 0, 0
    )


def brute(ivs, t0, t1, width):
    edges = np.linspace(t0, t1, width + 1)
    out = np.zeros(width)
    for s, e in ivs:
        for i in range(width):
            out[i] += max(0.0, min(e, edges[i + 1]) - max(s, edges[i]))
    return out / ((t1 - t0) / width)


@st.composite
def serial_intervals(draw):
    gaps = draw(st.lists(st.tuples(st.floats(0, 50), st.floats(0.5, 50)), min_size=1, max_size=30))
    t, ivs = 0.0, []
    for gap, dur in gaps:
        t += gap
        ivs.append((t, t + dur))
        t += dur
    return ivs


@given(serial_intervals(), st.integers(1, 80), st.floats(0, 0.9), st.floats(0.05, 1.0))
def test_column_fractions_equal_the_exact_overlap(ivs, width, a, span):
    em = synthetic({4: ivs})
    m = TimelineModel(em)
    t0 = a * em.kernel_cycles
    t1 = t0 + span * em.kernel_cycles
    (lane,) = [ln for ln in m.frame(t0, t1, width, 0).lanes if ln.pipe == "mte2"]
    np.testing.assert_allclose(lane.busy, np.clip(brute(ivs, t0, t1, width), 0, 1), atol=1e-9)


def test_waits_are_a_separate_channel_and_utilisation_is_the_window_share():
    em = synthetic({1: [(0, 50)]}, waits=[(1, 50, 100)])
    lane = next(ln for ln in TimelineModel(em).frame(0, 100, 4, 0).lanes if ln.pipe == "vec")
    assert list(lane.busy) == [1, 1, 0, 0] and list(lane.wait) == [0, 0, 1, 1]
    assert lane.utilisation == 0.5


def test_overlap_is_the_share_of_the_shorter_of_compute_and_movement_hidden_under_the_other():
    em = synthetic({1: [(0, 10)], 3: [(5, 25)]})  # vec 10, mte1 20, both at once 5
    assert abs(TimelineModel(em).overlap(0) - 0.5) < 1e-12
    assert TimelineModel(synthetic({1: [(0, 10)]})).overlap(0) is None  # no movement: n/a


def test_a_million_records_frame_touches_only_the_screen_width():
    n = 1_000_000
    s = np.arange(n, dtype=float) * 2
    em = synthetic({})
    z = np.zeros(n, dtype=np.int32)
    b = BlockTimeline(
        0,
        0,
        0,
        0.0,
        2.0 * n,
        np.full(n, 3, np.int8),
        s,
        s + 1,
        z,
        z,
        z.astype(np.int64),
        np.zeros(n, np.int8),
        z - 1,
        0.0,
    )
    em = EmulationResult("t", 1000.0, "timing", 1, 1, 2.0 * n, 0.0, (b,), ("op",), (("f.py", 1),), 0, 0)
    m = TimelineModel(em)
    lane = m.frame(0, 2.0 * n, 100, None).lanes[0]
    np.testing.assert_allclose(lane.busy, 0.5, atol=1e-6)
    zoomed = m.frame(10, 14, 4, 0).lanes[0]
    assert list(zoomed.busy) == [1, 0, 1, 0]


def five_blocks(seed: int = 3) -> EmulationResult:
    """Five blocks of overlapping MTE2 copies and vector work (compute and movement)."""
    rng = np.random.default_rng(seed)
    blocks = []
    for i in range(5):
        t = np.cumsum(rng.uniform(1, 20, 50))
        z = np.zeros(100, dtype=np.int32)
        pipe = np.concatenate([np.full(50, 4), np.full(50, 1)]).astype(np.int8)
        start = np.concatenate([t, t + 3])
        end = np.concatenate([t + rng.uniform(0.5, 10, 50), t + 4])
        blocks.append(
            BlockTimeline(
                i,
                i,
                0,
                0.0,
                float(end.max()),
                pipe,
                start,
                end,
                z,
                z,
                z.astype(np.int64),
                np.zeros(100, np.int8),
                z - 1,
                0.0,
            )
        )
    cycles = max(b.t_end for b in blocks)
    return EmulationResult(
        "t", 1000.0, "timing", 5, 5, cycles, 0.0, tuple(blocks), ("op",), (("f.py", 1),), 0, 0
    )


def test_block_overview_matches_each_blocks_own_frame():
    m = TimelineModel(five_blocks())
    act, share = m.block_activity(100, 700, 37)
    for i in range(5):
        lanes = m.frame(100, 700, 37, i).lanes
        np.testing.assert_allclose(act[i], np.max([ln.busy for ln in lanes], axis=0), atol=1e-9)
        assert abs(share[i] - max(ln.utilisation for ln in lanes)) < 1e-9


def test_after_prepare_no_frame_computes_an_overlap(monkeypatch):
    """A block's overlap sorts its records (~25 ms per million): `prepare` computes every
    block's, so showing any block later is a pure query (the 16384³ run's slowest frames were
    the first view of each block)."""
    from asc_tui.devkit.profile import timing
    from asc_tui.devkit.views import timeline

    em = five_blocks()
    m = TimelineModel(em).prepare()

    def refuse(*_):
        raise AssertionError("overlap computed during a frame")

    monkeypatch.setattr(timeline, "overlap", refuse)
    for block in (None, *range(5)):
        m.frame(0, em.kernel_cycles, 40, block)
        assert m.overlap(block) == timing.overlap(em, block)
    m.block_activity(0, em.kernel_cycles, 40)


def test_prepare_with_a_width_answers_the_whole_run_view_without_a_query(monkeypatch):
    """The first frame of a new result (zoom 1, all blocks) is built with the index, in its
    thread: the frame itself only looks it up. Kept answers are the computed ones."""
    from asc_tui.devkit.views import timeline

    em = five_blocks()
    fresh = TimelineModel(em)
    want_lanes = fresh.frame(0.0, em.kernel_cycles, 40).lanes
    want_act, want_share = fresh.block_activity(0.0, em.kernel_cycles, 40)
    m = TimelineModel(em).prepare(40)

    def refuse(*_):
        raise AssertionError("the index was queried")

    with monkeypatch.context() as mp:
        mp.setattr(timeline._Intervals, "busy_before", refuse)
        mp.setattr(timeline._Stacked, "busy_before", refuse)
        lanes = m.frame(0.0, em.kernel_cycles, 40).lanes
        act, share = m.block_activity(0.0, em.kernel_cycles, 40)
    for got, want in zip(lanes, want_lanes):
        assert got.pipe == want.pipe and got.utilisation == want.utilisation
        assert np.array_equal(got.busy, want.busy) and np.array_equal(got.wait, want.wait)
    assert np.array_equal(act, want_act) and np.array_equal(share, want_share)
    for k in range(timeline.KEPT):  # other windows push it out: it is computed again, alike
        m.frame(k, k + 50.0, 40)
    with monkeypatch.context() as mp:
        mp.setattr(timeline._Intervals, "busy_before", refuse)
        with pytest.raises(AssertionError, match="queried"):
            m.frame(0.0, em.kernel_cycles, 40)
    again = m.frame(0.0, em.kernel_cycles, 40).lanes
    assert all(np.array_equal(a.busy, b.busy) for a, b in zip(again, want_lanes))


@st.composite
def touching_intervals(draw):
    """Integer intervals, mostly back to back (a pipe's stream), some overlapping, repeated or
    empty (several blocks at once): every case `_drop_shared` meets."""
    t, ivs = 0, []
    for gap, dur, back in draw(
        st.lists(st.tuples(st.integers(0, 3), st.integers(0, 6), st.integers(0, 4)), max_size=40)
    ):
        t = max(t + gap - back, 0)  # back > gap: overlaps the one before
        ivs.append((t, t + dur))
        t += dur
    return ivs


@given(touching_intervals(), st.lists(st.integers(-2, 200), min_size=1, max_size=20))
def test_the_index_less_shared_starts_and_ends_answers_exactly_as_every_record(ivs, ts):
    from asc_tui.devkit.views.timeline import _Intervals

    starts = np.array([s for s, _ in ivs], dtype=float)
    ends = np.array([e for _, e in ivs], dtype=float)
    iv = _Intervals.build(starts, ends)
    t = np.array(ts, dtype=float)
    every = np.clip(t[:, None] - starts[None, :], 0, ends - starts).sum(axis=1)  # Σ over records
    np.testing.assert_array_equal(iv.busy_before(t), every)  # integers: both sums are exact
    assert len(iv.starts) == len(iv.ends) <= len(ivs)
    assert not set(iv.starts.tolist()) & set(iv.ends.tolist())  # nothing shared is left


@given(st.lists(touching_intervals(), max_size=6))
def test_the_all_blocks_index_joined_from_the_blocks_equals_one_built_from_every_record(blocks):
    """`_Intervals.joined` (the all-blocks index from each block's kept values) keeps the very
    values, bit for bit, that building from all blocks' records keeps."""
    from asc_tui.devkit.views.timeline import _Intervals

    def arrays(ivs):
        return np.array([s for s, _ in ivs], dtype=float), np.array([e for _, e in ivs], dtype=float)

    whole = _Intervals.build(*arrays([iv for ivs in blocks for iv in ivs]))
    joined = _Intervals.joined([_Intervals.build(*arrays(ivs)) for ivs in blocks])
    for a, b in zip(
        (whole.starts, whole.start_prefix, whole.ends, whole.end_prefix),
        (joined.starts, joined.start_prefix, joined.ends, joined.end_prefix),
    ):
        np.testing.assert_array_equal(a, b)
