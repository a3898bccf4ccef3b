"""Jobs the front ends send to a worker process, passed as functions (`Call(debug_run, ...)`):
they run in the child, so they return plain, picklable results (no Textual here)."""

from __future__ import annotations

import signal
from dataclasses import dataclass

from ..config import resolve_timeout
from .errors import ErrorInfo
from .outcome import Verdict
from .precision import NonFiniteOrigin
from .run.runner import RunReport, RunRequest


@dataclass(frozen=True)
class DeadlockSummary:
    ok: bool
    ranks: int
    text: str  # the deadlock report, one line per rank


@dataclass(frozen=True)
class DebugOutcome:
    """`devkit.debug`'s report as the log shows it: findings already name their file:line."""

    report: RunReport | None  # the run under the tools
    findings: tuple[str, ...]
    errors: tuple[ErrorInfo, ...]
    tools: tuple[str, ...]
    verdict: Verdict  # `devkit.outcome`'s, of the whole debug report
    deadlock: DeadlockSummary | None  # multi-rank operators only
    nonfinite: NonFiniteOrigin | None = None  # where the first NaN/Inf came from


def debug_run(request: RunRequest, tools: tuple[str, ...] | None = None) -> DebugOutcome:
    """One run under the sanitizer tools plus the precision check (and the deadlock check for
    multi-rank operators)."""
    from .debug import sanitizer as san_mod
    from .debug.debugger import DebugRequest, debug

    tools = tuple(tools or san_mod.TOOLS)
    multi_rank = _declares_ranks(request.op)  # collectives: also run the deadlock check
    rep = debug(
        DebugRequest(
            request.op,
            request.case,
            request.chip,
            dict(request.params),
            tools=tools,
            precision_check=True,
            deadlock_check=multi_rank,
            timeout_s=resolve_timeout(request.timeout_s),
            seed=request.seed,
        )
    )
    dl = rep.deadlock
    return DebugOutcome(
        rep.run,
        tuple(_where(f) + f.format() for f in rep.findings),
        tuple(rep.errors),
        tuple(rep.tools),
        rep.verdict,
        None if dl is None else DeadlockSummary(dl.ok, dl.ranks, dl.format()),
        rep.nonfinite,
    )


def _declares_ranks(path: str) -> bool:
    """A multi-rank (collective) operator: its module declares `RANKS`, read as the deadlock
    check reads it (`op.module.RANKS`); an operator that does not load has none."""
    from .errors import OperatorError
    from .run.loader import load_operator

    try:
        return getattr(load_operator(path).module, "RANKS", None) is not None
    except (OperatorError, OSError):
        return False


def _where(f) -> str:
    """`file:line: ` in front of a finding, so the log names the user's line as errors do."""
    return f"{f.tool}: {f.file}:{f.line}: " if f.file else f"{f.tool}: "


def bench_run(request):
    """`devkit.bench.bench` in the child; the RunReports are dropped (only figures return)."""
    import dataclasses

    from .bench import figures as bench_mod

    result = bench_mod.bench(request)
    cases = tuple(dataclasses.replace(c, report=None) for c in result.cases)
    return dataclasses.replace(result, cases=cases)


def tune_job(request, progress=None):
    """`devkit.tuner.session.tune` in the child. The child is single-threaded, so the tuner may
    fork its evaluators; SIGINT (`RunWorker.interrupt`) cancels it cleanly via its CancelToken,
    and every result so far stays in the tune cache."""
    from .tune.progress import CancelToken
    from .tune.session import tune

    token = CancelToken()
    old = signal.signal(signal.SIGINT, lambda *_: token.cancel())
    try:
        return tune(request, listeners=[progress] if progress else None, cancel=token)
    finally:
        signal.signal(signal.SIGINT, old)


@dataclass(frozen=True)
class SweepOutcome:
    """A sample's sweep as far as it got: the rows of the configurations that finished."""

    rows: tuple  # devkit.sample_tune.SweepRow
    total: int  # configurations the sweep would run
    cancelled: bool


def sample_tune_job(path: str, values: dict, fixed: dict, chip, timeout_s, progress=None) -> SweepOutcome:
    """`devkit.sample_tune.sweep` in the child: every combination of a sample's values, each
    run (gen_data, main(), verify) with the session's parameters `fixed` too. SIGINT
    (`RunWorker.interrupt`) stops the configuration in flight and returns the rows so far."""
    from .tune.progress import CancelToken
    from .tune.sample_tune import combinations, sweep

    token = CancelToken()
    old = signal.signal(signal.SIGINT, lambda *_: token.cancel())
    try:
        rows = sweep(path, values, fixed, chip, timeout_s, None, progress, token)
    finally:
        signal.signal(signal.SIGINT, old)
    total = len(combinations(values))
    return SweepOutcome(tuple(rows), total, token.cancelled and len(rows) < total)
