"""The one outcome rule (`devkit.outcome`): which verdict a debug report gets, and its exit code."""

from __future__ import annotations

import inspect
from dataclasses import replace

import numpy as np
import pytest

from asc_tui.devkit.debug.deadlock_report import DeadlockReport, Outcome
from asc_tui.devkit.debug.debugger import DebugReport
from asc_tui.devkit.debug.sanitizer import Finding
from asc_tui.devkit.outcome import Verdict, outcome
from asc_tui.devkit.precision import PrecisionReport, compare
from asc_tui.npu.errors import ErrorInfo

GOOD = compare("y", np.ones(64, np.float32), np.ones(64, np.float32))
NAN = compare("y", np.full(64, np.nan, np.float32), np.ones(64, np.float32))
CLOSE = compare("y", np.ones(64, np.float32) + 2e-3, np.ones(64, np.float32))  # cosine 1, beyond atol
BASE = DebugReport(
    operator="op",
    path=None,
    case="default",
    tools=("memcheck",),
    findings=(),
    errors=(),
    precision=None,
    deadlock=None,
    run=None,
    seconds=0.0,
)


def _deadlock(kind: Outcome) -> DeadlockReport:
    return DeadlockReport("op", "default", 2, 5.0, kind, None, "", (), None, 0.0)


@pytest.mark.parametrize(
    "changes, verdict",
    [
        ({}, Verdict.PASS),
        ({"findings": (Finding("memcheck", "out-of-bounds", "op.py", 3, "oob"),)}, Verdict.FAIL),
        ({"errors": (ErrorInfo("kernel", "boom"),)}, Verdict.ERROR),
        ({"precision_checked": True, "precision": PrecisionReport((GOOD,))}, Verdict.PASS),
        ({"precision_checked": True, "precision": PrecisionReport((NAN,))}, Verdict.FAIL),
        ({"precision_checked": True, "precision": PrecisionReport((CLOSE,))}, Verdict.WARN),
        ({"precision_checked": True, "precision": None}, Verdict.ERROR),  # asked, never reached
        ({"precision": PrecisionReport((NAN,))}, Verdict.PASS),  # not asked: not judged
        ({"deadlock": _deadlock(Outcome.DEADLOCK)}, Verdict.FAIL),
        ({"deadlock": _deadlock(Outcome.TIMEOUT)}, Verdict.ERROR),
        ({"deadlock": _deadlock(Outcome.OK), "tools": ()}, Verdict.PASS),
        ({"tools": ()}, Verdict.RAN),
    ],
)
def test_debug_verdict(changes, verdict):
    assert outcome(replace(BASE, **changes)) is verdict


def test_a_finding_outranks_the_error_it_stopped_the_run_with():
    rep = replace(
        BASE, findings=(Finding("memcheck", "oob", "op.py", 3, "oob"),), errors=(ErrorInfo("k", "x"),)
    )
    assert outcome(rep) is Verdict.FAIL


@pytest.mark.parametrize("v", list(Verdict))
def test_exit_code_is_zero_only_for_pass_and_ran(v):
    assert v.exit_code == (0 if v in (Verdict.PASS, Verdict.RAN) else 1)
    assert str(v) == v.value == v.name


def test_every_verdict_has_a_docstring_saying_what_it_means():
    src = inspect.getsource(Verdict)
    assert all(f'{v.name} = "{v.value}"\n    """' in src for v in Verdict)
