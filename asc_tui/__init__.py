"""asc-tui: a terminal workbench for Ascend C operator authors (emulated NPU, profile, debug, bench)."""

from pathlib import Path

__version__ = "0.1.0"

#: The Ascend C API level the kernel twin (`asc_tui.ascendc`, and the C++ front end on top of it)
#: follows: the kernel API of the public asc-devkit samples, CANN 9 style
#: (design/ascendc-sources.md), for the dav-2201 architecture, the Ascend 910B / Atlas A2 family
#: (design/npu-model.md); `__NPU_ARCH__` in translated C++ is this figure.
ASCENDC_CANN = "9"
ASCENDC_ARCH = "dav-2201"
ASCENDC_API = f"asc-devkit kernel API (CANN {ASCENDC_CANN} samples), arch {ASCENDC_ARCH}"


def install_hint(extra: str) -> str:
    """How to add an optional extra: editable, from the checkout, as the quick start installs
    asc-tui (a plain `pip install '.[x]'` would replace that install with a site-packages copy,
    and later edits of the checkout would stop taking effect)."""
    return f"pip install -e '.[{extra}]' (in the asc-tui checkout)"


PACKAGE_DIR = Path(__file__).resolve().parent
#: Operators and themes bundled with asc-tui: copied into the package by `pip install .`
#: (setup.py), read from the top of the source tree in a clone or an editable install.
_SHIPPED = PACKAGE_DIR.parent / "asc_tui_bundled"
BUNDLED_OPERATORS = (
    _SHIPPED / "operators" if (_SHIPPED / "operators").is_dir() else PACKAGE_DIR.parent / "operators"
)
BUNDLED_THEMES = _SHIPPED / "themes" if (_SHIPPED / "themes").is_dir() else PACKAGE_DIR.parent / "themes"
