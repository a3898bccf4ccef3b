"""The cube path computes what numpy computes: matmul (fp16, bf16, int8), conv2d, Matmul API."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch, make_gm
from asc_tui.operator import Case

CHIP = load_chip("ascend910b")
MATMUL = load_operator("matmul")
OFFICIAL = load_operator("matmul_official")


def emulate(op, values: dict, params: dict, seed: int = 0, numeric: bool = True):
    """Run `op` on an ad-hoc case; returns (inputs, outputs, golden, result)."""
    case = Case("h", values)
    p = op.resolve_params(params)
    assert op.constraint_violations(case, p) == []
    specs = op.tensors(case).specs
    rng = np.random.default_rng(seed)
    arrays = {
        k: (s.generate(rng) if not s.is_output else np.zeros(s.shape, s.np_dtype)) for k, s in specs.items()
    }
    gm = [
        make_gm(k, s.np_dtype, s.count, arrays[k].reshape(-1) if numeric else None) for k, s in specs.items()
    ]
    lnch = op.launch(case, p)
    res = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, CHIP, numeric=numeric)
    ins = [arrays[k] for k, s in specs.items() if not s.is_output]
    return arrays, op.module.golden(case, *ins), res


dims = st.one_of(st.sampled_from([16, 32, 48, 64]), st.integers(1, 90))
tiles = st.sampled_from([16, 32, 64])


@given(m=dims, n=dims, k=dims, tm=tiles, tn=tiles, tk=tiles, db=st.sampled_from([1, 2]))
def test_fp16_matmul_matches_numpy_for_any_shape_and_tiling(m, n, k, tm, tn, tk, db):
    arrays, want, _ = emulate(
        MATMUL, dict(m=m, n=n, k=k, dtype="float16"), dict(tile_m=tm, tile_n=tn, tile_k=tk, double_buffer=db)
    )
    np.testing.assert_allclose(
        arrays["c"].astype(np.float32), want.astype(np.float16).astype(np.float32), rtol=2e-3, atol=2e-3
    )


@given(m=dims, n=dims, k=dims, tk=st.sampled_from([32, 64]))
def test_int8_matmul_is_exact_in_int32(m, n, k, tk):
    arrays, want, _ = emulate(
        MATMUL, dict(m=m, n=n, k=k, dtype="int8"), dict(tile_m=32, tile_n=48, tile_k=tk)
    )
    np.testing.assert_array_equal(arrays["c"], want)


def test_bf16_matmul_accumulates_in_fp32():
    arrays, want, _ = emulate(
        MATMUL, dict(m=40, n=72, k=100, dtype="bfloat16"), dict(tile_m=32, tile_n=32, tile_k=32)
    )
    got = arrays["c"].astype(np.float32)
    assert np.allclose(got, want, rtol=1e-2, atol=1e-2)


@given(
    m=dims, n=dims, k=st.integers(1, 200), bias=st.booleans(), step=st.sampled_from([(1, 1), (2, 1), (1, 4)])
)
def test_high_level_matmul_object_matches_numpy_with_tails_and_bias(m, n, k, bias, step):
    arrays, want, _ = emulate(
        OFFICIAL,
        dict(m=m, n=n, k=k, bias=bias),
        dict(base_m=32, base_n=64, base_k=32, step_ka=step[0], step_kb=step[1], block_dim=4),
    )
    np.testing.assert_allclose(
        arrays["c"].astype(np.float32), want.astype(np.float16).astype(np.float32), rtol=2e-3, atol=2e-3
    )


CONV = load_operator("conv2d")


@given(
    h=st.integers(3, 20),
    w=st.integers(3, 20),
    cin=st.sampled_from([16, 32]),
    cout=st.integers(1, 70),
    k=st.sampled_from([1, 3]),
    stride=st.sampled_from([1, 2]),
    pad=st.sampled_from([0, 1]),
    tm=st.sampled_from([16, 32, 112]),
    tn=st.sampled_from([16, 64]),
    merge=st.sampled_from([1, 3]),
)
def test_conv2d_matches_numpy_for_any_shape_and_tiling(h, w, cin, cout, k, stride, pad, tm, tn, merge):
    values = dict(n=1, h=h, w=w, cin=cin, cout=cout, kh=k, kw=k, stride=stride, pad=pad)
    arrays, want, _ = emulate(CONV, values, dict(tile_m=tm, tile_n=tn, kw_merge=merge, block_dim=8))
    np.testing.assert_allclose(
        arrays["y"].astype(np.float32), want.astype(np.float16).astype(np.float32), rtol=4e-3, atol=4e-3
    )


@pytest.mark.parametrize("case", ["default", "stride2", "tails", "k1x1"])
def test_conv2d_img2col_matches_numpy(case):
    report = run(RunRequest("conv2d", case=case))
    assert report.passed, report.errors or report.precision.to_dict()


def test_conv2d_with_merged_kernel_columns_matches_numpy():
    report = run(RunRequest("conv2d", case="stride2", params={"kw_merge": 3, "tile_m": 32, "tile_n": 32}))
    assert report.passed, report.errors or report.precision.to_dict()


def test_bundled_matmul_cases_pass():
    for name in ("tails", "int8_tails"):
        report = run(RunRequest("matmul", case=name))
        assert report.passed, (name, report.errors)


def test_mixed_matmul_leaky_relu_matches_numpy():
    report = run(RunRequest("matmul_leaky", case="small"))
    assert report.passed, report.errors or report.precision.to_dict()
    em = report.emulation
    assert {"cube", "vec"} <= {n for n, s in em.pipe_stats().items() if s.instructions}


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.int8])
def test_table_widening_is_bit_identical_to_astype_for_every_bit_pattern(dtype):
    from asc_tui.ascendc.dtypes import as_dtype
    from asc_tui.npu.numbers.widen import widen_into as _widen_into

    src = np.dtype(as_dtype(dtype) if isinstance(dtype, str) else dtype)
    wide = np.float64 if src == np.int8 else np.float32
    bits = np.arange(1 << (8 * src.itemsize), dtype=f"u{src.itemsize}").view(src)
    out = np.empty(bits.shape, wide)
    _widen_into(out, bits, wide)
    assert out.tobytes() == bits.astype(wide).tobytes()


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
@pytest.mark.parametrize("view", ["rows", "columns", "transposed", "every other"])
def test_table_widening_into_a_strided_view_writes_just_that_view(dtype, view):
    """A grid of a GM buffer into the same grid of its fp32 twin (`mmad_operands.wide_grid`: a
    column slab of B is row-strided): astype's bits there, the rest of the twin untouched."""
    from asc_tui.ascendc.dtypes import as_dtype
    from asc_tui.npu.numbers.widen import widen_into as _widen_into

    src = np.dtype(as_dtype(dtype) if isinstance(dtype, str) else dtype)
    gm = np.random.default_rng(7).integers(0, 1 << 16, (64, 48), dtype=np.uint16).view(src)
    pick = {
        "rows": np.s_[8:24, :],
        "columns": np.s_[:, 16:32],
        "transposed": np.s_[:, 16:32],
        "every other": np.s_[::2, 1::3],
    }[view]
    twin = np.full(gm.shape, -7.0, np.float32)
    out, tile = twin[pick], gm[pick]
    if view == "transposed":
        out, tile = out.T, tile.T
    _widen_into(out, tile, np.float32)
    assert out.tobytes() == tile.astype(np.float32).tobytes()
    rest = np.ones(gm.shape, dtype=bool)
    rest[pick] = False
    assert np.all(twin[rest] == -7.0)


def test_a_widened_operand_is_reused_only_for_bit_identical_fractals():
    from asc_tui.ascendc.mmad_operands import Widened

    cache, calls = Widened(), []

    def widen(raw):
        return lambda: calls.append(1) or raw.astype(np.float32)

    def get(key, raw):
        out = cache.get(key, [raw], raw.size * 4, widen(raw))
        out()  # widened when first used (on the numbers thread), once
        return out

    raw = np.zeros((2, 256), np.float16)
    first = get(("A",), raw)
    assert get(("A",), raw.copy()) is first and len(calls) == 1
    assert first().dtype == np.float32 and not first().flags.writeable
    negzero = raw.copy()
    negzero[1, 200] = -0.0  # equal as a number, different bits: must be widened again
    assert get(("A",), negzero) is not first and len(calls) == 2
    assert get(("B",), raw) is not first and len(calls) == 3


def test_widened_operands_beyond_the_budget_are_dropped_oldest_first():
    from asc_tui.ascendc.mmad_operands import Widened

    cache = Widened(budget=3 * (4096 + 1024))  # three operands and their 512 B raw snapshots
    raws = [np.full((2, 256), i, np.float16) for i in range(5)]
    for r in raws:
        cache.get(("A",), [r], 4096, lambda r=r: r.astype(np.float32))
    kept = [entry[0][0] for entry in cache.entries.values()]
    assert len(kept) == 3 and all((k == raws[i + 2].view(np.uint16)).all() for i, k in enumerate(kept))
    assert cache.bytes == 3 * (4096 + 1024) <= cache.budget
