"""Figures as text for every room and both front ends: nan/inf/n/a, the sparkline, µs, memory sizes."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping

#: How a figure that is not there reads (a field the run never filled, a JSON null).
MISSING = "n/a"


def figure(x: float | int | None, spec: str = "g") -> str:
    """A figure with its format spec; NaN reads 'nan', infinities 'inf' and '-inf', a missing
    figure `MISSING`: the one convention of every presenter (a NaN output must not crash one)."""
    if x is None:
        return MISSING
    if isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    try:
        return format(x, spec)
    except (TypeError, ValueError):  # (a count given as a float, a figure as text)
        return str(x)


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
    if x is None or not math.isfinite(x):
        return figure(x)
    if x >= 1000:
        return f"{x / 1000:,.3f} ms"
    return f"{x:,.3f} µs"


#: Binary units (1 KiB = 1024 B): the one convention for every memory size asc-tui prints.
SIZE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def size_text(n: float) -> str:
    """A size given in bytes, in binary units with one decimal, the decimal dropped when the
    figure is whole: '512 B', '191.8 KiB', '192 KiB', '1.5 GiB'. Exact byte counts in error
    messages ('196608 B') are the other form, and stay bytes."""
    value, unit = float(n), SIZE_UNITS[0]
    for unit in SIZE_UNITS:
        if abs(value) < 1024 or unit == SIZE_UNITS[-1]:
            break
        value /= 1024
    if unit == "B" or value == int(value):
        return f"{value:,.0f} {unit}"
    return f"{value:,.1f} {unit}"


def size_in(n: float, unit: str) -> float:
    """A size given in bytes in one of `SIZE_UNITS` (a table column of one unit: 'UB KiB')."""
    return n / 1024 ** SIZE_UNITS.index(unit)


def param_phrases(params: Mapping[str, object] | None) -> list[str]:
    """Tunable parameters as `k=v` phrases in their given order (what a narrow cell wraps)."""
    return [f"{k}={v}" for k, v in (params or {}).items()]


def params_text(params: Mapping[str, object] | None, sep: str = " ") -> str:
    """Tunable parameters as `k=v` pairs in their given order ('BLOCK=64 TILE=8'); empty for
    none. The one form of every log line, title, table cell and report (`sep` joins them)."""
    return sep.join(param_phrases(params))


#: The case a run without `--case` uses reads this way.
DEFAULT_CASE = "default"


def case_text(shown: str | None, chosen: str | None = None) -> str:
    """The case to name beside a result: the case of the result `shown` (its figures are that
    case's), else the case the session `chosen` for the next run, else 'default'."""
    return shown or chosen or DEFAULT_CASE
