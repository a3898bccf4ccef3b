"""`asc-tui [PATH]`: the workbench. Save a kernel, every pane updates; the keyboard stays free.

Threads and processes: a `FileWatcher` thread turns saves into `ChangeSet`s, a `Rerunner` thread
runs affected operators in a warm `RunWorker` process (hangs and crashes stay there), and both
post typed messages here. The app only renders immutable results, inside `batch_update()`.
Tools (profile, precision, debug, bench, tune, export) are controllers in `tools`: each runs
its devkit call in a worker and posts a typed message; any worker that raises is shown by the
one `on_worker_state_changed` handler (log, status line, toast). The emulator stack
(numpy, the devkit) is imported after the first paint, in a thread, so the screen comes up first.

The panes' arrangement (compose, CSS, the wide/narrow/small layouts) is `widgets/layout.py`.
"""

from __future__ import annotations

import gc
import time
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import App
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from ..config import Config, ConfigError, resolve_operators_dir, watched_extras
from ..devkit.chips import chip_name, default_chip_name
from ..devkit.run.discovery import find_operators
from ..devkit.text import case_text, params_text
from .bench_sync import HistoryLoaded
from .commands import WorkbenchCommands
from .keymap import ACTIONS, app_bindings, unknown_ids
from .lifecycle import while_mounted
from .messages import (
    EngineReady,
    FilesChanged,
    RunCancelled,
    RunFinished,
    RunStarted,
    ToolFailed,
    ToolMessage,
)
from .navigation import Navigation
from .runs import BIG_RESULT, RunResults  # noqa: F401 - BIG_RESULT: tests
from .screens.diff import DiffActions
from .screens.help import HelpScreen
from .state import OperatorState
from .themes import DEFAULT_THEME, load_themes
from .tools import Tools
from .widgets.layout import WorkbenchLayout
from .widgets.log_pane import Level, LogPane
from .widgets.operator_tree import OperatorTree
from .widgets.source_view import SourceView
from .widgets.textfit import fit
from .widgets.timeline import TimelineView


def short_path(p: Path) -> str:
    """Relative to the working directory when below it (what the user typed, usually)."""
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return str(p)


class Workbench(WorkbenchLayout, Navigation, DiffActions, App):
    TITLE = "asc-tui"
    BINDINGS = app_bindings()
    COMMANDS = App.COMMANDS | {WorkbenchCommands}

    def __init__(
        self,
        path: str | None = None,
        theme: str | None = None,
        config: Config | None = None,
        config_error: ConfigError | None = None,
        chip: str | None = None,
        watch: bool = True,
        run_on_start: bool = True,
        clock=None,
        show_host_times: bool = True,
        worker=None,
    ):
        super().__init__()
        self.config = config or Config()
        self.config_error = config_error
        self.ops_dir = resolve_operators_dir(path, self.config)
        self.chip = chip or self.config.chip
        self.requested_theme = theme or self.config.theme
        self.watch_enabled, self.run_on_start = watch, run_on_start
        self.clock, self.show_host_times = clock, show_host_times
        self.ops: dict[Path, OperatorState] = {}
        self.selected: Path | None = None
        self.worker = worker  # RunWorker
        self.rerunner = None  # Rerunner, once the engine is up
        self.watcher = None  # FileWatcher
        self.runs = RunResults(self)
        self.results_seen = 0  # RunFinished messages applied (tests, benchmarks)
        self.closing = False
        self.first_paint_at: float | None = None  # perf_counter() after the first refresh
        self._layout: tuple | None = None  # (wide, narrow, small) as `_layout_for` last set it
        self.failure: str | None = None  # the newest worker failure, on the status line
        self.tools = Tools(self)
        self._themes: list[str] = []
        self._theme_problems = self._install_themes()

    def _install_themes(self) -> list[str]:
        """Register themes/*.toml and pick the start theme before the first style pass (a theme
        switch after mount re-styles every widget: ~100 ms of start-up)."""
        themes, problems = load_themes()
        for t in themes.values():
            self.register_theme(t)
        self._themes = sorted(themes)
        want = self.requested_theme or DEFAULT_THEME
        if want in self.available_themes:
            self.theme = want
        elif self.requested_theme:
            problems.append(f"unknown theme {want!r}; available: {', '.join(self._themes)}")
        return problems

    def on_mount(self) -> None:
        for p in self._theme_problems:
            self.log_line(f"theme: {p}", Level.WARN)
        self.apply_keymap()
        if self.config_error is not None:
            for p in self.config_error.problems:
                self.log_line(f"config error: {p.format()}", Level.ERROR)
            self.notify(str(self.config_error), title="config", severity="error", timeout=10)
        tree = self.pane(OperatorTree)
        paths = find_operators(self.ops_dir)
        for p in paths:
            self.ops[p] = OperatorState(p, case=self.config.case)
        tree.set_operators(paths)
        self.log_line(
            f"workbench on {short_path(self.ops_dir)} ({len(paths)} operators), chip "
            f"{self.chip or default_chip_name() + ' (default)'}"
        )
        if paths:
            self.selected = paths[0]
            tree.select_path(paths[0])
        self._layout_for(self.size.width, self.size.height)
        self.update_status()
        self.call_after_refresh(self._first_paint)
        self.call_after_refresh(lambda: self.run_in_thread(self._start_engine, "engine", "engine"))

    def _first_paint(self) -> None:
        self.first_paint_at = time.perf_counter()

    def _start_engine(self) -> None:
        """Import the emulator stack and start worker, rerunner and watcher (off the UI)."""
        from ..devkit.run.watch import FileWatcher, Rerunner
        from ..devkit.run.worker import RunWorker

        if self.worker is None:
            self.worker = RunWorker(
                timeout_s=self.config.worker_timeout, spare=True, memory_mb=self.config.worker_memory_mb
            )
        self.rerunner = Rerunner(
            self.worker,
            self.runs.request,
            on_start=lambda p, r: self.post_message(RunStarted(p, r)),
            on_result=lambda p, r: self.post_message(RunFinished(p, r)),
            on_cancel=lambda p: self.post_message(RunCancelled(p)),
        )
        if self.watch_enabled:
            extra = watched_extras(self.config.source, self.chip)
            self.watcher = FileWatcher(
                self.ops_dir, lambda cs: self.post_message(FilesChanged(cs)), extra=extra
            ).start()
        from ..devkit.views import profile, result, timeline  # noqa: F401 - warm for the first result

        if self.closing:  # the app quit while this thread started the engine: stop what it made
            self.shutdown()
            return
        self.post_message(EngineReady())

    @while_mounted
    def on_engine_ready(self, _msg: EngineReady) -> None:
        # Everything alive now (modules, classes, widgets: ~85k objects, ~450k references)
        # lives as long as the app: the garbage collector's full passes stop walking it. Such a
        # pass took 40–120 ms in whichever thread triggered it, a freeze of the UI while a big
        # result was being prepared (bench_tui: 16384³ matmul, worst block 90–190 → 31–42 ms).
        gc.freeze()
        paths = list(self.ops)
        if self.run_on_start and paths:
            first = self.selected if self.selected in self.ops else paths[0]
            self.rerunner.submit([first, *[p for p in paths if p != first]])

    def submit(self, paths, front: bool = True) -> bool:
        """Queue runs (ahead of older ones unless `front` is False); False while the engine is
        still starting."""
        if self.rerunner is None:
            self.notify("still starting the emulator…", timeout=2)
            return False
        self.rerunner.submit(list(paths), front=front)
        return True

    def on_unmount(self) -> None:
        self.shutdown()

    def shutdown(self) -> None:
        self.closing = True  # results still in flight are dropped from here on
        gc.unfreeze()  # (`on_engine_ready`: what the app held may be collected again)
        self.tools.close()
        if self.watcher is not None:
            self.watcher.stop()
        if self.rerunner is not None:
            self.rerunner.stop()
        if self.worker is not None:
            self.worker.close()

    def on_tabbed_content_tab_activated(self, event) -> None:
        if event.pane.id == "source":
            self.call_after_refresh(self.pane(SourceView).scroll_to_hot)

    # -- keymap / themes -------------------------------------------------------------------
    def apply_keymap(self) -> None:
        keymap = dict(self.config.keymap)
        timeline_ids = {b.id for b in TimelineView.BINDINGS}
        for bad in unknown_ids(keymap, timeline_ids):
            self.log_line(f"keymap: no binding with id {bad!r} (see `?` for the ids)", Level.WARN)
        if keymap:
            self.set_keymap(keymap)

    def effective_keys(self) -> dict[str, str]:
        return {**{a.id: a.keys for a in ACTIONS}, **self.config.keymap}

    def theme_names(self) -> list[str]:
        return list(self._themes)

    def get_system_commands(self, screen):
        """Textual's own palette commands, minus those the workbench names itself (one "Theme",
        one "Quit": the palette never lists two entries of the same name)."""
        ours = {a.title for a in ACTIONS}
        for cmd in super().get_system_commands(screen):
            if cmd.title not in ours:
                yield cmd

    def action_next_theme(self) -> None:
        names = self._themes or sorted(self.available_themes)
        i = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(i + 1) % len(names)]
        self.notify(f"theme {self.theme}", timeout=2)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.effective_keys()))

    # -- logging / status ------------------------------------------------------------------
    def log_line(self, text: str, level: Level = Level.INFO) -> None:
        for pane in self.log_panes():
            pane.add(text, level)

    def log_panes(self) -> list[LogPane]:
        return list(self.workbench_screen.query(LogPane))

    def update_status(self) -> None:
        st = self.ops.get(self.selected) if self.selected else None
        parts = []
        if st is not None:
            rep = st.good
            case = case_text(rep.case if rep is not None else None, st.case)
            parts += [f"{st.path.stem} [{case}]", st.status.upper()]
            if rep is not None and rep.emulation is not None:
                parts.append(f"task {rep.emulation.time_us:,.3f} µs")
        parts.append(f"chip {chip_name(self.chip)}")
        if st is not None:
            if st.stale:
                parts.append("STALE (showing the last good result)")
            if st.params:
                parts.append(params_text(st.params))
        busy = self.rerunner.current if self.rerunner else None
        if busy is not None:
            parts.append(f"running {busy.stem}…")
        if self.failure:
            parts.append(self.failure)
        lines = fit(parts, max(self.size.width - 2, 20))  # wrapped between phrases, never cut
        self.pane("#status", Static).update(Text("\n".join(lines)))

    # -- tools and worker failures ---------------------------------------------------------
    def action_tool(self, name: str, command: str = "start") -> None:
        """A tool key: `command` of the tool's controller (`tool('bench', 'save')`)."""
        getattr(self.tools[name], command)()

    def action_cancel(self) -> None:
        cancelled = ["tune"] if self.tools.tune.cancel() else []
        if self.rerunner is not None and not self.rerunner.idle():
            self.rerunner.cancel()
            cancelled.append("run")
        if self.tools.process.cancel():
            cancelled.append("tool")
        self.log_line(
            f"cancelled: {', '.join(cancelled)}" if cancelled else "nothing to cancel",
            Level.WARN if cancelled else Level.DIM,
        )

    def run_in_thread(self, work, name: str, group: str, exclusive: bool = False) -> Worker:
        """A thread worker; if `work` raises, `on_worker_state_changed` shows it (the app stays)."""
        return self.run_worker(
            work, name=name, group=group, thread=True, exclusive=exclusive, exit_on_error=False
        )

    @on(ToolMessage)
    @while_mounted
    def show_tool_message(self, msg: ToolMessage) -> None:
        with self.batch_update():
            self.tools.show(msg)

    @while_mounted
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place a worker's failure is shown: the log, the status line and a toast."""
        if event.state is not WorkerState.ERROR:
            return
        worker, error = event.worker, event.worker.error
        failed_job = isinstance(error, ToolFailed)  # the job did not finish in the worker process
        text = str(error) if failed_job else f"{worker.name} failed: {type(error).__name__}: {error}"
        self.log_line(text, Level.ERROR)
        for pane in self.log_panes() if failed_job else ():
            for e in error.result.errors:
                pane.add_error(error.path.stem, e)
        self.failure = text
        self.tools.failed(worker.group, error)
        self.update_status()
        self.notify(text, title="worker failed", severity="error", timeout=8)

    def clear_failure(self) -> None:
        if self.failure is not None:
            self.failure = None
            self.update_status()

    # -- runs ------------------------------------------------------------------------------
    def operator_paths(self) -> list[Path]:
        return list(self.ops)

    @while_mounted
    def on_run_started(self, msg: RunStarted) -> None:
        self.runs.started(msg)

    @while_mounted
    def on_run_cancelled(self, msg: RunCancelled) -> None:
        self.runs.cancelled(msg)

    @while_mounted
    def on_run_finished(self, msg: RunFinished) -> None:
        self.runs.finished(msg)
        self.results_seen += 1

    @while_mounted
    def on_history_loaded(self, msg: HistoryLoaded) -> None:
        self.runs.bench.loaded(msg)

    def show_operator(self, st: OperatorState | None) -> None:
        """Every pane shows this operator's newest good result (marked stale if older); None
        (the last operator file was deleted) empties them."""
        self.runs.show(st)
        self.tools.tune.follow(st)
