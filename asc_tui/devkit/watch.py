"""Hot reload without a UI: watch operator files, rerun only what a save affected.

Two pieces, both plain threads so the headless `asc-tui watch` and the workbench share them:

- `FileWatcher` turns `watchfiles` events into debounced `ChangeSet`s. Editor temp files are
  ignored, so an atomic save (write `.foo.py.tmp`, rename onto `foo.py`) is one change of foo.py.
  An operator file affects that operator; a chip/config TOML or a helper module affects them all.
- `Rerunner` runs queued operators one at a time in a `RunWorker`. When a save touches the
  operator whose run is in flight, that run is cancelled and restarted with the new source.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..npu.errors import ErrorInfo
from .discovery import is_operator_file
from .runner import RunRequest
from .worker import RunWorker, WorkResult, WorkStatus

#: Quiet time after the last event before a batch of changes is delivered (milliseconds).
DEFAULT_STEP_MS = 15
#: Longest time changes are grouped for while events keep coming (milliseconds).
DEFAULT_DEBOUNCE_MS = 800

_TEMP_SUFFIXES = (".tmp", ".swp", ".swx", ".swo", "~", ".bak", ".part")


def is_temp_file(path: Path) -> bool:
    """Editor scratch files: `.foo.py.swp`, `foo.py~`, `.#foo.py`, `4913` (vim's probe)..."""
    name = path.name
    return name.startswith(".") or name.startswith("#") or name.endswith(_TEMP_SUFFIXES) or name.isdigit()


@dataclass(frozen=True)
class ChangeSet:
    """What one debounced batch of file events means for the runs."""

    operators: frozenset[Path]  # operator files saved (exist now)
    removed: frozenset[Path]  # operator files gone
    everything: bool  # a chip/config/helper file changed: every operator is affected
    config: bool  # asc-tui.toml / pyproject.toml changed: reload the config first
    paths: tuple[str, ...]

    def affects(self, path: Path) -> bool:
        return self.everything or Path(path).resolve() in self.operators


def classify(
    changes: Iterable[tuple[object, str]], operators_dir: Path, extra: Iterable[Path] = ()
) -> ChangeSet | None:
    """Map raw `(change, path)` events onto operators; None if nothing relevant changed."""
    root = Path(operators_dir).resolve()
    extra = {Path(p).resolve() for p in extra}
    ops: set[Path] = set()
    removed: set[Path] = set()
    everything = config = False
    paths = []
    for _change, raw in changes:
        p = Path(raw).resolve()
        if is_temp_file(p):
            continue
        if p in extra or p.suffix == ".toml":
            everything = True
            config = config or p.name in ("asc-tui.toml", "pyproject.toml")
        elif is_operator_file(p) and p.parent == root:
            (ops if p.exists() else removed).add(p)
        elif p.suffix == ".py":
            everything = True  # a helper module the operators may import
        else:
            continue
        paths.append(str(p))
    if not paths:
        return None
    return ChangeSet(frozenset(ops), frozenset(removed - ops), everything, config, tuple(sorted(set(paths))))


class FileWatcher:
    """A background thread delivering `ChangeSet`s for an operators dir (plus extra files)."""

    def __init__(
        self,
        operators_dir: Path,
        on_change: Callable[[ChangeSet], None],
        extra: Iterable[Path] = (),
        step_ms: int = DEFAULT_STEP_MS,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    ):
        self.operators_dir = Path(operators_dir).resolve()
        self.extra = [Path(p).resolve() for p in extra]
        self.on_change = on_change
        self.step_ms, self.debounce_ms = step_ms, debounce_ms
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: str | None = None  # why watching stopped, if it did

    def start(self) -> FileWatcher:
        self._thread = threading.Thread(target=self._loop, name="asc-tui-watch", daemon=True)
        self._thread.start()
        return self

    def wait_ready(self, timeout: float = 5.0) -> bool:
        """True once the OS watch is installed (saves after this are seen)."""
        return self._ready.wait(timeout)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)

    def _targets(self) -> list[str]:
        """The operators dir (recursively: helper packages) and each extra file itself."""
        targets = {str(self.operators_dir)}
        targets.update(str(p) for p in self.extra if p.exists())
        return sorted(targets)

    def _loop(self) -> None:
        import watchfiles

        def relevant(_change, path: str) -> bool:
            p = Path(path)
            return p.suffix in (".py", ".toml") and not is_temp_file(p)

        gen = watchfiles.watch(
            *self._targets(),
            watch_filter=None,
            stop_event=self._stop,
            step=self.step_ms,
            debounce=self.debounce_ms,
            rust_timeout=200,
            yield_on_timeout=True,
            recursive=True,
        )
        try:
            for changes in gen:
                self._ready.set()
                batch = [(c, p) for c, p in changes if relevant(c, p)]
                if not batch:
                    continue
                cs = classify(batch, self.operators_dir, self.extra)
                if cs is not None:
                    self.on_change(cs)
        except Exception as exc:  # the dir vanished, inotify limits...: say so, don't hang
            self.error = f"file watching stopped: {type(exc).__name__}: {exc}"
            self._ready.set()


class Rerunner:
    """Runs operators (queued by path) in a worker, one at a time, newest source wins.

    `on_start(path, request)` and `on_result(path, result)` are called from the rerunner's
    thread; a UI forwards them to its own loop. Cancelled runs are not reported as results:
    `on_cancel(path)` says the run that `on_start` announced ended without one.
    """

    def __init__(
        self,
        worker: RunWorker,
        make_request: Callable[[Path], RunRequest],
        on_start: Callable[[Path, RunRequest], None] | None = None,
        on_result: Callable[[Path, WorkResult], None] | None = None,
        on_cancel: Callable[[Path], None] | None = None,
    ):
        self.worker = worker
        self.make_request = make_request
        self.on_start = on_start or (lambda p, r: None)
        self.on_result = on_result or (lambda p, r: None)
        self.on_cancel = on_cancel or (lambda p: None)
        self._pending: dict[Path, None] = {}
        self._cond = threading.Condition()
        self._current: Path | None = None
        self._stopped = False
        self.cancelled = 0
        self._thread = threading.Thread(target=self._loop, name="asc-tui-rerun", daemon=True)
        self._thread.start()

    @property
    def current(self) -> Path | None:
        return self._current

    def submit(self, paths: Iterable[Path], restart_running: bool = True, front: bool = False) -> None:
        """Queue operators; a queued operator whose run is in flight has that run cancelled.

        `front`: run these before what was already queued (a save jumps a "run all").
        """
        with self._cond:
            new = [Path(p).resolve() for p in paths]
            if front:
                rest = [p for p in self._pending if p not in new]
                self._pending = dict.fromkeys([*new, *rest])
            else:
                self._pending.update(dict.fromkeys(new))
            if restart_running and self._current in new:
                self.worker.cancel()
            self._cond.notify()

    def cancel(self) -> None:
        """Drop the queue and stop the run in flight."""
        with self._cond:
            self._pending.clear()
            if self._current is not None:
                self.worker.cancel()

    def forget(self, path: Path) -> None:
        """Drop `path` from the queue and stop its run if it is in flight (its file is gone)."""
        path = Path(path).resolve()
        with self._cond:
            self._pending.pop(path, None)
            if self._current == path:
                self.worker.cancel()

    def idle(self) -> bool:
        with self._cond:
            return not self._pending and self._current is None

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._pending.clear()
            self._cond.notify()
        self.worker.cancel()
        self._thread.join(3.0)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                path = next(iter(self._pending))
                del self._pending[path]
                self._current = path
            try:
                request = self.make_request(path)
                self.on_start(path, request)
                result = self.worker.run(request)
            except Exception as exc:  # a bad request (config) must not kill the loop
                request = RunRequest(str(path))
                result = WorkResult(
                    request,
                    WorkStatus.RAISED,
                    None,
                    ErrorInfo("config", f"{type(exc).__name__}: {exc}", str(path)),
                    0.0,
                )
            finally:
                with self._cond:
                    self._current = None
            if result.status is WorkStatus.CANCELLED:
                self.cancelled += 1
                self.on_cancel(path)
                continue
            self.on_result(path, result)
