"""Cube operand lineage (ascendc/lineage.py): L1/L0 regions kept as "these GM elements" give
the bits the byte copies give, and everything that touches the bytes or rewrites GM sees them."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asc_tui.ascendc import lineage
from asc_tui.ascendc.cube import _load_numbers, _load_plan, _nd2nz_numbers, _nd2nz_plan
from asc_tui.devkit.loader import load_operator
from asc_tui.devkit.runner import prepare
from asc_tui.npu import offload
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch
from tests.test_cube_api import CUBE_BODY, source


def _outputs(op, case, lineage_on: bool) -> tuple[dict, list[str]]:
    _, _, _, lnch, _, gm = prepare(op, case, {}, timing_only=False, seed=5)
    res = launch(
        op.kernel,
        gm,
        lnch.tiling,
        lnch.block_dim,
        load_chip("ascend910b"),
        numeric=True,
        configure=lambda run: setattr(run, "lineage", lineage_on),
    )
    return {g.buffer.name: g.buffer.data.copy() for g in gm}, [e.text for e in res.log]


def _same_bits(op, case, monkeypatch) -> dict:
    """Run with and without lineage; assert identical outputs and logs; count lineage use."""
    used = {"add": 0, "materialise": 0}
    for name in used:
        real = getattr(lineage.Lazy, name if name == "add" else "_materialise")

        def counted(self, *a, _real=real, _name=name):
            used[_name] += 1
            return _real(self, *a)

        monkeypatch.setattr(lineage.Lazy, name if name == "add" else "_materialise", counted)
    want, want_log = _outputs(op, case, False)
    assert used == {"add": 0, "materialise": 0}  # the switch really turns it off
    got, got_log = _outputs(op, case, True)
    for buf, w in want.items():
        assert w.tobytes() == got[buf].tobytes(), buf
    assert got_log == want_log
    return used


@pytest.mark.parametrize(
    "name,case",
    [
        ("matmul", "small"),
        ("matmul", "tails"),
        ("matmul", "int8_tails"),
        ("matmul", "bf16"),
        ("matmul_official", "bias"),
        ("matmul_official", "small"),
        ("conv2d", "tails"),
        ("matmul_leaky", "small"),
    ],
)
def test_bundled_operators_give_the_same_bits_with_and_without_lineage(name, case, monkeypatch):
    assert _same_bits(load_operator(name), case, monkeypatch)["add"] > 0


LOAD_MMAD_OUT = """
    AscendC.LoadData(ta, t1, LoadData2DParams(0, 1, 1, 0, 0, False))
    AscendC.LoadData(tb, t1, LoadData2DParams(0, 1, 1, 0, 0, True))
    AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16))
    AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 16, 16, 16, QuantMode_t.F322F16))
"""

HAZARDS = {
    # the bytes of a lazy L1 region read by the scalar unit and DumpTensor
    "getvalue": """
    t1 = a1.AllocTensor(half)
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    AscendC.printf("l1=%.6f", t1.GetValue(17))
    AscendC.DumpTensor(t1, 1, 20)
"""
    + LOAD_MMAD_OUT,
    # GM rewritten after L1/L0 took elements of it, before the Mmad reads them
    "gm_rewritten_before_mmad": """
    t1 = a1.AllocTensor(half)
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    AscendC.LoadData(ta, t1, LoadData2DParams(0, 1, 1, 0, 0, False))
    AscendC.LoadData(tb, t1, LoadData2DParams(0, 1, 1, 0, 0, True))
    gx.SetValue(0, 7.0)
    gx.SetValue(17, -3.0)
    AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16))
    AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 16, 16, 16, QuantMode_t.F322F16))
""",
    # GM rewritten after the Mmad, before its pending numbers are computed (Fixpipe)
    "gm_rewritten_before_fixpipe": """
    t1 = a1.AllocTensor(half)
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    AscendC.LoadData(ta, t1, LoadData2DParams(0, 1, 1, 0, 0, False))
    AscendC.LoadData(tb, t1, LoadData2DParams(0, 1, 1, 0, 0, True))
    AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16))
    gx.SetValue(3, 9.0)
    AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16, cmatrixInitVal=False))
    AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 16, 16, 16, QuantMode_t.F322F16))
""",
    # Fixpipe writes over a lazy L1 region, which is then loaded again
    "fixpipe_into_l1": """
    t1 = a1.AllocTensor(half)
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    AscendC.LoadData(ta, t1, LoadData2DParams(0, 1, 1, 0, 0, False))
    AscendC.LoadData(tb, t1, LoadData2DParams(0, 1, 1, 0, 0, True))
    AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16))
    AscendC.Fixpipe(t1, tc, FixpipeParamsV220(16, 16, 16, 16, QuantMode_t.F322F16))
"""
    + LOAD_MMAD_OUT,
}

# two fractals in L1: the second is overwritten by a later Nd2Nz, the first stays
PARTIAL = (
    CUBE_BODY.replace("pipe.InitBuffer(a1, 1, 16 * 16 * 2)", "pipe.InitBuffer(a1, 1, 2 * 16 * 16 * 2)")
    + """
    t1 = a1.AllocTensor(half)
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, 32, 0, 32, 16, 1, 0))
    AscendC.DataCopy(t1[256], gx[256], Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    AscendC.LoadData(ta, t1, LoadData2DParams(0, 1, 1, 0, 0, False))
    AscendC.LoadData(tb, t1, LoadData2DParams(1, 1, 1, 0, 0, True))
    AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16))
    AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 16, 16, 16, QuantMode_t.F322F16))
"""
)


@pytest.mark.parametrize("hazard", [*HAZARDS, "partial_overwrite"])
def test_what_touches_lazy_regions_or_their_gm_sees_the_copied_bits(hazard, write_operator, monkeypatch):
    if hazard == "partial_overwrite":
        src = source(PARTIAL, core="aic", n=512, golden="np.zeros_like(x)")
    else:
        src = source(CUBE_BODY + HAZARDS[hazard], core="aic", golden="np.zeros_like(x)")
    used = _same_bits(load_operator(str(write_operator(hazard, src))), None, monkeypatch)
    assert used["add"] > 0
    if hazard in ("getvalue", "gm_rewritten_before_mmad", "fixpipe_into_l1", "partial_overwrite"):
        assert used["materialise"] > 0  # the bytes were really needed, and written


@settings(max_examples=150, deadline=None)
@given(
    nd=st.integers(1, 3),
    n=st.integers(1, 20),
    d=st.integers(1, 40),
    extra_sd=st.integers(-8, 8),
    c0s_pad=st.integers(0, 2),
    ns=st.sampled_from([1, 2]),
    gap=st.integers(0, 2),
    rep=st.integers(1, 3),
    transpose=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_lineage_map_gathers_what_nd2nz_and_loaddata_copy(
    nd, n, d, extra_sd, c0s_pad, ns, gap, rep, transpose, seed
):
    isz = 2
    sd = max(1, d + extra_sd)
    c0s = -(-n // 16) * 16 + 16 * c0s_pad
    dms = -(-d // 16) * c0s * 16 + gap * 256
    plan = _nd2nz_plan(nd, n, d, (n - 1) * sd + d + 5, sd, c0s, ns, dms, isz)
    gm = np.random.default_rng(seed).integers(0, 1 << 16, plan.s_need + 7, dtype=np.uint16)
    copies = []
    for fill in (0xABCD, 0x1234):  # two different stale contents
        l1 = np.full(plan.d_need, fill, np.uint16)
        _nd2nz_numbers(plan, l1, gm, 7 * isz, isz)
        copies.append(l1)
    m = lineage.nd2nz_map(plan, isz)
    if m is None:  # refused only when the copy leaves an element unwritten
        assert (copies[0] != copies[1]).any()
        return
    assert (copies[0] == copies[1]).all() and m.size == plan.d_need
    l1 = copies[0]
    assert m.gather(gm, 7).tobytes() == l1.tobytes()
    fractals = plan.d_need // 256  # LoadData of the first whole fractals, transposed or not
    if fractals < 1:
        return
    rep = min(rep, fractals)
    assert _load_plan(rep, 0, 1, 0, transpose, isz)[0] <= plan.d_need
    l0 = np.empty(rep * 256, np.uint16)
    _load_numbers(l0, 0, l1, 0, rep, 1, 0, transpose, isz)
    assert lineage.load_map(m, 0, rep, 1, transpose, isz).gather(gm, 7).tobytes() == l0.tobytes()


# Y = X·X goes to GM through a (slowed) pending Fixpipe; 15-row Mmads then take A from Y by
# lineage: an operand that is no regular grid (tail rows), so it is gathered from GM, which
# must wait for that Fixpipe
READ_BACK = (
    CUBE_BODY
    + """
    t1 = a1.AllocTensor(half)
    for step in range(2):
        src = gx if step == 0 else gy
        AscendC.DataCopy(t1, src, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
        AscendC.LoadData(ta, t1, LoadData2DParams(0, 1, 1, 0, 0, False))
        AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
        AscendC.LoadData(tb, t1, LoadData2DParams(0, 1, 1, 0, 0, True))
        AscendC.Mmad(tc, ta, tb, MmadParams(15 if step else 16, 16, 16))
        AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 15 if step else 16, 16, 16,
                                                  QuantMode_t.F322F16))
"""
)


def test_an_operand_gathered_from_gm_waits_for_the_fixpipe_that_writes_it(write_operator, monkeypatch):
    real = offload.numbers.submit

    def slow_submit(job, writes=None, **how):  # reading GM before the job ran: certain, not luck
        real(lambda: (time.sleep(0.02), job()), writes, **how)

    monkeypatch.setattr(offload.numbers, "threaded", True)
    monkeypatch.setattr(offload.numbers, "submit", slow_submit)
    src = source(READ_BACK, core="aic", golden="np.zeros_like(x)")
    used = _same_bits(load_operator(str(write_operator("read_back", src))), None, monkeypatch)
    assert used["add"] > 0
