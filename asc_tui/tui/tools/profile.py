"""`p`: the profile report of the selected operator's newest good run, into the log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..messages import ToolMessage
from ..widgets.log_pane import Level
from .base import ToolController

if TYPE_CHECKING:
    from ..state import OperatorState


@dataclass(eq=False)
class ProfileReady(ToolMessage, tool="profile"):
    """The `asc-tui profile --pipeline` report of the operator's newest good run, as text."""

    text: str


class ProfileController(ToolController):
    name = "profile"

    def launch(self, st: OperatorState) -> None:
        if st.good is None:
            self.app.log_line(f"{st.path.stem}: no result to profile yet", Level.WARN)
            return
        rep, path, width = st.good, st.path, max(100, self.app.size.width - 28)
        known = self.app.runs.profile_of(rep)  # the panes' profile, when computed already
        self.run(path, lambda: ProfileReady(path, profile_report_text(rep, width, known)))

    def show(self, msg: ProfileReady) -> None:
        self.switch("log")  # the same report `asc-tui profile --pipeline` prints
        self.app.log_line(f"{msg.path.stem}: profile report", Level.OK)
        for line in msg.text.splitlines():
            self.app.log_line("  " + line)


def profile_report_text(report, width: int, known=None) -> str:
    """The report `asc-tui profile --pipeline` prints (breakdown, pipeline report, hot lines);
    `known` is the run's profile if already computed."""
    from ...devkit.present.profile import report_text
    from ...devkit.profile.profiler import profile

    return report_text(known or profile(report), width, pipeline_report=True, lines=8)
