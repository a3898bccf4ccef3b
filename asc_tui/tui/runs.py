"""What a rerunner result does to the workbench: the operator's state and tree mark, the log,
the bench row, and the selected operator's profile, timeline and source heat (`devkit.views`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..devkit.bench.regression import slowdown, slowdown_text
from ..devkit.chips import chip_name
from ..devkit.text import case_text, params_text
from .bench_sync import BenchSync
from .lifecycle import while_mounted
from .messages import RunCancelled, RunFinished, RunStarted
from .state import OperatorState, Status, classify
from .widgets.log_pane import Level
from .widgets.operator_tree import OperatorTree
from .widgets.profile_pane import ProfilePane
from .widgets.source_view import SourceView
from .widgets.timeline import TimelineView, lane_width

if TYPE_CHECKING:
    from ..devkit.run.runner import RunReport, RunRequest
    from ..devkit.views.result import ResultView
    from .app import Workbench

#: Results with more records than this get their figures (profile, heat, timeline index)
#: computed in a thread, not on the UI loop (~1 s per million records).
BIG_RESULT = 200_000
#: Records whose figures stay kept, most recently shown first (the shown one always): going
#: back to an earlier result is a lookup, not seconds again. A 16384³ matmul (25M) fills it.
KEPT_RECORDS = 30_000_000


class RunResults:
    app: Workbench
    views: dict[int, ResultView]  # id(emulation) -> its figures, least recently shown first
    bench: BenchSync  # the bench table's rows and the stored history behind them

    def __init__(self, app: Workbench):
        self.app = app
        self.views = {}
        self.bench = BenchSync(app)

    def request(self, path: Path) -> RunRequest:
        """A full (numeric + timing) run of the operator with its session case and parameters."""
        from ..devkit.run.runner import RunRequest

        st = self.app.ops.get(path) or OperatorState(path)
        return RunRequest(
            str(path),
            case=st.case,
            chip=self.app.chip,
            params=dict(st.params),
            timing_only=False,
            timeout_s=self.app.config.worker_timeout,
        )

    def started(self, msg: RunStarted) -> None:
        app = self.app
        st = app.ops.get(msg.path)
        if st is None:  # its file was deleted while the run was queued
            return
        if st.status is not Status.RUNNING:
            st.settled = st.status
        st.status = Status.RUNNING
        app.pane(OperatorTree).set_status(msg.path, st.status, st.stale)
        req = msg.request
        extra = params_text(req.params)
        app.log_line(
            f"{msg.path.stem}: running [{case_text(req.case)}] on "
            f"{chip_name(req.chip)}{' ' + extra if extra else ''}…",
            Level.DIM,
        )
        app.update_status()

    def finished(self, msg: RunFinished) -> None:
        from ..devkit.bench.history import RunKey  # (numpy: not at the app's import)

        app = self.app
        st = app.ops.get(msg.path)
        if st is None:  # its file was deleted while it ran
            return
        res = msg.result
        rep = res.report
        if rep is not None:  # compare like with like only (`history.RunKey`)
            key = RunKey.of(rep)
        else:
            key = RunKey.make(msg.path.stem, str(msg.path), st.case, app.chip, st.params)
        hist = st.history.setdefault(key, [])
        previous = hist[-1] if hist else None
        st.last = res
        st.status = classify(res, previous, app.config.thresholds.regression)
        if rep is not None and rep.emulation is not None:
            st.good = rep
            hist.append(rep.emulation.time_us)
        with app.batch_update():
            app.pane(OperatorTree).set_status(msg.path, st.status, st.stale)
            for pane in app.log_panes():
                pane.add_result(msg.path.stem, res, app.show_host_times)
            if st.status is Status.REGRESSION:
                app.log_line(
                    f"{msg.path.stem}: REGRESSION {rep.emulation.time_us:,.3f} µs vs "
                    f"{previous:,.3f} µs before with the same params "
                    f"({slowdown_text(slowdown(rep.emulation.time_us, previous))})",
                    Level.ERROR,
                )
            if rep is not None and rep.emulation is not None:
                self.bench.update_row(st, rep, previous)
            if msg.path == app.selected:
                self.show(st)
            app.update_status()
        self.bench.record(rep)

    def cancelled(self, msg: RunCancelled) -> None:
        """The run in flight ended without a result: the operator is back where it was."""
        app = self.app
        st = app.ops.get(msg.path)
        if st is None or st.status is not Status.RUNNING:
            return
        st.status = st.settled
        app.pane(OperatorTree).set_status(msg.path, st.status, st.stale)
        shown = "the last result stays" if st.good is not None else "no result yet"
        app.log_line(f"{msg.path.stem}: run cancelled ({shown})", Level.WARN)
        app.update_status()

    def show(self, st: OperatorState | None) -> None:
        """Every pane shows this operator's newest good result (marked stale if older); None
        (no operator left) empties them. A big result's figures are computed in a thread
        (`devkit.views.result`): the panes say "computing…" until they are ready."""
        from ..devkit.views.result import ResultView

        app = self.app
        if st is None:
            app.pane(ProfilePane).show(None, "")
            app.pane(TimelineView).show(None, message="no operators")
            app.pane(SourceView).show(None, {})
            return
        rep, stale = st.good, st.stale
        title = f"{st.path.stem} [{case_text(rep.case if rep else None, st.case)}]"
        if rep is None or rep.emulation is None:
            app.pane(ProfilePane).show(None, title)
            app.pane(TimelineView).show(None)
            app.pane(SourceView).show(str(st.path), {})
            return
        key = id(rep.emulation)  # (a kept view holds its emulation: the id stays its own)
        if key in self.views:
            self.views[key] = self.views.pop(key)  # the most recently shown
        else:
            rv = ResultView(rep)
            self._keep(key, rv)
            if rv.records > BIG_RESULT:  # off the UI thread (25M records: seconds per figure)
                view = app.pane(TimelineView)
                width = lane_width(view.size.width) if view.size.width else None

                def build():
                    try:  # the timeline's first view too: its first frame is a lookup
                        rv.prepare(width)
                    finally:  # failed: the app's worker handler logs why; the panes say so
                        app.call_from_thread(self._ready, key)

                app.run_in_thread(build, "result figures", "result", exclusive=True)
            else:
                rv.prepare()
        rv = self.views[key]
        source = rep.path or str(st.path)
        if not rv.ready:
            note = f"computing the figures of {rv.records:,} records…"
            app.pane(ProfilePane).show(None, title, stale, message=note)
            app.pane(TimelineView).show(None, message=note)
            app.pane(SourceView).show(source, {}, stale)
            return
        app.pane(ProfilePane).show(rv.pane, title, stale)
        app.pane(TimelineView).show(rv.timeline, stale)
        app.pane(SourceView).show(source, rv.heat, stale)

    def _keep(self, key: int, rv: ResultView) -> None:
        """Keep `rv` as the newest view, and those shown before it that are still an
        operator's result while their records fit in KEPT_RECORDS (a view holds its result:
        a replaced one, or one over the budget, would keep GBs alive for nothing)."""
        self.views[key] = rv
        live = {id(st.good.emulation) for st in self.app.ops.values() if st.good is not None}
        total = rv.records
        for k in reversed(list(self.views)):
            if k == key:
                continue
            n = self.views[k].records
            if k not in live or total + n > KEPT_RECORDS:
                del self.views[k]
            else:
                total += n

    def profile_of(self, rep: RunReport):
        """The devkit `Profile` of `rep` if its figures are computed already (else None): the
        profile report and the export reuse it instead of computing it again."""
        rv = self.views.get(id(rep.emulation))
        return rv.profile if rv is not None and rv.report is rep and rv.ready else None

    @while_mounted
    def _ready(self, key: int) -> None:
        """A result's figures are computed (or failed): show them if it is still the selected
        one's. A failed one is forgotten, so showing it again tries again."""
        app = self.app
        rv = self.views.get(key)
        if rv is not None and not rv.ready:
            del self.views[key]
        st = app.ops.get(app.selected) if app.selected is not None else None
        if rv is None or st is None or st.good is None or id(st.good.emulation) != key:
            return
        with app.batch_update():
            if rv.ready:
                self.show(st)
                return
            note = "the figures could not be computed (see the log)"
            app.pane(ProfilePane).show(None, app.pane(ProfilePane).title, st.stale, message=note)
            app.pane(TimelineView).show(None, message=note)
