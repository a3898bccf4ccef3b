"""Type traits evaluated at translation for each template instantiation."""

import pytest
from cxxsrc import call

SRC = """
template <typename T>
int32_t g() {
    if constexpr (TRAIT) {
        return 1;
    } else {
        return 2;
    }
}
int32_t f() { return g<float>() * 10 + g<half>(); }
"""


@pytest.mark.parametrize(
    "trait",
    [
        "AscendC::IsSameType<T, float>::value",
        "IsSameType<T, float>::value",
        "std::is_same<T, float>::value",
        "std::is_same_v<T, float>",
        "std::is_same<float, T>::value && true",
    ],
)
def test_same_type_traits_choose_the_constexpr_branch(tmp_path, trait):
    assert call(tmp_path, "using namespace AscendC;\n" + SRC.replace("TRAIT", trait)) == 12


def test_traits_as_values_and_in_a_plain_if(tmp_path):
    src = """
    template <typename T> bool g() { bool same = std::is_same<T, uint32_t>::value; return same; }
    int32_t f() { if (std::is_same_v<int32_t, int>) { return g<uint32_t>() + 2 * g<int32_t>(); } return -1; }
    """
    assert call(tmp_path, src) == 1


@pytest.mark.parametrize(
    "trait",
    [
        "typename AscendC::Conditional<F, float, half>::type",
        "typename std::conditional<F, float, half>::type",
        "std::conditional_t<F, float, half>",
    ],
)
def test_conditional_picks_a_type_per_instantiation(tmp_path, trait):
    src = f"""
    template <bool F> int32_t g() {{ using T = {trait}; T x = 1; return sizeof(T) * 10 + sizeof(x); }}
    constexpr bool WIDE = 2 > 1;
    int32_t f() {{ return g<WIDE>() * 100 + g<false>(); }}
    """
    assert call(tmp_path, src) == 44 * 100 + 22
