"""The command line's way to run user code: in a worker process, one document per run whatever
the operator does.

`asc-tui run/profile/debug/bench` call these instead of running the operator in their own process, so a
kernel that calls `os._exit`, kills itself, allocates 50 GB or prints at import time still ends in
a report: the error with the user's file:line, the exit cause (`exit`), and what the run printed
(`stdout`) inside the JSON document rather than around it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .bench.results import BenchRequest, BenchResult
from .chips import chip_name
from .debug.debugger import DebugReport, DebugRequest
from .run.runner import RunReport, RunRequest, Stage
from .run.worker import Call, RunWorker, WorkResult
from .samples.sample import SAMPLE_CASE, is_sample


@dataclass(frozen=True)
class Exit:
    """How the worker's run ended: status ("ok", "raised", "timeout", "crashed"), its cause in
    words ("exit code 1", "SIGKILL", "timeout"...) and the raw exit status when it died."""

    status: str
    cause: str
    code: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "cause": self.cause, "code": self.code}


@dataclass(frozen=True)
class Isolated:
    """One run's report (a stand-in naming the error when the worker died) with its exit and output."""

    report: Any  # RunReport | DebugReport
    exit: Exit
    stdout: str
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        d = self.report.to_dict()
        d["exit"] = self.exit.to_dict()
        d["stdout"] = self.stdout
        return d


def _exit(res: WorkResult) -> Exit:
    return Exit(res.status, res.exit_cause, res.exitcode)


def _stand_in_run(req: RunRequest, res: WorkResult) -> RunReport:
    path = Path(req.op)
    return RunReport(
        operator=path.stem if path.suffix == ".py" else req.op,
        path=str(path.resolve()) if path.suffix == ".py" else None,
        case=req.case or (SAMPLE_CASE if is_sample(req.op) else None),
        chip=chip_name(req.chip),
        params=dict(req.params),
        block_dim=None,
        stages=(Stage("worker", res.seconds, False, res.exit_cause),),
        emulation=None,
        precision=None,
        errors=res.errors,
    )


def run_isolated(
    requests: Iterable[RunRequest], timeout_s: float | None, memory_mb: int | None, cancel=None
) -> Iterator[Isolated]:
    """Run each request in one worker (restarted after a crash); yields as each finishes.
    `cancel` (a tuner `CancelToken`) stops the run in flight and ends the iteration: a cancelled
    run yields nothing."""
    worker = RunWorker(timeout_s=timeout_s, memory_mb=memory_mb)
    if cancel is not None:
        cancel.when_cancelled(worker.cancel)
    try:
        for req in requests:
            if cancel is not None and cancel.cancelled:
                return
            res = worker.run(req)
            if cancel is not None and cancel.cancelled:
                return
            report = res.report if res.ok else _stand_in_run(req, res)
            yield Isolated(report, _exit(res), res.output, res.seconds)
    finally:
        worker.close()


def debug_isolated(
    requests: Iterable[DebugRequest], timeout_s: float | None, memory_mb: int | None
) -> Iterator[Isolated]:
    """`devkit.debug.debug` for each request in a worker. The worker's deadline is the run's own
    timeout plus slack for the checks, so the emulator's own deadline (which names the line) fires
    first; a multi-rank check gets one such budget per rank."""
    worker = RunWorker(timeout_s=None, memory_mb=memory_mb)
    try:
        for req in requests:
            if timeout_s is not None:
                req = replace(req, timeout_s=timeout_s)
            budget = None if timeout_s is None else timeout_s * (1 + (req.ranks or 2)) + 10
            job = Call("asc_tui.devkit.debug.debugger:debug", (req,), label=req.op)
            res = worker.call(job, timeout_s=budget)
            if res.ok:
                report = res.report
            else:
                report = DebugReport(
                    operator=Path(req.op).stem,
                    path=req.op if req.op.endswith(".py") else None,
                    case=req.case,
                    tools=tuple(req.tools),
                    findings=(),
                    errors=res.errors,
                    precision=None,
                    deadlock=None,
                    run=None,
                    seconds=res.seconds,
                    precision_checked=req.precision_check,
                )
            yield Isolated(report, _exit(res), res.output, res.seconds)
    finally:
        worker.close()


def bench_isolated(req: BenchRequest, memory_mb: int | None) -> Isolated:
    """`devkit.bench.bench` in a worker. Each run keeps its own emulator deadline; the whole
    bench gets twenty of them (a loop in host code, e.g. `tensors()`, is stopped too)."""
    budget = None if req.timeout_s is None else req.timeout_s * 20
    worker = RunWorker(timeout_s=None, memory_mb=memory_mb)
    try:
        res = worker.call(Call("asc_tui.devkit.bench.figures:bench", (req,), label=req.op), timeout_s=budget)
    finally:
        worker.close()
    if res.ok:
        report = res.report
    else:
        report = BenchResult(
            operator=Path(req.op).stem,
            path=None,
            chip=req.chip,
            baseline=None,
            thresholds=req.thresholds,
            cases=(),
            errors=tuple(res.errors),
        )
    return Isolated(report, _exit(res), res.output, res.seconds)
