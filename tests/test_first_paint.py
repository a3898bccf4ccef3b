"""What the workbench loads before its first paint: no numpy, no emulator, no devkit views.
(Which layer may import which is tests/test_layering.py's job.)"""

from __future__ import annotations

import subprocess
import sys


def _loaded(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_what_the_workbench_needs_before_first_paint_does_not_load_numpy():
    light = (
        "run.discovery",
        "bench.regression",
        "chips",
        "emulation",
        "errors",
        "present.bench",
        "text",
    )
    code = (
        "; ".join(f"import asc_tui.devkit.{m}" for m in light) + "; import sys; print('numpy' in sys.modules)"
    )
    assert _loaded(code).strip() == "False"


def test_the_workbench_module_loads_no_numpy_before_the_first_paint():
    """The emulator stack (numpy, devkit.views) is imported after the screen is up."""
    heavy = "('numpy', 'asc_tui.npu.results', 'asc_tui.devkit.views.profile')"
    code = f"import sys, asc_tui.tui.app; print(sorted(m for m in {heavy} if m in sys.modules))"
    assert _loaded(code).strip() == "[]"
