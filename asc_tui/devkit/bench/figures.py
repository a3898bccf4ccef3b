"""Benchmarks: per-case figures, verdicts against a baseline, change vs the previous run.

The emulator is deterministic, so one run per case is the measurement and any slowdown beyond a
small threshold (the config's `[thresholds] regression`, default 1%; the rule is
`regression.py`'s) against the previous run of the same operator + case + chip is a
regression. A regression is explained by the pipes whose busy time grew and the source lines
whose cost changed (from the per-line costs kept in the history).

Verdicts follow the Ascend practice: relative performance = baseline time / own time;
ship ≥ 95%, optimise 90–95%, must optimise < 90% (thresholds configurable).

Over 400 lines; the seam to split on: the request and result types (Verdict, Thresholds,
CaseResult, BenchRequest, BenchResult) from the run itself (`bench`, `_bench_case`).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ...config import Thresholds as ConfigThresholds
from ...npu.chip import ChipModel, load_chip
from ...npu.errors import OperatorError
from ..profile.profiler import profile
from ..profile.roofline import Roofline, element_bytes, roofline
from ..run.loader import load_operator
from ..run.runner import RunReport, RunRequest, run
from ..store import Store
from . import history
from .compare import (  # noqa: F401 - re-exported: bench is the module callers know
    Change,
    LineDelta,
    PipeDelta,
    Regression,
    change,
    detect_regression,
    line_deltas,
    pipe_deltas,
)
from .diff import BenchDiff, bench_diff, lanes_of, load_lanes, save_lanes
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


def _profile(report: RunReport, chip: ChipModel):
    """The profiler's view of the run (breakdown, roofline, advice); None for a failed run."""
    if report.emulation is None:
        return None
    try:
        return profile(report, chip)
    except Exception:  # noqa: BLE001 - a profiler bug must not lose the benchmark figures
        return None


def _roofline_of(report: RunReport, prof, chip: ChipModel, rec: RunRecord) -> Roofline | None:
    """The profiler's roofline; without a profile, the same roofline minus the fixed costs."""
    em = report.emulation
    if em is None:
        return None
    if getattr(prof, "roofline", None) is not None:
        return prof.roofline
    uses_cube = "cube" in rec.pipes and rec.pipes["cube"].busy_us > 0
    hbm_read = getattr(em, "hbm_read", em.gm_read)  # re-reads served by L2 do not count
    return roofline(
        chip,
        rec.flops,
        hbm_read + em.gm_write,
        em.time_us,
        use_cube=uses_cube,
        elem_bytes=element_bytes(rec.shapes),
    )


def _advice(prof, rec: RunRecord, relative: float | None, th: Thresholds) -> tuple[str, ...]:
    out = [a.message for a in getattr(getattr(prof, "pipeline", None), "advice", ())]
    if prof is None and rec.pipes and rec.kernel_us:
        name, fig = max(rec.pipes.items(), key=lambda kv: kv[1].busy_us)
        out.append(f"bottleneck: {name} busy {fig.busy_us / rec.kernel_us:.1%} of kernel time")
    if relative is not None and relative < th.optimise:
        out.append(
            f"{relative:.1%} of the baseline: look at the algorithm or the memory access "
            "pattern first; tiling alone rarely closes a gap this size"
        )
    return tuple(out)


# -- one bench ----------------------------------------------------------------------------------


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
    errors: tuple[str, ...] = ()
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
            "errors": list(self.errors),
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
    errors: tuple[str, ...] = ()
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
            "errors": list(self.errors),
            "notices": list(self.notices),
            "failures": self.failures(),
            "exit_code": self.exit_code,
        }


def bench(
    req: BenchRequest, store: Store | None = None, progress: Callable[[str], None] | None = None
) -> BenchResult:
    """Run every requested case (and the baseline), record them, compare, decide."""
    store = history.open_history(store)
    notices = tuple(store.notices)
    try:
        op = load_operator(req.op)
    except OperatorError as exc:
        return BenchResult(
            operator=str(req.op),
            path=None,
            chip=req.chip,
            baseline=None,
            thresholds=req.thresholds,
            cases=(),
            errors=(exc.info().format(),),
            notices=notices,
        )
    try:
        chip = load_chip(req.chip)
    except OperatorError as exc:
        return BenchResult(
            operator=op.name,
            path=op.path,
            chip=req.chip,
            baseline=None,
            thresholds=req.thresholds,
            cases=(),
            errors=(exc.info().format(),),
            notices=notices,
        )
    names = (op.default_case,) if req.cases is None else (req.cases or tuple(op.cases))
    base_op, base_desc, base_err = None, None, None
    base_ref = req.baseline_op or (None if req.against else getattr(op.module, "BASELINE", None))
    if base_ref:
        base_desc = f"operator {base_ref}"
        try:
            # a name is looked up next to the operator first (then ./operators, bundled)
            base_op = load_operator(base_ref, os.path.dirname(op.path))
            base_desc = f"operator {base_op.name}"
        except OperatorError as exc:
            base_err = f"baseline {exc.info().format()}"
    elif req.against:
        base_desc = f"saved baseline {req.against!r}"
    results = []
    for name in names:
        if progress:
            progress(name)
        results.append(_bench_case(req, op, chip, name, store, base_op, base_err))
    return BenchResult(
        operator=op.name,
        path=op.path,
        chip=chip.name,
        baseline=base_desc,
        thresholds=req.thresholds,
        cases=tuple(results),
        notices=notices,
    )


def _run(req: BenchRequest, op, chip, case: str, params: dict) -> RunReport:
    return run(
        RunRequest(
            op.name,
            case=case,
            chip=chip.path,
            params=params,
            timing_only=req.timing_only,
            timeout_s=req.timeout_s,
        ),
        op=op,
    )


def _bench_case(
    req: BenchRequest, op, chip: ChipModel, case: str, store: Store, base_op, base_err: str | None
) -> CaseResult:
    errors: list[str] = []
    warnings: list[str] = []
    report = _run(req, op, chip, case, req.params)
    errors += [e.format() for e in report.errors]
    rec = history.record_from_report(report, "bench")
    key = replace(history.RunKey.of(report), operator=op.name, case=report.case or case, chip=chip.name)
    previous = history.previous(store, key)
    if req.record or req.save_baseline:  # a baseline is a stored run
        rec = history.get(store, history.append(store, rec))
        if report.emulation is not None:  # the diff view draws a baseline's timeline from these
            save_lanes(store, rec.id, report.emulation)
        if req.save_baseline and rec.time_us is not None:
            history.save_baseline(store, req.save_baseline, rec)
    base_time, vs_saved = None, None
    if base_err:
        errors.append(base_err)
    elif base_op is not None:
        if case not in base_op.cases:
            warnings.append(
                f"baseline operator {base_op.name} has no case {case!r}; its "
                f"cases: {', '.join(base_op.cases)}"
            )
        else:
            base = _run(req, base_op, chip, case, {})
            errors += [f"baseline {e.format()}" for e in base.errors]
            if req.record:
                history.append(store, history.record_from_report(base, "bench"))
            base_time = base.emulation.time_us if base.emulation else None
            diff = _shape_diff(report.shapes, base.shapes)
            if diff:
                warnings.append(
                    f"baseline {base_op.name} [{case}] works on other tensors "
                    f"({diff}): the comparison is of different work"
                )
    elif req.against:
        saved = history.load_baseline(store, req.against, case, chip.name, op.name)
        if saved is None:
            errors.append(
                f"no baseline named {req.against!r} for case {case!r} on {chip.name} "
                f"(save one with --save-baseline {req.against})"
            )
        else:
            base_time = saved.time_us
            if rec.time_us is not None and saved.time_us is not None:
                vs_saved = bench_diff(
                    rec,
                    saved,
                    req.against,
                    clock_mhz=chip.clock_mhz,
                    current_lanes=lanes_of(report.emulation),
                    baseline_lanes=load_lanes(store, saved.id),
                )
    t = rec.time_us
    relative = base_time / t if base_time and t else None
    prof = _profile(report, chip)
    return CaseResult(
        case=case,
        record=rec,
        time_us=t,
        gflops=rec.flops / t / 1e3 if t and rec.flops else None,  # None: no flops() declared
        gbps=rec.io_bytes / t / 1e3 if t else None,
        roofline=_roofline_of(report, prof, chip, rec),
        baseline_time_us=base_time,
        relative=relative,
        verdict=verdict(relative, req.thresholds),
        change=change(rec, previous, req.thresholds.regression),
        regression=detect_regression(rec, previous, req.thresholds.regression),
        errors=tuple(errors),
        warnings=tuple(warnings),
        advice=_advice(prof, rec, relative, req.thresholds),
        report=report,
        profile=prof,
        diff=vs_saved,
    )


def _shape_diff(own: dict, base: dict) -> str:
    """The tensors that differ between two runs' shapes ('' when they agree or are unknown)."""
    if not own or not base:
        return ""
    out = []
    for k in dict.fromkeys([*own, *base]):
        if k not in base:
            out.append(f"{k} only here")
        elif k not in own:
            out.append(f"{k}: {base[k]} only in the baseline")
        elif own[k] != base[k]:
            out.append(f"{k}: {own[k]} here, {base[k]} there")
    return "; ".join(out)
