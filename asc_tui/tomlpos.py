"""Where a value is written in TOML text, so a file's mistakes can be named at line:column.

tomli gives values, not positions; chip files, theme files and the config all report a bad value
where the user wrote it. A small line scan is enough for the flat `[table]` + `key = value` files
they are. The same loaders share how a file that is not UTF-8, or not TOML, is placed.
"""

from __future__ import annotations

import re
from pathlib import Path

import tomli

_HEADER = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]")


class TomlTextError(ValueError):
    """A TOML file that cannot be read as text or parsed: the message and its 1-based position."""

    def __init__(self, message: str, line: int | None, column: int | None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def value_position(text: str, table: str, key: str) -> tuple[int, int] | None:
    """1-based (line, column) of `key`'s value inside `[table]` ("" = top level), or None."""
    found = _assignment(text, table, key)
    return (found[0], found[2]) if found else None


def key_position(text: str, table: str, key: str) -> tuple[int, int] | None:
    """1-based (line, column) where `key` itself is written inside `[table]`, or None."""
    found = _assignment(text, table, key)
    return (found[0], found[1]) if found else None


def table_line(text: str, table: str) -> int | None:
    """1-based line of the `[table]` header, or None."""
    for i, line in enumerate(text.splitlines(), 1):
        m = _HEADER.match(line)
        if m and m.group(1) == table:
            return i
    return None


def _assignment(text: str, table: str, key: str) -> tuple[int, int, int] | None:
    """(line, key column, value column) of `key = ...` inside `[table]`."""
    current = ""
    assign = re.compile(rf"^(\s*)[\"']?{re.escape(key)}[\"']?\s*=\s*")
    for i, line in enumerate(text.splitlines(), 1):
        m = _HEADER.match(line)
        if m:
            current = m.group(1)
            continue
        m = assign.match(line)
        if m and current == table:
            return i, len(m.group(1)) + 1, m.end() + 1
    return None


def read_toml(path: str | Path) -> tuple[str, dict]:
    """The text of a TOML file and its data; `TomlTextError` (with line and column) when the
    bytes are not UTF-8 or the text is not TOML, `OSError` when it cannot be read."""
    text = decode_text(Path(path).read_bytes())
    return text, parse_toml(text)


def decode_text(data: bytes) -> str:
    """UTF-8 text (TOML's only encoding), else `TomlTextError` at the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise TomlTextError(
            f"not a UTF-8 text file (byte 0x{data[exc.start]:02x}): is it a binary file?", line, column
        ) from None


def parse_toml(text: str) -> dict:
    """tomli's data, else `TomlTextError` with tomli's message and position."""
    try:
        return tomli.loads(text)
    except tomli.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        line = getattr(exc, "lineno", None) or (int(m.group(1)) if m else None)
        column = getattr(exc, "colno", None) or (int(m.group(2)) if m else None)
        if m is None:  # (at end of document)
            m = re.search(r"\s*\(at end of document\)", msg)
            if m:
                line = text.count("\n") + 1
                column = len(text) - (text.rfind("\n") + 1) + 1
        raise TomlTextError(msg[: m.start()].strip() if m else msg, line, column) from None
