"""`asc-tui tune` and `asc-profile --auto-tune/--quick-tune`: JSON shape, human output, errors."""

from __future__ import annotations

import json

import pytest
from tunesrc import tune_op_source

from asc_tui.cli import main, profile_main
from asc_tui.devkit.bench import history


def _json(capsys, argv, entry=main):
    code = entry(argv)
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_tune_json_has_the_documented_shape(capsys, write_operator):
    path = str(write_operator("op", tune_op_source()))
    code, d = _json(capsys, ["tune", path, "--workers", "0", "--json"])
    assert code == 0
    for key in ("strategy", "space_size", "invalid", "evaluated", "cached", "best", "results"):
        assert key in d
    assert d["strategy"] == "exhaustive"
    assert set(d["best"]) >= {"params", "time_us"}
    ok = [r for r in d["results"] if "time_us" in r]
    bad = [r for r in d["results"] if "invalid_reason" in r]
    assert len(ok) == d["evaluated"] and len(bad) == d["invalid"]
    assert len(ok) + len(bad) == d["space_size"]
    assert min(r["time_us"] for r in ok) == d["best"]["time_us"]


def test_profile_quick_tune_spends_at_most_ten_evaluations(capsys):
    code, d = _json(capsys, ["--quick-tune", "add_custom", "--json"], profile_main)
    assert code == 0 and d["strategy"] == "quick"
    assert d["evaluated"] + d["cached"] <= 10


def test_profile_auto_tune_is_exhaustive_and_reuses_the_cache(capsys):
    code, d = _json(capsys, ["--auto-tune", "add_custom", "--json"], profile_main)
    assert code == 0 and d["strategy"] == "exhaustive"
    assert d["evaluated"] + d["cached"] == d["space_size"] - d["invalid"]
    code, again = _json(capsys, ["tune", "add_custom", "--json"])
    assert again["evaluated"] == 0 and again["best"] == d["best"]


def test_human_output_names_best_table_and_pruning_reasons(capsys, write_operator):
    path = str(write_operator("op", tune_op_source()))
    assert main(["tune", path, "--workers", "0", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "best  tile=" in out
    assert "tile 1024 is refused by the author" in out
    assert "InitBuffer" in out
    assert out.count("\n") < 25


def test_param_pins_a_subset_from_the_command_line(capsys, write_operator):
    path = str(write_operator("op", tune_op_source()))
    code, d = _json(
        capsys, ["tune", path, "--workers", "0", "--param", "tile=256", "--param", "block_dim=1,4", "--json"]
    )
    assert code == 0 and d["space_size"] == 1 * 2 * 2
    assert {r["params"]["block_dim"] for r in d["results"]} == {1, 4}


def test_an_unknown_parameter_is_an_error_naming_the_file(capsys, write_operator):
    path = str(write_operator("op", tune_op_source()))
    code = main(["tune", path, "--param", "tiel=256", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 1 and "tiel" in d["errors"][0]["message"]
    assert d["errors"][0]["file"] == path


def test_a_finished_tune_records_its_best_config_in_the_history(capsys, write_operator):
    path = str(write_operator("op", tune_op_source()))
    code, d = _json(capsys, ["tune", path, "--workers", "0", "--json"])
    assert code == 0
    store = history.open_history(None)
    try:
        rows = store.conn.execute("SELECT kind, params, time_us FROM history_runs").fetchall()
    finally:
        store.close()
    assert [(k, json.loads(p)) for k, p, _ in rows] == [("tune", d["best"]["params"])]
    assert rows[0][2] == pytest.approx(d["best"]["time_us"])


def _looping(write_operator, condition: str):
    """The tuner's test operator with `while <condition>: pass` after its first DataCopy (the
    static pass stops at that copy, so only the evaluations loop)."""
    src = tune_op_source(tiles=(256, 512, 2048, 8192), refused=0, tiling_refuses=0)
    anchor = "        AscendC.DataCopy(a, xg[i * t.tile], t.tile)\n"
    assert anchor in src
    src = src.replace(anchor, anchor + f"        while {condition}:\n            pass\n")
    return str(write_operator("looping", src))


def test_a_kernel_that_always_loops_stops_the_tune_after_its_first_timeout(capsys, write_operator):
    import time

    path = _looping(write_operator, "True")
    t0 = time.perf_counter()
    code, d = _json(capsys, ["tune", path, "--workers", "0", "--timeout", "1", "--json"])
    assert time.perf_counter() - t0 < 15  # not 24 configs x 1 s
    stopped = [r.get("stopped") for r in d["results"] if "invalid_reason" not in r]
    assert stopped.count("timeout") == 1 and stopped.count("skipped") == 23 == d["skipped"]
    assert code == 1 and d["best"] is None and d["evaluated"] == 1
    (note,) = d["notes"]
    assert "timed out after 1 s" in note and "every config of the operator" in note


def test_a_timeout_stops_only_its_sweep_once_a_config_has_completed(capsys, write_operator):
    path = _looping(write_operator, "t.tile == 2048 and t.bufs == 2")
    code, d = _json(capsys, ["tune", path, "--workers", "0", "--timeout", "1", "--json"])
    rows = [r for r in d["results"] if "invalid_reason" not in r]
    timed_out = [r["params"] for r in rows if r.get("stopped") == "timeout"]
    skipped = [r["params"] for r in rows if r.get("stopped") == "skipped"]
    assert code == 0 and d["best"] is not None
    assert all(p["tile"] == 2048 and p["bufs"] == 2 for p in timed_out) and len(timed_out) == 3
    assert skipped and all(p["bufs"] == 2 and p["tile"] != 2048 for p in skipped)
    assert all("time_us" in r for r in rows if r["params"]["bufs"] == 1)  # other sweeps ran
    assert any("stopped the tile sweep at bufs=2 block_dim=" in n for n in d["notes"])


def test_human_output_says_which_family_a_timeout_stopped(capsys, write_operator):
    path = _looping(write_operator, "True")
    assert main(["tune", path, "--workers", "0", "--timeout", "1"]) == 1
    out = capsys.readouterr().out
    assert "not run 23" in out and "note: " in out and "every config of the operator" in out
