"""The house rules of style.md that a script can check (issue 31): in every layer, no package
directory holds more than 15 modules at its top level, no function is over 100 lines except the
emulator's hot loops (named below, with why), and no "seam to split on" note is left instead of
the split; in the layers below the tools, no module imports another module's private name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "asc_tui"

#: every layer (sub-package) of asc_tui: the module-count, length and seam rules hold for them
LAYERS = tuple(sorted(d.name for d in ROOT.iterdir() if (d / "__init__.py").is_file()))
#: the layers that import no other module's private name (the front ends: not yet)
PRIVATE_CLEAN = ("npu", "ascendc", "cxx", "devkit")
MAX_MODULES = 15
MAX_LINES = 100
#: functions allowed past MAX_LINES: dotted name -> why
HOT_LOOPS = {
    "npu.memory.hbm._events": "the shared-HBM solver's event loop, state in locals (docstring: measured)",
}


def _files(root: Path, layers=LAYERS) -> list[Path]:
    return sorted(f for layer in layers for f in (root / layer).rglob("*.py"))


def crowded_packages(root: Path, layers=LAYERS) -> list[str]:
    """Package directories with more than MAX_MODULES modules at their top level (__init__ too)."""
    dirs = {f.parent for f in _files(root, layers)}
    return [
        f"{d.relative_to(root)}: {n} modules"
        for d in sorted(dirs)
        if (n := len(list(d.glob("*.py")))) > MAX_MODULES
    ]


def long_functions(root: Path, layers=LAYERS) -> list[str]:
    """Functions (and methods) over MAX_LINES lines, as `dotted.name (lines)`."""
    found = []
    for f in _files(root, layers):
        module = ".".join(f.relative_to(root).with_suffix("").parts)
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_LINES:
                    found.append(f"{module}.{node.name} ({n})")
    return found


def private_imports(root: Path, layers=LAYERS) -> list[str]:
    """`from .x import _name` of the package's own modules (a C extension module excepted)."""
    found = []
    for f in _files(root, layers):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("asc_tui")):
                for a in node.names:
                    private = a.name.startswith("_") and not a.name.startswith("__")
                    extension = any(f.parent.glob(f"{a.name}.c"))  # (npu/_fp16.c built as npu._fp16)
                    if private and not extension:
                        found.append(f"{f.relative_to(root)}:{node.lineno}: imports {a.name}")
    return found


def seam_notes(root: Path, layers=LAYERS) -> list[str]:
    return [
        str(f.relative_to(root)) for f in _files(root, layers) if "seam to split on" in f.read_text("utf-8")
    ]


def test_no_package_holds_more_than_15_modules():
    assert crowded_packages(ROOT) == []


def test_no_function_is_over_100_lines_but_the_named_hot_loops():
    names = [x.rsplit(" (", 1)[0] for x in long_functions(ROOT)]
    assert sorted(names) == sorted(HOT_LOOPS)


def test_no_module_imports_another_modules_private_name():
    assert private_imports(ROOT, PRIVATE_CLEAN) == []


def test_no_seam_note_is_left():
    assert seam_notes(ROOT) == []


# -- the checks fail where they should: a temporary package breaking each rule ---------------


@pytest.fixture
def package(tmp_path):
    def make(files: dict[str, str]) -> Path:
        for rel, text in files.items():
            path = tmp_path / "asc_tui" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return tmp_path / "asc_tui"

    return make


def test_a_crowded_package_is_reported(package):
    root = package({f"npu/m{i}.py": "" for i in range(MAX_MODULES)} | {"npu/__init__.py": ""})
    assert crowded_packages(root, ("npu",)) == ["npu: 16 modules"]


def test_a_long_function_is_reported(package):
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    root = package({"npu/__init__.py": "", "npu/a.py": f"def short():\n    pass\n\n\ndef long():\n{body}"})
    assert long_functions(root, ("npu",)) == [f"npu.a.long ({MAX_LINES + 1})"]


def test_a_private_import_is_reported_but_not_a_c_extension(package):
    root = package(
        {
            "npu/__init__.py": "",
            "npu/_fast.c": "",
            "npu/a.py": "_hidden = 1\n",
            "npu/b.py": "from .a import _hidden\nfrom . import _fast\nfrom .a import visible as _alias\n",
        }
    )
    assert private_imports(root, ("npu",)) == ["npu/b.py:1: imports _hidden"]


def test_a_seam_note_is_reported(package):
    root = package(
        {"npu/__init__.py": "", "npu/a.py": '"""Past 400 lines; the seam to split on: x | y."""\n'}
    )
    assert seam_notes(root, ("npu",)) == ["npu/a.py"]
