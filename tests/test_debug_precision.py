"""--precision-check: exact figures for known errors, NaN/Inf counted, thresholds per dtype and
per operator, the worst elements listed."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from debug_ops import COPY, source
from hypothesis import given, settings
from hypothesis import strategies as st

from asc_tui.ascendc.dtypes import as_dtype
from asc_tui.devkit.debug.debugger import DebugRequest, debug
from asc_tui.devkit.precision import CHUNK, compare

BUGS = Path(__file__).resolve().parents[1] / "operators" / "bugs"


def test_one_wrong_element_gives_exact_errors_cosine_and_worst_element():
    want = np.array([1, 2, 3, 4], np.float32)
    got = np.array([1, 2, 3, 4.5], np.float32)
    o = compare("y", got, want)
    assert o.max_abs_error == 0.5
    assert o.mean_rel_error == pytest.approx(0.5 / 4 / 4)
    assert o.cosine_similarity == pytest.approx(32 / math.sqrt(30 * 34.25))
    assert o.verdict == "WARN"  # cosine 0.99826 is in [0.99, 0.999)
    assert o.worst == [(3, 4.5, 4.0)]


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(st.integers(1, 3000), st.sampled_from([CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 3])),
    st.lists(st.tuples(st.floats(0, 1), st.sampled_from([np.nan, np.inf, -np.inf, 70000.0])), max_size=4),
    st.sampled_from([np.float16, "bfloat16", np.float32]),
    st.integers(0, 2**32 - 1),
)
def test_figures_over_many_chunks_equal_one_plain_pass(n, bad, dtype, seed):
    """Whatever the size (chunk edges), dtype and the odd NaN/Inf (in the output or the
    golden: some chunks finite, some not), the figures are those of one float64 pass."""
    dt = np.dtype(as_dtype(dtype)) if isinstance(dtype, str) else np.dtype(dtype)
    rng = np.random.default_rng(seed)
    want = rng.standard_normal(n).astype(dt)
    got = (want.astype(np.float64) * (1 + rng.uniform(-1e-3, 1e-3, n))).astype(dt)
    with np.errstate(over="ignore"):  # (70000 is Inf in fp16 and bf16's neighbours)
        for where, value in bad:
            (got if where < 0.5 else want)[int(where * (n - 1))] = value
    o = compare("y", got, want)
    g, w = got.astype(np.float64), want.astype(np.float64)
    assert (o.nan, o.inf) == (np.isnan(g).sum(), np.isinf(g).sum())
    both = np.isfinite(g) & np.isfinite(w)
    diff = np.abs(g - w)[both]
    rel = diff / np.maximum(np.abs(w[both]), 1e-6)
    if both.all():
        assert o.max_abs_error == pytest.approx(diff.max(), rel=1e-6)
        assert o.mean_rel_error == pytest.approx(rel.mean(), rel=1e-5)
        cos = np.dot(g, w) / np.sqrt(np.dot(g, g) * np.dot(w, w))
        assert o.cosine_similarity == pytest.approx(cos, rel=1e-9)
        assert o.within_threshold == bool(np.all(diff <= o.atol + o.rtol * np.abs(w)))
        worst = sorted(range(n), key=lambda i: -abs(g[i] - w[i]))[:5]
        assert sorted(abs(g[i] - w[i]) for i, _, _ in o.worst) == sorted(
            abs(g[i] - w[i]) for i in worst if g[i] != w[i]
        )
    elif (~np.isfinite(g) & ~((g == w) | (np.isnan(g) & np.isnan(w)))).any():
        assert o.verdict == "FAIL" and o.cosine_invalid  # NaN/Inf where the golden has none


def test_finite_values_whose_difference_overflows_keep_it_out_of_the_mean_relative_error():
    got, want = np.array([1e308, 1.0, 2.0]), np.array([-1e308, 1.0, 2.5])
    with np.errstate(all="ignore"):  # (the overflows themselves)
        o = compare("y", got, want)
    assert o.max_abs_error == np.inf and o.mean_rel_error == pytest.approx(0.1)  # (0 + 0.2) / 2


def test_cosine_below_099_fails():
    want = np.array([1, 0, 0, 0], np.float32)
    got = np.array([1, 0.2, 0, 0], np.float32)
    o = compare("y", got, want)
    assert o.cosine_similarity == pytest.approx(1 / math.sqrt(1.04))
    assert o.verdict == "FAIL"


def test_nan_and_inf_are_counted_fail_and_lead_the_worst_list():
    want = np.ones(6, np.float16)
    got = np.array([1, 1, np.nan, np.inf, 1, 1.5], np.float16)
    o = compare("y", got, want)
    assert (o.nan, o.inf, o.verdict) == (1, 1, "FAIL")
    assert {i for i, _, _ in o.worst[:2]} == {2, 3}
    assert o.worst[2] == (5, 1.5, 1.0)


def test_error_within_the_fp16_threshold_passes_and_just_outside_warns():
    want = np.full(64, 1.0, np.float16)
    ok = compare("y", want + np.float16(0.0009765625), want)  # 1 ulp at 1.0: 2^-10
    assert ok.within_threshold and ok.verdict == "PASS"
    off = compare("y", want + np.float16(0.0078125), want)
    assert not off.within_threshold and off.verdict == "WARN"
    assert off.max_abs_error == 0.0078125


def test_operator_precision_dict_overrides_the_dtype_threshold(write_operator):
    body = COPY.replace("AscendC.Adds(b, a, 0.0, N)", "AscendC.Adds(b, a, 0.015625, N)")
    strict = debug(DebugRequest(str(write_operator("off", source(body))), tools=(), precision_check=True))
    assert strict.precision.verdict != "PASS" and not strict.clean
    assert strict.precision.outputs[0].max_abs_error == pytest.approx(0.015625, abs=0.002)
    loose = source(body).replace("N = 1024", "N = 1024\nPRECISION = {'float16': (0.02, 0.01)}")
    rep = debug(DebugRequest(str(write_operator("off_ok", loose)), tools=(), precision_check=True))
    assert rep.precision.outputs[0].atol == 0.02
    assert rep.precision.verdict == "PASS" and rep.clean


def test_softmax_without_max_subtraction_overflows_fp16_and_fails():
    rep = debug(DebugRequest(str(BUGS / "softmax_no_max.py"), tools=(), precision_check=True))
    o = rep.precision.outputs[0]
    assert o.verdict == "FAIL" and o.nan > 0
    assert all(math.isnan(got) for _, got, _ in o.worst)
    assert not rep.clean


def test_nan_output_never_reads_as_a_perfect_cosine():
    want = np.ones(8, np.float16)
    got = np.array([1, 1, 1, 1, np.nan, np.nan, np.inf, 1], np.float16)
    o = compare("y", got, want)
    assert (o.nan, o.inf) == (2, 1)
    assert math.isnan(o.cosine_similarity) and "2 NaN and 1 Inf" in o.cosine_invalid
    assert o.verdict == "FAIL" and "NaN" in o.reason
    d = o.to_dict()
    assert list(d)[:4] == ["name", "dtype", "nan", "inf"]  # counts first
    assert d["cosine_similarity"] is None and d["cosine_invalid"]


def test_nan_run_json_has_null_cosine_and_a_reason_and_is_valid_json():
    import json
    import subprocess
    import sys

    p = subprocess.run(
        [sys.executable, "-m", "asc_tui", "run", str(BUGS / "softmax_no_max.py"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 1
    prec = json.loads(p.stdout, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))["precision"]
    assert prec["nan"] + prec["inf"] > 0
    assert prec["cosine_similarity"] is None and prec["cosine_invalid"]
    assert prec["verdict"] == "FAIL" and ("NaN" in prec["reason"] or "Inf" in prec["reason"])


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.mark.parametrize("tools", [(), ("memcheck", "initcheck")])
def test_precision_check_names_the_instruction_that_first_made_inf(tools):
    path = BUGS / "softmax_no_max.py"
    rep = debug(DebugRequest(str(path), tools=tools, precision_check=True))
    o = rep.nonfinite
    assert (o.op, o.file, o.line, o.block, o.value) == (
        "Exp",
        str(path),
        _line_of(path, "AscendC.Exp("),
        0,
        "inf",
    )
    assert not o.from_input
    assert rep.to_dict()["nonfinite_origin"]["message"].startswith(
        "Exp overflowed to inf at softmax_no_max.py:"
    )


def test_asc_debug_prints_where_the_nan_came_from():
    import subprocess
    import sys

    path = BUGS / "softmax_no_max.py"
    p = subprocess.run(
        [sys.executable, "-m", "asc_tui", "debug", str(path), "--precision-check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 1
    line = _line_of(path, "AscendC.Exp(")
    assert f"Exp overflowed to inf at softmax_no_max.py:{line}, block 0, element " in p.stdout


def test_a_clean_run_names_no_nan_origin(write_operator):
    rep = debug(DebugRequest(str(write_operator("copy", source(COPY))), tools=(), precision_check=True))
    assert rep.precision.verdict == "PASS" and rep.nonfinite is None
