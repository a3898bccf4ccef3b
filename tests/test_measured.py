"""Measured beside emulated: imported msprof data of the same case and params next to a run."""

from __future__ import annotations

import json

import pytest

from asc_tui.cli import main
from asc_tui.devkit.profile import measured
from asc_tui.devkit.profile.msprof import read_dir, write_dir
from asc_tui.devkit.profile.profiler import profile
from asc_tui.devkit.run.runner import RunRequest, run

PARAMS = {"block_dim": 8, "tile_length": 2048, "buffer_num": 1}


@pytest.fixture()
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("ASC_TUI_PROJECT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _measured_dir(tmp_path, chip="ascend910b4"):
    rep = run(RunRequest("vector_add_bias", chip=chip, params=PARAMS, timing_only=True))
    d = tmp_path / "OPPROF_measured"
    write_dir(profile(rep), d)
    return d


def test_the_same_run_measured_and_emulated_has_no_error(project):
    d = _measured_dir(project)
    rep = run(RunRequest("vector_add_bias", chip="ascend910b4", params=PARAMS, timing_only=True))
    cmp = measured.compare(profile(rep), read_dir(d), str(d))
    names = [f.name for f in cmp.figures]
    assert names[0] == "duration"
    for pipe in ("mte2", "mte3", "vec"):
        assert f"{pipe} time" in names and f"{pipe} ratio" in names and f"{pipe} wait ratio" in names
    assert all(f.error == pytest.approx(0.0, abs=1e-9) for f in cmp.figures)


def test_an_import_is_found_again_only_for_its_case_and_params(project):
    d = _measured_dir(project)
    measured.remember("vector_add_bias", "default", PARAMS, str(d))
    assert measured.lookup("vector_add_bias", "default", dict(reversed(PARAMS.items()))) == str(d.resolve())
    assert measured.lookup("vector_add_bias", "default", {**PARAMS, "buffer_num": 2}) is None
    assert measured.lookup("vector_add_bias", "full", PARAMS) is None


def test_profile_compare_measured_shows_each_figure_with_its_error(project, capsys):
    d = _measured_dir(project)
    params = [f"--param={k}={v}" for k, v in PARAMS.items()]
    assert main(["profile", "vector_add_bias", "--chip", "ascend910b4", *params, "--import", str(d)]) == 0
    capsys.readouterr()
    rc = main(
        [
            "profile",
            "vector_add_bias",
            "--chip",
            "ascend910b",
            "--timing-only",
            "--compare-measured",
            "--json",
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)["measured_comparison"]
    assert doc["directory"] == str(d.resolve())
    by = {f["name"]: f for f in doc["figures"]}
    # measured on a 910B4 at 1650 MHz, emulated on a 910B at 1800 MHz: every time is off
    assert by["duration"]["error"] == pytest.approx(
        by["duration"]["emulated"] / by["duration"]["measured"] - 1
    )
    assert by["duration"]["error"] < 0
    assert {"mte2 time", "mte2 ratio", "mte2 wait ratio", "vec time"} <= set(by)
    main(["profile", "vector_add_bias", "--chip", "ascend910b", "--timing-only", "--compare-measured"])
    assert "measured vs emulated" in capsys.readouterr().out


def test_compare_measured_without_an_import_says_how_to_get_one(project, capsys):
    assert main(["profile", "vector_add_bias", "--timing-only", "--compare-measured"]) == 2
    assert "--import DIR" in capsys.readouterr().err


def test_the_profile_pane_shows_measured_beside_emulated(project):
    from asc_tui.devkit.views.profile import profile_view
    from asc_tui.tui.widgets.profile_pane import ProfilePane

    d = _measured_dir(project)
    measured.remember("vector_add_bias", "default", PARAMS, str(d))
    rep = run(RunRequest("vector_add_bias", chip="ascend910b", params=PARAMS, timing_only=True))
    view = profile_view(rep)
    assert view.measured and view.measured[0].startswith("measured vs emulated")
    pane = ProfilePane()
    pane.show(view, "vector_add_bias")
    text = pane.plain
    assert "measured vs emulated" in text and "duration µs" in text and "mte2 wait ratio" in text
    other = run(
        RunRequest("vector_add_bias", chip="ascend910b", params={**PARAMS, "buffer_num": 2}, timing_only=True)
    )
    assert profile_view(other).measured == ()
