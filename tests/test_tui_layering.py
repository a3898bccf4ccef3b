"""The TUI reaches the emulator only through the devkit and imports no CLI module; the views it
draws (devkit.views) are plain data: no Textual, no Rich. Read from the import statements,
imports inside functions and under TYPE_CHECKING included."""

from __future__ import annotations

import pytest
from test_layers_devkit import offenders


@pytest.mark.parametrize("layer", ["asc_tui.npu", "asc_tui.ascendc", "asc_tui.cli"])
def test_the_tui_does_not_import(layer):
    assert offenders("tui", layer) == []


def test_the_devkit_views_import_no_textual_or_rich():
    assert offenders("devkit/views", "textual", "rich") == []


def test_the_workbench_module_loads_no_numpy_before_the_first_paint():
    """The emulator stack (numpy, devkit.views) is imported after the screen is up."""
    import subprocess
    import sys

    heavy = "('numpy', 'asc_tui.npu.results', 'asc_tui.devkit.views.profile')"
    code = f"import sys, asc_tui.tui.app; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
