"""C++ arithmetic, exactly: each rule of the integer and floating-point semantics."""

import numpy as np
from cxxkernel import add_one_kernel, blocks_that_ran, run_kernel, step_by_step_timeline
from cxxsrc import call
from hypothesis import given
from hypothesis import strategies as st

from asc_tui.cxx.runtime import cdiv, cmod, odiv, omod
from asc_tui.npu.replay.blockindex import BlockIndex
from asc_tui.npu.replay.replay import Guards


def test_signed_division_truncates_toward_zero(tmp_path):
    assert call(tmp_path, "int32_t f(int32_t a, int32_t b) { return a / b; }", "f", -7, 2) == -3


def test_signed_remainder_takes_the_sign_of_the_dividend(tmp_path):
    assert call(tmp_path, "int32_t f(int32_t a, int32_t b) { return a % b; }", "f", -7, 2) == -1


def test_uint32_arithmetic_wraps(tmp_path):
    assert call(tmp_path, "uint32_t f(uint32_t a) { return a - 1; }", "f", 0) == 0xFFFFFFFF


def test_uint64_arithmetic_wraps(tmp_path):
    src = "uint64_t f() { uint64_t a = 0; a--; uint64_t b = 0xFFFFFFFFFFFFFFFFull; return a + b * 2; }"
    assert call(tmp_path, src) == (2**64 - 1 + 2**64 - 2) % 2**64


def test_narrow_types_promote_to_int(tmp_path):
    assert call(tmp_path, "int32_t f() { uint8_t a = 200; uint8_t b = 100; return a + b; }") == 300


def test_assignment_to_a_narrow_type_wraps(tmp_path):
    assert call(tmp_path, "uint8_t f() { uint8_t a = 200; a += 100; return a; }") == 44


def test_mixed_signed_unsigned_compare_converts_to_unsigned(tmp_path):
    assert call(tmp_path, "bool f() { int32_t a = -1; uint32_t b = 1; return a < b; }") is False


def test_unsigned_division_by_negative_converts_the_divisor(tmp_path):
    assert call(tmp_path, "uint32_t f() { uint32_t a = 7; int32_t b = -2; return a / b; }") == 0


def test_float_literal_with_f_suffix_is_fp32(tmp_path):
    assert call(tmp_path, "double f() { float x = 0.1f; double d = x; return d; }") == 0.10000000149011612


def test_float_locals_round_to_fp32_on_assignment(tmp_path):
    assert call(tmp_path, "float f() { float x = 16777216.0f; x = x + 1.0f; return x; }") == 16777216.0


def test_int_to_float_conversion_rounds(tmp_path):
    assert call(tmp_path, "float f() { int32_t i = 16777217; float g = i; return g; }") == 16777216.0


def test_float_to_int_conversion_truncates(tmp_path):
    assert call(tmp_path, "int32_t f() { float g = -2.7f; return (int32_t)g; }") == -2


def test_double_arithmetic_stays_double(tmp_path):
    assert call(tmp_path, "double f() { double a = 1.0; return a / 3; }") == 1.0 / 3


def test_compound_assignments_follow_cpp(tmp_path):
    src = (
        "int32_t f() { int32_t a = 7; a *= 3; a -= 1; a /= -3; a %= 4; a <<= 2; a |= 1; a &= 0xF; a ^= 3;"
        " return a; }"
    )
    assert call(tmp_path, src) == 10


def test_bit_operations_on_unsigned(tmp_path):
    a = 0x80000001
    want = ((a << 4 | a >> 28) & 0xFFFFFFFF) ^ (~a & 0xFF)
    assert call(tmp_path, "uint32_t f(uint32_t a) { return (a << 4 | a >> 28) ^ ~a & 0xFF; }", "f", a) == want


def test_right_shift_of_negative_is_arithmetic(tmp_path):
    assert call(tmp_path, "int32_t f() { int32_t a = -8; return a >> 1; }") == -4


def test_increments_inside_expressions(tmp_path):
    assert (
        call(
            tmp_path,
            "int32_t f() { int32_t i = 0; int32_t a = i++; int32_t b = ++i; return a * 10 + b + i; }",
        )
        == 4
    )


def test_constants_fold_with_cpp_semantics(tmp_path):
    src = "constexpr int32_t A = -7; constexpr uint32_t B = 0u - 1; uint32_t f() { return A / 2 + B; }"
    assert call(tmp_path, src) == (-3 + 0xFFFFFFFF) & 0xFFFFFFFF


def test_integer_division_is_emitted_without_helpers_for_unsigned(tmp_path):
    from asc_tui.cxx.translate import translate

    p = tmp_path / "k.asc"
    p.write_text("uint32_t f(uint32_t a, uint32_t b) { return a / b + a % b; }")
    prog = translate(p, kernel="f")
    import dis

    code = prog.load()[prog.entry].__code__
    names = {i.argval for i in dis.get_instructions(code)}
    assert "cdiv" not in names and "cmod" not in names


def test_wrap_is_kept_where_it_can_happen_and_dropped_where_it_cannot(tmp_path):
    src = "uint64_t f() { uint32_t a = 0xFFFFFFFFu; uint64_t b = a * 2u; uint64_t c = (uint64_t)a * 2; return b + c; }"
    assert call(tmp_path, src) == 0xFFFFFFFE + 0x1FFFFFFFE
    from asc_tui.cxx.translate import translate

    p = tmp_path / "w.asc"
    p.write_text("uint64_t f(uint32_t n) { return n * sizeof(float) + (uint64_t)n * n; }")
    prog = translate(p, kernel="f")
    assert prog.load()[prog.entry](0xFFFFFFFF) == (0xFFFFFFFF * 4 + 0xFFFFFFFF**2) % 2**64


@given(a=st.integers(-(2**40), 2**40), b=st.integers(-(2**20), 2**20).filter(bool))
def test_signed_division_and_remainder_follow_cpp_for_every_sign(a, b):
    q = abs(a) // abs(b)  # C++: the quotient truncates toward zero, the remainder follows a
    q = q if (a < 0) == (b < 0) else -q
    assert (cdiv(a, b), cmod(a, b)) == (q, a - q * b)


def test_dividing_a_block_index_keeps_the_template_replayable():
    # `GetBlockIdx() / n` and `% n` in a C++ template run: guards, not a pin (npu/replay/replay.py)
    g = Guards(3, 24)
    idx = BlockIndex(3, 1, g)
    row, col = cdiv(idx, 8), cmod(idx, 8)
    assert not g.pinned and g.admits(23)
    assert list(row.values()) == [b // 8 for b in range(24)]
    assert list(col.values()) == [b % 8 for b in range(24)]
    assert cdiv(-idx, 8).v == -(3 // 8) and cmod(-idx - 8, 8) == -3 and not g.pinned


def test_a_cpp_kernel_tiled_by_block_index_div_and_mod_replays_its_blocks(tmp_path, monkeypatch):
    # each block copies the tile (row, col) = (idx / 4, idx % 4): one template run, 7 replays
    # (timing-only: a full run traces vector numbers only at starts affine in the block index)
    setup = """
        int64_t row = AscendC::GetBlockIdx() / 4;
        int64_t col = AscendC::GetBlockIdx() % 4;
        xg.SetGlobalBuffer((__gm__ half*)x + (row * 4 + col) * TILE, TILE);
        zg.SetGlobalBuffer((__gm__ half*)z + (col * 2 + row) * TILE, TILE);
    """
    src = add_one_kernel("constexpr int32_t TILE = 256;", setup, "TILE", "TILE")
    x = np.arange(8 * 256).astype(np.float16)
    z, _ = run_kernel(tmp_path, src, x, np.float16, 8 * 256, blocks=8)
    assert np.array_equal(z, (x.reshape(2, 4, 256) + 1).transpose(1, 0, 2).reshape(-1))
    ran = blocks_that_ran(monkeypatch)
    _, fast = run_kernel(tmp_path, src, x, np.float16, 8 * 256, blocks=8, numeric=False)
    assert ran == [0]  # (abs() pinned the template: every block ran its Python)
    slow = step_by_step_timeline(tmp_path, src, x, 8, numeric=False)
    assert len(ran) == 9
    assert fast.launches[0].result.timeline_key() == slow


def test_division_of_unknown_static_type_is_integer_division_for_every_integer():
    # numpy ints (a GetValue of an int tensor) and a template's block index divide as C++ ints
    assert odiv(np.int32(-7), 2) == -3 and omod(np.int32(-7), 2) == -1
    assert odiv(7, np.int64(2)) == 3 and odiv(7.0, 2) == 3.5 and omod(7.5, 2) == 1.5
    g = Guards(5, 24)
    idx = BlockIndex(5, 1, g)
    assert odiv(idx, 4).v == 1 and omod(idx, 4).v == 1 and not g.pinned
