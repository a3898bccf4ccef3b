"""The fluid solver's fast path (npu/memory/hbm.py `solve`) gives the same floats, to the last bit, as
the plain event loop it replaced (tests/hbmref.py): on random transfer sets built to tie (issue
times, fixed phases and ends that coincide, repeated caps and group weights, empty transfers,
queues on one pipe) and on the transfers a real launch solves."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch
from asc_tui.npu.memory import hbm
from asc_tui.npu.memory.hbm import HbmModel, Transfers, solve
from tests.hbmref import reference_solve

MANY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIELDS = ("end", "entry", "level_t", "level_bpc", "peak_rate", "began")

# few distinct values, so that events coincide and kinds repeat
times = st.one_of(st.sampled_from([0.0, 1.0, 2.5, 100.0, 409.28, 1000.0]), st.floats(0, 5000))
rows = st.lists(
    st.tuples(
        times,  # issue cycle
        st.one_of(st.sampled_from([0.0, 2.0, 287.6, 408.65]), st.floats(0, 300)),  # fixed cycles
        st.one_of(st.sampled_from([0, 1, 512, 1024, 4096]), st.integers(0, 200_000)),  # HBM bytes
        st.one_of(st.sampled_from([38.7, 44.0, 20.0, 128.0]), st.floats(0.5, 300)),  # path cap
        st.sampled_from([4, 5, 6]),  # pipe
        st.integers(0, 5),  # owning core
        st.one_of(st.sampled_from([1.0, 8.0, 16.0]), st.floats(0.25, 40)),  # group weight
    ),
    min_size=1,
    max_size=60,
)
models = st.builds(
    HbmModel,
    st.one_of(st.sampled_from([0.0, 60.6, 888.8888888888889]), st.floats(5.0, 2000.0)),
    st.sampled_from([0.0, 4.0, 2.5]),
)


def _same_bits(a, b) -> None:
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name


def _transfers(table, pipes: bool, weights: bool) -> Transfers:
    a = np.array(table, dtype=np.float64)
    xf = Transfers.rows(a[:, :6], a[:, 6].copy() if weights else None)
    return xf if pipes else Transfers(xf.start, xf.fixed, xf.nbytes, xf.cap, xf.owner, None, xf.weight)


@MANY
@given(table=rows, model=models, pipes=st.booleans(), weights=st.booleans())
def test_the_fast_solver_gives_the_reference_solvers_floats(table, model, pipes, weights):
    xf = _transfers(table, pipes, weights)
    _same_bits(solve(model, xf), reference_solve(model, xf))


@MANY
@given(table=rows, model=models, pipes=st.booleans(), weights=st.booleans())
def test_durations_alone_are_the_solutions_to_the_bit(table, model, pipes, weights):
    """`hbm.durations` (what `settle` asks for) skips the throughput's steps and the peaks."""
    xf = _transfers(table, pipes, weights)
    got, want = hbm.durations(model, xf), reference_solve(model, xf).durations()
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@MANY
@given(table=rows, model=models, copies=st.integers(2, 6))
def test_repeated_streams_of_transfers_solve_as_the_reference_does(table, model, copies):
    """Cores issuing the same stream at the same times: the water level's kinds recur most."""
    a = np.array(table, dtype=np.float64)
    stacked = np.concatenate(
        [np.column_stack([a[:, :5], np.full(len(a), k), a[:, 6]]) for k in range(copies)]
    )
    xf = Transfers.rows(stacked[:, :6], stacked[:, 6].copy())
    _same_bits(solve(model, xf), reference_solve(model, xf))


@pytest.mark.parametrize("numeric", [True, False])
def test_a_launch_solves_its_transfers_as_the_reference_does(monkeypatch, numeric):
    """The matmul of bench_cube (24 blocks in two lockstep groups, a shared-HBM rerun)."""
    seen = []
    fast = hbm.durations

    def watched(model, xf):
        out = fast(model, xf)
        seen.append((model, xf, out))
        return out

    monkeypatch.setattr(hbm, "durations", watched)
    op = load_operator("matmul")
    _, _, _, lnch, _, gm = prepare(op, "default", {}, timing_only=not numeric, seed=0)
    launch(op.kernel, gm, lnch.tiling, lnch.block_dim, load_chip("ascend910b"), numeric=numeric)
    assert len(seen) >= 2
    for model, xf, out in seen:
        want = reference_solve(model, xf)
        assert out.tobytes() == want.durations().tobytes()
        _same_bits(solve(model, xf), want)


durations = st.lists(
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1e-6, 2e-6, 1e9])),
    min_size=1,
    max_size=50,
)


@MANY
@given(x=durations, y=durations, nudge=st.sampled_from([0.0, 1e-7, 1e-12, -3e-7]))
def test_settles_closeness_is_numpys_isclose(x, y, nudge):
    """`settle` asks which durations moved; its test is np.isclose's, element for element."""
    a = np.array(x, dtype=np.float64)
    b = np.resize(np.array(y, dtype=np.float64), len(a))
    for other in (b, a + nudge, a * (1 + nudge)):
        with np.errstate(all="ignore"):
            want = np.isclose(a, other, rtol=hbm.TOLERANCE, atol=1e-6)
        assert np.array_equal(hbm._close(a, other), want)
