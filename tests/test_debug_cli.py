"""`asc-tui debug` / `asc-debug`: the report text, --json, and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from asc_tui.cli import debug_main, main

BUGS = Path(__file__).resolve().parents[1] / "operators" / "bugs"


def test_clean_operator_exits_zero_and_says_pass(capsys):
    assert main(["debug", "vector_add_bias"]) == 0
    out = capsys.readouterr().out
    assert "PASS: 0 report(s), precision PASS" in out


def test_plain_debug_checks_precision_and_names_the_first_nan(capsys):
    """As in the asc-devkit workflow: `asc-debug OP` alone checks bounds and precision."""
    assert debug_main([str(BUGS / "softmax_no_max.py")]) == 1
    out = capsys.readouterr().out
    assert "memcheck, racecheck, initcheck, synccheck, precision" in out
    assert "precision y (float16): FAIL  NaN 668" in out
    assert "first NaN/Inf: Exp overflowed to inf at softmax_no_max.py:64, block 0" in out
    assert "FAIL: 0 report(s), precision FAIL" in out


def test_no_precision_opts_out_of_the_precision_check(capsys):
    assert debug_main([str(BUGS / "softmax_no_max.py"), "--no-precision"]) == 0
    out = capsys.readouterr().out
    assert "PASS: 0 report(s)  [" in out and "NaN" not in out


def test_nothing_checked_is_ran_and_exits_zero(capsys):
    assert debug_main([str(BUGS / "softmax_no_max.py"), "--no-precision", "--tool", "none"]) == 0
    assert "RAN: 0 report(s)" in capsys.readouterr().out


def test_json_carries_the_verdict(capsys):
    assert debug_main([str(BUGS / "softmax_no_max.py"), "--tool", "none", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "FAIL" and d["clean"] is False
    assert d["nonfinite_origin"]["op"] == "Exp" and d["nonfinite_origin"]["line"] == 64


def test_out_of_bounds_exits_one_with_the_mssanitizer_line(capsys):
    assert debug_main([str(BUGS / "add_tail_oob.py")]) == 1
    out = capsys.readouterr().out
    assert "Out-of-bounds access detected: File: add_tail_oob.py, Line: " in out
    assert "FAIL: 1 report(s) (memcheck 1)" in out


def test_json_lists_findings_counts_and_clean_flag(capsys):
    assert main(["debug", str(BUGS / "double_buffer_race.py"), "--tool", "racecheck", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["clean"] is False and d["counts"] == {"racecheck": 1}
    f = d["findings"][0]
    assert f["kind"] == "race-raw" and f["title"] == "Read-after-write race detected"
    assert f["pipe"] == "vec" and f["tensor"] == "x_local"


def test_deadlock_check_prints_every_rank_and_fails(capsys):
    rc = main(
        [
            "debug",
            str(BUGS / "allreduce_skip.py"),
            "--tool",
            "none",
            "--deadlock-check",
            "--ranks",
            "3",
            "--timeout",
            "5",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 1
    assert "Deadlock detected at step 1" in out
    assert "Rank 0: waiting for AllReduce #1 (timeout 5s)" in out
    assert "Rank 2: finished without calling AllReduce #1" in out


def test_precision_check_flag_is_still_accepted(capsys):
    assert main(["debug", str(BUGS / "softmax_no_max.py"), "--tool", "none", "--precision-check"]) == 1
    assert "FAIL: 0 report(s), precision FAIL" in capsys.readouterr().out


def test_unknown_tool_is_refused():
    try:
        main(["debug", "vector_add_bias", "--tool", "memcheck,leakcheck"])
    except SystemExit as exc:
        assert "leakcheck" in str(exc)
    else:
        raise AssertionError("expected SystemExit")
