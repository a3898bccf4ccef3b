"""The blocks of a launch as cooperative threads, so that they can wait for each other.

Why: `SyncAll()` and `CrossCoreSetFlag<0>` (all cores) hold a block until every other block of
the launch got there. A block that waits must stop where it is, in the middle of the user's
code, and let the others run; so the blocks run in threads of their own (a thread whose block
ended takes the next one), but only one thread runs at a time: the one holding the baton (as
the sub-cores of a mixed block, `npu/mix.py`). Only kernels whose code names such a call
(`may_wait`) pay for the thread hand-offs.

The launching thread schedules. It starts the blocks in order; a block holds the baton until it
finishes or waits on a rendezvous nobody completed yet (`Blocks.wait`), then hands it back.
Blocks whose rendezvous completed run again, in block order, before the next block starts.
When no block can move — some block finished without arriving, or a block needs a core another
block holds while that one waits — the launch stops with a deadlock error that names every
waiting block's line: what the device would do is hang.

Time: a rendezvous completes at the latest arrival (each block's own clock), and every block
resumes from then on; the numbers are right because the blocks after the rendezvous run only
once every block wrote what it wrote before it.
"""

from __future__ import annotations

import ctypes
import sys
import sysconfig
import threading

from .. import PACKAGE_DIR
from . import state
from .errors import SyncError

_SCHED = -1  # the baton is with the launching thread

#: Kernel API calls that wait for other blocks: a kernel whose code names none of them runs its
#: blocks one after another in the launching thread (no thread hand-offs, ~0.1 ms a block).
WAITING_CALLS = frozenset({"SyncAll", "CrossCoreSetFlag", "CrossCoreWaitFlag"})


def may_wait(fn) -> bool:
    """Whether the kernel's code (its function, what it defines, the functions and classes of
    its module and closures, recursively; not the kernel API's, the standard library's or the
    installed packages' code) names a call in WAITING_CALLS."""
    seen: set[int] = set()
    todo = [fn]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, type):
            todo.extend(vars(obj).values())
            continue
        code = getattr(obj, "__code__", None)
        if code is None or code.co_filename.startswith(_NOT_KERNEL):
            continue
        module = getattr(obj, "__globals__", {})
        todo.extend(v for v in module.values() if _same_module(v, obj))
        todo.extend(c.cell_contents for c in getattr(obj, "__closure__", None) or () if _filled(c))
        codes = [code]
        while codes:
            c = codes.pop()
            if WAITING_CALLS.intersection(c.co_names):
                return True
            codes.extend(k for k in c.co_consts if hasattr(k, "co_names"))
            todo.extend(module[n] for n in c.co_names if n in module)
    return False


_NOT_KERNEL = tuple(
    {str(PACKAGE_DIR)} | {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
)


def _same_module(v, fn) -> bool:
    return (callable(v) or isinstance(v, type)) and getattr(v, "__module__", None) == fn.__module__


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


class _Abort(BaseException):
    """Unwinds a block's thread when the launch stops (an error, a deadlock, a timeout)."""


class Blocks:
    """One launch's block threads, the baton, and the rendezvous between blocks."""

    def __init__(self, n_blocks: int, n_cores: int):
        self.n = n_blocks
        self.n_cores = n_cores
        self.cv = threading.Condition()
        self.turn = _SCHED
        self.cores: dict[int, object] = {}  # block -> its Core (None: a mixed block)
        self.results: dict[int, object] = {}  # block -> what its call returned
        self.threads: dict[int, threading.Thread] = {}  # block -> the thread running it
        self.workers: list[threading.Thread] = []
        self.idle: list[tuple] = []  # (thread, its job slot) with no block to run
        self.posts: dict = {}  # rendezvous key -> arrival times
        self.counts: dict = {}  # (block, family) -> rendezvous of the family passed so far
        self.parked: dict[int, tuple] = {}  # block -> (key, need, what, file, line)
        self.done: list[int] = []  # finished blocks the launcher has not closed yet
        self.finished: set[int] = set()
        self.failed: tuple[int, BaseException] | None = None
        self.stopping = False
        self.aborts: list = []  # what else to unwind when the launch stops (mixed blocks' sub-cores)
        self.hooks = (sys.getprofile(), sys.gettrace())  # the launcher's profiler / tracer

    # ---- inside a block --------------------------------------------------------------------------
    def next(self, block: int, name: str) -> int:
        """How many times `block` got to the rendezvous family `name` before (0, 1, ...)."""
        key = (block, name)
        k = self.counts.get(key, 0)
        self.counts[key] = k + 1
        return k

    def post(self, key, t: float) -> None:
        """Arrive at rendezvous `key` at time `t` (without waiting)."""
        self.posts.setdefault(key, []).append(t)

    def complete(self, key, need: int) -> bool:
        return len(self.posts.get(key, ())) >= need

    def wait(self, key, need: int, what: str, fr, who: int | None = None) -> float:
        """Hold this block (`who`: the launch block of a mixed block's sub-core) until `need`
        arrivals at `key`; the time of the latest of them."""
        core = state.core
        me = core.block if who is None else who
        san = core.san
        while len(self.posts.get(key, ())) < need:
            if san is not None:  # its per-block state waits with it (devkit/debug/sanitizer.py)
                san.park(core)
            me_thread = threading.current_thread()
            me_thread.name = f"asc-tui parked block {me}"  # not the line a timeout reports
            with self.cv:
                self.parked[me] = (key, need, what, fr.f_code.co_filename, fr.f_lineno)
                self.turn = _SCHED
                self.cv.notify_all()
                self._wait_turn(me)
            me_thread.name = f"asc-tui block {me}"
            if san is not None:
                san.resume(core)
        self.parked.pop(me, None)
        state.core = core
        return max(self.posts[key][:need])

    def _wait_turn(self, me: int) -> None:
        while self.turn != me and not self.stopping:
            self.cv.wait()
        if self.stopping:
            raise _Abort()

    def _worker(self, job: list) -> None:
        """One block thread: runs the blocks handed to it (`job` = [block, call]) one after
        another, so that a launch makes a thread only for each block that is waiting."""
        profile, trace = self.hooks
        if profile is not None:
            sys.setprofile(profile)
        if trace is not None:
            sys.settrace(trace)
        me = threading.current_thread()
        while True:
            with self.cv:
                while job[0] is None and not self.stopping:
                    self.cv.wait()
                if self.stopping:
                    return
                b, call = job
            if not self._run(b, call):
                return
            with self.cv:
                me.name = "asc-tui idle block thread"
                job[:] = [None, None]
                self.idle.append((me, job))
                self.finished.add(b)
                self.done.append(b)
                self.turn = _SCHED
                self.cv.notify_all()

    def _run(self, b: int, call) -> bool:
        """Block `b` to its end: True, or False when it failed or the launch stopped."""
        try:
            with self.cv:
                self._wait_turn(b)
            core = state.core = self.cores[b]
            self.results[b] = call()
            if core is not None and core.san is not None:  # now, before another block's state returns
                core.san.end_block(core)
        except _Abort:
            return False
        except BaseException as exc:  # noqa: BLE001 - handed to the launching thread
            with self.cv:
                self.failed = (b, exc)
                self.turn = _SCHED
                self.cv.notify_all()
            return False
        return True

    # ---- the launching thread --------------------------------------------------------------------
    def start(self, b: int, core, call) -> None:
        """Run block `b` (its `call()` on `core`) until it finishes or waits, then every block
        whose rendezvous completed meanwhile."""
        self.cores[b] = core
        if self.idle:
            t, job = self.idle.pop()
        else:
            job = [None, None]
            t = threading.Thread(target=self._worker, args=(job,), daemon=True)
            self.workers.append(t)
            t.start()
        t.name = f"asc-tui block {b}"
        self.threads[b] = t
        with self.cv:
            job[:] = [b, call]
        self._give(b)
        self.release()

    def release(self) -> None:
        """Resume the waiting blocks whose rendezvous is complete, lowest block first, until
        none is left to resume."""
        while True:
            ready = [
                b
                for b, (key, need, *_) in sorted(self.parked.items())
                if len(self.posts.get(key, ())) >= need
            ]
            if not ready:
                return
            for b in ready:
                self._give(b)

    def _give(self, b: int) -> None:
        try:
            with self.cv:
                self.turn = b
                self.cv.notify_all()
                while self.turn != _SCHED:
                    self.cv.wait()
        except BaseException:  # the launch's timeout fired while this block ran
            self.stop()
            raise
        if self.failed is not None:
            self.stop()
            raise self.failed[1]
        if b in self.finished:
            self.threads.pop(b)

    def take_done(self) -> list[int]:
        """The blocks that finished since the last call (for the launcher to close)."""
        out, self.done = self.done, []
        return out

    def need_core(self, b: int, core_id: int, holder: int | None) -> None:
        """Block `b` starts on `core_id` after block `holder` (None: a free core): a deadlock if
        `holder` is waiting for a rendezvous."""
        if holder is None or holder in self.finished or holder not in self.parked:
            return
        _key, _need, what, file, line = self.parked[holder]
        self.stop()
        raise SyncError(
            f"deadlock: block {holder} waits at {what} for every block, but block {b} can only start "
            f"on core {core_id} once block {holder} ends ({self.n} blocks on {self.n_cores} cores)",
            file,
            line,
            hint="a launch that syncs all blocks needs no more blocks than cores",
        )

    def finish(self) -> None:
        """After the last block started: every waiting block must be able to go on."""
        self.release()
        if not self.parked:
            return
        waits = "; ".join(f"block {b} waits at line {p[4]} ({p[2]})" for b, p in sorted(self.parked.items()))
        absent = sorted(self.finished)
        _first, (_k, _n, _what, file, line) = min(self.parked.items())
        self.stop()
        raise SyncError(
            f"deadlock between blocks: {waits}; "
            + (f"block(s) {', '.join(map(str, absent))} ended without getting there" if absent else "")
            + " — on the device these blocks would hang",
            file,
            line,
            hint="every block of the launch must reach each SyncAll (and each all-core CrossCoreWaitFlag)",
        )

    def stop(self) -> None:
        """Unwind every block thread still alive: the waiting ones wake up to an _Abort, the
        one holding the baton (an endless loop the timeout stopped) gets it raised inside."""
        with self.cv:
            self.stopping = True
            running = self.threads.get(self.turn)
            self.cv.notify_all()
        if running is not None and running.is_alive() and running.ident is not None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(running.ident), ctypes.py_object(_Abort)
            )
        for abort in self.aborts:
            abort()
        for t in self.workers:
            t.join(timeout=1.0)
        self.threads, self.workers, self.idle = {}, [], []
