"""The benchmark diff (`D`, or enter on a Bench row): the saved baseline and the current run side
by side — breakdown bars with the change per category, both timelines on one time axis, and the
source lines whose cost changed most. Every figure comes from `devkit.benchdiff.BenchDiff`, the
same object `asc-bench --against` prints, so the two never disagree.

Rendered for the screen's width: at 80 columns the bars shrink and labels shorten; numbers are
never cut (a long source line's text is, after its figures).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget

from ..lifecycle import while_mounted
from ..messages import FrozenMessage
from ..widgets.log_pane import Level
from ..widgets.profile_pane import SHORT, bar
from ..widgets.textfit import fit
from ..widgets.timeline import SHADES

if TYPE_CHECKING:
    from ...devkit.bench.diff import BenchDiff, Lanes

BASELINE_NAME = "baseline"  # what `B` saves and `b` compares with


def _signed(x: float, digits: int = 3) -> str:
    """`+0.123` / `-0.123`, and never `-0.000`."""
    if abs(x) < 0.5 * 10**-digits:
        x = 0.0
    return f"{x:+.{digits}f}"


def _shade(frac: float) -> str:
    if frac <= 0:
        return " "
    return SHADES[min(4, max(1, math.ceil(frac * 4)))]


def lane_row(lanes: Lanes | None, pipe: str, span_us: float, width: int) -> str:
    """One pipe's busy shading over [0, span_us) in `width` columns (blank past the run's end)."""
    if lanes is None:
        return "(not stored)".ljust(width)[:width]
    step = span_us / width
    return "".join(_shade(lanes.at(pipe, i * step, (i + 1) * step)) for i in range(width))


def _axis(span_us: float, width: int) -> str:
    chars = [" "] * width
    step = max(14, width // 4)
    for col in range(0, width - 5, step):
        for j, ch in enumerate(f"|{span_us * col / width:.3g}"):
            if col + j < width:
                chars[col + j] = ch
    end = f"{span_us:.3g} µs|"
    if len(end) < width:
        chars[width - len(end) :] = list(end)
    return "".join(chars)


def _fit(parts: list[str], width: int) -> str:
    return "\n".join(fit(parts, width))


def diff_text(d: BenchDiff, width: int) -> Text:
    """The whole diff for a screen `width` columns wide."""
    width = max(width, 40)
    out = Text()
    rel = f"{d.relative:.1%} of baseline speed" if d.relative is not None else ""
    head = [f"{d.operator} [{d.case}] on {d.chip}", f"baseline {d.name!r} (run #{d.baseline_id})"]
    out.append(_fit(head, width) + "\n", "bold")
    task = [
        f"task (kernel + launch): {d.baseline_us:.3f} → {d.current_us:.3f} µs",
        f"{_signed(d.delta_us)} µs",
        *([rel] if rel else []),
    ]
    out.append(_fit(task, width) + "\n")
    # -- breakdown ----------------------------------------------------------------------------
    name_w = 18 if width >= 100 else 10
    nums_w = 27  # "  base   now    Δ" figures
    bar_w = max(4, (width - name_w - nums_w - 4) // 2)
    top = max([max(c.before_us, c.after_us) for c in d.categories] or [1.0]) or 1.0
    out.append("\n")
    unit = "busy µs/core" if name_w >= 12 else "µs/core"
    out.append(
        f"{unit:<{name_w}} {'baseline':<{bar_w}} {'current':<{bar_w}} {'base':>8} {'now':>8} {'Δ':>8}\n",
        "bold",
    )
    for c in d.categories:
        label = c.name if name_w >= 18 else SHORT.get(c.key, c.key)
        out.append(f"{label[:name_w]:<{name_w}} ")
        out.append(bar(c.before_us / top, bar_w), "dim cyan")
        out.append(" ")
        out.append(bar(c.after_us / top, bar_w), "cyan")
        style = "bold red" if c.delta_us > 1e-3 else ("green" if c.delta_us < -1e-3 else "")
        out.append(f" {c.before_us:8.3f} {c.after_us:8.3f} ")
        out.append(f"{_signed(c.delta_us):>8}\n", style)
    # -- timelines on one axis ----------------------------------------------------------------
    lanes_b, lanes_c = d.baseline_lanes, d.current_lanes
    span = max(lanes_b.kernel_us if lanes_b else 0.0, lanes_c.kernel_us if lanes_c else 0.0)
    if span > 0:
        label_w = 11
        lane_w = max(10, width - label_w - 1)
        title = ["timeline: kernel time on one axis", f"0–{span:.3f} µs", "launch not drawn"]
        out.append("\n" + _fit(title, width) + "\n", "bold")
        pipes = list(dict.fromkeys([*(lanes_b.busy if lanes_b else {}), *(lanes_c.busy if lanes_c else {})]))
        for pipe in pipes:
            out.append(f"{pipe:<7}base│", "dim")
            out.append(lane_row(lanes_b, pipe, span, lane_w) + "\n", "dim cyan")
            out.append(f"{'':<7} now│", "dim")
            out.append(lane_row(lanes_c, pipe, span, lane_w) + "\n", "cyan")
        out.append(" " * label_w + _axis(span, lane_w) + "\n", "dim")
    # -- source lines -------------------------------------------------------------------------
    out.append(
        "\n" + _fit(["source lines whose cost changed most", "busy µs, all blocks"], width) + "\n", "bold"
    )
    if not d.lines:
        out.append("no line changed cost\n", "dim")
    for ln in d.lines:
        figures = f"{ln.where:<16} {_signed(ln.delta_us):>9} µs  {ln.before_us:.3f}→{ln.after_us:.3f}"
        style = "red" if ln.delta_us > 0 else "green"
        out.append(figures, style)
        room = width - len(figures) - 2
        if room > 8 and ln.text:
            text = ln.text if len(ln.text) <= room else ln.text[: room - 1] + "…"
            out.append("  " + text, "dim")
        out.append("\n")
    out.append("\n" + _fit(["esc closes", f"same figures as `asc-bench --against {d.name}`"], width), "dim")
    return out


class DiffView(Widget):
    DEFAULT_CSS = "DiffView { height: auto; }"

    def __init__(self, diff: BenchDiff, **kwargs):
        super().__init__(**kwargs)
        self.diff = diff

    def render(self) -> Text:
        return diff_text(self.diff, self.size.width or 80)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(diff_text(self.diff, width).plain.splitlines())


class BenchDiffScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,D", "dismiss", "Close")]
    DEFAULT_CSS = """
    BenchDiffScreen { align: center middle; }
    BenchDiffScreen > VerticalScroll { width: 100%; height: 100%; background: $surface;
                                       padding: 0 1; }
    """

    def __init__(self, diff: BenchDiff):
        super().__init__()
        self.diff = diff

    def compose(self):
        with VerticalScroll():
            yield DiffView(self.diff, id="diff-view")

    @property
    def plain(self) -> str:
        return diff_text(self.diff, self.size.width - 2 or 80).plain


@dataclass(eq=False)
class DiffReady(FrozenMessage):
    """The diff of one run against the saved baseline, or why there is none."""

    diff: BenchDiff | None
    note: str = ""


class DiffActions:
    """Mixin for `Workbench`: `D` and enter on a Bench row open the diff of that row's run."""

    def on_data_table_row_selected(self, event) -> None:
        if getattr(event.data_table, "id", None) == "bench-table" and event.row_key is not None:
            self.open_bench_diff(str(event.row_key.value))

    def action_bench_diff(self) -> None:
        key = None
        try:
            table = self.pane("#bench-table")
            if self.pane("#tabs").active == "bench" and table.row_count:
                key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        except Exception:  # no row under the cursor: the selected operator's run
            key = None
        self.open_bench_diff(key)

    def _state_for(self, key: str | None):
        if key is None:
            return self.ops.get(self.selected) if self.selected else None
        for st in self.ops.values():
            rep = st.good
            if rep is not None and f"{rep.operator}/{rep.case}/{rep.chip}" == key:
                return st
        return None

    def open_bench_diff(self, key: str | None) -> None:
        st = self._state_for(key)
        if st is None or st.good is None or st.good.emulation is None:
            self.notify("no run to compare yet: press r", severity="warning")
            return
        rep = st.good

        def work():
            from ...devkit.bench.diff import against_baseline

            diff = against_baseline(rep, BASELINE_NAME)
            note = "" if diff else f"no baseline saved for {rep.operator} [{rep.case}] on {rep.chip}: press B"
            self.post_message(DiffReady(diff, note))

        self.run_in_thread(work, f"{rep.operator}: bench diff", "bench-diff", exclusive=True)

    @while_mounted
    def on_diff_ready(self, msg: DiffReady) -> None:
        if msg.diff is None:
            self.notify(msg.note, severity="warning")
            self.log_line(msg.note, Level.WARN)
            return
        self.push_screen(BenchDiffScreen(msg.diff))


__all__ = ["BenchDiffScreen", "DiffActions", "DiffReady", "diff_text"]
