"""One definition of each time and overlap figure: the CLI, its JSON and every pane agree."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest
from tuikit import DATA, make_app, started

from asc_tui.cli import main as cli_main
from asc_tui.devkit.profile.profiler import profile
from asc_tui.devkit.profile.timing import OVERLAP_DEF, TASK_DEF, timing
from asc_tui.devkit.run.runner import RunRequest, run


@pytest.fixture
def op(tmp_path):
    d = tmp_path / "operators"
    d.mkdir()
    shutil.copy(DATA / "add_custom.py", d / "add_custom.py")
    return d / "add_custom.py"


def test_task_is_kernel_plus_launch_and_overlap_is_the_profiles(op):
    rep = run(RunRequest(str(op)))
    t = timing(rep.emulation)
    assert t.task_us == pytest.approx(t.kernel_us + t.launch_us) and t.launch_us > 0
    assert t.kernel_us == pytest.approx(t.kernel_cycles / t.clock_mhz)
    assert t.overlap == profile(rep).pipeline.overlap


def test_cli_json_header_profile_and_timeline_show_the_same_figures(op, capsys):
    t = timing(run(RunRequest(str(op))).emulation)
    assert cli_main(["run", str(op), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["time_us"] == pytest.approx(t.task_us) and d["kernel_us"] == pytest.approx(t.kernel_us)
    assert d["timing"]["launch_us"] == pytest.approx(t.launch_us)
    assert d["timing"]["overlap"] == pytest.approx(t.overlap)
    assert d["timing"]["definitions"] == {"task_us": TASK_DEF, "overlap": OVERLAP_DEF}
    assert cli_main(["profile", str(op), "--json"]) == 0
    prof = json.loads(capsys.readouterr().out)
    assert prof["time_us"] == pytest.approx(t.task_us) and prof["kernel_us"] == pytest.approx(t.kernel_us)
    assert prof["pipeline"]["overlap"] == pytest.approx(t.overlap)
    assert cli_main(["run", str(op)]) == 0
    human = capsys.readouterr().out
    assert t.split("us") in human  # "4,850 cycles" stands next to the kernel time, not the task
    assert t.overlap_text() in human

    async def go():
        app = make_app(op.parent)
        async with app.run_test(size=(120, 30)) as pilot:
            await started(pilot, app, n=1)
            header = str(app.query_one("#status").render())
            assert f"task {t.task_us:.3f} µs" in header
            prof = app.query_one("#profile-pane").plain
            for part in t.parts():
                assert part in prof
            assert t.overlap_text() in prof
            await pilot.press("3")
            await pilot.pause(0.1)
            tl = app.query_one("#timeline-view").text()
            assert f"kernel 0.000–{t.kernel_us:.3f} µs" in tl
            assert f"+ {t.launch_us:.3f} µs launch" in tl
            assert t.overlap_text() in tl

    asyncio.run(go())
