"""`b` / `B`: bench the selected operator against the saved baseline, or save it as the
baseline (`devkit.bench`, in the tool process); the bench table's row is updated in place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..messages import ToolMessage
from ..widgets.bench_table import BenchRow, BenchTable
from ..widgets.log_pane import Level
from .base import ProcessTool

BASELINE_NAME = "baseline"

if TYPE_CHECKING:
    from ...devkit.bench.figures import BenchResult
    from ..state import OperatorState


@dataclass(eq=False)
class BenchFinished(ToolMessage, tool="bench"):
    """A bench against the saved baseline, or (`saved`) a run saved as the new baseline."""

    result: BenchResult
    saved: bool


class BenchController(ProcessTool):
    name = "bench"

    def launch(self, st: OperatorState, save: bool = False) -> None:
        from ...devkit.bench.figures import BenchRequest, Thresholds
        from ...devkit.jobs import bench_run  # (after the first paint: it loads the emulator)

        th = self.app.config.thresholds
        req = BenchRequest(
            op=str(st.path),
            cases=(st.case,) if st.case else None,
            chip=self.app.chip,
            params=dict(st.params),
            against=None if save else BASELINE_NAME,
            save_baseline=BASELINE_NAME if save else None,
            thresholds=Thresholds(ship=th.ship, optimise=th.optimise, regression=th.regression),
            timeout_s=self.app.config.worker_timeout,
        )
        path = st.path
        self.app.log_line(f"{path.stem}: {'save baseline' if save else 'bench vs baseline'}…", Level.DIM)
        self.switch("bench")
        self.run(
            path,
            lambda: BenchFinished(path, self.process.call("bench", path, bench_run, req), save),
        )

    def save(self) -> None:
        self.start(True)

    def show(self, msg: BenchFinished) -> None:
        app, res = self.app, msg.result
        for n in res.notices:
            app.log_line(f"bench: {n}", Level.WARN)
        for e in res.errors:
            app.log_line(f"bench: {e.format()}", Level.ERROR)
        from ...devkit.bench.history import operator_label

        table = app.pane(BenchTable)
        for c in res.cases:
            name = operator_label(res.operator, res.path)
            key = f"{name}/{c.case}/{res.chip}"
            row = table.row(key) or BenchRow(
                name, c.case, res.chip, threshold=app.config.thresholds.regression
            )
            if c.time_us is not None:
                row.current = c.time_us
            row.baseline = c.baseline_time_us  # "previous" stays the runs' own (same params only)
            row.verdict = c.verdict.value if c.verdict else ("saved" if msg.saved else "")
            reg = c.regression  # devkit compares only runs of the same params
            if reg is not None:
                row.verdict += " REGRESSION"
                app.log_line(f"bench: {reg.message()}", Level.ERROR)
            table.upsert(row)
            t = f"{c.time_us:,.3f} µs" if c.time_us is not None else "no time"
            base = f"{c.baseline_time_us:,.3f} µs" if c.baseline_time_us else "none"
            rel = f" ({c.relative:.1%} of baseline speed)" if c.relative else ""
            app.log_line(
                f"bench {res.operator} [{c.case}]: {t}, baseline {base}{rel}, verdict {row.verdict or '-'}",
                Level.OK if not c.errors else Level.ERROR,
            )
            for e in c.errors:
                app.log_line(f"  {e.format()}", Level.ERROR)
            if c.baseline_time_us and not msg.saved:
                app.log_line("  D shows the baseline and this run side by side", Level.DIM)
