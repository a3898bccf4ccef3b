"""Shared fixtures: every test gets its own project store; hypothesis without deadlines."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("asc", deadline=None, max_examples=25, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "asc"))

REPO = Path(__file__).resolve().parents[1]
OPERATORS = REPO / "operators"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Under xdist (`--dist loadgroup`, pyproject.toml) the tests of a module that use one of its
    module-scoped fixtures go to one worker, so the fixture (a pip install, a local Ray, a
    brute-forced optimum) is built once, not once per worker."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is not None and any(d[-1].scope == "module" for d in info.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    # The long single-worker groups and the slowest tests first, so the workers end together
    # instead of one finishing a long group alone at the end.
    first = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda it: first.get(it.module.__name__, len(first)))


#: Test modules that take longest (a module-scoped group on one worker, or slow Pilot tests),
#: slowest first (pytest --durations).
SLOW_FIRST = (
    "test_readme_outputs",
    "test_fuzz_cxx",
    "test_tui_nonfinite",
    "test_tui_app",
    "test_tui_cancel",
    "test_tui_palette_and_tune",
    "test_packaging",
    "test_tune_ray",
    "test_samples_workbench",
    "test_tui_tools",
    "test_tui_result_view",
    "test_sample_tools",
    "test_cli_serve",
)


@pytest.fixture(autouse=True)
def isolated_project(tmp_path, monkeypatch):
    """Keep history/caches of each test in its own project directory."""
    monkeypatch.setenv("ASC_TUI_PROJECT", str(tmp_path))
    yield tmp_path


@pytest.fixture
def write_operator(tmp_path):
    """Write an operator file into a temp dir and return its path."""

    def write(name: str, source: str) -> Path:
        p = tmp_path / "ops" / f"{name}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(source)
        return p

    return write


@pytest.fixture
def ops(tmp_path):
    """A watched operators directory for the workbench: add_custom and a copy, add_twice."""
    d = tmp_path / "operators"
    d.mkdir()
    src = Path(__file__).parent / "tui_data" / "add_custom.py"
    shutil.copy(src, d / "add_custom.py")
    shutil.copy(src, d / "add_twice.py")
    return d


@pytest.fixture
def one_op(tmp_path):
    """A watched operators directory with add_custom alone (one run to wait for)."""
    d = tmp_path / "operators"
    d.mkdir()
    shutil.copy(Path(__file__).parent / "tui_data" / "add_custom.py", d / "add_custom.py")
    return d
