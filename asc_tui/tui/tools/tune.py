"""`t` / `T`: auto-tune the selected operator (`devkit.tuner`); `a` applies the best parameters
to this session's runs, `A` writes them into the operator file.

The tuner runs in its own worker process (it forks its evaluators there), driven from a thread
here; its progress arrives as a stream of `TuneProgress` messages and `x` cancels it through the
tuner's `CancelToken` (SIGINT in the process), keeping every result so far in the tune cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..messages import ToolFailed, ToolMessage
from ..widgets.log_pane import Level
from ..widgets.tune_pane import TunePane
from .base import ToolController

if TYPE_CHECKING:
    from ...devkit.tuner.progress import TuneEvent
    from ...devkit.tuner.session import TuneReport
    from ...devkit.worker import RunWorker
    from ..app import Workbench
    from ..state import OperatorState


@dataclass(eq=False)
class TuneProgress(ToolMessage, tool="tune"):
    """One step of a tune in flight (a stream of these, then one `TuneFinished`)."""

    event: TuneEvent


@dataclass(eq=False)
class TuneFinished(ToolMessage, tool="tune"):
    report: TuneReport


class TuneController(ToolController):
    name = "tune"
    worker: RunWorker | None  # its own process, started on the first tune
    running: bool

    def __init__(self, app: Workbench):
        super().__init__(app)
        self.worker = None
        self.running = False

    def launch(self, st: OperatorState, quick: bool = False) -> None:
        from ...devkit.tuner.session import TuneRequest
        from ...devkit.worker import Call, RunWorker

        app = self.app
        if self.running:
            app.notify("a tune is running: x cancels it", severity="warning")
            return
        strategy = "quick" if quick else "exhaustive"
        req = TuneRequest(
            op=str(st.path),
            case=st.case,
            chip=app.chip,
            strategy=strategy,
            timeout_s=app.config.worker_timeout,
        )
        if self.worker is None:
            self.worker = RunWorker(timeout_s=None)
        worker, path = self.worker, st.path
        self.running = True
        app.pane(TunePane).start(f"{strategy} tune of {path.stem} [{st.case or 'default'}]…")
        self.switch("tune")
        app.log_line(f"{path.stem}: {strategy} tune started (x cancels)", Level.DIM)

        def work() -> TuneFinished:
            res = worker.call(
                Call("asc_tui.tui.jobs:tune_job", (req,), progress_kw="progress", label=f"{path.stem} tune"),
                timeout_s=None,
                on_progress=lambda e: app.post_message(TuneProgress(path, e)),
            )
            if not res.ok:
                raise ToolFailed("tune", path, res)
            return TuneFinished(path, res.report)

        self.run(path, work)

    def quick(self) -> None:
        self.start(True)

    def show(self, msg: TuneProgress | TuneFinished) -> None:
        if isinstance(msg, TuneProgress):
            self._progress(msg)
            return
        self.running = False
        rep, st = msg.report, self.app.ops.get(msg.path)
        best = rep.best
        if best is not None and st is not None:
            st.best_params = dict(best.params)
        verb = "cancelled" if rep.cancelled else "done"
        text = (
            f"tune {verb}: best {best.time_us:,.3f} µs with {dict(best.params)} · a applies"
            if best is not None and best.time_us is not None
            else f"tune {verb}: no valid configuration"
        )
        self.app.pane(TunePane).finish(text)
        self.app.log_line(f"{msg.path.stem}: {text}", Level.OK)

    def _progress(self, msg: TuneProgress) -> None:
        e, pane = msg.event, self.app.pane(TunePane)
        pane.progress(
            e.done, e.total, e.eta_s, f"{e.kind}: {e.evaluated} run, {e.cached} cached, {e.invalid} pruned"
        )
        r = e.result
        if r is not None and r.time_us is not None:
            pane.offer(r.time_us, dict(r.params or {}), e.rank)

    def failed(self, error: BaseException) -> None:
        self.running = False
        status = error.result.status if isinstance(error, ToolFailed) else "failed"
        self.app.pane(TunePane).finish(f"tune {status}")

    def cancel(self) -> bool:
        if self.worker is not None and self.running:
            self.worker.interrupt()
            return True
        return False

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()

    def _tuned(self) -> OperatorState | None:
        """The selected operator's state if it has tuned parameters (else say how to get them)."""
        st = self.selected()
        if st is not None and not st.best_params:
            self.app.notify("no tuned parameters yet: press t or T first", severity="warning")
            return None
        return st

    def apply_best(self) -> None:
        st = self._tuned()
        if st is None:
            return
        st.params = dict(st.best_params)
        self.app.log_line(
            f"{st.path.stem}: applied {st.params} to this session's runs "
            "(A writes them into the operator file)",
            Level.OK,
        )
        self.app.update_status()
        self.app.submit([st.path])

    def write_best(self) -> None:
        """Write the tuned parameters as the PARAMS defaults (devkit.tuner.apply); the watcher
        sees the save and reruns, so the file, not the session, carries the choice."""
        from ...devkit.errors import OperatorError
        from ...devkit.tuner.apply import plan_apply

        app, st = self.app, self._tuned()
        if st is None:
            return
        try:
            plan = plan_apply(st.path, st.best_params)
        except (OperatorError, SyntaxError, ValueError, OSError) as exc:  # OperatorError: the PARAMS line
            app.log_line(f"{st.path.stem}: cannot write the parameters: {exc}", Level.ERROR)
            return
        if not plan.changed:
            app.log_line(f"{st.path.stem}: the file already has the best parameters", Level.DIM)
            return
        self.switch("log")
        for line in plan.diff().splitlines():
            app.log_line("  " + line, Level.DIM)
        tmp = st.path.with_name(f".{st.path.name}.asc-tui.tmp")
        tmp.write_text(plan.after, encoding="utf-8")
        tmp.replace(st.path)  # atomic, like an editor's save: the watcher reruns it
        st.params = {}
        app.log_line(f"{st.path.stem}: wrote {st.best_params} into {st.path.name}", Level.OK)
        if not app.watch_enabled:
            app.submit([st.path])
