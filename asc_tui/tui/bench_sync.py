"""Keeps the bench table in step with runs: session figures at once, stored history after.

Every run is appended to the project history (`devkit.history`, off the UI thread); the stored
runs then fill the row's "previous" (across sessions) and its sparkline. A run slower than the
stored previous one by more than the regression threshold marks the operator ▼.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..devkit.bench.regression import is_regression, slowdown_text
from .messages import FrozenMessage
from .state import OperatorState, Status
from .widgets.bench_table import BenchRow, BenchTable
from .widgets.log_pane import Level

if TYPE_CHECKING:
    from ..devkit.run.runner import RunReport
    from .app import Workbench


def row_key(rep: RunReport) -> str:
    """The bench row of a run: `BenchRow.key` of its operator (name and kind), case and chip."""
    from ..devkit.bench.history import operator_label  # (numpy: not at the app's import)

    return f"{operator_label(rep.operator, rep.path)}/{rep.case}/{rep.chip}"


@dataclass(eq=False)
class HistoryLoaded(FrozenMessage):
    """The stored runs of one bench row (`operator/case/chip`), newest last, in µs."""

    key: str
    previous_us: float | None  # the stored run before this session's newest
    times: list[float]


class BenchSync:
    app: Workbench

    def __init__(self, app: Workbench):
        self.app = app

    def update_row(self, st: OperatorState, rep: RunReport, previous: float | None) -> None:
        """The session's own figures, at once (`previous`: this session's run before, in µs)."""
        table = self.app.pane(BenchTable)
        key = row_key(rep)
        row = table.row(key) or BenchRow(
            key.split("/")[0], rep.case, rep.chip, threshold=self.app.config.thresholds.regression
        )
        row.previous = previous  # None: no run with these params yet (the store may have one)
        row.current = rep.emulation.time_us
        row.history = [*row.history, rep.emulation.time_us][-20:]
        table.upsert(row)

    def record(self, rep: RunReport | None) -> None:
        """Append the run to the project history and load the stored trend (worker thread)."""
        if rep is None or rep.emulation is None:
            return
        from ..devkit.bench import history as hist

        key = row_key(rep)

        def work():
            store = hist.open_history()
            prev = hist.previous(store, hist.RunKey.of(rep))
            hist.record_run(rep, "run", store)
            recs = hist.runs(store, rep.operator, rep.case, rep.chip, limit=20)
            times = [r.time_us for r in recs if r.time_us is not None]
            self.app.post_message(HistoryLoaded(key, prev.time_us if prev else None, times))

        self.app.run_in_thread(work, f"{rep.operator}: history", "history")

    def loaded(self, msg: HistoryLoaded) -> None:
        app = self.app
        table = app.pane(BenchTable)
        row = table.row(msg.key)
        if row is None:
            return
        if row.previous is None and msg.previous_us is not None:
            row.previous = msg.previous_us
        if len(msg.times) >= len(row.history):
            row.history = list(msg.times)  # stored runs include this one
        table.upsert(row)
        if is_regression(row.current, row.previous, app.config.thresholds.regression):
            for st in app.ops.values():
                if st.good is not None and row_key(st.good) == msg.key and st.status is Status.PASS:
                    st.status = Status.REGRESSION
                    app.pane("#sidebar").set_status(st.path, st.status, st.stale)
                    app.log_line(
                        f"{st.path.stem}: REGRESSION {slowdown_text(row.delta())} than the stored run "
                        "with the same params",
                        Level.ERROR,
                    )
                    app.update_status()
