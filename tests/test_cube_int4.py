"""int4b_t: packing, Cast to and from it, and int4 matrices through the cube path, each
checked against an independent numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
from apikit import run, sanitized
from cubekit import gm, sync, up

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    HardEvent,
    Hardware,
    LoadData2DParams,
    LoadData2dTransposeParams,
    LocalMemAllocator,
    MmadParams,
    Nd2NzParams,
    RoundMode,
    UnaryRepeatParams,
    int4b_t,
)
from asc_tui.ascendc.int4 import pack, unpack


def _packed(vals: np.ndarray) -> np.ndarray:
    """Reference packing: element 2i in the low nibble of byte i."""
    v = vals.astype(np.int64) & 0xF
    return (v[0::2] | (v[1::2] << 4)).astype(np.uint8)


def test_pack_and_unpack_are_low_nibble_first_and_sign_extend():
    vals = np.array([-8, 7, -1, 0, 3, -4], np.int8)
    assert pack(vals).tolist() == [0x78, 0x0F, 0xC3]
    np.testing.assert_array_equal(unpack(pack(vals)), vals)


def test_level0_cast_to_int4_rounds_saturates_and_follows_the_strides():
    rng = np.random.default_rng(4)
    x = rng.uniform(-12, 12, 256).astype(np.float16)
    out = np.full(256, 0x55, np.uint8)  # 512 int4 slots; odd repeats land one block apart

    def body(gx, gy):
        ub = LocalMemAllocator(Hardware.UB)
        t = ub.Alloc(AscendC.half, 256)
        y8 = ub.Alloc(AscendC.int8, 256)
        AscendC.DataCopy(t, gm(gx, AscendC.half), 256)
        AscendC.DataCopy(y8, gm(gy, AscendC.int8), 256)
        sync(HardEvent.MTE2_V)
        y4 = y8.ReinterpretCast(int4b_t)
        AscendC.Cast(y4, t, RoundMode.CAST_FLOOR, 128, 2, UnaryRepeatParams(1, 1, 4, 8))
        sync(HardEvent.V_MTE3)
        AscendC.DataCopy(gm(gy, AscendC.int8), y8, 256)

    run(body, x, out.view(np.int8))
    vals = np.clip(np.floor(x.astype(np.float64)), -8, 7).astype(np.int8)
    want = np.full(256, 0x55, np.uint8)
    want[0:64] = _packed(vals[:128])  # repeat 0: 128 elements = 64 bytes from block 0
    want[128:192] = _packed(vals[128:])  # repeat 1: dstRepStride 4 blocks = 128 bytes on
    np.testing.assert_array_equal(out, want)


def test_count_cast_from_int4_to_half_reads_signed_nibbles():
    vals = np.arange(-8, 8, dtype=np.int8).repeat(4)  # 64 values
    out = np.zeros(64, np.float16)

    def body(gx, gy):
        ub = LocalMemAllocator(Hardware.UB)
        x8, y = ub.Alloc(AscendC.int8, 32), ub.Alloc(AscendC.half, 64)
        AscendC.DataCopy(x8, gm(gx, AscendC.int8), 32)
        sync(HardEvent.MTE2_V)
        AscendC.Cast(y, x8.ReinterpretCast(int4b_t), RoundMode.CAST_NONE, 64)
        sync(HardEvent.V_MTE3)
        AscendC.DataCopy(gm(gy, AscendC.half), y, 64)

    run(body, _packed(vals).view(np.int8), out)
    np.testing.assert_array_equal(out, vals.astype(np.float16))


def test_an_odd_int4_offset_is_refused():
    def body(gx):
        t = LocalMemAllocator(Hardware.UB).Alloc(AscendC.int8, 32).ReinterpretCast(int4b_t)
        t[3]  # inside a byte

    with pytest.raises(Exception, match="odd"):
        run(body, np.zeros(32, np.int8))


def _int4_matmul(m: int, k: int, n: int, b_transposed_load: bool):
    rng = np.random.default_rng(m + k + n)
    a = rng.integers(-8, 8, (m, k)).astype(np.int8)
    bt = rng.integers(-8, 8, (n, k)).astype(np.int8)  # B given as N x K
    b_kn = np.ascontiguousarray(bt.T)
    out = np.zeros(m * n, np.int32)
    mp, kp = up(m, 16), up(k, 64)

    def body(ga, gb, gc):
        l1 = LocalMemAllocator(Hardware.L1)
        ta = l1.Alloc(int4b_t, mp * kp)
        AscendC.DataCopy(ta, gm(ga, int4b_t), Nd2NzParams(1, m, k // 2, 0, k // 2, mp, 1, 0))
        if b_transposed_load:  # B as K x N: 64 x 64 squares transposed into L0B
            tb = l1.Alloc(int4b_t, kp * up(n, 64))
            AscendC.DataCopy(tb, gm(gb, int4b_t), Nd2NzParams(1, k, n // 2, 0, n // 2, kp, 1, 0))
        else:  # B as N x K: NZ of Bᵀ is already the ZN fractal order
            tb = l1.Alloc(int4b_t, up(n, 16) * kp)
            AscendC.DataCopy(tb, gm(gb, int4b_t), Nd2NzParams(1, n, k // 2, 0, k // 2, up(n, 16), 1, 0))
        sync(HardEvent.MTE2_MTE1)
        a2 = LocalMemAllocator(Hardware.L0A).Alloc(int4b_t, mp * kp)
        for i in range(mp // 16):
            AscendC.LoadData(
                a2[i * kp * 16], ta[i * 1024], LoadData2DParams(0, kp // 64, mp // 16, 0, 0, False)
            )
        b2 = LocalMemAllocator(Hardware.L0B).Alloc(int4b_t, kp * up(n, 64))
        if b_transposed_load:
            for i in range(kp // 64):
                p = LoadData2dTransposeParams(0, up(n, 64) // 64, kp // 64, 3, 0)
                AscendC.LoadDataWithTranspose(b2[i * up(n, 64) * 64], tb[i * 4096], p)
        else:
            for i in range(kp // 64):
                AscendC.LoadData(
                    b2[i * up(n, 16) * 64],
                    tb[i * up(n, 16) * 64],
                    LoadData2DParams(0, up(n, 16) // 16, 1, 0, 0, False),
                )
        sync(HardEvent.MTE1_M)
        c = LocalMemAllocator(Hardware.L0C).Alloc(AscendC.int32, mp * up(n, 64))
        AscendC.Mmad(c, a2, b2, MmadParams(m, n, k))
        sync(HardEvent.M_FIX)
        AscendC.Fixpipe(gm(gc, AscendC.int32), c, AscendC.FixpipeParamsV220(n, m, mp, n))

    src_b = b_kn if b_transposed_load else bt
    run(body, _packed(a.ravel()).view(np.int8), _packed(src_b.ravel()).view(np.int8), out, core_type="aic")
    return out.reshape(m, n), a.astype(np.int32) @ b_kn.astype(np.int32)


def test_int4_mmad_with_2d_loads_is_exact():
    got, want = _int4_matmul(32, 128, 48, b_transposed_load=False)
    np.testing.assert_array_equal(got, want)


def test_int4_b_through_load_with_transpose_is_exact():
    got, want = _int4_matmul(16, 64, 64, b_transposed_load=True)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("elements", "flagged"), [(128, False), (64, True)])
def test_the_sanitizer_sees_the_bytes_a_cast_to_int4_writes(elements, flagged):
    x = np.ones(128, np.float16)

    def body(gx, gy):
        ub = LocalMemAllocator(Hardware.UB)
        t, y8 = ub.Alloc(AscendC.half, 128), ub.Alloc(AscendC.int8, 64)
        AscendC.DataCopy(t, gm(gx, AscendC.half), 128)
        sync(HardEvent.MTE2_V)
        AscendC.Cast(y8.ReinterpretCast(int4b_t), t, RoundMode.CAST_RINT, elements)
        sync(HardEvent.V_MTE3)
        AscendC.DataCopy(gm(gy, AscendC.int8), y8, 64)  # 64 B = 128 int4: all written, or half

    san, err = sanitized(body, x, np.zeros(64, np.int8))
    unin = [f for f in san.findings() if f.kind == "uninitialized"]
    assert err is None and bool(unin) == flagged
