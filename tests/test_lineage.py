"""Cube operand lineage (ascendc/lineage.py): L1/L0 regions kept as "these GM elements" give
the bits the byte copies give, and everything that touches the bytes or rewrites GM sees them."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asc_tui.ascendc import lineage, lineage_maps
from asc_tui.ascendc.cube import load3d
from asc_tui.ascendc.cube.fractal import load_numbers, load_plan, nd2nz_numbers, nd2nz_plan
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch
from asc_tui.npu.numbers import offload
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
        ("matmul_official", "default"),  # L0A in row groups, K steps as shifted maps
        ("matmul_official", "tails"),
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
    # a half tile loaded into bf16 L0 (its bits reinterpreted) and, as int8, into int8 L0
    "loaded_as_another_type": """
    t1 = a1.AllocTensor(half)
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    ta16, tb16 = ta.ReinterpretCast(bfloat16), tb.ReinterpretCast(bfloat16)
    AscendC.LoadData(ta16, t1, LoadData2DParams(0, 1, 1, 0, 0, False))
    AscendC.LoadData(tb16, t1, LoadData2DParams(0, 1, 1, 0, 0, True))
    AscendC.Mmad(tc, ta16, tb16, MmadParams(16, 16, 16))
    AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 16, 16, 16, QuantMode_t.F322F16))
    t8, ta8, tb8 = t1.ReinterpretCast(int8), ta.ReinterpretCast(int8), tb.ReinterpretCast(int8)
    AscendC.LoadData(ta8, t8, LoadData2DParams(0, 1, 1, 0, 0, False))
    AscendC.LoadData(tb8, t8, LoadData2DParams(0, 1, 1, 0, 0, False))
    AscendC.Mmad(tc.ReinterpretCast(int32), ta8, tb8, MmadParams(16, 16, 32))
    gi = GlobalTensor(int32)
    gi.SetGlobalBuffer(y, n // 2)
    AscendC.Fixpipe(gi, tc.ReinterpretCast(int32), FixpipeParamsV220(16, 8, 16, 16))
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

# fractals in L1 (three: `{w}` columns) of which a later Nd2Nz overwrites one (`{at}`): the rest
# of the first copy stays, by lineage — then loaded into L0 and multiplied, and `{peek}`
PARTIAL = (
    CUBE_BODY.replace("pipe.InitBuffer(a1, 1, 16 * 16 * 2)", "pipe.InitBuffer(a1, 1, 3 * 16 * 16 * 2)")
    + """
    t1 = a1.AllocTensor(half)
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, {w}, 0, {w}, 16, 1, 0))
    AscendC.DataCopy(t1[{at} * 256], gx[256], Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    {peek}
    AscendC.LoadData(ta, t1, LoadData2DParams(0, 1, 1, 0, 0, False))
    AscendC.LoadData(tb, t1, LoadData2DParams({w} // 16 - 1, 1, 1, 0, 0, True))
    AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16))
    AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 16, 16, 16, QuantMode_t.F322F16))
"""
)
# 32 x 32 into L1 (two column blocks of 32 rows: four fractals), then `{n}` x 32 again from
# elsewhere in the same layout: rows 16-31 of the first column block are holes of the second
# copy (it pads to 16 rows) and keep the first copy's values, lazy until then; L0 takes them
# as bytes. A is that column block (32 rows), B fractal `{b}`.
HOLES = (
    CUBE_BODY.replace("pipe.InitBuffer(a1, 1, 16 * 16 * 2)", "pipe.InitBuffer(a1, 1, 4 * 16 * 16 * 2)")
    .replace("pipe.InitBuffer(a2, 1, 16 * 16 * 2)", "pipe.InitBuffer(a2, 1, 2 * 16 * 16 * 2)")
    .replace("pipe.InitBuffer(co, 1, 16 * 16 * 4)", "pipe.InitBuffer(co, 1, 2 * 16 * 16 * 4)")
    + """
    t1 = a1.AllocTensor(half)
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0))
    AscendC.DataCopy(t1, gx[1024], Nd2NzParams(1, {n}, 32, 0, 32, 32, 1, 0))
    {peek}
    AscendC.LoadData(ta, t1, LoadData2DParams(0, 2, 1, 0, 0, False))
    AscendC.LoadData(tb, t1, LoadData2DParams({b}, 1, 1, 0, 0, True))
    AscendC.Mmad(tc, ta, tb, MmadParams({m}, 16, 16))
    AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, {m}, 32, 16, QuantMode_t.F322F16))
"""
)
HOLED = {
    # all 32 rows of A multiplied, and B is the holes' fractal: the holes are in the product
    "holes_in_the_product": dict(n=16, m=32, b=1, peek=""),
    # A's first 12 rows (10 copied, 2 zeros): the holes are not in its fractal
    "holes_past_the_operand": dict(n=10, m=12, b=2, peek=""),
    # holes read by the scalar unit before the loads
    "a_hole_read": dict(
        n=10, m=32, b=1, peek='AscendC.printf("%.6f %.6f", t1.GetValue(20 * 16 + 3), t1.GetValue(5))'
    ),
}


@pytest.mark.parametrize("case", HOLED)
def test_elements_a_copy_leaves_unwritten_keep_what_was_there(case, write_operator, monkeypatch):
    filled = []
    real = lineage.Lazy._fill_holes
    monkeypatch.setattr(lineage.Lazy, "_fill_holes", lambda self, *a: filled.append(1) or real(self, *a))
    src = source(HOLES.format(**HOLED[case]), core="aic", n=2048, golden="np.zeros_like(x)")
    used = _same_bits(load_operator(str(write_operator(case, src))), None, monkeypatch)
    assert used["add"] > 0 and filled
    if case == "holes_past_the_operand":
        assert used["materialise"] == 0  # no byte of L1 or L0 was needed


PARTIALS = {
    # the second of two fractals overwritten: the first stays lazy, nothing is materialised
    "partial_overwrite": dict(w=32, at=1, peek=""),
    # the middle one of three: both ends stay lazy, and the bytes of all three are then read
    "partial_overwrite_middle": dict(
        w=48, at=1, peek='AscendC.printf("%.6f %.6f", t1.GetValue(17), t1.GetValue(300) + t1.GetValue(700))'
    ),
}


@pytest.mark.parametrize("hazard", [*HAZARDS, *PARTIALS])
def test_what_touches_lazy_regions_or_their_gm_sees_the_copied_bits(hazard, write_operator, monkeypatch):
    if hazard in PARTIALS:
        src = source(PARTIAL.format(**PARTIALS[hazard]), core="aic", n=1024, golden="np.zeros_like(x)")
    else:
        src = source(CUBE_BODY + HAZARDS[hazard], core="aic", golden="np.zeros_like(x)")
    used = _same_bits(load_operator(str(write_operator(hazard, src))), None, monkeypatch)
    assert used["add"] > 0
    if hazard in ("getvalue", "gm_rewritten_before_mmad", "fixpipe_into_l1", "partial_overwrite_middle"):
        assert used["materialise"] > 0  # the bytes were really needed, and written
    if hazard == "partial_overwrite":
        assert used["materialise"] == 0  # the rest of the first copy stayed lazy


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
    plan = nd2nz_plan(nd, n, d, (n - 1) * sd + d + 5, sd, c0s, ns, dms, isz)
    gm = np.random.default_rng(seed).integers(0, 1 << 16, plan.s_need + 7, dtype=np.uint16)
    copies = []
    for fill in (0xABCD, 0x1234):  # two different stale contents
        l1 = np.full(plan.d_need, fill, np.uint16)
        nd2nz_numbers(plan, l1, gm, 7 * isz, isz)
        copies.append(l1)
    m = lineage_maps.nd2nz_map(plan, isz)
    assert m.size == plan.d_need
    # holes exactly where the copy did not write (the two stale contents show through)
    unwritten = copies[0] != copies[1]
    assert np.array_equal(unwritten, np.zeros_like(unwritten) if m.hole is None else m.hole)
    l1 = copies[0]
    assert m.gather(gm, 7)[~unwritten].tobytes() == l1[~unwritten].tobytes()
    fractals = plan.d_need // 256  # LoadData of the first whole fractals, transposed or not
    if fractals < 1:
        return
    rep = min(rep, fractals)
    assert load_plan(rep, 0, 1, 0, transpose, isz)[0] <= plan.d_need
    l0 = np.empty(rep * 256, np.uint16)
    load_numbers(l0, 0, l1, 0, rep, 1, 0, transpose, isz)
    lm = lineage_maps.load_map(m, 0, rep, 1, transpose, isz)
    stale = np.empty(rep * 256, np.uint16)  # where L0 got L1's unwritten elements
    load_numbers(stale, 0, np.where(unwritten, 1, 0).astype(np.uint16), 0, rep, 1, 0, transpose, isz)
    holes = stale.astype(bool)
    assert np.array_equal(holes, np.zeros_like(holes) if lm.hole is None else lm.hole)
    assert lm.gather(gm, 7)[~holes].tobytes() == l0[~holes].tobytes()


# Y = X·X goes to GM through a (slowed) pending Fixpipe; 15-row Mmads over a K of 15 then take
# A from Y by lineage: an operand that is no regular grid (a K tail), so it is gathered from
# GM, which must wait for that Fixpipe
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
        AscendC.Mmad(tc, ta, tb, MmadParams(15 if step else 16, 16, 15 if step else 16))
        AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 15 if step else 16, 16, 16,
                                                  QuantMode_t.F322F16))
"""
)


def test_an_operand_gathered_from_gm_waits_for_the_fixpipe_that_writes_it(write_operator, monkeypatch):
    gathered = []
    real_gather = lineage_maps.Map.gather

    def counted(self, *a):
        gathered.append(1)
        return real_gather(self, *a)

    monkeypatch.setattr(lineage_maps.Map, "gather", counted)
    real = offload.numbers.submit

    def slow_submit(job, writes=None, **how):  # reading GM before the job ran: certain, not luck
        real(lambda: (time.sleep(0.02), job()), writes, **how)

    monkeypatch.setattr(offload.numbers, "threaded", True)
    monkeypatch.setattr(offload.numbers, "submit", slow_submit)
    src = source(READ_BACK, core="aic", golden="np.zeros_like(x)")
    used = _same_bits(load_operator(str(write_operator("read_back", src))), None, monkeypatch)
    assert used["add"] > 0 and gathered


def _map_of(index: np.ndarray, pad: np.ndarray | None = None) -> lineage_maps.Map:
    """A Map whose element i is GM element index[i] (0 where pad[i]), built as copies build
    theirs: the digits of (element + 1), 0 for a written zero."""
    val = index.astype(np.int64) + 1
    if pad is not None:
        val[pad] = 0
    return lineage_maps.Map([(val & 0xFFFF).astype(np.uint16), (val >> 16).astype(np.uint16)])


@settings(max_examples=100, deadline=None)
@given(
    size=st.integers(1, 300),
    c=st.integers(-1000, 100_000),
    rel=st.integers(0, 20),
    other_rel=st.integers(0, 20),
    padded=st.booleans(),
    broken=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_a_map_moved_along_gm_is_recognised_as_a_shift(size, c, rel, other_rel, padded, broken, seed):
    """`shift` finds c exactly when the other map's elements are this one's plus c (zeros in the
    same places): what lets a K loop's operands, each loaded through its own map, stack."""
    rng = np.random.default_rng(seed)
    index = rng.integers(1000, 50_000, size)
    pad = rng.random(size) < 0.2 if padded else None
    mine = np.concatenate([rng.integers(0, 9, rel), index])
    theirs = np.concatenate([rng.integers(0, 9, other_rel), index + c])
    pad_mine = None if pad is None else np.concatenate([np.zeros(rel, bool), pad])
    pad_theirs = None if pad is None else np.concatenate([np.zeros(other_rel, bool), pad])
    if broken:  # one element (not a zero) elsewhere
        live = np.flatnonzero(~pad) if pad is not None else np.arange(size)
        if len(live) < 2:
            return
        theirs[other_rel + live[-1]] += 1
    a, b = _map_of(mine, pad_mine), _map_of(theirs, pad_theirs)
    got = lineage_maps.shift(a, rel, b, other_rel, size)
    live = size if pad is None else int((~pad).sum())
    if broken:
        assert got is None
    else:
        assert got == (c if live else 0)
        # and the stacked operand gathers what the other map holds
        gm = rng.integers(0, 1 << 16, 200_000, dtype=np.uint16)
        base = 5_000
        assert (a.gather(gm, base + got, rel, size) == b.gather(gm, base, other_rel, size)).all()
    if pad is not None and pad.any() and not pad.all():
        flipped = pad_theirs.copy()
        flipped[other_rel + np.flatnonzero(pad)[0]] = False
        # zeros elsewhere
        assert lineage_maps.shift(a, rel, _map_of(theirs, flipped), other_rel, size) is None


# LoadData3DV2 (img2col) from L1 filled by Nd2Nz: a map run through img2col, or bytes
LOAD3D = """
    pipe = TPipe()
    a1, b1, a2, b2, co = TQue(TPosition.A1, 1), TQue(TPosition.B1, 1), TQue(TPosition.A2, 1), \\
        TQue(TPosition.B2, 1), TQue(TPosition.CO1, 1)
    pipe.InitBuffer(a1, 1, 64 * 32 * 2)
    pipe.InitBuffer(b1, 1, 160 * 16 * 2)
    pipe.InitBuffer(a2, 1, 32 * 160 * 2)
    pipe.InitBuffer(b2, 1, 160 * 32 * 2)
    pipe.InitBuffer(co, 1, 32 * 32 * 4)
    gx, gy = GlobalTensor(half), GlobalTensor(half)
    gx.SetGlobalBuffer(x, n)
    gy.SetGlobalBuffer(y, n)
    ta, tb, tc = a2.AllocTensor(half), b2.AllocTensor(half), co.AllocTensor(float)
    t1, w1 = a1.AllocTensor(half), b1.AllocTensor(half)
{body}
    AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 32, 32, 16, QuantMode_t.F322F16))
"""
LOAD3DS = {
    # A (32 x 32) as 1 x 32 positions of 32 channels, and B from the same L1 tile into L0B
    "img2col_as_matmul": """
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 32, 32, 0, 32, 32, 1, 0))
    AscendC.LoadData(ta, t1, LoadData3DParamsV2(l1H=1, l1W=32, channelSize=32, kExtension=32, mExtension=32))
    AscendC.LoadData(tb, t1, LoadData3DParamsV2(l1H=1, l1W=32, channelSize=32, kExtension=16, mExtension=32))
    AscendC.Mmad(tc, ta, tb, MmadParams(32, 16, 32))
""",
    # a 3 x 3 convolution, padding 1 (zeros) over a 4 x 8 map of 16 channels
    "padded_convolution": """
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 32, 16, 0, 16, 32, 1, 0))
    AscendC.DataCopy(w1, gx[700], Nd2NzParams(1, 144, 16, 0, 16, 144, 1, 0))
    AscendC.LoadData(ta, t1, LoadData3DParamsV2([1, 1, 1, 1], 4, 8, 16, 144, 32, 0, 0, 1, 1, 3, 3, 1, 1))
    AscendC.LoadData(tb, w1, LoadData2DParams(0, 9, 1, 0, 0, True))
    AscendC.Mmad(tc, ta, tb, MmadParams(32, 16, 144))
""",
    # the same padded with 1.5: not a GM element nor a written zero, so the bytes move
    "padded_with_a_value": """
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 32, 16, 0, 16, 32, 1, 0))
    AscendC.DataCopy(w1, gx[700], Nd2NzParams(1, 144, 16, 0, 16, 144, 1, 0))
    p = LoadData3DParamsV2([1, 1, 1, 1], 4, 8, 16, 144, 32, 0, 0, 1, 1, 3, 3, 1, 1)
    p.padValue = 1.5
    AscendC.LoadData(ta, t1, p)
    AscendC.LoadData(tb, w1, LoadData2DParams(0, 9, 1, 0, 0, True))
    AscendC.Mmad(tc, ta, tb, MmadParams(32, 16, 144))
""",
    # 20 rows of two column blocks copied over a 64-row copy: the first block's rows 32-63 are
    # holes (the earlier copy's values, as bytes); img2col takes rows 16-47 of that block
    "holes_moved_by_img2col": """
    AscendC.DataCopy(t1, gx, Nd2NzParams(1, 64, 32, 0, 32, 64, 1, 0))
    AscendC.DataCopy(t1, gx[2048], Nd2NzParams(1, 20, 32, 0, 32, 64, 1, 0))
    AscendC.DataCopy(w1, gx[700], Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    AscendC.LoadData(ta, t1, LoadData3DParamsV2(l1H=4, l1W=16, channelSize=16, kExtension=16, mExtension=32,
                                                mStartPt=16))
    AscendC.LoadData(tb, w1, LoadData2DParams(0, 1, 1, 0, 0, True))
    AscendC.Mmad(tc, ta, tb, MmadParams(32, 16, 16))
""",
}


@pytest.mark.parametrize("case", LOAD3DS)
def test_img2col_from_lazy_l1_gives_the_copied_bits(case, write_operator, monkeypatch):
    moved = []
    real = lineage_maps.moved_map
    monkeypatch.setattr(lineage_maps, "moved_map", lambda *a: moved.append(1) or real(*a))
    monkeypatch.setattr(load3d, "moved_map", lambda *a: moved.append(1) or real(*a))
    src = source(LOAD3D.format(body=LOAD3DS[case]), core="aic", n=4096, golden="np.zeros_like(x)")
    used = _same_bits(load_operator(str(write_operator(case, src))), None, monkeypatch)
    assert used["add"] > 0
    assert bool(moved) == (case != "padded_with_a_value")  # the lineage path, where it may
