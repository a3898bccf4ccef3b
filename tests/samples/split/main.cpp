// Host side of the split-layout test sample.
#include "acl/acl.h"
#include "data_utils.h"
#ifndef ASCENDC_CPU_DEBUG
#include "aclrtlaunch_vsub.h"
#endif

int32_t main(int32_t argc, char* argv[])
{
    uint32_t n = 512;
    size_t bytes = n * sizeof(float);
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    uint8_t *xh, *yh, *zh, *xd, *yd, *zd;
    aclrtMallocHost((void**)(&xh), bytes);
    aclrtMallocHost((void**)(&yh), bytes);
    aclrtMallocHost((void**)(&zh), bytes);
    aclrtMalloc((void**)&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&zd, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    ReadFile("./input/x.bin", bytes, xh, bytes);
    ReadFile("./input/y.bin", bytes, yh, bytes);
    aclrtMemcpy(xd, bytes, xh, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(yd, bytes, yh, bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    ACLRT_LAUNCH_KERNEL(vsub)(1, stream, xd, yd, zd, n);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(zh, bytes, zd, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    WriteFile("./output/output.bin", zh, bytes);
    aclrtFree(xd);
    aclrtFree(yd);
    aclrtFree(zd);
    aclrtFreeHost(xh);
    aclrtFreeHost(yh);
    aclrtFreeHost(zh);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
