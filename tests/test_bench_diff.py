"""`asc-bench --against NAME`: the diff against a saved baseline, one computation for CLI and TUI."""

from __future__ import annotations

import json

from benchsrc import SLOW_VEC, add_bias_source

from asc_tui.cli import main as cli_main
from asc_tui.devkit.bench.diff import against_baseline, diff_lines
from asc_tui.devkit.bench.figures import BenchRequest, bench


def test_against_a_saved_baseline_prints_and_returns_category_and_line_deltas(write_operator, capsys):
    path = write_operator("add_bias", add_bias_source())
    assert cli_main(["bench", str(path), "--save-baseline", "v1"]) == 0
    capsys.readouterr()
    write_operator("add_bias", add_bias_source(extra_compute=SLOW_VEC))
    cli_main(["bench", str(path), "--against", "v1", "--json", "--no-record"])
    d = json.loads(capsys.readouterr().out)["cases"][0]["diff"]
    assert d["current_us"] > d["baseline_us"] and d["delta_us"] > 0
    vec = next(c for c in d["categories"] if c["key"] == "vec")
    assert vec["delta_us"] > 0
    assert any("slow-vec" in ln["text"] and ln["delta_us"] > 0 for ln in d["lines"])
    cli_main(["bench", str(path), "--against", "v1", "--no-record"])
    out = capsys.readouterr().out
    diff = bench(BenchRequest(str(path), against="v1", record=False)).cases[0].diff
    for line in diff_lines(diff):
        assert line in out


def test_the_workbench_computation_is_the_bench_one(write_operator):
    path = write_operator("add_bias", add_bias_source())
    bench(BenchRequest(str(path), save_baseline="v1"))
    write_operator("add_bias", add_bias_source(extra_compute=SLOW_VEC))
    c = bench(BenchRequest(str(path), against="v1", record=False, timing_only=False)).cases[0]
    mine = against_baseline(c.report, "v1")
    assert mine.to_dict() == c.diff.to_dict()
    assert mine.baseline_lanes is not None and mine.current_lanes is not None
