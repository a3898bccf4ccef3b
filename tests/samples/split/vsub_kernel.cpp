// Test sample, older layout: the kernel alone; main.cpp launches it.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void vsub(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t n)
{
    AscendC::GlobalTensor<float> xg, yg, zg;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    yg.SetGlobalBuffer((__gm__ float*)y, n);
    zg.SetGlobalBuffer((__gm__ float*)z, n);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * n * sizeof(float));
    AscendC::LocalTensor<float> a = buf.Get<float>();
    AscendC::LocalTensor<float> b = a[n];
    AscendC::LocalTensor<float> c = a[2 * n];
    AscendC::DataCopy(a, xg, n);
    AscendC::DataCopy(b, yg, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Sub(c, a, b, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zg, c, n);
}
