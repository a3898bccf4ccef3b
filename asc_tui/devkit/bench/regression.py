"""The regression rule, once: how a run compares with the previous one, for every front end.

Sign convention (everywhere: bench, reports, the workbench, watch): the change is the *slowdown*,
time / previous time − 1, so a slower run is positive ("+6.2% slower") and a faster one negative.
A run is a regression when its slowdown exceeds the threshold, a fraction taken from the project
config (`[thresholds] regression`, default 1%: the emulator is deterministic, so it is never
noise). Marks follow `asv compare`: '+' slower beyond the threshold, '-' faster beyond it, ' '
within it, '!' failing now (the previous run had a time), 'x' nothing to compare with.
"""

from __future__ import annotations

import enum

from ...config import Thresholds as _ConfigThresholds

#: The config's default regression threshold (a fraction); callers pass the loaded config's.
DEFAULT_THRESHOLD: float = _ConfigThresholds().regression


class Mark(enum.StrEnum):
    SLOWER = "+"
    FASTER = "-"
    SAME = " "
    FAILING = "!"
    NO_PREVIOUS = "x"


def slowdown(time_us: float | None, previous_us: float | None) -> float | None:
    """time / previous − 1: +0.062 is 6.2% slower, −0.058 is 5.8% faster; None if unknown."""
    if time_us is None or not previous_us or previous_us <= 0:
        return None
    return time_us / previous_us - 1.0


def mark(time_us: float | None, previous_us: float | None, threshold: float) -> Mark:
    """The asv-style mark of this run against the previous one."""
    if previous_us is None:
        return Mark.NO_PREVIOUS
    if time_us is None:
        return Mark.FAILING
    ratio = time_us / previous_us if previous_us > 0 else 1.0
    if ratio > 1 + threshold:
        return Mark.SLOWER
    if ratio < 1 / (1 + threshold):
        return Mark.FASTER
    return Mark.SAME


def slowdown_text(s: float | None) -> str:
    """'+6.2% slower', '-5.8% faster', '0.0%' (within a rounding step) or '' when unknown."""
    if s is None:
        return ""
    if abs(s) < 0.0005:
        return "0.0%"
    return f"{s:+.1%} {'slower' if s > 0 else 'faster'}"


def is_regression(time_us: float | None, previous_us: float | None, threshold: float) -> bool:
    """Slower than the previous run by more than `threshold` (a fraction): mark '+'."""
    return mark(time_us, previous_us, threshold) is Mark.SLOWER
