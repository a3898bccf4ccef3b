"""Bench figures as text: the `asc-tui bench` table, the change and history columns the reports
use, and the cells of the workbench's bench table. Changes follow `regression.py`: positive is
slower."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..bench.regression import Mark, is_regression, mark, slowdown, slowdown_text
from ..text import sparkline

if TYPE_CHECKING:  # the workbench imports this module before the emulator stack loads
    from ..bench.history import RunRecord
    from ..bench.results import BenchResult, CaseResult

#: The workbench's bench table, most telling first, so 80 columns show current, change and
#: verdict without scrolling.
BENCH_ROW_COLUMNS = (
    "operator",
    "case",
    "current µs",
    "Δ prev",
    "verdict",
    "vs base",
    "baseline µs",
    "previous µs",
    "history",
    "chip",
)


def change_text(c: CaseResult) -> str:
    """The change column: asv mark and slowdown, e.g. '+ +6.5% slower', '0.0%', 'x (no previous run)'."""
    ch = c.change
    if ch.slowdown is None:
        return {Mark.NO_PREVIOUS: "x (no previous run)", Mark.FAILING: "! (failing now)"}.get(
            ch.mark, ch.mark.value
        )
    return _marked(ch.mark, ch.slowdown)


def _marked(m: Mark, s: float) -> str:
    text = slowdown_text(s)
    return text if m is Mark.SAME or text == "0.0%" else f"{m.value} {text}"


def history_changes(recs: Sequence[RunRecord], threshold: float) -> list[tuple[Mark, float | None]]:
    """Each run's mark and slowdown against the run before it (the first has none)."""
    out: list[tuple[Mark, float | None]] = []
    prev = None
    for r in recs:
        prev_us = prev.time_us if prev is not None else None
        out.append((mark(r.time_us, prev_us, threshold), slowdown(r.time_us, prev_us)))
        prev = r
    return out


def history_rows(recs: Sequence[RunRecord], threshold: float) -> list[list[str]]:
    """run, when, kind, source, time (us), change — one row per recorded run."""
    rows = []
    for r, (m, s) in zip(recs, history_changes(recs, threshold)):
        rows.append(
            [
                f"#{r.id}",
                time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.ts)),
                r.kind,
                r.source_hash or "",
                f"{r.time_us:.3f}",
                "" if s is None else _marked(m, s),
            ]
        )
    return rows


def bench_table_text(r: BenchResult) -> str:
    """What `asc-tui bench` prints: one line per case, then regressions and failures."""
    out = [f"{r.operator} on {r.chip}" + (f" — baseline: {r.baseline}" if r.baseline else "")]
    out += ["  " + e.format().replace("\n", "\n  ") for e in r.errors]
    if r.cases:
        out.append(
            f"  {'case':<16}{'time us':>11}{'GFLOPS':>9}{'GB/s':>9}{'roofline':>10}"
            f"{'base us':>11}{'relative':>10}  {'verdict':<14}change"
        )
    for c in r.cases:
        out.append(
            f"  {c.case:<16}{_f(c.time_us, '{:.3f}'):>11}{_f(c.gflops, '{:.1f}'):>9}"
            f"{_f(c.gbps, '{:.1f}'):>9}{_f(c.roofline_fraction, '{:.1%}'):>10}"
            f"{_f(c.baseline_time_us, '{:.3f}'):>11}{_f(c.relative, '{:.1%}'):>10}  "
            f"{c.verdict.value if c.verdict else '—':<14}{change_text(c)}"
        )
        out += ["    " + e.format().replace("\n", "\n    ") for e in c.errors]
        out += [f"    warning: {w}" for w in c.warnings]
    out += [reg.message() for reg in r.regressions]
    fails = r.failures()
    if fails:
        out.append(f"bench failed on: {', '.join(fails)}")
    return "\n".join(out) + "\n"


def _f(v: float | None, fmt: str) -> str:
    return "—" if v is None else fmt.format(v)


def bench_row_cells(
    operator: str,
    case: str,
    chip: str,
    current: float | None,
    baseline: float | None,
    previous: float | None,
    verdict: str,
    history: Sequence[float],
    threshold: float,
) -> tuple[str, ...]:
    """The workbench row in `BENCH_ROW_COLUMNS` order. 'Δ prev' is the slowdown vs the previous
    run ('+6.2% !' beyond the regression threshold); 'vs base' is baseline time / own time."""
    s = slowdown(current, previous)
    relative = baseline / current if current and baseline else None
    delta = "-" if s is None else f"{s:+.1%}" + (" !" if is_regression(current, previous, threshold) else "")
    return (
        operator,
        case,
        f"{current:,.3f}" if current is not None else "-",
        delta,
        verdict or "-",
        f"{relative:.1%}" if relative is not None else "-",
        f"{baseline:,.3f}" if baseline else "-",
        f"{previous:,.3f}" if previous else "-",
        sparkline(history, width=12),
        chip,
    )
