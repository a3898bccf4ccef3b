"""Verdicts, change marks and roofline figures: the rules a reviewer reads in the bench table."""

from __future__ import annotations

import pytest
from benchkit import rec
from hypothesis import given
from hypothesis import strategies as st

from asc_tui.devkit.bench.figures import Thresholds, Verdict, change, verdict
from asc_tui.devkit.profile.roofline import cube_peak_flops, roofline, vector_peak_flops
from asc_tui.npu.chip import load_chip


@pytest.mark.parametrize(
    "relative, expected",
    [
        (1.20, Verdict.SHIP),
        (0.95, Verdict.SHIP),
        (0.95 - 1e-9, Verdict.OPTIMISE),
        (0.92, Verdict.OPTIMISE),
        (0.90, Verdict.OPTIMISE),
        (0.90 - 1e-9, Verdict.MUST_OPTIMISE),
        (0.10, Verdict.MUST_OPTIMISE),
    ],
)
def test_default_verdicts_at_their_boundaries(relative, expected):
    assert verdict(relative) is expected


def test_no_baseline_means_no_verdict():
    assert verdict(None) is None


def test_thresholds_are_configurable():
    th = Thresholds(ship=0.99, optimise=0.80)
    assert verdict(0.98, th) is Verdict.OPTIMISE
    assert verdict(0.99, th) is Verdict.SHIP
    assert verdict(0.80, th) is Verdict.OPTIMISE
    assert verdict(0.7999, th) is Verdict.MUST_OPTIMISE


@pytest.mark.parametrize(
    "kwargs",
    [dict(ship=0.8, optimise=0.9), dict(optimise=0.0), dict(regression=-0.1), dict(fail_on=("slow",))],
)
def test_inconsistent_thresholds_are_refused(kwargs):
    with pytest.raises(ValueError):
        Thresholds(**kwargs)


@given(st.floats(0.0, 3.0), st.floats(0.0, 3.0))
def test_verdict_never_gets_worse_when_relative_grows(a, b):
    order = {Verdict.MUST_OPTIMISE: 0, Verdict.OPTIMISE: 1, Verdict.SHIP: 2}
    lo, hi = sorted((a, b))
    assert order[verdict(lo)] <= order[verdict(hi)]


def test_change_marks_follow_asv_compare():
    th = 0.01
    assert change(rec(10.2), rec(10.0), th).mark == "+"
    assert change(rec(10.1), rec(10.0), th).mark == " "  # exactly 1% slower: not beyond
    assert change(rec(9.8), rec(10.0), th).mark == "-"
    assert change(rec(10.0), None, th).mark == "x"
    assert change(rec(None), rec(10.0), th).mark == "!"


def test_change_reports_a_slowdown_as_positive():
    c = change(rec(10.0 / 0.939), rec(10.0), 0.01)
    assert c.slowdown == pytest.approx(1 / 0.939 - 1)
    assert c.ratio == pytest.approx(1 / 0.939)
    assert c.previous_time_us == 10.0


def test_memory_roofline_is_bytes_over_hbm_bandwidth():
    chip = load_chip("ascend910b")
    r = roofline(chip, flops=0.0, nbytes=1_600_000, time_us=4.0, use_cube=False)
    assert r.memory_us == pytest.approx(1_600_000 / (chip.hbm_gbps * 1e3))
    assert r.bound == "memory" and r.fraction == pytest.approx(r.memory_us / 4.0)


def test_compute_roofline_uses_the_cube_peak_only_for_cube_kernels():
    chip = load_chip("ascend910b")
    cube = cube_peak_flops(chip)
    assert cube == pytest.approx(chip.aic * 4096 * 2 * chip.clock_mhz * 1e6)
    vec = vector_peak_flops(chip)
    assert vec < cube
    flops = 1e9
    assert roofline(chip, flops, 0, 1.0, use_cube=True).compute_us == pytest.approx(flops / cube * 1e6)
    r = roofline(chip, flops, 0, 1.0, use_cube=False)
    assert r.unit == "vector" and r.compute_us == pytest.approx(flops / vec * 1e6)
    assert r.bound == "compute"


def test_lines_that_only_moved_are_not_reported_as_changed():
    from dataclasses import replace

    from asc_tui.devkit.bench.compare import line_deltas
    from asc_tui.devkit.bench.history import LineCost

    before = replace(
        rec(10.0),
        lines=(LineCost("/p/op.py", 10, 500.0, "DataCopy(a)"), LineCost("/p/op.py", 11, 100.0, "Add(y)")),
    )
    after = replace(
        rec(12.0),
        lines=(
            LineCost("/p/op.py", 13, 500.0, "DataCopy(a)"),
            LineCost("/p/op.py", 14, 100.0, "Add(y)"),
            LineCost("/p/op.py", 15, 300.0, "Muls(y)"),
        ),
    )
    (d,) = line_deltas(after, before)
    assert (d.line, d.before_cycles, d.after_cycles) == (15, 0.0, 300.0)
