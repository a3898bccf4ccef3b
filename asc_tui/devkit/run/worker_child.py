"""The worker's child side: the loop that runs requests in the child interpreter.

The child caps its own address space, registers stack dumps (SIGUSR1 for "where is it stuck",
a fatal signal, and a wrapper around `os._exit` / a kill of itself, which leave no traceback), and
for every message imports the operator afresh after forgetting the user modules the previous run
imported. The parent side (`RunWorker`) is in `worker.py`.
"""

from __future__ import annotations

import faulthandler
import os
import re
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

from ...npu.errors import (
    ErrorInfo,
    internal_error,
    is_library_file,
    is_user_file,
    location_from_traceback,
    source_line,
)


def child_entry(rfd: int, wfd: int, dump_path: str, memory_mb: int | None = None) -> None:
    """Entry point of the child interpreter (`python -c`): cap memory, wrap the pipe fds, serve."""
    if memory_mb:
        import resource

        cap = int(memory_mb) << 20
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        except (ValueError, OSError):
            pass
    _child_main(Duplex(Connection(rfd, writable=False), Connection(wfd, readable=False)), dump_path)


class Duplex:
    """Two one-way `Connection`s (over plain pipes) used as one."""

    def __init__(self, reader: Connection, writer: Connection):
        self.reader, self.writer = reader, writer

    def send(self, obj) -> None:
        self.writer.send(obj)

    def recv(self):
        return self.reader.recv()

    def poll(self, timeout: float = 0.0) -> bool:
        return self.reader.poll(timeout)

    def close(self) -> None:
        self.reader.close()
        self.writer.close()


@dataclass(frozen=True)
class Call:
    """A job for the child: `target(*args, **kwargs)`, `target` a module-level function (it
    pickles by name) or its "package.module:function" name; the result must pickle.

    With `progress_kw`, the function also gets a callback under that keyword whose arguments are
    forwarded to the parent's `on_progress` as they happen (tuning progress, for instance).
    """

    target: Callable | str  # a module-level function, or "package.module:function"
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    progress_kw: str | None = None
    label: str = ""


def _child_main(conn, dump_path: str) -> None:
    """The worker loop: receive a RunRequest (run with its NaN origin, `devkit.pipeline`) or a Call,
    send back ("ok", value) or ("raised", info)."""
    import importlib

    import numpy as np

    from ..pipeline import run_located  # warm imports happen here, before "ready"

    # Overflow and NaN are results here (the precision check counts them), not warnings that
    # would land in the operator's output as if the operator had printed them.
    np.seterr(all="ignore")

    with open(dump_path, "w") as dump:  # noqa: SIM115 - lives as long as the process
        # every thread: blocks that meet at SyncAll run as threads (npu/coop.py), and the one
        # stuck in a loop is not the main thread
        faulthandler.register(signal.SIGUSR1, file=dump, all_threads=True)
        faulthandler.enable(file=dump, all_threads=False)  # a native crash names its line too
        _dump_stack_before_dying(dump)
        baseline_modules = set(sys.modules)
        conn.send(("ready", os.getpid()))
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError, KeyboardInterrupt):
                return
            if msg is None:
                return
            _forget_user_modules(baseline_modules)
            try:
                if isinstance(msg, Call):
                    func = msg.target
                    if isinstance(func, str):
                        mod, _, fn = func.partition(":")
                        func = getattr(importlib.import_module(mod), fn)
                    kwargs = dict(msg.kwargs)
                    if msg.progress_kw:
                        kwargs[msg.progress_kw] = lambda *a, **k: conn.send(("progress", (a, k)))
                    answer = ("ok", func(*msg.args, **kwargs))
                else:
                    answer = ("ok", run_located(msg))
            except BaseException as exc:  # SystemExit, KeyboardInterrupt and bugs alike
                answer = ("raised", escaped(exc, msg))
            try:
                conn.send(answer)
            except Exception as exc:  # an unpicklable result: say so instead of hanging
                conn.send(("raised", ErrorInfo("crash", f"result could not be returned: {exc}")))


def escaped(exc: BaseException, request) -> ErrorInfo:
    """An exception that left a run or a tool, as the user sees it: asc-tui's own failure is
    "internal error in asc-tui" at the user's nearest line (else the operator's file), never a
    bare Python exception; the user's own code raising is its exception at its line."""
    if isinstance(exc, Exception):
        ref = getattr(request, "op", None)
        own = ref if isinstance(ref, str) and Path(ref).is_file() else None
        err = internal_error(exc, own, None)
        if err is not None:
            return err.info()
    file, line = location_from_traceback(exc.__traceback__)
    return ErrorInfo(
        "crash",
        f"{type(exc).__name__}: {exc}",
        file,
        line,
        "operator code must not exit the process" if isinstance(exc, SystemExit) else None,
        source_line(file, line),
    )


def _dump_stack_before_dying(dump) -> None:
    """`os._exit` and a signal sent to ourselves leave no traceback: write the stack to the dump
    file first, so the parent can name the operator line that ended the process."""
    real_exit, real_kill = os._exit, os.kill

    def _exit(code):
        faulthandler.dump_traceback(dump, all_threads=False)
        real_exit(code)

    def _kill(pid, sig):
        if pid in (0, os.getpid()):
            faulthandler.dump_traceback(dump, all_threads=False)
        real_kill(pid, sig)

    os._exit, os.kill = _exit, _kill


def _is_user_path(file: str | None) -> bool:
    """Operator code (and its helpers), not the stdlib, installed packages or asc_tui."""
    return bool(file) and is_user_file(file) and not is_library_file(file)


def _forget_user_modules(keep: set[str]) -> None:
    """Drop user modules (operator helpers) imported by earlier runs so edits are re-read."""
    for name in set(sys.modules) - keep:
        mod = sys.modules.get(name)
        if _is_user_path(getattr(mod, "__file__", None)):
            del sys.modules[name]


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


_THREAD = re.compile(r"^(?:Current thread|Thread) 0x[0-9a-f]+", re.M)


def innermost_user_frame(dump: str) -> tuple[str | None, int | None]:
    """faulthandler lists the most recent call first; the first frame in user code. With
    several threads, a thread running user code itself (its innermost frame is the user's: the
    block in an endless loop) comes before threads waiting inside asc-tui (blocks at SyncAll)."""
    starts = [m.start() for m in _THREAD.finditer(dump)] or [0]
    threads = [dump[a:b] for a, b in zip(starts, [*starts[1:], len(dump)])]
    for t in threads:
        first = _FRAME.search(t)
        if first and _is_user_path(first["file"]):
            return first["file"], int(first["line"])
    for t in sorted(threads, key=lambda t: not t.startswith("Current")):
        for m in _FRAME.finditer(t):
            if _is_user_path(m["file"]):
                return m["file"], int(m["line"])
    return None, None
