"""Benchmarks: per-case figures, verdicts against a baseline, change vs the previous run.

The emulator is deterministic, so one run per case is the measurement and any slowdown beyond a
small threshold (the config's `[thresholds] regression`, default 1%; the rule is
`regression.py`'s) against the previous run of the same operator + case + chip is a
regression. A regression is explained by the pipes whose busy time grew and the source lines
whose cost changed (from the per-line costs kept in the history).

Verdicts follow the Ascend practice: relative performance = baseline time / own time;
ship ≥ 95%, optimise 90–95%, must optimise < 90% (thresholds configurable). The request and
result types and the verdict rule are in `results.py`; this module is the run itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ...cxx.files import sample_for
from ...npu.chip import ChipModel, load_chip
from ...npu.errors import ErrorInfo, OperatorError
from ..chips import ARCH_CHIPS
from ..profile.profiler import profile
from ..profile.roofline import Roofline, element_bytes, roofline
from ..run.loader import load_operator
from ..run.runner import RunReport, RunRequest, is_sample_ref, run
from ..samples.sample import SAMPLE_CASE
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
from .diff import bench_diff, lanes_of, load_lanes, save_lanes
from .history import RunRecord
from .results import (  # noqa: F401 - re-exported: bench is the module callers know
    FAIL_CONDITIONS,
    BenchRequest,
    BenchResult,
    CaseResult,
    Thresholds,
    Verdict,
    verdict,
)


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


def bench(
    req: BenchRequest, store: Store | None = None, progress: Callable[[str], None] | None = None
) -> BenchResult:
    """Run every requested case (and the baseline), record them, compare, decide."""
    store = history.open_history(store)
    notices = tuple(store.notices)
    try:
        op = SampleTarget.of(req.op) if is_sample_ref(req.op) else load_operator(req.op)
    except OperatorError as exc:
        return BenchResult(
            operator=str(req.op),
            path=None,
            chip=req.chip,
            baseline=None,
            thresholds=req.thresholds,
            cases=(),
            errors=(exc.info(),),
            notices=notices,
        )
    try:
        chip = load_chip(req.chip or getattr(op, "chip", None))
    except OperatorError as exc:
        return BenchResult(
            operator=op.name,
            path=op.path,
            chip=req.chip,
            baseline=None,
            thresholds=req.thresholds,
            cases=(),
            errors=(exc.info(),),
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
            base_err = _baseline(exc.info())
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


def _baseline(e: ErrorInfo) -> ErrorInfo:
    """An error of the baseline's run, said to be the baseline's (its file and line kept)."""
    return replace(e, message=f"baseline {e.message}")


@dataclass(frozen=True)
class SampleTarget:
    """A sample directory benched as an operator: its one case, SAMPLE_CASE, runs the whole loop
    (gen_data, main(), verify) with full emulation, since its verify script needs the output;
    its time is the sum of its launches' (`history.record_from_report`)."""

    root: str
    name: str
    path: str
    chip: str | None  # the chip its CMakeLists.txt architecture names
    module = None  # (no BASELINE, no PRECISION)
    default_case = SAMPLE_CASE
    cases = (SAMPLE_CASE,)

    @classmethod
    def of(cls, ref: str) -> SampleTarget:
        s = sample_for(Path(ref).resolve())
        return cls(str(s.root), s.name, str(s.kernel), ARCH_CHIPS.get(s.arch))


def history_name(ref: str) -> str:
    """The operator name a target's runs are kept under: a sample's name (its directory), a
    spec's file stem, else the name as given."""
    if is_sample_ref(ref):
        return sample_for(Path(ref).resolve()).name
    return Path(ref).stem if ref.endswith(".py") else ref


def _run(req: BenchRequest, op, chip, case: str, params: dict) -> RunReport:
    if isinstance(op, SampleTarget):
        # (the user's chip, not the resolved one: run_sample refuses an out-of-scope sample then)
        return run(RunRequest(op.root, case=case, chip=req.chip, params=params, timeout_s=req.timeout_s))
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
    req: BenchRequest, op, chip: ChipModel, case: str, store: Store, base_op, base_err: ErrorInfo | None
) -> CaseResult:
    errors: list[ErrorInfo] = []
    warnings: list[str] = []
    report = _run(req, op, chip, case, req.params)
    errors += report.errors
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
            errors += [_baseline(e) for e in base.errors]
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
                ErrorInfo(
                    "bench",
                    f"no baseline named {req.against!r} for case {case!r} on {chip.name}",
                    hint=f"save one with --save-baseline {req.against}",
                )
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
        gbps=rec.io_bytes / t / 1e3 if t and rec.io_bytes else None,  # None: a sample's tensors unknown
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
