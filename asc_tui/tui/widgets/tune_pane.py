"""Tuning: progress bar with ETA and the best-so-far table of the selected operator's tune.

The pane draws a `TuneBoard` (tui/state.py) and keeps nothing of its own: the controller keeps
one board per operator and hands the pane the selected one's, so selecting another operator
shows that operator's tune (or none), never the last one started.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Vertical
from textual.widgets import DataTable, ProgressBar, Static

from ...devkit.text import param_phrases
from .textfit import fit

if TYPE_CHECKING:
    from ..state import TuneBoard

HINT = "t: auto-tune   T: quick-tune   x: cancel   a: apply best"
COLUMNS = ("rank", "time µs", "params")


class TunePane(Vertical):
    DEFAULT_CSS = """
    TunePane { height: 1fr; }
    TunePane > #tune-status { height: auto; padding: 0 1; }
    TunePane > ProgressBar { padding: 0 1; width: 100%; }
    TunePane > ProgressBar Bar { width: 1fr; min-width: 8; }
    TunePane > DataTable { height: 1fr; }
    TunePane > ProgressBar.-finished #eta { display: none; }
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.status = Static(HINT, id="tune-status")
        self.bar = ProgressBar(total=None, show_eta=True, id="tune-bar")
        self.table = DataTable(cursor_type="row")
        self.best: list[tuple[float, dict]] = []  # (time µs, params), best first, as shown
        self.status_text = ""
        self._shown: TuneBoard | None = None  # the board drawn last (its bar's ETA samples)
        self._note = ""

    def compose(self):
        yield self.status
        yield self.bar
        yield self.table

    def on_mount(self) -> None:
        self.bar.display = False  # no bar (and no bouncing "waiting" animation) before a tune
        for c in COLUMNS:
            self.table.add_column(c, key=c)

    def set_status(self, text: str) -> None:
        self.status_text = text
        self.status.update(text)

    def show(self, board: TuneBoard | None, note: str = "") -> None:
        """Draw `board` (None: this operator has no tune). `note`: a line under the status (a
        tune of another operator running). Rows are updated in place, only where they changed;
        parameters that do not fit the width wrap between them (a row grows a line)."""
        self._note = note
        self.status_text = board.status if board is not None else ""
        self.status.update("\n".join(t for t in (self.status_text or HINT, note) if t))
        self._bar(board)
        self.best = board.best if board is not None else []
        rows = [(str(i), f"{t:,.3f}", p) for i, (t, p) in enumerate(self.best, 1)]
        width = self._params_width(max((len(t) for _, t, _ in rows), default=0))
        rows = [
            (i, t, "\n".join(fit(param_phrases(dict(sorted(p.items()))), width, " "))) for i, t, p in rows
        ]
        table = self.table
        if any(i in table.rows and table.rows[i].height != c.count("\n") + 1 for i, _, c in rows):
            table.clear()  # a row changes height: DataTable updates cells, not heights
        for cells in rows:
            key = cells[0]
            if key not in table.rows:
                table.add_row(*cells, key=key, height=cells[2].count("\n") + 1)
                continue
            for col, value in zip(COLUMNS, cells):
                if table.get_cell(key, col) != value:
                    table.update_cell(key, col, value, update_width=True)
        for place in range(len(rows) + 1, table.row_count + 1):
            table.remove_row(str(place))

    def _params_width(self, time_width: int) -> int:
        """Columns left for the parameters: the table's width less rank and time (each with its
        padding) and a scrollbar; a table not laid out yet (hidden tab) does not wrap."""
        if not self.table.size.width:
            return 10**6
        used = (len("rank") + 2) + (max(time_width, len("time µs")) + 2) + 2 + 2
        return max(self.table.size.width - used, 16)

    def on_resize(self, _event) -> None:
        self.call_after_refresh(lambda: self.show(self._shown, self._note))  # the table's new width

    def _bar(self, board: TuneBoard | None) -> None:
        """Bouncing only while a running tune has no size yet. An ended tune keeps how far it
        got and hides the ETA, which would otherwise count on against a stopped tune; one that
        never knew its size shows no bar."""
        bar = self.bar
        if board is not self._shown:  # another operator's tune: its own ETA, not a mix
            self._shown = board
            bar.update(total=None, progress=0)
        if board is None or (not board.running and board.total is None):
            bar.display = False
            return
        bar.display = True
        bar.set_class(not board.running, "-finished")
        if board.total is None:
            bar.update(total=None, progress=0)
        else:
            bar.update(total=max(board.total, 1), progress=board.done)

    @property
    def eta_shown(self) -> bool:
        return self.bar.display and not self.bar.has_class("-finished")
