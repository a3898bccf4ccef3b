"""Typed messages from background threads (watcher, rerunner, tool workers) to the app loop.

Each is a `FrozenMessage`: a dataclass whose fields are set once and read-only after, carrying
the devkit's own immutable results. The tools' results are `ToolMessage`s, declared next to
their controllers in `tools/`. A tool that fails posts nothing: its worker raises (`ToolFailed`
for a job that did not finish in the worker process) and the app's one `Worker.StateChanged`
handler shows the failure.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.message import Message

if TYPE_CHECKING:  # the app paints before the emulator stack is imported
    from ..devkit.run.runner import RunRequest
    from ..devkit.run.watch import ChangeSet
    from ..devkit.run.worker import WorkResult


class FrozenMessage(Message):
    """A dataclass message whose fields are assigned once, by `__init__`, and refuse a second
    assignment (Textual's own bookkeeping, the `_` slots, stays writable)."""

    def __setattr__(self, name: str, value) -> None:
        if not name.startswith("_") and name in self.__dict__:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super().__setattr__(name, value)


@dataclass(eq=False)
class RunStarted(FrozenMessage):
    """The rerunner sent `request` to the worker process."""

    path: Path
    request: RunRequest


@dataclass(eq=False)
class RunCancelled(FrozenMessage):
    """The run announced by RunStarted ended without a result (cancel key, newer save)."""

    path: Path


@dataclass(eq=False)
class RunFinished(FrozenMessage):
    path: Path
    result: WorkResult  # ok, or how the run failed (raised, timeout, crashed, cancelled)


@dataclass(eq=False)
class FilesChanged(FrozenMessage):
    changes: ChangeSet  # one debounced batch of saves


class EngineReady(Message):
    """The worker, rerunner and watcher are up (started after the first paint)."""


@dataclass(eq=False)
class ToolMessage(FrozenMessage):
    """A tool's message for the operator at `path`; `tool` names the controller that shows it.
    Subclasses are dataclasses too, read-only like every `FrozenMessage`."""

    tool: ClassVar[str]  # set by the class keyword: `class DebugFinished(ToolMessage, tool="debug")`
    path: Path

    def __init_subclass__(cls, tool: str | None = None, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if tool is not None:
            cls.tool = tool


class ToolFailed(Exception):
    """A tool job that did not finish in the worker process (raised, timed out, crashed,
    cancelled): raised in the tool's thread so the app's worker-error handler shows it."""

    def __init__(self, tool: str, path: Path, result: WorkResult):
        super().__init__(f"{path.stem}: {tool} {result.status}")
        self.tool, self.path, self.result = tool, path, result
