"""Build & emulation log: timestamped lines, one per stage, errors with file:line and snippet.

The lines of a run are `devkit.present.report_lines`'s, the ones `asc-tui run` prints; `Level`
is the presenter's, and this pane gives each level its style.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import RichLog

from ...devkit.present.report_lines import Level, Line, error_lines, work_lines

if TYPE_CHECKING:
    from ...devkit.run.worker import WorkResult


LEVEL_STYLE: dict[Level, str] = {
    Level.INFO: "",
    Level.OK: "green",
    Level.WARN: "yellow",
    Level.ERROR: "bold red",
    Level.DIM: "dim",
    Level.KERNEL: "cyan",
}


#: Lines kept for re-wrapping when the pane's width changes (RichLog keeps rendered strips).
REWRAP_LINES = 2000


class LogPane(RichLog):
    """Appends lines (old ones are never redrawn while the width stays); a width change re-wraps
    the last `REWRAP_LINES`. `clock` (→ "HH:MM:SS") makes the stamps testable."""

    def __init__(self, clock: Callable[[], str] | None = None, **kwargs):
        super().__init__(max_lines=5000, wrap=True, markup=False, highlight=False, min_width=20, **kwargs)
        self.clock = clock or (lambda: time.strftime("%H:%M:%S"))
        self.lines_text: list[str] = []  # plain text of every line (tests, export)
        self._texts: list[Text] = []
        self._known_width = 0
        self._wrapped_at = 0

    def add(self, text: str, level: Level = Level.INFO) -> None:
        stamp = self.clock()
        line = Text(f"{stamp} ", style="dim")
        line.append(text, style=LEVEL_STYLE[level])
        self.lines_text.append(f"{stamp} {text}")
        self._texts.append(line)
        del self._texts[:-REWRAP_LINES]
        self._wrapped_at = self._render_width()
        self.write(line, width=self._wrapped_at)

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width
        if width > 0 and self._wrapped_at and width != self._wrapped_at:
            self._known_width = self._wrapped_at = width
            self.clear()
            for line in self._texts:
                self.write(line, width=width)

    def _render_width(self) -> int:
        """Wrap at the pane's width; while hidden (a background tab) use the last one known."""
        w = self.scrollable_content_region.width
        if w > 0:
            self._known_width = w
        return self._known_width or max(40, self.app.size.width - 30)

    def add_result(self, name: str, result: WorkResult, show_host_times: bool = True) -> None:
        """The run's lines (`devkit.present.report_lines`, what `asc-tui run` prints too)."""
        self.add_lines(name, work_lines(result, show_host_times))

    def add_error(self, name: str, e) -> None:
        self.add_lines(name, error_lines(e))

    def add_lines(self, name: str, lines: Iterable[Line]) -> None:
        """Presenter lines: those about the run carry the operator's name, details are indented."""
        for ln in lines:
            self.add(f"{name}: {ln.text}" if ln.indent == 0 else "  " * ln.indent + ln.text, ln.level)
