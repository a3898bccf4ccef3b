"""Bracket depth outside string literals: the one scanner the preprocessor (macro arguments)
and the emitter (`if c: a; b` headers) both need, so escapes are handled alike in both."""

from __future__ import annotations

from collections.abc import Iterator


def outside_strings(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(i, ch, depth) for each character of `text` from `start` that is not part of a string or
    character literal (quotes included); `depth` counts the brackets open once `ch` is read."""
    depth = 0
    quote = None
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        else:
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            yield i, ch, depth
        i += 1
