"""Regressions against the previous run: detected, attributed to pipes and lines, exit codes."""

from __future__ import annotations

import json
import re

import pytest
from benchsrc import SLOW_MTE2, SLOW_VEC, add_bias_source, line_of

from asc_tui.cli import bench_main
from asc_tui.cli import main as cli_main
from asc_tui.devkit.bench.figures import BenchRequest, Thresholds, Verdict, bench

GREW_VEC = re.compile(r"busy time grew \(per core\):\n\s+vec\s+[\d.]+ ->")


def bench_op(path, **kw):
    return bench(BenchRequest(str(path), **kw))


def test_first_bench_has_nothing_to_compare_with(write_operator):
    r = bench_op(write_operator("add_bias", add_bias_source()))
    (c,) = r.cases
    assert c.change.mark == "x" and c.regression is None and r.exit_code == 0
    assert c.time_us > 0 and c.gbps == pytest.approx(c.record.io_bytes / c.time_us / 1e3)


def test_same_source_again_is_unchanged(write_operator):
    path = write_operator("add_bias", add_bias_source())
    bench_op(path)
    (c,) = bench_op(path).cases
    assert c.change.mark == " " and c.change.ratio == pytest.approx(1.0)
    assert c.regression is None


def test_extra_vector_work_is_a_regression_attributed_to_the_vector_pipe(write_operator):
    path = write_operator("add_bias", add_bias_source())
    bench_op(path)
    slow = add_bias_source(extra_compute=SLOW_VEC)
    path.write_text(slow)
    r = bench_op(path)
    (c,) = r.cases
    reg = c.regression
    assert reg is not None and c.change.mark == "+"
    assert reg.slowdown > 0.01 and reg.source_changed and not reg.params_changed
    assert reg.pipes[0].pipe == "vec" and reg.pipes[0].delta_us > 0
    assert "mte2" not in {p.pipe for p in reg.pipes}
    top = reg.lines[0]
    assert top.line == line_of(slow, "# slow-vec") and top.before_cycles == 0
    msg = reg.message()
    assert GREW_VEC.search(msg) and f"add_bias.py:{top.line}: 0 -> " in msg
    assert reg.message().startswith("Performance regression detected: +")
    assert re.search(r"detected: \+\d+\.\d% slower on add_bias", reg.message())
    assert r.exit_code == 1 and r.failures() == ["regression"]


def test_extra_dma_is_attributed_to_mte2_and_its_line(write_operator):
    path = write_operator("add_bias", add_bias_source())
    bench_op(path)
    slow = add_bias_source(extra_copyin=SLOW_MTE2)
    path.write_text(slow)
    reg = bench_op(path).cases[0].regression
    assert reg.pipes[0].pipe == "mte2"
    assert reg.lines[0].line == line_of(slow, "# slow-mte2")
    # lines that only moved down are matched by their text, not reported as changed
    assert all(ln.before_cycles == 0 or ln.after_cycles == 0 or ln.delta_cycles != 0 for ln in reg.lines)


def test_a_faster_run_is_marked_minus_and_is_no_regression(write_operator):
    path = write_operator("add_bias", add_bias_source(extra_compute=SLOW_VEC))
    bench_op(path)
    path.write_text(add_bias_source())
    (c,) = bench_op(path).cases
    assert c.change.mark == "-" and c.change.slowdown < -0.01 and c.regression is None


def test_slowdown_within_the_threshold_is_not_a_regression(write_operator):
    path = write_operator("add_bias", add_bias_source())
    bench_op(path)
    path.write_text(add_bias_source(extra_compute=SLOW_VEC))
    (c,) = bench_op(path, thresholds=Thresholds(regression=0.5)).cases
    assert c.regression is None and c.change.mark == " "


def test_a_run_with_other_params_is_compared_only_with_runs_of_those_params(write_operator):
    """A smaller tile is slower by design: it is no regression of the 2048-tile run."""
    path = write_operator("add_bias", add_bias_source())
    bench_op(path)
    (c,) = bench_op(path, params={"tile_length": 1024}).cases
    assert c.regression is None and c.change.previous_id is None  # "x": nothing like it before
    path.write_text(add_bias_source(extra_compute=SLOW_VEC))
    reg = bench_op(path, params={"tile_length": 1024}).cases[0].regression
    assert reg is not None and reg.params_changed == {} and reg.source_changed


def test_baseline_operator_gives_relative_performance_and_verdict(write_operator):
    fast = write_operator("fast", add_bias_source())
    slow = write_operator("slow", add_bias_source(extra_copyin=SLOW_MTE2))
    (c,) = bench_op(slow, baseline_op=str(fast)).cases
    assert c.baseline_time_us < c.time_us
    assert c.relative == pytest.approx(c.baseline_time_us / c.time_us)
    assert c.verdict is Verdict.MUST_OPTIMISE
    (c2,) = bench_op(fast, baseline_op=str(slow)).cases
    assert c2.verdict is Verdict.SHIP


def test_declared_baseline_is_used_by_default(write_operator):
    write_operator("official", add_bias_source())
    mine = write_operator("mine", add_bias_source(baseline="official"))
    r = bench(BenchRequest(str(mine)))
    assert r.baseline == "operator official"
    assert r.cases[0].relative == pytest.approx(1.0)
    assert r.cases[0].verdict is Verdict.SHIP


def cli(capsys, *args):
    code = cli_main(["bench", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_has_the_documented_shape(write_operator, capsys):
    path = write_operator("add_bias", add_bias_source())
    other = write_operator("other", add_bias_source())
    code, out, _ = cli(capsys, str(path), "--all-cases", "--baseline", str(other), "--json")
    d = json.loads(out)
    assert code == 0 and [c["case"] for c in d["cases"]] == ["default", "small"]
    for c in d["cases"]:
        assert set(c) >= {
            "case",
            "time_us",
            "gflops",
            "gbps",
            "roofline_fraction",
            "baseline_time_us",
            "relative",
            "verdict",
            "change",
        }
        assert c["verdict"] == "ship" and c["change"]["mark"] == "x"
        assert 0 < c["roofline_fraction"] < 1
    assert d["regressions"] == []


def test_cli_exits_non_zero_on_regression_unless_told_otherwise(write_operator, capsys):
    path = write_operator("add_bias", add_bias_source())
    assert cli(capsys, str(path))[0] == 0
    path.write_text(add_bias_source(extra_compute=SLOW_VEC))
    code, out, _ = cli(capsys, str(path), "--no-record")
    assert code == 1 and "Performance regression detected" in out and GREW_VEC.search(out)
    code, out, _ = cli(capsys, str(path), "--json", "--fail-on", "none")
    d = json.loads(out)
    assert code == 0 and d["regressions"][0]["pipes"][0]["pipe"] == "vec"


def test_must_optimise_fails_ci_and_the_threshold_flags_change_the_verdict(write_operator, capsys):
    fast = write_operator("fast", add_bias_source())
    slow = write_operator("slow", add_bias_source(extra_copyin=SLOW_MTE2))
    code, out, _ = cli(capsys, str(slow), "--baseline", str(fast))
    assert code == 1 and "must optimise" in out
    code, out, _ = cli(
        capsys, str(slow), "--baseline", str(fast), "--optimise", "50", "--ship", "60", "--json"
    )
    assert code == 0 and json.loads(out)["cases"][0]["verdict"] == "ship"


def test_saved_baseline_is_compared_with_against(write_operator, capsys):
    fast = write_operator("fast", add_bias_source())
    slow = write_operator("slow", add_bias_source(extra_copyin=SLOW_MTE2))
    assert cli(capsys, str(fast), "--save-baseline", "official")[0] == 0
    code, out, _ = cli(capsys, str(slow), "--against", "official", "--json")
    c = json.loads(out)["cases"][0]
    assert c["verdict"] == "must optimise" and c["relative"] < 0.9 and code == 1
    code, out, _ = cli(capsys, str(slow), "--against", "nope")
    assert code == 1 and "no baseline named 'nope'" in out


def test_history_shows_the_trend_and_asc_bench_alias_works(write_operator, capsys):
    path = write_operator("add_bias", add_bias_source())
    assert bench_main([str(path)]) == 0
    path.write_text(add_bias_source(extra_compute=SLOW_VEC))
    assert bench_main([str(path), "--fail-on", "none"]) == 0
    capsys.readouterr()
    code, out, _ = cli(capsys, "add_bias", "--history")
    assert code == 0 and "2 runs" in out and "+ +" in out and "% slower" in out
    code, out, _ = cli(capsys, str(path), "--history", "--json")
    times = [r["time_us"] for r in json.loads(out)["cases"]["default"]]
    assert len(times) == 2 and times[1] > times[0]


def test_project_config_thresholds_apply_and_flags_override_them(
    write_operator, tmp_path, capsys, monkeypatch
):
    fast = write_operator("fast", add_bias_source())
    slow = write_operator("slow", add_bias_source(extra_copyin=SLOW_MTE2))
    (tmp_path / "asc-tui.toml").write_text("[thresholds]\nship = 0.5\noptimise = 0.4\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, str(slow), "--baseline", str(fast), "--json")
    d = json.loads(out)
    assert d["thresholds"]["ship"] == 0.5 and d["cases"][0]["verdict"] == "ship" and code == 0
    code, out, _ = cli(capsys, str(slow), "--baseline", str(fast), "--ship", "99", "--json")
    assert json.loads(out)["cases"][0]["verdict"] == "optimise" and code == 0
    code, out, _ = cli(capsys, str(slow), "--baseline", str(fast), "--ship", "99", "--fail-on", "optimise")
    assert code == 1 and "bench failed on: optimise" in out
    (tmp_path / "asc-tui.toml").write_text("[thresholds]\nshipp = 0.5\n")
    code, _, err = cli(capsys, str(slow))
    assert code == 2 and "asc-tui.toml:2:1: unknown threshold 'shipp'" in err
    code, out, _ = cli(capsys, str(slow), "--json")
    (e,) = json.loads(out)["errors"]
    assert code == 2 and (e["kind"], e["line"], e["column"]) == ("config", 2, 1)


def test_roofline_fraction_is_the_profilers(write_operator):
    from asc_tui.devkit.profile.profiler import profile

    (c,) = bench_op(write_operator("add_bias", add_bias_source())).cases
    assert c.roofline_fraction == pytest.approx(profile(c.report).roofline.fraction)
    assert c.advice and any("BUFFER_NUM=2" in a for a in c.advice)


def test_bench_still_works_when_the_profiler_fails(write_operator, monkeypatch):
    import asc_tui.devkit.bench.figures as bench_mod

    def broken(*_args, **_kw):
        raise RuntimeError("a profiler bug")

    monkeypatch.setattr(bench_mod, "profile", broken)
    (c,) = bench_op(write_operator("add_bias", add_bias_source())).cases
    em = c.report.emulation
    assert c.profile is None
    assert c.roofline.fraction == pytest.approx((em.gm_read + em.gm_write) / (1600 * 1e3) / em.time_us)
    assert c.advice[0].startswith("bottleneck: mte2")


def test_a_broken_operator_fails_the_bench_with_its_file_and_line(write_operator, capsys):
    path = write_operator("add_bias", add_bias_source())
    assert cli(capsys, str(path))[0] == 0
    src = add_bias_source(extra_compute="AscendC.Add(yl, xl, bl, L * 4)  # overflow")
    path.write_text(src)
    code, out, _ = cli(capsys, str(path), "--json")
    d = json.loads(out)
    (c,) = d["cases"]
    assert code == 1 and "error" in d["failures"]
    assert c["time_us"] is None and c["change"]["mark"] == "!"
    assert any(
        e["file"].endswith("add_bias.py") and e["line"] == line_of(src, "# overflow") and "column" in e
        for e in c["errors"]
    )
    assert d["regressions"] == []


def test_gflops_is_empty_without_declared_flops(write_operator):
    (c,) = bench_op(write_operator("add_bias", add_bias_source())).cases
    assert c.gflops is None and c.gbps > 0
