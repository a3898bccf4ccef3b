"""A float32 C++ operator for the kernel API tests: `copy(x, y, n)` with GlobalTensors xg and yg
of n floats set up around the test's body, a numpy golden, run once."""

from __future__ import annotations

import textwrap

from cxxop import make_op

from asc_tui.devkit.run.runner import RunRequest, run

HEAD = """
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void copy(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    yg.SetGlobalBuffer((__gm__ float*)y, n);
"""


def float_kernel(body: str) -> str:
    return HEAD + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n}\n"


def run_float_op(tmp_path, body: str, n: int, golden: str = "x"):
    """Run the kernel on n random floats; `golden` is a numpy expression of x."""
    path = make_op(tmp_path, float_kernel(body), n=n, golden=golden)
    spec = tmp_path / "copy.py"
    spec.write_text("import numpy as np\n" + spec.read_text())
    return path, run(RunRequest(str(path)))
