"""The workbench's arrangement of its panes: compose, CSS, and the wide / narrow / small layouts
a resize switches between (a mixin of `tui.app.Workbench`; its handlers stay there)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static, TabbedContent, TabPane

from .bench_table import BenchTable
from .footer import NARROW, WorkbenchFooter
from .log_pane import LogPane
from .operator_tree import OperatorTree
from .profile_pane import ProfilePane
from .source_view import SourceView
from .timeline import TimelineView
from .tune_pane import TunePane

#: Tab titles, and the short ones that let all six fit in a 60-column terminal.
TAB_LABELS = {
    "log": ("Log", "Log"),
    "profile": ("Profile", "Prof"),
    "timeline": ("Timeline", "Time"),
    "source": ("Source", "Src"),
    "bench": ("Bench", "Bench"),
    "tune": ("Tune", "Tune"),
}
#: At least this many columns and rows: the log leaves the tabs for its own pane.
WIDE = (140, 40)


class WorkbenchLayout:
    """Where every pane sits, and which layout the terminal's size asks for."""

    CSS = """
    #status { height: auto; max-height: 3; padding: 0 1; background: $panel; }
    #body { height: 1fr; }
    #sidebar { width: 26; border-right: vkey $primary 40%; }
    #sidebar.-hidden { display: none; }
    #main { width: 1fr; }
    TabbedContent { height: 1fr; }
    TabPane { padding: 0; }
    #bottom-log { height: 12; display: none; border-top: hkey $primary 40%; }
    Screen.-wide #bottom-log { display: block; }
    Screen.-narrow #sidebar { width: 20; }
    """

    def compose(self) -> ComposeResult:
        yield Static("asc-tui", id="status")
        with Horizontal(id="body"):
            yield OperatorTree("operators", id="sidebar")
            with Vertical(id="main"):
                with TabbedContent(initial="log", id="tabs"):
                    with TabPane("Log", id="log"):
                        yield LogPane(clock=self.clock, id="log-pane")
                    with TabPane("Profile", id="profile"):
                        with VerticalScroll():
                            yield ProfilePane(id="profile-pane")
                    with TabPane("Timeline", id="timeline"):
                        yield TimelineView(id="timeline-view")
                    with TabPane("Source", id="source"):
                        yield SourceView(id="source-view")
                    with TabPane("Bench", id="bench"):
                        yield BenchTable(id="bench-table")
                    with TabPane("Tune", id="tune"):
                        yield TunePane(id="tune-pane")
                yield LogPane(clock=self.clock, id="bottom-log")
        yield WorkbenchFooter(compact=True)

    def on_resize(self, event) -> None:
        self._layout_for(event.size.width, event.size.height)

    def _layout_for(self, width: int, height: int) -> None:
        wide = width >= WIDE[0] and height >= WIDE[1]
        narrow, small = width < 100, width < NARROW
        layout = (wide, narrow, small)
        if layout == self._layout:  # (the resizes at start-up repeat it: each restyled the app)
            self.update_status()
            return
        self._layout = layout
        self.workbench_screen.set_class(wide, "-wide")  # (not a modal's: the panes are below it)
        self.workbench_screen.set_class(narrow, "-narrow")
        tabs = self.pane(TabbedContent)
        if wide:
            if tabs.active == "log":
                tabs.active = "profile"
            tabs.hide_tab("log")
        else:
            tabs.show_tab("log")
        self.pane(WorkbenchFooter).set_narrow(small)
        self.pane(BenchTable).set_stacked(narrow)  # the verdict and "vs base" stay in sight
        for tab_id, (long, short) in TAB_LABELS.items():  # every tab header stays reachable
            tabs.get_tab(tab_id).label = short if small else long
        self.update_status()

    @property
    def workbench_screen(self):
        """The workbench's own screen, under any modal (help, palette) on top."""
        return self.screen_stack[0] if self.screen_stack else self.screen

    def pane(self, selector, expect_type=None):
        """Query the workbench screen, even while a modal (help, palette) is on top."""
        base = self.workbench_screen
        return base.query_one(selector, expect_type) if expect_type else base.query_one(selector)

    def action_toggle_sidebar(self) -> None:
        self.pane("#sidebar").toggle_class("-hidden")

    def action_show_tab(self, tab: str) -> None:
        tabs = self.pane(TabbedContent)
        if tab == "log" and self.workbench_screen.has_class("-wide"):
            self.pane("#bottom-log").focus()
            return
        tabs.active = tab
        pane = {"timeline": "#timeline-view", "source": "#source-view", "bench": "#bench-table"}.get(tab)
        if pane:
            self.pane(pane).focus()
