"""Inline SVG pictures for the HTML bench report: breakdown bars, pipeline timeline, trend line.

Plain strings, no dependencies, well-formed XML (the report embeds them as is and the tests parse
them back). Timelines are downsampled to the picture's width: intervals closer than half a pixel
are merged, so a kernel with 10⁵ instructions still gives a small file.
"""

from __future__ import annotations

from html import escape

import numpy as np

from ...npu.pipes import PIPE_NAMES
from ...npu.results import KIND_WAIT, KIND_WORK, EmulationResult

PIPE_COLOURS = {
    "scalar": "#8c8c8c",
    "vec": "#2f7ed8",
    "cube": "#8e44ad",
    "mte1": "#16a085",
    "mte2": "#e67e22",
    "mte3": "#c0392b",
    "fixpipe": "#7f8c8d",
}
WAIT_COLOUR = "#f1c40f"


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>" + "".join(body) + "</svg>"
    )


def breakdown_svg(
    rows: list[tuple[str, str, float, float]], width: int = 720, title: str = "pipe breakdown"
) -> str:
    """Bars per (key, label): busy ratio (solid) then wait ratio (yellow), of kernel time."""
    bar_h, gap, label_w = 18, 6, 150
    height = len(rows) * (bar_h + gap) + gap + 16
    scale = width - label_w - 120
    body = []
    y = gap
    for key, name, busy, wait in rows:
        bw = max(0.0, min(busy, 1.0)) * scale
        ww = max(0.0, min(wait, 1.0 - min(busy, 1.0))) * scale
        colour = PIPE_COLOURS.get(key, WAIT_COLOUR if key == "sync_wait" else "#555555")
        body.append(f'<text x="4" y="{y + 13}" font-size="12" font-family="monospace">{escape(name)}</text>')
        body.append(f'<rect x="{label_w}" y="{y}" width="{scale}" height="{bar_h}" fill="#eeeeee"/>')
        body.append(
            f'<rect class="busy" data-key="{escape(key)}" x="{label_w}" y="{y}" '
            f'width="{bw:.1f}" '
            f'height="{bar_h}" fill="{colour}"><title>{escape(name)} busy '
            f"{busy:.1%}</title></rect>"
        )
        if ww > 0:
            body.append(
                f'<rect class="wait" x="{label_w + bw:.1f}" y="{y}" width="{ww:.1f}" '
                f'height="{bar_h}" fill="{WAIT_COLOUR}"><title>{escape(name)} wait '
                f"{wait:.1%}</title></rect>"
            )
        body.append(
            f'<text x="{label_w + scale + 6}" y="{y + 13}" font-size="12" '
            f'font-family="monospace">{busy:.1%} / {wait:.1%}</text>'
        )
        y += bar_h + gap
    body.append(
        f'<text x="{label_w}" y="{y + 10}" font-size="10" fill="#666666">busy / wait as '
        f"a share of kernel time per core (wait in yellow)</text>"
    )
    return _svg(width, height, body, title)


def _merge(starts: np.ndarray, ends: np.ndarray, min_gap: float) -> list[tuple[float, float]]:
    if len(starts) == 0:
        return []
    order = np.argsort(starts, kind="stable")
    out: list[list[float]] = []
    for s, e in zip(starts[order], ends[order]):
        if out and s - out[-1][1] <= min_gap:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([float(s), float(e)])
    return [(a, b) for a, b in out]


def timeline_svg(em: EmulationResult, block: int = 0, width: int = 800, title: str | None = None) -> str:
    """One lane per pipe used by `block`: busy intervals coloured by pipe, waits in yellow."""
    b = em.blocks[block]
    lane_h, label_w, axis_h = 16, 70, 22
    used = [i for i, _ in enumerate(PIPE_NAMES) if np.any(b.pipe == i)]
    span = max(float(em.kernel_cycles), 1.0)
    scale = (width - label_w - 10) / span
    height = len(used) * (lane_h + 4) + axis_h + 8
    body = []
    y = 4
    for i in used:
        name = PIPE_NAMES[i]
        body.append(f'<text x="4" y="{y + 12}" font-size="12" font-family="monospace">{escape(name)}</text>')
        body.append(
            f'<rect x="{label_w}" y="{y}" width="{width - label_w - 10}" height="{lane_h}" fill="#f6f6f6"/>'
        )
        on = b.pipe == i
        for kind, colour, cls in (
            (KIND_WAIT, WAIT_COLOUR, "wait"),
            (KIND_WORK, PIPE_COLOURS.get(name, "#555555"), "busy"),
        ):
            sel = on & (b.kind == kind)
            for s, e in _merge(b.start[sel], b.end[sel], 0.5 / scale):
                w = max((e - s) * scale, 0.5)
                body.append(
                    f'<rect class="{cls}" x="{label_w + s * scale:.1f}" y="{y}" '
                    f'width="{w:.1f}" height="{lane_h}" fill="{colour}"/>'
                )
        y += lane_h + 4
    us = span / em.clock_mhz
    for k in range(5):
        x = label_w + (width - label_w - 10) * k / 4
        anchor = "start" if k == 0 else "end" if k == 4 else "middle"
        body.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}" stroke="#333333"/>')
        body.append(
            f'<text x="{x:.1f}" y="{y + 16}" font-size="10" text-anchor="{anchor}">{us * k / 4:.2f} us</text>'
        )
    return _svg(width, height, body, title or f"pipeline timeline, block {b.block} (core {b.core})")


def trend_svg(
    times_us: list[float],
    marks: list[str] | None = None,
    width: int = 400,
    height: int = 70,
    title: str = "time per run",
) -> str:
    """A line of simulated time over recorded runs (oldest left); regressions as red dots."""
    body = []
    if times_us:
        lo, hi = min(times_us), max(times_us)
        rng = hi - lo or max(hi, 1e-9) * 0.1
        n = len(times_us)
        left, right = 70, 10
        xs = [left + (width - left - right) * (i / (n - 1) if n > 1 else 0.5) for i in range(n)]
        ys = [height - 8 - (height - 16) * (t - lo) / rng for t in times_us]
        body.append(f'<text x="4" y="14" font-size="10">{hi:.3f} us</text>')
        body.append(f'<text x="4" y="{height - 4}" font-size="10">{lo:.3f} us</text>')
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys))
        body.append(f'<polyline points="{pts}" fill="none" stroke="#2f7ed8" stroke-width="2"/>')
        for i, (x, y) in enumerate(zip(xs, ys)):
            bad = marks is not None and i < len(marks) and marks[i] == "+"
            body.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{3 if bad else 2}" '
                f'fill="{"#c0392b" if bad else "#2f7ed8"}"><title>{times_us[i]:.3f} us'
                f"</title></circle>"
            )
    return _svg(width, height, body, title)
