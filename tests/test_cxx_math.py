"""C++ scalar conversions and <cmath>: each result is the C++ type's value (fp32 stays fp32, double is double)."""

import math

import numpy as np
from cxxop import copy_kernel, make_op
from cxxsrc import call

from asc_tui.devkit.run.runner import RunRequest, run


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


def test_sqrtf_is_fp32_and_sqrt_of_double_is_double(tmp_path):
    assert call(tmp_path, "double f() { return sqrtf(2.0f); }") == float(np.float32(math.sqrt(2)))
    assert call(tmp_path, "double f() { return sqrt(2.0); }") == math.sqrt(2)
    assert call(tmp_path, "double f() { return std::sqrt(2.0); }") == math.sqrt(2)
    assert call(tmp_path, "double f() { float x = 2.0f; return std::sqrt(x); }") == float(
        np.float32(math.sqrt(2))
    )
    assert call(tmp_path, "double f() { return sqrt(2); }") == math.sqrt(2)


def test_the_cmath_family(tmp_path):
    f32 = lambda v: float(np.float32(v))  # noqa: E731
    assert call(tmp_path, "double f() { return expf(1.0f); }") == f32(math.exp(1))
    assert call(tmp_path, "double f() { return exp(1.0); }") == math.exp(1)
    assert call(tmp_path, "double f() { return log(10.0); }") == math.log(10)
    assert call(tmp_path, "double f() { return logf(10.0f); }") == f32(math.log(10))
    assert call(tmp_path, "double f() { return fabs(-1.5); }") == 1.5
    assert call(tmp_path, "int32_t f() { return abs(-3); }") == 3
    assert call(tmp_path, "double f() { return std::abs(-2.5f); }") == 2.5
    assert call(tmp_path, "double f() { return pow(2.0, 0.5); }") == math.sqrt(2)
    assert call(tmp_path, "double f() { return powf(2.0f, 0.5f); }") == f32(math.sqrt(2))
    assert call(tmp_path, "double f() { return fmin(1.0, 2.0) + fmax(3.0, 4.0); }") == 5.0
    assert call(tmp_path, "double f() { return floor(-1.5) + ceil(1.2) + floorf(2.5f); }") == -2 + 2 + 2
    assert call(tmp_path, "double f() { return std::min(1.5, 2.0) + std::max(3, 4); }") == 5.5
    assert call(tmp_path, "double f() { return 1.0 / std::sqrt(0.1f); }") == 1.0 / f32(math.sqrt(f32(0.1)))


def test_a_c_cast_of_a_parenthesized_expression(tmp_path):
    src = "double f() { double a = 1.0 / 3; float b = (float)(a); return (half)(a) + b + (double)(b) + (int32_t)(a * 6); }"
    h = float(np.float16(1 / 3))
    b = float(np.float32(1 / 3))
    assert call(tmp_path, src) == float(np.float32(h + b)) + b + 2  # half + float is float


def test_a_c_cast_to_a_template_type_parameter(tmp_path):
    src = """
    template <typename T> T g(double a) { return (T)(a) + (T)(a); }
    double f() { return g<half>(1.0 / 3); }
    """
    assert call(tmp_path, src) == float(np.float16(float(np.float16(1 / 3)) * 2))
