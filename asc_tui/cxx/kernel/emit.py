"""Place generated Python statements on the line numbers of the C++ they come from.

A statement goes on its C++ line when that line is free, or joins what is already there: the
simple statement at the same indentation (`a; b`), or the block header it belongs to
(`if c: return` for `if (c) return;`). Otherwise (a second block header on one C++ line) it
takes the next free line. Lines only move forward, so a drift stays local and the next statement
on a later C++ line is back on its own number. If a block whose body started on its header's
line goes on past that line, the body moves onto its own line (Python needs that).
"""

from __future__ import annotations

from ..source.scan import outside_strings


class Emitter:
    def __init__(self, first_line: int):
        self.first = first_line
        # [indent, text, is_header, inline body indent or None]
        self.rows: list[list] = []
        self.last = first_line - 1  # last 1-based line used

    def emit(self, line: int, indent: int, text: str, header: bool = False) -> int:
        """Put `text` at `line` (1-based) or the first usable line after it; returns the line used."""
        if self.rows:
            row = self.rows[-1]
            ind, prev, was_header, inline = row
            if line <= self.last and not header:
                if not was_header and ind == indent and prev:
                    row[1] = f"{prev}; {text}"
                    return self.last
                if was_header and inline is None and indent == ind + 1 and prev.endswith(":"):
                    row[1] = f"{prev} {text}"
                    row[3] = indent
                    return self.last
                if was_header and inline == indent:
                    row[1] = f"{prev}; {text}"
                    return self.last
            if inline is not None and indent >= inline:
                self._split_inline(row)  # the block goes on: its body gets its own line
            if line <= self.last:
                line = self.last + 1
        while self.last + 1 < line:
            self.rows.append([0, "", False, None])
            self.last += 1
        self.rows.append([indent, text, header, None])
        self.last += 1
        return self.last

    def mark(self) -> tuple:
        """A point to ask `wrote_since` about (did a block get any statement?)."""
        return (len(self.rows), self.rows[-1][1] if self.rows else None)

    def wrote_since(self, mark: tuple) -> bool:
        n0, text = mark
        if self.rows and n0 and self.rows[n0 - 1][1] != text:
            return True
        return any(r[1] for r in self.rows[n0:])

    def _split_inline(self, row: list) -> None:
        ind, text, _h, inline = row
        head, _, body = _split_header(text)
        row[1], row[3] = head, None
        self.rows.append([inline, body, False, None])
        self.last += 1

    def source(self) -> str:
        """The generated module text: blank lines up to the first statement, then the rows."""
        out = ["\n" * (self.first - 1)]
        for indent, text, _h, _i in self.rows:
            out.append(("    " * indent + text if text else "") + "\n")
        return "".join(out)


def _split_header(text: str) -> tuple[str, str, str]:
    """`if c: a; b` → (`if c:`, ' ', `a; b`): the colon that ends the header (outside strings,
    brackets and lambdas is enough for generated code: the header is `kw expr:`)."""
    for i, ch, depth in outside_strings(text):
        if ch == ":" and depth == 0 and text[i + 1 : i + 2] == " " and text[i + 2 : i + 3] != "=":
            return text[: i + 1], " ", text[i + 2 :]
    return text, "", ""
