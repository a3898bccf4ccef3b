"""A run report as lines with levels: what `asc-tui run` prints and the workbench's log shows.

One presenter for a Python operator's run, a sample directory's run (its launches, main()'s
output, the verify script) and a worker result that never got a report, so both front ends say
the same thing in the same words. A line carries its level (the words carry the meaning too, so
plain text loses nothing), the file and line it is about when there is one, and its indent: 0 a
line about the run (the workbench prefixes the operator's name), 1 an item of a block (warnings,
kernel log), 2 a detail of the line above (snippet, hint, worst elements).

Every figure goes through `text.figure`: NaN, Inf and a missing figure read 'nan', 'inf' and
'n/a' here and everywhere, never a crash or a made-up number.
"""

from __future__ import annotations

import enum
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..outcome import Verdict
from ..text import figure

if TYPE_CHECKING:
    from ...npu.errors import ErrorInfo
    from ..precision import NonFiniteOrigin, OutputPrecision, PrecisionReport
    from ..run.runner import RunReport, SampleRun
    from ..run.worker import WorkResult

#: Kernel log lines shown per run (the rest are counted; `--json` has them all).
KERNEL_LOG_LINES = 200
#: main()'s stdout lines and the verify script's last lines shown per sample run.
MAIN_LINES, VERIFY_LINES = 20, 10


class Level(enum.StrEnum):
    """What a line is; the workbench colours it, the words carry the meaning alone."""

    INFO = "info"
    OK = "ok"
    WARN = "warn"
    ERROR = "error"
    DIM = "dim"  # progress chatter, hints
    KERNEL = "kernel"  # the operator's own printf output


#: The level a verdict is shown at.
VERDICT_LEVEL: dict[Verdict, Level] = {
    Verdict.PASS: Level.OK,
    Verdict.WARN: Level.WARN,
    Verdict.FAIL: Level.ERROR,
    Verdict.ERROR: Level.ERROR,
    Verdict.RAN: Level.INFO,
}


@dataclass(frozen=True)
class Line:
    text: str
    level: Level = Level.INFO
    file: str | None = None
    line: int | None = None
    indent: int = 0  # 0 about the run, 1 an item of a block, 2 a detail of the line above


def work_lines(result: WorkResult, host_times: bool = True) -> list[Line]:
    """A worker result: its report's lines, or the worker's error (or how it ended) without one."""
    if result.report is not None:
        return report_lines(result.report, host_times)
    lines = [ln for e in result.errors for ln in error_lines(e)]
    if not lines and result.status != "ok":
        cause = result.exit_cause
        lines.append(
            Line(result.status if cause == result.status else f"{result.status} ({cause})", Level.ERROR)
        )
    return lines


def report_lines(report: RunReport, host_times: bool = True) -> list[Line]:
    """Every line of a run: `head_lines`, then `tail_lines` (the command line prints its timing
    summary between the two)."""
    return head_lines(report, host_times) + tail_lines(report)


def head_lines(report: RunReport, host_times: bool = True) -> list[Line]:
    """How the run went: its stages, then its errors."""
    lines = stage_lines(report, host_times)
    for e in report.errors:
        lines += error_lines(e)
    return lines


def tail_lines(report: RunReport) -> list[Line]:
    """What it said: warnings and kernel log, the precision check, a sample's own output (its
    verify script's lines here only, not in its error), where the first NaN/Inf came from, then
    the verdict."""
    lines: list[Line] = []
    em = report.emulation
    if em is not None:
        for w in em.warnings:
            lines.append(
                Line(
                    f"warning {os.path.basename(w.file or '')}:{w.line}: {w.message} (x{w.count})",
                    Level.WARN,
                    w.file,
                    w.line,
                    1,
                )
            )
        for entry in em.log[:KERNEL_LOG_LINES]:
            lines.append(Line(entry.format(), Level.KERNEL, entry.file, entry.line, 1))
        if len(em.log) > KERNEL_LOG_LINES:
            lines.append(
                Line(f"... {len(em.log) - KERNEL_LOG_LINES} more kernel log lines", Level.DIM, indent=1)
            )
    if report.precision is not None:  # (first: a sample's verify output can run long)
        lines.append(precision_line(report.precision))
        lines += overwrite_lines(report.precision)
    if report.sample:
        lines += sample_lines(report.sample)
    if report.nonfinite is not None:
        lines.append(origin_line(report.nonfinite))
    lines.append(verdict_line(report))
    return lines


def verdict_line(report: RunReport) -> Line:
    """The run's verdict (`devkit.outcome`), the line a reader looks for last."""
    v = report.verdict
    return Line(f"verdict {v}", VERDICT_LEVEL[v])


def stage_lines(report: RunReport, host_times: bool = True) -> list[Line]:
    """One line per stage with its host time (left out for reproducible logs)."""
    lines = []
    for s in report.stages:
        ms = s.seconds * 1000 if s.seconds is not None else None
        took = f" {figure(ms, '.1f'):>9} ms" if host_times else ""
        detail = (s.detail or "").removeprefix(f"{report.operator} ")
        mark = "ok " if s.ok else "ERR"
        lines.append(Line(f"{mark} {s.name:<8}{took}  {detail}".rstrip(), Level.OK if s.ok else Level.ERROR))
    return lines


def error_lines(e: ErrorInfo) -> list[Line]:
    """The error with its file:line, then the source line and the hint as details."""
    loc = e.location()
    lines = [Line(f"{e.kind} error: {loc + ': ' if loc else ''}{e.message}", Level.ERROR, e.file, e.line)]
    if e.snippet:
        lines.append(Line(f"{e.line} | {e.snippet}", Level.ERROR, e.file, e.line, 2))
    if e.hint:
        lines.append(Line(f"hint: {e.hint}", Level.DIM, indent=2))
    return lines


def sample_lines(sample: SampleRun) -> list[Line]:
    """A sample directory's own output: its launches, main()'s stdout, the verify script's last
    lines, and why asc-tui's precision check did not run when it did not."""
    lines = []
    for ln in sample.launches:
        lines.append(
            Line(
                f"launch {ln.get('kernel')} (line {figure(ln.get('line'), 'd')}): "
                f"{figure(ln.get('blocks'), 'd')} blocks, {figure(ln.get('time_us'), '.3f')} us",
                line=ln.get("line"),
            )
        )
    for text in (sample.stdout or "").splitlines()[:MAIN_LINES]:
        lines.append(Line(f"main: {text}"))
    lines += verify_lines(sample)
    if sample.precision:
        lines.append(Line(f"precision {sample.precision}"))
    return lines


def verify_lines(sample: SampleRun) -> list[Line]:
    """The verify script's last lines (its conclusion), once: its error does not repeat them."""
    v = sample.verify
    if v is None:
        return []
    level = Level.INFO if v.get("exit") == 0 else Level.ERROR
    return [
        Line(f"verify_result.py: {text}", level)
        for text in (v.get("output") or "").strip().splitlines()[-VERIFY_LINES:]
    ]


def precision_line(p: PrecisionReport) -> Line:
    """The verdict over every output: NaN/Inf counts when there are any, the worst figures."""
    verdict = Verdict(p.verdict)
    outs = p.outputs
    if not outs:
        return Line(f"precision {verdict}: no outputs", VERDICT_LEVEL[verdict])
    nan, inf = _total(o.nan for o in outs), _total(o.inf for o in outs)
    nonfinite = f"NaN {figure(nan, 'd')}, Inf {figure(inf, 'd')}, " if nan != 0 or inf != 0 else ""
    cosine = math.nan if p.made_nonfinite else _worst((o.cosine_similarity for o in outs), lo=True)
    worst_abs = _worst(o.max_abs_error for o in outs)
    worst_rel = _worst(o.mean_rel_error for o in outs)
    text = (
        f"precision {verdict}: {nonfinite}max abs err {figure(worst_abs, '.3g')}, "
        f"mean rel err {figure(worst_rel, '.3g')}, cosine {figure(cosine, '.6f')}"
    )
    reason = p.reason
    return Line(text + (f" ({reason})" if reason else ""), VERDICT_LEVEL[verdict])


def output_lines(o: OutputPrecision, worst: int = 5) -> list[Line]:
    """One output's figures against its thresholds, why the verdict, and its worst elements."""
    verdict = Verdict(o.verdict)
    lines = [
        Line(
            f"precision {o.name} ({o.dtype}): {verdict}  NaN {figure(o.nan, 'd')}, Inf {figure(o.inf, 'd')}, "
            f"max abs err {figure(o.max_abs_error, '.4g')} (atol {figure(o.atol, 'g')}, rtol "
            f"{figure(o.rtol, 'g')}), mean rel err {figure(o.mean_rel_error, '.4g')}, cosine "
            f"{figure(o.cosine_similarity, '.6f')}",
            VERDICT_LEVEL[verdict],
        )
    ]
    if o.reason:
        lines.append(Line(f"why: {o.reason}", Level.DIM, indent=2))
    for i, got, want in list(o.worst)[:worst]:
        lines.append(Line(f"[{i}] got {figure(got, '.6g')} want {figure(want, '.6g')}", Level.DIM, indent=2))
    return lines


def overwrite_lines(p: PrecisionReport) -> list[Line]:
    """Inputs the kernel wrote into (the golden saw them as they were): each one a FAIL."""
    return [Line(f"precision FAIL: {n.message}", Level.ERROR, n.file, n.line) for n in p.overwritten]


def origin_line(origin: NonFiniteOrigin) -> Line:
    """Where the first NaN/Inf came from, at the user's line."""
    return Line(f"first NaN/Inf: {origin.describe()}", Level.ERROR, origin.file, origin.line)


def plain(lines: Iterable[Line], indent: str = "  ") -> str:
    """Lines as the command line prints them: indented, one a line."""
    return "".join(f"{indent}{'  ' * ln.indent}{ln.text}\n" for ln in lines)


def _total(values: Iterable[int | None]) -> int | None:
    """A sum of counts, None if any count is missing."""
    vals = list(values)
    return None if any(v is None for v in vals) else sum(vals)


def _worst(values: Iterable[float | None], lo: bool = False) -> float | None:
    """The largest (`lo`: smallest) figure; NaN if any is NaN, None if any is missing."""
    vals = list(values)
    if any(v is None for v in vals):
        return None
    if any(math.isnan(v) for v in vals):
        return math.nan
    return min(vals) if lo else max(vals)
