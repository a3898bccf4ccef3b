"""Where a value is written in TOML text, so a file's mistakes can be named at line:column.

tomli gives values, not positions; chip files, theme files and the config all report a bad value
where the user wrote it. A small line scan is enough for the flat `[table]` + `key = value` files
they are.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]")


def value_position(text: str, table: str, key: str) -> tuple[int, int] | None:
    """1-based (line, column) of `key`'s value inside `[table]` ("" = top level), or None."""
    current = ""
    assign = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=\s*")
    for i, line in enumerate(text.splitlines(), 1):
        m = _HEADER.match(line)
        if m:
            current = m.group(1)
            continue
        m = assign.match(line)
        if m and current == table:
            return i, m.end() + 1
    return None
