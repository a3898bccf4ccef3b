"""Sample directories in the workbench: listed by discovery, a save reruns that sample, and its
verify output reaches the log."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

from asc_tui.config import Config
from asc_tui.devkit.run.discovery import find_operators
from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.devkit.run.watch import classify
from asc_tui.tui.app import Workbench

SAMPLES = Path(__file__).parent / "samples"


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "examples"
    for name in ("vadd", "split"):
        shutil.copytree(SAMPLES / name, root / "group" / name)
    return root


def test_discovery_lists_samples_by_their_kernel_file(tmp_path):
    root = _tree(tmp_path)
    found = find_operators(root)
    assert [p.name for p in found] == ["vsub_kernel.cpp", "vadd.asc"]  # by sample directory
    r = run(RunRequest(str(found[1])))  # the kernel file runs its sample
    assert r.passed and r.sample.verify["exit"] == 0


def test_a_save_in_a_sample_reruns_only_that_sample(tmp_path):
    root = _tree(tmp_path)
    vadd = root / "group/vadd"
    for f in (vadd / "vadd.asc", vadd / "scripts/gen_data.py"):
        cs = classify([(None, str(f))], root)
        assert cs.operators == {(vadd / "vadd.asc").resolve()} and not cs.everything
    cs = classify([(None, str(root / "group/split/main.cpp"))], root)
    assert cs.operators == {(root / "group/split/vsub_kernel.cpp").resolve()}


def _workbench(root: Path) -> Workbench:
    return Workbench(
        str(root), clock=lambda: "00:00:00", show_host_times=False, config=Config(worker_timeout=30)
    )


async def _until(pilot, cond, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        await pilot.pause(0.05)


def test_workbench_opens_a_directory_of_samples_and_logs_verify(tmp_path):
    root = _tree(tmp_path)

    async def go():
        app = _workbench(root)
        async with app.run_test(size=(100, 30)) as pilot:
            await _until(pilot, lambda: app.results_seen >= 2, 60)
            tree = app.query_one("#sidebar")
            assert {p.name for p in tree.paths()} == {"vadd.asc", "vsub_kernel.cpp"}
            assert {tree.status(p) for p in tree.paths()} == {"pass"}
            log = "\n".join(app.query_one("#log-pane").lines_text)
            assert "vadd: verify_result.py: test pass!" in log

    asyncio.run(go())


def test_workbench_sweeps_a_sample_with_its_sidecar_values_and_runs_with_the_best(tmp_path):
    root = _tree(tmp_path)
    vadd = root / "group/vadd"
    (vadd / "asc-tui.toml").write_text("[tune]\nTILE = [128, 1024]\n")
    kernel = (vadd / "vadd.asc").resolve()

    async def go():
        app = _workbench(root)
        async with app.run_test(size=(100, 30)) as pilot:
            await _until(pilot, lambda: app.results_seen >= 2, 60)
            app.select_operator(kernel)
            await pilot.press("t")
            pane = app.query_one("#tune-pane")
            await _until(pilot, lambda: pane.status_text.startswith("sweep done"), 90)
            assert app.ops[kernel].best_params == {"TILE": 1024}, pane.status_text
            seen = app.results_seen
            await pilot.press("a")  # the next runs of the sample use TILE=1024
            await _until(pilot, lambda: app.results_seen > seen, 60)
            rep = app.ops[kernel].last.report
            assert rep.params == {"TILE": 1024} and rep.passed
            log = "\n".join(app.query_one("#log-pane").lines_text)
            assert "TILE=1024" in log
            await pilot.press("A")  # into the C++ literal
            await _until(pilot, lambda: "TILE = 1024;" in kernel.read_text(), 10)
            assert "constexpr uint32_t TILE = 1024;" in kernel.read_text()

    asyncio.run(go())


def test_cancelling_a_sample_sweep_keeps_the_results_so_far_and_stops_the_bar(tmp_path):
    """`t` then `x` on a sample: the configurations that ran stay in the table and give the
    best so far; the bar stops where it got to instead of animating on."""
    from textual.geometry import Region
    from textual.widgets._progress_bar import Bar

    root = _tree(tmp_path)
    vadd = root / "group/vadd"
    gen = vadd / "scripts/gen_data.py"
    gen.write_text("import time\ntime.sleep(0.6)\n" + gen.read_text())  # each config takes a while
    (vadd / "asc-tui.toml").write_text("[tune]\nTILE = [1024, 512, 256, 128, 64, 32]\n")
    kernel = (vadd / "vadd.asc").resolve()

    async def go():
        app = _workbench(root)
        async with app.run_test(size=(100, 30)) as pilot:
            await _until(pilot, lambda: app.results_seen >= 2, 60)
            app.select_operator(kernel)
            await pilot.press("t")
            pane = app.query_one("#tune-pane")
            await _until(pilot, lambda: pane.table.row_count >= 2, 60)
            assert pane.table.row_count >= 2, pane.status_text
            await pilot.press("x")
            await _until(pilot, lambda: not app.tools.tune.running, 30)
            assert not app.tools.tune.running
            assert pane.status_text.startswith("sweep cancelled"), pane.status_text
            ran = pane.table.row_count
            assert 2 <= ran < 6 and f"{ran} of 6" in pane.status_text
            assert app.ops[kernel].best_params is not None  # `a` applies the best so far
            log = "\n".join(app.query_one("#log-pane").lines_text)
            assert "KeyboardInterrupt" not in log and "worker failed" not in log
            bar = pane.bar.query_one(Bar)

            def frame() -> str:  # the bar as drawn: characters and their styles
                (strip,) = bar.render_lines(Region(0, 0, bar.size.width, 1))
                return repr(list(strip))

            last = frame()  # let a last change of value finish its animation (a loaded machine)
            for _ in range(25):
                await pilot.pause(0.2)
                now = frame()
                if now == last:
                    break
                last = now
            frames = {frame()}
            for _ in range(4):
                await pilot.pause(0.2)
                frames.add(frame())
            assert pane.bar.percentage is not None and len(frames) == 1  # not bouncing on

    asyncio.run(go())
