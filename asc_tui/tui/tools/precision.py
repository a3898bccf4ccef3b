"""`v`: per-output precision figures (`devkit.precision`) of the selected operator's newest run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

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
        name = msg.path.stem
        for o in msg.report.outputs:
            self.app.log_line(
                f"{name}: {o.name} {o.dtype} {o.verdict}: max abs "
                f"{o.max_abs_error:.3g} (atol {o.atol:g}), mean rel "
                f"{o.mean_rel_error:.3g} (rtol {o.rtol:g}), cosine "
                f"{o.cosine_similarity:.6f}, nan {o.nan}, inf {o.inf}",
                Level.OK if o.verdict == "PASS" else Level.ERROR,
            )
            for w in list(o.worst)[:5]:
                self.app.log_line(f"    worst: {w}", Level.DIM)
        for note in msg.report.overwritten:
            self.app.log_line(f"{name}: precision FAIL: {note.message}", Level.ERROR)
