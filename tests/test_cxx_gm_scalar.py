"""Scalar GM access from C++: `GlobalTensor<T>::GetPhyAddr([i])` is a `__gm__ T*`, and
`Read/WriteGmByPassDCache<T>` move a T whatever type the buffer was allocated with."""

from cxxfloat import run_float_op

BODY = """
LocalMemAllocator<Hardware::UB> alloc;
LocalTensor<float> a = alloc.Alloc<float, 64>();
DataCopy(a, xg, n);
PipeBarrier<PIPE_ALL>();
DataCopy(yg, a, n);
PipeBarrier<PIPE_ALL>();
GlobalTensor<int32_t> xi, yi;
xi.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(x));
yi.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(y));
__gm__ int32_t* src = const_cast<__gm__ int32_t*>(xi.GetPhyAddr());
int32_t bits = ReadGmByPassDCache<int32_t>(src + 2);
DataSyncBarrier<MemDsbT::DDR>();
WriteGmByPassDCache<int32_t>(yi.GetPhyAddr(5), bits ^ 0x80000000);
"""


def test_gm_bypass_reads_and_writes_move_the_template_type(tmp_path):
    _path, report = run_float_op(tmp_path, BODY, 64, "np.concatenate([x[:5], -x[2:3], x[6:]])")
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS", report.precision.outputs[0].reason
    assert report.precision.outputs[0].max_abs_error == 0
