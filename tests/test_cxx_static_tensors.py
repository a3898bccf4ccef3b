"""Static tensor programming in C++: `LocalTensor<T>(pos, addr, len)` at fixed UB addresses, in
both the declaration and the temporary spelling, keeps its element type (level-0 strides count
32 B blocks of T)."""

import numpy as np
from cxxfloat import run_float_op

BODY = """
LocalTensor<float> a(TPosition::VECIN, 0, 512);
LocalTensor<float> b = AscendC::LocalTensor<float>(TPosition::VECOUT, 512 * sizeof(float), 512);
DataCopy(a, xg, n);
SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
Copy(b, a, 64, 4, {1, 2, 8, 16});
Copy(b[256], a[8], 64, 4, {1, 2, 8, 16});
SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
DataCopy(yg, b, n);
"""


def test_static_local_tensors_keep_their_type_through_level0_copy(tmp_path):
    blocks = "x.reshape(-1, 8)"
    golden = f"np.concatenate([{blocks}[0::2], {blocks}[1::2]]).reshape(-1)"
    _path, report = run_float_op(tmp_path, BODY, 512, golden)
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"
    assert report.precision.outputs[0].max_abs_error == 0
    assert np.isclose(report.emulation.gm_write, 512 * 4)


def test_a_static_tensor_off_a_32_byte_boundary_is_named_at_its_line(tmp_path):
    body = BODY.replace("(TPosition::VECIN, 0, 512)", "(TPosition::VECIN, 16, 512)")
    path, report = run_float_op(tmp_path, body, 512)
    (err,) = report.errors
    assert "32 B boundary" in err.message and err.file == str(path)
    assert "(TPosition::VECIN, 16, 512)" in err.snippet
