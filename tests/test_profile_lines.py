"""Hot lines: per source line cost that adds up to the per-pipe totals."""

from __future__ import annotations

import pytest
from profsrc import synthetic

from asc_tui.ascendc.enums import PIPE_NAMES
from asc_tui.devkit.profile.profiler import profile
from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.npu.chip import load_chip


@pytest.mark.parametrize("op,params", [("add_custom", {"buffer_num": 1}), ("softmax", {}), ("rms_norm", {})])
def test_line_cycles_add_up_to_every_pipe_total(op, params):
    report = run(RunRequest(op, params=params, timing_only=True))
    em = report.emulation
    p = profile(report)
    for name, st in em.pipe_stats().items():
        from_lines = sum(ln.by_pipe.get(name, 0.0) for ln in p.lines)
        assert from_lines == pytest.approx(st.busy_us * em.clock_mhz, rel=1e-9, abs=1e-6), name
    assert sum(ln.share for ln in p.lines) == pytest.approx(1.0)


def test_lines_are_sorted_and_name_their_source_and_pipe():
    p = profile(run(RunRequest("add_custom", timing_only=True)))
    cycles = [ln.cycles for ln in p.lines]
    assert cycles == sorted(cycles, reverse=True)
    top = p.lines[0]
    assert top.file.endswith("add_custom.py")
    assert "DataCopy" in top.code
    assert top.pipe in ("mte2", "mte3")
    assert top.pipe == max(top.by_pipe, key=top.by_pipe.get)
    with open(top.file) as fh:
        assert fh.read().splitlines()[top.line - 1].strip() == top.code


def test_calls_count_the_instructions_issued_at_the_line():
    report = run(RunRequest("add_custom", params={"tile_length": 2048, "block_dim": 8}, timing_only=True))
    p = profile(report)
    add = next(ln for ln in p.lines if "AscendC.Add(" in ln.code)
    tiles = 8 * 2048 * 8 // 2048  # default case n over tile_length
    assert add.calls == tiles
    assert add.pipe == "vec"


def test_scalar_issue_cycles_go_to_the_issuing_lines():
    p = profile(synthetic(scalar_cycles=10.0), load_chip("ascend910b"))  # issue = 2 cycles
    by_line = {ln.line: ln for ln in p.lines}
    assert by_line[10].by_pipe["scalar"] == pytest.approx(4.0)  # two copies x 2
    assert by_line[12].by_pipe["scalar"] == pytest.approx(2.0)
    # the remaining 2 cycles (queue/flag operations) are spread over the two waits
    assert by_line[11].by_pipe["scalar"] == pytest.approx(1.0)
    assert by_line[13].by_pipe["scalar"] == pytest.approx(1.0)
    assert sum(ln.by_pipe.get("scalar", 0.0) for ln in p.lines) == pytest.approx(10.0)
    assert set(PIPE_NAMES) >= {k for ln in p.lines for k in ln.by_pipe}


def test_wait_cycles_land_on_the_waiting_line():
    p = profile(synthetic())
    by_line = {ln.line: ln for ln in p.lines}
    assert by_line[11].wait_cycles == 110.0
    assert by_line[13].wait_cycles == 60.0
    assert by_line[10].bytes == 2000


def test_lines_quote_the_code_that_ran_after_the_file_is_edited(tmp_path):
    from asc_tui import BUNDLED_OPERATORS

    src = (BUNDLED_OPERATORS / "add_custom.py").read_text()
    op = tmp_path / "my_add.py"
    op.write_text(src)
    report = run(RunRequest(str(op), timing_only=True))
    op.write_text("\n".join("# edited" for _ in src.splitlines()))  # same length, new text
    top = profile(report).lines[0]
    assert "DataCopy" in top.code
    assert src.splitlines()[top.line - 1].strip() == top.code
