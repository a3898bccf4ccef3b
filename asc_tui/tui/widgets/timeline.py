"""Pipeline timeline: one lane per pipe, drawn with `render_line` → `Strip`.

The whole frame (header, lanes, axis, summary) is computed once per (result, view, width) by
`TimelineModel.frame` — O(width · log n) — and cached; `render_line` only hands out strips.
Keys: + / - zoom, left / right (h / l) pan, home reset, < / > previous / next block
("all" averages the blocks).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from .textfit import fit

if TYPE_CHECKING:
    from ...devkit.views.timeline import Frame, TimelineModel

LABEL_W = 8
STAT_W = 6
SHADES = " ░▒▓█"
FALLBACK_COLORS = {
    "scalar": "white",
    "vec": "green",
    "cube": "magenta",
    "mte1": "cyan",
    "mte2": "blue",
    "mte3": "yellow",
    "fixpipe": "red",
}


def lane_width(width: int) -> int:
    """Columns of the lanes in a view `width` cells wide (label and share beside them)."""
    return max(width - LABEL_W - STAT_W, 4)


def cell_char(busy: float, wait: float) -> str:
    if busy > 0:
        return SHADES[min(4, max(1, math.ceil(busy * 4)))]
    return "·" if wait > 0 else " "


def shade_row(busy, wait=None) -> str:
    """`cell_char` for a whole row at once (numpy arrays in, one string out)."""
    import numpy as np  # loaded with the model; kept out of the start-up imports

    idx = np.where(busy > 0, np.clip(np.ceil(busy * 4), 1, 4), 0).astype(np.int8)
    chars = np.array(list(SHADES + "·"))[idx]
    if wait is not None:
        chars[(idx == 0) & (wait > 0)] = "·"
    return "".join(chars.tolist())


class TimelineView(Widget, can_focus=True):
    #: Not in the footer (the legend line names them; `?` lists them): app keys stay visible.
    BINDINGS = [
        Binding("plus,equals_sign", "zoom(2)", "Zoom in", show=False, id="timeline.zoom_in"),
        Binding("minus", "zoom(0.5)", "Zoom out", show=False, id="timeline.zoom_out"),
        Binding("left,h", "pan(-0.25)", "Pan left", show=False, id="timeline.pan_left"),
        Binding("right,l", "pan(0.25)", "Pan right", show=False, id="timeline.pan_right"),
        Binding("home,0", "reset_view", "Reset view", show=False, id="timeline.reset"),
        Binding(
            "greater_than_sign,full_stop", "block(1)", "Next block", show=False, id="timeline.next_block"
        ),
        Binding("less_than_sign,comma", "block(-1)", "Prev block", show=False, id="timeline.prev_block"),
    ]
    DEFAULT_CSS = """
    TimelineView { height: 1fr; min-height: 6; }
    TimelineView:focus { background: $boost; }
    """

    zoom = reactive(1.0)
    offset = reactive(0.0)  # view start as a fraction of the kernel time
    block = reactive(-1)  # -1: average of all blocks

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.model: TimelineModel | None = None
        self._cache_key = None
        self._lines: list[Strip] = []
        self.stale = False
        self.message = "no run yet: save an operator or press r"
        self.frame: Frame | None = None

    # -- data ------------------------------------------------------------------------------
    def show(
        self,
        model: TimelineModel | None,
        stale: bool = False,
        message: str = "no run yet: save an operator or press r",
    ) -> None:
        keep = self.model is not None and model is not None and self.model.n_blocks == model.n_blocks
        self.model = model
        self.stale = stale
        self.message = message
        if not keep:
            self.zoom, self.offset, self.block = 1.0, 0.0, -1
        self._cache_key = None
        self.refresh()

    def watch_zoom(self) -> None:
        self._clamp()
        self.refresh()

    def watch_offset(self) -> None:
        self.refresh()

    def watch_block(self) -> None:
        self.refresh()

    def _clamp(self) -> None:
        span = 1.0 / self.zoom
        self.offset = float(min(max(self.offset, 0.0), max(0.0, 1.0 - span)))

    # -- actions ---------------------------------------------------------------------------
    def action_zoom(self, factor: float) -> None:
        span = 1.0 / self.zoom
        centre = self.offset + span / 2
        self.zoom = float(min(max(self.zoom * factor, 1.0), 1e7))
        self.offset = centre - 1.0 / self.zoom / 2
        self._clamp()

    def action_pan(self, fraction: float) -> None:
        self.offset = self.offset + fraction / self.zoom
        self._clamp()

    def action_reset_view(self) -> None:
        self.zoom, self.offset = 1.0, 0.0

    def action_block(self, step: int) -> None:
        if self.model is None or not self.model.n_blocks:
            return
        n = self.model.n_blocks
        self.block = (self.block + 1 + step) % (n + 1) - 1

    # -- rendering -------------------------------------------------------------------------
    def _colors(self) -> dict[str, Style]:
        try:
            variables = self.app.theme_variables
        except Exception:
            variables = {}
        return {p: Style(color=variables.get(f"pipe-{p}", c)) for p, c in FALLBACK_COLORS.items()}

    def build_lines(self, width: int) -> list[Strip]:
        """All strips of the current view (also used by the benchmark, without a screen)."""
        key = (
            id(self.model),
            self.zoom,
            self.offset,
            self.block,
            width,
            self.size.height,
            self.stale,
            self.app.theme if self.is_attached else None,
        )
        if key == self._cache_key:
            return self._lines
        self._cache_key = key
        self._lines = self._render_frame(width)
        return self._lines

    def _render_frame(self, width: int) -> list[Strip]:
        dim = Style(dim=True)
        if self.model is None:
            return [Strip([Segment(self.message, dim)])]
        from ...devkit.profile.timing import overlap_parts  # loaded with the model, after first paint

        m = self.model
        lane_w = lane_width(width)
        t0 = self.offset * m.kernel_cycles
        t1 = t0 + m.kernel_cycles / self.zoom
        blk = None if self.block < 0 else self.block
        frame = m.frame(t0, t1, lane_w, blk)
        self.frame = frame
        mhz = m.em.clock_mhz
        which = (
            "all blocks (avg)" if blk is None else f"block {blk}/{m.n_blocks} (core {m.em.blocks[blk].core})"
        )
        head = [
            which,
            f"kernel {t0 / mhz:,.3f}–{t1 / mhz:,.3f} µs",
            f"+ {m.em.launch_overhead_us:.3f} µs launch (not drawn)",
            f"zoom {self.zoom:g}x",
            *(["STALE"] if self.stale else []),
        ]
        lines = [Strip([Segment(text, Style(bold=True))]) for text in fit(head, width)]
        colors = self._colors()
        for lane in frame.lanes:
            segs = [Segment(f"{lane.pipe:<{LABEL_W - 1}}│", dim)]
            style = colors.get(lane.pipe, Style())
            chars = shade_row(lane.busy, lane.wait)
            run_start = 0
            for i in range(1, len(chars) + 1):
                if i == len(chars) or (chars[i] == "·") != (chars[run_start] == "·"):
                    text = "".join(chars[run_start:i])
                    segs.append(Segment(text, dim if chars[run_start] == "·" else style))
                    run_start = i
            segs.append(Segment(f"│{lane.utilisation:4.0%}".ljust(STAT_W), dim))
            lines.append(Strip(segs))
        axis = _axis(t0 / mhz, t1 / mhz, lane_w)
        lines.append(Strip([Segment(" " * LABEL_W + axis, dim)]))
        busiest = max(frame.lanes, key=lambda lane: lane.utilisation, default=None)
        summary = [
            *fit(overlap_parts(m.overlap(blk)), width, " "),
            f"busiest {busiest.pipe if busiest else '-'}",
            f"{m.instructions:,} instructions",
        ]
        lines.extend(Strip([Segment(text, dim)]) for text in fit(summary, width))
        legend = ["█ busy", "▒ partly busy", "· waiting on an event", "+/- zoom", "←/→ pan", "</> block"]
        lines.extend(Strip([Segment(text, dim)]) for text in fit(legend, width, "  "))
        room = self.size.height - len(lines) - 1
        if room >= 2 and m.n_blocks > 1:  # tall panes (200×60): every block's activity
            lines.append(Strip([Segment("per block: busiest pipe's activity", Style(bold=True))]))
            accent = colors.get("mte2", Style())
            act, share = m.block_activity(t0, t1, lane_w)
            for b in range(min(m.n_blocks, room - 1)):
                mark = ">" if b == blk else " "
                lines.append(
                    Strip(
                        [
                            Segment(f"{mark}blk {b:<3}│", dim),
                            Segment(shade_row(act[b]), accent),
                            Segment(f"│{share[b]:4.0%}".ljust(STAT_W), dim),
                        ]
                    )
                )
        return [s.crop(0, width) for s in lines]

    def render_line(self, y: int) -> Strip:
        lines = self.build_lines(self.size.width)
        if y < len(lines):
            return lines[y].extend_cell_length(self.size.width)
        return Strip.blank(self.size.width)

    def text(self) -> str:
        """Plain text of the current view (tests, export)."""
        return "\n".join(s.text for s in self.build_lines(max(self.size.width, 40)))


def _axis(a_us: float, b_us: float, width: int) -> str:
    """Tick labels every ~16 columns, in µs."""
    chars = [" "] * width
    step = max(16, width // 6)
    for col in range(0, width - 6, step):
        label = f"|{a_us + (b_us - a_us) * col / width:.4g}"
        for j, ch in enumerate(label):
            if col + j < width:
                chars[col + j] = ch
    return "".join(chars)
