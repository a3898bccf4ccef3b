"""The workbench's tool actions: profile report, debug, precision, bench, tune, export.

Each calls its devkit feature (a broken one is an error, never a silent fallback). Jobs
that execute user code (debug, bench) go to a second worker process so hot reload never waits
for them; the tuner runs its own evaluation processes and is driven from a thread here, with its
`CancelToken` behind the cancel key.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import TabbedContent

from .lifecycle import while_mounted
from .messages import ToolFinished, TuneProgress
from .state import Status
from .widgets.bench_table import BenchRow, BenchTable
from .widgets.tune_pane import TunePane

BASELINE_NAME = "baseline"


class ToolActions:
    """Mixin for `Workbench`: needs `ops`, `selected`, `chip`, `config`, `log_line`..."""

    def init_tools(self) -> None:
        self.tool_worker = None  # a RunWorker for debug/bench jobs, started on first use
        self.tune_worker = None  # a RunWorker for tunes (its own process: keys stay free)
        self.tune_running = False
        self.exports_dir: Path | None = None

    def shutdown_tools(self) -> None:
        for w in (self.tool_worker, self.tune_worker):
            if w is not None:
                w.close()

    def _tools(self):
        from ..devkit.worker import RunWorker

        if self.tool_worker is None:
            self.tool_worker = RunWorker(timeout_s=max(self.config.worker_timeout, 60.0))
        return self.tool_worker

    def _need(self, name: str, what: str):
        import importlib

        return importlib.import_module(f"asc_tui.devkit.{name}")

    def _selected_state(self):
        if self.selected is None:
            self.notify("no operator selected", severity="warning")
            return None
        return self.ops[self.selected]

    def _switch(self, tab: str) -> None:
        if tab == "log" and self.screen.has_class("-wide"):
            return
        self.pane(TabbedContent).active = tab

    # -- profile / precision ----------------------------------------------------------------
    def action_profile_report(self) -> None:
        st = self._selected_state()
        if st is None:
            return
        if st.good is None:
            self.log_line(f"{st.path.stem}: no result to profile yet", "warn")
            return
        text = profile_report_text(st.good, max(100, self.size.width - 28))
        self._switch("log")  # the same report `asc-tui profile --pipeline` prints
        self.log_line(f"{st.path.stem}: profile report", "ok")
        for line in text.splitlines():
            self.log_line("  " + line)

    def action_precision_check(self) -> None:
        st = self._selected_state()
        if st is None:
            return
        self._switch("log")
        rep = st.last.report if st.last else None
        if rep is None or rep.precision is None:
            self.log_line(
                f"{st.path.stem}: no precision result (the run failed or is timing-only); press r", "warn"
            )
            return
        for o in rep.precision.outputs:
            self.log_line(
                f"{st.path.stem}: {o.name} {o.dtype} {o.verdict}: max abs "
                f"{o.max_abs_error:.3g} (atol {o.atol:g}), mean rel "
                f"{o.mean_rel_error:.3g} (rtol {o.rtol:g}), cosine "
                f"{o.cosine_similarity:.6f}, nan {o.nan}, inf {o.inf}",
                "ok" if o.verdict == "PASS" else "error",
            )
            for w in list(o.worst)[:5]:
                self.log_line(f"    worst: {w}", "dim")

    # -- debug (sanitizer) ------------------------------------------------------------------
    def action_debug_tools(self) -> None:
        st = self._selected_state()
        if st is None or self._need("sanitizer", "debug tools") is None:
            return
        req = self.make_request(st.path)
        self.log_line(f"{st.path.stem}: sanitizer run (memcheck, racecheck, initcheck, synccheck)…", "dim")
        self._switch("log")
        self._tool_job(
            "debug", st.path, _call("asc_tui.tui.jobs:debug_run", (req,), label=f"{st.path.stem} (debug)")
        )

    def _tool_job(self, tool: str, path: Path, job) -> None:
        worker = self._tools()

        def work():
            result = worker.call(job)
            self.post_message(ToolFinished(tool, path, result, result.report))

        self.run_worker(work, thread=True, group=f"tool-{tool}", exclusive=True, exit_on_error=False)

    # -- bench ------------------------------------------------------------------------------
    def action_bench(self, save: bool = False) -> None:
        st = self._selected_state()
        if st is None or (bench := self._need("bench", "bench")) is None:
            return
        th = self.config.thresholds
        req = bench.BenchRequest(
            op=str(st.path),
            cases=(st.case,) if st.case else None,
            chip=self.chip,
            params=dict(st.params),
            against=None if save else BASELINE_NAME,
            save_baseline=BASELINE_NAME if save else None,
            thresholds=bench.Thresholds(ship=th.ship, optimise=th.optimise, regression=th.regression),
            timeout_s=self.config.worker_timeout,
        )
        what = "save baseline" if save else "bench vs baseline"
        self.log_line(f"{st.path.stem}: {what}…", "dim")
        self._switch("bench")
        self._tool_job(
            "save_baseline" if save else "bench",
            st.path,
            _call("asc_tui.tui.jobs:bench_run", (req,), label=f"{st.path.stem} bench"),
        )

    def action_save_baseline(self) -> None:
        self.action_bench(save=True)

    def _bench_done(self, msg: ToolFinished) -> None:
        res = msg.value
        if res is None:
            return
        for n in res.notices:
            self.log_line(f"bench: {n}", "warn")
        for e in res.errors:
            self.log_line(f"bench: {e}", "error")
        table = self.pane(BenchTable)
        for c in res.cases:
            key = f"{res.operator}/{c.case}/{res.chip}"
            row = table.row(key) or BenchRow(
                res.operator, c.case, res.chip, threshold=self.config.thresholds.regression
            )
            if c.time_us is not None:
                row.current = c.time_us
            row.baseline = c.baseline_time_us
            if row.previous is None and getattr(c.change, "previous_time_us", None):
                row.previous = c.change.previous_time_us  # keep the session's own Δ
            row.verdict = c.verdict.value if c.verdict else ("saved" if msg.tool == "save_baseline" else "")
            if c.regression is not None:
                row.verdict += " REGRESSION"
                self.log_line(f"bench: {c.regression.message()}", "error")
            table.upsert(row)
            t = f"{c.time_us:,.3f} µs" if c.time_us is not None else "no time"
            base = f"{c.baseline_time_us:,.3f} µs" if c.baseline_time_us else "none"
            rel = f" ({c.relative:.1%} of baseline speed)" if c.relative else ""
            self.log_line(
                f"bench {res.operator} [{c.case}]: {t}, baseline {base}{rel}, verdict {row.verdict or '-'}",
                "ok" if not c.errors else "error",
            )
            for e in c.errors:
                self.log_line(f"  {e}", "error")

    # -- tune -------------------------------------------------------------------------------
    def action_tune(self, quick: bool = False) -> None:
        st = self._selected_state()
        if st is None:
            return
        session = self._need("tuner.session", "auto-tune")
        if session is None:
            return
        if self.tune_running:
            self.notify("a tune is running: x cancels it", severity="warning")
            return
        strategy = "quick" if quick else "exhaustive"
        req = session.TuneRequest(
            op=str(st.path),
            case=st.case,
            chip=self.chip,
            strategy=strategy,
            timeout_s=self.config.worker_timeout,
        )
        from ..devkit.worker import Call, RunWorker

        if self.tune_worker is None:
            self.tune_worker = RunWorker(timeout_s=None)
        worker = self.tune_worker
        self.tune_running = True
        pane = self.pane(TunePane)
        pane.start(f"{strategy} tune of {st.path.stem} [{st.case or 'default'}]…")
        self._switch("tune")
        self.log_line(f"{st.path.stem}: {strategy} tune started (x cancels)", "dim")
        path = st.path

        def work():
            res = worker.call(
                Call("asc_tui.tui.jobs:tune_job", (req,), progress_kw="progress", label=f"{path.stem} tune"),
                timeout_s=None,
                on_progress=lambda e: self.post_message(TuneProgress(e)),
            )
            self.post_message(ToolFinished("tune", path, res, res.report))

        self.run_worker(work, thread=True, group="tune", exclusive=True, exit_on_error=False)

    def action_quick_tune(self) -> None:
        self.action_tune(quick=True)

    @while_mounted
    def on_tune_progress(self, msg: TuneProgress) -> None:
        if self.closing:
            return
        e = msg.event
        pane = self.pane(TunePane)
        pane.progress(
            e.done, e.total, e.eta_s, f"{e.kind}: {e.evaluated} run, {e.cached} cached, {e.invalid} pruned"
        )
        r = e.result
        t = getattr(r, "time_us", None) if r is not None else None
        if t is not None:
            pane.offer(t, dict(getattr(r, "params", {}) or {}))

    def _tuned_state(self):
        """The selected operator's state if it has tuned parameters (else say how to get them)."""
        st = self._selected_state()
        if st is not None and not st.best_params:
            self.notify("no tuned parameters yet: press t or T first", severity="warning")
            return None
        return st

    def action_apply_best(self) -> None:
        st = self._tuned_state()
        if st is None:
            return
        st.params = dict(st.best_params)
        self.log_line(
            f"{st.path.stem}: applied {st.params} to this session's runs "
            "(A writes them into the operator file)",
            "ok",
        )
        self.update_status()
        self.submit([st.path])

    def action_write_best(self) -> None:
        """Write the tuned parameters as the PARAMS defaults (devkit.tuner.apply); the watcher
        sees the save and reruns, so the file, not the session, carries the choice."""
        st = self._tuned_state()
        if st is None:
            return
        apply_mod = self._need("tuner.apply", "write best parameters")
        if apply_mod is None:
            return
        try:
            plan = apply_mod.plan_apply(st.path, st.best_params)
        except Exception as exc:  # OperatorError naming the PARAMS line, or a parse error
            self.log_line(f"{st.path.stem}: cannot write the parameters: {exc}", "error")
            return
        if not plan.changed:
            self.log_line(f"{st.path.stem}: the file already has the best parameters", "dim")
            return
        self._switch("log")
        for line in plan.diff().splitlines():
            self.log_line("  " + line, "dim")
        tmp = st.path.with_name(f".{st.path.name}.asc-tui.tmp")
        tmp.write_text(plan.after, encoding="utf-8")
        tmp.replace(st.path)  # atomic, like an editor's save: the watcher reruns it
        st.params = {}
        self.log_line(f"{st.path.stem}: wrote {st.best_params} into {st.path.name}", "ok")
        if not self.watch_enabled:
            self.submit([st.path])

    def action_cancel(self) -> None:
        cancelled = []
        if self.tune_worker is not None and self.tune_running:
            self.tune_worker.interrupt()
            cancelled.append("tune")
        if self.rerunner is not None and not self.rerunner.idle():
            self.rerunner.cancel()
            cancelled.append("run")
        if self.tool_worker is not None and self.tool_worker.busy:
            self.tool_worker.cancel()
            cancelled.append("tool")
        self.log_line(
            f"cancelled: {', '.join(cancelled)}" if cancelled else "nothing to cancel",
            "warn" if cancelled else "dim",
        )

    # -- export -----------------------------------------------------------------------------
    def action_export(self) -> None:
        st = self._selected_state()
        if st is None:
            return
        if st.good is None or st.good.emulation is None:
            self.notify("nothing to export yet", severity="warning")
            return
        rep = st.good
        out = self.exports_dir or (Path.cwd() / ".asc-tui" / "exports")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        base = out / f"{rep.operator}-{rep.case}-{stamp}"

        def work():
            import json

            out.mkdir(parents=True, exist_ok=True)
            written = []
            from ..devkit import profile as prof
            from ..devkit import trace

            info = trace.write_trace(rep.emulation, f"{base}.trace.json")
            written.append(f"{base}.trace.json ({info.events} events)")
            with open(f"{base}.report.json", "w", encoding="utf-8") as fh:
                json.dump(prof.profile(rep).to_dict(), fh, indent=1, default=str)
            written.append(f"{base}.report.json")
            with open(f"{base}.report.txt", "w", encoding="utf-8") as fh:
                fh.write(profile_report_text(rep, 100) + "\n")
            written.append(f"{base}.report.txt")
            return written

        def finish(worker_result):
            pass

        def run():
            try:
                files = work()
                self.post_message(ToolFinished("export", st.path, None, files))
            except Exception as exc:
                self.post_message(ToolFinished("export", st.path, None, None, str(exc)))

        self.run_worker(run, thread=True, group="export", exit_on_error=False)

    # -- results ----------------------------------------------------------------------------
    @while_mounted
    def on_tool_finished(self, msg: ToolFinished) -> None:
        if self.closing:
            return
        name = msg.path.stem
        if msg.error:
            self.log_line(f"{name}: {msg.tool} failed: {msg.error}", "error")
            if msg.tool == "tune":
                self.tune_running = False
                self.pane(TunePane).finish(f"tune failed: {msg.error}")
            return
        res = msg.result
        if msg.tool == "tune" and res is not None and not res.ok:
            self.tune_running = False
            self.pane(TunePane).finish(f"tune {res.status}")
        if res is not None and not res.ok:
            self.log_line(f"{name}: {msg.tool} {res.status}", "error")
            for e in res.errors:
                self.pane("#log-pane").add_error(name, e)
                if self.screen.has_class("-wide"):
                    self.pane("#bottom-log").add_error(name, e)
            return
        if msg.tool == "debug":
            d = msg.value
            rep = d["report"]
            for line in d["findings"]:
                self.log_line(f"{name}: {line}", "error")
            for e in d["errors"]:
                self.log_line(f"{name}: {e.format()}", "error")
            dl = d.get("deadlock")
            if dl is not None:
                ok, ranks, text = dl
                for line in text.splitlines():
                    self.log_line(f"{name}: deadlock check ({ranks} ranks): {line}", "ok" if ok else "error")
            if d["clean"]:
                self.log_line(
                    f"{name}: sanitizer clean ({', '.join(d['tools'])}), "
                    f"precision {'PASS' if rep and rep.passed else 'not PASS'}",
                    "ok",
                )
            else:
                deadlock = dl is not None and not dl[0]
                self.log_line(
                    f"{name}: debug found {len(d['findings'])} issue(s), "
                    f"{len(d['errors'])} other error(s)" + (", a deadlock" if deadlock else ""),
                    "error",
                )
                st = self.ops.get(msg.path)
                if st is not None and (d["findings"] or deadlock):
                    st.status = Status.SANITIZER
                    self.pane("#sidebar").set_status(msg.path, st.status, st.stale)
                    self.update_status()
        elif msg.tool in ("bench", "save_baseline"):
            self._bench_done(msg)
        elif msg.tool == "tune":
            self._tune_done(msg)
        elif msg.tool == "export":
            for f in msg.value:
                self.log_line(f"exported {f}", "ok")
            self.notify("exported: " + ", ".join(Path(f.split()[0]).name for f in msg.value))

    def _tune_done(self, msg: ToolFinished) -> None:
        self.tune_running = False
        rep = msg.value
        pane = self.pane(TunePane)
        st = self.ops.get(msg.path)
        best = getattr(rep, "best", None)
        if best is not None and st is not None:
            st.best_params = dict(best.params)
        verb = "cancelled" if getattr(rep, "cancelled", False) else "done"
        text = (
            f"tune {verb}: best {best.time_us:,.3f} µs with {dict(best.params)} · a applies"
            if best is not None and getattr(best, "time_us", None) is not None
            else f"tune {verb}: no valid configuration"
        )
        pane.finish(text)
        self.log_line(f"{msg.path.stem}: {text}", "ok")


def _call(target: str, args: tuple, label: str = ""):
    from ..devkit.worker import Call

    return Call(target, args, label=label)


def profile_report_text(report, width: int) -> str:
    """The profile CLI's report (breakdown, pipeline report, hot lines) as plain text."""
    from ..devkit.present.profile import report_text
    from ..devkit.profile import profile

    return report_text(profile(report), width, pipeline_report=True, lines=8)
