"""Build & emulation log: timestamped lines, one per stage, errors with file:line and snippet."""

from __future__ import annotations

import enum
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import RichLog

if TYPE_CHECKING:
    from ...devkit.run.worker import WorkResult


class Level(enum.StrEnum):
    """What a log line is: its colour (the words, not colour alone, carry the meaning)."""

    INFO = "info"
    OK = "ok"
    WARN = "warn"
    ERROR = "error"
    DIM = "dim"  # progress chatter
    KERNEL = "kernel"  # the operator's own printf output


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
        """One line per stage with its own host time, then errors, warnings, kernel output."""
        rep = result.report
        if rep is not None:
            for s in rep.stages:
                took = f" {s.seconds * 1000:.1f} ms" if show_host_times else ""
                detail = s.detail.removeprefix(f"{rep.operator} ")
                self.add(f"{name}: {s.name}{took}  {detail}", Level.OK if s.ok else Level.ERROR)
            em = rep.emulation
            if em is not None:
                for w in em.warnings:
                    self.add(
                        f"  warning {os.path.basename(w.file or '')}:{w.line}: {w.message} (x{w.count})",
                        Level.WARN,
                    )
                for entry in em.log[:200]:
                    self.add("  " + entry.format(), Level.KERNEL)
                if len(em.log) > 200:
                    self.add(f"  ... {len(em.log) - 200} more kernel log lines", Level.DIM)
            if rep.precision is not None:
                p = rep.precision.to_dict()
                self.add(
                    f"{name}: precision {p['verdict']}: max abs err "
                    f"{p['max_abs_error']:.3g}, cosine {p['cosine_similarity']:.6f}",
                    Level.OK if p["verdict"] == "PASS" else Level.ERROR,
                )
                for note in rep.precision.overwritten:
                    self.add(f"{name}: {note.message}", Level.ERROR)
        for e in result.errors:
            self.add_error(name, e)
        if result.status in ("timeout", "crashed", "raised") and rep is None and not result.errors:
            self.add(f"{name}: {result.status}", Level.ERROR)

    def add_error(self, name: str, e) -> None:
        loc = e.location()
        self.add(f"{name}: {e.kind} error: {loc + ': ' if loc else ''}{e.message}", Level.ERROR)
        if e.snippet:
            self.add(f"    {e.line} | {e.snippet}", Level.ERROR)
        if e.hint:
            self.add(f"    hint: {e.hint}", Level.DIM)
