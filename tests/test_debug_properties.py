"""Properties: the sanitizer never reports a correct kernel, whatever its tiling, and it never
changes what the kernel computes or how long it takes."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from asc_tui.devkit.debug.sanitizer import TOOLS, Sanitizer
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import RunRequest, run

ADD = load_operator("add_custom")


@given(
    n=st.integers(16, 20_000),
    tile=st.sampled_from([256, 512, 1024, 2048]),
    buffers=st.sampled_from([1, 2]),
    blocks=st.sampled_from([1, 2, 3, 8]),
)
def test_add_custom_is_clean_under_every_tool_for_any_tiling(n, tile, buffers, blocks):
    from asc_tui.operator import Case

    op = ADD
    cases = dict(op.cases)
    cases["prop"] = Case("prop", {"n": n, "dtype": "float16"})
    op = type(op)(**{**op.__dict__, "cases": cases})
    san = Sanitizer(TOOLS)
    rep = run(
        RunRequest(
            "add_custom", "prop", params={"tile_length": tile, "buffer_num": buffers, "block_dim": blocks}
        ),
        op=op,
        sanitizer=san,
    )
    assert rep.errors == (), [e.format() for e in rep.errors]
    assert san.findings() == [], [f.format() for f in san.findings()]
    assert rep.passed


def test_sanitizer_changes_neither_results_nor_timeline():
    plain = run(RunRequest("vector_add_bias"))
    checked = run(RunRequest("vector_add_bias"), sanitizer=Sanitizer(TOOLS))
    a, b = plain.emulation, checked.emulation
    assert a.kernel_cycles == b.kernel_cycles
    for x, y in zip(a.blocks, b.blocks):
        assert np.array_equal(x.start, y.start) and np.array_equal(x.end, y.end)
    assert plain.precision.to_dict() == checked.precision.to_dict()
