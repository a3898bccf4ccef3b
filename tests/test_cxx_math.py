"""C++ scalar conversions and <cmath>: each result is the C++ type's value (fp32 stays fp32, double is double)."""

import numpy as np
from cxxsrc import call
from test_cxx_operator import copy_kernel, make_op

from asc_tui.devkit.runner import RunRequest, run


def _log(tmp_path, body):
    report = run(RunRequest(str(make_op(tmp_path, copy_kernel(body)))))
    assert not report.errors, report.errors
    return [e.text for e in report.emulation.log]


def test_get_value_widened_to_double_is_computed_in_double(tmp_path):
    body = (
        't.SetValue(0, 1.0f); double third = static_cast<double>(t.GetValue(0)) / 3; printf("%.17g", third);'
    )
    assert "0.33333333333333331" in _log(tmp_path, body)


def test_get_value_of_a_float_tensor_stays_fp32_in_float_arithmetic(tmp_path):
    body = 't.SetValue(0, 1.0f); float third = t.GetValue(0) / 3; double d = third; printf("%.17g", d);'
    assert "0.3333333432674408" in _log(tmp_path, body)


def test_casts_give_the_cpp_type_value(tmp_path):
    src = "double f() { float x = 0.1f; return (double)x + static_cast<int32_t>(2.9) + (float)1e-9; }"
    assert call(tmp_path, src) == 0.10000000149011612 + 2 + float(np.float32(1e-9))
