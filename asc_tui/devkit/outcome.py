"""The one outcome rule: what a report's verdict is, and the exit code that follows from it.

Every front end (the CLI's summary line and exit status, the JSON, the workbench) asks this module
instead of deciding on its own, so a report reads the same everywhere. For now it decides the
`asc-debug` verdict; other reports are meant to get their rule here too.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (debug.py imports this module: no import at run time)
    from .debug.debugger import DebugReport


class Verdict(StrEnum):
    """The closed set of outcomes; the value is the word every front end prints."""

    PASS = "PASS"
    """It ran, it was checked, and nothing was found: the outputs match the golden reference
    within the thresholds and no sanitizer tool reported anything."""

    WARN = "WARN"
    """It ran and nothing is broken, but a check fell short of its threshold: the outputs are
    close to the golden reference (cosine in [0.99, 0.999), or elements beyond atol + rtol·|golden|)
    without being wrong. Worth a look; a check run fails on it."""

    FAIL = "FAIL"
    """It ran and a check found a bug: a sanitizer finding, outputs that do not match the golden
    reference (or NaN/Inf the golden does not have), or ranks that deadlock."""

    ERROR = "ERROR"
    """It could not be judged: the build failed, the run stopped on an error no sanitizer tool
    explains, it timed out, or the worker died."""

    RAN = "RAN"
    """It ran to the end but nothing was checked (no sanitizer tool, no precision check, no golden
    reference), so there is nothing to pass or fail."""

    def __str__(self) -> str:
        return self.value

    @property
    def ok(self) -> bool:
        """Whether a check run succeeds: PASS and RAN do, everything else does not."""
        return self in (Verdict.PASS, Verdict.RAN)

    @property
    def exit_code(self) -> int:
        """The command's exit status: 0 when `ok`, else 1 (2 is kept for bad arguments)."""
        return 0 if self.ok else 1


def outcome(report: DebugReport) -> Verdict:
    """The verdict of an `asc-debug` run, from its sanitizer findings, errors, precision result
    and deadlock check.

    Findings are bugs even when the run also stopped (a guard rail a tool explains is a finding),
    so they are looked at first; an error no tool explains is ERROR; then the precision check
    (FAIL or WARN as `devkit.precision` decides; asked for but not reached is ERROR) and the ranks
    (a deadlock, mismatch or wrong ranks' results is FAIL, a rank that errs or runs away is
    ERROR).
    """
    if report.findings:
        return Verdict.FAIL
    if report.errors:
        return Verdict.ERROR
    dl = report.deadlock
    if dl is not None and not dl.ok:
        return Verdict.ERROR if dl.outcome in ("error", "timeout") else Verdict.FAIL
    if report.precision_checked:
        if report.precision is None:
            return Verdict.ERROR
        if report.precision.verdict in ("FAIL", "WARN"):
            return Verdict(report.precision.verdict)
    if not (report.tools or report.precision_checked or dl is not None):
        return Verdict.RAN
    return Verdict.PASS
