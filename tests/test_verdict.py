"""The one outcome rule (`devkit.outcome`): each verdict of a run report, of a sample's run and
of a debug report, and what the front ends do with it (exit codes, marks, conformance rows)."""

from __future__ import annotations

import inspect
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from asc_tui.devkit.conformance import Row, exit_code
from asc_tui.devkit.debug.deadlock_report import DeadlockReport, Outcome
from asc_tui.devkit.debug.debugger import DebugReport
from asc_tui.devkit.debug.sanitizer import Finding
from asc_tui.devkit.outcome import Verdict, outcome
from asc_tui.devkit.precision import PrecisionReport, compare
from asc_tui.devkit.run.runner import RunReport, Stage
from asc_tui.devkit.run.worker import WorkResult, WorkStatus
from asc_tui.devkit.samples.result import SampleRun
from asc_tui.npu.errors import ErrorInfo
from asc_tui.tui.state import Status, classify

ONES = np.ones(64, np.float32)
GOOD = PrecisionReport((compare("y", ONES, ONES),))
CLOSE = PrecisionReport((compare("y", ONES + 2e-3, ONES),))  # cosine 1, beyond atol: WARN
NAN = PrecisionReport((compare("y", np.full(64, np.nan, np.float32), ONES),))
WRONG = PrecisionReport((compare("y", -ONES, ONES),))
EMULATED = SimpleNamespace(time_us=10.0)  # (the rule asks only whether the run reached the emulator)
RUN = RunReport(
    "op", "op.py", "default", "ascend910b", {}, 1, (Stage("build", 0.0, True),), EMULATED, GOOD, ()
)
SAMPLE = replace(RUN, precision=None, sample=SampleRun(launches=({},)))


@pytest.mark.parametrize(
    "changes, verdict",
    [
        ({}, Verdict.PASS),
        ({"precision": CLOSE}, Verdict.WARN),
        ({"precision": NAN}, Verdict.FAIL),
        ({"precision": WRONG}, Verdict.FAIL),
        ({"precision": None}, Verdict.RAN),  # timing-only: nothing checked
        ({"errors": (ErrorInfo("build", "no kernel"),)}, Verdict.ERROR),
        ({"errors": (ErrorInfo("kernel", "out of UB"),), "precision": None}, Verdict.ERROR),
        ({"emulation": None, "precision": None}, Verdict.ERROR),
    ],
)
def test_run_verdict(changes, verdict):
    assert outcome(replace(RUN, **changes)) is verdict
    assert replace(RUN, **changes).verdict is verdict


@pytest.mark.parametrize(
    "changes, sample, verdict",
    [
        ({}, {"verify": {"exit": 0, "output": "test pass!"}}, Verdict.PASS),
        ({"precision": CLOSE}, {"verify": {"exit": 0, "output": ""}}, Verdict.WARN),
        ({}, {"stdout": "result: test pass"}, Verdict.PASS),  # main() checks itself
        ({}, {"stdout": "pass 1, fail 2"}, Verdict.RAN),
        ({}, {}, Verdict.RAN),  # no golden, no verify script
        ({"errors": (ErrorInfo("verify", "verify_result.py failed (exit 1)"),)}, {}, Verdict.FAIL),
        ({"errors": (ErrorInfo("exit", "main() returned 3"),)}, {}, Verdict.FAIL),
        ({"errors": (ErrorInfo("build", "gen_data.py failed"),)}, {}, Verdict.ERROR),
        ({"emulation": None}, {"launches": []}, Verdict.FAIL),  # main() launched no kernel
    ],
)
def test_sample_verdict(changes, sample, verdict):
    rep = replace(SAMPLE, **changes, sample=replace(SAMPLE.sample, **sample))
    assert outcome(rep) is verdict


def test_no_report_is_an_error():
    assert outcome(None) is Verdict.ERROR


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


def _deadlock(kind: Outcome, precision=None) -> DeadlockReport:
    return DeadlockReport("op", "default", 2, 5.0, kind, None, "", (), precision, 0.0)


@pytest.mark.parametrize(
    "changes, verdict",
    [
        ({}, Verdict.PASS),
        ({"findings": (Finding("memcheck", "out-of-bounds", "op.py", 3, "oob"),)}, Verdict.FAIL),
        ({"errors": (ErrorInfo("kernel", "boom"),)}, Verdict.ERROR),
        ({"precision_checked": True, "precision": GOOD}, Verdict.PASS),
        ({"precision_checked": True, "precision": NAN}, Verdict.FAIL),
        ({"precision_checked": True, "precision": CLOSE}, Verdict.WARN),
        ({"precision_checked": True, "precision": None}, Verdict.ERROR),  # asked, never reached
        ({"precision": NAN}, Verdict.PASS),  # not asked: not judged
        ({"deadlock": _deadlock(Outcome.DEADLOCK)}, Verdict.FAIL),
        ({"deadlock": _deadlock(Outcome.TIMEOUT)}, Verdict.ERROR),
        ({"deadlock": _deadlock(Outcome.OK, CLOSE)}, Verdict.WARN),  # the ranks' results are close
        ({"deadlock": _deadlock(Outcome.OK), "tools": ()}, Verdict.PASS),
        ({"tools": ()}, Verdict.RAN),
    ],
)
def test_debug_verdict(changes, verdict):
    rep = replace(BASE, **changes)
    assert outcome(rep) is verdict and rep.verdict is verdict and rep.clean == verdict.ok


@pytest.mark.parametrize("v", list(Verdict))
def test_exit_code_is_zero_only_for_pass_and_ran(v):
    assert v.exit_code == (0 if v in (Verdict.PASS, Verdict.RAN) else 1)
    assert str(v) == v.value == v.name


def test_warn_fails_a_check_but_its_timing_still_counts():
    """The runner let WARN pass and the workbench marked it FAIL: now both ask the verdict."""
    warn = replace(RUN, precision=CLOSE)
    assert not warn.passed and warn.ok  # exit 1, yet a bench row / tuner candidate
    assert not replace(RUN, precision=WRONG).ok


def test_every_verdict_has_a_docstring_saying_what_it_means():
    src = inspect.getsource(Verdict)
    assert all(f'{v.name} = "{v.value}"\n    """' in src for v in Verdict)


@pytest.mark.parametrize(
    "precision, status",
    [(GOOD, Status.PASS), (CLOSE, Status.WARN), (NAN, Status.FAIL), (None, Status.PASS)],
)
def test_the_workbench_mark_is_the_verdict(precision, status):
    res = WorkResult(None, WorkStatus.OK, replace(RUN, precision=precision), None, 0.1)
    assert classify(res, None, 0.05) is status


def test_the_workbench_marks_a_dead_worker_as_error():
    assert classify(WorkResult(None, WorkStatus.CRASHED, None, None, 0.1), None, 0.05) is Status.ERROR


@pytest.mark.parametrize(
    "statuses, code",
    [
        (["PASS", "RAN", "OUT OF SCOPE"], 0),
        (["PASS", "WARN"], 1),  # conformance used to count WARN as PASS
        (["PASS", "UNSUPPORTED"], 1),
        (["ERROR"], 1),
    ],
)
def test_conformance_exit_code_follows_the_verdicts(statuses, code):
    assert exit_code([Row(f"s{i}", s, "", 0.0) for i, s in enumerate(statuses)]) == code
