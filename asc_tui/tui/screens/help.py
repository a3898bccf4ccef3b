"""`?`: every key of the workbench (after the user's keymap), as wrapped text."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keymap import ACTIONS, display_keys
from ..widgets.timeline import TimelineView


def key_rows(effective: dict[str, str]) -> list[tuple[str, str, str]]:
    """(keys, title, help) for every action, the palette and the timeline's own keys."""
    rows = [(display_keys(effective.get(a.id, a.keys)), a.title, a.help) for a in ACTIONS]
    rows.append(("ctrl+p", "Commands", "Command palette: every action by name"))
    for b in TimelineView.BINDINGS:
        rows.append((display_keys(effective.get(b.id, b.key)), b.description, "timeline (when focused)"))
    return rows


def help_text(rows: list[tuple[str, str, str]]) -> Text:
    text = Text("Keys · remap by binding id in [tool.asc-tui.keymap] · esc closes\n\n", style="bold")
    for keys, title, what in rows:
        text.append(f"{keys:>9}  ", style="bold")
        text.append(f"{title}: ", style="")
        text.append(f"{what}\n", style="dim")
    return text


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 90%; height: 90%; border: round $primary;
                                  background: $surface; padding: 0 1; }
    """

    def __init__(self, effective: dict[str, str]):
        super().__init__()
        self.rows = key_rows(effective)

    def compose(self):
        with VerticalScroll():
            yield Static(help_text(self.rows))
