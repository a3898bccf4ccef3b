"""asc-tui: a terminal workbench for Ascend C operator authors (emulated NPU, profile, debug, bench)."""

from pathlib import Path

__version__ = "0.1.0"

PACKAGE_DIR = Path(__file__).resolve().parent
#: Operators and themes bundled with asc-tui: copied into the package by `pip install .`
#: (setup.py), read from the top of the source tree in a clone or an editable install.
_SHIPPED = PACKAGE_DIR.parent / "asc_tui_bundled"
BUNDLED_OPERATORS = (
    _SHIPPED / "operators" if (_SHIPPED / "operators").is_dir() else PACKAGE_DIR.parent / "operators"
)
BUNDLED_THEMES = _SHIPPED / "themes" if (_SHIPPED / "themes").is_dir() else PACKAGE_DIR.parent / "themes"
