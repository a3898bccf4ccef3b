"""Tuning: progress bar with ETA and the best-so-far table, fed by devkit.tuner events."""

from __future__ import annotations

from textual.containers import Vertical
from textual.widgets import DataTable, ProgressBar, Static

from ...devkit.text import params_text


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
        self.status = Static("t: auto-tune   T: quick-tune   x: cancel   a: apply best", id="tune-status")
        self.bar = ProgressBar(total=None, show_eta=True, id="tune-bar")
        self.table = DataTable(cursor_type="row")
        self.best: list[tuple[float, dict]] = []  # (time µs, params), best first
        self._ranked: list[tuple[tuple, float, dict]] = []
        self.status_text = ""

    def compose(self):
        yield self.status
        yield self.bar
        yield self.table

    def on_mount(self) -> None:
        self.bar.display = False  # no bar (and no bouncing "waiting" animation) before a tune
        for c in ("rank", "time µs", "params"):
            self.table.add_column(c, key=c)

    def set_status(self, text: str) -> None:
        self.status_text = text
        self.status.update(text)

    def start(self, title: str) -> None:
        self.best.clear()
        self._ranked.clear()
        self.table.clear()
        self.bar.update(total=None, progress=0)
        self.bar.display = True
        self.bar.set_class(False, "-finished")
        self.set_status(title)

    def finish(self, text: str) -> None:
        """The tune ended (done, cancelled or failed): the bar keeps how far it got and the
        ETA, which would otherwise go on counting against a stopped tune, is hidden."""
        self.bar.set_class(True, "-finished")
        self.set_status(text)

    @property
    def eta_shown(self) -> bool:
        return not self.bar.has_class("-finished")

    def progress(self, done: int, total: int, eta_s: float | None, text: str) -> None:
        self.bar.update(total=max(total, 1), progress=done)
        eta = f" · ETA {eta_s:.0f} s" if eta_s is not None else ""
        self.set_status(f"{text} · {done}/{total}{eta}")

    def offer(self, time_us: float, params: dict, rank: tuple | None = None, keep: int = 10) -> None:
        """A result arrived: keep the top `keep` in the tune's own order (`rank`, from the
        devkit event: the same tie-break as the tune's reported best), rows updated in place."""
        self._ranked.append(((rank if rank is not None else (time_us,)), time_us, dict(params)))
        self._ranked.sort(key=lambda t: t[0])
        del self._ranked[keep:]
        self.best = [(t, p) for _, t, p in self._ranked]
        for place, (t, p) in enumerate(self.best, 1):
            key = str(place)
            cells = (str(place), f"{t:,.3f}", params_text(dict(sorted(p.items()))))
            if key in self.table.rows:
                for col, value in zip(("rank", "time µs", "params"), cells):
                    self.table.update_cell(key, col, value, update_width=True)
            else:
                self.table.add_row(*cells, key=key)
