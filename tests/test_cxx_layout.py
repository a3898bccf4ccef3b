"""The C++ twin's layout rules (issue 31): a name shared across modules is public, each room stays
small enough to read, and the "seam to split on" notes are splits, not promises."""

from __future__ import annotations

import ast
from pathlib import Path

CXX = Path(__file__).resolve().parent.parent / "asc_tui" / "cxx"
MAX_MODULES = 15


def private_imports(root: Path) -> list[str]:
    """`from .x import _name` between modules of the package at `root`."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                for alias in node.names:
                    if alias.name.startswith("_"):
                        out.append(f"{path.relative_to(root)}:{node.lineno} imports {alias.name}")
    return out


def test_no_private_cross_module_imports():
    assert private_imports(CXX) == []


def test_the_checker_finds_a_private_import(tmp_path):
    (tmp_path / "a.py").write_text("def _helper():\n    pass\n")
    (tmp_path / "b.py").write_text("from .a import _helper\n")
    assert private_imports(tmp_path) == ["b.py:1 imports _helper"]


def test_rooms_hold_at_most_15_modules():
    for d in [CXX, *(p for p in CXX.iterdir() if p.is_dir() and (p / "__init__.py").exists())]:
        assert len(list(d.glob("*.py"))) <= MAX_MODULES, d


def test_no_seam_notes_left():
    noted = [p.name for p in CXX.rglob("*.py") if "the seam to split on" in p.read_text()]
    assert noted == []
