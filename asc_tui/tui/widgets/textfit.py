"""Fitting short phrases into a width without cutting them: wrap between phrases instead."""

from __future__ import annotations


def fit(parts: list[str], width: int, sep: str = " · ") -> list[str]:
    """`parts` joined by `sep`, a new line started wherever the next part would not fit (a part
    longer than the width gets its own line; callers keep numbers in short parts)."""
    lines: list[str] = []
    for p in parts:
        if lines and len(lines[-1]) + len(sep) + len(p) <= width:
            lines[-1] += sep + p
        else:
            lines.append(p)
    return lines
