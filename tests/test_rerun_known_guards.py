"""A shared-HBM rerun (npu/memory/shared_hbm.py) runs its templates with their plain block index and
the first pass's guards (`Run.known`): the same instruction streams, only re-timed. It must give
what running its templates symbolically gives, and the step-by-step launch; a kernel that reads
the clock may take another path when the times change, so its rerun derives its own guards."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from replaykit import patched

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GlobalTensor, QuePosition, TPipe, TQue, half
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.errors import TilingError
from asc_tui.npu.launch import launch, make_gm
from asc_tui.npu.launch import launcher as launch_mod

FAST = settings(
    max_examples=12,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    deadline=None,
)  # (`reruns` holds only a switch, set on every example)
CHIP = load_chip("ascend910b")
NARROW = replace(load_chip("ascend910b4"), hbm_gbps=100.0)  # two cores' copies saturate it
FIELDS = ("block", "pipe", "start", "end", "op", "line", "nbytes", "kind", "link", "offsets")


@pytest.fixture
def reruns(monkeypatch):
    """Switch for the first pass's guards in reruns (`on`), and how many rerun passes got them."""
    share = launch_mod.share_hbm
    state = {"on": True, "used": 0}

    def counting(launch_, run, *args, **kw):
        if not state["on"]:
            run.learned = {}

        def observed(*a, configure, **k):  # a rerun's launch: did it get guards?
            def setup(r):
                configure(r)
                state["used"] += bool(r.known)

            return launch_(*a, configure=setup, **k)

        return share(observed, run, *args, **kw)

    monkeypatch.setattr(launch_mod, "share_hbm", counting)
    return state


def assert_identical(a, b) -> None:
    assert a.timeline_key() == b.timeline_key()
    for name in FIELDS:
        assert np.array_equal(getattr(a.records, name), getattr(b.records, name)), name
    assert (a.gm_read, a.gm_write, a.l2_hit) == (b.gm_read, b.gm_write, b.l2_hit)
    assert (a.warnings, a.log, a.ops, a.lines) == (b.warnings, b.log, b.ops, b.lines)


def _both_ways(reruns, op, case, params, numeric: bool, chip=CHIP):
    """The launch with the first pass's guards in its reruns and without: (with, without)."""
    got = []
    for on in (True, False):
        reruns["on"] = on
        try:
            _, _, _, lnch, arrays, gm = prepare(op, case, params, timing_only=not numeric, seed=0)
        except TilingError:
            reject()  # a tiling the operator's constraints refuse (hypothesis draws another)
        res = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=numeric)
        got.append((res, {k: v.tobytes() for k, v in arrays.items()}))
    (a, out_a), (b, out_b) = got
    assert_identical(a, b)
    assert out_a == out_b
    return a


@FAST
@given(
    m=st.integers(1, 12).map(lambda x: 32 * x),
    n=st.integers(1, 12).map(lambda x: 32 * x),
    k=st.integers(1, 6).map(lambda x: 64 * x),
    tile_m=st.sampled_from([64, 128]),
    tile_n=st.sampled_from([64, 128, 256]),
    tile_k=st.sampled_from([32, 64]),
    blocks=st.integers(1, 24),
    numeric=st.booleans(),
)
def test_a_rerun_on_the_first_pass_guards_equals_one_that_derives_its_own(
    reruns, m, n, k, tile_m, tile_n, tile_k, blocks, numeric
):
    op = patched(load_operator("matmul"), m=m, n=n, k=k, dtype="float16")
    params = dict(tile_m=tile_m, tile_n=tile_n, tile_k=tile_k, block_dim=blocks)
    _both_ways(reruns, op, "h", params, numeric)


@pytest.mark.parametrize(
    "name,case,numeric,reruns_expected",
    [
        ("matmul", "default", True, True),
        ("matmul", "default", False, True),
        ("matmul_official", "large", False, False),  # (its first pass is within the slack)
    ],
)
def test_the_bundled_cube_launches_rerun_on_the_first_pass_guards_exactly(
    reruns, name, case, numeric, reruns_expected
):
    _both_ways(reruns, load_operator(name), case, {}, numeric)
    assert (reruns["used"] >= 1) == reruns_expected  # (the first pass's guards served a rerun)


# ---- a kernel that reads the clock -----------------------------------------------------------


@dataclass(frozen=True)
class Clocked:
    tile: int
    long_blocks: int  # blocks below this copy two tiles, the others one: not in lockstep
    thresh: float  # block 0 computes once more when its clock is past (`later`) or before it
    later: bool


seen: list[float] = []  # the clock each template (and step-by-step block) read


def _copy_tiles(b, xg, yg, t: Clocked):
    """GM→UB→GM of two tiles in the blocks below `t.long_blocks`, one in the others (not in
    lockstep: the launch reruns under the shared HBM); returns the queue."""
    pipe = TPipe()
    q = TQue(QuePosition.VECIN, 1)
    pipe.InitBuffer(q, 1, t.tile * 2)
    for i in range(2 if b < t.long_blocks else 1):
        local = q.AllocTensor(half)
        AscendC.DataCopy(local, xg[i * t.tile], t.tile)
        q.EnQue(local)
        local = q.DeQue(half)
        AscendC.DataCopy(yg[i * t.tile], local, t.tile)
        q.FreeTensor(local)
    return q


def _clocked(x, y, t: Clocked):
    b = AscendC.GetBlockIdx()
    xg, yg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x + b * 2 * t.tile, 2 * t.tile)
    yg.SetGlobalBuffer(y + b * 2 * t.tile, 2 * t.tile)
    q = _copy_tiles(b, xg, yg, t)
    AscendC.PipeBarrier(AscendC.PIPE_ALL)  # (the scalar unit waits for the copies)
    clock = AscendC.GetSystemCycle()
    seen.append(clock)
    if (clock > t.thresh) == t.later and b < 1:  # a path the time decides, then the block
        local = q.AllocTensor(half)
        AscendC.Adds(local, local, 1.0, t.tile)
        q.FreeTensor(local)


clocked = AscendC.kernel(_clocked)


def _run_clocked(t: Clocked, blocks: int, replay: bool = True):
    n = blocks * 2 * t.tile
    gm = [make_gm("x", np.float16, n), make_gm("y", np.float16, n)]

    def configure(run):
        run.replay = replay

    return launch(clocked, gm, t, blocks, NARROW, numeric=False, configure=configure)


def test_a_kernel_that_reads_the_clock_reruns_on_guards_of_its_own():
    # first, where block 0's clock reads on the first pass (lockstep prices) and on the rerun
    seen.clear()
    probe = Clocked(4096, 2, float("inf"), True)
    _run_clocked(probe, 6)
    first, rerun = seen[0], seen[2]  # templates: block 0, block 2; then the rerun's
    assert first != rerun
    # block 0 computes once more on the rerun only; block 1, whose first-pass guards admitted
    # it to block 0's records, does not (on those guards it would, and the rerun would stand
    # with block 1's records wrong): the step-by-step launch is the truth
    t = Clocked(4096, 2, (first + rerun) / 2, rerun > first)
    seen.clear()
    fast = _run_clocked(t, 6)
    assert (seen[2] > t.thresh) == t.later  # (the rerun's block 0 took the branch)
    slow = _run_clocked(t, 6, replay=False)
    assert fast.timeline_key() == slow.timeline_key()


# ---- a kernel that reads data into its Python ------------------------------------------------


def _data_steered(x, y, t: Clocked):
    b = AscendC.GetBlockIdx()
    xg, yg, ng = GlobalTensor(half), GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x + b * 2 * t.tile, 2 * t.tile)
    yg.SetGlobalBuffer(y + b * 2 * t.tile, 2 * t.tile)
    ng.SetGlobalBuffer(x, 1)
    n = int(ng.GetValue(0))  # real data on the first pass, 1 on the rerun's shadows
    q = _copy_tiles(b, xg, yg, t)
    if b >= n:  # a path the data decides, then the block
        local = q.AllocTensor(half)
        AscendC.Adds(local, local, 1.0, t.tile)
        q.FreeTensor(local)


data_steered = AscendC.kernel(_data_steered)


def test_a_kernel_that_reads_data_reruns_on_guards_of_its_own(reruns):
    # a timing-only launch on real data (as a C++ host program's): the first pass reads n = 0,
    # its rerun reads shadows (n = 1), so block 1 takes another path there than block 0; on the
    # first pass's guards block 1 would copy block 0's rerun records
    t = Clocked(4096, 2, 0.0, True)
    n = 6 * 2 * t.tile

    def emulate():
        gm = [make_gm("x", np.float16, n, np.zeros(n, np.float16)), make_gm("y", np.float16, n, np.zeros(n))]
        return launch(data_steered, gm, t, 6, NARROW, numeric=False)

    reruns["on"] = True
    with_known = emulate()
    assert reruns["used"] == 0  # (it read data: the rerun derived its own guards)
    reruns["on"] = False
    assert_identical(with_known, emulate())


def test_a_cpp_kernel_that_dereferences_gm_data_is_marked_as_reading_data(tmp_path):
    # `*p` of a GM pointer hands data to the kernel's Python, as GetValue does
    from cxxkernel import run_kernel

    src = """
    extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR z)
    {
        int32_t n = *((__gm__ int32_t*)x);
        *((__gm__ int32_t*)z) = n + 1;
    }
    """
    runs = []
    z, _ = run_kernel(tmp_path, src, np.array([41], np.int32), np.int32, 1, configure=runs.append)
    assert z[0] == 42 and runs and all(r.read_data for r in runs)
