"""Tuning a sample directory's constants (values from the command line, a sidecar asc-tui.toml,
or the project config), and what a run says when a sample cannot be checked."""

import json

from samplekit import copy_sample, edit

from asc_tui.devkit.conformance import classify
from asc_tui.devkit.run.runner import RunRequest, run


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
    assert [r["params"] for r in got["results"]] == [{"TILE": 256}]


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


def test_a_cancelled_sweep_returns_the_rows_that_finished_and_stops_the_one_in_flight(tmp_path):
    import threading
    import time

    from asc_tui.devkit.tune.progress import CancelToken
    from asc_tui.devkit.tune.sample_tune import sweep

    d = copy_sample(tmp_path)
    slow = tmp_path / "slow"  # from the second configuration on, gen_data takes 60 s
    gen = d / "scripts/gen_data.py"
    gen.write_text(
        f"import os, time\nif os.path.exists({str(slow)!r}):\n    time.sleep(60)\n" + gen.read_text()
    )
    token, steps = CancelToken(), []

    def progress(step):
        steps.append(step)
        slow.touch()
        threading.Timer(1.5, token.cancel).start()  # while the second one runs

    t0 = time.monotonic()
    rows = sweep(str(d), {"TILE": [1024, 512, 256]}, {}, None, 120, None, progress, token)
    assert time.monotonic() - t0 < 30  # not the 60 s of the one in flight
    assert [r.params for r in rows] == [{"TILE": 1024}] and rows[0].ok
    assert [(s.done, s.total) for s in steps] == [(1, 3)]


def test_a_samples_tune_json_has_the_operator_tunes_schema(tmp_path, capsys, write_operator):
    from tunesrc import tune_op_source

    from asc_tui.cli import main

    d = copy_sample(tmp_path)
    assert main(["tune", str(d), "--param-values", "TILE=128,256", "--json"]) == 0
    sample = json.loads(capsys.readouterr().out)
    op = str(write_operator("op", tune_op_source()))
    assert main(["tune", op, "--workers", "0", "--json"]) == 0
    operator = json.loads(capsys.readouterr().out)
    assert set(sample) == set(operator)
    ran = [r for r in operator["results"] if "time_us" in r]
    assert all(set(r) == set(ran[0]) for r in sample["results"])
    assert set(sample["best"]) == set(operator["best"]) and set(sample["current"]) == set(operator["current"])
    assert sample["case"] == "default" and sample["current"]["params"] == {"TILE": 256}
    assert sample["best"]["params"] in ({"TILE": 128}, {"TILE": 256}) and sample["space_size"] == 2
    assert sample["current"]["time_us"] == next(
        r["time_us"] for r in sample["results"] if r["params"]["TILE"] == 256
    )


def test_a_sample_sweep_that_loops_stops_after_its_first_timeout(tmp_path, capsys):
    import time

    from asc_tui.cli import main

    d = copy_sample(tmp_path)
    edit(d / "vadd.asc", "        AscendC::DataCopy(a, xg[off], TILE);", "        while (true) {}")
    t0 = time.perf_counter()
    code = main(["tune", str(d), "--param-values", "TILE=64,128,256,512", "--timeout", "2", "--json"])
    got = json.loads(capsys.readouterr().out)
    assert code == 1 and time.perf_counter() - t0 < 30  # not 4 x 2 s plus a worker restart each
    assert [r.get("stopped") for r in got["results"]] == ["timeout", "skipped", "skipped", "skipped"]
    assert got["skipped"] == 3 and "every config of the operator" in got["notes"][0]


def test_a_sample_reports_its_one_case_by_name(tmp_path):
    d = copy_sample(tmp_path)
    r = run(RunRequest(str(d)))
    assert r.case == "default" and r.passed
    bad = run(RunRequest(str(d), case="tail"))
    (err,) = bad.errors
    assert "has one case, 'default', not 'tail'" in err.message and err.file.endswith("vadd.asc")


def test_a_config_case_a_sample_lacks_names_the_config_line(tmp_path):
    from asc_tui.config import ConfigText

    d = copy_sample(tmp_path)
    r = run(RunRequest(str(d), case=ConfigText("tail", (str(tmp_path / "asc-tui.toml"), 3, 1))))
    (err,) = r.errors
    assert (err.file, err.line, err.column) == (str(tmp_path / "asc-tui.toml"), 3, 1)


def test_the_human_output_of_a_sample_names_its_case(tmp_path, capsys):
    from asc_tui.cli import main

    d = copy_sample(tmp_path)
    assert main(["run", str(d)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("vadd [default] on ascend910b")
