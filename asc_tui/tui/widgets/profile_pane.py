"""Profile breakdown: one bar per category (mean µs per core), the bottleneck marked, advice.

Rendered for the pane's current width: at 60 columns the names shorten and the bars shrink,
at 200 they get room; nothing is cut mid-number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widget import Widget

from .textfit import fit

if TYPE_CHECKING:  # the pane paints before the devkit is imported
    from ...devkit.views.profile import ProfileView


#: Category names short enough for 80 columns (the long ones are the profile's own).
SHORT = {
    "cube": "Cube",
    "vec": "Vector",
    "scalar": "Scalar",
    "mte2": "HBM read",
    "mte3": "HBM write",
    "mte1": "L1→L0",
    "fixpipe": "FixPipe",
    "sync_wait": "Sync wait",
}


def bar(fraction: float, width: int) -> str:
    """A bar in eighths of a cell, so small differences stay visible at 80 columns."""
    eighths = int(round(max(0.0, min(1.0, fraction)) * width * 8))
    full, rest = divmod(eighths, 8)
    return ("█" * full + (" ▏▎▍▌▋▊▉"[rest] if rest else "")).ljust(width)


class ProfilePane(Widget):
    DEFAULT_CSS = "ProfilePane { height: auto; padding: 0 1; }"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.view: ProfileView | None = None
        self.stale = False
        self.title = ""
        self.message = ""

    def show(self, view: ProfileView | None, title: str, stale: bool = False, message: str = "") -> None:
        """`message` replaces the figures while there are none yet (a big result computing)."""
        self.view, self.stale, self.title, self.message = view, stale, title, message
        self.refresh(layout=True)

    @property
    def plain(self) -> str:
        return self.build(100).plain

    def render(self) -> Text:
        return self.build(max(self.size.width, 20))

    def build(self, width: int) -> Text:
        view = self.view
        if view is None and self.message:
            return Text(f"{self.title}{'  [STALE]' if self.stale else ''}\n{self.message}")
        if view is None:
            return Text(
                f"{self.title}\nno emulation result (see the log)" if self.title else "no profile yet"
            )
        out = Text()
        out.append(self.title + ("  [STALE]" if self.stale else "") + "\n", style="bold")
        t = view.timing
        if t is not None:
            from ...devkit.profile.timing import overlap_parts

            out.append("\n".join(fit(t.parts(), width, " ")) + "\n")
            out.append("\n".join(fit(overlap_parts(t.overlap), width, " ")) + "\n", style="dim")
        long_w = max((len(r.name) for r in view.rows), default=0)
        short = long_w + 44 > width  # the figures need ~44 columns with a bar worth reading
        name_w = max((len(SHORT.get(r.key, r.name)) for r in view.rows), default=0) if short else long_w
        bar_w = max(6, min(60, width - name_w - 38))
        out.append("\n".join(fit(["busy µs per core", "% of kernel time"], width, " · ")) + "\n", "dim")
        for r in view.rows:
            hot = r.name == view.bottleneck
            name = SHORT.get(r.key, r.name) if short else r.name
            out.append(f"{name:<{name_w}} ", style="bold" if hot else "")
            out.append(bar(r.ratio, bar_w), style="bold red" if hot else "cyan")
            out.append(f" {r.time_us:9.3f} µs {r.ratio:6.1%}")
            out.append(" ◀ bottleneck\n" if hot else "\n", style="bold")
        if view.advice:
            out.append("advice:\n", style="bold")
            for a in view.advice:
                out.append(f" • {a}\n")
        else:
            out.append(f"(figures: {view.source}; no advice rules available)\n", style="dim")
        for i, row in enumerate(view.measured):  # imported msprof data of this case and params
            out.append(row + "\n", style="bold magenta" if i == 0 else "")
        out.rstrip()
        return out
