"""`e`: export the selected operator's newest good run: a Chrome trace (`devkit.trace`), the
profile as JSON (`devkit.profile`) and the profile report as text."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..messages import ToolMessage
from ..widgets.log_pane import Level
from .base import ToolController
from .profile import profile_report_text

if TYPE_CHECKING:
    from ...devkit.run.runner import RunReport
    from ..host import WorkbenchHost
    from ..state import OperatorState


@dataclass(eq=False)
class ExportFinished(ToolMessage, tool="export"):
    """Files written by an export, each as `path (what)`."""

    files: tuple[str, ...]


class ExportController(ToolController):
    name = "export"
    directory: Path | None  # None: ./.asc-tui/exports

    def __init__(self, app: WorkbenchHost):
        super().__init__(app)
        self.directory = None

    def launch(self, st: OperatorState) -> None:
        if st.good is None or st.good.emulation is None:
            self.app.notify("nothing to export yet", severity="warning")
            return
        rep, path = st.good, st.path
        out = self.directory or (Path.cwd() / ".asc-tui" / "exports")
        base = out / f"{rep.operator}-{rep.case}-{time.strftime('%Y%m%d-%H%M%S')}"
        known = self.app.runs.profile_of(rep)  # the panes' profile, when computed already
        self.run(path, lambda: ExportFinished(path, write_exports(rep, base, known)))

    def show(self, msg: ExportFinished) -> None:
        for f in msg.files:
            self.app.log_line(f"exported {f}", Level.OK)
        self.app.notify("exported: " + ", ".join(Path(f.split()[0]).name for f in msg.files))


def write_exports(rep: RunReport, base: Path, known=None) -> tuple[str, ...]:
    """`base`.trace.json, .report.json and .report.txt; each returned as `path (what)`.
    `known`: the run's profile if already computed (else computed here, once)."""
    from ...devkit.profile.profiler import profile
    from ...devkit.profile.trace import write_trace

    base.parent.mkdir(parents=True, exist_ok=True)
    info = write_trace(rep.emulation, f"{base}.trace.json")
    with open(f"{base}.report.json", "w", encoding="utf-8") as fh:
        p = known or profile(rep)
        json.dump(p.to_dict(), fh, indent=1, default=str)
    with open(f"{base}.report.txt", "w", encoding="utf-8") as fh:
        fh.write(profile_report_text(rep, 100, p) + "\n")
    return (f"{base}.trace.json ({info.events} events)", f"{base}.report.json", f"{base}.report.txt")
