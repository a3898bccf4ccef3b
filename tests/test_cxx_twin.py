"""A translated kernel and its Python twin emulate the same instructions: same cycles, same data."""

from pathlib import Path

import numpy as np
import pytest

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import RunRequest, run

CXX_ADD = Path(__file__).resolve().parent.parent / "benchmarks" / "cxx" / "add_custom.asc"


@pytest.mark.parametrize("case", ["default", "tail", "fp32"])
def test_cpp_add_custom_matches_the_python_twin(case):
    cxx = run(RunRequest(str(CXX_ADD), case=case, params={"BUFFER_NUM": 2}))
    py = run(RunRequest("add_custom", case=case, params={"buffer_num": 2}))
    assert not cxx.errors, cxx.errors
    assert cxx.precision.verdict == "PASS"
    assert cxx.emulation.kernel_cycles == py.emulation.kernel_cycles
    assert cxx.emulation.instructions == py.emulation.instructions


def test_buffer_num_param_reaches_the_queue_depth_template_argument():
    one = run(RunRequest(str(CXX_ADD), params={"BUFFER_NUM": 1}))
    two = run(RunRequest(str(CXX_ADD), params={"BUFFER_NUM": 2}))
    py_one = run(RunRequest("add_custom", params={"buffer_num": 1}))
    assert one.emulation.kernel_cycles == py_one.emulation.kernel_cycles
    assert one.emulation.kernel_cycles != two.emulation.kernel_cycles


def test_timing_only_mode_gives_the_same_timeline():
    full = run(RunRequest(str(CXX_ADD)))
    timing = run(RunRequest(str(CXX_ADD), timing_only=True))
    assert np.isclose(full.emulation.kernel_cycles, timing.emulation.kernel_cycles)


def test_the_operator_name_is_the_kernel_files_stem():
    op = load_operator(CXX_ADD)
    assert op.name == "add_custom" and op.path == str(CXX_ADD)
    assert op.sources[0] == str(CXX_ADD) and op.sources[-1].endswith("add_custom.py")
