"""The translated C++ subset, one language rule per test (scalar code runs without the NPU)."""

from cxxsrc import call, program, write

from asc_tui.cxx.translate import translate
from asc_tui.npu.errors import location_from_traceback


def test_ascend_qualifiers_and_address_spaces_are_accepted(tmp_path):
    src = "__aicore__ inline int32_t f(__gm__ uint8_t* x, __ubuf__ half* u, __cbuf__ float* c) { return 1; }"
    assert call(tmp_path, src, "f", None, None, None) == 1


def test_kernel_qualifiers_choose_the_core_type(tmp_path):
    base = "{} void k(GM_ADDR x) {{ }}"
    kinds = {
        'extern "C" __global__ __aicore__': "aiv",
        "__global__ __vector__": "aiv",
        "__global__ __cube__": "aic",
        "__global__ __mix__(1, 2)": "mix",
    }
    for i, (quals, core) in enumerate(kinds.items()):
        d = tmp_path / str(i)
        d.mkdir()
        assert program(d, base.format(quals)).core_type == core


def test_the_only_global_function_is_the_entry(tmp_path):
    src = "__aicore__ inline void helper() {}\n__global__ __aicore__ void k(GM_ADDR x) { helper(); }\n"
    assert program(tmp_path, src).kernel == "k"


def test_classes_with_constructors_init_lists_methods_and_default_members(tmp_path):
    src = """
    class Acc {
    public:
        __aicore__ inline Acc(int32_t s) : sum(s), k{2} {}
        __aicore__ inline void add(int32_t v) { sum += v * k; }
        __aicore__ inline int32_t get() const { return sum + extra; }
    private:
        int32_t sum;
        int32_t k;
        int32_t extra = 100;
    };
    int32_t f() { Acc a(1); a.add(3); Acc *p = &a; p->add(1); Acc &r = a; r.add(1); return a.get(); }
    """
    assert call(tmp_path, src) == 111


def test_struct_assignment_copies(tmp_path):
    src = "struct P { int32_t a; int32_t b; }; int32_t f() { P p = {1, 2}; P q = p; q.a = 5; return p.a * 10 + q.a; }"
    assert call(tmp_path, src) == 15


def test_single_inheritance(tmp_path):
    src = """
    struct B { int32_t x = 1; int32_t g() { return x * 2; } };
    struct D : public B { int32_t h() { return g() + x; } };
    int32_t f() { D d; return d.h(); }
    """
    assert call(tmp_path, src) == 3


def test_static_constexpr_members(tmp_path):
    src = "struct S { static constexpr int32_t K = 7; int32_t g() { return K; } }; int32_t f() { S s; return s.g() + S::K; }"
    assert call(tmp_path, src) == 14


def test_function_templates_explicit_and_deduced(tmp_path):
    src = "template <typename T> T twice(T v) { return v + v; }\nint32_t f() { return twice<int32_t>(4) + (int32_t)twice(1.5f); }"
    assert call(tmp_path, src) == 11


def test_template_value_parameters_and_defaults(tmp_path):
    src = "template <int32_t N, typename T = uint8_t> T rep() { T x = N; return x; }\nint32_t f() { return rep<300>() + rep<300, int32_t>(); }"
    assert call(tmp_path, src) == 44 + 300


def test_class_templates(tmp_path):
    src = """
    template <typename T, int32_t N> struct Box {
        T v[N];
        T sum() { T s = 0; for (int32_t i = 0; i < N; i++) s += v[i]; return s; }
    };
    int32_t f() { Box<uint8_t, 3> b; b.v[0] = 200; b.v[1] = 100; b.v[2] = 1; return b.sum(); }
    """
    assert call(tmp_path, src) == 45


def test_constexpr_and_const_globals(tmp_path):
    src = "constexpr int32_t A = 3; const uint32_t B = A * 2; int32_t f() { return A + B; }"
    assert call(tmp_path, src) == 9


def test_enums_unscoped_and_scoped(tmp_path):
    src = "enum Color { RED, GREEN = 5, BLUE }; enum class Mode : uint8_t { A = 1, B };\nint32_t f() { return BLUE * 10 + (int32_t)Mode::B; }"
    assert call(tmp_path, src) == 62


def test_object_and_function_like_macros(tmp_path):
    src = "#define N 4\n#define SQ(x) ((x) * (x))\nint32_t f() { return SQ(N + 1); }"
    assert call(tmp_path, src) == 25


def test_ifdef_else(tmp_path):
    src = "#define USE_A\n#ifdef USE_A\nint32_t f() { return 1; }\n#else\nint32_t f() { return 2; }\n#endif\n"
    assert call(tmp_path, src) == 1


def test_if_elif_with_defined_and_arithmetic(tmp_path):
    src = "#define V 3\n#if V == 1\nint32_t f() { return 1; }\n#elif V > 2 && defined(V)\nint32_t f() { return 3; }\n#else\nint32_t f() { return 2; }\n#endif\n"
    assert call(tmp_path, src) == 3


def test_ascendc_cpu_debug_is_undefined(tmp_path):
    src = "#ifdef ASCENDC_CPU_DEBUG\nint32_t f() { return 1; }\n#else\nint32_t f() { return 0; }\n#endif\n"
    assert call(tmp_path, src) == 0


def test_local_includes_recursive_with_guards_and_pragma_once(tmp_path):
    headers = {
        "a__h": '#pragma once\n#include "b.h"\nconstexpr int32_t A = B + 1;\n',
        "b__h": "#ifndef B_H\n#define B_H\nconstexpr int32_t B = 10;\n#endif\n",
    }
    src = '#include "a.h"\n#include "b.h"\n#include "a.h"\n#include <cstdint>\n#include "kernel_operator.h"\nint32_t f() { return A + B; }\n'
    assert call(tmp_path, src, "f", **headers) == 21


def test_header_functions_report_their_own_file_and_line(tmp_path):
    headers = {"h__h": "#pragma once\n\n__aicore__ inline int32_t boom(int32_t a) {\n    return 10 / a;\n}\n"}
    prog = translate(
        write(tmp_path, '#include "h.h"\nint32_t f() { return boom(0); }\n', **headers), kernel="f"
    )
    try:
        prog.load()[prog.entry]()
    except ZeroDivisionError as exc:
        file, line = location_from_traceback(exc.__traceback__)
        assert file.endswith("h.h") and line == 4
    else:
        raise AssertionError("expected a division by zero")


def test_namespaces_and_using_namespace(tmp_path):
    src = "namespace a { namespace b { constexpr int32_t K = 3; int32_t g() { return K; } } }\nusing namespace a;\nint32_t f() { return b::g() + a::b::K; }"
    assert call(tmp_path, src) == 6


def test_using_aliases_and_typedefs(tmp_path):
    assert call(tmp_path, "using T = uint8_t; typedef int32_t I; I f() { T x = 255; x++; return x; }") == 0


def test_ascendc_qualified_names_map_to_the_twin(tmp_path):
    src = (
        '#include "kernel_operator.h"\n'
        "int32_t f() { AscendC::TPosition p = AscendC::TPosition::VECIN; return p == AscendC::TPosition::VECIN; }"
    )
    assert call(tmp_path, src) is True


def test_for_while_do_loops(tmp_path):
    assert (
        call(
            tmp_path,
            "int32_t f(int32_t n) { int32_t s = 0; while (n > 0) { s += n; n--; } return s; }",
            "f",
            4,
        )
        == 10
    )
    src = "int32_t f(int32_t n) { int32_t s = 0; do { s += n; n -= 1; if (n == 2) continue; } while (n > 0); return s; }"
    assert call(tmp_path, src, "f", 4) == 10


def test_for_loop_whose_bound_changes_in_the_body(tmp_path):
    src = "int32_t f(int32_t n) { int32_t s = 0; for (int32_t i = 0; i < n; i++) { if (i == 1) { n = 3; } s += i; } return s; }"
    assert call(tmp_path, src, "f", 10) == 3


def test_continue_runs_the_for_update(tmp_path):
    src = "int32_t f(int32_t n) { int32_t s = 0; for (int32_t i = 0; i < n; ++i) { if (i % 2) continue; s += i; } return s; }"
    assert call(tmp_path, src, "f", 6) == 6


def test_break_out_of_an_endless_for(tmp_path):
    assert call(tmp_path, "int32_t f() { int32_t i = 0; for (;;) { if (++i > 5) break; } return i; }") == 6


def test_switch_with_fallthrough_break_and_default(tmp_path):
    src = "int32_t f(int32_t x) { int32_t r = 0; switch (x) { case 1: r = 10; case 2: r += 2; break; case 3: { r = 30; break; } default: r = -1; } return r; }"
    assert [call(tmp_path, src, "f", x) for x in (1, 2, 3, 9)] == [12, 2, 30, -1]


def test_ternary_and_if_else(tmp_path):
    src = "int32_t f(int32_t a) { if (a > 10) { return 1; } else if (a > 5) return 2; else { return a > 0 ? a : -a; } }"
    assert [call(tmp_path, src, "f", a) for a in (11, 6, -3)] == [1, 2, 3]


def test_sizeof_types_and_struct_layout(tmp_path):
    src = "uint64_t f() { return sizeof(half) + sizeof(float) * 10 + sizeof(int8_t) * 100 + sizeof(bfloat16_t) * 1000; }"
    assert call(tmp_path, src) == 2142
    src = "struct S { uint8_t a; uint32_t b; uint16_t c; }; uint64_t f() { return sizeof(S); }"
    assert call(tmp_path, src) == 12


def test_casts_c_style_static_and_reinterpret(tmp_path):
    assert (
        call(
            tmp_path,
            "int32_t f() { return static_cast<int32_t>(3.9) + static_cast<uint8_t>(257) + (int8_t)255; }",
        )
        == 3
    )
    src = "__gm__ float* f(GM_ADDR x) { return reinterpret_cast<__gm__ float*>(x); }"
    assert call(tmp_path, src, "f", "addr") == "addr"


def test_auto_takes_the_initializer_type(tmp_path):
    assert call(tmp_path, "int32_t f() { auto x = 7u; auto y = x - 8; return y > 0 ? 1 : 0; }") == 1


def test_std_min_max(tmp_path):
    assert call(tmp_path, "int32_t f() { return std::min(3, 4) + max(1u, 2u); }") == 5


def test_char_literals(tmp_path):
    assert call(tmp_path, "int32_t f() { return 'a'; }") == 97


def test_statements_keep_their_cpp_line_numbers(tmp_path):
    src = "int32_t f(int32_t a)\n{\n    int32_t b = a * 2;\n\n    return 10 / (b - 4);\n}\n"
    prog = translate(write(tmp_path, src), kernel="f")
    try:
        prog.load()[prog.entry](2)
    except ZeroDivisionError as exc:
        file, line = location_from_traceback(exc.__traceback__)
        assert file.endswith("k.asc") and line == 5
    else:
        raise AssertionError("expected a division by zero")


def test_arrays_sized_by_their_initializer(tmp_path):
    assert call(tmp_path, "int32_t f() { uint32_t a[] = {3, 4, 5}; return a[0] + a[2] + sizeof(a); }") == 20


def test_defaulted_constructors(tmp_path):
    assert call(tmp_path, "struct S { S() = default; int32_t v = 4; }; int32_t f() { S s; return s.v; }") == 4


def test_class_template_specialisations(tmp_path):
    src = """
    template <typename T, int32_t N> struct K { int32_t g() { return N; } };
    template <typename T> struct K<T, 0> { int32_t g() { return sizeof(T) * 100; } };
    template <> struct K<float, 1> { int32_t g() { return -1; } };
    int32_t f() { K<half, 7> a; K<half, 0> b; K<float, 1> c; return a.g() + b.g() + c.g(); }
    """
    assert call(tmp_path, src) == 7 + 200 - 1


def test_out_of_class_member_definitions_of_class_templates(tmp_path):
    src = """
    template <typename T> class Acc { public: T get(); static constexpr int32_t W = sizeof(T); T v = 2; };
    template <typename U> U Acc<U>::get() { return v * W; }
    int32_t f() { Acc<int16_t> a; return a.get(); }
    """
    assert call(tmp_path, src) == 4


def test_functional_cast_with_a_template_type_parameter(tmp_path):
    src = "template <typename T> T one() { return T(1.5); }\nint32_t f() { return one<int32_t>() + (int32_t)(one<float>() * 2); }"
    assert call(tmp_path, src) == 4


def test_spec_defines_stand_for_build_flags(tmp_path):
    from cxxsrc import write

    p = write(
        tmp_path, "#if MODE == 2\nint32_t f() { return 2; }\n#else\nint32_t f() { return 1; }\n#endif\n"
    )
    prog = translate(p, kernel="f", defines={"MODE": "2"})
    assert prog.load()[prog.entry]() == 2


def test_default_arguments(tmp_path):
    assert (
        call(
            tmp_path,
            "int32_t g(int32_t a, int32_t b = 5) { return a * b; }\nint32_t f() { return g(2) + g(2, 1); }",
        )
        == 12
    )


def test_structs_passed_by_value_are_copies_and_const_refs_are_read(tmp_path):
    src = """
    struct P { int32_t a; };
    void byval(P p) { p.a = 9; }
    void byref(P &p, const int32_t &v) { p.a = v; }
    int32_t f() { P p = {1}; byval(p); int32_t x = p.a; byref(p, 7); return x * 10 + p.a; }
    """
    assert call(tmp_path, src) == 17


def test_one_line_blocks_keep_the_following_lines_in_place(tmp_path):
    src = (
        "int32_t f(int32_t a)\n{\n    if (a > 5) return 1; else a += 1;\n    for (int32_t i = 0; i < 2; i++) { a += i; }\n"
        "    while (a > 100) { a--; a--; }\n    int32_t b = a - 3;\n    return 10 / b;\n}\n"
    )
    prog = translate(write(tmp_path, src), kernel="f")
    try:
        prog.load()[prog.entry](1)
    except ZeroDivisionError as exc:
        file, line = location_from_traceback(exc.__traceback__)
        assert line == 7
    else:
        raise AssertionError("expected a division by zero")
    assert prog.load()[prog.entry](9) == 1


def test_static_members_of_a_type_template_parameter(tmp_path):
    src = """
    struct Small { static constexpr int32_t K = 16; };
    template <typename Trait> int32_t tiles(int32_t n) { return n / Trait::K; }
    int32_t f() { return tiles<Small>(64); }
    """
    assert call(tmp_path, src) == 4


def test_scalar_reference_parameters_write_back(tmp_path):
    src = """
    void split(uint32_t n, uint32_t &head, uint32_t &tail) { head = n / 2; tail = n - head; }
    struct S { uint32_t a = 0; uint32_t b = 0; void fill() { split(7, a, b); } };
    int32_t f() { uint32_t h = 0, t = 0; split(9, h, t); S s; s.fill(); return h * 1000 + t * 100 + s.a * 10 + s.b; }
    """
    assert call(tmp_path, src) == 4000 + 500 + 30 + 4


def test_a_reference_writing_call_inside_an_expression_is_refused(tmp_path):
    import pytest

    from asc_tui.cxx.errors import Unsupported

    src = "int32_t g(int32_t &x) { x = 1; return 2; }\nint32_t f() { int32_t a = 0; return g(a) + a; }"
    with pytest.raises(Unsupported, match="inside an expression"):
        call(tmp_path, src)


def test_mutable_globals_and_static_members(tmp_path):
    src = """
    int32_t counter = 5;
    struct S { static int32_t n; void bump() { n += 2; counter++; } };
    int32_t S::n = 1;
    int32_t f() { S s; s.bump(); s.bump(); return counter * 10 + S::n; }
    """
    assert call(tmp_path, src) == 75


def test_operator_overloading_is_refused(tmp_path):
    import pytest

    from asc_tui.cxx.errors import Unsupported

    src = "struct V { int32_t x; };\nint32_t f() { V a = {1}; V b = {2}; V c = a + b; return c.x; }"
    with pytest.raises(Unsupported, match="operator overloading"):
        call(tmp_path, src)


def test_constexpr_functions_fold_into_template_arguments(tmp_path):
    src = """
    __aicore__ inline constexpr uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
    template <uint32_t N> struct Tiles { uint32_t count() { return N; } };
    constexpr uint32_t TILES = CeilDiv(100, 32);
    int32_t f() { Tiles<CeilDiv(65, 32)> t; uint32_t a[CeilDiv(9, 4)] = {}; return t.count() * 10 + TILES + sizeof(a); }
    """
    assert call(tmp_path, src) == 30 + 4 + 12


def test_dependent_member_types_and_template_disambiguators(tmp_path):
    src = """
    template <typename U, int32_t E> struct Shape { using T = U; static constexpr int32_t extent = E; int32_t g() { return E; } };
    template <typename X> int32_t size() { using T_TYPE = typename X::T; X x; return sizeof(T_TYPE) * X::extent + x.template g(); }
    int32_t f() { return size<Shape<half, 8>>(); }
    """
    assert call(tmp_path, src) == 24


def test_each_declarator_of_a_member_declaration_keeps_its_own_initialiser(tmp_path):
    src = """
    class S {
    public:
        int32_t get() { return a * 10000 + b * 100 + c; }
    private:
        uint16_t a = 7, b, c = 40 / 2;
    };
    int32_t f() { S s; return s.get(); }
    """
    assert call(tmp_path, src) == 70020


def test_reading_a_floats_bits_through_reinterpret_cast(tmp_path):
    src = "int64_t f() { float s = 2.0f; return static_cast<uint64_t>(*reinterpret_cast<int32_t*>(&s)); }"
    assert call(tmp_path, src) == 0x40000000
