"""At 60×15 every tab header and every footer hint is whole, and numbers are never cut."""

from __future__ import annotations

import asyncio

from textual.widgets._footer import FooterKey
from tuikit import make_app, started

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
