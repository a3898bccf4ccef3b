"""The profile report: the tables a user would screenshot (`asc-tui profile`) and the workbench's
report tab shows. Rich renderables printed to a console (NO_COLOR honoured), or plain text."""

from __future__ import annotations

import io
import os
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..profile.profiler import Profile, ProfileSource
from ..text import params_text, size_text
from ..text import us_text as _us

_BAR = 24
_SEV = {"high": "bold red", "medium": "yellow", "info": "cyan"}


def console(file=None) -> Console:
    out = file or sys.stdout
    width = None if out.isatty() else 120
    return Console(file=out, width=width, highlight=False, soft_wrap=False, no_color="NO_COLOR" in os.environ)


def _table(title: str) -> Table:
    return Table(
        title=title, title_justify="left", title_style="bold", show_edge=False, pad_edge=False, box=None
    )


def _bar(share: float) -> str:
    n = share * _BAR
    full = int(n)
    return "█" * full + ("▌" if n - full >= 0.5 else "")


def report_text(p: Profile, width: int, pipeline_report: bool = True, lines: int | None = 8) -> str:
    """The report as plain text `width` columns wide (no colour, no terminal codes)."""
    buf = io.StringIO()
    con = Console(file=buf, width=width, no_color=True, color_system=None, force_terminal=False)
    render(p, con, pipeline_report=pipeline_report, lines=lines)
    return buf.getvalue().rstrip()


def render(
    p: Profile,
    con: Console,
    pipeline_report: bool = False,
    lines: int | None = None,
    extras: list[str] | None = None,
) -> None:
    title = Text(p.operator, style="bold")
    if p.case:
        title.append(f" [{p.case}]")
    title.append(f"  on {p.chip or 'unknown chip'}", style="dim")
    if p.source is ProfileSource.MSPROF:
        title.append("  (imported msprof data)", style="magenta")
    con.print(title)
    if p.params:
        con.print(Text("  params  " + params_text(p.params, "  ")))
    if p.shapes:
        con.print(Text(f"  shape   {p.shape}"))
    cores = f"{p.pipeline.core_balance.cores_used} {p.core_kind} core(s)"
    con.print(
        Text.assemble(
            ("  total   ", ""),
            (_us(p.time_us), "bold"),
            (
                f"  (kernel {_us(p.kernel_us)} + launch "
                f"{_us(max(p.time_us - p.kernel_us, 0.0))}; block_dim "
                f"{p.block_dim} on {cores} @ {p.clock_mhz:g} MHz)",
                "dim",
            ),
        )
    )
    con.print()
    t = _table("Where the time goes (mean per core)")
    t.add_column("", no_wrap=True)
    t.add_column("time", justify="right", no_wrap=True)
    t.add_column("share", justify="right", no_wrap=True)
    t.add_column("busy", justify="right", no_wrap=True)
    t.add_column("", no_wrap=True)
    for b in p.breakdown:
        hot = b.key == p.bottleneck
        style = "bold red" if hot else ("dim" if not b.time_us else "")
        bar = Text(_bar(b.share), style="red" if hot else "green")
        if hot:
            bar.append("  ← bottleneck", style="bold red")
        if not b.time_us:
            t.add_row(
                Text(b.name, style="dim"), Text("n/a" if b.time_us is None else "—", style="dim"), "", "", ""
            )
            continue
        t.add_row(Text(b.name, style=style), _us(b.time_us), f"{b.share:6.1%}", f"{b.ratio:6.1%}", bar)
    con.print(t)
    con.print(
        Text(
            "  share = of the summed rows; busy = of kernel time. Sync Wait = time the "
            "core only waited on events.",
            style="dim",
        )
    )
    r = p.roofline
    if r is not None:
        con.print()
        style = {"memory": "yellow", "compute": "green", "latency": "magenta"}[r.bound]
        con.print(
            Text.assemble(
                ("Roofline  ", "bold"),
                (f"{r.bound}-bound", f"bold {style}"),
                (f" — {r.fraction:.1%} of the chip's limit for this operator", ""),
            )
        )
        con.print(
            Text(
                f"  memory roof  {_us(r.memory_us):>12}  {size_text(r.bytes)} at "
                f"{r.peak_gbps:,.0f} GB/s HBM\n"
                f"  compute roof {_us(r.compute_us):>12}  {r.flops / 1e6:,.2f} MFLOP at "
                f"{r.peak_tflops:,.1f} TFLOPS ({r.unit})\n"
                f"  fixed costs  {_us(r.fixed_us):>12}  launch + start-up of the busiest pipe",
                style="dim",
            )
        )
    if pipeline_report:
        _pipeline(p, con)
    advice = p.pipeline.advice
    con.print()
    if advice:
        con.print(Text("Advice", style="bold"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column()
        for a in advice:
            grid.add_row(
                Text("  ●", style=_SEV.get(a.severity, "")),
                Text.assemble((a.message, ""), (f"  [{a.rule}: {a.threshold}]", "dim")),
            )
        con.print(grid)
    else:
        con.print(Text("Advice  none of the rules fired", style="bold green"))
    if lines:
        _lines(p, con, lines)
    for e in extras or []:
        con.print(Text(e, style="dim"))


def _pipeline(p: Profile, con: Console) -> None:
    pl = p.pipeline
    con.print()
    t = _table("Pipeline report")
    t.add_column("unit", no_wrap=True)
    t.add_column("utilisation", justify="right")
    t.add_column("waiting", justify="right")
    t.add_column("", no_wrap=True)
    names = {
        "scalar": "Scalar",
        "vec": "Vector",
        "cube": "Matrix (cube)",
        "mte1": "MTE1 L1→L0",
        "mte2": "MTE2 GM→local",
        "mte3": "MTE3 local→GM",
        "fixpipe": "FixPipe",
    }
    for k, name in names.items():
        u, w = pl.utilisation.get(k, 0.0), pl.wait_ratios.get(k, 0.0)
        if u == 0 and w == 0:
            continue
        t.add_row(name, f"{u:.1%}", f"{w:.1%}", Text(_bar(min(u, 1.0)), style="green"))
    con.print(t)
    if pl.overlap is not None:
        con.print(
            f"  overlap  {pl.overlap:.1%} of the shorter of compute/data movement runs "
            f"alongside the other ({pl.overlap_kernel:.1%} of kernel time both run)"
        )
    else:
        con.print("  overlap  n/a (not in the imported data)")
    cb = pl.core_balance
    chip = f" of {cb.chip_cores}" if cb.chip_cores else ""
    con.print(
        f"  cores    {cb.cores_used}{chip} used in {cb.waves} wave(s); slowest core "
        f"{cb.slowest_core}: {_us(cb.slowest_us)} vs mean {_us(cb.mean_us)} "
        f"({cb.ratio:.2f}×)"
    )
    if p.capacity:
        used = ", ".join(
            f"{m.upper()} {size_text(u)} of {size_text(c)} ({u / c:.0%})"
            for m, (u, c) in sorted(p.capacity.items())
            if c
        )
        con.print(f"  memory   {used}")


def _lines(p: Profile, con: Console, n: int) -> None:
    con.print()
    if not p.lines:
        con.print(Text("Hot lines  n/a (no per-line data)", style="dim"))
        return
    t = _table(f"Hot lines (top {min(n, len(p.lines))} of {len(p.lines)})")
    rows = [
        (f"{os.path.basename(ln.file)}:{ln.line}", f"{ln.calls:,}", f"{ln.cycles:,.0f}")
        + (f"{ln.share:.1%}", ln.pipe)
        for ln in p.lines[:n]
    ]
    heads = ("line", "calls", "cycles", "share", "pipe")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    for h, w in zip(heads, widths):  # figures are never cut: the code column gives way
        t.add_column(h, justify="left" if h == "pipe" else "right", no_wrap=True, min_width=w)
    code_w = max(8, min(60, con.width - sum(widths) - len(widths)))
    t.add_column("code", overflow="ellipsis", no_wrap=True, max_width=code_w)
    for ln, row in zip(p.lines[:n], rows):
        t.add_row(*row, Text(ln.code))
    con.print(t)
