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


KERNEL_MIXINS = {
    "calls": "CallGen",
    "classes": "ClassGen",
    "expr": "ExprGen",
    "ops": "OperatorGen",
    "names": "NameGen",
    "stmt": "StmtGen",
    "loops": "LoopGen",
    "typeres": "TypeResolver",
    "vectorize": "VecGen",
}


def undeclared_uses(source: str, cls_name: str, declared: set[str]) -> set[str]:
    """What class `cls_name` in `source` uses of `self` that it neither defines nor finds declared."""
    cls = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == cls_name)
    own = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    own |= {t.id for n in cls.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    used = {
        n.attr
        for n in ast.walk(cls)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
    }
    return {u for u in used - own - declared if not u.startswith("__")}


def base_surface() -> set[str]:
    from asc_tui.cxx.kernel.base import GeneratorBase

    return set(GeneratorBase.__abstractmethods__) | set(GeneratorBase.__annotations__)


def test_each_kernel_mixin_relies_only_on_the_declared_base():
    from asc_tui.cxx.kernel.base import GeneratorBase
    from asc_tui.cxx.kernel.codegen import Translator

    declared = base_surface()
    for module, cls_name in KERNEL_MIXINS.items():
        source = (CXX / "kernel" / f"{module}.py").read_text()
        assert f"class {cls_name}(GeneratorBase)" in source
        assert undeclared_uses(source, cls_name, declared) == set(), cls_name
    assert GeneratorBase in Translator.__mro__


def test_the_base_check_finds_an_undeclared_call():
    source = "class Gen(GeneratorBase):\n    def f(self):\n        return self.expr(1) + self.helper()\n"
    assert undeclared_uses(source, "Gen", base_surface()) == {"helper"}


def test_the_translator_implements_the_whole_base():
    from asc_tui.cxx.kernel.codegen import Translator

    assert Translator.__abstractmethods__ == frozenset()
