"""Block replay in full (numeric) runs (npu/replay/numtrace.py) is exact: with replay on, a launch gives
the step-by-step outputs bit for bit and the same timeline, traffic, warnings and tables, whether
the replayed blocks' numbers come from the template's trace (batched, loops chunked, copies
elided) or, where the trace cannot be trusted, from running them step by step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from replaykit import assert_same, counted_runs, patched

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GlobalTensor, QuePosition, TBuf, TPipe, TQue, half
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.errors import TilingError
from asc_tui.npu.launch import launch, make_gm
from asc_tui.npu.replay import numtrace

FAST = settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow], deadline=None)
CHIP = load_chip("ascend910b4")


@pytest.fixture
def traced(monkeypatch):
    """The blocks whose numbers came from a template's trace (Program.run), per launch."""
    return counted_runs(monkeypatch, numtrace.Program)


def _configure(replay: bool):
    def configure(run):
        run.replay = replay

    return configure


def assert_same_both_ways(run_once):
    """`run_once(replay)` -> (launch, outputs), with replay on and off: the same (`assert_same`)."""
    (fast, a), (slow, b) = run_once(True), run_once(False)
    assert_same(fast, slow, a, b)
    return fast


def _operator_pair(op, case, params):
    def run_once(replay):
        try:
            _, _, _, lnch, arrays, gm = prepare(op, case, params, timing_only=False, seed=0)
        except TilingError:
            reject()  # a tiling the operator's constraints refuse (hypothesis draws another)
        cfg = _configure(replay)
        return launch(op.kernel, gm, lnch.tiling, lnch.block_dim, CHIP, numeric=True, configure=cfg), arrays

    return assert_same_both_ways(run_once)


@FAST
@given(
    tiles=st.integers(1, 12),
    tile=st.sampled_from([1024, 2048, 4096]),
    bufs=st.sampled_from([1, 2]),
    blocks=st.sampled_from([1, 2, 3, 8, 20, 40, 48, 80]),
    adds=st.sampled_from([1, 3]),
)
def test_full_vector_add_bias_with_replay_equals_step_by_step(tiles, tile, bufs, blocks, adds):
    op = patched(load_operator("vector_add_bias"), n=blocks * tile * tiles, adds=adds)
    _operator_pair(op, "h", dict(tile_length=tile, buffer_num=bufs, block_dim=blocks))


def test_full_vector_add_bias_takes_its_replayed_numbers_from_the_trace(traced):
    _operator_pair(load_operator("vector_add_bias"), "default", {})
    assert traced == list(range(1, 8))


@FAST
@given(
    n=st.integers(1, 40_000),
    tile=st.sampled_from([64, 256, 1024, 4096]),
    bufs=st.sampled_from([1, 2]),
    blocks=st.integers(1, 60),
    dtype=st.sampled_from(["float16", "float32"]),
)
def test_full_add_custom_with_replay_equals_step_by_step(n, tile, bufs, blocks, dtype):
    op = patched(load_operator("add_custom"), n=n, dtype=dtype)
    _operator_pair(op, "h", dict(tile_length=tile, buffer_num=bufs, block_dim=blocks))


@FAST
@given(
    rows=st.integers(1, 30),
    cols16=st.integers(1, 32),
    bufs=st.sampled_from([1, 2]),
    blocks=st.integers(1, 24),
)
def test_full_row_kernels_with_replay_equal_step_by_step(rows, cols16, bufs, blocks):
    """softmax and rms_norm reduce a row and read the result back (a scalar read of data): their
    templates' traces are refused, and the blocks run step by step."""
    for name in ("softmax", "rms_norm"):
        op = patched(load_operator(name), rows=rows, cols=cols16 * 16, dtype="float16")
        _operator_pair(op, "h", dict(buffer_num=bufs, block_dim=blocks))


# ---- kernels written for the checks -------------------------------------------------------------


@dataclass(frozen=True)
class T:
    total: int
    per: int  # elements per block (the last block's share may be shorter, or nothing)
    tile: int
    bufs: int
    variant: str = "mixed"


def _tensors(x, y, z, t: T, length):
    xg, yg, zg = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    start = t.per * AscendC.GetBlockIdx()
    xg.SetGlobalBuffer(x + start, length)
    yg.SetGlobalBuffer(y + start, length)
    zg.SetGlobalBuffer(z + start, length if t.variant != "overlap" else 2 * t.per)
    return xg, yg, zg


@AscendC.kernel
def element_wise(x, y, z, t: T):
    """Traced ops over tiles with a tail tile and a constant made before the loop (read from
    the state before it); by variant: an accumulator carried through UB ("carry") or GM
    ("gmcarry") from one tile to the next, a result written over its own input ("inplace"),
    blocks that write each other's GM ("overlap"), a branch on UB data ("branch", "peek"), an
    op no trace describes ("untraced")."""
    length = min(t.per, t.total - t.per * AscendC.GetBlockIdx())
    if length <= 0:
        return
    xg, yg, zg = _tensors(x, y, z, t, length)
    pipe = TPipe()
    qx, qy, qz = (
        TQue(QuePosition.VECIN, t.bufs),
        TQue(QuePosition.VECIN, t.bufs),
        TQue(QuePosition.VECOUT, t.bufs),
    )
    for q in (qx, qy, qz):
        pipe.InitBuffer(q, t.bufs, t.tile * 2)
    consts, acc_buf = TBuf(QuePosition.VECCALC), TBuf(QuePosition.VECCALC)
    pipe.InitBuffer(consts, t.tile * 2)
    pipe.InitBuffer(acc_buf, t.tile * 2)
    c = consts.Get(half)
    AscendC.Duplicate(c, 0.5, t.tile)
    acc = acc_buf.Get(half)
    AscendC.Duplicate(acc, 0.0, t.tile)
    scale = 1.0
    tiles = (length + t.tile - 1) // t.tile
    for i in range(tiles):
        n = min(t.tile, length - i * t.tile)
        xl, yl = qx.AllocTensor(half), qy.AllocTensor(half)
        AscendC.DataCopy(xl, xg[i * t.tile], n)
        src = {"inplace": zg[i * t.tile], "gmcarry": zg}.get(t.variant, yg[i * t.tile])
        AscendC.DataCopy(yl, src, n)
        qx.EnQue(xl)
        qy.EnQue(yl)
        xl, yl, zl = qx.DeQue(half), qy.DeQue(half), qz.AllocTensor(half)
        if t.variant == "branch" and i == 0:
            scale = 2.0 if float(xl.GetValue(0)) > 0 else -3.0
        if t.variant == "peek" and i == 0:  # no instruction: the data reaches Python all the same
            scale = 2.0 if xl.numpy()[0] > 0 else -3.0
        AscendC.Mul(zl, xl, c, n)
        AscendC.Add(zl, zl, yl, n)
        AscendC.Maxs(zl, zl, -1.0, n)
        AscendC.Muls(zl, zl, scale, n)
        AscendC.Abs(yl, zl, n)
        AscendC.Sub(zl, zl, yl, n)
        if t.variant == "carry":
            AscendC.Add(acc, acc, xl, n)
            AscendC.Add(zl, zl, acc, n)
        if t.variant == "untraced":
            AscendC.Axpy(zl, yl, 0.5, n)
        qz.EnQue(zl)
        qx.FreeTensor(xl)
        qy.FreeTensor(yl)
        zl = qz.DeQue(half)
        AscendC.DataCopy(zg if t.variant == "gmcarry" else zg[i * t.tile], zl, n)
        if t.variant == "overlap":  # and again one block's share further: the next block's
            AscendC.DataCopy(zg[t.per + i * t.tile], zl, n)
        qz.FreeTensor(zl)


def _half_pair(kernel, t, blocks: int, arrays):
    """`kernel` launched with replay on and off (`assert_same_both_ways`) on half GM buffers
    `arrays()` (name -> array, fresh per launch), in order; all compared after."""

    def run_once(replay):
        gm_arrays = arrays()
        gm = [make_gm(name, np.float16, len(a), a) for name, a in gm_arrays.items()]
        return launch(kernel, gm, t, blocks, CHIP, numeric=True, configure=_configure(replay)), gm_arrays

    return assert_same_both_ways(run_once)


def _kernel_pair(t: T, blocks: int, size: int, seed: int = 0):
    def arrays():
        rng = np.random.default_rng(seed)
        x, y = (rng.standard_normal(size).astype(np.float16) for _ in range(2))
        return {"x": x, "y": y, "z": np.full(size, np.float16(7.0))}

    return _half_pair(element_wise, t, blocks, arrays)


@FAST
@given(
    per16=st.integers(1, 200),
    cut=st.integers(0, 300),
    tile16=st.integers(1, 64),
    bufs=st.sampled_from([1, 2]),
    blocks=st.integers(1, 90),
    variant=st.sampled_from(["mixed", "carry", "inplace", "gmcarry"]),
)
def test_full_element_wise_kernel_with_replay_equals_step_by_step(per16, cut, tile16, bufs, blocks, variant):
    """Tails (a shorter last tile; a last block with less or nothing; counts not a multiple of
    32 B, which the hardware rounds down with a warning), waves (more blocks than cores),
    double buffering, a value carried from one tile to the next through UB or GM, GM updated
    in place."""
    per, tile = per16 * 16 + (cut % 7), tile16 * 16
    total = max(1, per * blocks - cut * 3)
    _kernel_pair(T(total, per, tile, bufs, variant), blocks, per * blocks)


def test_the_element_wise_kernel_takes_its_numbers_from_the_trace(traced):
    _kernel_pair(T(8 * 4096, 4096, 512, 2), 8, 8 * 4096)
    assert traced == list(range(1, 8))


@pytest.mark.parametrize("variant", ["branch", "peek"])
def test_a_kernel_that_branches_on_ub_data_is_not_replayed_numerically(traced, variant):
    """GetValue (or LocalTensor.numpy) hands data to the kernel's Python: another block could
    branch the other way (the blocks' first elements differ in sign for this seed)."""
    em = _kernel_pair(T(8 * 1024, 1024, 256, 1, variant), 8, 8 * 1024, seed=3)
    assert traced == [] and len(em.blocks) == 8


def test_blocks_that_write_each_others_gm_keep_their_order(traced):
    """Block b writes z[b*per, (b+2)*per): the next block overwrites half of it. Batched
    op-major, the first block would win; the check runs them block by block instead."""
    size = 9 * 1024
    _kernel_pair(T(8 * 1024, 1024, 256, 2, "overlap"), 8, size)
    assert traced == list(range(1, 8))


def test_an_op_the_trace_does_not_describe_leaves_the_blocks_step_by_step(traced):
    _kernel_pair(T(8 * 1024, 1024, 256, 1, "untraced"), 8, 8 * 1024)
    assert traced == []


def test_a_trace_missing_a_record_is_refused():
    """The completeness check is structural: a work record on a non-scalar pipe without a trace
    entry (an op added to the kernel API without tracing) refuses the trace."""
    from asc_tui.npu.pipes import MTE2, S, V
    from asc_tui.npu.records import KIND_WAIT, KIND_WORK

    class Tensor:
        def __init__(self, mem, offset):
            self.mem, self.offset, self.dtype = mem, offset, np.dtype(np.float16)
            self.arr = np.zeros(16, np.float16)

    tr = numtrace.NumTrace()
    tr.add(0, numtrace.BINARY, np.add, None, 16, Tensor("ub", 0), Tensor("ub", 32), Tensor("ub", 64))
    cols = {"kind": np.array([KIND_WORK, KIND_WAIT]), "pipe": np.array([V, MTE2])}
    assert numtrace.compile_trace(tr, cols, 0) is not None
    cols = {"kind": np.array([KIND_WORK, KIND_WORK]), "pipe": np.array([V, MTE2])}
    assert numtrace.compile_trace(tr, cols, 0) is None  # the MTE2 record has no entry
    cols = {"kind": np.array([KIND_WORK, KIND_WORK]), "pipe": np.array([V, S])}
    assert numtrace.compile_trace(tr, cols, 0) is None  # scalar work: GetValue, SetValue...


def test_a_mask_that_changes_no_admitted_block_keeps_the_block_index():
    """C++ code converts to unsigned types with a mask (`(x & 0xFFFFFFFF)`, cxx/kernel/expr.py) and
    tests signs with one: the value itself or one shared int, where it is so in every admitted
    block; anything else pins, as every other non-affine use does."""
    from asc_tui.npu.replay.blockindex import BlockIndex
    from asc_tui.npu.replay.replay import Guards

    g = Guards(2, 8)
    i = BlockIndex(2, 1, g) * 1024
    assert (i & 0xFFFFFFFF) is i and (0xFFFFFFFFFFFFFFFF & i) is i
    assert type(i & 0x80000000) is int and i & 0x80000000 == 0
    assert not g.pinned and g.admits(7)
    assert (i & 2048) == 2048 and g.pinned  # blocks 0..7 differ in that bit


VADD = """
#include "kernel_operator.h"
using namespace AscendC;
constexpr uint32_t TILE = 256;
extern "C" __global__ __aicore__ void vadd(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    uint32_t per = n / GetBlockNum();
    uint32_t base = per * GetBlockIdx();
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x + base, per);
    yg.SetGlobalBuffer((__gm__ float*)y + base, per);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * TILE * sizeof(float));
    LocalTensor<float> a = buf.Get<float>();
    LocalTensor<float> c = a[TILE];
    for (uint32_t off = 0; off < per; off += TILE) {
        DataCopy(a, xg[off], TILE);
        PipeBarrier<PIPE_ALL>();
        Adds(c, a, 1.5f, TILE);
        Exp(c, c, TILE);
        PipeBarrier<PIPE_ALL>();
        DataCopy(yg[off], c, TILE);
        PipeBarrier<PIPE_ALL>();
    }
}
"""


def test_a_cpp_kernel_takes_its_replayed_numbers_from_the_trace(tmp_path, traced):
    """The translator's unsigned conversions mask the block index (`& 0xFFFFFFFF`): it stays a
    block index, so a C++ kernel replays like a Python one."""
    from cxxop import make_op

    path = make_op(tmp_path, VADD, n=8 * 1024, name="vadd")
    spec = tmp_path / "vadd.py"
    spec.write_text(spec.read_text().replace("Launch(1,", "Launch(8,"))
    _operator_pair(load_operator(path), "default", {})
    assert traced == list(range(1, 8))


# ---- Cast ---------------------------------------------------------------------------------------

MODES = list(AscendC.RoundMode)


@dataclass(frozen=True)
class C:
    per: int  # elements per block
    tile: int
    narrow: AscendC.RoundMode  # float32 → half
    to_int: AscendC.RoundMode  # float32 → int32
    variant: str = "plain"  # "wild": infinities, NaNs, and values int32 and half saturate on
    up: float = 1000.37
    down: float = 0.001


@AscendC.kernel
def casts(x, y, t: C):
    """half → float32 → (scaled) int32 and half with the given round modes, and back: Cast
    traced in every direction the counter form takes; "pad" copies in with DataCopyPad
    padding to 32 B (not traced: the blocks run step by step)."""
    start = t.per * AscendC.GetBlockIdx()
    xg, yg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x + start, t.per)
    yg.SetGlobalBuffer(y + start, t.per)
    pipe = TPipe()
    buf = TBuf(QuePosition.VECCALC)
    pipe.InitBuffer(buf, t.tile * 16)
    xl = buf.Get(half)
    f = buf.Get(np.float32)[t.tile]
    i = buf.Get(np.int32)[t.tile * 2]
    for k in range(t.per // t.tile):
        if t.variant == "pad":
            params = AscendC.DataCopyExtParams(1, t.tile * 2 - 2, 0, 0, 0)
            AscendC.DataCopyPad(xl, xg[k * t.tile], params, AscendC.DataCopyPadExtParams(True, 0, 1, 0))
        else:
            AscendC.DataCopy(xl, xg[k * t.tile], t.tile)
        AscendC.PipeBarrier[AscendC.PIPE_ALL]()
        AscendC.Cast(f, xl, AscendC.RoundMode.CAST_NONE, t.tile)
        AscendC.Muls(f, f, t.up, t.tile)
        AscendC.Cast(i, f, t.to_int, t.tile)
        AscendC.Cast(f, i, AscendC.RoundMode.CAST_NONE, t.tile)
        AscendC.Muls(f, f, t.down, t.tile)
        AscendC.Cast(xl, f, t.narrow, t.tile)
        AscendC.PipeBarrier[AscendC.PIPE_ALL]()
        AscendC.DataCopy(yg[k * t.tile], xl, t.tile)
        AscendC.PipeBarrier[AscendC.PIPE_ALL]()


def _cast_pair(t: C, blocks: int, seed: int = 0):
    size = t.per * blocks

    def arrays():
        rng = np.random.default_rng(seed)
        x = (rng.standard_normal(size) * 4).astype(np.float16)
        if t.variant == "wild":
            special = np.array([np.inf, -np.inf, np.nan, -np.nan, 65504, -65504, 0.0, -0.0], np.float16)
            pick = rng.random(size) < 0.2
            x[pick] = rng.choice(special, int(pick.sum()))
        return {"x": x, "y": np.zeros(size, np.float16)}

    return _half_pair(casts, t, blocks, arrays)


@FAST
@given(
    tiles=st.integers(1, 6),
    tile16=st.integers(1, 32),
    blocks=st.integers(1, 50),
    narrow=st.sampled_from(MODES),
    to_int=st.sampled_from(MODES),
)
def test_full_cast_kernel_with_replay_equals_step_by_step(tiles, tile16, blocks, narrow, to_int):
    tile = tile16 * 16
    _cast_pair(C(tiles * tile, tile, narrow, to_int), blocks)


@FAST
@given(
    tiles=st.integers(1, 4),
    tile16=st.integers(1, 32),
    blocks=st.integers(1, 30),
    narrow=st.sampled_from(MODES),
    to_int=st.sampled_from(MODES),
    up=st.sampled_from([1000.37, 3.0e5, 1.0e38]),
    down=st.sampled_from([0.001, 1.0, 7.0e4]),
    seed=st.integers(0, 3),
)
def test_full_cast_kernel_on_specials_with_replay_equals_step_by_step(
    tiles, tile16, blocks, narrow, to_int, up, down, seed
):
    """NaNs, infinities, int32 saturation (clipped in float64 first) and half overflow: the
    replayed conversions are the step-by-step path's own, on the same values."""
    tile = tile16 * 16
    _cast_pair(C(tiles * tile, tile, narrow, to_int, "wild", up, down), blocks, seed)


@pytest.mark.parametrize("mode", MODES)
def test_a_cast_kernel_takes_its_replayed_numbers_from_the_trace(traced, mode):
    _cast_pair(C(4 * 256, 256, mode, mode), 8)
    assert traced == list(range(1, 8))


def test_a_padded_data_copy_pad_leaves_the_blocks_step_by_step(traced):
    _cast_pair(C(4 * 256, 256, AscendC.RoundMode.CAST_RINT, AscendC.RoundMode.CAST_FLOOR, "pad"), 8)
    assert traced == []
