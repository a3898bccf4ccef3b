"""The workbench's regression mark: the one devkit rule, and only between like runs."""

from __future__ import annotations

import asyncio
import dataclasses

from tuikit import log_text, make_app, started, until

from asc_tui.devkit.bench import history
from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.tui.state import Status


def _store(report, time_factor: float = 1.0) -> None:
    rec = history.record_from_report(report, "run")
    rec = dataclasses.replace(rec, time_us=rec.time_us * time_factor)
    store = history.open_history()
    history.append(store, rec)
    store.close()


def test_a_stored_run_with_other_params_is_no_reference(one_op):
    """`T`, `a` (faster params for that session), quit, restart: no ▼ against the tuned run."""
    op = one_op / "add_custom.py"
    _store(run(RunRequest(str(op), params={"block_dim": 48})))  # the session's tuned run

    async def go():
        app = make_app(one_op)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app, n=1)
            await pilot.pause(1.0)  # the stored history has been read
            target = op.resolve()
            assert app.ops[target].status is Status.PASS
            assert app.query_one("#sidebar").status(target) == Status.PASS
            assert "REGRESSION" not in log_text(app)
            assert "PASS" in str(app.query_one("#status").render())
            row = app.query_one("#bench-table").row("add_custom/default/ascend910b")
            assert row.previous is None  # nothing like it stored yet: no Δ

    asyncio.run(go())


def test_a_slower_run_than_the_stored_one_with_the_same_params_marks_tree_and_header(one_op):
    op = one_op / "add_custom.py"
    _store(run(RunRequest(str(op))), time_factor=1 / 1.062)  # the same params, 6.2% faster

    async def go():
        app = make_app(one_op)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app, n=1)
            target = op.resolve()
            await until(pilot, lambda: app.ops[target].status is Status.REGRESSION, what="▼")
            assert app.query_one("#sidebar").status(target) == Status.REGRESSION
            assert "REGRESSION" in str(app.query_one("#status").render())
            assert "REGRESSION +6.2% slower than the stored run with the same params" in log_text(app)
            table = app.query_one("#bench-table")
            assert table.get_cell("add_custom/default/ascend910b", "Δ prev").startswith("+6.2%")

    asyncio.run(go())


def test_previous_run_with_params_skips_runs_with_other_params(one_op):
    op = str(one_op / "add_custom.py")
    _store(run(RunRequest(op)))
    _store(run(RunRequest(op, params={"block_dim": 48})))
    store = history.open_history()
    default = run(RunRequest(op)).params
    key = ("add_custom", "default", "ascend910b")
    assert history.previous_run(store, *key).params["block_dim"] == 48
    assert history.previous_run(store, *key, params=default).params == default
    assert history.previous_run(store, *key, params={"x": 1}) is None


def test_bench_key_does_not_mark_a_regression_against_a_run_with_other_params(one_op):
    async def go():
        app = make_app(one_op)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app, n=1)
            await pilot.pause(1.0)  # the first run is in the history
            target = (one_op / "add_custom.py").resolve()
            app.ops[target].params = {"block_dim": 1}  # what `a` does with a (bad) tuned config
            await pilot.press("b")
            await until(pilot, lambda: "bench add_custom [default]" in log_text(app), what="bench")
            row = app.query_one("#bench-table").row("add_custom/default/ascend910b")
            assert "REGRESSION" not in row.verdict
            assert "REGRESSION" not in log_text(app)
            assert app.ops[target].status is Status.PASS

    asyncio.run(go())
