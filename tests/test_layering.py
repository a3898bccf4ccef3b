"""The design's layering rules, executable (architecture.md, "Rules of the house").

Every import in the package is read with `ast`: top-level ones and those inside functions or
`if TYPE_CHECKING:` blocks alike, relative ones resolved. The rules:
- arrows point down only: each layer imports only the layers listed for it in `MAY_IMPORT`;
- nothing below the front ends imports Textual; Rich only in the presenters both front ends
  show (`devkit.present`);
- no import cycles between modules, not even through imports inside functions. Imports under
  `if TYPE_CHECKING:` never run, so they count for the arrows but not for cycles (a controller
  may name its host app's type).
The tests at the bottom show the checker failing on a temporary package that breaks each rule.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "asc_tui"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

#: What every layer may import: the package root (version, bundled paths) and `tomlpos`, a
#: leaf utility that points at a TOML value's line and column.
BASE = frozenset({"", "tomlpos"})

#: layer -> the layers it may import besides BASE.
MAY_IMPORT: dict[str, frozenset[str]] = {
    "": BASE,
    "tomlpos": BASE,
    "npu": BASE | {"npu"},
    "ascendc": BASE | {"ascendc", "npu"},
    "operator": BASE | {"operator", "ascendc", "npu"},
    "cxx": BASE | {"cxx", "ascendc", "npu", "operator"},
    "config": BASE | {"config", "npu"},  # names the chips it accepts
    "devkit": BASE | {"devkit", "cxx", "ascendc", "npu", "operator", "config"},
    "cli": BASE | {"cli", "devkit", "config", "tui"},
    "tui": BASE | {"tui", "devkit", "config"},
    "__main__": BASE | {"cli"},
}

#: The rooms (sub-packages) of a layer -> the other rooms of that layer they may import. A room may
#: always import its layer's top-level modules (the layer's front door and shared vocabulary), and
#: those may import any room. Every sub-package must be listed here.
ROOMS: dict[str, frozenset[str]] = {
    "npu.numbers": frozenset(),
    "npu.replay": frozenset({"npu.numbers"}),
    "npu.memory": frozenset({"npu.replay"}),
    "npu.extrapolate": frozenset({"npu.memory", "npu.replay"}),
    "npu.launch": frozenset({"npu.numbers", "npu.replay", "npu.memory"}),
    "ascendc.memory": frozenset(),
    "ascendc.vector": frozenset({"ascendc.memory"}),
    "ascendc.sync": frozenset({"ascendc.memory"}),
    "ascendc.cube": frozenset({"ascendc.memory"}),
    "ascendc.copy": frozenset({"ascendc.memory", "ascendc.cube"}),
    "ascendc.matmul": frozenset({"ascendc.memory", "ascendc.cube", "ascendc.copy", "ascendc.sync"}),
    "cxx.source": frozenset(),
    "cxx.kernel": frozenset({"cxx.source"}),
    "cxx.host": frozenset({"cxx.source", "cxx.kernel"}),
    "cxx.check": frozenset({"cxx.source", "cxx.host"}),
    "devkit.profile": frozenset(),
    "devkit.samples": frozenset(),
    "devkit.run": frozenset({"devkit.profile", "devkit.samples"}),
    "devkit.views": frozenset({"devkit.profile", "devkit.run"}),
    "devkit.debug": frozenset({"devkit.run"}),
    "devkit.bench": frozenset({"devkit.profile", "devkit.run", "devkit.samples"}),
    "devkit.tune": frozenset({"devkit.profile", "devkit.run", "devkit.samples"}),
    "devkit.present": frozenset({"devkit.profile", "devkit.bench", "devkit.run"}),
    "devkit.calibrate": frozenset({"devkit.profile", "devkit.run"}),
    "tui.widgets": frozenset(),
    "tui.screens": frozenset({"tui.widgets"}),
    "tui.tools": frozenset({"tui.widgets"}),
}

#: third-party package -> the modules (dotted prefixes below the package) that may import it.
RESTRICTED = {
    "textual": ("tui",),
    "textual_serve": ("cli", "tui"),
    "rich": ("tui", "cli", "devkit.present"),
}


@dataclass(frozen=True)
class Import:
    module: str  # importing module, dotted
    target: str  # imported module, dotted (absolute)
    line: int
    type_only: bool = False  # under `if TYPE_CHECKING:`

    def where(self) -> str:
        return f"{self.module} (line {self.line})"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path, modules: set[str]) -> list[Import]:
    """Every import statement in the file, anywhere in it, as absolute dotted targets."""
    mod = module_name(path, root)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    type_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    found: list[Import] = []
    for node in ast.walk(tree):
        hidden = id(node) in type_only
        if isinstance(node, ast.Import):
            found += [Import(mod, a.name, node.lineno, hidden) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from pkg import name` imports the module pkg.name when there is one, else pkg
            for a in node.names:
                sub = f"{target}.{a.name}"
                found.append(Import(mod, sub if sub in modules else target, node.lineno, hidden))
    return found


def layer_of(dotted: str) -> str | None:
    """The layer of a module of the package (None for third-party and stdlib)."""
    parts = dotted.split(".")
    if parts[0] != PACKAGE:
        return None
    return parts[1] if len(parts) > 1 else ""


def room_of(dotted: str, packages: set[str]) -> str | None:
    """The room (`layer.sub`) a module of the package lives in, None for a layer's top level."""
    parts = dotted.split(".")
    if len(parts) < 3 or ".".join(parts[:3]) not in packages:
        return None
    return ".".join(parts[1:3])


def check(root: Path) -> list[str]:
    """All violations of the rules in the package at `root`, as readable lines."""
    files = sorted(root.rglob("*.py"))
    modules = {module_name(f, root) for f in files}
    problems: list[str] = []
    packages = {module_name(f, root) for f in files if f.name == "__init__.py"}
    for pkg in sorted(packages):
        room = room_of(pkg, packages)
        if room is not None and pkg.count(".") == 2 and room not in ROOMS:
            problems.append(f"{pkg}: room '{room}' is not in the rooms table")
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for f in files:
        for imp in imports_of(f, root, modules):
            src_room, dst_room = room_of(imp.module, packages), room_of(imp.target, packages)
            if (
                src_room
                and dst_room
                and src_room != dst_room
                and src_room.split(".")[0] == dst_room.split(".")[0]
            ):
                if dst_room not in ROOMS.get(src_room, frozenset()):
                    problems.append(f"{imp.where()}: room '{src_room}' may not import room '{dst_room}'")
            src_layer = layer_of(imp.module)
            dst_layer = layer_of(imp.target)
            if dst_layer is None:
                top = imp.target.split(".")[0]
                allowed = RESTRICTED.get(top)
                below = imp.module.partition(".")[2]
                if allowed is not None and not any(below == a or below.startswith(a + ".") for a in allowed):
                    problems.append(f"{imp.where()}: '{below}' imports {top} (only {', '.join(allowed)})")
                continue
            if src_layer not in MAY_IMPORT:
                problems.append(f"{imp.where()}: layer '{src_layer}' is not in the layering table")
                continue
            if dst_layer not in MAY_IMPORT[src_layer] and imp.target in modules | _packages(modules):
                problems.append(f"{imp.where()}: '{src_layer}' may not import '{dst_layer}' ({imp.target})")
            if imp.target in modules and imp.target != imp.module and not imp.type_only:
                graph[imp.module].add(imp.target)
    problems += [f"import cycle: {' -> '.join(c)}" for c in cycles(graph)]
    return problems


def _packages(modules: set[str]) -> set[str]:
    return {m.rsplit(".", i)[0] for m in modules for i in range(1, m.count(".") + 1)}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_package_follows_the_layering_rules():
    assert check(ROOT) == []


# -- the checker's own tests: a temporary package that breaks one rule at a time ----------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / PACKAGE
    for rel, text in {"__init__.py": "", "npu/__init__.py": "", "ascendc/__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_clean_package_passes(tmp_path):
    root = _package(tmp_path, {"npu/pipes.py": "X = 1\n", "ascendc/api.py": "from ..npu.pipes import X\n"})
    assert check(root) == []


_EMPTY = {"tui/__init__.py": "", "cli/__init__.py": "", "devkit/__init__.py": ""}
_BROKEN = {
    "npu imports the kernel API": (
        {"npu/core.py": "from asc_tui.ascendc import api\n", "ascendc/api.py": ""},
        "'npu' may not import 'ascendc'",
    ),
    "inside a function": (
        {"npu/core.py": "def f():\n    from ..ascendc import api\n", "ascendc/api.py": ""},
        "'npu' may not import 'ascendc'",
    ),
    "the TUI reaches into npu": (
        {"tui/app.py": "import asc_tui.npu.core\n", "npu/core.py": ""},
        "'tui' may not import 'npu'",
    ),
    "the TUI imports the CLI": (
        {"tui/app.py": "from ..cli import run\n", "cli/run.py": ""},
        "'tui' may not import 'cli'",
    ),
    "devkit imports Textual": (
        {"devkit/view.py": "from textual.widget import Widget\n"},
        "imports textual",
    ),
    "devkit outside its presenters imports Rich": (
        {"devkit/view.py": "from rich.text import Text\n"},
        "imports rich",
    ),
    "an undeclared layer": (
        {"newlayer/__init__.py": "", "newlayer/x.py": "from .. import npu\n"},
        "not in the layering table",
    ),
    "a type-only import of the TUI from npu": (
        {"npu/core.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..tui import app\n"},
        "'npu' may not import 'tui'",
    ),
    "a room imports a room above it": (
        {
            "npu/memory/__init__.py": "",
            "npu/memory/hbm.py": "X = 1\n",
            "npu/replay/__init__.py": "",
            "npu/replay/trace.py": "from ..memory.hbm import X\n",
        },
        "room 'npu.replay' may not import room 'npu.memory'",
    ),
    "an undeclared room": (
        {"npu/attic/__init__.py": "", "npu/attic/old.py": "X = 1\n"},
        "room 'npu.attic' is not in the rooms table",
    ),
    "a cycle through a function-level import": (
        {"npu/a.py": "from . import b\n", "npu/b.py": "def f():\n    from . import a\n"},
        "import cycle: asc_tui.npu.a -> asc_tui.npu.b",
    ),
}


@pytest.mark.parametrize("rule", list(_BROKEN))
def test_the_checker_reports_each_broken_rule(tmp_path, rule):
    files, expected = _BROKEN[rule]
    problems = check(_package(tmp_path, {**_EMPTY, **files}))
    assert any(expected in p for p in problems), problems
