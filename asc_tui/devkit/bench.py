"""Benchmarks: per-case figures, verdicts against a baseline, change vs the previous run.

The emulator is deterministic, so one run per case is the measurement and any slowdown beyond a
small threshold (default 1%) against the previous run of the same operator + case + chip is a
regression. A regression is explained by the pipes whose busy time grew and the source lines
whose cost changed (from the per-line costs kept in the history).

Verdicts follow the Ascend practice: relative performance = baseline time / own time;
ship ≥ 95%, optimise 90–95%, must optimise < 90% (thresholds configurable).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..npu.chip import ChipModel, load_chip
from ..npu.errors import OperatorError
from . import history
from .history import RunRecord
from .loader import load_operator
from .runner import RunReport, RunRequest, run
from .store import Store


class Verdict(str, enum.Enum):
    SHIP = "ship"
    OPTIMISE = "optimise"
    MUST_OPTIMISE = "must optimise"


FAIL_CONDITIONS = ("regression", "must-optimise", "optimise", "error")


@dataclass(frozen=True)
class Thresholds:
    """Fractions, not percents. `fail_on` names what makes `asc-tui bench` exit non-zero."""

    ship: float = 0.95
    optimise: float = 0.90
    regression: float = 0.01
    fail_on: tuple[str, ...] = ("regression", "must-optimise", "error")

    def __post_init__(self):
        if not 0 < self.optimise <= self.ship:
            raise ValueError(f"thresholds need 0 < optimise ({self.optimise}) <= ship "
                             f"({self.ship})")
        if self.regression < 0:
            raise ValueError(f"the regression threshold must be >= 0, got {self.regression}")
        bad = [f for f in self.fail_on if f not in FAIL_CONDITIONS]
        if bad:
            raise ValueError(f"unknown fail-on condition(s) {', '.join(bad)}; known: "
                             f"{', '.join(FAIL_CONDITIONS)}")


def verdict(relative: float | None, th: Thresholds = Thresholds()) -> Verdict | None:
    """ship if relative ≥ ship, optimise if ≥ optimise, otherwise must optimise."""
    if relative is None:
        return None
    if relative >= th.ship:
        return Verdict.SHIP
    if relative >= th.optimise:
        return Verdict.OPTIMISE
    return Verdict.MUST_OPTIMISE


# -- roofline -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Roofline:
    """The chip's bound for this operator's work: the slower of moving its bytes through HBM and
    doing its FLOPs at the peak of the unit it uses (µs, GB/s, GFLOPS)."""

    memory_us: float
    compute_us: float
    peak_gbps: float
    peak_gflops: float
    unit: str  # "vector" or "cube"

    @property
    def bound_us(self) -> float:
        return max(self.memory_us, self.compute_us)

    @property
    def bound(self) -> str:
        return "compute" if self.compute_us > self.memory_us else "memory"


def vector_peak_gflops(chip: ChipModel) -> float:
    """fp16 vector peak: one repeat (repeat_bytes / 2 elements) per `default` cycles per AIV."""
    per_cycle = (chip.repeat_bytes / 2) / chip.vec_cycles_per_repeat("default")
    return chip.aiv * per_cycle * chip.clock_mhz / 1e3


def cube_peak_gflops(chip: ChipModel) -> float | None:
    macs = chip.section("cube").get("fp16_macs_per_cycle")
    return chip.aic * macs * 2 * chip.clock_mhz / 1e3 if macs else None


def roofline(chip: ChipModel, flops: float, io_bytes: int, uses_cube: bool) -> Roofline:
    cube = cube_peak_gflops(chip) if uses_cube else None
    peak = cube if cube else vector_peak_gflops(chip)
    return Roofline(memory_us=io_bytes / (chip.hbm_gbps * 1e3),
                    compute_us=flops / (peak * 1e3) if peak else 0.0,
                    peak_gbps=chip.hbm_gbps, peak_gflops=peak,
                    unit="cube" if cube else "vector")


# -- change vs previous run and regressions -----------------------------------------------------

@dataclass(frozen=True)
class Change:
    """This run against the previous one. `mark` as asv compare prints it:
    '+' slower beyond the threshold, '-' faster beyond it, ' ' within it,
    '!' failing now (the previous run had a time), 'x' nothing to compare with."""

    mark: str
    ratio: float | None  # time / previous time
    previous_id: int | None = None
    previous_time_us: float | None = None
    previous_source_hash: str | None = None

    @property
    def performance(self) -> float | None:
        """Performance change as asc-bench prints it: previous / now − 1 (−0.061 = 6.1% slower)."""
        return None if not self.ratio else 1.0 / self.ratio - 1.0

    def to_dict(self) -> dict[str, Any]:
        return {"mark": self.mark, "ratio": self.ratio, "performance": self.performance,
                "previous_id": self.previous_id, "previous_time_us": self.previous_time_us,
                "previous_source_hash": self.previous_source_hash}


def change(current: RunRecord | None, previous: RunRecord | None, threshold: float) -> Change:
    if previous is None or previous.time_us is None:
        return Change("x", None)
    prev = dict(previous_id=previous.id, previous_time_us=previous.time_us,
                previous_source_hash=previous.source_hash)
    if current is None or current.time_us is None:
        return Change("!", None, **prev)
    ratio = current.time_us / previous.time_us if previous.time_us > 0 else 1.0
    mark = "+" if ratio > 1 + threshold else "-" if ratio < 1 / (1 + threshold) else " "
    return Change(mark, ratio, **prev)


@dataclass(frozen=True)
class PipeDelta:
    """Busy time of one pipe per core before and after (µs)."""

    pipe: str
    before_us: float
    after_us: float

    @property
    def delta_us(self) -> float:
        return self.after_us - self.before_us


@dataclass(frozen=True)
class LineDelta:
    """Busy cycles of one source line (all blocks) before and after."""

    file: str
    line: int
    text: str
    before_cycles: float
    after_cycles: float

    @property
    def delta_cycles(self) -> float:
        return self.after_cycles - self.before_cycles


@dataclass(frozen=True)
class Regression:
    operator: str
    case: str
    chip: str
    time_us: float
    previous_time_us: float
    previous_id: int | None
    source_changed: bool
    params_changed: dict
    pipes: tuple[PipeDelta, ...]  # pipes whose busy time grew, most growth first
    lines: tuple[LineDelta, ...]  # lines whose cost changed, largest change first

    @property
    def performance(self) -> float:
        return self.previous_time_us / self.time_us - 1.0

    def message(self) -> str:
        out = [f"Performance regression detected: {self.performance:+.1%} on {self.operator} "
               f"[{self.case}] ({self.previous_time_us:.3f} us -> {self.time_us:.3f} us vs run "
               f"#{self.previous_id})"]
        if self.params_changed:
            out.append("  params changed: " + ", ".join(
                f"{k} {a}->{b}" for k, (a, b) in self.params_changed.items()))
        if not self.source_changed and not self.params_changed:
            out.append("  same source and params: the chip model or the emulator changed")
        for p in self.pipes:
            grow = p.delta_us / p.before_us if p.before_us > 0 else float("inf")
            out.append(f"  pipe {p.pipe}: busy {p.before_us:.3f} -> {p.after_us:.3f} us/core "
                       f"({p.delta_us:+.3f} us, {grow:+.1%})")
        for ln in self.lines:
            out.append(f"  {os.path.basename(ln.file)}:{ln.line}: {ln.before_cycles:,.0f} -> "
                       f"{ln.after_cycles:,.0f} cycles ({ln.delta_cycles:+,.0f})  {ln.text}")
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "operator": self.operator, "case": self.case, "chip": self.chip,
            "time_us": self.time_us, "previous_time_us": self.previous_time_us,
            "previous_id": self.previous_id, "performance": self.performance,
            "source_changed": self.source_changed,
            "params_changed": {k: list(v) for k, v in self.params_changed.items()},
            "pipes": [{"pipe": p.pipe, "before_us": p.before_us, "after_us": p.after_us,
                       "delta_us": p.delta_us} for p in self.pipes],
            "lines": [{"file": ln.file, "line": ln.line, "text": ln.text,
                       "before_cycles": ln.before_cycles, "after_cycles": ln.after_cycles,
                       "delta_cycles": ln.delta_cycles} for ln in self.lines],
            "message": self.message(),
        }


def pipe_deltas(current: RunRecord, previous: RunRecord) -> tuple[PipeDelta, ...]:
    """Pipes whose busy time per core grew, most growth first."""
    out = []
    for name in dict.fromkeys([*previous.pipes, *current.pipes]):
        before = previous.pipes[name].busy_us if name in previous.pipes else 0.0
        after = current.pipes[name].busy_us if name in current.pipes else 0.0
        if after - before > 1e-9 * max(before, 1.0):
            out.append(PipeDelta(name, before, after))
    return tuple(sorted(out, key=lambda d: -d.delta_us))


def line_deltas(current: RunRecord, previous: RunRecord, limit: int = 8
                ) -> tuple[LineDelta, ...]:
    """Source lines whose cost changed. Lines are matched by file and text, so an edit that
    shifts line numbers does not read as every line changing; blank text falls back to the
    line number."""

    def ident(c) -> tuple:
        return (os.path.basename(c.file), c.text or f"#{c.line}")

    before: dict[tuple, list] = {}
    for c in previous.lines:
        slot = before.setdefault(ident(c), [c, 0.0])
        slot[1] += c.cycles
    after: dict[tuple, list] = {}
    for c in current.lines:
        slot = after.setdefault(ident(c), [c, 0.0])
        slot[1] += c.cycles
    out = []
    for key in dict.fromkeys([*after, *before]):
        b = before.get(key, [None, 0.0])
        a = after.get(key, [None, 0.0])
        if abs(a[1] - b[1]) > 1e-9 * max(b[1], 1.0):
            ref = a[0] or b[0]
            out.append(LineDelta(ref.file, ref.line, ref.text, b[1], a[1]))
    out.sort(key=lambda d: -abs(d.delta_cycles))
    return tuple(out[:limit])


def detect_regression(current: RunRecord, previous: RunRecord | None,
                      threshold: float = 0.01) -> Regression | None:
    """A regression when `current` is slower than `previous` by more than `threshold`."""
    if previous is None or previous.time_us is None or current.time_us is None:
        return None
    if current.time_us <= previous.time_us * (1 + threshold):
        return None
    params = {k: (previous.params.get(k), current.params.get(k))
              for k in dict.fromkeys([*previous.params, *current.params])
              if previous.params.get(k) != current.params.get(k)}
    return Regression(current.operator, current.case or "", current.chip or "", current.time_us,
                      previous.time_us, previous.id,
                      source_changed=current.source_hash != previous.source_hash,
                      params_changed=params, pipes=pipe_deltas(current, previous),
                      lines=line_deltas(current, previous))


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
    report: RunReport | None = field(default=None, compare=False, repr=False)

    @property
    def roofline_fraction(self) -> float | None:
        """Roofline bound / kernel time (launch overhead excluded): 1.0 = at the chip's limit."""
        if self.roofline is None or self.record is None or not self.record.kernel_us:
            return None
        return self.roofline.bound_us / self.record.kernel_us

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case, "time_us": self.time_us, "gflops": self.gflops,
            "gbps": self.gbps, "roofline_fraction": self.roofline_fraction,
            "roofline": ({"bound": self.roofline.bound, "bound_us": self.roofline.bound_us,
                          "memory_us": self.roofline.memory_us,
                          "compute_us": self.roofline.compute_us, "unit": self.roofline.unit,
                          "peak_gbps": self.roofline.peak_gbps,
                          "peak_gflops": self.roofline.peak_gflops}
                         if self.roofline else None),
            "baseline_time_us": self.baseline_time_us, "relative": self.relative,
            "verdict": self.verdict.value if self.verdict else None,
            "change": self.change.to_dict(),
            "run_id": self.record.id if self.record else None,
            "source_hash": self.record.source_hash if self.record else None,
            "params": self.record.params if self.record else {},
            "errors": list(self.errors),
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


@dataclass(frozen=True)
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
            "operator": self.operator, "path": self.path, "chip": self.chip,
            "baseline": self.baseline,
            "thresholds": {"ship": th.ship, "optimise": th.optimise,
                           "regression": th.regression, "fail_on": list(th.fail_on)},
            "cases": [c.to_dict() for c in self.cases],
            "regressions": [r.to_dict() for r in self.regressions],
            "errors": list(self.errors), "notices": list(self.notices),
            "failures": self.failures(), "exit_code": self.exit_code,
        }


def bench(req: BenchRequest, store: Store | None = None,
          progress: Callable[[str], None] | None = None) -> BenchResult:
    """Run every requested case (and the baseline), record them, compare, decide."""
    store = history.open_history(store)
    notices = tuple(store.notices)
    try:
        op = load_operator(req.op)
    except OperatorError as exc:
        return BenchResult(str(req.op), None, req.chip, None, req.thresholds, (),
                           errors=(exc.info().format(),), notices=notices)
    try:
        chip = load_chip(req.chip)
    except OperatorError as exc:
        return BenchResult(op.name, op.path, req.chip, None, req.thresholds, (),
                           errors=(exc.info().format(),), notices=notices)
    names = (op.default_case,) if req.cases is None else (req.cases or tuple(op.cases))
    base_op, base_desc, base_err = None, None, None
    base_ref = req.baseline_op or (None if req.against else getattr(op.module, "BASELINE", None))
    if base_ref:
        base_desc = f"operator {base_ref}"
        try:
            base_op = load_operator(base_ref)
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
    return BenchResult(op.name, op.path, chip.name, base_desc, req.thresholds, tuple(results),
                       notices=notices)


def _run(req: BenchRequest, op, chip, case: str, params: dict) -> RunReport:
    return run(RunRequest(op.name, case=case, chip=chip.path, params=params,
                          timing_only=req.timing_only, timeout_s=req.timeout_s), op=op)


def _bench_case(req: BenchRequest, op, chip: ChipModel, case: str, store: Store, base_op,
                base_err: str | None) -> CaseResult:
    errors: list[str] = []
    report = _run(req, op, chip, case, req.params)
    errors += [e.format() for e in report.errors]
    rec = history.record_from_report(report, "bench")
    previous = history.previous_run(store, op.name, report.case or case, chip.name)
    if req.record:
        rec = history.get(store, history.append(store, rec))
        if req.save_baseline and rec.time_us is not None:
            history.save_baseline(store, req.save_baseline, rec)
    base_time = None
    if base_err:
        errors.append(base_err)
    elif base_op is not None:
        if case not in base_op.cases:
            errors.append(f"baseline operator {base_op.name} has no case {case!r}; its cases: "
                          f"{', '.join(base_op.cases)}")
        else:
            base = _run(req, base_op, chip, case, {})
            errors += [f"baseline {e.format()}" for e in base.errors]
            if req.record:
                history.append(store, history.record_from_report(base, "bench"))
            base_time = base.emulation.time_us if base.emulation else None
    elif req.against:
        saved = history.load_baseline(store, req.against, case, chip.name, op.name)
        if saved is None:
            errors.append(f"no baseline named {req.against!r} for case {case!r} on {chip.name} "
                          f"(save one with --save-baseline {req.against})")
        else:
            base_time = saved.time_us
    t = rec.time_us
    relative = base_time / t if base_time and t else None
    uses_cube = "cube" in rec.pipes and rec.pipes["cube"].busy_us > 0
    return CaseResult(
        case=case, record=rec, time_us=t,
        gflops=rec.flops / t / 1e3 if t else None,
        gbps=rec.io_bytes / t / 1e3 if t else None,
        roofline=roofline(chip, rec.flops, rec.io_bytes, uses_cube) if t else None,
        baseline_time_us=base_time, relative=relative,
        verdict=verdict(relative, req.thresholds),
        change=change(rec, previous, req.thresholds.regression),
        regression=detect_regression(rec, previous, req.thresholds.regression),
        errors=tuple(errors), report=report)
