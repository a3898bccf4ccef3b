"""Errors name file:line:col with the line and a caret, as the project's BuildError."""

import pytest
from cxxsrc import program, write

from asc_tui.cxx.errors import CxxError, Unsupported
from asc_tui.cxx.translate import translate
from asc_tui.npu.errors import BuildError


def _err(tmp_path, src, fn="f", **headers) -> CxxError:
    with pytest.raises(CxxError) as info:
        translate(write(tmp_path, src, **headers), kernel=fn)
    return info.value


def test_syntax_error_names_line_and_column(tmp_path):
    e = _err(tmp_path, "int32_t f()\n{\n    int32_t a = ;\n    return a;\n}\n")
    assert isinstance(e, BuildError)
    assert (e.line, e.column) == (3, 15)
    assert "k.asc:3:15" in e.message
    assert e.caret() == "    int32_t a = ;\n              ^"


def test_unknown_identifier(tmp_path):
    e = _err(tmp_path, "int32_t f()\n{\n    return 1 + missing_name;\n}\n")
    assert "unknown identifier 'missing_name'" in e.message
    assert (e.line, e.column) == (3, 16)
    assert e.caret().splitlines()[1] == " " * 15 + "^"


def test_missing_include(tmp_path):
    e = _err(tmp_path, '#include "kernel_operator.h"\n  #include "nothere.h"\nint32_t f() { return 0; }\n')
    assert 'missing include "nothere.h"' in e.message
    assert (e.line, e.column) == (2, 3)


def test_unsupported_construct_lambda_capture(tmp_path):
    src = "int32_t f(int32_t n)\n{\n    auto g = [n](int32_t a) { return a + n; };\n    return g(1);\n}\n"
    e = _err(tmp_path, src)
    assert isinstance(e, Unsupported)
    assert e.message == "not supported yet: lambda capture at k.asc:3:14"
    assert e.caret().splitlines()[1] == " " * 13 + "^"


def test_uninstantiable_template(tmp_path):
    src = "template <typename T> T zero() { return 0; }\nint32_t f()\n{\n    return zero();\n}\n"
    e = _err(tmp_path, src)
    assert "cannot instantiate template zero: no value for template parameter 'T'" in e.message
    assert (e.line, e.column) == (4, 12)


def test_errors_inside_macro_expansions_point_at_the_macro_use(tmp_path):
    src = "#define TWICE(x) ((x) + (x) + undefined_thing)\nint32_t f()\n{\n    int32_t a = 1; return TWICE(a);\n}\n"
    e = _err(tmp_path, src)
    assert "unknown identifier 'undefined_thing'" in e.message
    assert (e.line, e.column) == (4, 27)


def test_errors_in_headers_name_the_header(tmp_path):
    headers = {"h__h": "#pragma once\n__aicore__ inline int32_t g()\n{\n    return nope;\n}\n"}
    e = _err(tmp_path, '#include "h.h"\nint32_t f() { return g(); }\n', **headers)
    assert e.file.endswith("h.h") and (e.line, e.column) == (4, 12)


def test_unsupported_statements_are_named(tmp_path):
    e = _err(tmp_path, "int32_t f()\n{\n    static int32_t n = 0;\n    return n;\n}\n")
    assert e.message.startswith("not supported yet: static local variables at k.asc:3:5")


def test_host_code_is_never_translated(tmp_path):
    src = """
    #include "acl/acl.h"
    __global__ __aicore__ void k(GM_ADDR x) { }
    int32_t main() { std::vector<float> v; k<<<8, nullptr, stream>>>(v.data()); return 0; }
    """
    assert program(tmp_path, src).kernel == "k"


def test_error_info_carries_the_caret_for_the_cli_and_log(tmp_path):
    e = _err(tmp_path, "int32_t f()\n{\n    return 1 + missing_name;\n}\n")
    info = e.info()
    assert info.kind == "build" and info.file.endswith("k.asc") and info.line == 3
    assert info.snippet.splitlines()[0] == "    return 1 + missing_name;"
    assert info.snippet.splitlines()[1].endswith("|" + " " * 16 + "^")


def test_a_syntax_error_that_swallowed_a_declaration_is_what_is_reported(tmp_path):
    src = "struct S { int32_t a; ;; int32_t b = ; };\n#  \nint32_t g(int32_t x) { return x +* ; }\nint32_t f() { return h(); }\n"
    e = _err(tmp_path, src)
    assert e.message.startswith("syntax error") and e.line in (1, 3)


def test_columns_count_characters_not_bytes(tmp_path):
    e = _err(tmp_path, 'int32_t f()\n{\n    printf("\u00e9\u00e9\u00e9"); return nope;\n}\n')
    assert (e.line, e.column) == (3, 27)


def test_the_snippet_shows_the_line_as_it_is_now_not_before_the_save(tmp_path):
    """A warm worker builds the same file again after a save: the caret must sit under the
    current text of the line (linecache kept the old one)."""
    import os

    from asc_tui.cxx.errors import CxxError

    src = tmp_path / "k.asc"
    src.write_text("int a = 1;\nint b = (2;\n")
    assert CxxError("expected ')'", str(src), 2, 11).info().snippet.startswith("int b = (2;")
    src.write_text("int a = 1;\nint bee = (22 + 3;\n")
    st = src.stat()
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # (a save in the same tick)
    assert CxxError("expected ')'", str(src), 2, 18).info().snippet.startswith("int bee = (22 + 3;")
