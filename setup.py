"""Ship the bundled operators and themes with the package (`asc_tui_bundled/` beside `asc_tui/`).

They live at the top of the source tree (operators/, themes/) where users and the README point;
a non-editable install (`pip install .`) copies them into the wheel so `asc-tui run add_custom`
and the themes work without the source tree. They stay outside the `asc_tui` package on purpose:
frames inside `asc_tui/` are the emulator's, never the user's line. It also builds the one C
file, `asc_tui/npu/_fp16.c` (optional). Everything else is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BUNDLED = ("operators", "themes")


class BuildPyWithBundled(build_py):
    def run(self):
        super().run()
        for name in BUNDLED:
            shutil.copytree(
                HERE / name,
                Path(self.build_lib) / "asc_tui_bundled" / name,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                dirs_exist_ok=True,
            )


#: fp16 <-> fp32 conversions in C (asc_tui/npu/_fp16.c). Optional: without a C compiler the
#: install goes on and asc_tui/npu/fp16.py converts with numpy (same bits, slower).
FP16 = Extension("asc_tui.npu._fp16", ["asc_tui/npu/_fp16.c"], extra_compile_args=["-O3"], optional=True)

setup(cmdclass={"build_py": BuildPyWithBundled}, ext_modules=[FP16])
