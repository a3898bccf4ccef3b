"""A hand-made timeline for the profile tests (exact, known figures)."""

from __future__ import annotations

import numpy as np

from asc_tui.npu.pipes import MTE2, MTE3, V
from asc_tui.npu.results import BlockTimeline, EmulationResult


def synthetic(scalar_cycles: float = 10.0) -> EmulationResult:
    """One block at 1000 MHz (1 cycle = 1 ns); see the comments for the expected figures."""
    rows = [  # pipe, start, end, kind, link, line, nbytes
        (MTE2, 0, 100, 0, -1, 0, 1000),  # copy in
        (V, 0, 110, 1, 0, 1, 0),  # vector blocked until the copy's event (+10)
        (V, 110, 150, 0, -1, 2, 0),  # compute
        (MTE3, 100, 160, 1, 2, 3, 0),  # copy-out blocked: 100-110 and 150-160 nothing works
        (MTE3, 160, 200, 0, -1, 4, 500),  # copy out
        (MTE2, 120, 140, 0, -1, 0, 1000),  # a second copy in, under the compute
    ]
    cols = list(zip(*rows))
    b = BlockTimeline(
        block=0,
        core=0,
        wave=0,
        t_start=0.0,
        t_end=200.0,
        pipe=np.array(cols[0], np.int8),
        start=np.array(cols[1], float),
        end=np.array(cols[2], float),
        op=np.array([0, 1, 2, 1, 0, 0], np.int32),
        line=np.array(cols[5], np.int32),
        nbytes=np.array(cols[6], np.int64),
        kind=np.array(cols[3], np.int8),
        link=np.array(cols[4], np.int32),
        scalar_cycles=scalar_cycles,
    )
    lines = tuple(("kernel.py", 10 + i) for i in range(5))
    return EmulationResult(
        chip="synthetic",
        clock_mhz=1000.0,
        mode="timing",
        block_dim=1,
        cores_used=1,
        kernel_cycles=200.0,
        launch_overhead_us=0.0,
        blocks=(b,),
        ops=("DataCopy", "WaitFlag", "Add"),
        lines=lines,
        gm_read=2000,
        gm_write=500,
    )
