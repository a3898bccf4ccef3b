"""`v`: per-output precision figures (`devkit.precision`) of the selected operator's newest run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...devkit.present.report_lines import output_lines, overwrite_lines
from ..messages import ToolMessage
from ..widgets.log_pane import Level
from .base import ToolController

if TYPE_CHECKING:
    from ...devkit.precision import PrecisionReport
    from ..state import OperatorState


@dataclass(eq=False)
class PrecisionReady(ToolMessage, tool="precision"):
    """Per-output precision figures of the operator's newest run."""

    report: PrecisionReport


class PrecisionController(ToolController):
    name = "precision"

    def launch(self, st: OperatorState) -> None:
        self.switch("log")
        rep = st.last.report if st.last else None
        if rep is None or rep.precision is None:
            self.app.log_line(
                f"{st.path.stem}: no precision result (the run failed or is timing-only); press r", Level.WARN
            )
            return
        path, report = st.path, rep.precision
        self.run(path, lambda: PrecisionReady(path, report))

    def show(self, msg: PrecisionReady) -> None:
        lines = [ln for o in msg.report.outputs for ln in output_lines(o)]
        lines += overwrite_lines(msg.report)
        for pane in self.app.log_panes():
            pane.add_lines(msg.path.stem, lines)
