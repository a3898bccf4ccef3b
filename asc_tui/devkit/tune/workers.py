"""Worker processes that are never left idle between configs, and lose only what they ran.

Why not `ProcessPoolExecutor`: a worker there takes its next config only after the parent
has seen the last result, asked the strategy and submitted again (~9% of a matmul tune's
time went into those gaps), and one worker that dies breaks the whole pool, failing every
queued config with it. Here each worker has its own pipe holding up to `DEPTH` configs: the
one it runs and the next, sent while it runs the first, so it starts the next the moment it
finishes. A worker evaluates its pipe in order, so when it dies the oldest config it was
sent and has not answered is the one that killed it: that one is reported lost, the others
go back to the queue for a fresh worker.
"""

from __future__ import annotations

import signal
from collections import deque
from multiprocessing.connection import wait as wait_ready

#: configs in a worker's pipe at once: the one it runs and the next
DEPTH = 2


def serve(conn, job, warm) -> None:
    """Worker main: answer each item from `conn` with `job(item)` until None or EOF.

    `job` must not raise for an item's own mistakes; anything that escapes is the worker's
    failure, sent back as the exception (in place of a result) so only that item is lost.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle (it cancels)
    if warm is not None:
        warm()
    while True:
        try:
            item = conn.recv()
        except (EOFError, OSError):
            return
        if item is None:
            return
        try:
            out = job(item)
        except Exception as exc:
            out = _Failed(exc)
        try:
            conn.send(out)
        except Exception as exc:  # a result or an exception that does not pickle
            conn.send(_Failed(RuntimeError(f"{type(exc).__name__}: {exc}")))


class _Failed:
    """The exception a job raised in the worker, in place of its result."""

    def __init__(self, exc: Exception):
        self.exc = exc


class WorkerDied(Exception):
    """The worker process ended (crash, os._exit, OOM kill) while running an item."""


class _Worker:
    def __init__(self, ctx, job, warm):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=serve, args=(child, job, warm), daemon=True)
        self.proc.start()
        child.close()  # the child's end lives in the child only: its exit reads as EOF here
        self.sent: deque = deque()  # items sent and not answered yet, oldest (running) first


class Pool:
    """`n` workers fed `DEPTH` items each; `failed(item, exc)` turns a lost item into a result.

    Single-threaded: the caller's loop calls `put`, `results` and `close`.
    """

    def __init__(self, n: int, ctx, job, failed, warm=None):
        self.n, self.ctx, self.job, self.failed, self.warm = n, ctx, job, failed, warm
        self.queue: deque = deque()  # items not sent to a worker yet
        self.workers: list[_Worker] = []

    def __len__(self) -> int:
        """Items queued or sent and not answered yet."""
        return len(self.queue) + sum(len(w.sent) for w in self.workers)

    def put(self, item) -> None:
        self.queue.append(item)
        self._feed()

    def drop_queued(self) -> None:
        """Forget the items no worker has been sent yet."""
        self.queue.clear()

    def _feed(self) -> None:
        """Send queued items, the least loaded worker first; start workers while fewer than n."""
        while self.queue:
            free = [w for w in self.workers if len(w.sent) < DEPTH]
            if len(self.workers) < self.n and not any(not w.sent for w in free):
                free.insert(0, _Worker(self.ctx, self.job, self.warm))
                self.workers.append(free[0])
            if not free:
                return
            w = min(free, key=lambda w: len(w.sent))
            item = self.queue.popleft()
            w.sent.append(item)
            try:
                w.conn.send(item)
            except OSError:  # it ended while idle (killed from outside): nothing of it ran
                self._remove(w)
                self.queue.extendleft(reversed(w.sent))

    def results(self, timeout: float | None) -> list:
        """Results of items answered (waits up to `timeout` s for one); lost items come back
        as `failed(item, exc)`."""
        busy = {w.conn: w for w in self.workers if w.sent}
        if not busy:
            return []
        out = []
        for conn in wait_ready(list(busy), timeout):
            w = busy[conn]
            try:
                res = conn.recv()
            except (EOFError, OSError):
                out.append(self._died(w))
                continue
            item = w.sent.popleft()
            out.append(self.failed(item, res.exc) if isinstance(res, _Failed) else res)
        self._feed()
        return out

    def _died(self, w: _Worker):
        """The worker ended: its running item is lost, the ones behind it are queued again."""
        self._remove(w)
        item = w.sent.popleft()
        self.queue.extendleft(reversed(w.sent))
        return self.failed(item, WorkerDied(f"the worker process ended (exit code {w.proc.exitcode})"))

    def _remove(self, w: _Worker) -> None:
        self.workers.remove(w)
        w.conn.close()
        w.proc.join(5)
        if w.proc.is_alive():  # its pipe broke but it runs on: do not leave it behind
            w.proc.kill()
            w.proc.join()

    def close(self) -> None:
        """Stop every worker: idle ones are told to exit, busy ones terminated (what they were
        running is abandoned)."""
        self.queue.clear()
        for w in self.workers:
            if w.sent:
                w.proc.terminate()
            else:
                try:
                    w.conn.send(None)
                except OSError:
                    w.proc.terminate()
        for w in self.workers:
            w.proc.join()
            w.conn.close()
        self.workers = []
