"""The house rules for the devkit and the CLI, read from the import statements of the package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "asc_tui"


def imported_modules(path: Path) -> set[str]:
    """Absolute names of every module `path` imports (relative imports resolved)."""
    pkg = ["asc_tui", *path.relative_to(PACKAGE).parent.parts]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = pkg[: len(pkg) - node.level + 1] if node.level else []
            mod = ".".join([*base, *([node.module] if node.module else [])])
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def files(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


def offenders(layer: str, *forbidden: str) -> list[str]:
    return [
        f"{p.relative_to(PACKAGE)} imports {m}"
        for p in files(layer)
        for m in sorted(imported_modules(p))
        if any(m == f or m.startswith(f + ".") for f in forbidden)
    ]


def test_the_cli_reaches_the_emulator_only_through_the_devkit():
    assert offenders("cli", "asc_tui.npu", "asc_tui.ascendc") == []


@pytest.mark.parametrize("layer", ["devkit", "npu", "ascendc"])
def test_nothing_below_the_front_ends_imports_textual_or_a_front_end(layer):
    assert offenders(layer, "textual", "asc_tui.cli", "asc_tui.tui") == []


def test_what_the_workbench_needs_before_first_paint_does_not_load_numpy():
    import subprocess
    import sys

    light = (
        "discovery",
        "regression",
        "chips",
        "emulation",
        "errors",
        "present.bench",
        "present.text",
    )
    code = (
        "; ".join(f"import asc_tui.devkit.{m}" for m in light) + "; import sys; print('numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
