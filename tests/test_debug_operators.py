"""Every correct bundled operator is clean under all four tools (found dynamically: operators are
being added), and every teaching case under operators/bugs/ is caught by the tool it teaches."""

from __future__ import annotations

from pathlib import Path

import pytest

from asc_tui.devkit.debug.debugger import DebugRequest, debug

REPO = Path(__file__).resolve().parents[1]
CORRECT = sorted(p for p in (REPO / "operators").glob("*.py") if not p.stem.startswith("_"))


@pytest.mark.parametrize("path", CORRECT, ids=[p.stem for p in CORRECT])
def test_bundled_operator_has_zero_reports_under_every_tool(path):
    rep = debug(DebugRequest(str(path)))
    assert rep.errors == (), [e.format() for e in rep.errors]
    assert rep.findings == (), [f.format() for f in rep.findings]
    assert rep.clean


def test_distributed_operator_passes_the_deadlock_check():
    rep = debug(DebugRequest("allreduce_sum", tools=(), deadlock_check=True, ranks=4))
    assert rep.deadlock.outcome == "ok" and rep.clean


@pytest.mark.parametrize(
    "name, tools, kind",
    [
        ("add_tail_oob", ("memcheck",), "out-of-bounds"),
        ("double_buffer_race", ("racecheck",), "race-raw"),
        ("clobber_input", ("initcheck",), "uninitialized"),
        ("clobber_input", ("memcheck",), "input-overwrite"),
    ],
)
def test_teaching_case_is_caught_by_its_tool(name, tools, kind):
    rep = debug(DebugRequest(str(REPO / "operators" / "bugs" / f"{name}.py"), tools=tools))
    assert [f.kind for f in rep.findings] == [kind]


def test_teaching_cases_are_not_bundled_operators():
    assert not any(p.parent.name == "bugs" for p in CORRECT)
    assert len(list((REPO / "operators" / "bugs").glob("*.py"))) >= 4
