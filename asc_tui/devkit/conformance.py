"""`asc-tui conformance PATH`: run every sample directory under PATH and say how each fared.

Statuses: PASS (ran, verify passed), RAN (ran, no golden to check), UNSUPPORTED (a construct or
API the twin lacks, named with file:line), FAIL (wrong result or an error), OUT OF SCOPE (another
architecture, or the SIMT/register API). Samples run in worker processes (`jobs` at a time),
each with the usual timeout and memory cap.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..cxx.files import find_samples
from .isolated import run_isolated
from .runner import RunRequest
from .samples import out_of_scope

STATUSES = ("PASS", "RAN", "UNSUPPORTED", "FAIL", "OUT OF SCOPE")
_UNSUPPORTED = ("not supported yet", "unknown ", "no member", "has no ", "is not in the kernel API twin")


@dataclass(frozen=True)
class Row:
    sample: str  # path relative to the root
    status: str
    reason: str
    seconds: float


def classify(report) -> tuple[str, str]:
    """(status, reason) of one run report."""
    sample = report.sample or {}
    if sample.get("status") == "OUT OF SCOPE":
        return "OUT OF SCOPE", report.errors[0].message if report.errors else ""
    if report.errors:
        e = report.errors[0]
        where = f" ({Path(e.file).name}:{e.line})" if e.file and e.line else ""
        msg = e.message.splitlines()[0][:200] + where
        if any(k in e.message for k in _UNSUPPORTED) and e.kind != "verify":
            return "UNSUPPORTED", msg
        return "FAIL", msg
    if report.emulation is None and not sample.get("launches"):
        return "FAIL", "main() launched no kernel"
    if sample.get("exit_code"):
        return "FAIL", f"main() returned {sample['exit_code']}"
    v = sample.get("verify")
    if v is None:
        out = (sample.get("stdout") or "").lower()
        if re.search(r"\b(test )?pass(ed)?\b", out) and not re.search(r"\bfail", out):
            return "PASS", "verified by main() itself (no golden.bin)"
        return "RAN", "not checked: no golden"
    if v["exit"] != 0:
        return "FAIL", "verify_result.py failed"
    if report.precision is not None and report.precision.verdict == "FAIL":
        return "FAIL", f"precision: {report.precision.reason}"
    return "PASS", ""


def conformance(
    root: str | Path, timeout_s: float | None, memory_mb: int | None, jobs: int = 2, chip=None, on_row=None
) -> list[Row]:
    root = Path(root).absolute()
    samples = find_samples(root)
    rows: dict[int, Row] = {}
    todo = []
    for i, s in enumerate(samples):
        rel = str(s.root.relative_to(root)) if s.root != root else s.root.name
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
            if res.exit.status not in ("ok", "raised") and status != "FAIL":
                status, reason = "FAIL", res.exit.cause
            now = time.perf_counter()
            row = Row(rel, status, reason, now - t)
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


def counts(rows: list[Row]) -> dict[str, int]:
    return {s: sum(1 for r in rows if r.status == s) for s in STATUSES}


def to_json(rows: list[Row]) -> dict:
    return {"samples": [asdict(r) for r in rows], "counts": counts(rows)}


def to_markdown(rows: list[Row]) -> str:
    out = ["| sample | status | reason | time (s) |", "|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r.sample} | {r.status} | {r.reason.replace('|', '/')} | {r.seconds:.2f} |")
    c = counts(rows)
    out.append("")
    out.append(", ".join(f"{k}: {v}" for k, v in c.items()) + f" (of {len(rows)})")
    return "\n".join(out)
