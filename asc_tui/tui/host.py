"""What the tool controllers (`tui/tools/`) use of the workbench: the `WorkbenchHost` protocol.

The controllers depend on this, not on `app.Workbench`, so the type-only import circle app →
tools → app is gone and a controller can be driven by a small fake host in a test.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.message import Message
    from textual.worker import Worker

    from ..config import Config
    from .runs import RunResults
    from .state import OperatorState
    from .widgets.log_pane import Level, LogPane


class WorkbenchHost(Protocol):
    """The app as a controller sees it: the session, its panes, its log and its workers."""

    config: Config
    chip: str | None
    ops: dict[Path, OperatorState]
    selected: Path | None
    runs: RunResults
    watch_enabled: bool

    @property
    def workbench_screen(self) -> Any: ...  # the workbench's own screen, under any modal

    @property
    def size(self) -> Any: ...  # the terminal size (width, height)

    def pane(self, selector, expect_type=None) -> Any: ...

    def log_line(self, text: str, level: Level = ...) -> None: ...

    def log_panes(self) -> list[LogPane]: ...

    def notify(
        self, message: str, *, title: str = "", severity: str = "information", timeout=None
    ) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def submit(self, paths, front: bool = True) -> bool: ...

    def update_status(self) -> None: ...

    def clear_failure(self) -> None: ...

    def run_in_thread(
        self, work: Callable[[], None], name: str, group: str, exclusive: bool = False
    ) -> Worker: ...
