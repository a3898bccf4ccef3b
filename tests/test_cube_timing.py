"""The cube timing model: roofline sanity, GM traffic, L2, the tiling effect, the 80% target."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from asc_tui.devkit.profile.roofline import cube_peak_flops
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import RunRequest, prepare, run
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch, make_gm
from asc_tui.operator import Case

CHIP = load_chip("ascend910b")


def timing(op_name: str, case: str, params: dict, l2: bool = True):
    op = load_operator(op_name)
    _, p, _, lnch, _, gm = prepare(op, case, params, timing_only=True, seed=0)
    assert op.constraint_violations(op.case(case), p) == []

    def configure(run_):
        run_.l2_enabled = l2

    return launch(op.kernel, gm, lnch.tiling, lnch.block_dim, CHIP, numeric=False, configure=configure)


CONFIGS = [
    ("matmul", "default", dict(tile_m=128, tile_n=256, tile_k=64)),
    ("matmul", "default", dict(tile_m=64, tile_n=64, tile_k=64, double_buffer=1)),
    ("matmul", "default", dict(tile_m=256, tile_n=128, tile_k=32, l0c_buffers=1)),
    ("matmul", "int8", dict(tile_m=128, tile_n=128, tile_k=128)),
    ("matmul_official", "default", {}),
    ("conv2d", "default", {}),
]


@pytest.mark.parametrize("op_name,case,params", CONFIGS)
def test_no_config_exceeds_cube_peak_or_hbm_bandwidth(op_name, case, params):
    op = load_operator(op_name)
    res = timing(op_name, case, params)
    seconds = res.kernel_us * 1e-6
    dtype = op.case(case).get("dtype", "float16")
    assert op.flops(op.case(case)) / seconds <= cube_peak_flops(CHIP, np.dtype(dtype).itemsize)
    assert res.hbm_read / seconds <= CHIP.hbm_gbps * 1e9
    # without L2 every byte comes from HBM, and still within its bandwidth
    res_off = timing(op_name, case, params, l2=False)
    assert res_off.hbm_read == res_off.gm_read
    assert res_off.gm_read / (res_off.kernel_us * 1e-6) <= CHIP.hbm_gbps * 1e9


@given(
    m=st.integers(16, 700),
    n=st.integers(16, 700),
    k=st.integers(16, 700),
    tm=st.sampled_from([32, 64, 128, 256]),
    tn=st.sampled_from([32, 64, 128, 256]),
    tk=st.sampled_from([32, 64, 128]),
    db=st.sampled_from([1, 2]),
    dtype=st.sampled_from(["float16", "int8"]),
    l2=st.booleans(),
)
def test_no_valid_tiling_of_any_shape_beats_the_roofline(m, n, k, tm, tn, tk, db, dtype, l2):
    op = load_operator("matmul")
    values = dict(m=m, n=n, k=k, dtype=dtype)
    params = dict(tile_m=tm, tile_n=tn, tile_k=tk, double_buffer=db)
    assume(not op.constraint_violations(Case("h", values), op.resolve_params(params)))
    res = timing_case("matmul", values, params, l2=l2)
    seconds = res.kernel_us * 1e-6
    assert 2.0 * m * n * k / seconds <= cube_peak_flops(CHIP, np.dtype(dtype).itemsize)
    assert res.hbm_read / seconds <= CHIP.hbm_gbps * 1e9


def timing_case(op_name: str, values: dict, params: dict, l2: bool = True):
    """Timing-only launch of an ad-hoc case (shadow tensors)."""
    op = load_operator(op_name)
    case = Case("adhoc", values)
    lnch = op.launch(case, op.resolve_params(params))
    gm = [make_gm(name, s.np_dtype, s.count) for name, s in op.tensors(case).specs.items()]
    return launch(
        op.kernel,
        gm,
        lnch.tiling,
        lnch.block_dim,
        CHIP,
        numeric=False,
        configure=lambda r: setattr(r, "l2_enabled", l2),
    )


@pytest.mark.parametrize(
    "m,n,k,tm,tn,tk",
    [(512, 512, 512, 128, 256, 64), (512, 384, 256, 64, 128, 32), (300, 200, 100, 96, 80, 48)],
)
def test_gm_bytes_of_output_stationary_tiling_match_the_formula(m, n, k, tm, tn, tk):
    res = timing_case(
        "matmul", dict(m=m, n=n, k=k, dtype="float16"), dict(tile_m=tm, tile_n=tn, tile_k=tk), l2=False
    )
    want = 2 * (m * k * -(-n // tn) + k * n * -(-m // tm)) + 2 * m * n
    assert abs(res.gm_read + res.gm_write - want) <= 0.05 * want
    assert res.hbm_read == res.gm_read


def test_l2_makes_rereads_cheaper_than_first_reads():
    on = timing("matmul_official", "default", {})
    off = timing("matmul_official", "default", {}, l2=False)
    assert on.gm_read == off.gm_read
    assert on.hbm_read < off.hbm_read / 4
    assert on.kernel_cycles < off.kernel_cycles


def test_a_good_1024_tiling_is_at_least_1_3x_faster_and_reads_less_hbm():
    slow = timing("matmul", "default", dict(tile_m=64, tile_n=64, tile_k=64, double_buffer=1))
    fast = timing("matmul", "default", dict(tile_m=128, tile_n=256, tile_k=64))
    assert slow.kernel_cycles >= 1.3 * fast.kernel_cycles
    assert fast.gm_read < slow.gm_read / 2

    def mte2_share(r):
        stats = r.pipe_stats()
        return stats["mte2"].busy_us / sum(s.busy_us for s in stats.values())

    assert mte2_share(fast) < mte2_share(slow)


def test_best_bundled_matmul_reaches_80_percent_of_cube_peak_at_4096():
    res = timing("matmul_official", "large", {})
    achieved = 2.0 * 4096**3 / (res.time_us * 1e-6)
    assert achieved >= 0.80 * cube_peak_flops(CHIP)


@pytest.mark.parametrize(
    "op_name,case",
    [("matmul", "small"), ("matmul_official", "bias"), ("conv2d", "stride2"), ("matmul_leaky", "small")],
)
def test_full_and_timing_only_runs_give_identical_timelines(op_name, case):
    full = run(RunRequest(op_name, case=case))
    shadow = run(RunRequest(op_name, case=case, timing_only=True))
    assert full.passed
    assert full.emulation.timeline_key() == shadow.emulation.timeline_key()


def test_cube_records_queue_events_between_mte2_mte1_cube_and_fixpipe():
    res = run(RunRequest("matmul", case="small", timing_only=True)).emulation
    stats = res.pipe_stats()
    for pipe in ("mte2", "mte1", "cube", "fixpipe"):
        assert stats[pipe].instructions > 0
    b = res.blocks[0]
    cube_waits = (b.kind == 1) & (b.pipe == 2)
    assert cube_waits.any()  # the cube waited on MTE1_M (DeQue of A2/B2)


@given(
    counts=st.lists(st.integers(0, 9), min_size=1, max_size=64),
    regions=st.lists(
        st.tuples(
            st.integers(0, 20000),
            st.integers(1, 3),
            st.integers(1, 8),
            st.integers(1, 1500),
            st.integers(1, 3000),
            st.integers(0, 9000),
        ),
        min_size=1,
        max_size=12,
    ),
    capacity=st.sampled_from([0, 4096, 1 << 30]),
)
def test_l2_hits_of_all_regions_at_once_match_region_by_region(counts, regions, capacity):
    import numpy as np

    from asc_tui.npu.memory.l2 import L2Model
    from asc_tui.npu.memory.prepass import Prepass

    chunks = np.array(counts, dtype=np.int32)
    keys = [("a", *r) for r in regions]
    l2 = L2Model(capacity or 1, 110.0, prepass=Prepass({"a": chunks}, keys))
    for key in keys:
        _, base, nd, rows, row_bytes, stride, mstride = key
        idx = L2Model._chunks(base, nd, rows, row_bytes, stride, mstride, chunks.size)
        reads = chunks[idx] if idx.size else np.ones(1)
        miss = float(np.mean(1.0 / np.maximum(reads, 1)))
        want = int(nd * rows * row_bytes * (1.0 - miss) * l2.scale)
        assert abs(l2.hits[key] - want) <= 1, key


@pytest.mark.parametrize(
    "name,case",
    [
        ("matmul", "small"),
        ("matmul", "tails"),
        ("matmul_official", "bias"),
        ("conv2d", "tails"),
        ("matmul_leaky", "small"),
    ],
)
def test_the_l2_prepass_counts_the_same_reads_with_its_light_queues(name, case, monkeypatch):
    from asc_tui.ascendc.memory.queue import TQue
    from asc_tui.npu.memory.prepass import prepass_counts

    op = load_operator(name)
    _, _, _, lnch, _, gm = prepare(op, case, {}, timing_only=False, seed=1)
    chip = load_chip("ascend910b")
    light = prepass_counts(launch, op.kernel, gm, lnch.tiling, lnch.block_dim, chip)
    for full, counting in (
        ("AllocTensor", "_alloc_counting"),
        ("EnQue", "_enque_counting"),
        ("DeQue", "_deque_counting"),
        ("FreeTensor", "_free_counting"),
    ):
        monkeypatch.setattr(TQue, counting, getattr(TQue, full))  # the timed queue ops
    timed = prepass_counts(launch, op.kernel, gm, lnch.tiling, lnch.block_dim, chip)
    assert light is not None and timed is not None
    assert light.regions == timed.regions
    assert light.counts.keys() == timed.counts.keys()
    for buf, counts in light.counts.items():
        assert (counts == timed.counts[buf]).all(), buf
