"""`asc-tui conformance PATH`: run every sample directory under PATH and say how each fared.

Statuses: the run's verdict (`devkit.outcome.Verdict`: PASS, WARN, FAIL, ERROR or RAN), or one
of conformance's own two: UNSUPPORTED (a construct or API the twin lacks, named with file:line)
and OUT OF SCOPE (another architecture, or the SIMT/register API). Samples run in worker
processes (`jobs` at a time), each with the usual timeout and memory cap.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..cxx.files import find_samples
from .isolated import run_isolated
from .outcome import Verdict, outcome
from .run.runner import RunRequest
from .samples.result import SampleRun
from .samples.sample import out_of_scope

UNSUPPORTED, OUT_OF_SCOPE = "UNSUPPORTED", "OUT OF SCOPE"
STATUSES = (*(v.value for v in Verdict), UNSUPPORTED, OUT_OF_SCOPE)
_UNSUPPORTED = ("not supported yet", "unknown ", "no member", "has no ", "is not in the kernel API twin")


@dataclass(frozen=True)
class Row:
    sample: str  # path relative to the root
    status: str
    reason: str
    seconds: float


def classify(report) -> tuple[str, str]:
    """(status, reason) of one run report: its verdict with the reason in words, unless the
    sample is out of scope or uses what the twin lacks."""
    sample = report.sample or SampleRun()
    if sample.status == OUT_OF_SCOPE:
        return OUT_OF_SCOPE, report.errors[0].message if report.errors else ""
    verdict = outcome(report)
    if report.errors:
        e = report.errors[0]
        where = f" ({Path(e.file).name}:{e.line})" if e.file and e.line else ""
        msg = e.message.splitlines()[0][:200] + where
        if any(k in e.message for k in _UNSUPPORTED) and e.kind != "verify":
            return UNSUPPORTED, msg
        return verdict, msg
    if report.emulation is None:
        return verdict, "main() launched no kernel"
    p = report.precision
    checked = "verify_result.py passed, but " if sample.verify is not None else ""
    if p is not None and verdict is not Verdict.PASS:
        return (
            verdict,
            f"{checked}asc-tui's precision check of the whole output.bin against golden.bin: {p.reason}",
        )
    if verdict is Verdict.PASS and sample.verify is None and p is None:
        return verdict, "verified by main() itself (no golden.bin)"
    if verdict is Verdict.RAN:
        return verdict, sample.precision or "not checked: no golden"
    return verdict, ""


def read_scope(path: str | Path) -> list[str]:
    """A scope file: sample paths relative to the conformance root, one a line, `#` comments."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        rel = line.split("#", 1)[0].strip().strip("/")
        if rel:
            out.append(rel)
    return out


def nothing_to_run(root: str | Path) -> str | None:
    """Why there is nothing to run under `root` (no sample directory), else None. An empty
    list of rows must not read as success."""
    root = Path(root)
    if not root.is_dir():
        return f"no samples or operators under {root}: not a directory"
    if find_samples(root):
        return None
    from .run.discovery import find_operators

    ops = find_operators(root)
    if ops:
        return (
            f"no samples under {root}: conformance runs sample directories; "
            f"run its {len(ops)} operator file(s) with `asc-tui run FILE`"
        )
    return f"no samples or operators under {root}"


def conformance(
    root: str | Path,
    timeout_s: float | None,
    memory_mb: int | None,
    jobs: int = 2,
    chip=None,
    on_row=None,
    scope: list[str] | None = None,
) -> list[Row]:
    """Run the samples under `root` (only those `scope` lists, when given); one Row each. A scope
    entry that is no sample directory is a FAIL row, so the scope's figure counts it."""
    root = Path(root).absolute()
    samples = find_samples(root)
    rows: dict[int, Row] = {}
    todo = []
    rel_of = [str(s.root.relative_to(root)) if s.root != root else s.root.name for s in samples]
    if scope is not None:
        wanted = set(scope)
        keep = [k for k, rel in enumerate(rel_of) if rel in wanted]
        for n, rel in enumerate(sorted(wanted - set(rel_of))):
            row = rows[-1 - n] = Row(rel, "FAIL", "no sample directory at this path of the scope file", 0.0)
            if on_row:
                on_row(row)
        samples, rel_of = [samples[k] for k in keep], [rel_of[k] for k in keep]
    for i, (s, rel) in enumerate(zip(samples, rel_of)):
        why = out_of_scope(s) if chip is None else None
        if why:
            rows[i] = Row(rel, "OUT OF SCOPE", why, 0.0)
            if on_row:
                on_row(rows[i])
        else:
            todo.append((i, rel, s))
    lock = threading.Lock()

    def work(part):
        reqs = [RunRequest(str(s.root), chip=chip, timeout_s=timeout_s) for _i, _r, s in part]
        t = time.perf_counter()
        for (i, rel, _s), res in zip(part, run_isolated(reqs, timeout_s, memory_mb)):
            status, reason = classify(res.report)
            if res.exit.status not in ("ok", "raised"):  # the worker died or timed out
                status, reason = Verdict.ERROR, res.exit.cause
            now = time.perf_counter()
            row = Row(rel, str(status), reason, now - t)
            t = now
            with lock:
                rows[i] = row
                if on_row:
                    on_row(row)

    threads = [threading.Thread(target=work, args=(todo[k::jobs],)) for k in range(max(jobs, 1))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return [rows[i] for i in sorted(rows)]


def exit_code(rows: list[Row]) -> int:
    """0 when every row is ok (`Verdict.ok`: PASS, RAN) or out of scope, else 1 (UNSUPPORTED too)."""
    verdicts = {v.value: v for v in Verdict}

    def code(status: str) -> int:
        if status == OUT_OF_SCOPE:
            return 0
        return verdicts[status].exit_code if status in verdicts else 1

    return max((code(r.status) for r in rows), default=0)


def counts(rows: list[Row]) -> dict[str, int]:
    return {s: sum(1 for r in rows if r.status == s) for s in STATUSES}


def pass_rate(rows: list[Row]) -> tuple[int, int]:
    """(PASS rows, rows that count): OUT OF SCOPE samples do not count."""
    counted = [r for r in rows if r.status != "OUT OF SCOPE"]
    return sum(1 for r in counted if r.status == "PASS"), len(counted)


def rate_line(rows: list[Row]) -> str:
    passed, counted = pass_rate(rows)
    pct = 100.0 * passed / counted if counted else 0.0
    return f"in scope: PASS {passed}/{counted} = {pct:.1f}% (OUT OF SCOPE samples not counted)"


def to_json(rows: list[Row], scoped: bool = False) -> dict:
    out = {"samples": [asdict(r) for r in rows], "counts": counts(rows)}
    if scoped:
        passed, counted = pass_rate(rows)
        out["scope"] = {
            "pass": passed,
            "counted": counted,
            "percent": 100.0 * passed / counted if counted else 0.0,
        }
    return out


def to_markdown(rows: list[Row]) -> str:
    out = ["| sample | status | reason | time (s) |", "|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r.sample} | {r.status} | {r.reason.replace('|', '/')} | {r.seconds:.2f} |")
    c = counts(rows)
    out.append("")
    out.append(", ".join(f"{k}: {v}" for k, v in c.items()) + f" (of {len(rows)})")
    return "\n".join(out)
