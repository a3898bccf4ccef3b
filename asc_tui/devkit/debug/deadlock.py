"""`--deadlock-check`: run N ranks of a distributed operator together and report every rank.

Each rank is one thread running the ordinary launcher, but only one rank runs at a time: a rank
holds the baton until it finishes or blocks in `Hccl.Wait` on a collective some rank has not
committed yet; then the baton passes to the next rank that can make progress. When nobody can,
the ranks are deadlocked — detected at once, in emulated time, so no real hang ever happens. A
rank that simply runs too long (an endless loop) is stopped after `timeout_s` wall-clock seconds
with an asynchronous exception and reported with the line it was running.

Ranks get their own inputs (seed = seed + rank). An operator can declare
`golden_ranks(case, inputs) -> outputs`, both lists indexed by rank (inputs as dicts of arrays,
outputs as dicts, tuples or single arrays), to have every rank's result checked.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from dataclasses import dataclass, field

from ...ascendc.sync.communicator import CollectiveCall, Communicator
from ...ascendc.sync.hccl import HcclContext
from ...npu import state
from ...npu.chip import load_chip
from ...npu.errors import ErrorInfo, OperatorError, internal_error, is_user_file, location_from_traceback
from ...npu.launch import launch
from ..run.loader import OperatorModule, load_operator
from ..run.runner import prepare
from .deadlock_report import DeadlockReport, Outcome, RankReport, RankStatus
from .deadlock_report import summarise as _summarise


class RankAbort(BaseException):
    """Unwinds a rank's thread when the world stops (deadlock, error or timeout elsewhere)."""


@dataclass
class _Rank:
    rank: int
    status: RankStatus = RankStatus.READY
    waiting: CollectiveCall | None = None
    error: ErrorInfo | None = None
    committed: list = field(default_factory=list)
    where: tuple[str, int] | None = None
    returned: tuple[str, int] | None = None  # innermost return of the final unwinding
    time_us: float | None = None


class _ReturnWatch:
    """Profile hook (one rank thread): where the operator's code returned from, innermost first.

    The returns that end a kernel form a chain (each frame the caller of the previous); its first
    element is the line a rank left from — e.g. an early `return` that skips a collective.
    """

    def __init__(self, path: str):
        self.path = path
        self.chain: list = []

    def __call__(self, frame, event, arg):
        if event == "return" and frame.f_code.co_filename == self.path:
            if self.chain and self.chain[-1][0].f_back is frame:
                self.chain.append((frame, frame.f_lineno))
            else:
                self.chain = [(frame, frame.f_lineno)]

    def innermost(self) -> tuple[str, int] | None:
        if not self.chain:
            return None
        return self.path, self.chain[0][1]


class RankScheduler:
    """Hands one baton between rank threads; the Communicator calls it from `Hccl`."""

    def __init__(self, n_ranks: int, chip):
        self.n = n_ranks
        self.cv = threading.Condition()
        self.turn: int | None = None
        self.stop: str | None = None  # done, deadlock, error, timeout
        self.ranks = [_Rank(r) for r in range(n_ranks)]
        self.comm = Communicator(n_ranks, chip, self)

    # ---- called from rank threads (with the baton) -----------------------------------------
    def committed(self, call: CollectiveCall) -> None:
        self.ranks[call.rank].committed.append(call)

    def block_until_complete(self, call: CollectiveCall, fr) -> None:
        r = call.rank
        me = self.ranks[r]
        core = state.core
        with self.cv:
            me.status, me.waiting = RankStatus.WAITING, call
            me.where = (fr.f_code.co_filename, fr.f_lineno)
            self._pass_turn(r)
            while self.turn != r and self.stop is None:
                self.cv.wait()
            if self.turn != r:
                raise RankAbort()
            me.status, me.waiting = RankStatus.RUNNING, None
        state.core = core

    # ---- scheduling ------------------------------------------------------------------------
    def _runnable(self, rk: _Rank) -> bool:
        if rk.status == RankStatus.READY:
            return True
        return rk.status == RankStatus.WAITING and self.comm.complete(rk.waiting.block, rk.waiting.seq)

    def _pass_turn(self, r: int) -> None:
        """Give the baton to the next rank that can progress, or stop the world (lock held)."""
        if self.stop is None:
            for k in range(1, self.n + 1):
                q = (r + k) % self.n
                if self._runnable(self.ranks[q]):
                    self.turn = q
                    self.cv.notify_all()
                    return
            waiting = any(rk.status == RankStatus.WAITING for rk in self.ranks)
            self.stop = "deadlock" if waiting else "done"
        self.turn = None
        self.cv.notify_all()

    def rank_main(self, r: int, body, path: str | None = None) -> None:
        me = self.ranks[r]
        watch = _ReturnWatch(path) if path else None
        with self.cv:
            while self.turn != r and self.stop is None:
                self.cv.wait()
            if self.turn != r:
                me.status = RankStatus.ABORTED
                return
            me.status = RankStatus.RUNNING
        try:
            if watch is not None:
                sys.setprofile(watch)
            try:
                body(r)
            finally:
                sys.setprofile(None)
            me.status = RankStatus.FINISHED
            me.returned = watch.innermost() if watch is not None else None
        except RankAbort:
            if me.status != RankStatus.TIMEOUT:
                me.status = RankStatus.ABORTED if me.status != RankStatus.WAITING else RankStatus.WAITING
            return
        except OperatorError as exc:
            me.status, me.error = RankStatus.ERROR, exc.info()
            with self.cv:
                if self.stop is None:
                    self.stop = "error"
        except Exception as exc:  # noqa: BLE001 - a bug outside the kernel; report, don't hang
            me.status = RankStatus.ERROR
            err = internal_error(exc, path, None)
            if err is None:
                file, line = location_from_traceback(exc.__traceback__)
                me.error = ErrorInfo("exception", f"{type(exc).__name__}: {exc}", file, line)
            else:
                me.error = err.info()
            with self.cv:
                if self.stop is None:
                    self.stop = "error"
        finally:
            state.core = None
        with self.cv:
            self._pass_turn(r)


def run_ranks(
    op_ref: str | OperatorModule,
    n_ranks: int,
    case: str | None = None,
    chip: str | None = None,
    params: dict | None = None,
    timeout_s: float = 30.0,
    seed: int = 0,
    timing_only: bool = False,
) -> DeadlockReport:
    """Run `n_ranks` ranks of the operator together; never hangs longer than `timeout_s`."""
    t0 = time.perf_counter()
    op = op_ref if isinstance(op_ref, OperatorModule) else load_operator(op_ref)
    if n_ranks < 1:
        raise ValueError("n_ranks must be at least 1")
    chip_m = load_chip(chip)
    numeric = not timing_only
    sched = RankScheduler(n_ranks, chip_m)
    setups = []
    try:
        for r in range(n_ranks):
            setups.append(prepare(op, case, params or {}, timing_only, seed + r))
    except OperatorError as exc:
        return DeadlockReport(
            op.name,
            case,
            n_ranks,
            timeout_s,
            Outcome.ERROR,
            None,
            f"build failed: {exc.message}",
            (),
            None,
            time.perf_counter() - t0,
            (exc.info(),),
        )
    case_obj = setups[0][0]

    def body(r: int) -> None:
        lnch, gm_args = setups[r].lnch, setups[r].gm_args
        ctx = HcclContext(r, sched.comm)
        em = launch(
            op.kernel,
            gm_args,
            lnch.tiling,
            lnch.block_dim,
            chip_m,
            numeric,
            configure=lambda run: setattr(run, "hccl", ctx),
        )
        sched.ranks[r].time_us = em.time_us

    threads = [
        threading.Thread(target=sched.rank_main, args=(r, body, op.path), daemon=True, name=f"asc-rank-{r}")
        for r in range(n_ranks)
    ]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout_s
    with sched.cv:
        sched.turn = 0
        sched.cv.notify_all()
        while sched.stop is None:
            left = deadline - time.monotonic()
            if left <= 0:
                _stop_runaway(sched, threads)
                break
            sched.cv.wait(min(left, 0.5))
    for t in threads:
        t.join(timeout=2.0)
    return _summarise(op, case_obj.name, sched, setups, timeout_s, time.perf_counter() - t0)


def _stop_runaway(sched: RankScheduler, threads: list[threading.Thread]) -> None:
    """The baton holder ran past the timeout: note its line and unwind it (lock held)."""
    r = sched.turn
    sched.stop = "timeout"
    if r is not None:
        rk = sched.ranks[r]
        rk.status = RankStatus.TIMEOUT
        frame = sys._current_frames().get(threads[r].ident)
        while frame is not None and not is_user_file(frame.f_code.co_filename):
            frame = frame.f_back
        if frame is not None:
            rk.where = (frame.f_code.co_filename, frame.f_lineno)
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(threads[r].ident), ctypes.py_object(RankAbort)
        )
    sched.cv.notify_all()


__all__ = ["run_ranks", "RankScheduler", "RankAbort", "DeadlockReport", "RankReport"]
