"""`d`: one run under the sanitizer tools plus the precision check (and the deadlock check for
multi-rank operators), in the tool process: the operator's code may crash or hang."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...devkit.present.report_lines import (
    VERDICT_LEVEL,
    Line,
    error_lines,
    origin_line,
    precision_line,
    verify_lines,
)
from ..messages import ToolMessage
from ..state import Status
from ..widgets.log_pane import Level
from .base import ProcessTool

if TYPE_CHECKING:
    from ...devkit.jobs import DebugOutcome
    from ..state import OperatorState


@dataclass(eq=False)
class DebugFinished(ToolMessage, tool="debug"):
    """A run under the sanitizer tools (and the deadlock check for multi-rank operators)."""

    outcome: DebugOutcome


class DebugController(ProcessTool):
    name = "debug"

    def launch(self, st: OperatorState) -> None:
        from ...devkit.jobs import debug_run  # (after the first paint: it loads the emulator)

        req, path = self.app.runs.request(st.path), st.path
        self.app.log_line(
            f"{path.stem}: sanitizer run (memcheck, racecheck, initcheck, synccheck)…", Level.DIM
        )
        self.switch("log")
        self.run(
            path,
            lambda: DebugFinished(path, self.process.call("debug", path, debug_run, req)),
        )

    def show(self, msg: DebugFinished) -> None:
        app, d, name = self.app, msg.outcome, msg.path.stem
        for line in d.findings:
            app.log_line(f"{name}: {line}", Level.ERROR)
        lines = [ln for e in d.errors for ln in error_lines(e)]
        dl = d.deadlock
        if dl is not None:
            for line in dl.text.splitlines():
                app.log_line(
                    f"{name}: deadlock check ({dl.ranks} ranks): {line}", Level.OK if dl.ok else Level.ERROR
                )
        deadlock = dl is not None and not dl.ok
        if not (d.findings or d.errors or deadlock):
            lines.append(Line(f"sanitizer clean ({', '.join(d.tools)})", Level.OK))
        else:
            lines.append(
                Line(
                    f"debug found {len(d.findings)} issue(s), {len(d.errors)} other error(s)"
                    + (", a deadlock" if deadlock else ""),
                    Level.ERROR,
                )
            )
        if d.report is not None and d.report.precision is not None:
            lines.append(precision_line(d.report.precision))
        if d.report is not None and d.report.sample:  # (a sample's own check, after the precision line)
            lines += verify_lines(d.report.sample)
        if d.nonfinite is not None:
            lines.append(origin_line(d.nonfinite))
        lines.append(Line(f"debug verdict {d.verdict}", VERDICT_LEVEL[d.verdict]))
        for pane in app.log_panes():
            pane.add_lines(name, lines)
        st = app.ops.get(msg.path)
        if st is not None and (d.findings or deadlock):
            st.status = Status.SANITIZER
            app.pane("#sidebar").set_status(msg.path, st.status, st.stale)
            app.update_status()
