"""Tuning a sample directory's constants (values from the command line, a sidecar asc-tui.toml,
or the project config), and what a run says when a sample cannot be checked."""

import json

from samplekit import copy_sample, edit

from asc_tui.devkit.conformance import classify
from asc_tui.devkit.runner import RunRequest, run


def test_tune_sweeps_the_values_of_the_samples_sidecar_and_applies_the_best(tmp_path, capsys):
    from asc_tui.cli import main

    d = copy_sample(tmp_path)
    (d / "asc-tui.toml").write_text("[tune]\nTILE = [128, 1024]\n")
    assert main(["tune", str(d), "--apply", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "TILE=128" in out and "best: TILE=1024" in out
    assert "constexpr uint32_t TILE = 1024;" in (d / "vadd.asc").read_text()
    # the command line wins over the sidecar
    assert main(["tune", str(d), "--param-values", "TILE=256", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [r["params"] for r in got["rows"]] == [{"TILE": 256}]


def test_tune_takes_a_samples_values_from_the_project_config_and_reports_a_bad_sidecar(
    tmp_path, capsys, monkeypatch
):
    from asc_tui.cli import main

    d = copy_sample(tmp_path)
    (tmp_path / "asc-tui.toml").write_text("[tune]\nTILE = [512]\nOTHER_SAMPLES_N = [1, 2]\n")
    monkeypatch.chdir(tmp_path)
    assert main(["tune", str(d)]) == 0  # OTHER_SAMPLES_N is not this sample's: not swept
    assert "best: TILE=512" in capsys.readouterr().out
    (d / "asc-tui.toml").write_text('[tune]\nTILE = "many"\nTILE2 = []\n')
    assert main(["tune", str(d)]) == 2
    err = capsys.readouterr().err
    assert "asc-tui.toml:3" in err and "tune.TILE2 must be a value or a non-empty list" in err


def test_a_sample_whose_main_writes_no_output_says_so_rather_than_no_golden(tmp_path):
    d = copy_sample(tmp_path)
    (d / "scripts/verify_result.py").unlink()
    edit(d / "vadd.asc", 'WriteFile("./output/output.bin", zh, bytes);', "")
    r = run(RunRequest(str(d)))
    assert classify(r) == (
        "RAN",
        "not checked: main() writes no output/output.bin to compare with golden.bin",
    )


def test_a_param_overrides_a_constexpr_local_of_a_host_function(tmp_path):
    d = copy_sample(tmp_path)
    edit(d / "vadd.asc", "uint32_t blocks = 4;", "constexpr uint32_t blocks = 4;")
    r = run(RunRequest(str(d), params={"blocks": "2"}))
    assert r.passed and r.block_dim == 2  # `constexpr` is a qualifier of the declaration, not its type
