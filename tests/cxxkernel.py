"""Run a small C++ kernel `k(x, z)` through a host main() on the emulated NPU (tests helper)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np

from asc_tui.cxx.host.run import run_host
from asc_tui.npu.chip import load_chip

MAIN = """
int32_t main(int32_t argc, char* argv[])
{
    size_t inBytes = IN_BYTES;
    size_t outBytes = OUT_BYTES;
    uint8_t *xh = nullptr, *zh = nullptr, *xd = nullptr, *zd = nullptr;
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclrtMallocHost((void**)(&xh), inBytes);
    aclrtMallocHost((void**)(&zh), outBytes);
    aclrtMalloc((void**)&xd, inBytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&zd, outBytes, ACL_MEM_MALLOC_HUGE_FIRST);
    ReadFile("./input/x.bin", inBytes, xh, inBytes);
    aclrtMemcpy(xd, inBytes, xh, inBytes, ACL_MEMCPY_HOST_TO_DEVICE);
    LAUNCH<<<BLOCKS, nullptr, stream>>>(xd, zd);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(zh, outBytes, zd, outBytes, ACL_MEMCPY_DEVICE_TO_HOST);
    WriteFile("./output/z.bin", zh, outBytes);
    aclrtFree(xd);
    aclrtFree(zd);
    aclrtFreeHost(xh);
    aclrtFreeHost(zh);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def run_kernel(
    tmp_path: Path, src: str, x: np.ndarray, out_dtype, out_count: int, launch="k", blocks=1, main=MAIN, **kw
):
    """Write `src` + a main() launching `launch(x, z)`; return (z as `out_dtype`, the AclRuntime).
    `main` may be the test's own (IN_BYTES, OUT_BYTES, LAUNCH, BLOCKS are filled in)."""
    out_bytes = np.dtype(out_dtype).itemsize * out_count
    main = main.replace("IN_BYTES", str(x.nbytes)).replace("OUT_BYTES", str(out_bytes))
    main = main.replace("LAUNCH", launch).replace("BLOCKS", str(blocks))
    text = '#include "acl/acl.h"\n#include "kernel_operator.h"\n' + textwrap.dedent(src) + main
    path = tmp_path / "k.asc"
    path.write_text(text)
    (tmp_path / "input").mkdir(exist_ok=True)
    (tmp_path / "output").mkdir(exist_ok=True)
    x.tofile(tmp_path / "input" / "x.bin")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        acl = run_host(str(path), chip=load_chip("ascend910b"), **kw)
    finally:
        os.chdir(old)
    return np.fromfile(tmp_path / "output" / "z.bin", dtype=out_dtype), acl


def line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


def add_one_kernel(head: str, setup: str, buffer: str, n: str) -> str:
    """C++ source of `k(x, z)`: `head` (declarations before it), `setup` (statements that set
    GlobalTensors xg and zg up), then zg = xg + 1 over `n` halfs through one queue of `buffer`
    halfs."""
    body = textwrap.indent(textwrap.dedent(setup).strip(), "    ")
    return f"""{textwrap.dedent(head).strip()}
extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR z)
{{
    AscendC::GlobalTensor<half> xg, zg;
{body}
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, {buffer} * sizeof(half));
    AscendC::LocalTensor<half> t = q.AllocTensor<half>();
    AscendC::DataCopy(t, xg, {n});
    q.EnQue(t);
    t = q.DeQue<half>();
    AscendC::Adds(t, t, (half)1.0, {n});
    AscendC::DataCopy(zg, t, {n});
    q.FreeTensor(t);
}}
"""


def blocks_that_ran(monkeypatch) -> list:
    """The blocks that run the kernel's Python from now on (a replayed block makes no Core)."""
    from asc_tui.npu.launch import blocks as launch_mod

    ran = []
    core = launch_mod.Core
    monkeypatch.setattr(launch_mod, "Core", lambda run, b, *a: (ran.append(b), core(run, b, *a))[1])
    return ran


def step_by_step_timeline(tmp_path: Path, src: str, x: np.ndarray, blocks: int, numeric: bool):
    """The timeline key of `src` run with block replay off (what a replayed run must equal)."""

    def step_by_step(r):
        r.replay = False

    _, acl = run_kernel(
        tmp_path, src, x, x.dtype, x.size, blocks=blocks, numeric=numeric, configure=step_by_step
    )
    return acl.launches[0].result.timeline_key()
