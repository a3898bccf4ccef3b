"""Bench reports to show the team: Markdown (tables a reviewer can paste) and one self-contained
HTML file (inline CSS, inline SVG; nothing fetched from the network).

Both are rendered from the same list of `Section`s, so they always say the same thing:
configuration, comparison table, regressions, breakdown, advice and history trend per case.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from html import escape

from ..bench.history import RunRecord
from ..bench.results import BenchResult, CaseResult
from ..text import params_text, sparkline
from .bench import change_text, history_changes, history_rows
from .svg import breakdown_svg, timeline_svg, trend_svg


@dataclass
class Section:
    title: str
    level: int = 2
    paragraphs: list[str] = field(default_factory=list)
    tables: list[tuple[list[str], list[list[str]]]] = field(default_factory=list)
    bullets: list[str] = field(default_factory=list)
    pre: list[str] = field(default_factory=list)
    svgs: list[str] = field(default_factory=list)  # HTML only


def _num(v: float | None, fmt: str = "{:.3f}") -> str:
    return "—" if v is None else fmt.format(v)


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.1%}"


def breakdown_rows(c: CaseResult) -> list[tuple[str, str, float, float, float | None]]:
    """(key, label, µs per core, share of kernel time, wait share) for the units in use.

    The profiler's categories (Compute (Vector), HBM Read (MTE2), ..., Sync Wait) when it ran,
    otherwise the raw pipes of the run."""
    prof = c.profile
    if prof is not None:
        waits = prof.pipeline.wait_ratios
        return [(b.key, b.name, b.time_us, b.ratio, waits.get(b.key)) for b in prof.breakdown if b.time_us]
    em = c.report.emulation if c.report is not None else None
    if em is None:
        return []
    n = max(em.cores_used, 1)
    return [
        (k, k, s.busy_us / n, s.ratio, s.wait_ratio)
        for k, s in em.pipe_stats().items()
        if s.instructions or s.busy_us
    ]


def build_sections(
    result: BenchResult, trends: dict[str, list[RunRecord]], with_svg: bool = False
) -> list[Section]:
    """The report's sections in order: heading, configuration, comparison, regressions, then per
    case its breakdown, advice and history."""
    th = result.thresholds
    secs = [_title_section(result), _configuration_section(result), _comparison_section(result)]
    if result.regressions:
        secs.append(Section("Regressions", pre=[r.message() for r in result.regressions]))
    for c in result.cases:
        s = _breakdown_section(c, with_svg)
        if s is not None:
            secs.append(s)
        if c.advice:
            secs.append(Section(f"Advice — {c.case}", bullets=list(c.advice)))
        h = _history_section(c, trends, th.regression, with_svg)
        if h is not None:
            secs.append(h)
    return secs


def _title_section(result: BenchResult) -> Section:
    """The heading: what was benchmarked, when, and what the verdicts mean."""
    th = result.thresholds
    return Section(
        f"Benchmark: {result.operator} on {result.chip}",
        level=1,
        paragraphs=[
            f"Generated {time.strftime('%Y-%m-%d %H:%M:%S %Z')} by asc-tui bench. Times are "
            "simulated task durations on the emulated chip (kernel + launch overhead).",
            f"Verdicts: ship ≥ {th.ship:.0%} of the baseline, optimise {th.optimise:.0%}–"
            f"{th.ship:.0%}, must optimise < {th.optimise:.0%}; regression: slower than the "
            f"previous run by more than {th.regression:.1%}.",
        ],
    )


def _configuration_section(result: BenchResult) -> Section:
    """What ran: the operator, its source, the chip and baseline, and each case's tensors and params."""
    first = next((c.record for c in result.cases if c.record is not None), None)
    conf = Section("Configuration")
    conf.tables.append(
        (
            ["operator", "file", "source", "chip", "baseline"],
            [
                [
                    result.operator,
                    os.path.basename(result.path or ""),
                    (first.source_hash or "") if first else "",
                    result.chip or "",
                    result.baseline or "none",
                ]
            ],
        )
    )
    conf.tables.append(
        (
            ["case", "tensors (dtype[shape])", "params", "block_dim"],
            [
                [
                    c.case,
                    ", ".join(f"{k}: {v}" for k, v in (c.record.shapes if c.record else {}).items()),
                    params_text(c.record.params if c.record else {}, ", "),
                    str(c.record.block_dim if c.record else ""),
                ]
                for c in result.cases
            ],
        )
    )
    return conf


def _comparison_section(result: BenchResult) -> Section:
    """Every case's figures against the baseline and the previous run, and the errors."""
    cmp_ = Section("Comparison")
    cmp_.tables.append(
        (
            [
                "case",
                "time (us)",
                "GFLOPS",
                "GB/s",
                "roofline",
                "baseline (us)",
                "relative",
                "verdict",
                "change",
            ],
            [
                [
                    c.case,
                    _num(c.time_us),
                    _num(c.gflops, "{:.1f}"),
                    _num(c.gbps, "{:.1f}"),
                    _pct(c.roofline_fraction),
                    _num(c.baseline_time_us),
                    _pct(c.relative),
                    c.verdict.value if c.verdict else "—",
                    change_text(c),
                ]
                for c in result.cases
            ],
        )
    )
    errs = (
        [f"{c.case}: {e.format()}" for c in result.cases for e in c.errors]
        + [e.format() for e in result.errors]
        + [f"{c.case}: warning: {w}" for c in result.cases for w in c.warnings]
    )
    if errs:
        cmp_.pre.append("\n".join(errs))
    return cmp_


def _breakdown_section(c: CaseResult, with_svg: bool) -> Section | None:
    """Where one case's time went: per unit, the costliest lines, the roofline; None without figures."""
    rows = breakdown_rows(c)
    if not rows:
        return None
    s = Section(f"Breakdown — {c.case}")
    if c.roofline is not None:
        s.paragraphs.append(
            f"{c.roofline.bound} bound: {c.roofline.fraction:.1%} of the chip's roofline "
            f"(HBM {c.roofline.peak_gbps:g} GB/s, {c.roofline.unit} peak "
            f"{c.roofline.peak_tflops * 1e3:,.0f} GFLOPS)"
        )
    s.tables.append(
        (
            ["unit", "us/core", "busy", "wait"],
            [[label, f"{t:.3f}", f"{r:.1%}", _pct(w)] for _k, label, t, r, w in rows],
        )
    )
    if c.record and c.record.lines:
        s.tables.append(
            (
                ["line", "cycles (all blocks)", "source"],
                [
                    [f"{os.path.basename(ln.file)}:{ln.line}", f"{ln.cycles:,.0f}", ln.text]
                    for ln in c.record.lines[:8]
                ],
            )
        )
    if with_svg:
        s.svgs.append(
            breakdown_svg(
                [(k, label, r, w or 0.0) for k, label, _t, r, w in rows], title=f"breakdown {c.case}"
            )
        )
        em = c.report.emulation if c.report is not None else None
        if em is not None and em.blocks:  # the slowest block sets the kernel time
            slow = max(range(len(em.blocks)), key=lambda i: em.blocks[i].t_end - em.blocks[i].t_start)
            s.svgs.append(timeline_svg(em, slow, title=f"pipeline timeline {c.case}, block {slow} (slowest)"))
    return s


def _history_section(
    c: CaseResult, trends: dict[str, list[RunRecord]], regression: float, with_svg: bool
) -> Section | None:
    """One case's earlier runs: the trend and each run's change; None without a timed run."""
    recs = [r for r in trends.get(c.case, []) if r.time_us is not None]
    if not recs:
        return None
    h = Section(f"History — {c.case}")
    times = [r.time_us for r in recs]
    h.paragraphs.append(
        f"trend (oldest → newest): {sparkline(times)}  "
        f"{times[0]:.3f} → {times[-1]:.3f} us over {len(times)} runs"
    )
    h.tables.append(
        (["run", "when", "kind", "source", "time (us)", "change"], history_rows(recs, regression))
    )
    if with_svg:
        h.svgs.append(
            trend_svg(
                times,
                [m.value for m, _ in history_changes(recs, regression)],
                title=f"history {c.case}",
            )
        )
    return h


# -- renderers ----------------------------------------------------------------------------------


def _md_cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def to_markdown(result: BenchResult, trends: dict[str, list[RunRecord]]) -> str:
    out: list[str] = []
    for s in build_sections(result, trends):
        out.append(f"{'#' * s.level} {s.title}\n")
        for p in s.paragraphs:
            out.append(p + "\n")
        for head, rows in s.tables:
            out.append("| " + " | ".join(_md_cell(h) for h in head) + " |")
            out.append("|" + "|".join("---" for _ in head) + "|")
            for row in rows:
                out.append("| " + " | ".join(_md_cell(v) for v in row) + " |")
            out.append("")
        for b in s.bullets:
            out.append(f"- {b}")
        if s.bullets:
            out.append("")
        for p in s.pre:
            out.append("```text\n" + p + "\n```\n")
    return "\n".join(out).rstrip() + "\n"


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1100px;
color:#222;padding:0 1em}
h1{font-size:1.5em;border-bottom:2px solid #2f7ed8;padding-bottom:.2em}
h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f0f4fa}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.ship td.verdict{color:#1e8449;font-weight:bold}
tr.optimise td.verdict{color:#b9770e;font-weight:bold}
tr.must-optimise td.verdict{color:#c0392b;font-weight:bold}
pre{background:#fbeeee;border-left:4px solid #c0392b;padding:.6em;overflow-x:auto}
figure{margin:.6em 0}
""".strip()


def _is_num(v: str) -> bool:
    try:
        float(v.replace(",", "").rstrip("%").lstrip("+-"))
        return True
    except ValueError:
        return False


def to_html(result: BenchResult, trends: dict[str, list[RunRecord]]) -> str:
    """A well-formed (XML-parsable) HTML5 document with everything inline."""
    e = escape
    out = [
        "<!DOCTYPE html>",
        '<html xmlns="http://www.w3.org/1999/xhtml" lang="en">',
        '<head><meta charset="utf-8"/>',
        f"<title>{e(f'asc-tui bench: {result.operator} on {result.chip}')}</title>",
        f"<style>{CSS}</style></head>",
        "<body>",
    ]
    for s in build_sections(result, trends, with_svg=True):
        out.append(f"<h{s.level}>{e(s.title)}</h{s.level}>")
        for p in s.paragraphs:
            out.append(f"<p>{e(p)}</p>")
        for head, rows in s.tables:
            out.append(
                "<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr></thead><tbody>"
            )
            vcol = head.index("verdict") if "verdict" in head else None
            for row in rows:
                cls = (
                    row[vcol].replace(" ", "-")
                    if vcol is not None and row[vcol] in ("ship", "optimise", "must optimise")
                    else ""
                )
                cells = []
                for i, v in enumerate(row):
                    klass = "verdict" if i == vcol else "num" if i and _is_num(v) else ""
                    cells.append(f'<td class="{klass}">{e(v)}</td>' if klass else f"<td>{e(v)}</td>")
                out.append((f'<tr class="{e(cls)}">' if cls else "<tr>") + "".join(cells) + "</tr>")
            out.append("</tbody></table>")
        if s.bullets:
            out.append("<ul>" + "".join(f"<li>{e(b)}</li>" for b in s.bullets) + "</ul>")
        for p in s.pre:
            out.append(f"<pre>{e(p)}</pre>")
        for svg in s.svgs:
            out.append(f"<figure>{svg}</figure>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def render(result: BenchResult, trends: dict[str, list[RunRecord]], fmt: str) -> str:
    if fmt == "markdown":
        return to_markdown(result, trends)
    if fmt == "html":
        return to_html(result, trends)
    raise ValueError(f"report format must be markdown or html, got {fmt!r}")
