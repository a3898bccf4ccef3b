"""Sample directories in every tool: `asc-tui debug DIR` and `asc-tui bench DIR` (and the
workbench's `d` and `b`) run the sample's whole loop, as `asc-tui run DIR` does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from samplekit import copy_sample, edit
from tuikit import until

from asc_tui.cli import main
from asc_tui.config import Config
from asc_tui.cxx.files import sample_for
from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.devkit.samples.sample import source_hash
from asc_tui.tui.app import Workbench

ADD = Path("/work/asc-devkit/examples/01_simd_cpp_api/00_introduction/01_add/add")
needs_devkit = pytest.mark.skipif(not ADD.is_dir(), reason="asc-devkit samples not on this machine")


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_debug_runs_a_sample_under_the_tools_with_its_own_check_as_precision(tmp_path, capsys):
    vadd = copy_sample(tmp_path)
    assert main(["debug", str(vadd), "--json"]) == 0
    d = _json(capsys)
    assert (d["operator"], d["case"], d["verdict"]) == ("vadd", "default", "PASS")
    assert d["errors"] == [] and d["findings"] == []
    assert d["precision"]["verdict"] == "PASS"
    assert d["path"] == str(vadd / "vadd.asc")
    assert d["sample"]["verify"]["exit"] == 0 and len(d["sample"]["launches"]) == 1


def test_debug_finds_a_race_in_a_sample_at_its_asc_line(tmp_path, capsys):
    vadd = copy_sample(tmp_path)
    edit(
        vadd / "vadd.asc",
        "AscendC::Add(c, a, b, TILE);\n        AscendC::PipeBarrier<PIPE_ALL>();\n",
        "AscendC::Add(c, a, b, TILE);\n",
    )
    assert main(["debug", str(vadd), "--tool", "racecheck", "--json"]) == 1
    d = _json(capsys)
    assert d["verdict"] == "FAIL"
    lines = (vadd / "vadd.asc").read_text().splitlines()
    (f,) = d["findings"]
    assert f["tool"] == "racecheck" and f["file"] == str(vadd / "vadd.asc")
    assert "DataCopy(zg[off], c, TILE)" in lines[f["line"] - 1]


def test_a_wrong_sample_result_is_fail_with_the_precision_line_before_verify_output(tmp_path, capsys):
    vadd = copy_sample(tmp_path)
    edit(vadd / "vadd.asc", "AscendC::Add(c, a, b, TILE)", "AscendC::Sub(c, a, b, TILE)")
    assert main(["debug", str(vadd)]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 0 report(s), 1 error(s), precision FAIL" in out and "ERROR" not in out
    verify = [i for i, ln in enumerate(out.splitlines()) if ln.strip().startswith("verify_result.py:")]
    precision = out.splitlines().index(next(ln for ln in out.splitlines() if "precision output" in ln))
    assert len(verify) == len(set(verify)) >= 1 and precision < verify[0]
    assert main(["run", str(vadd)]) == 1
    out = capsys.readouterr().out.splitlines()
    said = [ln for ln in out if "verify_result.py" in ln and "failed" not in ln and "ERR" not in ln]
    assert len(said) == 1, out  # the script's output once: not again in its error
    assert out.index(next(ln for ln in out if "precision FAIL" in ln)) < out.index(said[0])


def test_debug_without_precision_ignores_the_samples_own_check(tmp_path, capsys):
    vadd = copy_sample(tmp_path)
    edit(vadd / "vadd.asc", "AscendC::Add(c, a, b, TILE)", "AscendC::Sub(c, a, b, TILE)")
    assert main(["debug", str(vadd), "--no-precision", "--json"]) == 0
    assert _json(capsys)["verdict"] == "PASS"


def test_debug_sees_the_warnings_of_every_launch_of_a_sample(tmp_path, capsys):
    """A misaligned DataCopy in the first of two launches (the last one is the run's profile)."""
    multi = copy_sample(tmp_path, "multi")
    first = "DataCopy(a, xg[off], TILE);\n        AscendC::PipeBarrier<PIPE_ALL>();\n        AscendC::Muls"
    edit(multi / "multi.asc", first, first.replace("TILE);", "TILE - 3);", 1))
    assert main(["debug", str(multi), "--tool", "memcheck", "--no-precision", "--json"]) == 1
    d = _json(capsys)
    kinds = [(f["kind"], Path(f["file"]).name) for f in d["findings"]]
    assert ("misaligned-length", "multi.asc") in kinds and d["verdict"] == "FAIL"


def test_the_deadlock_check_on_a_sample_is_refused_with_why(tmp_path, capsys):
    vadd = copy_sample(tmp_path)
    assert main(["debug", str(vadd), "--deadlock-check", "--json"]) == 1
    d = _json(capsys)
    assert d["verdict"] == "ERROR"
    (e,) = d["errors"]
    assert "has no ranks" in e["message"] and e["file"] == str(vadd / "vadd.asc")
    assert "internal" not in json.dumps(d)


def test_bench_times_a_sample_by_its_launches_and_keeps_its_history(tmp_path, capsys):
    multi = copy_sample(tmp_path, "multi")
    launches = run(RunRequest(str(multi))).sample.launches
    assert len(launches) == 2
    assert main(["bench", str(multi), "--json"]) == 0
    d = _json(capsys)
    assert (d["operator"], d["chip"], d["errors"]) == ("multi", "ascend910b", [])
    (c,) = d["cases"]
    assert c["case"] == "default" and c["errors"] == []
    assert c["time_us"] == pytest.approx(sum(ln["time_us"] for ln in launches))
    assert c["source_hash"] == source_hash(sample_for(multi))
    first = c["run_id"]
    assert main(["bench", str(multi), "--json"]) == 0
    (c2,) = _json(capsys)["cases"]
    assert c2["change"]["previous_id"] == first and c2["change"]["slowdown"] == pytest.approx(0.0)
    assert main(["bench", str(multi), "--history", "--json"]) == 0
    h = _json(capsys)
    assert [r["id"] for r in h["cases"]["default"]][-2:] == [first, c2["run_id"]]


def test_bench_saves_a_sample_baseline_and_diffs_against_it_at_its_asc_lines(tmp_path, capsys):
    vadd = copy_sample(tmp_path)
    assert main(["bench", str(vadd), "--save-baseline", "b0", "--json"]) == 0
    saved = _json(capsys)["cases"][0]["time_us"]
    edit(vadd / "vadd.asc", "TILE = 256", "TILE = 128")
    assert main(["bench", str(vadd), "--against", "b0", "--fail-on", "none", "--json"]) == 0
    (c,) = _json(capsys)["cases"]
    assert c["baseline_time_us"] == pytest.approx(saved) and c["time_us"] > saved
    diff = c["diff"]
    assert diff is not None and diff["lines"]
    assert {Path(ln["file"]).name for ln in diff["lines"]} == {"vadd.asc"}


@needs_devkit
def test_debug_bench_and_tune_run_the_unmodified_asc_devkit_add_sample(capsys):
    assert main(["debug", str(ADD), "--json"]) == 0
    d = _json(capsys)
    assert (d["operator"], d["case"], d["verdict"], d["errors"]) == ("add", "default", "PASS", [])
    assert main(["bench", str(ADD), "--json"]) == 0
    (c,) = _json(capsys)["cases"]
    assert c["case"] == "default" and c["time_us"] > 0 and c["errors"] == []
    assert main(["tune", str(ADD), "--param-values", "numBlocks=4,8", "--json"]) == 0
    t = _json(capsys)
    assert t["evaluated"] == 2 and t["best"]["time_us"] > 0


def test_workbench_debug_and_bench_keys_run_on_a_sample(tmp_path):
    root = tmp_path / "examples"
    vadd = copy_sample(root)
    kernel = (vadd / "vadd.asc").resolve()

    async def go():
        app = Workbench(
            str(root), clock=lambda: "00:00:00", show_host_times=False, config=Config(worker_timeout=30)
        )
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app.results_seen >= 1, 60, "the first run")
            app.select_operator(kernel)
            await pilot.press("d")
            await until(pilot, lambda: "debug verdict" in _log(app), 60, "the debug verdict")
            log = _log(app)
            assert "vadd: debug verdict PASS" in log and "sanitizer clean" in log, log
            assert log.count("vadd: verify_result.py: test pass!") == 2  # the run's, the debug run's
            assert "Is a directory" not in log and "internal error" not in log
            await pilot.press("B")  # save as the baseline, then bench against it
            await until(pilot, lambda: "bench vadd [default]" in _log(app), 60, "the saved baseline")
            await pilot.press("b")
            await until(pilot, lambda: _log(app).count("bench vadd [default]") >= 2, 60, "the bench")
            log = _log(app)
            assert "Is a directory" not in log and "internal error" not in log, log
            row = app.query_one("#bench-table").row(
                "vadd.asc/default/ascend910b"
            )  # (a C++ row: its kernel's kind)
            assert row is not None and row.current and row.baseline == pytest.approx(row.current)
            app.tools.export.directory = tmp_path / "exports"
            await pilot.press("e")
            await until(pilot, lambda: "exported" in _log(app), 60, "the export")
            names = sorted(p.name for p in (tmp_path / "exports").iterdir())
            assert [n.split(".", 1)[1] for n in names] == ["report.json", "report.txt", "trace.json"]
            assert json.loads((tmp_path / "exports" / names[2]).read_text())["traceEvents"]

    asyncio.run(go())


def _log(app) -> str:
    return "\n".join(app.query_one("#log-pane").lines_text)


@pytest.mark.skipif(not ADD.is_dir(), reason="the asc-devkit checkout is not on this machine")
def test_workbench_debug_and_bench_keys_run_on_the_unmodified_asc_devkit_add_sample(tmp_path):
    """`d` then `b` on asc-devkit's own add sample, copied as it is: its verdict, no spec asked for."""
    import shutil

    root = tmp_path / "examples"
    add = root / "add"
    shutil.copytree(ADD, add)
    kernel = sample_for(add).kernel.resolve()

    async def go():
        app = Workbench(
            str(root), clock=lambda: "00:00:00", show_host_times=False, config=Config(worker_timeout=60)
        )
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app.results_seen >= 1, 90, "the first run")
            app.select_operator(kernel)
            await pilot.press("d")
            await until(pilot, lambda: "debug verdict" in _log(app), 90, "the debug verdict")
            assert "debug verdict PASS" in _log(app), _log(app)
            await pilot.press("b")
            await until(pilot, lambda: "bench add [default]" in _log(app), 90, "the bench")
            log = _log(app)
            assert "Python spec" not in log and "Is a directory" not in log and "internal error" not in log, (
                log
            )

    asyncio.run(go())
