"""Timing-only evaluation of configs, in-process or in parallel worker processes.

A backend has one small contract: `submit(task)` returns a handle, `wait(timeout)` returns the
outcomes of handles that finished, `cancel()` drops whatever has not started, `close()`.
The user's kernel runs in worker processes (each imports the operator once per source hash),
so a crash or endless loop in a config costs that config, not the tune.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from dataclasses import dataclass
from typing import Any

from .cache import Outcome
from .workers import DEPTH, Pool


@dataclass(frozen=True)
class Task:
    """Everything a worker needs to evaluate one config (picklable)."""

    op_path: str
    op_hash: str
    case: str
    chip: str | None
    key: str
    params: dict
    timeout_s: float | None = 60.0


_loaded: dict[tuple[str, str], Any] = {}  # per worker process: (path, hash) -> OperatorModule


def evaluate(task: Task) -> Outcome:
    """Run one config in timing-only mode; never raises for the operator's mistakes."""
    from ..run.loader import load_operator
    from ..run.runner import RunRequest, run

    op = _loaded.get((task.op_path, task.op_hash))
    if op is None:
        op = load_operator(task.op_path)
        if op.source_hash != task.op_hash:
            return Outcome(
                task.key, task.params, None, error="the operator file changed during the tune; re-run it"
            )
        _loaded.clear()
        _loaded[(task.op_path, task.op_hash)] = op
    report = run(
        RunRequest(
            op.name, task.case, task.chip, dict(task.params), timing_only=True, timeout_s=task.timeout_s
        ),
        op=op,
    )
    em = report.emulation
    if report.errors or em is None:
        err = report.errors[0] if report.errors else None
        text = err.format() if err is not None else "no emulation result"
        timed_out = err is not None and err.kind == "timeout"
        return Outcome(task.key, task.params, None, error=text, transient=timed_out, timed_out=timed_out)
    gflops = report.flops / (em.time_us * 1e3) if report.flops and em.time_us > 0 else None
    ub = em.capacity.get("ub", (None, None))[0] if em.capacity else None
    return Outcome(
        task.key,
        task.params,
        float(em.time_us),
        float(em.kernel_us),
        gflops,
        int(ub) if ub is not None else None,
    )


def lost(task: Task, what: str, exc: BaseException) -> Outcome:
    """A task whose evaluator died: transient, so a resumed tune tries it again."""
    return Outcome(task.key, task.params, None, transient=True, error=f"{what}: {type(exc).__name__}: {exc}")


def _worker_failed(task: Task, exc: BaseException) -> Outcome:
    return lost(task, "worker failed", exc)


def _warm() -> None:
    """Worker start: import the emulator once so the first config is not slow."""
    from ..run import runner  # noqa: F401


class LocalBackend:
    """`workers` processes, each fed its next config while it runs one (`workers.Pool`), or
    the calling process when workers == 0."""

    def __init__(self, workers: int = 0):
        self.workers = max(int(workers), 0)
        self._pool: Pool | None = None
        self._done: list[Outcome] = []

    @property
    def slots(self) -> int:
        """How many tasks to keep in flight: enough that no worker waits for its next one."""
        return self.workers * DEPTH or 1

    def submit(self, task: Task) -> None:
        if self.workers == 0:
            self._done.append(evaluate(task))
            return
        if self._pool is None:
            self._pool = Pool(self.workers, mp_context(), evaluate, _worker_failed, _warm)
        self._pool.put(task)

    @property
    def in_flight(self) -> int:
        return len(self._done) + (len(self._pool) if self._pool is not None else 0)

    def wait(self, timeout: float | None = None) -> list[Outcome]:
        """Outcomes finished since the last call (blocks up to `timeout` s for at least one)."""
        if self._done:
            out, self._done = self._done, []
            return out
        return self._pool.results(timeout) if self._pool is not None else []

    def cancel(self) -> None:
        """Drop the tasks no worker has been sent (the ones sent end with `close`)."""
        if self._pool is not None:
            self._pool.drop_queued()

    def close(self) -> None:
        """Stop the workers; configs still running are abandoned (their results never reach
        the cache, so it stays consistent)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


def mp_context():
    """fork when this process has one thread (fast, nothing to re-import); forkserver when
    threads run (the TUI), with the emulator preloaded in the server; spawn elsewhere."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["asc_tui.devkit.run.runner"])
        return ctx
    return multiprocessing.get_context("spawn")


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
