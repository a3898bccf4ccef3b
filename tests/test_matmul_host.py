"""The high-level Matmul as C++ samples use it: host tiling from the platform
(PlatformAscendCManager, MultiCoreMatmulTiling → TCubeTiling) and the Matmul object in cube-only
and mixed kernels (tests/samples/mmhigh, run through the console entry point)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from asc_tui.ascendc.matmul.tiling import MultiCoreMatmulTiling, TCubeTiling
from asc_tui.ascendc.platform import CoreMemType, PlatformAscendC, SocVersion
from asc_tui.cxx.host.acl import Buffer, Ptr
from asc_tui.cxx.host.lib import HostStruct
from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.npu.chip import load_chip

SAMPLE = Path(__file__).parent / "samples" / "mmhigh"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "asc_tui", *args], capture_output=True, text=True, timeout=300
    )


def test_mmhigh_sample_runs_and_verifies_through_the_cli():
    p = _cli("run", str(SAMPLE), "--json")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    d = json.loads(p.stdout)
    assert d["passed"] and d["precision"]["verdict"] == "PASS"
    assert d["sample"]["verify"]["output"].strip() == "test pass!"
    # the host's tiling: 50 int32 words; C1 (384 × 320 on 24 AICs) in 24 row bands of 16,
    # C2 (256 × 128 with 64 × 64 base blocks) split over N between the two AIVs
    assert d["sample"]["stdout"] == "tiling 200 bytes: 24 cores of 16x320; 2 AIVs of 256x64"
    assert [(ln["kernel"], ln["blocks"]) for ln in d["sample"]["launches"]] == [
        ("mm_bias", 24),
        ("mm_half", 1),
    ]
    # the mixed launch: the AIC ran the Mmads (4 blocks per AIV, one K slice each) and the
    # AIVs the Muls of every block
    assert d["pipes"]["cube"]["instructions"] == 8
    assert d["pipes"]["vec"]["instructions"] == 8


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "mmhigh"
    shutil.copytree(SAMPLE, dst)
    return dst


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_an_aiv_that_never_ends_its_matmul_leaves_the_server_waiting(tmp_path):
    d = _copy(tmp_path)
    src = d / "mmhigh.asc"
    _edit(src, "        round++;\n    }\n    mm.End();", "        round++;\n    }")
    r = run(RunRequest(str(d)))
    assert not r.passed
    msg = r.errors[0].message
    assert "Matmul server waits" in msg and "End()" in msg
    regist = [i for i, ln in enumerate(src.read_text().splitlines(), 1) if "REGIST_MATMUL_OBJ" in ln][1]
    assert f"line {regist}" in msg


def test_get_tensor_c_into_ub_needs_a_mixed_kernel(tmp_path):
    d = _copy(tmp_path)
    _edit(d / "mmhigh.asc", "__global__ __mix__(1, 2) void mm_half", "__global__ __cube__ void mm_half")
    r = run(RunRequest(str(d)))
    assert not r.passed and "needs a mixed kernel" in r.errors[0].message
    assert r.errors[0].line and r.errors[0].file.endswith("mmhigh.asc")


def test_platform_answers_from_the_chip_toml():
    b = PlatformAscendC(load_chip("ascend910b"))
    assert (b.GetCoreNumAic(), b.GetCoreNumAiv(), b.GetSocVersion()) == (24, 48, SocVersion.ASCEND910B)
    assert b.mem_size(CoreMemType.UB) == 196608 - 256  # 910B keeps 256 B for the Matmul server
    assert b.mem_size(CoreMemType.L0_C) == 131072
    assert b.GetLibApiWorkSpaceSize() == 16 * 1024 * 1024
    a = PlatformAscendC(load_chip("ascend910a"))
    assert a.GetSocVersion() == SocVersion.ASCEND910 and a.GetCoreNumAiv() == a.GetCoreNumAic() == 32
    assert a.mem_size(CoreMemType.UB) == 262144
    assert a.GetLibApiWorkSpaceSize() == 2 * 1024 * 1024


def _tiling(platform, m, n, k, dim, fix=None, shape=True):
    t = MultiCoreMatmulTiling(platform)
    t.SetDim(dim)
    t.SetOrgShape(m, n, k)
    if shape:
        t.SetShape(m, n, k)
    if fix:
        t.SetFixSplit(*fix)
    return t.GetTiling()


def test_core_split_with_set_shape_loads_the_least_per_core():
    b = PlatformAscendC(load_chip("ascend910b"))
    # 512 × 512 on 2 cores: halving M and halving N load as much; the first split that keeps
    # B 16 fractals wide wins (M), as the introduction sample's kernel expects
    t = _tiling(b, 512, 512, 128, 2)
    assert (t.usedCoreNum, t.singleCoreM, t.singleCoreN) == (2, 256, 512)
    # N = 128 is too narrow to keep wide: the last split tried wins (N), as the fusion sample's
    t = _tiling(b, 512, 128, 128, 2, (128, 64, 128))
    assert (t.usedCoreNum, t.singleCoreM, t.singleCoreN, t.baseM, t.baseN, t.baseK) == (
        2,
        512,
        64,
        128,
        64,
        128,
    )
    # a mini shape (everything fits one core's L0) stays on one core
    t = _tiling(b, 64, 64, 64, 24)
    assert (t.usedCoreNum, t.singleCoreM, t.singleCoreN) == (1, 64, 64)


def test_910b_split_mn_without_set_shape_follows_compute_intensity():
    b = PlatformAscendC(load_chip("ascend910b"))
    # equal intensity either way: the split with the higher band ratio wins (M here, N there)
    t = _tiling(b, 512, 512, 128, 2, shape=False)
    assert (t.usedCoreNum, t.singleCoreM, t.singleCoreN, t.baseM, t.baseN) == (2, 256, 512, 128, 256)
    t = _tiling(b, 512, 128, 128, 2, (128, 64, 128), shape=False)
    assert (t.usedCoreNum, t.singleCoreM, t.singleCoreN, t.baseM, t.baseN) == (2, 512, 64, 128, 64)
    # split over N (more compute per byte than 64-row halves of M), rounded up to 256 bytes of
    # B since every core still gets columns: 1152 = 640 + 512
    t = _tiling(b, 128, 1152, 64, 2, shape=False)
    assert (t.usedCoreNum, t.singleCoreM, t.singleCoreN) == (2, 128, 640)
    # not the 910B family: the general search instead (here it halves N)
    a = _tiling(PlatformAscendC(load_chip("ascend910a")), 128, 1152, 64, 2, shape=False)
    assert (a.singleCoreM, a.singleCoreN) != (128, 640)


def test_get_tiling_into_a_struct_returns_minus_one_when_nothing_fits():
    t = MultiCoreMatmulTiling(PlatformAscendC(load_chip("ascend910b")))
    t.SetDim(1)
    t.SetShape(256, 256, 256)
    t.SetBufferSpace(4096, -1, -1)  # 4 KB of L1: not even one base block of A and B
    out = HostStruct(TCubeTiling)
    assert t.GetTiling(out) == -1 and "L1" in t.error
    t2 = MultiCoreMatmulTiling(PlatformAscendC(load_chip("ascend910b")))
    t2.SetDim(1)
    t2.SetShape(256, 256, 256)
    assert t2.GetTiling(out) == 0 and out.M == 256 and out.usedCoreNum == 1


def test_host_tiling_struct_saves_its_words_and_freezes_for_a_launch():
    s = HostStruct(TCubeTiling)
    s.usedCoreNum, s.M, s.mxTypePara = 3, 512, 7
    with pytest.raises(AttributeError):
        s.notAField = 1
    assert s.GetDataSize() == 200
    p = Ptr(Buffer("tiling", 200, False, ("x", 1, 1)))
    s.SaveToBuffer(p, s.GetDataSize())
    words = p.buf.data.view(np.int32)
    assert words[0] == 3 and words[1] == 512 and words[-1] == 7
    frozen = s.freeze()
    assert isinstance(frozen, TCubeTiling) and frozen.M == 512


def test_a_plain_aicore_kernel_with_a_matmul_is_mixed_unless_cube_only(tmp_path):
    d = _copy(tmp_path)
    src = d / "mmhigh.asc"
    _edit(src, "__global__ __mix__(1, 2) void mm_half", "__global__ __aicore__ void mm_half")
    r = run(RunRequest(str(d)))
    assert r.passed, r.errors  # the compiler's choice: 1 AIC serving 2 AIVs, as __mix__(1, 2)
    _edit(src, '#include "lib/matmul_intf.h"', '#define ASCENDC_CUBE_ONLY\n#include "lib/matmul_intf.h"')
    r = run(RunRequest(str(d)))
    assert not r.passed and "needs a mixed kernel" in r.errors[0].message


def test_single_shape_and_traverse_fix_the_tiling():
    t = MultiCoreMatmulTiling(PlatformAscendC(load_chip("ascend910b")))
    t.SetDim(4)
    t.SetShape(512, 512, 256)
    t.SetSingleShape(128, 512, -1)
    t.SetTraverse(2)  # MatrixTraverse::FIRSTN
    got = t.GetTiling()
    assert (got.usedCoreNum, got.singleCoreM, got.singleCoreN, got.singleCoreK) == (4, 128, 512, 256)
    assert got.iterateOrder == 1

    class Out:
        def set(self, v):
            self.v = v

    m, n, k = Out(), Out(), Out()
    t.GetSingleShape(m, n, k)
    assert (m.v, n.v, k.v) == (128, 512, 256)


FUSED = Path(__file__).parent / "samples" / "mmfused"


def test_cube_only_mixed_kernel_with_a_hand_made_flag_runs_through_the_cli():
    p = _cli("run", str(FUSED), "--json")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    d = json.loads(p.stdout)
    assert d["passed"] and d["precision"]["verdict"] == "PASS"
    # the tiling went through bytes: SaveToBuffer, a struct view on the host, words in the kernel
    assert d["sample"]["stdout"] == "single core 64x96x80 on 1 core"
    assert d["pipes"]["vec"]["instructions"] == 2  # one Relu on each AIV's half of C
    assert d["pipes"]["cube"]["instructions"] > 0  # the AIC's own Mmads, no server


def test_without_cube_only_the_aic_serves_and_the_hand_made_flag_never_comes(tmp_path):
    d = tmp_path / "mmfused"
    shutil.copytree(FUSED, d)
    _edit(d / "mmfused.asc", "#define ASCENDC_CUBE_ONLY\n", "")
    r = run(RunRequest(str(d)))
    assert not r.passed
    msg = r.errors[0].message
    assert "cross-core deadlock" in msg and "Matmul server waits" in msg and "CrossCoreWaitFlag" in msg


def test_asynchronous_iterate_all_and_iterate_with_a_workspace(tmp_path):
    d = _copy(tmp_path)
    src = d / "mmhigh.asc"
    _edit(
        src,
        "mm.IterateAll(cg[mi * t.singleCoreM * t.N + ni * t.singleCoreN]);",
        "mm.template IterateAll<false>(cg[mi * t.singleCoreM * t.N + ni * t.singleCoreN], 0, false, true);\n"
        "    mm.WaitIterateAll();",
    )
    _edit(
        src,
        "    while (mm.template Iterate<true>()) {\n"
        "        AscendC::LocalTensor<float> raw = inQ.AllocTensor<float>();\n"
        "        mm.template GetTensorC<true>(raw, false, true);",
        "    mm.SetWorkspace(cg);\n"
        "    mm.template Iterate<false>();\n"
        "    while (round < (t.singleCoreM / t.baseM) * nBlocks) {\n"
        "        AscendC::LocalTensor<float> raw = inQ.AllocTensor<float>();\n"
        "        mm.template GetTensorC<false>(raw);",
    )
    r = run(RunRequest(str(d)))
    assert r.passed, r.errors
    # one GetTensorC too many: the asynchronous Iterate has no block left to give
    _edit(
        src,
        "while (round < (t.singleCoreM / t.baseM) * nBlocks)",
        "while (round <= (t.singleCoreM / t.baseM) * nBlocks)",
    )
    r = run(RunRequest(str(d)))
    assert not r.passed and "GetTensorC() without a block" in r.errors[0].message


def test_a_null_global_buffer_is_fine_until_the_kernel_touches_it(tmp_path):
    d = tmp_path / "mmfused"
    shutil.copytree(FUSED, d)
    src = d / "mmfused.asc"
    wait = "        AscendC::CrossCoreWaitFlag(5);\n"
    _edit(
        src,
        wait,
        wait + "        AscendC::GlobalTensor<float> none;\n        none.SetGlobalBuffer(nullptr);\n",
    )
    r = run(RunRequest(str(d)))
    assert r.passed, r.errors
    _edit(src, "        AscendC::DataCopy(x, part, half_);", "        AscendC::DataCopy(x, none, half_);")
    r = run(RunRequest(str(d)))
    assert not r.passed and "nullptr" in r.errors[0].message, r.errors
