"""asc-tui: a terminal workbench for Ascend C operator authors (emulated NPU, profile, debug, bench)."""

from pathlib import Path

__version__ = "0.1.0"

PACKAGE_DIR = Path(__file__).resolve().parent
#: Operators and themes bundled with the source tree (editable installs and clones).
BUNDLED_OPERATORS = PACKAGE_DIR.parent / "operators"
BUNDLED_THEMES = PACKAGE_DIR.parent / "themes"
