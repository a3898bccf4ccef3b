"""Helpers for the workbench tests (tests/test_tui_*.py): build the app, wait on a Pilot, read panes."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from asc_tui.config import Config
from asc_tui.tui.app import Workbench

DATA = Path(__file__).parent / "tui_data"
SRC = (DATA / "add_custom.py").read_text()
# add_custom with a 50 ms pause per tile: a tune that runs long enough to cancel
SLOW = SRC.replace(
    "    def Process(self):", "    def Process(self):\n        import time\n        time.sleep(0.05)\n"
)


def make_app(ops, **kw) -> Workbench:
    kw.setdefault("config", Config(worker_timeout=20))
    return Workbench(str(ops), clock=lambda: "00:00:00", show_host_times=False, **kw)


async def until(pilot, cond, timeout=30.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def log_text(app) -> str:
    return "\n".join(app.query_one("#log-pane").lines_text)


def save_atomically(path: Path, text: str) -> None:
    """Replace `path` in one rename, as editors do (the watcher never sees half a file)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def copy_bug(ops: Path, name: str) -> None:
    """Put the bundled buggy operator `name` (operators/bugs/) into the watched directory."""
    shutil.copy(Path(__file__).parents[1] / "operators" / "bugs" / name, ops / name)


async def started(pilot, app, n=2):
    await until(pilot, lambda: app.results_seen >= n, what="first results")
