"""Sample directories (kernel + host main() + data scripts, no spec): the whole loop and its errors."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from samplekit import SAMPLES, copy_sample, edit

from asc_tui.devkit.conformance import classify, conformance
from asc_tui.devkit.run.runner import RunRequest, run


def _run(path, **kw):
    return run(RunRequest(str(path), **kw))


def _line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


def test_single_file_sample_runs_gen_data_main_and_verify():
    r = _run(SAMPLES / "vadd")
    assert r.passed, r.errors
    assert [s.name for s in r.stages] == ["gen_data", "emulate", "verify"]
    assert r.sample.verify["exit"] == 0 and "test pass!" in r.sample.verify["output"]
    assert r.precision.verdict == "PASS"
    assert r.chip == "ascend910b" and r.block_dim == 4
    (launch,) = r.sample.launches
    assert launch["kernel"] == "vadd" and launch["line"] == _line_of(SAMPLES / "vadd/vadd.asc", "<<<")
    assert r.emulation.gm_write == 4096 * 4
    assert classify(r) == ("PASS", "")
    assert not (SAMPLES / "vadd/output").exists()  # the user's directory is never written


def test_two_launches_template_kernel_and_aclrt_launch_kernel():
    r = _run(SAMPLES / "multi")
    assert r.passed, r.errors
    src = SAMPLES / "multi/multi.asc"
    got = [(ln["kernel"], ln["line"], ln["blocks"]) for ln in r.sample.launches]
    assert got == [
        ("scale", _line_of(src, "scale<3><<<"), 2),
        ("vadd", _line_of(src, "ACLRT_LAUNCH_KERNEL(vadd)"), 4),
    ]
    assert len(r.sample.emulations) == 2
    assert "emulations" not in r.to_dict()["sample"]  # JSON keeps the launch summaries


def test_split_layout_kernel_cpp_and_main_cpp():
    r = _run(SAMPLES / "split")
    assert r.passed, r.errors
    assert r.path.endswith("vsub_kernel.cpp")
    assert r.sample.launches[0]["line"] == _line_of(SAMPLES / "split/main.cpp", "ACLRT_LAUNCH_KERNEL(vsub)")


def test_no_data_scripts_still_runs_and_says_no_golden():
    r = _run(SAMPLES / "nogold")
    assert r.passed and r.precision is None
    assert r.sample.precision == "not checked: no golden"
    assert "sum=96.0" in r.sample.stdout
    assert classify(r) == ("RAN", "not checked: no golden")


def _error(r):
    assert not r.passed and r.errors
    return r.errors[0]


def test_gen_data_that_raises_names_its_line(tmp_path):
    d = copy_sample(tmp_path)
    gen = d / "scripts/gen_data.py"
    gen.write_text("import numpy as np\n\nraise ValueError('no data today')\n")
    e = _error(_run(d))
    assert e.file == str(gen) and e.line == 3 and "no data today" in e.message


def test_gen_data_that_hangs_times_out(tmp_path):
    d = copy_sample(tmp_path)
    (d / "scripts/gen_data.py").write_text("while True:\n    pass\n")
    e = _error(_run(d, timeout_s=0.5))
    assert "did not finish" in e.message and e.file.endswith("gen_data.py")


def test_gen_data_of_the_wrong_size_names_the_read(tmp_path):
    d = copy_sample(tmp_path)
    edit(d / "scripts/gen_data.py", "uniform(-2, 2, 4096)", "uniform(-2, 2, 8192)")
    e = _error(_run(d))
    asc = d / "vadd.asc"
    assert e.file == str(asc) and e.line == _line_of(asc, "input_x.bin")
    assert "input_x.bin has 32768 bytes, more than the buffer's 16384" in e.message


def test_main_reading_a_missing_file(tmp_path):
    d = copy_sample(tmp_path)
    edit(d / "vadd.asc", "input_y.bin", "input_q.bin")
    e = _error(_run(d))
    assert e.line == _line_of(d / "vadd.asc", "input_q.bin") and "no file './input/input_q.bin'" in e.message


def test_main_freeing_twice(tmp_path):
    d = copy_sample(tmp_path)
    edit(d / "vadd.asc", "    aclrtFreeHost(zh);\n", "    aclrtFreeHost(zh);\n    aclrtFreeHost(zh);\n")
    e = _error(_run(d))
    first = _line_of(d / "vadd.asc", "aclrtFreeHost(zh)")
    assert e.line == first + 1 and f"already freed at vadd.asc:{first}" in e.message


def test_launch_with_more_blocks_than_the_chip_takes(tmp_path):
    d = copy_sample(tmp_path)
    edit(d / "vadd.asc", "uint32_t blocks = 4;", "uint32_t blocks = 70000;")
    e = _error(_run(d))
    assert e.line == _line_of(d / "vadd.asc", "<<<") and "70000 blocks" in e.message


def test_host_construct_outside_the_subset_is_unsupported_with_its_line(tmp_path):
    d = copy_sample(tmp_path)
    edit(d / "vadd.asc", "    aclFinalize();\n", "    aclFinalize();\n    aclrtGetMagic(1);\n")
    r = _run(d)
    status, reason = classify(r)
    assert status == "UNSUPPORTED" and "aclrtGetMagic" in reason
    assert r.errors[0].line == _line_of(d / "vadd.asc", "aclrtGetMagic")


def test_conformance_rows(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    for name in ("vadd", "nogold"):
        shutil.copytree(SAMPLES / name, root / name)
    other = copy_sample(root, "split")
    edit(other / "main.cpp", "return 0;", "return 0;")
    shutil.copytree(SAMPLES / "vadd", root / "arch3510")
    edit(root / "arch3510/CMakeLists.txt", "dav-2201", "dav-3510")
    rows = {r.sample: r for r in conformance(root, 60, None, jobs=2)}
    assert {k: r.status for k, r in rows.items()} == {
        "arch3510": "OUT OF SCOPE",
        "nogold": "RAN",
        "split": "PASS",
        "vadd": "PASS",
    }
    assert "dav-3510" in rows["arch3510"].reason


@pytest.mark.parametrize("fmt", ["--json", "--markdown"])
def test_conformance_cli(tmp_path, fmt, capsys):
    from asc_tui.cli import main

    shutil.copytree(SAMPLES / "nogold", tmp_path / "nogold")
    assert main(["conformance", str(tmp_path), fmt]) == 0
    out = capsys.readouterr().out
    assert "RAN" in out and "nogold" in out


def test_conformance_scope_runs_only_the_listed_samples_and_gives_their_pass_rate(tmp_path, capsys):
    from asc_tui.cli import main

    root = tmp_path / "tree"
    root.mkdir()
    for name in ("vadd", "nogold", "split"):
        shutil.copytree(SAMPLES / name, root / name)
    shutil.copytree(SAMPLES / "vadd", root / "arch3510")
    edit(root / "arch3510/CMakeLists.txt", "dav-2201", "dav-3510")
    scope = tmp_path / "scope.txt"
    scope.write_text("# in scope\nvadd\nnogold  # no golden: RAN, not PASS\n\narch3510\nmissing/one\n")
    assert main(["conformance", str(root), "--scope", str(scope)]) == 1  # the missing one FAILs
    out = capsys.readouterr().out
    assert "split" not in out  # not listed: not run
    assert "missing/one  no sample directory" in out
    assert "in scope: PASS 1/3 = 33.3% (OUT OF SCOPE samples not counted)" in out
    assert main(["conformance", str(root), "--scope", str(scope), "--json"]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["scope"] == {"pass": 1, "counted": 3, "percent": 100 / 3}
    assert main(["conformance", str(root), "--scope", str(tmp_path / "nope.txt")]) == 2


def test_param_overrides_a_constexpr_of_the_sample(tmp_path):
    base = _run(SAMPLES / "vadd")
    r = _run(SAMPLES / "vadd", params={"TILE": "1024"})
    assert r.passed and r.params == {"TILE": "1024"}
    assert r.emulation.kernel_cycles < base.emulation.kernel_cycles  # fewer, larger tiles
    e = _error(_run(SAMPLES / "vadd", params={"NOPE": "1"}))
    assert "no constant 'NOPE'" in e.message and "TILE, TOTAL" in e.message


def test_tune_sweeps_given_values_and_applies_the_best(tmp_path, capsys):
    from asc_tui.cli import main

    d = copy_sample(tmp_path)
    argv = ["tune", str(d), "--param-values", "TILE=128,1024", "--apply", "--yes"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "best: TILE=1024" in out
    assert "constexpr uint32_t TILE = 1024;" in (d / "vadd.asc").read_text()
    assert main(["tune", str(d)]) == 2  # a sample names its values


def test_the_output_dtype_follows_the_verify_scripts_variable(tmp_path):
    from asc_tui.devkit.samples.sample import output_dtype, sample_for

    d = copy_sample(tmp_path)
    (d / "scripts/verify_result.py").write_text(
        "import numpy as np\noutput_type = np.int32\nout = np.fromfile('o', dtype=output_type)\n"
    )
    assert output_dtype(sample_for(d)) == np.dtype(np.int32)


def test_blocks_meet_at_sync_all_and_add_atomically_in_a_cpp_sample():
    r = _run(SAMPLES / "blocksum")
    assert r.passed, r.errors
    assert r.precision.verdict == "PASS" and r.block_dim == 4
    em = r.sample.emulations[0]
    ops = np.array(em.ops)[em.records.op]
    waits = em.records.end[ops == "SyncAll"] - em.records.start[ops == "SyncAll"]
    assert waits.size >= 1 and waits.max() > 0  # earlier blocks waited for the last one


def test_a_block_that_skips_sync_all_in_a_cpp_sample_is_a_deadlock_at_the_line(tmp_path):
    d = copy_sample(tmp_path, "blocksum")
    src = d / "blocksum.asc"
    edit(src, "    AscendC::SyncAll();", "    if (b == 3) { return; }\n    AscendC::SyncAll();")
    r = _run(d)
    (err,) = r.errors
    assert (
        "deadlock between blocks" in err.message and "block(s) 3 ended without getting there" in err.message
    )
    assert err.line == _line_of(src, "AscendC::SyncAll();") and err.file == str(src)


def test_a_verify_script_that_checks_part_of_the_output_passes_but_the_whole_output_is_still_compared(
    tmp_path,
):
    d = copy_sample(tmp_path)
    edit(
        d / "scripts/gen_data.py",
        "(x + y).tofile",
        "np.concatenate([(x + y)[:2048], np.zeros(2048, np.float32)]).tofile",
    )
    edit(
        d / "scripts/verify_result.py",
        "gold = np.fromfile(sys.argv[2], dtype=np.float32)",
        "gold = np.fromfile(sys.argv[2], dtype=np.float32)\nout, gold = out[:2048], gold[:2048]",
    )
    r = _run(d)
    assert r.sample.verify["exit"] == 0
    status, reason = classify(r)
    assert status == "FAIL"
    assert reason.startswith("verify_result.py passed, but asc-tui's precision check of the whole output.bin")


def test_conformance_on_a_tree_with_nothing_to_run_fails_and_says_so(tmp_path, capsys):
    from asc_tui.cli import main

    assert main(["conformance", str(tmp_path)]) == 2
    assert f"no samples or operators under {tmp_path}" in capsys.readouterr().err
    assert main(["conformance", str(tmp_path), "--json"]) == 2
    (err,) = json.loads(capsys.readouterr().out)["errors"]
    assert err["message"] == f"no samples or operators under {tmp_path}"
    assert (err["file"], err["line"], err["column"]) == (None, None, None)
