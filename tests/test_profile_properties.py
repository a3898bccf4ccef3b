"""Invariants of the profile on random timelines: shares, bounds and line totals always hold."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from asc_tui.devkit.profile.profiler import profile
from asc_tui.npu.pipes import N_PIPES
from asc_tui.npu.results import BlockTimeline, EmulationResult


@st.composite
def timelines(draw):
    n_blocks = draw(st.integers(1, 3))
    n_lines = draw(st.integers(1, 4))
    blocks = []
    for b in range(n_blocks):
        rows = []
        for pipe in draw(st.lists(st.integers(0, N_PIPES - 1), min_size=1, max_size=6)):
            t = 0.0
            for _ in range(draw(st.integers(1, 5))):
                gap = draw(st.floats(0, 50))
                dur = draw(st.floats(0, 100))
                kind = draw(st.sampled_from([0, 0, 1, 2]))
                dur = 0.0 if kind == 2 else dur
                rows.append(
                    (
                        pipe,
                        t + gap,
                        t + gap + dur,
                        kind,
                        draw(st.integers(0, n_lines - 1)),
                        draw(st.integers(0, 4096)) if kind == 0 else 0,
                    )
                )
                t += gap + dur
        rows.sort(key=lambda r: r[1])
        c = list(zip(*rows))
        t_end = max(r[2] for r in rows)
        blocks.append(
            BlockTimeline(
                block=b,
                core=b,
                wave=0,
                t_start=0.0,
                t_end=t_end,
                pipe=np.array(c[0], np.int8),
                start=np.array(c[1]),
                end=np.array(c[2]),
                op=np.zeros(len(rows), np.int32),
                line=np.array(c[4], np.int32),
                nbytes=np.array(c[5], np.int64),
                kind=np.array(c[3], np.int8),
                link=np.full(len(rows), -1, np.int32),
                scalar_cycles=draw(st.floats(0, 50)),
            )
        )
    kernel = max(b.t_end for b in blocks)
    return EmulationResult(
        chip="synthetic",
        clock_mhz=1000.0,
        mode="timing",
        block_dim=n_blocks,
        cores_used=n_blocks,
        kernel_cycles=kernel,
        launch_overhead_us=1.0,
        blocks=tuple(blocks),
        ops=("op",),
        lines=tuple(("k.py", i + 1) for i in range(n_lines)),
        gm_read=0,
        gm_write=0,
    )


@given(timelines())
def test_profile_invariants_hold_on_any_timeline(em):
    p = profile(em)
    total = sum(b.time_us for b in p.breakdown)
    if total > 0:
        assert sum(b.share for b in p.breakdown) == pytest.approx(1.0)
    stats = em.pipe_stats()
    for name, s in stats.items():
        from_lines = sum(ln.by_pipe.get(name, 0.0) for ln in p.lines)
        assert from_lines == pytest.approx(s.busy_us * em.clock_mhz, rel=1e-9, abs=1e-6)
    if p.pipeline.overlap is not None:
        assert -1e-9 <= p.pipeline.overlap <= 1 + 1e-9
    sync = next(b for b in p.breakdown if b.key == "sync_wait").time_us
    assert 0.0 <= sync <= sum(s.wait_us for s in stats.values()) / em.cores_used + 1e-9
    assert p.bottleneck == max(p.breakdown, key=lambda b: b.time_us).key
