"""`a < b ? a : b` over integers is translated as `min` (cxx/kernel/expr.py `_min_or_max`): the same
value as the branch, and a template run's block index keeps blocks that tie together."""

import tempfile
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from cxxkernel import add_one_kernel, blocks_that_ran, run_kernel, step_by_step_timeline
from cxxsrc import call, write
from hypothesis import given
from hypothesis import strategies as st

from asc_tui.cxx.translate import translate

#: every spelling of the pattern: (condition, consequence, alternative)
FORMS = [
    ("a < b", "a", "b"),
    ("a <= b", "a", "b"),
    ("a > b", "a", "b"),
    ("a >= b", "a", "b"),
    ("a < b", "b", "a"),
    ("a <= b", "b", "a"),
    ("(a > b)", "b", "a"),
    ("a >= b", "b", "a"),
]
#: (type of a, type of b, the conditional's type: C++'s usual arithmetic conversions)
TYPES = [
    ("int32_t", "int32_t", "int32_t"),
    ("uint32_t", "uint32_t", "uint32_t"),
    ("int32_t", "uint32_t", "uint32_t"),
    ("uint8_t", "uint8_t", "uint8_t"),
    ("int64_t", "uint32_t", "int64_t"),
]


_DIR = tempfile.TemporaryDirectory(prefix="asc-tui-minmax-")  # (removed at exit)


@cache
def _pair(form: int, types: int):
    """The pattern, and the same choice written as an if statement (never `min`)."""
    cond, yes, no = FORMS[form]
    ta, tb, tc = TYPES[types]
    src = f"""
    {tc} f({ta} a, {tb} b) {{ return {cond} ? {yes} : {no}; }}
    {tc} g({ta} a, {tb} b) {{ if ({cond}) {{ return ({tc}){yes}; }} return ({tc}){no}; }}
    """
    d = Path(_DIR.name) / f"{form}-{types}"
    d.mkdir()
    ns_f = translate(write(d, src, "f.asc"), kernel="f")
    ns_g = translate(write(d, src, "g.asc"), kernel="g")
    return ns_f.load()[ns_f.entry], ns_g.load()[ns_g.entry]


def _value(t: str, x: int) -> int:
    return int(np.array(x).astype(np.dtype(t.removesuffix("_t")), casting="unsafe"))


@given(
    st.integers(0, len(FORMS) - 1),
    st.integers(0, len(TYPES) - 1),
    st.integers(-(2**33), 2**33) | st.sampled_from([0, 1, -1, 255, 2**31 - 1, -(2**31), 2**32 - 1]),
    st.integers(-(2**33), 2**33) | st.sampled_from([0, 1, -1, 255, 2**31 - 1, -(2**31), 2**32 - 1]),
)
def test_the_pattern_gives_what_the_branch_gives(form, types, x, y):
    f, g = _pair(form, types)
    ta, tb, _ = TYPES[types]
    a, b = _value(ta, x), _value(tb, y)
    assert f(a, b) == g(a, b)
    assert f(a, a if ta == tb else b) == g(a, a if ta == tb else b)  # (ties)


def test_operands_with_side_effects_keep_the_branch(tmp_path):
    # i++ < n ? i++ : n reads i twice in C++ (1, not min's 0)
    src = "int32_t f() { int32_t i = 0; int32_t n = 5; return i++ < n ? i++ : n; }"
    assert call(tmp_path, src) == 1


def test_floats_keep_the_branch(tmp_path):
    # -0.0 < 0.0 is false: the branch gives +0.0 (min would keep the first, -0.0)
    src = "float f(float a, float b) { return a < b ? a : b; }"
    assert np.copysign(1.0, call(tmp_path, src, "f", -0.0, 0.0)) == 1.0
    assert np.isnan(call(tmp_path, src, "f", 1.0, float("nan")))


@pytest.mark.parametrize("numeric", [False, True])
def test_a_tied_last_block_replays_with_the_others(tmp_path, monkeypatch, numeric):
    # each block takes min(block_length, total - start): the last one's tie is no branch, so
    # one template run stands for all 8 blocks (as the Python twin's min does)
    head = """
        constexpr uint32_t TOTAL = 8 * 256;
        constexpr uint32_t BLOCK = 256;
    """
    setup = """
        uint32_t start = BLOCK * AscendC::GetBlockIdx();
        uint32_t length = BLOCK < TOTAL - start ? BLOCK : TOTAL - start;
        xg.SetGlobalBuffer((__gm__ half*)x + start, length);
        zg.SetGlobalBuffer((__gm__ half*)z + start, length);
    """
    src = add_one_kernel(head, setup, "BLOCK", "length")
    x = np.arange(8 * 256).astype(np.float16)
    ran = blocks_that_ran(monkeypatch)
    z, fast = run_kernel(tmp_path, src, x, np.float16, 8 * 256, blocks=8, numeric=numeric)
    assert ran == [0]  # (as a branch: [0, 7])
    if numeric:
        assert np.array_equal(z, x + np.float16(1))
    slow = step_by_step_timeline(tmp_path, src, x, 8, numeric)
    assert len(ran) == 9
    assert fast.launches[0].result.timeline_key() == slow
