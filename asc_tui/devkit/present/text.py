"""Small text forms shared by the presenters: the sparkline and durations in µs."""

from __future__ import annotations

from collections.abc import Iterable

SPARK = "▁▂▃▄▅▆▇█"


def sparkline(values: Iterable[float | None], width: int | None = None) -> str:
    """One block per value (the last `width` values when given), scaled min → ▁, max → █;
    a flat series is all ▁. None values are skipped."""
    vals = [v for v in values if v is not None]
    if width is not None:
        vals = vals[-width:]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    if hi - lo <= 1e-12:
        return SPARK[0] * len(vals)
    top = len(SPARK) - 1
    return "".join(SPARK[min(int((v - lo) / (hi - lo) * top + 0.5), top)] for v in vals)


def us_text(x: float | None) -> str:
    """A duration given in µs, shown in µs below 1 ms and in ms above: '12.500 µs', '1.250 ms'."""
    if x is None:
        return "n/a"
    if x >= 1000:
        return f"{x / 1000:,.3f} ms"
    return f"{x:,.3f} µs"
