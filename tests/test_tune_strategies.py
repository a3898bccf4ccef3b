"""Strategies: exhaustive finds the true optimum, quick gets within 5% in <= 10 evaluations."""

from __future__ import annotations

import itertools

import pytest
from tunesrc import tune_op_source

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.devkit.tune import STRATEGIES, TuneRequest, build_space, make_strategy, tune
from asc_tui.npu.chip import load_chip

# A matmul 1024^3 fp16 subspace small enough to brute-force in a test (all other params free).
MATMUL_SUB = {"tile_m": "128,256", "tile_n": "128,256", "tile_k": "64,128,256"}


def brute_force(op_name: str, case: str | None = None, fixed: dict | None = None):
    """Independent of the tuner: run every combination that runs, keep the fastest."""
    op = load_operator(op_name)
    fixed = fixed or {}
    names = list(op.params)
    axes = [
        [int(v) for v in fixed[n].split(",")] if n in fixed else list(op.params[n].space()) for n in names
    ]
    best = None
    for combo in itertools.product(*axes):
        params = dict(zip(names, combo))
        r = run(RunRequest(op_name, case, None, params, timing_only=True), op=op)
        if r.errors:
            continue
        if best is None or r.emulation.time_us < best[1]:
            best = (params, r.emulation.time_us)
    return best


@pytest.fixture(scope="module")
def add_custom_truth():
    return brute_force("add_custom")


@pytest.fixture(scope="module")
def matmul_truth():
    return brute_force("matmul", None, MATMUL_SUB)


def test_exhaustive_finds_the_true_optimum_of_add_custom(add_custom_truth):
    report = tune(TuneRequest("add_custom", strategy="exhaustive", workers=2))
    assert report.best.time_us == pytest.approx(add_custom_truth[1], rel=1e-12)
    assert report.evaluated == report.space_size - len(report.invalid)


def test_quick_tune_is_within_5_percent_on_add_custom_in_10_evaluations(add_custom_truth):
    report = tune(TuneRequest("add_custom", strategy="quick", workers=2))
    assert report.evaluated <= 10
    assert report.best.time_us <= add_custom_truth[1] * 1.05


def test_exhaustive_finds_the_true_optimum_of_matmul(matmul_truth):
    report = tune(TuneRequest("matmul", strategy="exhaustive", workers=2, fixed=MATMUL_SUB))
    assert report.best.time_us == pytest.approx(matmul_truth[1], rel=1e-12)
    assert report.case == "default"


def test_quick_tune_is_within_5_percent_on_matmul_in_10_evaluations(matmul_truth):
    report = tune(TuneRequest("matmul", strategy="quick", workers=2))  # the whole space
    assert report.evaluated <= 10
    assert report.best.time_us <= matmul_truth[1] * 1.05


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_strategies_propose_each_valid_config_at_most_once_within_budget(name, write_operator):
    op = load_operator(write_operator("op", tune_op_source()))
    space = build_space(op, None, load_chip(None))
    prior = {c.key: float(i) for i, c in enumerate(space.valid)}
    strategy = make_strategy(name, space, budget=6, seed=3, prior=prior)
    valid = {c.key for c in space.valid}
    proposed = []
    for step in range(100):
        batch = strategy.ask(2)
        if not batch:
            break
        for c in batch:
            proposed.append(c.key)
            strategy.tell(c.key, 1.0 + (step * 7 + len(proposed)) % 5)
    assert len(proposed) == len(set(proposed)) == min(6, len(valid))
    assert set(proposed) <= valid


def test_random_strategy_is_reproducible_with_a_seed(write_operator):
    path = str(write_operator("op", tune_op_source()))
    a = tune(TuneRequest(path, strategy="random", budget=4, seed=7, workers=0, fresh=True))
    b = tune(TuneRequest(path, strategy="random", budget=4, seed=7, workers=0, fresh=True))
    assert [o.key for o in a.outcomes] == [o.key for o in b.outcomes]


def test_gflops_objective_picks_the_highest_gflops():
    report = tune(
        TuneRequest("add_custom", strategy="random", budget=8, seed=1, workers=0, objective="gflops")
    )
    assert report.best.gflops == max(o.gflops for o in report.outcomes if o.ok)
    assert report.objective == "gflops"
