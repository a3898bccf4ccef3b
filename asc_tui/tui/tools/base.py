"""A tool controller: its key starts it, a thread worker makes the devkit call and posts one
typed `ToolMessage`, and `show()` applies that message on the UI loop.

Failures are not handled here. The worker raises (`ToolFailed` for a job the worker process did
not finish) and the app's one `Worker.StateChanged` handler shows it, then calls `failed()` so
the controller can undo what `start()` set up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.widgets import TabbedContent

from ..messages import ToolFailed, ToolMessage

if TYPE_CHECKING:
    from ...devkit.run.worker import RunWorker
    from ..host import WorkbenchHost
    from ..state import OperatorState


class ToolController:
    name: ClassVar[str]  # the worker group, the word in log lines and `action_tool(name)`
    app: WorkbenchHost

    def __init__(self, app: WorkbenchHost):
        self.app = app

    def start(self, *options) -> None:
        """The tool's key: `launch` on the selected operator (a notice if none is selected)."""
        st = self.selected()
        if st is not None:
            self.launch(st, *options)

    def launch(self, st: OperatorState, *options) -> None:
        raise NotImplementedError

    def show(self, msg: ToolMessage) -> None:
        raise NotImplementedError

    def failed(self, error: BaseException) -> None:
        """The worker raised (already shown by the app); undo what `start()` set up."""

    def selected(self) -> OperatorState | None:
        if self.app.selected is None:
            self.app.notify("no operator selected", severity="warning")
            return None
        return self.app.ops[self.app.selected]

    def switch(self, tab: str) -> None:
        """Bring a tab forward (the log has its own pane on wide screens)."""
        if tab == "log" and self.app.workbench_screen.has_class("-wide"):
            return
        self.app.pane(TabbedContent).active = tab

    def run(self, path: Path, work: Callable[[], ToolMessage]) -> None:
        """Run `work` (the devkit call for the operator at `path`) in a thread worker and post the
        message it returns; the worker is named after the operator and the tool."""
        self.app.clear_failure()

        def body() -> None:
            self.app.post_message(work())

        self.app.run_in_thread(body, f"{path.stem}: {self.name}", self.name, exclusive=True)


class ProcessTool(ToolController):
    """A tool whose job runs user code: in the `ToolProcess` it shares with the others."""

    process: ToolProcess

    def __init__(self, app: WorkbenchHost, process: ToolProcess):
        super().__init__(app)
        self.process = process


class ToolProcess:
    """The worker process that runs debug and bench jobs (user code): started on first use, so
    hot reload's own worker never waits for a tool."""

    worker: RunWorker | None
    timeout_s: Callable[[], float]  # read when the process starts (the config may reload)
    memory_mb: Callable[[], int | None]  # its address-space cap, read then too
    closed: bool  # the app is closing: no process is started any more

    def __init__(self, timeout_s: Callable[[], float], memory_mb: Callable[[], int | None]):
        self.timeout_s, self.memory_mb = timeout_s, memory_mb
        self.worker = None
        self.closed = False
        self._lock = threading.Lock()

    def call(self, tool: str, path: Path, target, *args):
        """`target(*args)` in the process; its return value, or `ToolFailed` if it did not finish."""
        from ...devkit.run.worker import Call, RunWorker

        with self._lock:
            if self.closed:
                raise RuntimeError("the workbench is closing")
            if self.worker is None:
                self.worker = RunWorker(timeout_s=self.timeout_s(), memory_mb=self.memory_mb())
            worker = self.worker
        res = worker.call(Call(target, args, label=f"{path.stem} ({tool})"))
        if not res.ok:
            raise ToolFailed(tool, path, res)
        return res.report

    def cancel(self) -> bool:
        if self.worker is not None and self.worker.busy:
            self.worker.cancel()
            return True
        return False

    def close(self) -> None:
        with self._lock:
            self.closed = True
            if self.worker is not None:
                self.worker.close()
