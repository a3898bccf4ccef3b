"""`--version` on every console script: asc-tui's version, the Ascend C API level, the default chip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomli

import asc_tui
from asc_tui.devkit.chips import default_chip_name

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = tomli.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]


def run_script(name: str, *args: str) -> subprocess.CompletedProcess:
    """The console script `name` as pip's wrapper runs it: its entry point with sys.argv set."""
    module, func = SCRIPTS[name].split(":")
    code = f"import sys; from {module} import {func}; sys.argv = {[name, *args]!r}; sys.exit({func}())"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO, env=env
    )


def test_the_four_commands_are_console_scripts():
    assert {"asc-tui", "asc-profile", "asc-debug", "asc-bench"} <= set(SCRIPTS)


@pytest.mark.parametrize("name", ["asc-tui", "asc-profile", "asc-debug", "asc-bench"])
def test_version_names_the_release_the_api_level_and_the_default_chip(name):
    p = run_script(name, "--version")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        f"asc-tui {asc_tui.__version__}",
        f"Ascend C API: {asc_tui.ASCENDC_API}",
        f"default chip: {default_chip_name()}",
    ]


def test_the_version_is_the_packages():
    meta = tomli.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert asc_tui.__version__ == meta["version"]


def test_translated_cxx_sees_the_architecture_version_names():
    from asc_tui.cxx.source.preprocess import PREDEFINED

    assert asc_tui.ASCENDC_ARCH == f"dav-{PREDEFINED['__NPU_ARCH__']}"
    assert asc_tui.ASCENDC_ARCH in asc_tui.ASCENDC_API
