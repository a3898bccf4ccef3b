"""`asc-tui calibrate`: fitting a chip's timing constants to msprof runs recovers known constants."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from asc_tui.cli import main
from asc_tui.devkit.calibrate.fit import KNOBS, calibrate
from asc_tui.devkit.calibrate.runs import RunSpec, parse_run, read_manifest
from asc_tui.devkit.profile.msprof import write_dir
from asc_tui.devkit.profile.profiler import profile
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch

START = load_chip("ascend910b4")
#: The "real" chip the synthetic msprof runs come from: every fitted constant moved off START.
TRUTH = replace(
    START,
    dma_latency=170.0,
    dma_latency_per_active_core=6.0,
    gm_read_bpc=45.0,
    gm_write_bpc=40.0,
    hbm_gbps=900.0,
    vec_startup=40.0,
    vec_cpr={**START.vec_cpr, "default": 2.6},
    launch_overhead_us=5.0,
)
#: A chip that differs from START only in the vector and launch constants.
TRUTH_V = replace(START, vec_startup=40.0, vec_cpr={**START.vec_cpr, "default": 2.6}, launch_overhead_us=5.0)
#: vector_add_bias runs that between them constrain every constant: 1 core at two tile sizes
#: (latency vs path bandwidth), 8 cores (latency growth), 32 cores (HBM saturated).
RUNS = [
    dict(block_dim=1, tile_length=2048, buffer_num=1),
    dict(block_dim=1, tile_length=8192, buffer_num=2),
    dict(block_dim=8, tile_length=2048, buffer_num=1),
    dict(block_dim=8, tile_length=8192, buffer_num=1),
    dict(block_dim=16, tile_length=1024, buffer_num=2),
    dict(block_dim=32, tile_length=1024, buffer_num=1),
]


def _export(tmp_path, chip, runs) -> list[RunSpec]:
    """msprof op directories of emulated runs on `chip`, as real msprof would write them."""
    op = load_operator("vector_add_bias")
    specs = []
    for i, params in enumerate(runs):
        _, _, _, lnch, _, gm = prepare(op, "default", params, timing_only=True, seed=0)
        em = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=False)
        d = tmp_path / f"OPPROF_{i}"
        write_dir(profile(em, chip), d)
        specs.append(RunSpec(str(d), "vector_add_bias", "default", params))
    return specs


def test_calibrate_recovers_known_constants_within_2_percent(tmp_path):
    specs = _export(tmp_path, TRUTH, RUNS)
    cal = calibrate(specs, START, leave_one_out=False)
    for knob, fitted in zip(KNOBS, cal.constants):
        assert fitted.constrained, knob.name
        assert fitted.after == pytest.approx(knob.get(TRUTH), rel=0.02), knob.name
    assert cal.rms_after < 0.005 < cal.rms_before


def test_a_constant_the_runs_do_not_constrain_keeps_its_value(tmp_path):
    # one core never shares the HBM: its bandwidth and the latency growth cannot be fitted
    specs = _export(tmp_path, TRUTH, RUNS[:2])
    cal = calibrate(specs, START, leave_one_out=False, max_iter=4)
    by = {c.name: c for c in cal.constants}
    for name in ("dma.hbm_gbps", "dma.latency_per_active_core"):
        assert not by[name].constrained
        assert by[name].after == by[name].before


def test_cli_writes_a_loadable_chip_naming_its_inputs_with_before_after_and_left_out_errors(tmp_path, capsys):
    specs = _export(tmp_path, TRUTH_V, RUNS[:3])
    manifest = tmp_path / "runs.toml"
    manifest.write_text(
        "".join(
            f'[[run]]\ndir = "{s.directory}"\nop = "{s.op}"\ncase = "default"\n'
            f"params = {{ {', '.join(f'{k} = {v}' for k, v in s.params.items())} }}\n"
            for s in specs
        )
    )
    out = tmp_path / "fitted.toml"
    rc = main(
        [
            "calibrate",
            "--runs",
            str(manifest),
            "--chip",
            "ascend910b4",
            "--knobs",
            "vector.startup_cycles,vector.cycles_per_repeat.default,launch.overhead_us",
            "--max-iter",
            "4",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["chip_file"] == str(out)
    assert len(doc["errors"]) == 3
    for e in doc["errors"]:
        assert set(e["error_before"]) == {"duration", "mte2", "mte3", "vec"}
        assert e["error_left_out"] is not None
        assert abs(e["error_after"]["vec"]) < 0.01 < abs(e["error_before"]["vec"])
    chip = load_chip(str(out))
    assert chip.name == "ascend910b4-calibrated"
    assert chip.vec_startup == pytest.approx(40.0, rel=0.02)
    assert chip.launch_overhead_us == pytest.approx(5.0, rel=0.02)
    text = out.read_text()
    assert all(s.directory in text for s in specs)
    assert "fitted by asc-tui calibrate (was 32)" in text


def test_cli_prints_an_error_table_per_run(tmp_path, capsys):
    (spec,) = _export(tmp_path, TRUTH, RUNS[:1])
    p = spec.params
    rc = main(
        [
            "calibrate",
            "--chip",
            "ascend910b4",
            "--run",
            spec.directory,
            "vector_add_bias",
            "default",
            *(f"{k}={v}" for k, v in p.items()),
            "--knobs",
            "launch.overhead_us",
            "--out",
            str(tmp_path / "c.toml"),
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "duration (µs)" in text and "mte2 (µs)" in text and "RMS relative error" in text


def test_run_specs_parse_from_the_command_line_and_manifests(tmp_path):
    s = parse_run(["OPPROF_1", "vector_add_bias", "full", "block_dim=8", "tile_length=2048"])
    assert s == RunSpec("OPPROF_1", "vector_add_bias", "full", {"block_dim": 8, "tile_length": 2048})
    (tmp_path / "m.toml").write_text('[[run]]\ndir = "d"\nop = "add_custom"\n')
    (m,) = read_manifest(tmp_path / "m.toml")
    assert m.directory == str(tmp_path / "d") and m.op == "add_custom" and m.case is None
