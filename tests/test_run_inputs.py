"""A warm process remembers a case's seeded inputs: the same bits, never shared between runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from asc_tui.devkit.run import inputs
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.operator import In, Out, TensorSpec

ADD = str(Path(__file__).resolve().parents[1] / "operators" / "add_custom.py")


def _fresh(op):
    inputs._cache.clear()
    return prepare(op, None, {}, False, 0)[4]


def test_remembered_inputs_are_the_bits_drawn_fresh():
    op = load_operator(ADD)
    first = _fresh(op)
    again = prepare(op, None, {}, False, 0)[4]
    assert first.keys() == again.keys()
    for name in first:
        assert np.array_equal(first[name], again[name])
        assert first[name].dtype == again[name].dtype


def test_a_run_that_writes_its_inputs_does_not_change_the_next_runs():
    op = load_operator(ADD)
    first = _fresh(op)
    expected = {k: v.copy() for k, v in first.items()}
    for arr in first.values():
        arr[...] = 7
    again = prepare(op, None, {}, False, 0)[4]
    for name in expected:
        assert np.array_equal(again[name], expected[name])


def test_other_seeds_and_callable_inits_are_not_served_from_the_cache():
    specs = {"x": In(8, np.float16), "z": Out(8, np.float16)}
    assert inputs.cache_key(specs, 1) != inputs.cache_key(specs, 2)
    assert inputs.cache_key({"x": In(8, np.float16, init=lambda rng, shape: rng.random(shape))}, 1) is None


def test_kept_inputs_are_drawn_once_up_to_the_budget_and_outputs_are_never_kept(monkeypatch):
    """A case whose inputs fit the budget is drawn once (its outputs start as new zeros each
    time); one over the budget is drawn every run."""
    op = load_operator(ADD)
    drawn = []
    real = TensorSpec.generate
    monkeypatch.setattr(TensorSpec, "generate", lambda self, rng: drawn.append(self) or real(self, rng))
    need = sum(s.nbytes for s in op.tensors(op.case(None)).specs.values() if not s.is_output)
    monkeypatch.setattr(inputs, "budget", lambda: need)
    _fresh(op)
    runs = [prepare(op, None, {}, False, 0)[4] for _ in range(2)]
    assert len(drawn) == 2  # x and y, the first time only
    outs = [n for n, s in op.tensors(op.case(None)).specs.items() if s.is_output]
    assert outs and all(n not in kept for kept in inputs._cache.values() for n in outs)
    assert all(np.all(r[n] == 0) and r[n] is not runs[0][n] for r in runs[1:] for n in outs)
    monkeypatch.setattr(inputs, "budget", lambda: need - 1)
    _fresh(op)
    prepare(op, None, {}, False, 0)
    assert len(drawn) == 6 and not inputs._cache


def test_the_least_recently_used_cases_leave_beyond_the_budget(monkeypatch):
    monkeypatch.setattr(inputs, "budget", lambda: 3000)
    inputs._cache.clear()
    for seed in (1, 2, 3):
        inputs.keep_inputs(("k", seed), {"x": np.zeros(1000, np.uint8)})
    assert inputs.cached_inputs(("k", 1)) is not None  # (now the most recent)
    inputs.keep_inputs(("k", 4), {"x": np.zeros(1000, np.uint8)})
    assert [k[1] for k in inputs._cache] == [3, 1, 4]


def test_the_budget_is_an_eighth_of_the_address_space_cap():
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (8 << 30, resource.RLIM_INFINITY));"
        "from asc_tui.devkit.run import inputs; print(inputs.budget())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) == 1 << 30
