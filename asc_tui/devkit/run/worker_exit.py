"""How the worker's parent reads a child's end: its exit code, its output file, the crash report.

Kept beside the child side (`worker_child.py`) and the parent (`worker.py`): an exit code in
words (a signal by name), what the child printed since a run began, and the `ErrorInfo` for a
child that died, naming the user's line when its stack dump found one.
"""

from __future__ import annotations

import os
import signal
import subprocess

from ...npu.errors import ErrorInfo, source_line


def exit_code(proc: subprocess.Popen) -> int | None:
    try:
        return proc.wait(0.5)
    except subprocess.TimeoutExpired:
        return None


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def read_from(path: str, offset: int, limit: int = 1 << 20) -> str:
    """What the child wrote since `offset` (at most `limit` bytes: the tail if more)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            end = fh.tell()
            fh.seek(max(offset, end - limit))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def exit_words(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def crash_info(name: str, exitcode: int | None, where=(None, None)) -> ErrorInfo:
    why = exit_words(exitcode)
    file, line = where
    hint = "os._exit / a native crash in operator code; the worker was restarted"
    if exitcode == -signal.SIGKILL:
        hint = "killed: out of memory, or a kill from outside; the worker was restarted"
    return ErrorInfo(
        "crash",
        f"the worker running {name} died ({why})" + (" while running this line" if line else ""),
        file,
        line,
        hint,
        source_line(file, line),
    )
