"""The kernel source with a per-line cost column (cycles, share) and a heat bar."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

if TYPE_CHECKING:  # the pane paints before the devkit is imported
    from ...devkit.views.profile import LineHeat

HEAT = " ▁▂▃▄▅▆▇█"


def heat_char(share: float, top: float) -> str:
    if share <= 0 or top <= 0:
        return " "
    return HEAT[max(1, min(8, round(share / top * 8)))]


class SourceView(VerticalScroll, can_focus=True):
    DEFAULT_CSS = """
    SourceView { height: 1fr; }
    SourceView > Static { width: auto; }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.body = Static("no source yet")
        self.hot: list[tuple[int, float]] = []  # (line, share), costliest first
        self._shown: tuple | None = None  # show()'s arguments, to draw again after a resize
        self._compact: bool | None = None  # as drawn: share only (narrow) or cycles and share

    def compose(self):
        yield self.body

    def compact(self) -> bool:
        """Below 120 columns the cost column is the share only: the code needs the room."""
        return self.app.size.width < 120

    def on_resize(self, _event) -> None:
        if self._shown is not None and self.compact() != self._compact:
            self.show(*self._shown)

    def show(self, path: str | None, heat: dict[tuple[str, int], LineHeat], stale: bool = False) -> None:
        self._shown, self._compact = (path, heat, stale), self.compact()
        if not path:
            self.body.update("no source")
            return
        try:
            src = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            self.body.update(f"cannot read {path}: {exc}")
            return
        mine = {line: h for (f, line), h in heat.items() if f == path}
        top = max((h.share for h in mine.values()), default=0.0)
        self.hot = sorted(((ln, h.share) for ln, h in mine.items()), key=lambda t: -t[1])
        compact = self._compact
        text = Text()
        what = "share" if compact else "cycles over all blocks, share"
        text.append(
            f"{Path(path).name}  per-line cost ({what}){'  [STALE]' if stale else ''}\n", style="bold"
        )
        for i, code in enumerate(src, 1):
            h = mine.get(i)
            if h:
                style = "bold red" if h.share >= 0.2 else ("yellow" if h.share >= 0.05 else "")
                text.append(heat_char(h.share, top), style="red")
                cost = f"{h.share:6.1%} " if compact else f"{h.cycles:>11,.0f} {h.share:6.1%} "
                text.append(cost, style=style)
            else:
                text.append(" " * (8 if compact else 20), style="dim")
            text.append(f"{i:4d} ", style="dim")
            text.append(code + "\n")
        self.body.update(text)
        self.call_after_refresh(self.scroll_to_hot)

    def scroll_to_hot(self) -> None:
        """Centre the costliest line (no-op while the tab is hidden: it has no height)."""
        hot = self.hot_line()
        if hot is not None and self.size.height > 0:
            self.scroll_to(0, max(0, hot - self.size.height // 2), animate=False)

    def hot_line(self) -> int | None:
        return self.hot[0][0] if self.hot else None
