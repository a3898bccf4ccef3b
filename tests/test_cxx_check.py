"""The whole-unit C++ check (cxx/check): invalid C++ anywhere in a unit is a build error at
its line, code that never runs included; the passing projects get no diagnostics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from asc_tui.cxx.check import ClangError, check_unit, clang, errors_of
from asc_tui.devkit.run.runner import RunRequest, run

REPO = Path(__file__).resolve().parents[1]
VADD = REPO / "tests" / "samples" / "vadd"


def _sample(tmp_path: Path, edit) -> Path:
    dst = tmp_path / "vadd"
    shutil.copytree(VADD, dst, ignore=shutil.ignore_patterns("build", "input", "output"))
    f = dst / "vadd.asc"
    f.write_text(edit(f.read_text()))
    return f


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.split("\n"), 1) if needle in ln)


def _replace(old: str, new: str):
    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new, 1)

    return edit


CASES = {
    # name: (edit, the text of the line the error is on, a word of the message)
    "appended broken declaration": (lambda t: t + "int broken( {\n", "int broken( {", "expected"),
    "missing ; in host main": (
        _replace("uint32_t blocks = 4;", "uint32_t blocks = 4"),
        "uint32_t blocks = 4",
        "';'",
    ),
    "missing ; in a branch that does not run": (
        _replace(
            "    uint32_t blocks = 4;\n", "    uint32_t blocks = 4;\n    if (argc > 99) { blocks = 2 }\n"
        ),
        "blocks = 2 }",
        "';'",
    ),
    "duplicated local": (
        _replace("    uint32_t per = n /", "    uint32_t base = 0;\n    uint32_t per = n /"),
        "uint32_t base = per",
        "redefinition",
    ),
    "undefined identifier used as a type": (
        _replace("    AscendC::TPipe pipe;\n", "    AscendC::TPipe pipe;\n    tiling_t tl;\n"),
        "tiling_t tl;",
        "unknown type 'tiling_t'",
    ),
    "tensor of another element type": (
        _replace(
            "AscendC::LocalTensor<float> a = buf.Get<float>();",
            "AscendC::LocalTensor<float> a = buf.Get<half>();",
        ),
        "buf.Get<half>()",
        "LocalTensor",
    ),
    "PipeBarrier without its pipe": (
        _replace("AscendC::PipeBarrier<PIPE_ALL>();", "AscendC::PipeBarrier<>();"),
        "PipeBarrier<>()",
        "PipeBarrier",
    ),
    "narrowing in braces": (
        _replace("    uint32_t blocks = 4;\n", "    uint32_t blocks = 4;\n    uint8_t small{blocks};\n"),
        "uint8_t small{blocks};",
        "narrow",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_invalid_cpp_anywhere_is_an_error_at_its_line(tmp_path, name):
    edit, line_text, word = CASES[name]
    f = _sample(tmp_path, edit)
    errs = errors_of(f)
    assert errs, f"{name}: clang's check found nothing"
    first = errs[0]
    assert first["line"] == _line(f.read_text(), line_text), first
    assert word in first["message"], first
    assert first["text"] == f.read_text().split("\n")[first["line"] - 1]


def test_a_duplicated_class_member_is_an_error(tmp_path):
    src = (REPO / "operators" / "cpp" / "add_custom.asc").read_text()
    dst = tmp_path / "add_custom.asc"
    for f in (REPO / "operators" / "cpp").glob("add_custom*"):
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(REPO / "operators" / "cpp" / "kernel_utils.h", tmp_path)
    dst.write_text(src.replace("    uint32_t tile;\n", "    uint32_t tile;\n    uint32_t tile;\n", 1))
    errs = errors_of(dst)
    assert errs and "duplicate member 'tile'" in errs[0]["message"]
    assert errs[0]["line"] == _line(src, "    uint32_t tile;") + 1


def test_a_misspelt_user_type_is_an_error(tmp_path):
    for f in (REPO / "operators" / "cpp").glob("add_custom*"):
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(REPO / "operators" / "cpp" / "kernel_utils.h", tmp_path)
    k = tmp_path / "add_custom.asc"
    src = k.read_text()
    k.write_text(src.replace("const AddCustomTilingData& tiling)", "const AddCustomTilingDat& tiling)", 1))
    errs = errors_of(k)
    assert errs and errs[0]["message"].startswith("unknown type 'AddCustomTilingDat'")
    assert "did you mean 'AddCustomTilingData'" in errs[0]["message"]
    assert errs[0]["line"] == _line(src, "const AddCustomTilingData& tiling)")


def test_a_run_of_a_sample_with_dead_invalid_code_is_a_build_error(tmp_path):
    f = _sample(tmp_path, CASES["missing ; in a branch that does not run"][0])
    rep = run(RunRequest(str(f.parent)))
    assert rep.errors and rep.errors[0].kind == "build"
    e = rep.errors[0]
    assert (e.file, e.line) == (str(f), _line(f.read_text(), "blocks = 2 }"))
    assert "blocks = 2 }" in e.snippet  # the line as clang checked it, with the caret under it


def test_an_operator_with_invalid_cpp_fails_to_build(tmp_path):
    for f in (REPO / "operators" / "cpp").glob("add_custom*"):
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(REPO / "operators" / "cpp" / "kernel_utils.h", tmp_path)
    k = tmp_path / "add_custom.asc"
    k.write_text(k.read_text() + "int broken( {\n")
    rep = run(RunRequest(str(k)))
    assert rep.errors and rep.errors[0].kind == "build" and rep.errors[0].line == k.read_text().count("\n")


def _projects():
    out = sorted((REPO / "operators" / "cpp").glob("*.asc"))
    out += sorted(
        p for d in (REPO / "tests" / "samples").iterdir() for p in d.iterdir() if p.suffix in (".asc", ".cpp")
    )
    out += sorted((REPO / "tests" / "cxx_data").glob("*.asc")) + sorted(
        (REPO / "benchmarks" / "cxx").glob("*.asc")
    )
    return out


@pytest.mark.parametrize("path", _projects(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_diagnostics_on_the_projects_that_pass(path):
    assert errors_of(path) == []


def test_the_stand_in_itself_is_valid_cpp(tmp_path):
    f = tmp_path / "empty.cpp"
    f.write_text('#include "kernel_operator.h"\n#include "acl/acl.h"\nint main() { return 0; }\n')
    diags, _files = clang.run(f)
    assert diags == []


def test_the_check_is_cached_by_content(tmp_path, monkeypatch):
    f = _sample(tmp_path, lambda t: t)
    assert errors_of(f) == []
    calls = []
    monkeypatch.setattr(clang, "run", lambda *a, **k: calls.append(a) or ([], {}, set()))
    assert errors_of(f) == []
    assert calls == []  # unchanged: no clang
    f.write_text(f.read_text() + "int broken( {\n")
    from asc_tui.cxx import check

    monkeypatch.setattr(check, "_MEM", {})
    monkeypatch.setenv("ASC_TUI_CACHE_DIR", str(tmp_path / "cache"))
    errors_of(f)
    assert len(calls) == 1  # changed: checked again


def test_without_libclang_the_check_is_skipped_with_a_notice(tmp_path, monkeypatch, capsys):
    import builtins

    real = builtins.__import__

    def no_clang(name, *a, **k):
        if name == "clang" or name.startswith("clang."):
            raise ImportError("no libclang here")
        return real(name, *a, **k)

    monkeypatch.setattr(clang, "_STATE", {})
    monkeypatch.setattr(builtins, "__import__", no_clang)
    from asc_tui.cxx import check

    monkeypatch.setattr(check, "_MEM", {})
    monkeypatch.setenv("ASC_TUI_CACHE_DIR", str(tmp_path / "cache"))
    f = _sample(tmp_path, lambda t: t + "int broken( {\n")
    check_unit(f)  # no error raised: not checked
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "skipped" in err and "libclang" in err


def test_a_clang_error_is_a_cxx_build_error():
    assert issubclass(ClangError, Exception)
    e = ClangError("expected ';'", "/x/a.asc", 3, 5, "int a = 1", None)
    assert e.kind == "build" and e.caret() == "int a = 1\n    ^"


def test_a_sample_without_main_is_a_user_error_not_a_directory_error(tmp_path):
    text = VADD.joinpath("vadd.asc").read_text()
    f = _sample(tmp_path, lambda t: t[: t.index("int32_t main(")])
    rep = run(RunRequest(str(f.parent)))
    assert rep.errors and rep.errors[0].kind == "build"
    assert "no host main()" in rep.errors[0].message and rep.errors[0].file == str(f)
    assert "Is a directory" not in rep.errors[0].message and "main(" in text


def test_a_truncated_sample_is_an_error_where_the_file_ends(tmp_path):
    f = _sample(tmp_path, lambda t: t[: t.index("    aclrtFree(xd);")])
    rep = run(RunRequest(str(f.parent)))
    e = rep.errors[0]
    assert e.kind == "build" and "expected '}'" in e.message
    assert e.file == str(f) and e.line == f.read_text().count("\n")  # the last line


def test_a_cpp_kernel_dividing_by_zero_says_so_in_cpp_words(tmp_path):
    for f in (REPO / "operators" / "cpp").glob("add_custom*"):
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(REPO / "operators" / "cpp" / "kernel_utils.h", tmp_path)
    k = tmp_path / "add_custom.asc"
    src = k.read_text()
    old = "uint32_t tiles = CeilDiv(length, tile);"
    k.write_text(src.replace(old, "uint32_t tiles = CeilDiv(length, tile) / (tile - tile);", 1))
    rep = run(RunRequest(str(k), timing_only=True))
    e = rep.errors[0]
    assert "integer division by zero" in e.message and "ZeroDivisionError" not in e.message
    assert e.file == str(k) and e.line == _line(src, old)


def test_a_sample_truncated_before_its_kernel_is_an_error_where_the_file_ends(tmp_path):
    f = _sample(tmp_path, lambda t: t[: t.index("__global__")] + "struct Helper {\n    int32_t a;\n")
    rep = run(RunRequest(str(f.parent)))
    e = rep.errors[0]
    assert e.kind == "build" and "expected '}'" in e.message
    assert e.file == str(f) and e.line == f.read_text().count("\n")


def test_a_missing_semicolon_in_a_class_method_is_at_its_own_line(tmp_path):
    for f in (REPO / "operators" / "cpp").glob("add_custom*"):
        shutil.copy(f, tmp_path / f.name)
    shutil.copy(REPO / "operators" / "cpp" / "kernel_utils.h", tmp_path)
    k = tmp_path / "add_custom.asc"
    src = k.read_text()
    old = "        tile = MinU32(TILE_LENGTH, length);"
    k.write_text(src.replace(old, old[:-1], 1))
    e = run(RunRequest(str(k))).errors[0]
    assert e.kind == "build" and "expected ';'" in e.message
    assert (e.file, e.line) == (str(k), _line(src, old))  # not the next statement's line


def test_a_precompiled_stand_in_clang_refuses_falls_back_to_the_text(tmp_path, monkeypatch):
    bad = tmp_path / "broken.pch"
    bad.write_bytes(b"not a precompiled header")
    monkeypatch.setitem(clang._STATE, "pch", bad)
    f = _sample(tmp_path, CASES["missing ; in host main"][0])
    diags, _files = clang.run(f)
    assert any("expected ';'" in d.text for d in diags)
    assert clang._STATE["pch"] is None
