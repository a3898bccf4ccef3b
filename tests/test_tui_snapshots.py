"""Snapshots of the main screen at 80×24 and 160×48 (pytest-textual-snapshot).

The environment is pinned: a frozen copy of add_custom, a fixed log clock, no host times, no
file watching; emulated figures are deterministic.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from asc_tui.config import Config
from asc_tui.tui.app import Workbench

DATA = Path(__file__).parent / "tui_data"


def pinned_app() -> Workbench:
    return Workbench(
        str(DATA), config=Config(), theme="dark", watch=False, clock=lambda: "00:00:00", show_host_times=False
    )


async def settled(pilot) -> None:
    deadline = time.monotonic() + 30
    while pilot.app.results_seen < 1 and time.monotonic() < deadline:
        await pilot.pause(0.05)
    await pilot.pause(0.2)


def test_main_screen_80x24(snap_compare):
    assert snap_compare(pinned_app(), terminal_size=(80, 24), run_before=settled)


def test_main_screen_160x48(snap_compare):
    assert snap_compare(pinned_app(), terminal_size=(160, 48), run_before=settled)


def test_timeline_tab_80x24(snap_compare):
    assert snap_compare(pinned_app(), terminal_size=(80, 24), press=["3"], run_before=settled)


TABS = {"log": "1", "profile": "2", "timeline": "3", "source": "4", "bench": "5", "tune": "6"}


@pytest.mark.parametrize("size", [(80, 24), (60, 15)], ids=["80x24", "60x15"])
@pytest.mark.parametrize("tab", list(TABS))
def test_every_tab_reads_at_small_sizes(snap_compare, tab, size):
    assert snap_compare(pinned_app(), terminal_size=size, press=[TABS[tab]], run_before=settled)


def test_bench_diff_screen_80x24(snap_compare):
    from asc_tui.devkit.bench.figures import BenchRequest, bench

    bench(BenchRequest(str(DATA / "add_custom.py"), save_baseline="baseline"))

    async def diff_open(pilot) -> None:
        await settled(pilot)
        await pilot.press("D")
        deadline = time.monotonic() + 30
        while type(pilot.app.screen).__name__ != "BenchDiffScreen" and time.monotonic() < deadline:
            await pilot.pause(0.05)
        await pilot.pause(0.2)

    assert snap_compare(pinned_app(), terminal_size=(80, 24), run_before=diff_open)
