"""Cube API guard rails, mixed AIC+AIV kernels and the high-level Matmul host tiling."""

from __future__ import annotations

import textwrap

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from asc_tui.ascendc.matmul.matmul import MultiCoreMatmulTiling, check_tiling
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import RunRequest, prepare, run

MEMORY = {"l1": 524288, "l0a": 65536, "l0b": 65536, "l0c": 131072, "bt": 1024}

HEADER = """
import numpy as np
from asc_tui import ascendc as AscendC
from asc_tui.ascendc import *
from asc_tui.operator import In, Out, Launch

CASES = {"default": dict(n=NUM)}

def tensors(case):
    return {"x": In(case.n, half), "y": Out(case.n, half)}

def tiling(case, p):
    return Launch(BLOCKS, case.n)

def golden(case, x):
    return GOLDEN

@AscendC.kernel(core_type="CORE")
def kernel(x, y, n):
"""


def source(body: str, core: str = "mix", n: int = 256, blocks: int = 1, golden: str = "x") -> str:
    head = (
        HEADER.replace("NUM", str(n))
        .replace("BLOCKS", str(blocks))
        .replace("CORE", core)
        .replace("GOLDEN", golden)
    )
    return head + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


def line_of(src: str, marker: str = "# <- here") -> int:
    return next(i for i, ln in enumerate(src.splitlines(), 1) if marker in ln)


def run_src(write_operator, name: str, src: str, **kw):
    return run(RunRequest(str(write_operator(name, src)), **kw))


def test_l0c_overflow_is_refused_naming_the_line_and_the_numbers():
    op = load_operator("matmul_leaky")
    report = run(RunRequest("matmul_leaky", params=op.module.LEAKY_PARAMS, timing_only=True))
    (err,) = report.errors
    assert err.file.endswith("matmul_leaky.py")
    assert "InitBuffer(self.q_c" in err.snippet
    assert "262144" in err.message and "131072" in err.message and "L0C" in err.message


def test_matmul_constraints_reject_the_same_tiles_before_running():
    op = load_operator("matmul")
    case = op.case("default")
    bad = op.constraint_violations(case, op.resolve_params(dict(tile_m=256, tile_n=256, tile_k=128)))
    assert any("L0C needs 262144 B" in b for b in bad)
    assert op.constraint_violations(case, op.resolve_params({})) == []


def test_mixed_kernel_runs_one_aic_and_two_aivs_per_block(write_operator):
    src = source(
        """
        gx, gy = GlobalTensor(half), GlobalTensor(half)
        gx.SetGlobalBuffer(x, n)
        gy.SetGlobalBuffer(y, n)
        if AscendC.ASCEND_IS_AIV:
            i = AscendC.GetBlockIdx()
            gy.SetValue(i, 10 * AscendC.GetSubBlockIdx() + AscendC.GetSubBlockNum())
    """,
        blocks=3,
        golden="np.r_[[2, 12] * 3, np.zeros(case.n - 6)].astype(np.float16)",
    )
    report = run_src(write_operator, "mix_ids", src)
    assert report.passed, report.errors
    assert len(report.emulation.blocks) == 9


def test_cross_core_flag_orders_aiv_after_aic(write_operator):
    src = source(
        """
        if AscendC.ASCEND_IS_AIC:
            gx = GlobalTensor(half)
            gx.SetGlobalBuffer(x, n)
            for _ in range(20):
                gx.GetValue(0)
            AscendC.CrossCoreSetFlag(2, PIPE_S, 3)
        else:
            AscendC.CrossCoreWaitFlag(2, PIPE_S, 3)  # <- here
            AscendC.printf("go")
    """,
        golden="np.zeros_like(x)",
    )
    report = run_src(write_operator, "mix_flag", src, timing_only=True)
    assert report.ok, report.errors
    em = report.emulation
    aic_end = em.blocks[0].t_end
    logs = [e for e in em.log if e.text == "go"]
    assert len(logs) == 2
    assert all(e.time_us * em.clock_mhz >= aic_end for e in logs)


def test_cross_core_wait_that_nobody_sets_is_a_deadlock_naming_the_line(write_operator):
    src = source(
        """
        if AscendC.ASCEND_IS_AIV:
            AscendC.CrossCoreWaitFlag(2, PIPE_S, 1)  # <- here
    """,
        golden="np.zeros_like(x)",
    )
    report = run_src(write_operator, "mix_dead", src, timing_only=True)
    (err,) = report.errors
    assert err.kind == "sync"
    assert "deadlock" in err.message
    assert err.line == line_of(src)


def test_cross_core_flags_need_a_mixed_kernel(write_operator):
    src = source(
        """
        AscendC.CrossCoreSetFlag(2, PIPE_FIX, 0)  # <- here
    """,
        core="aic",
        golden="np.zeros_like(x)",
    )
    report = run_src(write_operator, "aic_flag", src, timing_only=True)
    (err,) = report.errors
    assert "mixed kernel" in err.message and err.line == line_of(src)


CUBE_BODY = """
    pipe = TPipe()
    a1, a2, b2, co = TQue(TPosition.A1, 1), TQue(TPosition.A2, 1), TQue(TPosition.B2, 1), \\
        TQue(TPosition.CO1, 1)
    pipe.InitBuffer(a1, 1, 16 * 16 * 2)
    pipe.InitBuffer(a2, 1, 16 * 16 * 2)
    pipe.InitBuffer(b2, 1, 16 * 16 * 2)
    pipe.InitBuffer(co, 1, 16 * 16 * 4)
    gx, gy = GlobalTensor(half), GlobalTensor(half)
    gx.SetGlobalBuffer(x, n)
    gy.SetGlobalBuffer(y, n)
    ta, tb, tc = a2.AllocTensor(half), b2.AllocTensor(half), co.AllocTensor(float)
"""


def test_fixpipe_without_quantisation_to_half_names_the_line(write_operator):
    src = source(
        CUBE_BODY
        + """
    AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16))
    AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 16, 16, 16))  # <- here
    """,
        core="aic",
        golden="np.zeros_like(x)",
    )
    report = run_src(write_operator, "fix_q", src, timing_only=True)
    (err,) = report.errors
    assert "quantPre" in err.message and err.line == line_of(src)


def test_mmad_needing_more_l0a_than_the_tensor_names_sizes(write_operator):
    src = source(
        CUBE_BODY
        + """
    AscendC.Mmad(tc, ta, tb, MmadParams(32, 16, 16))  # <- here
    """,
        core="aic",
        golden="np.zeros_like(x)",
    )
    report = run_src(write_operator, "mmad_big", src, timing_only=True)
    (err,) = report.errors
    assert "1024 B of A (L0A)" in err.message and "512 B" in err.message
    assert err.line == line_of(src)


def test_nd2nz_into_too_small_l1_tensor_is_refused(write_operator):
    src = source(
        CUBE_BODY
        + """
    t1 = a1.AllocTensor(half)
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, 32, 0, 32, 16, 1, 0))  # <- here
    """,
        core="aic",
        golden="np.zeros_like(x)",
    )
    report = run_src(write_operator, "nd2nz_big", src, timing_only=True)
    (err,) = report.errors
    assert "Nd2NzParams" in err.message and err.line == line_of(src)


def test_one_mmad_by_hand_matches_numpy(write_operator):
    src = source(
        CUBE_BODY
        + """
    t1 = a1.AllocTensor(half)
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    AscendC.LoadData(ta, t1, LoadData2DParams(0, 1, 1, 0, 0, False))
    AscendC.LoadData(tb, t1, LoadData2DParams(0, 1, 1, 0, 0, True))
    AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16))
    AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 16, 16, 16, QuantMode_t.F322F16, reluEn=True))
    """,
        core="aic",
        golden="np.r_[np.maximum(x[:256].reshape(16, 16).astype(np.float32) @ "
        "x[:256].reshape(16, 16).astype(np.float32), 0).ravel(), np.zeros(case.n - 256)]",
    )
    report = run_src(write_operator, "by_hand", src)
    assert report.passed, report.errors or report.precision.to_dict()


@given(
    m=st.integers(1, 5000),
    n=st.integers(1, 5000),
    k=st.integers(1, 5000),
    dim=st.sampled_from([1, 8, 20, 24]),
    bias=st.booleans(),
)
def test_host_matmul_tiling_fits_the_core_and_covers_c(m, n, k, dim, bias):
    t = MultiCoreMatmulTiling(MEMORY)
    t.SetDim(dim)
    t.SetShape(m, n, k)
    t.SetBias(bias)
    tiling = t.GetTiling()
    assert check_tiling(tiling, MEMORY) == []
    assert 1 <= tiling.usedCoreNum <= dim
    assert 1 <= tiling.singleCoreM <= m and 1 <= tiling.singleCoreN <= n
    units = -(-m // tiling.singleCoreM) * -(-n // tiling.singleCoreN)
    assert units >= tiling.usedCoreNum
    assert tiling.singleCoreM * -(-m // tiling.singleCoreM) >= m
    assert np.isclose(tiling.Ka, k)


def test_aic_wait_needs_a_set_from_every_aiv(write_operator):
    src = source(
        """
        if AscendC.ASCEND_IS_AIV:
            for _ in range(5 + 40 * AscendC.GetSubBlockIdx()):
                AscendC.printf("busy")
            AscendC.CrossCoreSetFlag(2, PIPE_S, 5)
        else:
            AscendC.CrossCoreWaitFlag(2, PIPE_S, 5)
            AscendC.printf("both")
    """,
        golden="np.zeros_like(x)",
    )
    report = run_src(write_operator, "mix_back", src, timing_only=True)
    assert report.ok, report.errors
    em = report.emulation
    (both,) = [e for e in em.log if e.text == "both"]
    last_busy = max(e.time_us for e in em.log if e.text == "busy")
    assert both.time_us > last_busy


def test_aivs_sync_with_each_other_in_mode_1(write_operator):
    src = source(
        """
        if AscendC.ASCEND_IS_AIV:
            for _ in range(1 + 30 * AscendC.GetSubBlockIdx()):
                AscendC.printf("work %d", AscendC.GetSubBlockIdx())
            AscendC.CrossCoreSetFlag(1, PIPE_S, 2)
            AscendC.CrossCoreWaitFlag(1, PIPE_S, 2)
            AscendC.printf("after")
    """,
        golden="np.zeros_like(x)",
    )
    report = run_src(write_operator, "mix_m1", src, timing_only=True)
    assert report.ok, report.errors
    em = report.emulation
    slowest = max(e.time_us for e in em.log if e.text.startswith("work"))
    after = [e.time_us for e in em.log if e.text == "after"]
    assert len(after) == 2 and min(after) > slowest


def test_endless_loop_on_an_aiv_times_out_naming_its_line_and_leaves_no_thread(write_operator):
    import threading

    src = source(
        """
        if AscendC.ASCEND_IS_AIV:
            while True:  # <- here
                pass
    """,
        golden="np.zeros_like(x)",
    )
    report = run_src(write_operator, "mix_loop", src, timing_only=True, timeout_s=0.5)
    (err,) = report.errors
    assert err.kind == "timeout" and err.line in (line_of(src), line_of(src) + 1)
    for t in threading.enumerate():
        if t.name.startswith("asc-tui block"):
            t.join(timeout=2)
    assert not [t for t in threading.enumerate() if t.name.startswith("asc-tui block")]


def test_data_dependent_cube_kernel_is_not_failed_by_the_l2_prepass(write_operator):
    src = source(
        """
        gx = GlobalTensor(half)
        gx.SetGlobalBuffer(x, n)
        AscendC.ascendc_assert(gx.GetValue(0) != 0, "needs real data")
    """,
        core="aic",
        golden="np.zeros_like(x)",
    ).replace("In(case.n, half)", "In(case.n, half, (1, 5))")
    report = run_src(write_operator, "data_dep", src)
    assert report.ok, report.errors


def test_l0c_values_read_by_the_kernel_include_every_issued_mmad(write_operator):
    src = source(
        CUBE_BODY
        + """
    t1 = a1.AllocTensor(half)
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    AscendC.LoadData(ta, t1, LoadData2DParams(0, 1, 1, 0, 0, False))
    AscendC.LoadData(tb, t1, LoadData2DParams(0, 1, 1, 0, 0, True))
    AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16))
    AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16, cmatrixInitVal=False))
    AscendC.printf("c00=%.4f", tc.GetValue(0))
    AscendC.DumpTensor(tc, 1, 1)
    """,
        core="aic",
        golden="np.zeros_like(x)",
    )
    path = write_operator("l0c_read", src)
    report = run(RunRequest(str(path)))
    assert report.ok, report.errors
    x = prepare(load_operator(str(path)), None, {}, False, 0)[4]["x"]  # the run's input (seed 0)
    a = x[:256].reshape(16, 16).astype(np.float32)
    want = 2 * float((a @ a)[0, 0])  # two Mmads: overwrite, then accumulate
    got = next(e.text for e in report.emulation.log if e.text.startswith("c00="))
    assert abs(float(got.split("=")[1]) - want) < 1e-2
    dump = next(e.text for e in report.emulation.log if e.text.startswith("DumpTensor"))
    assert abs(float(dump.split("[")[1].rstrip("]")) - want) < 1e-2


def test_mixed_kernel_pipe_ratios_are_over_the_cores_that_have_the_pipe():
    em = run(RunRequest("matmul_leaky", case="default", timing_only=True)).emulation
    for name, s in em.pipe_stats().items():
        assert 0 <= s.ratio <= 1 and 0 <= s.wait_ratio <= 1, (name, s)
    assert em.pipe_cores[2] * 2 == em.pipe_cores[1]  # 1 AIC (cube) : 2 AIV (vector)


ITERATE_OP = """
import numpy as np
from asc_tui import ascendc as AscendC
from asc_tui.ascendc import *
from asc_tui.operator import In, Out, Launch

CASES = {"default": dict(m=80, n=100, k=72)}

def _tiling(case):
    t = MultiCoreMatmulTiling()
    t.SetDim(1)
    t.SetShape(case.m, case.n, case.k)
    t.SetFixSplit(32, 48, 32)
    return t.GetTiling()

def tensors(case):
    return {"a": In((case.m, case.k), half, "uniform"), "b": In((case.k, case.n), half, "uniform"),
            "c": Out((case.m, case.n), half), "tiles": Out((SEQ, 32 * 48), half)}

def tiling(case, p):
    return Launch(1, _tiling(case))

def golden(case, a, b):
    c = a.astype(np.float32) @ b.astype(np.float32)
    tiles = np.zeros((SEQ, 32 * 48), np.float32)
    # iterateOrder 0 (ORDER_M) with stepN 1: down the M axis first, then the next column
    for i, (m0, n0) in enumerate((i, j) for j in range(0, case.n, 48) for i in range(0, case.m, 32)):
        blk = c[m0:m0 + 32, n0:n0 + 48]
        tiles[i, :blk.size] = blk.ravel()
    return {"c": c, "tiles": tiles}

@AscendC.kernel(core_type="aic")
def kernel(a, b, c, tiles, t):
    ga, gb, gc, gt = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    ga.SetGlobalBuffer(a, t.M * t.Ka)
    gb.SetGlobalBuffer(b, t.Kb * t.N)
    gc.SetGlobalBuffer(c, t.M * t.N)
    gt.SetGlobalBuffer(tiles)
    mm = Matmul(MatmulType(TPosition.GM, CubeFormat.ND, half),
                MatmulType(TPosition.GM, CubeFormat.ND, half),
                MatmulType(TPosition.GM, CubeFormat.ND, half))
    REGIST_MATMUL_OBJ(TPipe(), GetSysWorkSpacePtr(), mm, t)
    mm.SetTensorA(ga)
    mm.SetTensorB(gb)
    while mm.Iterate():
        mm.GetTensorC(gc)
    mm.SetTensorA(ga)
    mm.SetTensorB(gb)
    i = 0
    while mm.Iterate():
        mm.GetTensorC(gt[i * 32 * 48], enSequentialWrite=True)
        i += 1
    mm.End()
""".replace("SEQ", "9")  # 80 x 100 in 32 x 48 blocks: 3 x 3


def test_matmul_iterate_and_get_tensor_c_match_numpy(write_operator):
    report = run(RunRequest(str(write_operator("mm_iter", ITERATE_OP))))
    assert report.passed, report.errors or report.precision.to_dict()


def test_iterate_twice_without_get_tensor_c_names_the_line(write_operator):
    src = ITERATE_OP.replace("        mm.GetTensorC(gc)\n", "        mm.Iterate()  # <- here\n")
    report = run(RunRequest(str(write_operator("mm_iter2", src)), timing_only=True))
    (err,) = report.errors
    assert "before GetTensorC" in err.message and err.line == line_of(src)
