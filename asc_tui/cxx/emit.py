"""Place generated Python statements on the line numbers of the C++ they come from.

A statement goes on its C++ line when that line is free, or is joined with `;` to the simple
statement already there at the same indentation; otherwise (a second block header on one C++
line, a one-line `{ ... }` body) it takes the next free line. Lines only move forward, so a
drift stays local and the next statement on a later C++ line is back on its own number.
"""

from __future__ import annotations


class Emitter:
    def __init__(self, first_line: int):
        self.first = first_line
        self.rows: list[tuple[int, str, bool]] = []  # (indent, text, is_header)
        self.last = first_line - 1  # last 1-based line used

    def emit(self, line: int, indent: int, text: str, header: bool = False) -> int:
        """Put `text` at `line` (1-based) or the first usable line after it; returns the line used."""
        if self.rows and line <= self.last:
            ind, prev, was_header = self.rows[-1]
            if not header and not was_header and ind == indent and prev:
                self.rows[-1] = (ind, f"{prev}; {text}", False)
                return self.last
            line = self.last + 1
        while self.last + 1 < line:
            self.rows.append((0, "", False))
            self.last += 1
        self.rows.append((indent, text, header))
        self.last += 1
        return self.last

    def source(self) -> str:
        """The generated module text: blank lines up to the first statement, then the rows."""
        out = ["\n" * (self.first - 1)]
        for indent, text, _ in self.rows:
            out.append(("    " * indent + text if text else "") + "\n")
        return "".join(out)
