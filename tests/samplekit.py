"""Helpers for the sample-directory tests (tests/test_samples*.py, tests/test_sample_*.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

SAMPLES = Path(__file__).parent / "samples"


def copy_sample(tmp_path, name="vadd") -> Path:
    """A copy of the bundled test sample `name` (tests/samples/) to edit: the original stays."""
    dst = tmp_path / name
    shutil.copytree(SAMPLES / name, dst)
    return dst


def edit(path: Path, old: str, new: str) -> None:
    """Replace `old` (which must be there: a stale edit fails loudly) in the file."""
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
