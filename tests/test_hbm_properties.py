"""The shared HBM (npu/memory/hbm.py): transfers in flight share the chip's bandwidth moment by moment,
each capped by its own core's path. Properties of the fluid model itself and of emulated runs."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GlobalTensor, QuePosition, TPipe, TQue, half
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch, make_gm
from asc_tui.npu.memory.hbm import HbmModel, Transfers, solve
from asc_tui.npu.pipes import FIX, MTE2, MTE3

B4 = load_chip("ascend910b4")
#: A chip whose HBM two cores' copies already saturate (100 GB/s = 60.6 B/cycle at 1650 MHz).
NARROW = replace(B4, hbm_gbps=100.0)
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---- the fluid model alone ----------------------------------------------------------------------

transfer_sets = st.lists(
    st.tuples(
        st.floats(0, 5000),  # issue cycle
        st.floats(0, 300),  # fixed cycles
        st.integers(0, 200_000),  # HBM bytes
        st.sampled_from([38.7, 44.0, 20.0, 128.0]),  # path cap, bytes/cycle
        st.integers(0, 7),  # owning core
    ),
    min_size=1,
    max_size=40,
)


def _transfers(rows) -> Transfers:
    a = np.array(rows, dtype=np.float64)
    return Transfers(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4].astype(np.int64))


@FAST
@given(rows=transfer_sets, hbm=st.floats(10.0, 500.0), lat=st.sampled_from([0.0, 4.0]))
def test_total_throughput_never_exceeds_the_hbm_and_no_transfer_its_path(rows, hbm, lat):
    xf = _transfers(rows)
    out = solve(HbmModel(hbm, lat), xf)
    assert np.all(out.level_bpc <= hbm * (1 + 1e-9))
    assert np.all(out.peak_rate <= xf.cap * (1 + 1e-9))
    # every transfer is at least as long as alone on the chip, and its bytes all arrive
    assert np.all(out.end - xf.start >= xf.uncontended() - 1e-6)
    moved = np.sum(np.diff(out.level_t) * out.level_bpc[:-1])
    assert np.isclose(moved, xf.nbytes.sum(), rtol=1e-6, atol=1e-3)


@FAST
@given(rows=transfer_sets, hbm=st.floats(10.0, 500.0))
def test_a_cores_transfers_on_one_pipe_run_one_after_another(rows, hbm):
    a = np.array(rows, dtype=np.float64)
    pipe = (np.arange(len(rows)) % 2) + 4  # alternate MTE2 / MTE3
    xf = Transfers(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4].astype(np.int64), pipe)
    out = solve(HbmModel(hbm, 4.0), xf)
    assert np.all(out.began >= xf.start)
    for lane in set(zip(xf.owner.tolist(), pipe.tolist())):
        idx = [i for i in range(len(rows)) if (xf.owner[i], pipe[i]) == lane]
        idx.sort(key=lambda i: (xf.start[i], i))
        for a_, b_ in zip(idx, idx[1:]):
            assert out.began[b_] >= out.end[a_] - 1e-9


@FAST
@given(rows=transfer_sets)
def test_alone_on_the_chip_a_transfer_takes_its_fixed_cycles_plus_bytes_over_its_cap(rows):
    xf = _transfers(rows[:1])
    out = solve(HbmModel(1e9, 4.0), xf)
    assert np.allclose(out.end - xf.start, xf.uncontended())


def test_a_copying_core_gets_its_whole_path_while_the_others_compute():
    # 8 cores; only one copies: it runs at its cap, not at 1/8 of the HBM
    hbm = 8 * 20.0
    xf = _transfers([(0.0, 0.0, 40_000, 38.7, 0)])
    assert solve(HbmModel(hbm, 0.0), xf).peak_rate[0] == 38.7
    # all eight copy at once: each gets 1/8
    xf = _transfers([(0.0, 0.0, 40_000, 38.7, o) for o in range(8)])
    assert np.allclose(solve(HbmModel(hbm, 0.0), xf).peak_rate, 20.0)


# ---- emulated runs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """Per block: tiles to copy (GM→UB→GM), and vector repeats of Adds to do before copying."""

    tile: int
    tiles: tuple[int, ...]
    delay: tuple[int, ...]


def _setup(x, y, t: Plan):
    """This block's x and y, and a one-buffer VECIN queue of one tile."""
    b = AscendC.GetBlockIdx()
    span = max(t.tiles) * t.tile
    xg, yg = GlobalTensor(half), GlobalTensor(half)
    xg.SetGlobalBuffer(x + b * span, span)
    yg.SetGlobalBuffer(y + b * span, span)
    pipe = TPipe()
    q = TQue(QuePosition.VECIN, 1)
    pipe.InitBuffer(q, 1, t.tile * 2)
    return b, xg, yg, q


def _copy_tiles(xg, yg, q, tile: int, count: int) -> None:
    """GM→UB→GM, `count` tiles."""
    for i in range(count):
        local = q.AllocTensor(half)
        AscendC.DataCopy(local, xg[i * tile], tile)
        q.EnQue(local)
        local = q.DeQue(half)
        AscendC.DataCopy(yg[i * tile], local, tile)
        q.FreeTensor(local)


def _copier(x, y, t: Plan):
    b, xg, yg, q = _setup(x, y, t)
    local = q.AllocTensor(half)
    for _ in range(t.delay[b]):  # computing first: the next AllocTensor waits for it
        AscendC.Adds(local, local, 1.0, t.tile)
    q.FreeTensor(local)
    _copy_tiles(xg, yg, q, t.tile, t.tiles[b])


copier = AscendC.kernel(_copier)


def _emulate(plan: Plan, chip=NARROW):
    n = len(plan.tiles) * max(plan.tiles) * plan.tile
    gm = [make_gm("x", np.float16, n), make_gm("y", np.float16, n)]
    return launch(copier, gm, plan, len(plan.tiles), chip, numeric=False)


def _copy_cycles(em) -> list[float]:
    """Per block: the cycles its MTE2 and MTE3 transfers took, summed."""
    out = []
    for b in em.blocks:
        dma = (b.kind == 0) & ((b.pipe == MTE2) | (b.pipe == MTE3)) & (b.nbytes > 0)
        out.append(float(np.sum((b.end - b.start)[dma])))
    return out


def _dma_durations(em, block: int) -> np.ndarray:
    b = em.blocks[block]
    dma = (b.kind == 0) & (b.pipe == MTE2) & (b.nbytes > 0)
    return (b.end - b.start)[dma]


@FAST
@given(cores=st.integers(2, 5), tiles=st.integers(1, 6), tile=st.sampled_from([2048, 8192]))
def test_cores_copying_one_at_a_time_finish_their_copies_sooner_than_all_at_once(cores, tiles, tile):
    together = _emulate(Plan(tile, (tiles,) * cores, (0,) * cores))
    # each core first computes long enough for the cores before it to have copied everything
    step = tiles * 2 * (B4.dma_latency + 2 * tile / 38.7) / (tile / 128 * 2.17 + 32) + 1
    apart = _emulate(Plan(tile, (tiles,) * cores, tuple(int(step * b) for b in range(cores))))
    for alone, crowded in zip(_copy_cycles(apart), _copy_cycles(together)):
        assert alone < crowded


@FAST
@given(cores=st.integers(1, 4), tiles=st.integers(1, 5), delay=st.integers(1, 200))
def test_adding_a_core_that_only_computes_never_slows_the_others_copies(cores, tiles, delay):
    base = _emulate(Plan(2048, (tiles,) * cores, (0,) * cores))
    more = _emulate(Plan(2048, (tiles,) * cores + (0,), (0,) * cores + (delay,)))
    assert np.allclose(_copy_cycles(more)[:cores], _copy_cycles(base), rtol=1e-12)


@FAST
@given(
    blocks=st.integers(1, 8),
    tile=st.sampled_from([1024, 4096]),
    tiles=st.integers(1, 8),
    hbm=st.sampled_from([100.0, 400.0, 1200.0]),
)
def test_double_buffering_never_makes_a_copy_shorter_than_streamed_alone(blocks, tile, tiles, hbm):
    from asc_tui.devkit.run.loader import load_operator
    from asc_tui.devkit.run.runner import prepare

    op = load_operator("add_custom")
    from asc_tui.operator import Case

    op = replace(op, cases={**op.cases, "h": Case("h", dict(n=blocks * tile * tiles, dtype="float16"))})
    chip = replace(B4, hbm_gbps=hbm)
    _, _, _, lnch, _, gm = prepare(op, "h", dict(tile_length=tile, buffer_num=2, block_dim=blocks), False, 0)
    em = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=False)
    for b in em.blocks:
        for pipe, cap in ((MTE2, chip.gm_read_bpc), (MTE3, chip.gm_write_bpc)):
            dma = (b.kind == 0) & (b.pipe == pipe) & (b.nbytes > 0)
            alone = chip.dma_latency + b.nbytes[dma] / cap
            assert np.all((b.end - b.start)[dma] >= alone - 1e-6)


def test_a_core_copies_slower_while_another_core_copies_too():
    # block 0 copies 8 tiles, block 1 only 2: block 0's first copies share the HBM, its last not.
    # A shortcut that times each core alone (or by a fixed share) gives all of them one length.
    em = _emulate(Plan(8192, (8, 2), (0, 0)))
    d = _dma_durations(em, 0)
    assert d[0] > d[-1] * 1.2


def _assert_fluid_fixed_point(em, chip) -> None:
    """Re-solving the shared HBM for the emulated issue times gives back every recorded
    duration (each vector-kernel transfer: the DMA latency, its bytes, its path's cap)."""
    per_core = []
    durations = []
    for b in em.blocks:
        rows = []
        for pipe, cap in ((MTE2, chip.gm_read_bpc), (MTE3, chip.gm_write_bpc), (FIX, chip.gm_write_bpc)):
            dma = (b.kind == 0) & (b.pipe == pipe)
            rows += [(s, chip.dma_latency, n, cap, pipe) for s, n in zip(b.start[dma], b.nbytes[dma])]
            durations += list((b.end - b.start)[dma])
        per_core.append((b.core, rows))
    xf = Transfers.of(per_core)
    solved = solve(HbmModel.of(chip), xf)
    assert np.allclose(solved.began, xf.start)  # no transfer waited behind its pipe
    assert np.allclose(solved.durations(), durations, rtol=1e-9)


def test_the_emulated_timeline_is_the_fluid_models_fixed_point():
    _assert_fluid_fixed_point(_emulate(Plan(4096, (5, 3, 4), (0, 7, 0))), NARROW)


@pytest.mark.parametrize(
    "chip,tile,bufs,blocks,one_pass",
    [
        (B4, 2048, 1, 8, True),
        (B4, 20480, 1, 8, True),
        (B4, 10240, 2, 8, True),
        # 2 (40) cores' reads and writes overlap on each core beyond its share of the HBM
        (NARROW, 2048, 1, 2, False),
        (B4, 1024, 2, 40, False),
    ],
)
def test_cores_in_lockstep_are_priced_exactly_in_one_pass(chip, tile, bufs, blocks, one_pass):
    # identical blocks from the same cycle: the first pass's lockstep prices (npu/memory/lockstep.py)
    # are the fluid model's solution, with no pass after it, unless a core's own transfers
    # contend; the launch ends at the fluid model's fixed point either way
    from asc_tui.devkit.run.loader import load_operator
    from asc_tui.devkit.run.runner import prepare
    from asc_tui.operator import Case

    op = load_operator("vector_add_bias")
    op = replace(op, cases={**op.cases, "h": Case("h", dict(n=blocks * tile * 4))})
    _, _, _, lnch, _, gm = prepare(
        op, "h", dict(tile_length=tile, buffer_num=bufs, block_dim=blocks), True, 0
    )
    seen = []
    em = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=False, configure=seen.append)
    _assert_fluid_fixed_point(em, chip)
    assert (seen[0].hbm_passes == 1) == one_pass


def test_full_and_timing_only_runs_agree_under_the_shared_hbm():
    plan = Plan(2048, (4, 4, 4), (0, 3, 0))
    n = 3 * 4 * 2048
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float16)
    full = launch(
        copier,
        [make_gm("x", np.float16, n, x), make_gm("y", np.float16, n, np.zeros(n, np.float16))],
        plan,
        3,
        NARROW,
    )
    timing = _emulate(plan)
    assert full.timeline_key() == timing.timeline_key()


@pytest.mark.parametrize("blocks,tile,bufs", [(8, 2048, 1), (20, 1024, 2), (3, 4096, 2), (50, 1024, 1)])
def test_block_replay_stays_exact_when_cores_share_the_hbm(blocks, tile, bufs):
    # identical blocks may copy a template's first-pass records (npu/replay/replay.py); the shared-HBM
    # passes must still see every core's transfers and give the step-by-step timeline
    from asc_tui.devkit.run.loader import load_operator
    from asc_tui.devkit.run.runner import prepare
    from asc_tui.operator import Case

    op = load_operator("vector_add_bias")
    op = replace(op, cases={**op.cases, "h": Case("h", dict(n=blocks * tile * 6))})
    _, _, _, lnch, _, gm = prepare(
        op, "h", dict(tile_length=tile, buffer_num=bufs, block_dim=blocks), False, 0
    )

    def emulate(replay: bool):
        def configure(run):
            run.replay = replay

        return launch(op.kernel, gm, lnch.tiling, lnch.block_dim, NARROW, numeric=False, configure=configure)

    fast, slow = emulate(True), emulate(False)
    assert fast.timeline_key() == slow.timeline_key()
    assert fast.kernel_cycles > _uncontended(op, lnch, gm).kernel_cycles


def _uncontended(op, lnch, gm):
    def configure(run):
        run.hbm_shared = False

    return launch(op.kernel, gm, lnch.tiling, lnch.block_dim, NARROW, numeric=False, configure=configure)


def _data_driven(x, y, t: Plan):
    _, xg, yg, q = _setup(x, y, t)
    count = int(xg.GetValue(0))  # how many tiles: read from GM (a shadow reads 1)
    _copy_tiles(xg, yg, q, t.tile, count)


data_driven = AscendC.kernel(_data_driven)


def test_a_kernel_whose_transfers_depend_on_data_keeps_its_own_first_pass():
    # the shared-HBM passes run on shadows (GetValue reads 1): they issue other transfers, so the
    # full run keeps the timeline of its own transfers rather than a shadow's
    plan = Plan(2048, (3, 3), (0, 0))
    n = 2 * 3 * 2048
    x = np.full(n, 3, dtype=np.float16)
    em = launch(
        data_driven,
        [make_gm("x", np.float16, n, x), make_gm("y", np.float16, n, np.zeros_like(x))],
        plan,
        2,
        NARROW,
    )
    for b in em.blocks:
        assert int(np.count_nonzero((b.pipe == MTE2) & (b.kind == 0) & (b.nbytes > 0))) == 3


def test_loop_extrapolation_stays_exact_when_the_shared_hbm_takes_several_passes(monkeypatch):
    # matmul_official's base blocks are extrapolated on the first pass (npu/extrapolate/periodic.py, its
    # noted transfers repeated with it); the passes that follow a plan run every loop step by
    # step: the timeline is the one with extrapolation off
    from asc_tui.devkit.run.loader import load_operator
    from asc_tui.devkit.run.runner import prepare
    from asc_tui.npu.extrapolate import periodic
    from asc_tui.npu.memory import shared_hbm
    from asc_tui.operator import Case

    monkeypatch.setattr(shared_hbm, "SLACK_FROM", 10**9)  # settle exactly, however many passes
    chip = load_chip("ascend910b")
    op = load_operator("matmul_official")
    op = replace(op, cases={**op.cases, "h": Case("h", dict(m=4096, n=2048, k=2048, bias=False))})
    _, _, _, lnch, _, gm = prepare(op, "h", {"block_dim": 24}, timing_only=True, seed=0)
    extended = []
    real = periodic.Periodic._extend

    def counting(self, *args):
        extended.append(self.core.run.hbm_plan is None)
        return real(self, *args)

    monkeypatch.setattr(periodic.Periodic, "_extend", counting)
    seen = []
    on = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=False, configure=seen.append)
    monkeypatch.setattr(periodic.Periodic, "_extend", real)

    def off(run):
        run.extrapolate = False

    assert extended and all(extended)  # extrapolated on the first pass only
    assert seen[0].hbm_passes > 1
    slow = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=False, configure=off)
    # the same records; times the same up to float rounding (npu/extrapolate/periodic.py adds a period's
    # shift once where the step-by-step run adds its cycles one at a time)
    for name in ("block", "pipe", "op", "nbytes", "kind", "link"):
        assert np.array_equal(getattr(on.records, name), getattr(slow.records, name)), name
    for name in ("start", "end"):
        assert np.allclose(getattr(on.records, name), getattr(slow.records, name), rtol=0, atol=1e-6)


def test_a_timing_only_first_pass_let_go_for_a_rerun_that_does_not_hold_is_run_again(monkeypatch):
    # the first pass's records are let go before a rerun (two passes' records of a 16384³ matmul
    # do not fit side by side); when no rerun holds, the first pass runs again: same timeline
    from asc_tui.devkit.run.loader import load_operator
    from asc_tui.devkit.run.runner import prepare
    from asc_tui.npu.memory import shared_hbm
    from asc_tui.operator import Case

    op = load_operator("vector_add_bias")
    op = replace(op, cases={**op.cases, "h": Case("h", dict(n=50 * 1024 * 6))})
    _, _, _, lnch, _, gm = prepare(op, "h", dict(tile_length=1024, buffer_num=1, block_dim=50), False, 0)
    reruns = []

    def one_rerun_that_does_not_hold(model, xf, rerun, used=None, close_enough=None):
        reruns.append(rerun(used))  # runs (and lets the first pass go), then is not taken
        return None, 1, False

    monkeypatch.setattr(shared_hbm, "settle", one_rerun_that_does_not_hold)
    em = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, NARROW, numeric=False)
    assert len(reruns) == 1
    assert em.timeline_key() == _uncontended(op, lnch, gm).timeline_key()
