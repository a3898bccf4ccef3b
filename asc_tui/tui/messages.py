"""Typed messages from background threads (watcher, rerunner, tools) to the app loop."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # the app paints before the emulator stack is imported
    from ..devkit.runner import RunRequest
    from ..devkit.watch import ChangeSet
    from ..devkit.worker import WorkResult


class RunStarted(Message):
    def __init__(self, path: Path, request: RunRequest):
        super().__init__()
        self.path, self.request = path, request


class RunFinished(Message):
    def __init__(self, path: Path, result: WorkResult):
        super().__init__()
        self.path, self.result = path, result


class RunCancelled(Message):
    """The run announced by RunStarted ended without a result (cancel key, newer save)."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = path


class FilesChanged(Message):
    def __init__(self, changes: ChangeSet):
        super().__init__()
        self.changes = changes


class ToolFinished(Message):
    """A debug/bench/tune/export job finished; `value` is its devkit result (or None)."""

    def __init__(
        self, tool: str, path: Path, result: WorkResult | None, value=None, error: str | None = None
    ):
        super().__init__()
        self.tool, self.path, self.result, self.value, self.error = (tool, path, result, value, error)


class EngineReady(Message):
    """The worker, rerunner and watcher are up (started after the first paint)."""


class TuneProgress(Message):
    def __init__(self, event):
        super().__init__()
        self.event = event
