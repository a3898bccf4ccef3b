"""The key-hint footer, trimmed to what fits: below 80 columns the hints that `?` and the
palette still list give way, so the rest is shown whole (never a key cut in half)."""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: Actions whose hint leaves the footer below `NARROW` columns (their keys still work).
NARROW_HIDDEN = frozenset({"next_case", "tool('profile')"})
NARROW = 80


class WorkbenchFooter(Footer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.narrow = False

    def set_narrow(self, narrow: bool) -> None:
        if narrow != self.narrow:
            self.narrow = narrow
            self.refresh(recompose=True)

    def compose(self):
        for widget in super().compose():
            if self.narrow and isinstance(widget, FooterKey) and widget.action in NARROW_HIDDEN:
                continue
            yield widget
