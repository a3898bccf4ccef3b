"""Reductions whose kind is a template argument (`ReduceDataBlock<ReduceType::MAX, T>`,
`ReduceRepeat<…>`, `ReducePairElem<…>`) reach the twin with it, from C++."""

import pytest
from cxxfloat import run_float_op

BODY = """
LocalMemAllocator<Hardware::UB> alloc;
LocalTensor<float> a = alloc.Alloc<float, 512>();
LocalTensor<float> b = alloc.Alloc<float, 512>();
DataCopy(a, xg, n);
SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
Duplicate(b, 0.0f, 512);
CALL;
SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
DataCopy(yg, b, n);
"""

CASES = [
    # one result per 32 B block: 8 per repeat, 8 repeats
    ("ReduceDataBlock<ReduceType::MAX, float>(b, a, 64, 8, 1, 1, 8)", "x.reshape(-1, 8).max(1)"),
    ("ReduceDataBlock<ReduceType::MIN, float>(b, a, 64, 8, 1, 1, 8)", "x.reshape(-1, 8).min(1)"),
    # one result per repeat, value only
    (
        "ReduceRepeat<ReduceType::MAX, float>(b, a, 64, 8, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE)",
        "x.reshape(-1, 64).max(1)",
    ),
    # sums of adjacent pairs: 32 per repeat
    ("ReducePairElem<ReduceType::SUM, float>(b, a, 64, 8, 1, 1, 8)", "x.reshape(-1, 2).sum(1)"),
]


@pytest.mark.parametrize("call,want", CASES)
def test_reduce_kind_template_argument_reaches_the_twin(tmp_path, call, want):
    golden = f"np.concatenate([{want}, np.zeros(512, np.float32)])[:512].astype(np.float32)"
    _path, report = run_float_op(tmp_path, BODY.replace("CALL", call), 512, golden)
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS", report.precision.outputs[0].reason
    assert report.precision.outputs[0].max_abs_error < 1e-4
