"""npu/fp16.py and its C loops (npu/_fp16.c): the same bits as numpy's casts, on every path.

The C loops are checked where the extension was built (`fp16.BUILT`); the numpy fallback
everywhere, by hiding the extension.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asc_tui.npu import fp16
from asc_tui.npu.numbers.widen import widen_into, widened

needs_c = pytest.mark.skipif(not fp16.BUILT, reason="the C extension was not built (no compiler)")

ALL_F16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16 if a.dtype.itemsize == 2 else np.uint32)


def _numpy_narrow(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return x.astype(np.float16)


@pytest.fixture(params=["c", "numpy"])
def path(request, monkeypatch):
    """Run a test on the C loops (skipped where not built) and on the numpy fallback."""
    if request.param == "c":
        if not fp16.BUILT:
            pytest.skip("the C extension was not built (no compiler)")
    else:
        monkeypatch.setattr(fp16, "_fp16", None)
    return request.param


def test_every_fp16_value_widens_to_numpys_fp32_bits(path):
    out = np.empty(ALL_F16.shape, np.float32)
    widen_into(out, ALL_F16, np.float32)
    assert np.array_equal(_bits(out), _bits(ALL_F16.astype(np.float32)))
    assert fp16.widen_f16(out, ALL_F16) == (path == "c")


@pytest.fixture(scope="module")
def fp32_sweep():
    """Every 251st pattern of the 2^32, from two offsets (all exponents, signs, NaN payloads),
    with numpy's fp16 bits of each: made once for both paths (numpy's cast takes seconds)."""
    sweep = []
    for first in (0, 125):
        x = np.arange(first, 1 << 32, 251, dtype=np.uint64).astype(np.uint32).view(np.float32)
        sweep.append((x, _bits(_numpy_narrow(x))))
    return sweep


def test_a_sweep_of_fp32_bit_patterns_narrows_to_numpys_fp16_bits(path, fp32_sweep):
    for x, expected in fp32_sweep:
        out = np.empty(x.shape, np.float16)
        fp16.cast_into(out, x)
        assert np.array_equal(_bits(out), expected)


def test_rounding_ties_subnormals_overflow_and_nans_narrow_as_numpy_does(path):
    eps = np.float32(2.0**-13)  # half an fp16 ulp at 1
    values = [
        0.0, -0.0, 1.0 + eps, 1.0 + 3 * eps, 65504.0, 65519.99, 65520.0, 65536.0, 1e30, np.inf,
        -np.inf, 2.0**-24, 2.0**-25, 2.0**-25 * 1.0001, 3 * 2.0**-25, 2.0**-14, 2.0**-14 * (1 - 2.0**-12),
        1e-45, -1e-40,
    ]  # fmt: skip
    x = np.array(values, np.float32)
    nans = np.array([0x7F800001, 0x7FC00000, 0xFF800100, 0x7F802000, 0x7FFFFFFF], np.uint32).view(np.float32)
    x = np.concatenate([x, nans, -x])
    out = np.empty(x.shape, np.float16)
    fp16.cast_into(out, x)
    assert np.array_equal(_bits(out), _bits(_numpy_narrow(x)))


def test_an_fp16_overflow_becomes_inf_without_a_warning_on_either_path(path):
    out = np.empty(2, np.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fp16.cast_into(out, np.array([1e6, -1e6], np.float32))
    assert list(out) == [np.inf, -np.inf]


def test_other_casts_are_numpys_own(path):
    out = np.empty(3, np.int8)
    fp16.cast_into(out, np.array([1.7, -2.2, 100.0], np.float32))
    assert list(out) == [1, -2, 100]
    wide = np.empty(3, np.float64)
    assert not fp16.widen_f16(wide, np.ones(3, np.float16))  # (only fp16 → fp32)


@st.composite
def _views(draw):
    """A random strided view (steps, reversals, transposes) of a random fp32 array."""
    shape = draw(st.lists(st.integers(1, 7), min_size=1, max_size=4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    base = (rng.standard_normal([s * 2 for s in shape]) * rng.choice([1e-6, 1.0, 3e4, 1e5])).astype(
        np.float32
    )
    index = tuple(slice(None, None, draw(st.sampled_from([1, 2, -1, -2]))) for _ in shape)
    view = base[index]
    axes = draw(st.permutations(range(view.ndim)))
    return view.transpose(axes)


@settings(max_examples=60, deadline=None)
@given(src=_views(), out_layout=st.sampled_from(["c", "f", "strided"]))
def test_strided_views_convert_both_ways_as_numpy_does(src, out_layout):
    def out_like(dtype):
        if out_layout == "c":
            return np.empty(src.shape, dtype)
        if out_layout == "f":
            return np.empty(src.shape, dtype, order="F")
        return np.empty([s * 2 for s in src.shape], dtype)[tuple(slice(None, None, 2) for _ in src.shape)]

    narrow = out_like(np.float16)
    fp16.cast_into(narrow, src)
    assert np.array_equal(_bits(narrow), _bits(_numpy_narrow(src)))
    wide = out_like(np.float32)
    widen_into(wide, narrow, np.float32)
    assert np.array_equal(_bits(wide), _bits(narrow.astype(np.float32)))
    assert np.array_equal(_bits(widened(narrow.T, np.float32)), _bits(narrow.T.astype(np.float32)))


@needs_c
def test_unaligned_and_empty_buffers_convert_and_mismatches_are_refused():
    raw = np.zeros(4 * 9 + 1, np.uint8)
    x = raw[1:].view(np.float32)  # 1 byte off: the loops must not assume alignment
    x[:] = np.linspace(-3, 3, 9, dtype=np.float32)
    out = np.empty(9, np.float16)
    fp16._fp16.narrow(out, x)
    assert np.array_equal(_bits(out), _bits(x.astype(np.float16)))
    odd = np.zeros(2 * 9 + 1, np.uint8)[1:].view(np.float16)
    odd[:] = out
    back = np.empty(9, np.float32)
    fp16._fp16.widen(back, odd)
    assert np.array_equal(back, out.astype(np.float32))
    fp16._fp16.narrow(np.empty((0, 3), np.float16), np.empty((0, 3), np.float32))  # nothing to do
    with pytest.raises(ValueError, match="shape"):
        fp16._fp16.narrow(np.empty(3, np.float16), np.empty(4, np.float32))
    with pytest.raises(ValueError, match="element sizes"):
        fp16._fp16.widen(np.empty(3, np.float64), np.empty(3, np.float16))
    read_only = np.empty(9, np.float16)
    read_only.setflags(write=False)
    with pytest.raises((BufferError, ValueError)):  # (numpy refuses a writable buffer of it)
        fp16._fp16.narrow(read_only, x)


def test_overlapping_source_and_destination_convert_as_numpy_does(path):
    # (2-D: numpy's copyto copies an overlapping source first; a 1-D one it reads in place)
    raw = np.random.default_rng(3).standard_normal((10, 100)).astype(np.float32)
    buf = np.zeros(4000, np.uint8)
    src = buf.view(np.float16)[:1000].reshape(10, 100)  # fp16 in the first 2000 bytes...
    src[:] = raw.astype(np.float16)
    want = src.astype(np.float32)
    out = buf.view(np.float32).reshape(10, 100)  # ...widened over the same bytes
    fp16.cast_into(out, src)
    assert np.array_equal(out, want)


BINARY_OPS = [np.add, np.subtract, np.multiply, np.divide]


def _half_bits(rng, n: int, specials: float) -> np.ndarray:
    """n fp16 values: normal-ish ones, with a share `specials` of random bit patterns (NaNs with
    payloads, infs, subnormals, huge values that overflow when combined)."""
    x = rng.standard_normal(n).astype(np.float16) * np.float16(rng.choice([1.0, 300.0]))
    pick = rng.random(n) < specials
    x.view(np.uint16)[pick] = rng.integers(0, 1 << 16, int(pick.sum()), dtype=np.uint16)
    return x


def _warnings_of(fn) -> list:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fn()
    return sorted({str(w.message) for w in seen})


@needs_c
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([fp16.SMALL, fp16.CHUNK - 1, fp16.CHUNK * 3 + 17]),
    specials=st.sampled_from([0.0, 1e-4, 0.3]),
    op=st.sampled_from(BINARY_OPS),
    in_place=st.sampled_from([None, "a", "b"]),
)
def test_fp16_arithmetic_through_fp32_gives_numpys_bits_and_warnings(seed, n, specials, op, in_place):
    rng = np.random.default_rng(seed)
    a, b = _half_bits(rng, n, specials), _half_bits(rng, n, specials)
    want = np.empty(n, np.float16)
    want_warn = _warnings_of(lambda: op(a, b, out=want))
    a2, b2 = a.copy(), b.copy()
    out = a2 if in_place == "a" else b2 if in_place == "b" else np.empty(n, np.float16)
    got_warn = _warnings_of(lambda: fp16.Binary(op)(a2, b2, out=out))
    assert np.array_equal(out.view(np.uint16), want.view(np.uint16))
    assert got_warn == want_warn


@needs_c
def test_fp16_arithmetic_leaves_other_arrays_to_numpy(monkeypatch):
    calls = []
    real = fp16._fp16
    monkeypatch.setattr(fp16, "_fp16", None)  # not built: numpy's loop
    a = np.ones(8192, np.float16)
    assert fp16.Binary(np.add)(a, a, out=np.empty(8192, np.float16))[0] == 2
    monkeypatch.setattr(fp16, "_fp16", real)
    for a, b, out in [
        (np.ones(100, np.float16), np.ones(100, np.float16), np.empty(100, np.float16)),  # small
        (np.ones(8192, np.float32), np.ones(8192, np.float32), np.empty(8192, np.float32)),  # fp32
        (np.ones((8192, 2), np.float16), np.ones(2, np.float16), np.empty((8192, 2), np.float16)),  # bcast
    ]:
        calls.append(fp16.Binary._takes(a, b, out))
    x = np.arange(9000, dtype=np.float16)
    calls.append(fp16.Binary._takes(x[1:], x[1:], x[:-1]))  # partly overlapping
    calls.append(fp16.Binary._takes(x[::2], x[::2], x[::2]))  # strided, in place: taken
    assert calls == [False, False, False, False, True]
    shifted = x.copy()
    fp16.Binary(np.add)(shifted[1:], shifted[1:], out=shifted[:-1])
    want = x.copy()
    np.add(want[1:], want[1:], out=want[:-1])
    assert np.array_equal(shifted.view(np.uint16), want.view(np.uint16))


@needs_c
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=st.sampled_from([(7, 16, 512), (3, 5, 9000), (70000,), (2, 40000)]),
    op=st.sampled_from(BINARY_OPS),
    in_place=st.booleans(),
)
def test_fp16_arithmetic_on_strided_batches_gives_numpys_bits(seed, shape, op, in_place):
    """Operands as a block replay batches them: one shape, strided (here: transposed views)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))

    def view(x):  # the same elements in `shape`, laid out with the first two axes swapped
        if len(shape) == 1:
            return x[::-1]
        s = (shape[1], shape[0], *shape[2:])
        return x.reshape(s).swapaxes(0, 1)

    a, b = view(_half_bits(rng, n, 0.01)), view(_half_bits(rng, n, 0.01))
    want = np.empty(shape, np.float16)
    out = a if in_place else view(np.empty(n, np.float16))
    with np.errstate(all="ignore"):  # (warnings: the test above)
        op(a, b, out=want)
        fp16.Binary(op)(a, b, out=out)
    assert np.array_equal(out.view(np.uint16), want.view(np.uint16))
