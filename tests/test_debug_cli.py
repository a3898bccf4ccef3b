"""`asc-tui debug` / `asc-debug`: the report text, --json, and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from asc_tui.cli import debug_main, main

BUGS = Path(__file__).resolve().parents[1] / "operators" / "bugs"


def test_clean_operator_exits_zero_and_says_clean(capsys):
    assert main(["debug", "vector_add_bias", "--precision-check"]) == 0
    out = capsys.readouterr().out
    assert "PASS: 0 report(s), precision PASS" in out


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


def test_precision_fail_exits_one(capsys):
    assert main(["debug", str(BUGS / "softmax_no_max.py"), "--tool", "none", "--precision-check"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_unknown_tool_is_refused():
    try:
        main(["debug", "vector_add_bias", "--tool", "memcheck,leakcheck"])
    except SystemExit as exc:
        assert "leakcheck" in str(exc)
    else:
        raise AssertionError("expected SystemExit")
