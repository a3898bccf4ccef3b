"""The results of `--deadlock-check`: one line per rank, the outcome, and the ranks' precision.

Built from the scheduler's final state by `summarise`: which collective the world is stuck on
(the first incomplete one someone waits in), and for every rank whether it waits there, finished
without calling it (and where it returned from), failed, or ran past the timeout.
"""

from __future__ import annotations

import enum
import os
from dataclasses import asdict, dataclass, replace

import numpy as np

from ...npu.errors import ErrorInfo, OperatorError
from ..precision import PrecisionReport, compare
from ..run.loader import OperatorModule


class RankStatus(enum.StrEnum):
    READY = "ready"
    RUNNING = "running"
    WAITING = "waiting"
    FINISHED = "finished"
    ERROR = "error"
    ABORTED = "aborted"
    TIMEOUT = "timeout"


class Outcome(enum.StrEnum):
    OK = "ok"
    DEADLOCK = "deadlock"
    MISMATCH = "mismatch"  # ranks called different collectives at the same step
    ORDER = "order"  # the same collectives in a different order
    ERROR = "error"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class RankReport:
    rank: int
    status: RankStatus
    detail: str
    file: str | None = None
    line: int | None = None
    collectives: int = 0
    time_us: float | None = None  # the rank's task duration when it finished

    def format(self) -> str:
        return f"Rank {self.rank}: {self.detail}"


@dataclass(frozen=True)
class DeadlockReport:
    """The outcome of running N ranks together; `ok` when they all finished consistently."""

    operator: str
    case: str | None
    ranks: int
    timeout_s: float
    outcome: Outcome
    step: int | None
    message: str
    rank_reports: tuple[RankReport, ...]
    precision: PrecisionReport | None
    seconds: float
    errors: tuple[ErrorInfo, ...] = ()

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK and (self.precision is None or self.precision.verdict != "FAIL")

    def format(self) -> str:
        lines = [self.message]
        lines += ["  " + rr.format() for rr in self.rank_reports]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "operator": self.operator,
            "case": self.case,
            "ranks": self.ranks,
            "timeout_s": self.timeout_s,
            "outcome": self.outcome,
            "step": self.step,
            "message": self.message,
            "ok": self.ok,
            "seconds": self.seconds,
            "rank_states": [asdict(r) for r in self.rank_reports],
            "precision": self.precision.to_dict() if self.precision else None,
            "errors": [e.to_dict() for e in self.errors],
        }


def _rel(path: str | None) -> str:
    if not path:
        return "?"
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def summarise(op, case_name, sched, setups, timeout_s, seconds) -> DeadlockReport:
    ranks = sched.ranks
    comm = sched.comm
    errors = tuple(rk.error for rk in ranks if rk.error is not None)
    reports: list[RankReport] = []
    step = None
    if sched.stop == "done":
        outcome = Outcome.OK
        message = f"No deadlock: {sched.n} rank(s) finished, {len(ranks[0].committed)} collective(s) each"
        for rk in ranks:
            reports.append(
                RankReport(
                    rk.rank,
                    RankStatus.FINISHED,
                    f"finished after {len(rk.committed)} collective(s) at {rk.time_us:.3f} us",
                    collectives=len(rk.committed),
                    time_us=rk.time_us,
                )
            )
        try:
            precision = _verify_ranks(op, setups)
        except OperatorError as exc:
            precision, errors = None, errors + (exc.info(),)
            outcome = Outcome.ERROR
        if precision is not None:
            message += f"; results {precision.verdict}"
        return DeadlockReport(
            op.name,
            case_name,
            sched.n,
            timeout_s,
            outcome,
            None,
            message,
            tuple(reports),
            precision,
            seconds,
            errors,
        )
    # the collective the world is stuck on: the first incomplete group someone waits in
    stuck = sorted(
        {
            (rk.waiting.block, rk.waiting.seq)
            for rk in ranks
            if rk.status == RankStatus.WAITING and rk.waiting is not None
        }
    )
    g_key = stuck[0] if stuck else None
    g_call = None
    if g_key is not None:
        g = comm.groups.get(g_key)
        g_call = next(iter(g.calls.values())) if g and g.calls else None
        step = g_key[1] + 1
    for rk in ranks:
        reports.append(_rank_line(rk, g_key, g_call, timeout_s))
    if sched.stop == "deadlock":
        outcome = Outcome.DEADLOCK
        blk = f" (block {g_key[0]})" if g_key and g_key[0] else ""
        message = (
            f"Deadlock detected at step {step}{blk}: {g_call.kind if g_call else '?'} #{step} never completes"
        )
    elif sched.stop == "timeout":
        outcome = Outcome.TIMEOUT
        message = (
            f"Timeout: a rank ran for more than {timeout_s:g} s without reaching a "
            "collective (an endless loop?)"
        )
    else:
        err = errors[0] if errors else None
        outcome = Outcome.ERROR
        if err is not None and err.kind == "collective":
            if "different order" in err.message:
                outcome = Outcome.ORDER
            elif err.message.startswith("mismatched"):
                outcome = Outcome.MISMATCH
        label = {
            Outcome.ORDER: "Collective order mismatch",
            Outcome.MISMATCH: "Collective mismatch",
            Outcome.ERROR: "Rank failed",
        }[outcome]
        where = f"{_rel(err.file)}:{err.line}: " if err and err.file else ""
        message = f"{label}: {where}{err.message if err else 'unknown error'}"
    return DeadlockReport(
        op.name, case_name, sched.n, timeout_s, outcome, step, message, tuple(reports), None, seconds, errors
    )


def _rank_line(rk, g_key, g_call, timeout_s: float) -> RankReport:
    n = len(rk.committed)
    others = f"the others call it at {_rel(g_call.file)}:{g_call.line}" if g_call else ""
    in_group = g_key is not None and any((c.block, c.seq) == g_key for c in rk.committed)
    if rk.status == RankStatus.WAITING and rk.waiting is not None:
        w = rk.waiting
        file, line = rk.where or (w.file, w.line)
        text = f"waiting for {w.kind} #{w.seq + 1} (timeout {timeout_s:g}s) at {_rel(file)}:{line}"
        if g_key is not None and (w.block, w.seq) != g_key and not in_group:
            text += f"; it never called {g_call.kind} #{g_key[1] + 1} ({others})"
        return RankReport(rk.rank, RankStatus.WAITING, text, file, line, n)
    if rk.status == RankStatus.FINISHED:
        if g_call is not None and not in_group:
            file, line = rk.returned or (g_call.file, g_call.line)
            left = f"returned at {_rel(file)}:{line}; " if rk.returned else ""
            return RankReport(
                rk.rank,
                RankStatus.FINISHED,
                f"finished without calling {g_call.kind} #{g_key[1] + 1} ({left}{others})",
                file,
                line,
                n,
            )
        return RankReport(rk.rank, RankStatus.FINISHED, f"finished after {n} collective(s)", None, None, n)
    if rk.status == RankStatus.ERROR and rk.error is not None:
        e = rk.error
        return RankReport(
            rk.rank, "error", f"error at {_rel(e.file)}:{e.line}: {e.message}", e.file, e.line, n
        )
    if rk.status == RankStatus.TIMEOUT:
        file, line = rk.where or (None, None)
        return RankReport(
            rk.rank, "timeout", f"still running at {_rel(file)}:{line} after {timeout_s:g} s", file, line, n
        )
    if rk.status == RankStatus.ABORTED and not rk.committed:
        return RankReport(
            rk.rank, "aborted", "not run: the check stopped at the first problem", None, None, 0
        )
    return RankReport(rk.rank, rk.status, f"stopped ({rk.status}) after {n} collective(s)", None, None, n)


def _verify_ranks(op: OperatorModule, setups) -> PrecisionReport | None:
    fn = getattr(op.module, "golden_ranks", None)
    if fn is None or not setups[0].arrays:
        return None
    case, specs = setups[0].case, setups[0].specs
    overwritten = []
    for r, s in enumerate(setups):  # golden_ranks sees every rank's inputs as they were
        for note in s.originals.restore(s.arrays):
            overwritten.append(replace(note, name=f"rank{r}.{note.name}"))
    inputs = [{k: s.arrays[k] for k in specs.inputs} for s in setups]
    wants = op._call("golden_ranks", case, inputs)
    overrides = getattr(op.module, "PRECISION", None)
    outs = list(specs.outputs)
    results = []
    for r, (setup, want) in enumerate(zip(setups, wants)):
        if not isinstance(want, dict):
            want = dict(zip(outs, want if isinstance(want, (tuple, list)) else (want,)))
        for name in outs:
            got = setup.arrays[name].reshape(-1)
            w = np.asarray(want[name]).reshape(-1).astype(got.dtype)
            results.append(compare(f"rank{r}.{name}", got, w, overrides))
    return PrecisionReport(tuple(results), tuple(overwritten))
