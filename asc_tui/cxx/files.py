"""Which files make a C++ operator: a kernel `.asc`/`.cpp` and its `.py` spec beside it.

Import-light (pathlib only): operator discovery asks these questions before the emulator or the
translator loads.
"""

from __future__ import annotations

from pathlib import Path

CXX_SUFFIXES = (".asc", ".cpp", ".cc", ".cxx")
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".inc")


def kernel_for_spec(spec: Path) -> Path | None:
    """The C++ kernel beside a spec file (`add.py` → `add.asc`), if there is one."""
    for s in CXX_SUFFIXES:
        cand = spec.with_suffix(s)
        if cand.is_file():
            return cand
    return None


def spec_for_kernel(kernel: Path) -> Path:
    """Where a kernel's spec lives: beside it, same stem, `.py`."""
    return kernel.with_suffix(".py")


def cxx_kernels(base: Path) -> list[Path]:
    """C++ operators in `base` and `base/cpp`: kernels whose spec is beside them."""
    out = []
    for d in (base, base / "cpp"):
        if d.is_dir():
            out += [
                k
                for k in sorted(d.iterdir())
                if k.suffix in CXX_SUFFIXES and not k.stem.startswith("_") and spec_for_kernel(k).is_file()
            ]
    return out
