"""Each tool key posts one typed, read-only result message (seen with `run_test(message_hook=…)`),
and a tool whose devkit call fails is shown by the app's one worker-error handler."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from textual.worker import Worker, WorkerState
from tuikit import SRC, log_text, make_app, started, until

from asc_tui.config import Config
from asc_tui.devkit.outcome import Verdict
from asc_tui.tui.messages import ToolFailed
from asc_tui.tui.tools import (
    BenchFinished,
    DebugFinished,
    ExportFinished,
    PrecisionReady,
    ProfileReady,
    TuneFinished,
    TuneProgress,
)


def drive(ops, script, **kw) -> list:
    """Run `script(app, pilot, seen)` on a started workbench; returns every message dispatched."""
    seen: list = []

    async def go():
        app = make_app(ops, **kw)
        async with app.run_test(size=(100, 30), message_hook=seen.append) as pilot:
            await started(pilot, app)
            await script(app, pilot, seen)

    asyncio.run(go())
    return seen


def of(seen: list, kind: type) -> list:
    return [m for m in seen if type(m) is kind]


def press(*keys: str, wait_for: type, n: int = 1):
    """A script: press `keys`, then wait until `n` messages of `wait_for` were dispatched."""

    async def script(app, pilot, seen):
        await pilot.press(*keys)
        await until(pilot, lambda: len(of(seen, wait_for)) >= n, timeout=60, what=wait_for.__name__)
        await pilot.pause(0.1)  # the message is applied

    return script


async def press_until_failure(pilot, seen: list, key: str) -> None:
    """Press `key`, then wait until the app has shown a worker's failure."""
    await pilot.press(key)
    await until(pilot, lambda: failures(seen), timeout=60, what="a worker's failure")
    await pilot.pause(0.1)


def failures(seen: list) -> list[Worker]:
    return [m.worker for m in seen if isinstance(m, Worker.StateChanged) and m.state is WorkerState.ERROR]


def test_profile_key_posts_the_profile_report_as_text(ops):
    seen = drive(ops, press("p", wait_for=ProfileReady))
    (msg,) = of(seen, ProfileReady)
    assert msg.path.stem == "add_custom"
    assert "MTE2" in msg.text and "add_custom.py:" in msg.text  # breakdown and hot lines
    assert failures(seen) == []


def test_precision_key_posts_the_runs_precision_report(ops):
    seen = drive(ops, press("v", wait_for=PrecisionReady))
    (msg,) = of(seen, PrecisionReady)
    assert [(o.name, o.verdict) for o in msg.report.outputs] == [("z", "PASS")]


def test_debug_key_posts_a_clean_sanitizer_outcome(ops):
    seen = drive(ops, press("d", wait_for=DebugFinished))
    (msg,) = of(seen, DebugFinished)
    out = msg.outcome
    assert out.verdict is Verdict.PASS and out.findings == () and out.errors == () and out.deadlock is None
    assert set(out.tools) == {"memcheck", "racecheck", "initcheck", "synccheck"}
    assert out.report is not None and out.report.passed


def test_save_baseline_then_bench_post_bench_results_against_it(ops):
    async def script(app, pilot, seen):
        await press("B", wait_for=BenchFinished)(app, pilot, seen)
        await press("b", wait_for=BenchFinished, n=2)(app, pilot, seen)

    seen = drive(ops, script)
    saved, bench = of(seen, BenchFinished)
    assert saved.saved and not bench.saved
    assert bench.result.operator == "add_custom"
    (case,) = bench.result.cases
    assert case.baseline_time_us == pytest.approx(saved.result.cases[0].time_us)


def test_quick_tune_streams_progress_then_posts_the_tune_report(ops):
    seen = drive(ops, press("T", wait_for=TuneFinished))
    (done,) = of(seen, TuneFinished)
    progress = of(seen, TuneProgress)
    assert progress and progress[-1].event.kind in ("done", "result")
    assert done.report.best is not None and not done.report.cancelled
    assert done.report.best.time_us == min(o.time_us for o in done.report.outcomes if o.time_us is not None)


def test_export_key_posts_the_files_it_wrote(ops, tmp_path):
    async def script(app, pilot, seen):
        app.tools.export.directory = tmp_path / "exports"
        await press("e", wait_for=ExportFinished)(app, pilot, seen)

    (msg,) = of(drive(ops, script), ExportFinished)
    assert [f.split()[0].rsplit(".", 2)[-2:] for f in msg.files] == [
        ["trace", "json"],
        ["report", "json"],
        ["report", "txt"],
    ]


def test_result_messages_are_read_only(ops):
    msg = ProfileReady(ops / "add_custom.py", "report")
    with pytest.raises(dataclasses.FrozenInstanceError):
        msg.text = "something else"
    assert msg.text == "report"


def test_a_failing_devkit_call_is_shown_in_the_log_and_the_status_line(ops, monkeypatch):
    import asc_tui.devkit.present.profile as present_mod  # the profile itself is computed already

    def broken(*args, **kwargs):
        raise RuntimeError("profile module is broken")

    async def script(app, pilot, seen):
        monkeypatch.setattr(present_mod, "report_text", broken)
        await press_until_failure(pilot, seen, "p")
        text = "add_custom: profile failed: RuntimeError: profile module is broken"
        assert text in log_text(app)
        assert text in str(app.query_one("#status").render())
        monkeypatch.undo()
        await press("v", wait_for=PrecisionReady)(app, pilot, seen)  # the next tool clears it
        assert "failed" not in str(app.query_one("#status").render())

    seen = drive(ops, script)
    (worker,) = failures(seen)
    assert worker.group == "profile" and isinstance(worker.error, RuntimeError)
    assert of(seen, ProfileReady) == []


def test_a_tool_job_that_times_out_in_the_worker_process_is_shown_with_its_status(ops):
    hang = SRC.replace("def tensors(case):", "def tensors(case):\n    while True:\n        pass\n")

    async def script(app, pilot, seen):
        app.tools.process.timeout_s = lambda: 3.0
        (ops / "add_custom.py").write_text(hang)  # no watcher: only the debug run sees it
        await press_until_failure(pilot, seen, "d")
        assert "add_custom: debug timeout" in log_text(app)
        assert "add_custom: debug timeout" in str(app.query_one("#status").render())

    seen = drive(ops, script, watch=False, config=Config(worker_timeout=20))
    (worker,) = failures(seen)
    assert isinstance(worker.error, ToolFailed) and worker.error.result.status == "timeout"
    assert of(seen, DebugFinished) == []


def test_a_failed_tune_frees_the_tune_key_and_says_so_in_its_pane(ops, monkeypatch):
    from asc_tui.devkit.run.worker import RunWorker

    def lost(self, job, timeout_s=None, on_progress=None):
        raise ConnectionError("tuner process lost")

    async def script(app, pilot, seen):
        monkeypatch.setattr(RunWorker, "call", lost)
        await press_until_failure(pilot, seen, "T")
        assert not app.tools.tune.running
        assert app.query_one("#tune-pane").status_text == "tune failed"
        assert "add_custom: tune failed: ConnectionError: tuner process lost" in log_text(app)

    seen = drive(ops, script)
    assert of(seen, TuneFinished) == []
