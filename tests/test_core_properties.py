"""Property tests: random shapes, tiles and buffer counts give the reference result, and the
timing-only mode produces exactly the timeline of the full mode."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import RunRequest, run

ADD = load_operator("add_custom")
SOFTMAX = load_operator("softmax")
NORM = load_operator("rms_norm")
FAST = settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])


def _patched(op, **case):
    """The same operator module with one extra case."""
    from dataclasses import replace

    from asc_tui.operator import Case

    return replace(op, cases={**op.cases, "h": Case("h", case)})


def _run_both(op, case, params):
    full = run(RunRequest(op.name, case="h", params=params), op=op)
    timing = run(RunRequest(op.name, case="h", params=params, timing_only=True), op=op)
    for report in (full, timing):
        em = report.emulation
        _records_are_the_blocks(em)
        assert all(b.start.base is em.records.start for b in em.blocks)  # views, not copies
    return full, timing


def _records_are_the_blocks(em) -> None:
    """The launch's all-block columns hold exactly each block's records, in block order."""
    import numpy as np

    from asc_tui.npu.results import Records

    want = Records.of_blocks(em.blocks)
    for name in ("block", "pipe", "start", "end", "op", "line", "nbytes", "kind", "link", "offsets"):
        assert np.array_equal(getattr(em.records, name), getattr(want, name)), name


@FAST
@given(
    n=st.integers(1, 40_000),
    tile=st.sampled_from([64, 128, 256, 1024, 4096]),
    bufs=st.sampled_from([1, 2]),
    blocks=st.integers(1, 12),
    dtype=st.sampled_from(["float16", "float32", "bfloat16"]),
)
def test_add_matches_reference_for_any_shape(n, tile, bufs, blocks, dtype):
    op = _patched(ADD, n=n, dtype=dtype)
    full, timing = _run_both(op, "h", dict(tile_length=tile, buffer_num=bufs, block_dim=blocks))
    assert not full.errors, full.errors
    assert full.precision.verdict == "PASS"
    assert full.emulation.timeline_key() == timing.emulation.timeline_key()


@FAST
@given(
    rows=st.integers(1, 24),
    cols16=st.integers(1, 96),
    bufs=st.sampled_from([1, 2]),
    blocks=st.integers(1, 8),
    dtype=st.sampled_from(["float16", "float32"]),
)
def test_softmax_matches_reference(rows, cols16, bufs, blocks, dtype):
    op = _patched(SOFTMAX, rows=rows, cols=cols16 * 16, dtype=dtype)
    full, timing = _run_both(op, "h", dict(buffer_num=bufs, block_dim=blocks))
    assert not full.errors, full.errors
    assert full.precision.verdict == "PASS", full.precision.to_dict()
    assert full.emulation.timeline_key() == timing.emulation.timeline_key()


@FAST
@given(
    rows=st.integers(1, 16),
    cols16=st.integers(1, 128),
    bufs=st.sampled_from([1, 2]),
    blocks=st.integers(1, 8),
    dtype=st.sampled_from(["float16", "float32"]),
)
def test_rms_norm_matches_reference(rows, cols16, bufs, blocks, dtype):
    op = _patched(NORM, rows=rows, cols=cols16 * 16, dtype=dtype)
    full, timing = _run_both(op, "h", dict(buffer_num=bufs, block_dim=blocks))
    assert not full.errors, full.errors
    assert full.precision.verdict == "PASS", full.precision.to_dict()
    assert full.emulation.timeline_key() == timing.emulation.timeline_key()


def test_replacing_the_blocks_rebuilds_the_records():
    from dataclasses import replace

    em = run(RunRequest("add_custom", timing_only=True)).emulation
    one = replace(em, blocks=em.blocks[:1])
    assert len(one.records) == len(em.blocks[0]) < len(em.records)
    _records_are_the_blocks(one)
    backwards = replace(em, blocks=em.blocks[::-1])  # still views, but not in records' order
    _records_are_the_blocks(backwards)
    assert replace(em, log=()).records is em.records  # unchanged blocks keep theirs


def test_double_buffering_overlaps_copy_and_compute():
    one = run(RunRequest("add_custom", case="large", params=dict(buffer_num=1), timing_only=True))
    two = run(RunRequest("add_custom", case="large", params=dict(buffer_num=2), timing_only=True))
    assert two.emulation.time_us < one.emulation.time_us * 0.95


def test_more_blocks_finish_sooner_until_cores_run_out():
    times = [
        run(
            RunRequest("add_custom", case="large", params=dict(block_dim=b), timing_only=True)
        ).emulation.time_us
        for b in (1, 2, 8)
    ]
    assert times[0] > times[1] > times[2]


def test_a_pickled_result_keeps_one_copy_of_the_records():
    import pickle

    em = run(RunRequest("add_custom", timing_only=True)).emulation
    data = pickle.dumps(em)
    back = pickle.loads(data)
    assert back.timeline_key() == em.timeline_key()
    _records_are_the_blocks(back)
    assert all(b.start.base is back.records.start for b in back.blocks)
    # the records travel once: about one byte string of columns, not two
    columns = sum(
        getattr(em.records, f).nbytes
        for f in ("block", "pipe", "start", "end", "op", "line", "nbytes", "kind", "link")
    )
    assert len(data) < 1.5 * columns + 20_000


def test_a_result_keeps_the_records_its_blocks_are_views_of_and_no_others():
    """`Records.backs`: the launch's own timelines at once, the same blocks in another tuple
    by their memory; blocks that are not its views (copies, another order) get records of
    their own."""
    from dataclasses import replace

    em = run(RunRequest("add_custom", case="large", params=dict(block_dim=8), timing_only=True)).emulation
    assert em.records.backs(em.blocks) and em.records.backs(tuple(em.blocks))
    swapped = replace(em, blocks=tuple(reversed(em.blocks)))
    assert swapped.records is not em.records
    _records_are_the_blocks(swapped)
    copied = tuple(replace(b, pipe=b.pipe.copy()) for b in em.blocks)
    assert not em.records.backs(copied)
    assert replace(em, blocks=copied).records is not em.records
