"""Run operators in a child process, so user code can never take the caller down.

A kernel that loops forever, a `sys.exit()` in a tiling function or a segfaulting extension only
ever kills (or stalls) the child: the parent gets a `WorkResult` with status "timeout", "crashed"
or "raised" and an `ErrorInfo` naming the user's file and line where one can be found (an
`os._exit` or a signal the operator sends itself dumps its stack first, so even those name a line).
The child's stdout and stderr go to a file, never to the caller's terminal: `WorkResult.output`
holds what the run printed. `memory_mb` caps the child's address space, so a runaway allocation
is a `MemoryError` in the user's code rather than the machine swapping. The child
is *warm* (numpy and the emulator already imported) so a hot reload costs one emulation, not one
interpreter start; after a kill a fresh child is started at once so the next run is warm again.

Every run imports the operator afresh (`load_operator` never caches) and forgets user helper
modules imported by the previous run, so an edited helper is re-read too. This module is the
parent side; what runs in the child is in `worker_child.py`, and how a child's exit and crash
are read and reported is in `worker_exit.py`.
"""

from __future__ import annotations

import enum
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path

from ... import PACKAGE_DIR
from ...config import DEFAULT_WORKER_TIMEOUT, written_at
from ...npu.errors import ErrorInfo, source_line
from .runner import RunReport, RunRequest
from .worker_child import Call, Duplex, child_entry, innermost_user_frame  # noqa: F401 - re-exported
from .worker_exit import crash_info, exit_code, exit_words, file_size, read_from

#: How long a cold child may take to import numpy and the emulator (seconds).
START_TIMEOUT_S = 60.0
_POLL_S = 0.02


class WorkStatus(enum.StrEnum):
    """How a run in the worker ended (equal to its string value)."""

    OK = "ok"
    RAISED = "raised"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class WorkResult:
    """Outcome of one run in the worker. `seconds` is host wall time (request sent → answer)."""

    request: RunRequest | Call
    status: WorkStatus
    report: RunReport | None
    error: ErrorInfo | None
    seconds: float
    output: str = ""  # what the run wrote to stdout/stderr (the child's, not ours)
    exitcode: int | None = None  # "crashed": the child's exit status (negative: the signal)

    @property
    def exit_cause(self) -> str:
        """Why the run ended, in words: "ok", "exception", "timeout", "SIGKILL", "exit code 1"..."""
        if self.status == "crashed":
            return exit_words(self.exitcode)
        return {"raised": "exception"}.get(self.status, self.status)

    @property
    def ok(self) -> bool:
        return self.status is WorkStatus.OK and self.report is not None

    @property
    def errors(self) -> tuple[ErrorInfo, ...]:
        if self.report is not None:
            return self.report.errors
        return (self.error,) if self.error else ()

    @property
    def passed(self) -> bool:
        return self.ok and self.report.passed


class RunWorker:
    """One warm child process running one request at a time; thread-safe, cancellable."""

    def __init__(
        self,
        timeout_s: float | None = DEFAULT_WORKER_TIMEOUT,
        start: bool = True,
        spare: bool = False,
        memory_mb: int | None = None,
    ):
        """`spare`: keep a second warm child once the first run is done, so a cancelled or
        killed run is replaced at once instead of by a cold start (hot reload uses this).
        `memory_mb`: the child's address-space cap (None: no cap)."""
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.keep_spare = spare
        self._spare = None  # (proc, conn, dump) warming up or ready
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._state = threading.Lock()
        self._proc = None
        self._conn = None
        self._ready = False
        self._cancel = threading.Event()
        self._busy = False
        self._dir = tempfile.mkdtemp(prefix="asc-tui-worker-")
        self._dump = os.path.join(self._dir, "stack.txt")
        self._out = os.path.join(self._dir, "output.txt")
        self.restarts = 0
        self._closed = False
        if start:
            self.start()

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        """Start the child if none is alive (returns at once; it warms up in the background).
        A warm spare, when there is one, takes over instead, and a new spare starts."""
        with self._state:
            if self._closed or (self._proc is not None and self._proc.poll() is None):
                return
            spare, self._spare = self._spare, None
            if spare is not None and spare[0].poll() is None:
                self._proc, self._conn, self._dump, self._out = spare
                self._spare = self._spawn()  # the next kill is likely too (edit loop)
            else:
                self._proc, self._conn, self._dump, self._out = self._spawn()
            self._ready = False

    def _ensure_spare(self) -> None:
        with self._state:
            if (
                self.keep_spare
                and not self._closed
                and (self._spare is None or self._spare[0].poll() is not None)
            ):
                self._spare = self._spawn()

    def _spawn(self):
        """A new child interpreter with its own pipes, stack-dump file and output file."""
        seq = next(self._seq)
        dump = os.path.join(self._dir, f"stack-{seq}.txt")
        out = os.path.join(self._dir, f"output-{seq}.txt")
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_DIR.parent), env.get("PYTHONPATH")) if p)
        env["PYTHONUNBUFFERED"] = "1"  # output printed just before an os._exit is kept
        code = (
            "from asc_tui.devkit.run.worker_child import child_entry; "
            f"child_entry({to_child_r}, {from_child_w}, {dump!r}, {self.memory_mb!r})"
        )
        with open(out, "wb") as sink:
            proc = subprocess.Popen(
                [sys.executable, "-c", code],
                env=env,
                pass_fds=(to_child_r, from_child_w),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        os.close(to_child_r)
        os.close(from_child_w)
        conn = Duplex(Connection(from_child_r, writable=False), Connection(to_child_w, readable=False))
        return proc, conn, dump, out

    def close(self) -> None:
        """Stop the child (a run in flight ends "cancelled") and remove the temp files."""
        self._closed = True
        self._cancel.set()
        with self._state:
            children = [(self._proc, self._conn)]
            if self._spare is not None:
                children.append(self._spare[:2])
            self._proc = self._conn = self._spare = None
        for _proc, conn in children:
            if conn is not None:
                try:
                    conn.send(None)
                except (OSError, ValueError):
                    pass
                conn.close()
        for proc, _ in children:
            if proc is not None:
                try:
                    proc.wait(0.5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(1.0)
        shutil.rmtree(self._dir, ignore_errors=True)

    def _kill(self, restart: bool = True) -> None:
        with self._state:
            proc, conn = self._proc, self._conn
            self._proc = self._conn = None
        if proc is not None and proc.poll() is None:
            proc.kill()
            try:
                proc.wait(2.0)
            except subprocess.TimeoutExpired:
                pass
        if conn is not None:
            conn.close()
        self.restarts += 1
        if restart:
            self.start()

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def cancel(self) -> None:
        """Stop the run in flight (if any): its `run()` returns status "cancelled"."""
        if self._busy:
            self._cancel.set()

    def interrupt(self) -> bool:
        """Ask the job in flight to stop itself (SIGINT in the child): a tune returns what it
        has; a plain run ends as "raised" KeyboardInterrupt. False if nothing was running."""
        proc = self._proc
        if not self._busy or proc is None or proc.poll() is not None:
            return False
        try:
            os.kill(proc.pid, signal.SIGINT)
        except OSError:
            return False
        return True

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> bool:
        """Block until the child has finished importing (used by benchmarks and start-up)."""
        with self._lock:
            return self._await_ready(time.monotonic() + timeout)

    def _await_ready(self, deadline: float) -> bool:
        self.start()
        while not self._ready:
            conn, proc = self._conn, self._proc
            if conn is None or proc is None:  # closed
                return False
            try:
                ready = conn.poll(_POLL_S)
            except (OSError, ValueError):
                return False
            if ready:
                try:
                    kind, _ = conn.recv()
                except (EOFError, OSError):
                    self._kill()
                    return False
                self._ready = kind == "ready"
            elif proc.poll() is not None:
                self._kill()
                return False
            elif time.monotonic() > deadline or self._cancel.is_set():
                return False
        return True

    # -- running ---------------------------------------------------------------------------
    def run(self, request: RunRequest, timeout_s: float | None = None) -> WorkResult:
        """Run `request` in the child; never raises for anything the operator does."""
        timeout = timeout_s if timeout_s is not None else self.timeout_s
        with self._lock:
            self._cancel.clear()
            self._busy = True
            try:
                return self._run(request, timeout)
            finally:
                self._busy = False

    def call(self, job: Call, timeout_s: float | None = None, on_progress=None) -> WorkResult:
        """Run any devkit function in the child (debug, bench, tune); `report` holds its value."""
        timeout = timeout_s if timeout_s is not None else self.timeout_s
        with self._lock:
            self._cancel.clear()
            self._busy = True
            try:
                return self._run(job, timeout, on_progress)
            finally:
                self._busy = False

    def _run(self, request, timeout: float | None, on_progress=None) -> WorkResult:
        t0 = time.perf_counter()
        name = request.label if isinstance(request, Call) else request.op

        out_file, out_at = self._out, file_size(self._out)

        def done(status, report=None, error=None, exitcode=None):
            output = read_from(out_file, out_at)
            return WorkResult(
                request, WorkStatus(status), report, error, time.perf_counter() - t0, output, exitcode
            )

        if not self._await_ready(time.monotonic() + START_TIMEOUT_S):
            if self._cancel.is_set():
                return done("cancelled")
            return done("crashed", error=ErrorInfo("crash", "the worker process did not start"))
        if not isinstance(request, Call) and (
            request.timeout_s is None or (timeout and request.timeout_s > timeout - 0.5)
        ):
            # The emulator's own deadline fires first and names the kernel line it stopped at.
            request = replace(request, timeout_s=max(timeout - 0.5, 0.1) if timeout else None)
        Path(self._dump).write_text("")
        out_file, out_at = self._out, file_size(self._out)
        conn, proc = self._conn, self._proc
        try:
            conn.send(request)
        except (OSError, ValueError) as exc:
            self._kill()
            return done("crashed", error=ErrorInfo("crash", f"worker unreachable: {exc}"))
        deadline = time.monotonic() + timeout if timeout else None
        while True:
            if self._cancel.is_set():  # checked first: a flood of progress cannot starve it
                if not self._closed:
                    self._kill()
                return done("cancelled")
            try:
                ready = conn.poll(_POLL_S)
            except (OSError, ValueError):  # closed under us: the worker is shutting down
                return done("cancelled")
            if ready:
                try:
                    kind, payload = conn.recv()
                except (EOFError, OSError):
                    if self._cancel.is_set():  # closed or cancelled: the kill was ours
                        return done("cancelled")
                    code = exit_code(proc)
                    where = self._where_died()
                    self._kill()
                    return done("crashed", error=crash_info(name, code, where), exitcode=code)
                if kind == "progress":
                    if on_progress is not None:
                        on_progress(*payload[0], **payload[1])
                    continue
                if kind == "ok":
                    self._ensure_spare()
                    return done("ok", report=payload)
                return done("raised", error=payload)
            if proc.poll() is not None:
                if self._closed:
                    return done("cancelled")
                code = proc.returncode
                where = self._where_died()
                self._kill()
                return done("crashed", error=crash_info(name, code, where), exitcode=code)
            if deadline is not None and time.monotonic() > deadline:
                where = self._where_stuck(proc)
                self._kill()
                return done("timeout", error=_timeout_info(name, timeout, where))

    def _where_died(self) -> tuple[str | None, int | None]:
        """The user line that called os._exit / killed itself, if the child dumped its stack."""
        try:
            return innermost_user_frame(Path(self._dump).read_text(errors="replace"))
        except OSError:
            return None, None

    def _where_stuck(self, proc) -> tuple[str | None, int | None]:
        """Ask the child for its stack (faulthandler on SIGUSR1): the innermost user frame."""
        try:
            os.kill(proc.pid, signal.SIGUSR1)
        except OSError:
            return None, None
        for _ in range(100):  # the child may be descheduled on a loaded machine
            time.sleep(0.01)
            text = Path(self._dump).read_text(errors="replace")
            if text.strip():
                return innermost_user_frame(text)
        return None, None


def _timeout_info(name: str, timeout: float, where=(None, None)) -> ErrorInfo:
    """The worker's deadline passed: at the user line it was stuck on, else at the config's
    `worker_timeout` when the limit came from there (a limit too small for any run)."""
    file, line = where
    column = None
    written = written_at(timeout)
    if file is None and written is not None:
        file, line, column = written
    return ErrorInfo(
        "timeout",
        f"{name} did not finish within {timeout:g} s and was stopped: an endless "
        "loop, or a kernel too large to emulate in that time"
        + (f" (the limit is the config's worker_timeout = {timeout:g})" if written else ""),
        file,
        line,
        "raise worker_timeout in the config (or run it --timing-only) if the kernel is just long",
        source_line(file, line),
        column,
    )
