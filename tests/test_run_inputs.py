"""A warm process remembers a case's seeded inputs: the same bits, never shared between runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from asc_tui.devkit import inputs
from asc_tui.devkit.loader import load_operator
from asc_tui.devkit.runner import prepare
from asc_tui.operator import In, Out

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
