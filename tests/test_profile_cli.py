"""`asc-tui profile` / `asc-profile`: JSON, the human report, files, import, tuner hand-over."""

from __future__ import annotations

import argparse
import json

import pytest

from asc_tui.cli import profile_cmd


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="asc-tui")
    sub = parser.add_subparsers(dest="command")
    profile_cmd.add_parser(sub)
    code = profile_cmd.main(parser.parse_args(["profile", *argv]))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_is_one_object_with_the_documented_fields(capsys):
    code, out, _ = cli(capsys, "add_custom", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["operator"] == "add_custom" and d["time_us"] > 0
    assert d["bottleneck"] in [b["name"] for b in d["breakdown"]]
    assert d["roofline"]["bound"] in ("compute", "memory", "latency")
    assert {"utilisation", "overlap", "wait_ratios", "advice"} <= set(d["pipeline"])
    assert d["lines"] and d["run"]["passed"] is True


def test_human_report_marks_the_bottleneck_and_prints_advice(capsys, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, _ = cli(capsys, "add_custom", "--param", "buffer_num=1", "--timing-only", "--pipeline-report")
    assert code == 0
    for text in (
        "add_custom [default]",
        "HBM Read (MTE2)",
        "← bottleneck",
        "Sync Wait",
        "Roofline",
        "Pipeline report",
        "overlap",
        "BUFFER_NUM=2",
    ):
        assert text in out
    assert "\x1b[" not in out


def test_lines_prints_the_top_n_with_their_source(capsys):
    code, out, _ = cli(capsys, "add_custom", "--timing-only", "--lines", "3")
    assert code == 0
    assert "Hot lines (top 3 of" in out
    rows = [ln for ln in out.splitlines() if "add_custom.py:" in ln]
    assert len(rows) == 3
    assert "AscendC.DataCopy(x_local, self.x_gm[i * self.tile], n)" in out


def test_trace_and_msprof_files_are_written_and_reimported(capsys, tmp_path):
    trace, msp = tmp_path / "t.json", tmp_path / "msprof"
    code, out, _ = cli(
        capsys,
        "add_custom",
        "--timing-only",
        "--trace",
        str(trace),
        "--trace-limit",
        "50",
        "--msprof-dir",
        str(msp),
        "--json",
    )
    assert code == 0
    d = json.loads(out)
    assert d["trace"]["events"] <= 50 and d["trace"]["truncated"]
    assert json.loads(trace.read_text())["traceEvents"]
    code, out, _ = cli(capsys, "--import", str(msp), "--json")
    assert code == 0
    back = json.loads(out)
    assert back["source"] == "msprof" and back["time_us"] == d["time_us"]


def test_a_broken_operator_fails_with_its_file_and_line(capsys, write_operator):
    path = write_operator("broken", "CASES = {'default': {}}\nimport nope_not_a_module\n")
    code, out, err = cli(capsys, str(path))
    assert code == 1
    assert "broken.py" in out + err


def test_import_of_an_empty_directory_is_a_clear_error(capsys, tmp_path):
    code, _, err = cli(capsys, "--import", str(tmp_path))
    assert code == 2 and "OpBasicInfo.csv" in err


@pytest.mark.parametrize("flag,quick", [("--auto-tune", False), ("--quick-tune", True)])
def test_tune_flags_hand_over_to_the_tuner(capsys, monkeypatch, flag, quick):
    from asc_tui.cli import tune_cmd

    seen = {}

    def fake(args, quick):
        seen.update(op=args.op, quick=quick)
        return 0

    monkeypatch.setattr(tune_cmd, "tune_from_profile_args", fake)
    code, _, _ = cli(capsys, "add_custom", flag)
    assert code == 0 and seen == {"op": ["add_custom"], "quick": quick}


def test_asc_profile_alias_is_the_profile_command(capsys):
    from asc_tui.cli import profile_main

    assert profile_main(["add_custom", "--timing-only", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["operator"] == "add_custom"
