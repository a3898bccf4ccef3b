"""`t` / `T`: auto-tune the selected operator (`devkit.tuner`); `a` applies the best parameters
to this session's runs, `A` writes them into the operator file.

A sample directory has no declared space: `t` sweeps the values of its sidecar `asc-tui.toml`
(`[tune]`) or of the project config's `[tune]` (`devkit.sample_tune`), with the session's
parameters fixed; `A` writes the best values into the C++ literals.

The tuner runs in its own worker process (it forks its evaluators there), driven from a thread
here; its progress arrives as a stream of `TuneProgress` messages and `x` cancels it through the
tuner's `CancelToken` (SIGINT in the process), keeping every result so far in the tune cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...devkit.text import case_text
from ..messages import ToolFailed, ToolMessage
from ..state import TuneBoard
from ..widgets.log_pane import Level
from ..widgets.tune_pane import TunePane
from .base import ToolController

if TYPE_CHECKING:
    from ...devkit.jobs import SweepOutcome
    from ...devkit.run.worker import RunWorker
    from ...devkit.tune.progress import TuneEvent
    from ...devkit.tune.sample_tune import SweepStep
    from ...devkit.tune.session import TuneReport
    from ..host import WorkbenchHost
    from ..state import OperatorState


@dataclass(eq=False)
class TuneProgress(ToolMessage, tool="tune"):
    """One step of a tune in flight (a stream of these, then one `TuneFinished`)."""

    event: TuneEvent


@dataclass(eq=False)
class TuneFinished(ToolMessage, tool="tune"):
    report: TuneReport


@dataclass(eq=False)
class SweepProgress(ToolMessage, tool="tune"):
    """One configuration of a sample's sweep finished (a stream of these, then `SampleSwept`)."""

    step: SweepStep


@dataclass(eq=False)
class SampleSwept(ToolMessage, tool="tune"):
    """A sample's sweep as far as it got: one row per combination that ran (`devkit.sample_tune`)."""

    outcome: SweepOutcome


class TuneController(ToolController):
    name = "tune"
    worker: RunWorker | None  # its own process, started on the first tune
    current: Path | None  # the operator whose tune runs (one at a time)

    def __init__(self, app: WorkbenchHost):
        super().__init__(app)
        self.worker = None
        self.current = None

    @property
    def running(self) -> bool:
        return self.current is not None

    def launch(self, st: OperatorState, quick: bool = False) -> None:
        from ...devkit.jobs import tune_job
        from ...devkit.run.worker import Call, RunWorker
        from ...devkit.tune.session import TuneRequest

        app = self.app
        if self.running:
            app.notify("a tune is running: x cancels it", severity="warning")
            return
        from ...devkit.tune.sample_tune import is_sample

        if is_sample(st.path):
            self._sweep_sample(st)
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
            self.worker = RunWorker(timeout_s=None, memory_mb=self.app.config.worker_memory_mb)
        worker, path = self.worker, st.path
        self._begin(st, f"{strategy} tune of {path.stem} [{case_text(st.case)}]…")
        app.log_line(f"{path.stem}: {strategy} tune started (x cancels)", Level.DIM)

        def work() -> TuneFinished:
            res = worker.call(
                Call(tune_job, (req,), progress_kw="progress", label=f"{path.stem} tune"),
                timeout_s=None,
                on_progress=lambda e: app.post_message(TuneProgress(path, e)),
            )
            if not res.ok:
                raise ToolFailed("tune", path, res)
            return TuneFinished(path, res.report)

        self.run(path, work)

    def _sweep_sample(self, st: OperatorState) -> None:
        from ...config import ConfigError
        from ...devkit.jobs import sample_tune_job
        from ...devkit.run.worker import Call, RunWorker
        from ...devkit.tune.sample_tune import SIDECAR, tune_values

        app, path = self.app, st.path
        try:
            values = tune_values(path, {}, app.config.tune)
        except ConfigError as exc:
            app.log_line(f"{path.stem}: {exc}", Level.ERROR)
            return
        if not values:
            app.notify(
                f"a sample's tune sweeps the values you give: add [tune] NAME = [a, b] to {SIDECAR} "
                "next to it (or to the project config)",
                severity="warning",
            )
            return
        if self.worker is None:
            self.worker = RunWorker(timeout_s=None, memory_mb=self.app.config.worker_memory_mb)
        worker, fixed = self.worker, dict(st.params)
        what = " ".join(f"{k}={','.join(map(str, v))}" for k, v in values.items())
        self._begin(st, f"sweep of {path.stem}: {what}…")
        app.log_line(f"{path.stem}: sweep of {what} started (x cancels)", Level.DIM)
        args = (str(path), values, fixed, app.chip, app.config.worker_timeout)

        def work() -> SampleSwept:
            res = worker.call(
                Call(
                    sample_tune_job,
                    args,
                    progress_kw="progress",
                    label=f"{path.stem} sweep",
                ),
                timeout_s=None,
                on_progress=lambda step: app.post_message(SweepProgress(path, step)),
            )
            if not res.ok:
                raise ToolFailed("tune", path, res)
            return SampleSwept(path, res.report)

        self.run(path, work)

    # -- the Tune pane: one board per operator, the selected one's drawn -------------------
    def _begin(self, st: OperatorState, title: str) -> None:
        st.tune = TuneBoard(title)
        self.current = st.path
        self.follow(self.app.ops.get(self.app.selected))
        self.switch("tune")

    def _board(self, path: Path) -> TuneBoard | None:
        st = self.app.ops.get(path)
        return st.tune if st is not None else None

    def follow(self, st: OperatorState | None) -> None:
        """Draw the Tune pane for `st` (the selected operator): its own tune, and a line naming
        another operator's tune while one runs."""
        other = self.current is not None and (st is None or st.path != self.current)
        note = f"tune of {self.current.stem} running · x cancels" if other else ""
        self.app.pane(TunePane).show(st.tune if st is not None else None, note)

    def _changed(self, path: Path) -> None:
        if path == self.app.selected:
            self.follow(self.app.ops.get(path))

    def _end(self, path: Path | None, text: str) -> None:
        """The tune of `path` ended (done, cancelled, failed): its board says `text`."""
        board = self._board(path) if path is not None else None
        if board is not None:
            board.running, board.status = False, text
        self.current = None
        self.follow(self.app.ops.get(self.app.selected))

    def _swept(self, msg: SampleSwept) -> None:
        from ...devkit.tune.sample_tune import best

        out, st = msg.outcome, self.app.ops.get(msg.path)
        top = best(list(out.rows))
        board = self._board(msg.path)
        if board is not None:  # the outcome is the whole story: the rows again, in order
            board.ranked.clear()
            board.done, board.total = len(out.rows), out.total
        for r in out.rows:
            if r.ok and board is not None:
                board.offer(r.time_us, dict(r.params))
            elif not r.ok:
                self.app.log_line(f"{msg.path.stem}: {r.params} failed: {r.reason}", Level.ERROR)
        if top is not None and st is not None:
            st.best_params = dict(top.params)
        verb = f"cancelled after {len(out.rows)} of {out.total}" if out.cancelled else "done"
        text = (
            f"sweep {verb}: best {top.time_us:,.3f} µs with {dict(top.params)} · a applies"
            if top is not None
            else f"sweep {verb}: no configuration ran"
        )
        self._end(msg.path, text)
        self.app.log_line(f"{msg.path.stem}: {text}", Level.WARN if out.cancelled else Level.OK)

    def quick(self) -> None:
        self.start(True)

    def show(self, msg: TuneProgress | TuneFinished | SweepProgress | SampleSwept) -> None:
        if isinstance(msg, TuneProgress):
            self._progress(msg)
            return
        if isinstance(msg, SweepProgress):
            self._sweep_progress(msg)
            return
        if isinstance(msg, SampleSwept):
            self._swept(msg)
            return
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
        self._end(msg.path, text)
        self.app.log_line(f"{msg.path.stem}: {text}", Level.OK)

    def _progress(self, msg: TuneProgress) -> None:
        e, board = msg.event, self._board(msg.path)
        if board is None:  # its file was deleted while it tuned
            return
        eta = f" · ETA {e.eta_s:.0f} s" if e.eta_s is not None else ""
        board.done, board.total = e.done, e.total
        board.status = (
            f"{e.kind}: {e.evaluated} run, {e.cached} cached, {e.invalid} pruned · {e.done}/{e.total}{eta}"
        )
        r = e.result
        if r is not None and r.time_us is not None:
            board.offer(r.time_us, dict(r.params or {}), e.rank)
        self._changed(msg.path)

    def _sweep_progress(self, msg: SweepProgress) -> None:
        step, board = msg.step, self._board(msg.path)
        if board is None:
            return
        board.done, board.total = step.done, step.total
        board.status = f"sweep of {msg.path.stem}: {step.done}/{step.total} configurations run · x cancels"
        if step.row.ok:
            board.offer(step.row.time_us, dict(step.row.params))
        self._changed(msg.path)

    def failed(self, error: BaseException) -> None:
        status = error.result.status if isinstance(error, ToolFailed) else "failed"
        self._end(error.path if isinstance(error, ToolFailed) else self.current, f"tune {status}")

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
        from ...devkit.tune.apply import plan_apply

        app, st = self.app, self._tuned()
        if st is None:
            return
        from ...devkit.tune.sample_tune import is_sample

        if is_sample(st.path):
            self._write_sample(st)
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

    def _write_sample(self, st: OperatorState) -> None:
        """The best values into the sample's C++ literals (`constexpr`, `#define`)."""
        from ...devkit.tune.sample_tune import apply_edits

        app = self.app
        edits = [e for e in apply_edits(st.path, st.best_params) if e.after != e.before]
        if not edits:
            app.log_line(f"{st.path.stem}: the sample already has the best values", Level.DIM)
            return
        self.switch("log")
        for e in edits:
            for line in e.diff().splitlines():
                app.log_line("  " + line, Level.DIM)
            f = Path(e.path)
            tmp = f.with_name(f".{f.name}.asc-tui.tmp")
            tmp.write_text(e.after, encoding="utf-8")
            tmp.replace(f)  # atomic, like an editor's save: the watcher reruns it
        st.params = {}
        app.log_line(f"{st.path.stem}: wrote {st.best_params} into the sample", Level.OK)
        if not app.watch_enabled:
            app.submit([st.path])
