"""One regression rule: every front end gives a slowdown the same sign and the same threshold."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from benchkit import rec

from asc_tui.config import Thresholds as ConfigThresholds
from asc_tui.devkit.bench.figures import Thresholds, change
from asc_tui.devkit.bench.regression import (
    DEFAULT_THRESHOLD,
    Mark,
    is_regression,
    mark,
    slowdown,
    slowdown_text,
)
from asc_tui.devkit.present.bench import bench_row_cells, change_text
from asc_tui.devkit.run.discovery import declared_cases, find_operators


def test_a_slowdown_is_positive_and_says_slower():
    assert slowdown(10.62, 10.0) == pytest.approx(0.062)
    assert slowdown_text(slowdown(10.62, 10.0)) == "+6.2% slower"
    assert slowdown_text(slowdown(9.42, 10.0)) == "-5.8% faster"
    assert slowdown_text(slowdown(10.0, 10.0)) == "0.0%"


def test_the_bench_table_and_the_workbench_row_agree_on_the_sign():
    c = SimpleNamespace(change=change(rec(10.62), rec(10.0), 0.01))
    cells = dict(
        zip(
            ("op", "case", "cur", "delta"),
            bench_row_cells("op", "default", "chip", 10.62, None, 10.0, "", [], 0.01),
        )
    )
    assert change_text(c) == "+ +6.2% slower"
    assert cells["delta"] == "+6.2% !"


def test_the_threshold_decides_and_is_the_configs_by_default():
    assert DEFAULT_THRESHOLD == ConfigThresholds().regression == Thresholds().regression
    assert is_regression(10.5, 10.0, 0.01) and not is_regression(10.5, 10.0, 0.10)
    cells = bench_row_cells("op", "default", "chip", 10.5, None, 10.0, "", [], 0.10)
    assert cells[3] == "+5.0%"


def test_marks_follow_asv_compare():
    assert mark(10.2, 10.0, 0.01) is Mark.SLOWER
    assert mark(9.8, 10.0, 0.01) is Mark.FASTER
    assert mark(10.05, 10.0, 0.01) is Mark.SAME
    assert mark(None, 10.0, 0.01) is Mark.FAILING
    assert mark(10.0, None, 0.01) is Mark.NO_PREVIOUS


def test_the_workbench_classifies_with_the_same_rule():
    from asc_tui.tui.state import classify

    emulation = SimpleNamespace(time_us=10.5)
    res = SimpleNamespace(report=SimpleNamespace(emulation=emulation, errors=(), precision=None))
    assert classify(res, 10.0, 0.01) == "regression"
    assert classify(res, 10.0, 0.10) == "pass"


def test_discovery_finds_operators_and_reads_cases_without_running_them(tmp_path):
    (tmp_path / "_helper.py").write_text("")
    (tmp_path / "b.py").write_text('raise SystemExit\nCASES = {"small": {}, "big": {}}\n')
    (tmp_path / "a.py").write_text("")
    assert [p.name for p in find_operators(tmp_path)] == ["a.py", "b.py"]
    assert declared_cases(tmp_path / "b.py") == ["small", "big"]
