"""The golden sees the inputs as they were before the launch; a kernel that writes an input FAILs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np

from asc_tui.cli.debug_cmd import print_report as print_debug
from asc_tui.devkit.debug.debugger import DebugRequest, debug
from asc_tui.devkit.pristine import Originals
from asc_tui.devkit.run import inputs
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import RunRequest, prepare, run
from asc_tui.operator import In

ROOT = Path(__file__).resolve().parents[1]
CLOBBER = ROOT / "operators" / "bugs" / "clobber_input.py"
CLOBBER_CXX = ROOT / "tests" / "cxx_data" / "clobber_input.asc"
ADD = ROOT / "operators" / "add_custom.py"
VADD = ROOT / "tests" / "samples" / "vadd"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "asc_tui", *args], capture_output=True, text=True, timeout=300, cwd=ROOT
    )


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_the_clobbered_input_operator_fails_from_the_cli_and_names_the_input():
    out = cli("run", str(CLOBBER))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "precision FAIL" in out.stdout
    assert "input 'x' overwritten: 4096 of 4096 elements changed" in out.stdout


def test_the_cxx_clobbered_input_project_fails_from_the_cli_with_json():
    out = cli("run", str(CLOBBER_CXX), "--json")
    assert out.returncode == 1, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    rep = doc[0] if isinstance(doc, list) else doc
    assert rep["passed"] is False
    p = rep["precision"]
    assert p["verdict"] == "FAIL"
    (note,) = p["inputs_overwritten"]
    assert note["name"] == "x" and note["changed"] == note["count"] == 4096
    assert "overwritten" in p["reason"]


def test_the_golden_gets_the_values_the_kernel_was_given():
    """golden(x) must see the drawn x, not the zeros the kernel wrote over it."""
    op = load_operator(str(CLOBBER))
    seen = []
    real = op.module.golden
    op.module.golden = lambda case, x: seen.append(x.copy()) or real(case, x)
    rep = run(RunRequest(str(CLOBBER)), op=op)
    want = prepare(op, None, {}, False, 0).arrays["x"]
    assert np.array_equal(seen[0], want) and np.any(want != 0)
    assert rep.precision.verdict == "FAIL" and rep.precision.overwritten[0].name == "x"


def test_debug_shows_the_unwritten_read_and_the_write_into_the_input_next_to_the_fail(capsys):
    r = debug(DebugRequest(str(CLOBBER), precision_check=True))
    kinds = {(f.tool, f.kind, f.line) for f in r.findings}
    assert ("initcheck", "uninitialized", line_of(CLOBBER, "AscendC.Relu(")) in kinds
    assert ("memcheck", "input-overwrite", line_of(CLOBBER, "# BUG: writes over x")) in kinds
    print_debug(r)
    text = capsys.readouterr().out
    fail = text.index("precision FAIL: input 'x' overwritten")
    related = text.index("related: Uninitialized read detected at clobber_input.py:")
    assert fail < related < text.index("\n  FAIL: ")


def test_a_correct_operator_passes_and_reports_no_write_into_its_inputs():
    r = debug(DebugRequest(str(ADD), precision_check=True))
    assert r.clean, [f.format() for f in r.findings]
    assert r.precision.overwritten == ()


def test_an_input_the_cache_cannot_keep_is_drawn_again_from_its_seed(monkeypatch):
    """Over the budget (or a callable init) there is no kept copy: a CRC before the launch says
    the input changed, and the seeded draw gives the golden its values back."""
    monkeypatch.setattr(inputs, "budget", lambda: 0)
    inputs._cache.clear()
    op = load_operator(str(CLOBBER))
    setup = prepare(op, None, {}, False, 0)
    assert setup.originals.kept is None and set(setup.originals.crcs) == {"x"}
    fresh = setup.arrays["x"].copy()
    setup.arrays["x"][::3] = 0
    (note,) = setup.originals.restore(setup.arrays)
    assert np.array_equal(setup.arrays["x"], fresh)
    assert note.first == 0 and note.was == float(fresh[0]) and note.now == 0.0 and note.exact
    assert note.changed == int(np.count_nonzero(fresh[::3] != 0))


def test_a_callable_init_that_draws_other_values_again_says_so():
    calls = []

    def init(rng, shape):
        calls.append(1)
        return np.full(shape, len(calls), np.float32)

    specs = {"x": In(16, np.float32, init=init)}
    arr = specs["x"].generate(np.random.default_rng(0))
    o = Originals.before_launch(specs, {"x": arr}, None, 0)
    arr[3] = 9
    (note,) = o.restore({"x": arr})
    assert not note.exact and "does not" in note.message


def test_checking_the_inputs_makes_no_copy_of_them():
    """80M-element cases must not double their peak: an unchanged input costs no copy, whether
    it is compared with the cache's copy or by CRC."""
    specs = {"x": In(1 << 23, np.float16)}
    arr = specs["x"].generate(np.random.default_rng(1))
    kept = {"x": arr.copy()}
    for o in (
        Originals.before_launch(specs, {"x": arr}, kept, 1),
        Originals.before_launch(specs, {"x": arr}, None, 1),
    ):
        tracemalloc.start()
        assert o.restore({"x": arr}) == ()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < arr.nbytes // 8, peak


def test_a_kept_input_is_compared_with_the_cache_and_never_copied_again():
    inputs._cache.clear()
    op = load_operator(str(ADD))
    setup = prepare(op, None, {}, False, 0)
    kept = inputs.untouched(inputs.cache_key(setup.specs.specs, setup.originals.seed))
    assert setup.originals.kept is kept and setup.originals.crcs == {}
    assert all(not a.flags.writeable for a in kept.values())  # the golden never gets the cache's


def _sample(tmp_path, kernel_op="Add", extra_write="") -> Path:
    dst = tmp_path / "vadd"
    shutil.copytree(VADD, dst)
    src = dst / "vadd.asc"
    text = src.read_text().replace("AscendC::Add(c, a, b, TILE);", f"AscendC::{kernel_op}(c, a, b, TILE);")
    text = text.replace(
        '    WriteFile("./output/output.bin", zh, bytes);\n',
        '    WriteFile("./output/output.bin", zh, bytes);\n' + extra_write,
    )
    src.write_text(text)
    return dst


def test_a_sample_main_that_writes_the_golden_file_cannot_make_a_wrong_kernel_pass(tmp_path):
    d = _sample(tmp_path, "Sub", '    WriteFile("./output/golden.bin", zh, bytes);\n')
    r = run(RunRequest(str(d)))
    assert not r.passed and r.precision.verdict == "FAIL"
    (note,) = r.precision.overwritten
    assert note.name == "output/golden.bin" and note.unit == "bytes"
    assert note.line == line_of(d / "vadd.asc", 'WriteFile("./output/golden.bin"')
    assert r.sample.verify["exit"] != 0  # the verify script saw gen_data.py's golden too


def test_a_sample_main_that_writes_an_input_file_back_is_a_fail_and_verify_reads_the_original(tmp_path):
    d = _sample(tmp_path, extra_write='    WriteFile("./input/input_x.bin", zh, bytes);\n')
    verify = d / "scripts" / "verify_result.py"
    verify.write_text(  # this verify script recomputes the golden from the input files
        verify.read_text().replace(
            "gold = np.fromfile(sys.argv[2], dtype=np.float32)",
            "x, y = (np.fromfile(f'input/input_{v}.bin', np.float32) for v in 'xy'); gold = x + y",
        )
    )
    r = run(RunRequest(str(d)))
    assert r.sample.verify["exit"] == 0, r.sample.verify
    assert r.precision.verdict == "FAIL" and r.precision.overwritten[0].name == "input/input_x.bin"
    assert all(o.verdict == "PASS" for o in r.precision.outputs)


def test_a_sample_main_that_writes_only_its_output_passes(tmp_path):
    r = run(RunRequest(str(_sample(tmp_path))))
    assert r.passed and r.precision.overwritten == ()
