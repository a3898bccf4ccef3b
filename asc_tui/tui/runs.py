"""What a rerunner result does to the workbench: the operator's state and tree mark, the log,
the bench row, and the selected operator's profile, timeline and source heat (`devkit.views`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..devkit.chips import default_chip_name
from ..devkit.regression import slowdown, slowdown_text
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
    from ..devkit.runner import RunRequest
    from ..devkit.views.timeline import TimelineModel
    from .app import Workbench

#: Timelines with more records than this are indexed in a thread, not on the UI loop.
BIG_TIMELINE = 200_000


class RunResults:
    app: Workbench
    models: dict[int, TimelineModel]  # id(emulation) -> its index; one kept: results can be big
    bench: BenchSync  # the bench table's rows and the stored history behind them

    def __init__(self, app: Workbench):
        self.app = app
        self.models = {}
        self.bench = BenchSync(app)

    def request(self, path: Path) -> RunRequest:
        """A full (numeric + timing) run of the operator with its session case and parameters."""
        from ..devkit.runner import RunRequest

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
        extra = " ".join(f"{k}={v}" for k, v in req.params.items())
        app.log_line(
            f"{msg.path.stem}: running [{req.case or 'default'}] on "
            f"{req.chip or default_chip_name()}{' ' + extra if extra else ''}…",
            Level.DIM,
        )
        app.update_status()

    def finished(self, msg: RunFinished) -> None:
        app = self.app
        st = app.ops.get(msg.path)
        if st is None:  # its file was deleted while it ran
            return
        res = msg.result
        rep = res.report
        params = rep.params if rep is not None else st.params  # compare like with like only
        key = (rep.case if rep else st.case, rep.chip if rep else app.chip, repr(sorted(params.items())))
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
            if rep is not None and rep.sample:  # a sample directory: main()'s and verify's output
                self._log_sample(msg.path.stem, rep.sample)
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

    def _log_sample(self, name: str, sample: dict) -> None:
        for line in (sample.get("stdout") or "").splitlines()[:20]:
            self.app.log_line(f"{name}: main: {line}")
        v = sample.get("verify")
        if v is not None:
            level = Level.INFO if v["exit"] == 0 else Level.ERROR
            for line in v["output"].strip().splitlines()[-10:]:
                self.app.log_line(f"{name}: verify_result.py: {line}", level)
        elif sample.get("precision"):
            self.app.log_line(f"{name}: precision {sample['precision']}")

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
        (no operator left) empties them."""
        from ..devkit.views.profile import line_heat, profile_view
        from ..devkit.views.timeline import TimelineModel

        if st is None:
            self.app.pane(ProfilePane).show(None, "")
            self.app.pane(TimelineView).show(None, message="no operators")
            self.app.pane(SourceView).show(None, {})
            return
        app, rep, stale = self.app, st.good, st.stale
        title = f"{st.path.stem} [{(rep.case if rep else None) or st.case or 'default'}]"
        if rep is None or rep.emulation is None:
            app.pane(ProfilePane).show(None, title)
            app.pane(TimelineView).show(None)
            app.pane(SourceView).show(str(st.path), {})
            return
        app.pane(ProfilePane).show(profile_view(rep), title, stale)
        key = id(rep.emulation)
        view = app.pane(TimelineView)
        if key not in self.models:
            model = TimelineModel(rep.emulation)
            self.models = {key: model}
            if model.records > BIG_TIMELINE:  # index off the UI thread (~0.3 s per 1M)
                view.show(None, message=f"indexing {model.records:,} records…")
                width = lane_width(view.size.width) if view.size.width else None

                def build():
                    model.prepare(width)  # and the first view: the first frame is a lookup
                    app.call_from_thread(self._timeline_ready, key, stale)

                app.run_in_thread(build, "timeline index", "timeline", exclusive=True)
            else:
                model.prepare()
                view.show(model, stale)
        elif self.models[key].ready:
            view.show(self.models[key], stale)
        app.pane(SourceView).show(rep.path or str(st.path), line_heat(rep), stale)

    @while_mounted
    def _timeline_ready(self, key: int, stale: bool) -> None:
        model = self.models.get(key)
        if model is not None:
            self.app.pane(TimelineView).show(model, stale)
