"""Compare a run with the previous one: asv-style change marks, regressions and their causes.

The rule (sign, threshold, marks) is `regression.py`'s; this module applies it to history
records of the same operator + case + chip. A regression's explanation comes from
the history records: per-pipe busy time per core (which pipes grew) and per-line busy cycles
(which source lines changed cost, matched by their text so shifted lines are not "changed").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from .history import RunRecord
from .regression import Mark, is_regression, mark, slowdown, slowdown_text


@dataclass(frozen=True)
class Change:
    """This run against the previous one; `mark` is `regression.Mark` (asv compare's)."""

    mark: Mark
    ratio: float | None  # time / previous time
    previous_id: int | None = None
    previous_time_us: float | None = None
    previous_source_hash: str | None = None

    @property
    def slowdown(self) -> float | None:
        """time / previous − 1: +0.065 = 6.5% slower (the sign every front end shows)."""
        return None if not self.ratio else self.ratio - 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "mark": self.mark.value,
            "ratio": self.ratio,
            "slowdown": self.slowdown,
            "previous_id": self.previous_id,
            "previous_time_us": self.previous_time_us,
            "previous_source_hash": self.previous_source_hash,
        }


def change(current: RunRecord | None, previous: RunRecord | None, threshold: float) -> Change:
    prev_us = previous.time_us if previous is not None else None
    now_us = current.time_us if current is not None else None
    m = mark(now_us, prev_us, threshold)
    if m is Mark.NO_PREVIOUS:
        return Change(m, None)
    ratio = None if now_us is None else (now_us / prev_us if prev_us > 0 else 1.0)
    return Change(m, ratio, previous.id, prev_us, previous.source_hash)


@dataclass(frozen=True)
class PipeDelta:
    """Busy time of one pipe per core before and after (µs)."""

    pipe: str
    before_us: float
    after_us: float

    @property
    def delta_us(self) -> float:
        return self.after_us - self.before_us


@dataclass(frozen=True)
class LineDelta:
    """Busy cycles of one source line (all blocks) before and after."""

    file: str
    line: int
    text: str
    before_cycles: float
    after_cycles: float

    @property
    def delta_cycles(self) -> float:
        return self.after_cycles - self.before_cycles


@dataclass(frozen=True)
class Regression:
    operator: str
    case: str
    chip: str
    time_us: float
    previous_time_us: float
    previous_id: int | None
    source_changed: bool
    params_changed: dict
    source_hashes: tuple[str | None, str | None]  # (previous, now)
    pipes: tuple[PipeDelta, ...]  # pipes whose busy time grew, most growth first
    lines: tuple[LineDelta, ...]  # lines whose cost changed, largest change first

    @property
    def slowdown(self) -> float:
        """time / previous − 1 (positive: slower)."""
        return slowdown(self.time_us, self.previous_time_us)

    def message(self) -> str:
        out = [
            f"Performance regression detected: {slowdown_text(self.slowdown)} on {self.operator} "
            f"[{self.case}] ({self.previous_time_us:.3f} us -> {self.time_us:.3f} us vs run "
            f"#{self.previous_id})"
        ]
        if self.source_changed:
            out.append(f"  source changed: {self.source_hashes[0]} -> {self.source_hashes[1]}")
        if self.params_changed:
            out.append(
                "  params changed: " + ", ".join(f"{k} {a}->{b}" for k, (a, b) in self.params_changed.items())
            )
        if not self.source_changed and not self.params_changed:
            out.append("  same source and params: the chip model or the emulator changed")
        if self.pipes:
            out.append("  pipes whose busy time grew (per core):")
        for p in self.pipes:
            grow = f"{p.delta_us / p.before_us:+.1%}" if p.before_us > 0 else "new"
            out.append(
                f"    {p.pipe:<8}{p.before_us:10.3f} -> {p.after_us:10.3f} us  ({p.delta_us:+.3f} us, {grow})"
            )
        if self.lines:
            out.append("  source lines whose cost changed (busy cycles, all blocks):")
        for ln in self.lines:
            out.append(
                f"    {os.path.basename(ln.file)}:{ln.line}: {ln.before_cycles:,.0f} -> "
                f"{ln.after_cycles:,.0f} ({ln.delta_cycles:+,.0f})  {ln.text}"
            )
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "operator": self.operator,
            "case": self.case,
            "chip": self.chip,
            "time_us": self.time_us,
            "previous_time_us": self.previous_time_us,
            "previous_id": self.previous_id,
            "slowdown": self.slowdown,
            "source_changed": self.source_changed,
            "source_hashes": list(self.source_hashes),
            "params_changed": {k: list(v) for k, v in self.params_changed.items()},
            "pipes": [
                {"pipe": p.pipe, "before_us": p.before_us, "after_us": p.after_us, "delta_us": p.delta_us}
                for p in self.pipes
            ],
            "lines": [
                {
                    "file": ln.file,
                    "line": ln.line,
                    "text": ln.text,
                    "before_cycles": ln.before_cycles,
                    "after_cycles": ln.after_cycles,
                    "delta_cycles": ln.delta_cycles,
                }
                for ln in self.lines
            ],
            "message": self.message(),
        }


def pipe_deltas(current: RunRecord, previous: RunRecord) -> tuple[PipeDelta, ...]:
    """Pipes whose busy time per core grew, most growth first."""
    out = []
    for name in dict.fromkeys([*previous.pipes, *current.pipes]):
        before = previous.pipes[name].busy_us if name in previous.pipes else 0.0
        after = current.pipes[name].busy_us if name in current.pipes else 0.0
        if after - before > 1e-9 * max(before, 1.0):
            out.append(PipeDelta(name, before, after))
    return tuple(sorted(out, key=lambda d: -d.delta_us))


def line_deltas(current: RunRecord, previous: RunRecord, limit: int = 8) -> tuple[LineDelta, ...]:
    """Source lines whose cost changed. Lines are matched by file and text, so an edit that
    shifts line numbers does not read as every line changing; blank text falls back to the
    line number."""

    def ident(c) -> tuple:
        return (os.path.basename(c.file), c.text or f"#{c.line}")

    before: dict[tuple, list] = {}
    for c in previous.lines:
        slot = before.setdefault(ident(c), [c, 0.0])
        slot[1] += c.cycles
    after: dict[tuple, list] = {}
    for c in current.lines:
        slot = after.setdefault(ident(c), [c, 0.0])
        slot[1] += c.cycles
    out = []
    for key in dict.fromkeys([*after, *before]):
        b = before.get(key, [None, 0.0])
        a = after.get(key, [None, 0.0])
        if abs(a[1] - b[1]) > 1e-9 * max(b[1], 1.0):
            ref = a[0] or b[0]
            out.append(LineDelta(ref.file, ref.line, ref.text, b[1], a[1]))
    out.sort(key=lambda d: (-round(abs(d.delta_cycles), 3), d.file, d.line))
    return tuple(out[:limit])


def detect_regression(current: RunRecord, previous: RunRecord | None, threshold: float) -> Regression | None:
    """A regression when `current` is slower than `previous` by more than `threshold`."""
    if previous is None or not is_regression(current.time_us, previous.time_us, threshold):
        return None
    params = {
        k: (previous.params.get(k), current.params.get(k))
        for k in dict.fromkeys([*previous.params, *current.params])
        if previous.params.get(k) != current.params.get(k)
    }
    return Regression(
        current.operator,
        current.case or "",
        current.chip or "",
        current.time_us,
        previous.time_us,
        previous.id,
        source_changed=current.source_hash != previous.source_hash,
        params_changed=params,
        source_hashes=(previous.source_hash, current.source_hash),
        pipes=pipe_deltas(current, previous),
        lines=line_deltas(current, previous),
    )
