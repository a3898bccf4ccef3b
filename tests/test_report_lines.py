"""The one report presenter (`devkit.present.report_lines`): NaN, Inf and missing figures read
'nan', 'inf' and 'n/a', never a crash; the lines carry levels and the user's file and line."""

from __future__ import annotations

import math

import numpy as np
import pytest

from asc_tui.devkit.outcome import Verdict
from asc_tui.devkit.precision import NonFiniteOrigin, OutputPrecision, PrecisionReport, compare
from asc_tui.devkit.present.report_lines import (
    Level,
    error_lines,
    output_lines,
    plain,
    precision_line,
    report_lines,
    sample_lines,
    work_lines,
)
from asc_tui.devkit.run.runner import RunReport, Stage
from asc_tui.devkit.run.worker import WorkResult, WorkStatus
from asc_tui.devkit.samples.result import SampleRun
from asc_tui.devkit.text import figure, us_text
from asc_tui.npu.errors import ErrorInfo


def _output(max_abs, mean_rel, cosine, nan=0, inf=0, verdict="FAIL", invalid=None, worst=()):
    return OutputPrecision(
        "y",
        "float16",
        max_abs,
        mean_rel,
        cosine,
        False,
        1e-3,
        1e-3,
        nan,
        inf,
        verdict,
        list(worst),
        "why",
        invalid,
    )


@pytest.mark.parametrize(
    "x, spec, text",
    [
        (None, ".3g", "n/a"),
        (math.nan, ".3g", "nan"),
        (math.inf, ".6f", "inf"),
        (-math.inf, ".6f", "-inf"),
        (np.float16(np.inf), ".3g", "inf"),
        (np.float32(np.nan), ".3g", "nan"),
        (0.5, ".3g", "0.5"),
        (7, "d", "7"),
    ],
)
def test_a_figure_that_is_nan_inf_or_missing_reads_as_such(x, spec, text):
    assert figure(x, spec) == text


def test_a_duration_that_is_nan_or_missing_reads_as_such():
    assert (us_text(None), us_text(math.nan), us_text(math.inf), us_text(12.5)) == (
        "n/a",
        "nan",
        "inf",
        "12.500 µs",
    )


def test_the_precision_line_of_a_nan_output_counts_the_nan_and_says_cosine_nan():
    got = np.full(64, np.nan, np.float16)
    line = precision_line(PrecisionReport((compare("y", got, np.ones(64, np.float16)),)))
    assert line.level is Level.ERROR
    assert line.text.startswith("precision FAIL: NaN 64, Inf 0, max abs err inf, mean rel err ")
    assert "cosine nan (64 NaN in the output where the golden is finite)" in line.text


def test_the_precision_line_of_inf_figures():
    out = _output(
        math.inf, math.inf, math.nan, inf=3, invalid="Inf 3 in the output where the golden is finite"
    )
    text = precision_line(PrecisionReport((out,))).text
    assert text.startswith("precision FAIL: NaN 0, Inf 3, max abs err inf, mean rel err inf, cosine nan")


def test_the_precision_line_of_missing_figures_says_n_a():
    text = precision_line(PrecisionReport((_output(None, None, None, nan=None, inf=None),))).text
    assert text == "precision FAIL: NaN n/a, Inf n/a, max abs err n/a, mean rel err n/a, cosine n/a (why)"


def test_a_nan_figure_is_the_worst_of_several_outputs():
    a, b = _output(0.1, 0.1, 0.9999, verdict="PASS"), _output(math.nan, 0.2, 0.5)
    assert "max abs err nan" in precision_line(PrecisionReport((a, b))).text
    assert "max abs err nan" in precision_line(PrecisionReport((b, a))).text  # whatever the order


def test_output_lines_show_thresholds_reason_and_worst_elements_with_nan_inf_and_none():
    out = _output(math.inf, None, math.nan, nan=2, worst=[(3, math.nan, 1.0), (9, -math.inf, None)])
    lines = output_lines(out)
    assert lines[0].text == (
        "precision y (float16): FAIL  NaN 2, Inf 0, max abs err inf (atol 0.001, rtol 0.001), "
        "mean rel err n/a, cosine nan"
    )
    assert [ln.text for ln in lines[1:]] == ["why: why", "[3] got nan want 1", "[9] got -inf want n/a"]
    assert [ln.indent for ln in lines] == [0, 2, 2, 2]


def test_each_verdict_has_its_level():
    levels = {
        v: precision_line(PrecisionReport((_output(0.0, 0.0, 1.0, verdict=v.value),))).level
        for v in (Verdict.PASS, Verdict.WARN, Verdict.FAIL)
    }
    assert levels == {Verdict.PASS: Level.OK, Verdict.WARN: Level.WARN, Verdict.FAIL: Level.ERROR}


def test_a_report_with_every_field_missing_gives_lines():
    rep = RunReport("op", None, None, None, {}, None, (Stage("build", None, False, None),), None, None, ())
    texts = [ln.text for ln in report_lines(rep)]
    assert texts == ["ERR build          n/a ms", "verdict ERROR"]


def test_an_error_names_its_file_and_line_with_snippet_and_hint():
    e = ErrorInfo("tiling", "bad tile", "/x/op.py", 12, "use 256", "    TILE = 7")
    lines = error_lines(e)
    assert [(ln.text, ln.level, ln.file, ln.line, ln.indent) for ln in lines] == [
        ("tiling error: /x/op.py:12: bad tile", Level.ERROR, "/x/op.py", 12, 0),
        ("12 |     TILE = 7", Level.ERROR, "/x/op.py", 12, 2),
        ("hint: use 256", Level.DIM, None, None, 2),
    ]
    assert (
        plain(lines)
        == "  tiling error: /x/op.py:12: bad tile\n      12 |     TILE = 7\n      hint: use 256\n"
    )


def test_the_nan_origin_and_verdict_end_a_run_report():
    origin = NonFiniteOrigin("Exp", "/x/softmax.py", 64, 0, 2, "inf")
    nan = PrecisionReport((compare("y", np.full(8, np.nan, np.float16), np.ones(8, np.float16)),))
    rep = RunReport(
        "softmax", "/x/softmax.py", "default", "ascend910b", {}, 1, (), None, nan, (), nonfinite=origin
    )
    *_, first, verdict = report_lines(rep)
    assert (first.text, first.file, first.line) == (
        "first NaN/Inf: Exp overflowed to inf at softmax.py:64, block 0, element 2",
        "/x/softmax.py",
        64,
    )
    assert verdict.text == "verdict ERROR"  # (no emulation: the run never got that far)


def test_a_sample_shows_its_launches_main_and_verify_even_with_missing_figures():
    sample = SampleRun.of(
        {
            "launches": [{"kernel": "vadd", "line": 40, "blocks": 4, "time_us": None}],
            "stdout": "hello\n",
            "verify": {"exit": 1, "output": "error ratio 0.5\n"},
        }
    )
    lines = sample_lines(sample)
    assert [ln.text for ln in lines] == [
        "launch vadd (line 40): 4 blocks, n/a us",
        "main: hello",
        "verify_result.py: error ratio 0.5",
    ]
    assert lines[-1].level is Level.ERROR


def test_a_worker_that_died_without_a_report_says_how():
    dead = WorkResult(None, WorkStatus.TIMEOUT, None, None, 4.0)
    assert [(ln.text, ln.level) for ln in work_lines(dead)] == [("timeout", Level.ERROR)]
