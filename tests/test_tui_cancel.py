"""The cancel key leaves nothing behind: no stuck RUNNING, no tune timer counting on."""

from __future__ import annotations

import asyncio

import pytest
from tuikit import SLOW, SRC, log_text, make_app, started, until

from asc_tui.config import Config
from asc_tui.tui.state import Status

LOOP = SRC.replace("def tensors(case):", "def tensors(case):\n    while True:\n        pass\n")


def test_cancelling_a_hung_run_restores_the_header_and_the_tree_mark(ops):
    async def go():
        app = make_app(ops, config=Config(worker_timeout=60))
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.pause(0.2)
            target = (ops / "add_custom.py").resolve()
            target.write_text(LOOP)
            await until(pilot, lambda: app.ops[target].status is Status.RUNNING, what="running")
            assert "RUNNING" in str(app.query_one("#status").render())
            await pilot.press("x")
            tree = app.query_one("#sidebar")
            await until(pilot, lambda: app.ops[target].status is not Status.RUNNING, what="settled")
            assert "cancelled: run" in log_text(app)
            assert app.ops[target].status is Status.PASS  # the last result stands, not "~"
            assert tree.status(target) == Status.PASS
            header = str(app.query_one("#status").render())
            assert "RUNNING" not in header and "running add_custom" not in header
            assert "add_custom: run cancelled" in log_text(app)

    asyncio.run(go())


def test_after_a_cancelled_full_tune_the_eta_stops(ops):
    (ops / "add_custom.py").write_text(SLOW)

    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("t")
            pane = app.query_one("#tune-pane")
            await until(pilot, lambda: (pane.bar.progress or 0) >= 3, what="tune progress")
            await pilot.press("x")
            await until(pilot, lambda: not app.tools.tune.running, what="tune end")
            eta = pane.bar.query_one("#eta")

            def shown():
                return str(eta.render()) if eta.display and eta.region.area else None

            before = shown()
            await pilot.pause(2.5)
            assert shown() == before
            assert not pane.eta_shown and pane.status_text.startswith("tune cancelled")

    asyncio.run(go())


@pytest.mark.parametrize("key", ["x"])
def test_cancel_with_nothing_running_says_so(ops, key):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await until(pilot, lambda: app.rerunner.idle(), what="idle")
            await pilot.press(key)
            assert "nothing to cancel" in log_text(app)

    asyncio.run(go())
