"""`asc-debug`: one run under the sanitizer tools, the precision check, the multi-rank check.

`debug(DebugRequest(...)) -> DebugReport`: the run report plus every finding in msSanitizer's
shape, the precision figures (verdict, worst elements) and the deadlock check's per-rank states.
`DebugReport.verdict` is `devkit.outcome`'s rule (PASS, WARN, FAIL, ERROR or RAN) and the exit
code follows it; `clean` is the verdict being PASS or RAN.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...config import DEFAULT_WORKER_TIMEOUT
from ...npu.errors import ErrorInfo, internal_error
from ..outcome import Verdict, outcome
from ..precision import PrecisionReport
from ..run.loader import load_operator
from ..run.runner import RunReport, RunRequest, is_sample_ref, run
from .deadlock import DeadlockReport, run_ranks
from .nonfinite import NonFiniteOrigin, NonFiniteTrace
from .sanitizer import TOOLS, Finding, Sanitizer, findings_from_errors


@dataclass(frozen=True)
class DebugRequest:
    op: str
    case: str | None = None
    chip: str | None = None
    params: dict = field(default_factory=dict)
    tools: tuple[str, ...] = TOOLS
    precision_check: bool = False  # (`asc-debug` asks for it unless --no-precision)
    deadlock_check: bool = False
    ranks: int | None = None
    timeout_s: float = DEFAULT_WORKER_TIMEOUT
    seed: int = 0


@dataclass(frozen=True, kw_only=True)
class DebugReport:
    operator: str
    path: str | None
    case: str | None
    tools: tuple[str, ...]
    findings: tuple[Finding, ...]
    errors: tuple[ErrorInfo, ...]
    precision: PrecisionReport | None
    deadlock: DeadlockReport | None
    run: RunReport | None
    seconds: float
    precision_checked: bool = False
    nonfinite: NonFiniteOrigin | None = None  # precision checked: where the first NaN/Inf came from

    @property
    def verdict(self) -> Verdict:
        """The one outcome rule's verdict (`devkit.outcome`)."""
        return outcome(self)

    @property
    def clean(self) -> bool:
        return self.verdict.ok

    def to_dict(self) -> dict:
        return {
            "operator": self.operator,
            "path": self.path,
            "case": self.case,
            "tools": list(self.tools),
            "verdict": self.verdict.value,
            "clean": self.clean,
            "seconds": self.seconds,
            "findings": [f.to_dict() for f in self.findings],
            "counts": _counts(self.findings),
            "errors": [e.to_dict() for e in self.errors],
            "precision": self.precision.to_dict() if self.precision else None,
            "deadlock": self.deadlock.to_dict() if self.deadlock else None,
            "nonfinite_origin": self.nonfinite.to_dict() if self.nonfinite else None,
            "sample": _sample_dict(self.run),
        }


def _sample_dict(run: RunReport | None) -> dict | None:
    """A sample's own side of the run (launches, verify script, main()'s output), as `run --json`."""
    if run is None or run.sample is None:
        return None
    return run.sample.to_dict()


def _counts(findings) -> dict:
    out: dict[str, int] = {}
    for f in findings:
        out[f.tool] = out.get(f.tool, 0) + 1
    return out


def collect_findings(
    report: RunReport, tools, san: Sanitizer | None
) -> tuple[list[Finding], list[ErrorInfo]]:
    """Everything a sanitized run found: the tools' findings, guard-rail errors mapped onto the
    tools, and the DataCopy lengths hardware rounds down; plus the errors no tool explains."""
    findings = list(san.findings()) if san is not None else []
    mapped, rest = findings_from_errors(report.errors, tools, san)
    findings += mapped
    launches = (report.sample.emulations if report.sample else ()) or [report.emulation]  # (a sample: all)
    warnings = [w for em in launches if em is not None for w in em.warnings]
    if "memcheck" in tools:
        for w in warnings:
            if w.kind == "misaligned-length":
                findings.append(
                    Finding(
                        "memcheck",
                        "misaligned-length",
                        w.file,
                        w.line,
                        w.message,
                        block=w.block,
                        count=w.count,
                    )
                )
    return findings, rest


def debug(req: DebugRequest) -> DebugReport:
    """Run the operator once under the chosen tools (and the optional checks)."""
    t0 = time.perf_counter()
    tools = tuple(t for t in TOOLS if t in req.tools)
    if is_sample_ref(req.op):
        return debug_sample(req, tools, t0)
    findings: list[Finding] = []
    errors: list[ErrorInfo] = []
    report = None
    precision = None
    origin = None
    op = None
    try:
        op = load_operator(req.op)
    except Exception as exc:  # noqa: BLE001 - BuildError and friends become report errors
        if hasattr(exc, "info"):
            info = exc.info()
        else:
            err = internal_error(exc, str(req.op) if Path(str(req.op)).is_file() else None, None)
            info = err.info() if err is not None else ErrorInfo("build", f"{type(exc).__name__}: {exc}")
        return DebugReport(
            operator=str(req.op),
            path=None,
            case=req.case,
            tools=tools,
            findings=(),
            errors=(info,),
            precision=None,
            deadlock=None,
            run=None,
            seconds=time.perf_counter() - t0,
            precision_checked=req.precision_check,
        )
    if tools or req.precision_check or not req.deadlock_check:
        trace = NonFiniteTrace() if req.precision_check else None
        san = Sanitizer(tools, extra=(trace,) if trace else ()) if tools or trace else None
        with np.errstate(all="ignore"):  # overflow is what the precision check reports
            report = run(
                RunRequest(
                    op.path, req.case, req.chip, dict(req.params), timeout_s=req.timeout_s, seed=req.seed
                ),
                op=op,
                sanitizer=san,
            )
        found, rest = collect_findings(report, tools, san)
        findings += found
        errors += rest
        precision = report.precision
        if trace is not None and precision is not None and (precision.verdict != "PASS"):
            origin = trace.origin
    dl = None
    if req.deadlock_check:
        n = req.ranks or int(getattr(op.module, "RANKS", 2))
        dl = run_ranks(op, n, req.case, req.chip, dict(req.params), req.timeout_s, req.seed)
    findings.sort(key=lambda f: (f.tool, f.file or "", f.line or 0))
    case = report.case if report else (dl.case if dl else req.case)
    return DebugReport(
        operator=op.name,
        path=op.path,
        case=case,
        tools=tools,
        findings=tuple(findings),
        errors=tuple(errors),
        precision=precision,
        deadlock=dl,
        run=report,
        seconds=time.perf_counter() - t0,
        precision_checked=req.precision_check,
        nonfinite=origin,
    )


#: Error kinds of a sample run that are its own check of the output (verify script, main()'s
#: exit code, output.bin against golden.bin): the precision check's answer for a sample.
SAMPLE_CHECK_KINDS = ("verify", "exit", "precision")


def debug_sample(req: DebugRequest, tools: tuple[str, ...], t0: float) -> DebugReport:
    """A sample directory under the tools: the whole loop (gen_data, main(), verify) with the
    sanitizer over every launch; the precision check is the sample's own outcome (its verify
    script, main()'s exit code, output.bin against golden.bin). A sample is one process, so the
    deadlock check, which needs ranks, is refused."""
    trace = NonFiniteTrace() if req.precision_check else None
    san = Sanitizer(tools, extra=(trace,) if trace else ()) if tools or trace else None
    with np.errstate(all="ignore"):
        report = run(
            RunRequest(req.op, req.case, req.chip, dict(req.params), timeout_s=req.timeout_s, seed=req.seed),
            sanitizer=san,
        )
    findings, errors = collect_findings(report, tools, san)
    if not req.precision_check:  # (the sample checks itself; unasked, that is not this run's answer)
        errors = [e for e in errors if e.kind not in SAMPLE_CHECK_KINDS]
    if req.deadlock_check:
        errors.append(
            ErrorInfo(
                "debug",
                f"sample {report.operator} has no ranks: the deadlock check runs an operator's ranks "
                "together, and a sample is one host main()",
                report.path,
                None,
                hint="run the deadlock check on a Python operator that declares RANKS",
            )
        )
    precision = report.precision if req.precision_check else None
    origin = (
        trace.origin if trace is not None and precision is not None and precision.verdict != "PASS" else None
    )
    findings.sort(key=lambda f: (f.tool, f.file or "", f.line or 0))
    return DebugReport(
        operator=report.operator,
        path=report.path,
        case=report.case,
        tools=tools,
        findings=tuple(findings),
        errors=tuple(errors),
        precision=precision,
        deadlock=None,
        run=report,
        seconds=time.perf_counter() - t0,
        precision_checked=req.precision_check,
        nonfinite=origin,
    )
