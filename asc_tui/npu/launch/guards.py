"""The guards around a launch: a deadline for runaway kernels, the garbage collector paused,
the cube numbers handed to the numbers thread waited for, and the block threads ended."""

from __future__ import annotations

import gc
import os
import signal
import threading

from .. import state
from ..coop import Blocks
from ..errors import OperatorError
from ..numbers.offload import numbers


class KernelTimeout(OperatorError):
    """The kernel ran past the launch's `timeout_s` (raised by `deadline`)."""

    kind = "timeout"


class stopped:
    """End the block threads of a launch: the idle ones, and after an error in the launcher
    every one still waiting or running."""

    def __init__(self, coop: Blocks | None):
        self.coop = coop

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if self.coop is not None:  # (after a normal end only idle block threads are left)
            self.coop.stop()
        return False


class gc_paused:
    """Keep Python's cyclic garbage collector off while the blocks run.

    Why: a launch allocates millions of short-lived objects while its instruction records (one
    tuple each) pile up; the collector's generation-1/2 passes over them cost ~17% of a
    timing-only launch (vector_add_bias, 287k records: 296k → 357k instructions/s with it off).
    Kernel objects rarely form cycles, and whatever does is collected once the launch is over.
    """

    def __enter__(self):
        self.was_enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc):
        if self.was_enabled:
            gc.enable()
        return False


class numbers_done:
    """Leave a launch only when the cube numbers it handed to the numbers thread are in
    (npu/numbers/offload.py); if the launch failed, its error wins over the thread's. BLAS threads and
    CPU pinning are restored (`finish`) only after that last job. A timing-only launch (the
    L2 pre-pass) hands over nothing and does not wait for the jobs of others."""

    def __init__(self, numeric: bool):
        self.numeric = numeric

    def __enter__(self):
        numbers.begin()
        return self

    def __exit__(self, exc_type, *exc):
        try:
            if self.numeric:
                numbers.drain()
        except Exception:
            if exc_type is None:
                raise
        finally:
            numbers.finish()
        return False


def _progress(core) -> str:
    """How far the running block got: tells an endless loop (few instructions, or the same
    line forever) from a kernel that is merely too large for the limit."""
    if core is None:
        return ""
    return f", block {core.block} had issued {len(core.rec):,} instructions"


class deadline:
    """Stop a runaway kernel after `seconds` (main thread, POSIX): raises KernelTimeout there,
    at the kernel line that was running, else (the emulator's own work was running: the
    numbers of replayed blocks, the timing) at the limit's config line when it came from the
    config (a value with a `written` position, see `config.ConfigSeconds`) or the kernel's `def`:
    never an asc-tui line."""

    def __init__(self, seconds: float | None, kernel=None):
        self.seconds = seconds
        self.kernel = kernel
        self.active = (
            seconds is not None
            and seconds > 0
            and os.name == "posix"
            and threading.current_thread() is threading.main_thread()
        )

    def __enter__(self):
        if self.active:
            self.old = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def _fire(self, signum, frame):
        import sys
        import sysconfig

        from ..errors import is_user_file

        stdlib = sysconfig.get_paths()["stdlib"]

        def user(f):
            while f is not None and (
                not is_user_file(f.f_code.co_filename) or f.f_code.co_filename.startswith(stdlib)
            ):
                f = f.f_back
            return f

        # a mixed kernel runs its sub-cores in threads named "asc-tui block …" (npu/mix.py)
        frames = sys._current_frames()
        subs = [
            user(frames.get(t.ident)) for t in threading.enumerate() if t.name.startswith("asc-tui block")
        ]
        f = next((u for u in subs if u is not None), None) or user(frame)
        column = None
        written = getattr(self.seconds, "written", None)  # (file, line, column) of a config value
        if f is not None:
            file, line, what = f.f_code.co_filename, f.f_lineno, "; it was running this line"
        elif written is not None:
            file, line, column = written
            what = " (the config's worker_timeout), while asc-tui emulated it between its lines"
        else:
            code = getattr(self.kernel, "__code__", None)
            user_code = code is not None and is_user_file(code.co_filename)
            file, line = (code.co_filename, code.co_firstlineno) if user_code else (None, None)
            what = ", while asc-tui emulated it between its lines"
        raise KernelTimeout(
            f"the kernel did not finish within {self.seconds:.3g} s{what}" + _progress(state.core),
            file,
            line,
            hint="an endless loop issues few instructions; if the kernel is just long, raise the "
            "limit with --timeout or run it --timing-only",
            column=column,
        )

    def __exit__(self, *exc):
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)
        return False


__all__ = ["KernelTimeout", "deadline", "gc_paused", "numbers_done", "stopped"]
