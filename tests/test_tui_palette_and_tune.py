"""The palette names each entry once; a tune's best and its rank-1 row are the same config."""

from __future__ import annotations

import asyncio
from collections import Counter

from tuikit import SLOW, make_app, started, until

from asc_tui.devkit.tune.progress import Progress
from asc_tui.tui.commands import WorkbenchCommands


def test_the_palette_has_no_two_entries_of_the_same_name(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("ctrl+p")
            await pilot.pause(0.3)
            titles = [c.title for c in app.get_system_commands(app.screen_stack[0])]
            titles += [t for t, _, _ in WorkbenchCommands(app.screen, None)._commands()]
            dup = [t for t, n in Counter(titles).items() if n > 1]
            assert not dup, dup
            assert titles.count("Theme") == 1

    asyncio.run(go())


def test_progress_events_carry_the_tunes_rank():
    seen = []
    p = Progress([seen.append])
    p.result(object.__new__(type("O", (), {"cached": False})), None, (1.0, 0, 3))
    assert seen[-1].rank == (1.0, 0, 3)


def test_quick_tune_best_is_the_rank_one_row(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("T")
            pane = app.query_one("#tune-pane")
            await until(pilot, lambda: pane.status_text.startswith("tune done"), what="tune")
            best = app.ops[app.selected].best_params
            first = pane.table.get_row("1")
            assert first[2] == " ".join(f"{k}={v}" for k, v in sorted(best.items()))
            assert f"with {best}" in pane.status_text

    asyncio.run(go())


def test_the_tune_pane_shows_the_selected_operators_tune_not_the_last_one_started(ops):
    (ops / "add_custom.py").write_text(SLOW)

    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            tuned = app.selected
            assert tuned.name == "add_custom.py"
            pane = app.query_one("#tune-pane")
            await pilot.press("T")
            await until(pilot, lambda: pane.table.row_count >= 1, what="a first result")
            await pilot.press("n")  # another operator, while add_custom's tune runs
            assert app.selected != tuned
            status = str(pane.status.render())
            assert pane.table.row_count == 0 and "tune of add_custom running" in status
            await until(pilot, lambda: not app.tools.tune.running, what="tune end")
            await pilot.pause(0.2)
            assert pane.table.row_count == 0 and "tune" not in pane.status_text  # none of its own
            assert "add_custom" not in str(pane.status.render())
            await pilot.press("N")  # back: add_custom's tune, whole
            assert app.selected == tuned
            assert pane.status_text.startswith("tune done") and pane.table.row_count >= 1
            best = app.ops[tuned].best_params
            assert pane.table.get_row("1")[2] == " ".join(f"{k}={v}" for k, v in sorted(best.items()))

    asyncio.run(go())
