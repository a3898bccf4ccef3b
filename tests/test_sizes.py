"""Memory sizes print one way everywhere: binary units (1 KiB = 1024 B), `devkit.text.size_text`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from asc_tui.devkit.text import size_in, size_text

PACKAGE = Path(__file__).resolve().parents[1] / "asc_tui"


@pytest.mark.parametrize(
    "n, text",
    [
        (0, "0 B"),
        (512, "512 B"),
        (1023, "1,023 B"),
        (1024, "1 KiB"),
        (4096 + 102, "4.1 KiB"),
        (196352, "191.8 KiB"),
        (196608, "192 KiB"),
        (24 << 20, "24 MiB"),
        (1.5 * (1 << 30), "1.5 GiB"),
        (3 << 40, "3 TiB"),
        (5000 << 40, "5,000 TiB"),
    ],
)
def test_size_text(n, text):
    assert size_text(n) == text


def test_size_in_a_column_unit():
    assert size_in(32 * 1024 + 102, "KiB") == pytest.approx(32.0996, abs=1e-4)
    assert size_in(3 << 20, "MiB") == 3


def test_no_module_formats_sizes_in_decimal_units_or_by_hand():
    """KB/MB/GB as printed units, or `/ 1024` in a format string, outside the one formatter
    (msprof's own CSV column names, e.g. `GM_to_UB_datas(KB)`, are its file format)."""
    pattern = re.compile(r"""f["'][^"']*(\{[^}]*/ ?1024[^}]*\}|\} ?[KMG]B\b(?!/s))""")
    hits = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "msprof.py":
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(PACKAGE)}:{i}: {line.strip()}")
    assert hits == []
