"""The public Ascend C samples (asc-devkit examples/01_simd_cpp_api/00_introduction), run as is.

The kernels are read from the asc-devkit checkout when it is on this machine (nothing of them is
kept here); tests/cxx_samples/ holds the specs written for them. Kernels that need more of the
kernel API than the twin has are listed with the first thing they stop at, so a twin extension
shows up here as a test to update.
"""

import shutil
from pathlib import Path

import pytest

from asc_tui.devkit.run.runner import RunRequest, run

INTRO = Path("/work/asc-devkit/examples/01_simd_cpp_api/00_introduction")
SPECS = Path(__file__).resolve().parent / "cxx_samples"

RUNS = {
    "00_quickstart/hello_world": "hello_world",
    "01_add/add": "add",
    "01_add/add_tpipe_tque": "add_tpipe_tque",
    "02_matrix/matmul_basic_api": "matmul_basic_api",
    "03_fusion_operation/matmul_leakyrelu_basic_api": "matmul_leakyrelu_basic_api",
    "02_matrix/matmul_advanced_api": "matmul_advanced_api",
    "03_fusion_operation/matmul_leakyrelu_advanced_api": "matmul_leakyrelu_advanced_api",
}
STOPS = {
    "02_matrix/matmul_tensor_api": ("matmul", "unknown function 'MakeTensor'"),
    "04_reg_compute/add": ("add", "not supported yet: asc_vf_call"),
    "04_reg_compute/gelu": ("gelu", "not supported yet: asc_vf_call"),  # GetVecLen: twin has it
}
#: Samples that share a spec (same shapes; their golden matters once the twin runs them).
SHARED_SPECS = {
    "02_matrix/matmul_tensor_api": "02_matrix/matmul_basic_api",
    "04_reg_compute/gelu": "04_reg_compute/add",
}

pytestmark = pytest.mark.skipif(not INTRO.is_dir(), reason="asc-devkit samples not on this machine")


def _sample(tmp_path: Path, rel: str, stem: str) -> Path:
    src = INTRO / rel
    for f in [*src.glob("*.asc"), *src.glob("*.h")]:
        shutil.copy(f, tmp_path / f.name)
    spec = SHARED_SPECS.get(rel, rel).replace("/", "_") + ".py"
    shutil.copy(SPECS / spec, tmp_path / f"{stem}.py")
    return tmp_path / f"{stem}.asc"


@pytest.mark.parametrize("rel", sorted(RUNS))
def test_sample_kernel_runs_and_verifies(tmp_path, rel):
    report = run(RunRequest(str(_sample(tmp_path, rel, RUNS[rel]))))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"


@pytest.mark.parametrize("rel", sorted(STOPS))
def test_sample_kernel_stops_at_a_named_gap(tmp_path, rel):
    stem, needle = STOPS[rel]
    path = _sample(tmp_path, rel, stem)
    report = run(RunRequest(str(path)))
    assert report.errors and needle in report.errors[0].message
    assert report.errors[0].file == str(path) and report.errors[0].line


def test_hello_world_prints_from_every_block(tmp_path):
    report = run(RunRequest(str(_sample(tmp_path, "00_quickstart/hello_world", "hello_world"))))
    assert [e.text for e in report.emulation.log] == ["Hello World!!!"] * 8
