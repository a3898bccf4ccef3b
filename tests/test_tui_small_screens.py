"""At 60×15 every tab header and every footer hint is whole, and numbers are never cut."""

from __future__ import annotations

import asyncio

from textual.widgets._footer import FooterKey
from tuikit import SRC, log_text, make_app, started, until

from asc_tui.tui.widgets.profile_pane import ProfilePane


def test_at_60x15_every_tab_and_footer_hint_fits_and_the_tune_tab_is_clickable(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(60, 15)) as pilot:
            await started(pilot, app)
            tabs = app.query_one("#tabs")
            strip = tabs.query_one("ContentTabs")
            for tab in strip.query("ContentTab"):
                assert tab.region.right <= strip.region.right, tab.label
            keys = list(app.query(FooterKey))
            assert keys and all(k.region.right <= 60 for k in keys)
            assert {k.key for k in keys} >= {"r", "x", "q"}
            tune_tab = tabs.get_tab("tune")
            await pilot.click(tune_tab)
            assert tabs.active == "tune"
            status = str(app.query_one("#status").render())
            assert "PASS" in status and "µs" in status  # wrapped, not cut

    asyncio.run(go())


def test_profile_names_shorten_instead_of_being_cut(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(80, 24)) as pilot:
            await started(pilot, app)
            await pilot.press("2")
            text = app.query_one(ProfilePane).build(50).plain
            assert "…" not in text and "HBM read" in text and "Vector" in text

    asyncio.run(go())


def test_a_resize_under_the_help_screen_lays_out_the_workbench_below_it(ops):
    """The layout classes go on the workbench's screen, not on the modal on top: after a
    resize to wide with help open, closing help shows the bottom log beside the tabs."""

    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("question_mark")
            assert app.screen is not app.workbench_screen
            await pilot.resize_terminal(160, 45)
            await pilot.pause(0.2)
            await pilot.press("escape")
            await pilot.pause(0.2)
            assert app.screen is app.workbench_screen and app.screen.has_class("-wide")
            assert app.query_one("#bottom-log").display and app.query_one("#bottom-log").region.width > 0

    asyncio.run(go())


def _plain(static) -> str:
    r = static.render()
    return r.plain if hasattr(r, "plain") else str(r)


def test_the_source_tabs_cycles_column_follows_a_resize(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(160, 40)) as pilot:
            await started(pilot, app)
            await pilot.press("4")
            view = app.query_one("#source-view")
            assert "cycles over all blocks, share" in _plain(view.body)
            await pilot.resize_terminal(80, 24)
            await pilot.pause(0.3)
            text = _plain(view.body)
            assert "(share)" in text and "cycles over all blocks" not in text
            await pilot.resize_terminal(160, 40)
            await pilot.pause(0.3)
            assert "cycles over all blocks, share" in _plain(view.body)

    asyncio.run(go())


def _visible(widget) -> list[str]:
    """The widget's lines as drawn in its region (what scrolls sideways out of it is not there)."""
    from textual.geometry import Region

    size = widget.size
    return [s.text for s in widget.render_lines(Region(0, 0, size.width, size.height))]


def test_at_80x24_the_bench_verdict_and_vs_base_stay_in_sight(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(80, 24)) as pilot:
            await started(pilot, app)
            await pilot.press("B")
            await until(pilot, lambda: "bench add_custom" in log_text(app), what="baseline")
            await pilot.press("b")
            table = app.query_one("#bench-table")
            key = "add_custom/default/ascend910b"
            await until(pilot, lambda: table.row(key).verdict not in ("", "saved"), what="bench verdict")
            await pilot.press("5")
            await pilot.pause(0.3)
            text = "\n".join(_visible(table))
            verdict = table.row(key).verdict
            assert "verdict" in text and "vs base" in text, text
            assert verdict in text and "100.0%" in text, text
            assert "add_custom" in text and "Δ prev" in text
            await pilot.resize_terminal(120, 30)  # wide again: one line a row
            await pilot.pause(0.3)
            assert table.get_cell(key, "vs base") == "100.0%" and verdict in "\n".join(_visible(table))

    asyncio.run(go())


#: add_custom with parameter names too long for one line of the Tune table at 80 columns
LONG_NAMES = SRC.replace("tile_length", "elements_per_tile_in_ub").replace(
    "buffer_num", "queue_depth_for_double_buffer"
)


def test_at_80x24_every_tuned_parameter_stays_in_sight(one_op):
    (one_op / "add_custom.py").write_text(LONG_NAMES)

    async def go():
        app = make_app(one_op)
        async with app.run_test(size=(80, 24)) as pilot:
            await started(pilot, app, n=1)
            await pilot.press("T")
            pane = app.query_one("#tune-pane")
            await until(pilot, lambda: pane.status_text.startswith("tune done"), what="tune", timeout=90)
            await pilot.pause(0.3)
            lines = _visible(pane.table)
            best = app.ops[app.selected].best_params
            assert set(best) == {
                "elements_per_tile_in_ub",
                "queue_depth_for_double_buffer",
                "block_dim",
            }
            first = "\n".join(lines[1:4])  # rank 1's row: the parameters wrap, none is cut
            for k, v in best.items():
                assert f"{k}={v}" in first, lines
            assert pane.table.virtual_size.width <= pane.table.size.width  # nothing off to the side
            await pilot.resize_terminal(160, 40)  # wide: one line a row again
            await pilot.pause(0.5)
            assert pane.table.rows["1"].height == 1
            assert pane.table.get_row("1")[2] == " ".join(f"{k}={v}" for k, v in sorted(best.items()))

    asyncio.run(go())
