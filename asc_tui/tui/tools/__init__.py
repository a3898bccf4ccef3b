"""The workbench's tools, one small controller each: profile, precision, debug, bench, tune,
export. A key calls `WorkbenchHost.action_tool(name, command)`; the controller makes its devkit
call in a thread worker and posts a typed `ToolMessage`, which the app hands back to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages import ToolMessage
from .base import ToolController, ToolProcess
from .bench import BenchController, BenchFinished
from .debug import DebugController, DebugFinished
from .export import ExportController, ExportFinished
from .precision import PrecisionController, PrecisionReady
from .profile import ProfileController, ProfileReady
from .tune import TuneController, TuneFinished, TuneProgress

__all__ = [
    "BenchFinished",
    "DebugFinished",
    "ExportFinished",
    "PrecisionReady",
    "ProfileReady",
    "Tools",
    "TuneFinished",
    "TuneProgress",
]

if TYPE_CHECKING:
    from ..host import WorkbenchHost


class Tools:
    """Every controller of one workbench, by name; the tool process debug and bench share."""

    process: ToolProcess
    profile: ProfileController
    precision: PrecisionController
    debug: DebugController
    bench: BenchController
    tune: TuneController
    export: ExportController

    def __init__(self, app: WorkbenchHost):
        self.process = ToolProcess(
            lambda: max(app.config.worker_timeout, 60.0), lambda: app.config.worker_memory_mb
        )
        self.profile = ProfileController(app)
        self.precision = PrecisionController(app)
        self.debug = DebugController(app, self.process)
        self.bench = BenchController(app, self.process)
        self.tune = TuneController(app)
        self.export = ExportController(app)
        self.by_name: dict[str, ToolController] = {
            c.name: c for c in (self.profile, self.precision, self.debug, self.bench, self.tune, self.export)
        }

    def __getitem__(self, name: str) -> ToolController:
        return self.by_name[name]

    def show(self, msg: ToolMessage) -> None:
        self.by_name[msg.tool].show(msg)

    def failed(self, group: str | None, error: BaseException) -> None:
        """A worker of `group` raised; if it was a tool's, let the tool undo its start."""
        if group in self.by_name:
            self.by_name[group].failed(error)

    def close(self) -> None:
        self.process.close()
        self.tune.close()
