"""What the workbench knows about each operator between runs (app-side, no Textual)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ..devkit.bench.regression import is_regression
from ..devkit.outcome import Verdict, outcome

if TYPE_CHECKING:
    from ..devkit.run.runner import RunReport
    from ..devkit.run.worker import WorkResult


class Status(enum.StrEnum):
    """Where an operator stands in this session (its mark in the tree, its word in the status)."""

    NEW = "new"
    RUNNING = "running"
    PASS = "pass"  # the verdict (`devkit.outcome.Verdict`) is PASS, or RAN: nothing to check
    WARN = "warn"  # the verdict is WARN
    FAIL = "fail"  # the verdict is FAIL
    ERROR = "error"  # the verdict is ERROR
    REGRESSION = "regression"  # slower than the previous run by more than the threshold
    SANITIZER = "sanitizer"  # the debug tools found something


@dataclass
class TuneBoard:
    """What the Tune pane shows for one operator: its newest tune or sweep, running or ended.
    It lives with the operator, so the pane shows the selected operator's tune, not the last one
    started. `total` is None until the tune knows its size."""

    KEEP: ClassVar[int] = 10  # rows of the best-so-far table

    status: str
    running: bool = True
    done: int = 0
    total: int | None = None
    ranked: list[tuple[tuple, float, dict]] = field(default_factory=list)  # (rank, µs, params)

    def offer(self, time_us: float, params: dict, rank: tuple | None = None) -> None:
        """A result: kept if among the best `KEEP`, in the tune's own order (`rank`: the same
        tie-break as the tune's reported best)."""
        self.ranked.append(((rank if rank is not None else (time_us,)), time_us, dict(params)))
        self.ranked.sort(key=lambda t: t[0])
        del self.ranked[self.KEEP :]

    @property
    def best(self) -> list[tuple[float, dict]]:
        """(time µs, params), best first."""
        return [(t, p) for _, t, p in self.ranked]


@dataclass
class OperatorState:
    path: Path
    status: Status = Status.NEW
    settled: Status = Status.NEW  # the status before the run in flight (back to it on cancel)
    last: WorkResult | None = None  # newest result, good or bad
    good: RunReport | None = None  # newest report with an emulation (shown while stale)
    case: str | None = None  # None: the operator's default case
    params: dict = field(default_factory=dict)  # applied (tuned) overrides
    history: dict = field(default_factory=dict)  # history.RunKey -> [time_us, ...] this session
    best_params: dict | None = None  # from the last tune
    tune: TuneBoard | None = None  # the last tune's progress and best rows (the Tune pane)

    @property
    def stale(self) -> bool:
        """The panes show an older good result because the newest run failed."""
        return self.good is not None and (self.last is None or self.last.report is not self.good)


#: The mark a verdict gives an operator; a run that passes may still be a regression.
VERDICT_STATUS = {
    Verdict.PASS: Status.PASS,
    Verdict.RAN: Status.PASS,
    Verdict.WARN: Status.WARN,
    Verdict.FAIL: Status.FAIL,
    Verdict.ERROR: Status.ERROR,
}


def classify(result: WorkResult, previous_us: float | None, regression: float) -> Status:
    """The run's verdict (`devkit.outcome`) as a status; a passing run slower than the previous
    one beyond the threshold is a REGRESSION."""
    rep = result.report
    status = VERDICT_STATUS[outcome(rep)]
    if status is Status.PASS and is_regression(rep.emulation.time_us, previous_us, regression):
        return Status.REGRESSION
    return status
