"""The one outcome rule: what a report's verdict is, and the exit code that follows from it.

Every front end (the CLI's summary line and exit status, the JSON, the workbench's marks and
status bar, watch, conformance, asc-debug) asks this module instead of deciding on its own, so a
report reads the same everywhere. What each verdict means is written once, below.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (the reports' modules import this one: no import at run time)
    from .debug.debugger import DebugReport
    from .run.runner import RunReport


class Verdict(StrEnum):
    """The closed set of outcomes; the value is the word every front end prints."""

    PASS = "PASS"
    """It ran, it was checked, and nothing was found: the outputs match the golden reference
    within the thresholds (or a sample's own verify script, or main() itself, says they do) and
    no sanitizer tool reported anything."""

    WARN = "WARN"
    """It ran and nothing is broken, but a check fell short of its threshold: the outputs are
    close to the golden reference (cosine in [0.99, 0.999), or elements beyond atol + rtol·|golden|)
    without being wrong. Worth a look; a check run fails on it, but its timing still counts
    (bench, tune)."""

    FAIL = "FAIL"
    """It ran and a check found a bug: a sanitizer finding, outputs that do not match the golden
    reference (or NaN/Inf the golden does not have), a sample's verify script or main() saying
    the output is wrong, or ranks that deadlock."""

    ERROR = "ERROR"
    """It could not be judged: the build failed, the run stopped on an error no sanitizer tool
    explains, it timed out, or the worker died."""

    RAN = "RAN"
    """It ran to the end but nothing was checked (timing-only emulation, no sanitizer tool, no
    precision check, no golden reference), so there is nothing to pass or fail."""

    @property
    def ok(self) -> bool:
        """Whether a check run succeeds: PASS and RAN do, everything else does not."""
        return self in (Verdict.PASS, Verdict.RAN)

    @property
    def usable(self) -> bool:
        """Whether the run's figures count (bench rows, tuner candidates): it ran to the end and
        its outputs are not wrong, i.e. PASS, WARN or RAN."""
        return self in (Verdict.PASS, Verdict.WARN, Verdict.RAN)

    @property
    def exit_code(self) -> int:
        """The command's exit status: 0 when `ok`, else 1 (2 is kept for bad arguments)."""
        return 0 if self.ok else 1


#: Error kinds that are a check's answer about the output, not a failure to run: a sample's
#: verify script failed, main() returned non-zero, output.bin does not match golden.bin's size.
_CHECK_ERRORS = frozenset({"verify", "exit", "precision"})


def outcome(report: RunReport | DebugReport | None) -> Verdict:
    """The verdict of a run report (`asc-tui run`, a sample directory's run, the workbench's),
    or of an `asc-debug` report; None (no report: the worker died) is ERROR."""
    if report is None:
        return Verdict.ERROR
    if hasattr(report, "findings"):
        return _debug_outcome(report)
    return _run_outcome(report)


def _run_outcome(report: RunReport) -> Verdict:
    """An error a check raised is FAIL, any other error ERROR; then the precision check
    decides; unchecked, a sample is PASS when its verify script or main() said so, and anything
    else is RAN."""
    if report.errors:
        if any(e.kind in _CHECK_ERRORS for e in report.errors):
            return Verdict.FAIL
        return Verdict.ERROR
    if report.emulation is None:  # (no error: a sample's main() ran but launched no kernel)
        return Verdict.FAIL if report.sample is not None else Verdict.ERROR
    if report.precision is not None:
        return Verdict(report.precision.verdict)
    sample = report.sample
    if sample is not None and (sample.verify is not None or _main_says_pass(sample.stdout or "")):
        return Verdict.PASS  # (a failed verify script is an error: FAIL above)
    return Verdict.RAN


def _main_says_pass(stdout: str) -> bool:
    """A sample without a golden file that checks itself: main() prints "pass" and no "fail"."""
    out = stdout.lower()
    return re.search(r"\b(test )?pass(ed)?\b", out) is not None and re.search(r"\bfail", out) is None


def _debug_outcome(report: DebugReport) -> Verdict:
    """The verdict of an `asc-debug` run, from its sanitizer findings, errors, precision result
    and deadlock check.

    Findings are bugs even when the run also stopped (a guard rail a tool explains is a finding),
    so they are looked at first; an error no tool explains is ERROR; then the precision check
    (FAIL or WARN as `devkit.precision` decides; asked for but not reached is ERROR; a sample's
    is its own verify script's or main()'s, as in `asc-tui run`) and the ranks
    (a deadlock, mismatch or wrong ranks' results is FAIL, a rank that errs or runs away is
    ERROR).
    """
    if report.findings:
        return Verdict.FAIL
    if report.errors:  # (a sample's own check of its output is there only when precision is asked)
        if any(e.kind in _CHECK_ERRORS for e in report.errors):
            return Verdict.FAIL
        return Verdict.ERROR
    dl = report.deadlock
    if dl is not None and not dl.ok:
        return Verdict.ERROR if dl.outcome in ("error", "timeout") else Verdict.FAIL
    if dl is not None and dl.precision is not None and dl.precision.verdict == "WARN":
        return Verdict.WARN  # (the ranks' results: close, not wrong)
    if report.precision_checked:
        sample = report.run.sample if report.run is not None else None
        if report.precision is None and sample is not None:
            v = _run_outcome(report.run)  # a sample's check is its own (verify script, main())
            return Verdict.PASS if v is Verdict.RAN and report.tools else v
        if report.precision is None:
            return Verdict.ERROR
        if report.precision.verdict in ("FAIL", "WARN"):
            return Verdict(report.precision.verdict)
    if not (report.tools or report.precision_checked or dl is not None):
        return Verdict.RAN
    return Verdict.PASS
