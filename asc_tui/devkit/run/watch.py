"""Hot reload without a UI: watch operator files, rerun only what a save affected.

Two pieces, both plain threads so the headless `asc-tui watch` and the workbench share them:

- `FileWatcher` turns `watchfiles` events into debounced `ChangeSet`s. Editor temp files are
  ignored, so an atomic save (write `.foo.py.tmp`, rename onto `foo.py`) is one change of foo.py.
  An operator file affects that operator; a chip/config TOML or a helper module affects them all.
- `Rerunner` runs queued operators in `RunWorker`s: one at a time while runs are quick, and a
  worker of its own for the next operator once the run in flight is slow, so a runaway kernel
  holds up nobody else. When a save touches an operator whose run is in flight, that run is
  cancelled and restarted with the new source.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ...cxx.files import CXX_SUFFIXES, HEADER_SUFFIXES, kernel_for_spec, sample_for, spec_for_kernel
from ...npu.errors import ErrorInfo
from .discovery import is_operator_file
from .runner import RunRequest
from .worker import RunWorker, WorkResult, WorkStatus

#: Quiet time after the last event before a batch of changes is delivered (milliseconds).
DEFAULT_STEP_MS = 15
#: Longest time changes are grouped for while events keep coming (milliseconds).
DEFAULT_DEBOUNCE_MS = 800

#: Saves of these files can change a run: operators, C++ kernels and headers, chips/config.
WATCHED_SUFFIXES = (".py", ".toml", *CXX_SUFFIXES, *HEADER_SUFFIXES)

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
        sample = sample_for(p) if p.suffix in CXX_SUFFIXES + HEADER_SUFFIXES + (".py",) else None
        if sample is not None and (sample.root == root or root in sample.root.parents):
            (ops if sample.kernel.exists() else removed).add(sample.kernel.resolve())  # a sample's file
        elif p in extra or p.suffix == ".toml":
            everything = True
            config = config or p.name in ("asc-tui.toml", "pyproject.toml")
        elif p.suffix == ".py" and is_operator_file(p) and p.parent == root:
            (ops if p.exists() else removed).add(p)
        elif p.suffix in CXX_SUFFIXES + (".py",) and p.parent in (root, root / "cpp"):
            kernel = p if p.suffix != ".py" else kernel_for_spec(p)  # a C++ operator or its spec
            if kernel is None:
                everything = True
            elif spec_for_kernel(kernel).exists():
                (ops if kernel.exists() else removed).add(kernel)
            else:
                continue
        elif p.suffix in HEADER_SUFFIXES + CXX_SUFFIXES:
            everything = True  # a header some C++ kernel may include
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
            return p.suffix in WATCHED_SUFFIXES and not is_temp_file(p)

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


#: A run in flight longer than this (seconds) no longer holds up the queue: the next operator
#: gets a worker of its own (a runaway kernel waits out its timeout alone).
PATIENCE_S = 1.0
#: Most workers running at once (each a process; a runaway holds one until its timeout).
MAX_LANES = 4


class _Lane:
    """One worker and the thread that feeds it; `current` is the path it is running."""

    def __init__(self, worker: RunWorker, own: bool, rerunner: Rerunner, n: int):
        self.worker = worker
        self.own = own  # made by the rerunner (closed by it), not the caller's
        self.current: Path | None = None
        self.since = 0.0
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=rerunner._lane_loop, args=(self,), name=f"asc-tui-run-{n}")
        self.thread.daemon = True
        self.thread.start()


class Rerunner:
    """Runs queued operators (by path) in workers, newest source wins.

    Runs go one at a time through the caller's worker; but when the run in flight has taken
    longer than `patience_s` and another operator is waiting, that one gets a worker of its own
    (up to `max_lanes`), so a runaway kernel never holds up the other operators until it times
    out. A save of an operator whose run is in flight cancels that run and queues it again.

    `on_start(path, request)` and `on_result(path, result)` are called from the rerunner's
    threads; a UI forwards them to its own loop. Cancelled runs are not reported as results:
    `on_cancel(path)` says the run that `on_start` announced ended without one.
    """

    def __init__(
        self,
        worker: RunWorker,
        make_request: Callable[[Path], RunRequest],
        on_start: Callable[[Path, RunRequest], None] | None = None,
        on_result: Callable[[Path, WorkResult], None] | None = None,
        patience_s: float = PATIENCE_S,
        max_lanes: int = MAX_LANES,
        on_cancel: Callable[[Path], None] | None = None,
    ):
        self.worker = worker
        self.make_request = make_request
        self.on_start = on_start or (lambda p, r: None)
        self.on_result = on_result or (lambda p, r: None)
        self.patience_s = patience_s
        self.max_lanes = max(1, max_lanes)
        self.on_cancel = on_cancel or (lambda p: None)
        self._pending: dict[Path, None] = {}
        self._cond = threading.Condition()
        self._stopped = False
        self.cancelled = 0
        self._lanes = [_Lane(worker, False, self, 0)]
        self._thread = threading.Thread(target=self._loop, name="asc-tui-rerun", daemon=True)
        self._thread.start()

    @property
    def current(self) -> Path | None:
        """The operator running longest (None when nothing runs)."""
        with self._cond:
            busy = [lane for lane in self._lanes if lane.current is not None]
            return min(busy, key=lambda lane: lane.since).current if busy else None

    @property
    def running(self) -> list[Path]:
        with self._cond:
            return [lane.current for lane in self._lanes if lane.current is not None]

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
            if restart_running:
                for lane in self._lanes:
                    if lane.current in new:
                        lane.worker.cancel()
            self._cond.notify_all()

    def cancel(self) -> None:
        """Drop the queue and stop the runs in flight."""
        with self._cond:
            self._pending.clear()
            for lane in self._lanes:
                if lane.current is not None:
                    lane.worker.cancel()

    def forget(self, path: Path) -> None:
        """Drop `path` from the queue and stop its run if it is in flight (its file is gone)."""
        path = Path(path).resolve()
        with self._cond:
            self._pending.pop(path, None)
            for lane in self._lanes:
                if lane.current == path:
                    lane.worker.cancel()

    def idle(self) -> bool:
        with self._cond:
            return not self._pending and all(lane.current is None for lane in self._lanes)

    def stop(self) -> None:
        """Stop dispatching, cancel what runs and close the workers the rerunner started."""
        with self._cond:
            self._stopped = True
            self._pending.clear()
            self._cond.notify_all()
            lanes = list(self._lanes)
        for lane in lanes:
            lane.worker.cancel()
            lane.jobs.put(None)
        self._thread.join(3.0)
        for lane in lanes:
            lane.thread.join(3.0)
            if lane.own:
                lane.worker.close()

    # -- dispatch ----------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._cond:
                while True:
                    if self._stopped:
                        return
                    path, lane, wait = self._next_locked()
                    if lane is not None:
                        break
                    self._cond.wait(wait)
                del self._pending[path]
                lane.current, lane.since = path, time.monotonic()
            lane.jobs.put(path)

    def _next_locked(self) -> tuple[Path | None, _Lane | None, float | None]:
        """(path, lane) to start now, or how long to wait before asking again (None: until told)."""
        running = {lane.current for lane in self._lanes if lane.current is not None}
        path = next((p for p in self._pending if p not in running), None)  # a restart waits its cancel
        if path is None:
            return None, None, None
        idle = next((lane for lane in self._lanes if lane.current is None), None)
        if idle is not None:
            return path, idle, None
        if len(self._lanes) >= self.max_lanes:
            return None, None, None
        waited = time.monotonic() - min(lane.since for lane in self._lanes)
        if waited < self.patience_s:
            return None, None, self.patience_s - waited
        w = self.worker
        extra = RunWorker(timeout_s=w.timeout_s, memory_mb=getattr(w, "memory_mb", None))
        lane = _Lane(extra, True, self, len(self._lanes))
        self._lanes.append(lane)
        return path, lane, None

    def _lane_loop(self, lane: _Lane) -> None:
        while True:
            path = lane.jobs.get()
            if path is None:
                return
            try:
                request = self.make_request(path)
                self.on_start(path, request)
                result = lane.worker.run(request)
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
                    lane.current = None
                    self._cond.notify_all()
            if result.status is WorkStatus.CANCELLED:
                with self._cond:
                    self.cancelled += 1
                self.on_cancel(path)
                continue
            self.on_result(path, result)
