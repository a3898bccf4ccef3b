"""Typed messages from background threads (watcher, rerunner, tool workers) to the app loop.

The tools' results are `ToolMessage`s (declared next to their controllers in `tools/`):
dataclasses whose fields are set once and read-only after, each carrying the devkit's own
immutable result. A tool that fails posts nothing: its
worker raises (`ToolFailed` for a job that did not finish in the worker process) and the app's
one `Worker.StateChanged` handler shows the failure.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

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


class EngineReady(Message):
    """The worker, rerunner and watcher are up (started after the first paint)."""


@dataclass(eq=False)
class ToolMessage(Message):
    """A tool's message for the operator at `path`; `tool` names the controller that shows it.

    Subclasses are dataclasses too: their fields are assigned once, by `__init__`, and refuse a
    second assignment (Textual's own bookkeeping, the `_` slots, stays writable).
    """

    tool: ClassVar[str]  # set by the class keyword: `class DebugFinished(ToolMessage, tool="debug")`
    path: Path

    def __init_subclass__(cls, tool: str | None = None, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if tool is not None:
            cls.tool = tool

    def __setattr__(self, name: str, value) -> None:
        if not name.startswith("_") and name in self.__dict__:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super().__setattr__(name, value)


class ToolFailed(Exception):
    """A tool job that did not finish in the worker process (raised, timed out, crashed,
    cancelled): raised in the tool's thread so the app's worker-error handler shows it."""

    def __init__(self, tool: str, path: Path, result: WorkResult):
        super().__init__(f"{path.stem}: {tool} {result.status}")
        self.tool, self.path, self.result = tool, path, result
