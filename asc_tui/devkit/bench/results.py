"""The bench's request and result types: thresholds and verdicts, one case's figures, one bench.

Verdicts follow the Ascend practice: relative performance = baseline time / own time;
ship ≥ 95%, optimise 90–95%, must optimise < 90% (thresholds configurable). `BenchResult.failures`
says which of the `fail_on` conditions hold, so `asc-tui bench` exits non-zero. The run that
fills them is `figures.bench`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from ...config import Thresholds as ConfigThresholds
from ...npu.errors import ErrorInfo
from ..profile.roofline import Roofline
from ..run.runner import RunReport
from .compare import Change, Regression
from .diff import BenchDiff
from .history import RunRecord


class Verdict(enum.StrEnum):
    SHIP = "ship"
    OPTIMISE = "optimise"
    MUST_OPTIMISE = "must optimise"


FAIL_CONDITIONS = ("regression", "must-optimise", "optimise", "error")


@dataclass(frozen=True)
class Thresholds:
    """Fractions, not percents; the defaults are the project config's. `fail_on` names what
    makes `asc-tui bench` exit non-zero."""

    ship: float = ConfigThresholds.ship
    optimise: float = ConfigThresholds.optimise
    regression: float = ConfigThresholds.regression
    fail_on: tuple[str, ...] = ("regression", "must-optimise", "error")

    def __post_init__(self):
        if not 0 < self.optimise <= self.ship:
            raise ValueError(f"thresholds need 0 < optimise ({self.optimise}) <= ship ({self.ship})")
        if self.regression < 0:
            raise ValueError(f"the regression threshold must be >= 0, got {self.regression}")
        bad = [f for f in self.fail_on if f not in FAIL_CONDITIONS]
        if bad:
            raise ValueError(
                f"unknown fail-on condition(s) {', '.join(bad)}; known: {', '.join(FAIL_CONDITIONS)}"
            )


def verdict(relative: float | None, th: Thresholds = Thresholds()) -> Verdict | None:
    """ship if relative ≥ ship, optimise if ≥ optimise, otherwise must optimise."""
    if relative is None:
        return None
    if relative >= th.ship:
        return Verdict.SHIP
    if relative >= th.optimise:
        return Verdict.OPTIMISE
    return Verdict.MUST_OPTIMISE


@dataclass(frozen=True)
class CaseResult:
    """One case: own figures, baseline, verdict and change vs the previous run."""

    case: str
    record: RunRecord | None
    time_us: float | None
    gflops: float | None
    gbps: float | None
    roofline: Roofline | None
    baseline_time_us: float | None
    relative: float | None
    verdict: Verdict | None
    change: Change
    regression: Regression | None
    errors: tuple[ErrorInfo, ...] = ()  # each with file, line, column (the run's, the baseline's)
    warnings: tuple[str, ...] = ()
    advice: tuple[str, ...] = ()
    report: RunReport | None = field(default=None, compare=False, repr=False)
    profile: Any = field(default=None, compare=False, repr=False)  # devkit.profile.Profile
    diff: BenchDiff | None = None  # against a saved baseline (--against): categories, lines

    @property
    def roofline_fraction(self) -> float | None:
        """Roofline time / task duration: 1.0 = at the chip's limit."""
        return self.roofline.fraction if self.roofline is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "time_us": self.time_us,
            "gflops": self.gflops,
            "gbps": self.gbps,
            "roofline_fraction": self.roofline_fraction,
            "roofline": self.roofline.to_dict() if self.roofline else None,
            "advice": list(self.advice),
            "baseline_time_us": self.baseline_time_us,
            "relative": self.relative,
            "verdict": self.verdict.value if self.verdict else None,
            "change": self.change.to_dict(),
            "run_id": self.record.id if self.record else None,
            "source_hash": self.record.source_hash if self.record else None,
            "params": self.record.params if self.record else {},
            "errors": [e.to_dict() for e in self.errors],
            "warnings": list(self.warnings),
            "diff": self.diff.to_dict() if self.diff is not None else None,
        }


@dataclass(frozen=True)
class BenchRequest:
    op: str
    cases: tuple[str, ...] | None = None  # None: the default case; () : all cases
    chip: str | None = None
    params: dict = field(default_factory=dict)
    baseline_op: str | None = None  # run another operator on the same case names
    against: str | None = None  # or compare with a saved baseline of that name
    save_baseline: str | None = None
    thresholds: Thresholds = Thresholds()
    timing_only: bool = True
    record: bool = True
    timeout_s: float | None = 60.0


@dataclass(frozen=True, kw_only=True)
class BenchResult:
    operator: str
    path: str | None
    chip: str | None
    baseline: str | None  # "operator X", "saved baseline NAME" or None
    thresholds: Thresholds
    cases: tuple[CaseResult, ...]
    errors: tuple[ErrorInfo, ...] = ()
    notices: tuple[str, ...] = ()

    @property
    def regressions(self) -> tuple[Regression, ...]:
        return tuple(c.regression for c in self.cases if c.regression is not None)

    def failures(self) -> list[str]:
        """The fail-on conditions that hold (empty: exit 0)."""
        th, out = self.thresholds, []
        if "regression" in th.fail_on and self.regressions:
            out.append("regression")
        verdicts = {c.verdict for c in self.cases}
        if "must-optimise" in th.fail_on and Verdict.MUST_OPTIMISE in verdicts:
            out.append("must-optimise")
        if "optimise" in th.fail_on and verdicts & {Verdict.OPTIMISE, Verdict.MUST_OPTIMISE}:
            out.append("optimise")
        if "error" in th.fail_on and (self.errors or any(c.errors for c in self.cases)):
            out.append("error")
        return out

    @property
    def exit_code(self) -> int:
        return 1 if self.failures() else 0

    def to_dict(self) -> dict[str, Any]:
        th = self.thresholds
        return {
            "operator": self.operator,
            "path": self.path,
            "chip": self.chip,
            "baseline": self.baseline,
            "thresholds": {
                "ship": th.ship,
                "optimise": th.optimise,
                "regression": th.regression,
                "fail_on": list(th.fail_on),
            },
            "cases": [c.to_dict() for c in self.cases],
            "regressions": [r.to_dict() for r in self.regressions],
            "errors": [e.to_dict() for e in self.errors],
            "notices": list(self.notices),
            "failures": self.failures(),
            "exit_code": self.exit_code,
        }
