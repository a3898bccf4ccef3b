"""Mixed AIC+AIV blocks: one AI Core = 1 AIC + `aiv_per_aic` AIV, run cooperatively.

On 910B a mixed kernel (`@AscendC.kernel(core_type="mix")`) runs the same function on the cube
core and on both vector cores of each AI Core; they exchange data through GM and order it with
CrossCoreSetFlag / CrossCoreWaitFlag. Each sub-core is a `Core` with its own pipes and clocks.

Why threads: a sub-core that waits for a flag another sub-core has not set yet must stop where it
is (in the middle of user code) and let the other run. Each sub-core runs in its own thread, but
only the one holding the baton executes; a CrossCoreWaitFlag with nothing to consume passes the
baton on. When every unfinished sub-core is waiting and no flag was set since, that is a
cross-core deadlock, reported with each sub-core's waiting line.
"""

from __future__ import annotations

import ctypes
import threading
from collections import deque

from . import state
from .core import Core
from .cores import CoreType
from .errors import SyncError


class _Abort(BaseException):
    """Unwinds a sub-core's thread when another sub-core failed."""


class SubCoreReturn(BaseException):  # noqa: N818 - a return, not an error
    """Ends a sub-core's part of the kernel early: the kernel function returns there (the AIC
    after serving the AIVs' Matmul requests, as REGIST_MATMUL_OBJ's server loop does)."""


class Group:
    """The sub-cores of one AI Core and the cross-core flags between them."""

    def __init__(self, cores: list[Core]):
        self.cores = cores
        self.flags: dict = {}
        self.cv = threading.Condition()
        self.turn = 0
        self.done: set[int] = set()
        # sub-core -> (sets seen, file, line, what, rendezvous): `rendezvous` is (key, need) of a
        # wait for other blocks (npu/coop.py), None for a flag of this AI Core
        self.waiting: dict[int, tuple] = {}
        self.sets = 0
        self.error: BaseException | None = None
        self.mail: dict = {}  # flag key -> payloads riding on its sets, in order (push(..., msg))
        self.blocks = None  # the launch's cooperative blocks (npu/coop.py), if any
        self.block = 0  # this AI Core's block of the launch

    # ---- flags ----------------------------------------------------------------------------------
    def push(self, key, t: float, msg=None) -> None:
        q = self.flags.get(key)
        if q is None:
            q = self.flags[key] = deque()
        q.append(t)
        if msg is not None:
            self.mail.setdefault(key, deque()).append(msg)
        self.sets += 1

    def take(self, me: int, keys: list, what: str, fr) -> float:
        """Consume one entry of every key (yielding until all are there); the latest time."""
        while True:
            if all(self.flags.get(k) for k in keys):
                self.waiting.pop(me, None)
                return max(self.flags[k].popleft() for k in keys)
            self.waiting[me] = (self.sets, fr.f_code.co_filename, fr.f_lineno, what, None)
            self._yield(me, fr)

    def take_any(self, me: int, keys: list, what: str, fr) -> tuple:
        """Consume one entry of the first key that has one (yielding until one has):
        (key, time, the payload pushed with it or None)."""
        while True:
            for k in keys:
                if self.flags.get(k):
                    self.waiting.pop(me, None)
                    box = self.mail.get(k)
                    return k, self.flags[k].popleft(), box.popleft() if box else None
            self.waiting[me] = (self.sets, fr.f_code.co_filename, fr.f_lineno, what, None)
            self._yield(me, fr)

    def meet(self, me: int, key, need: int, what: str, fr) -> None:
        """Wait until `need` blocks' sub-cores arrived at rendezvous `key` (npu/coop.py): the
        other sub-cores of this AI Core run meanwhile; when none can, the whole block waits."""
        while not self.blocks.complete(key, need):
            self.waiting[me] = (self.sets, fr.f_code.co_filename, fr.f_lineno, what, (key, need))
            self._yield(me, fr)
        self.waiting.pop(me, None)

    def _stuck(self, i: int) -> bool:
        w = self.waiting.get(i)
        if w is None:
            return False
        if w[4] is None:  # a flag of this AI Core: stuck while nothing was set since
            return w[0] == self.sets
        return not self.blocks.complete(*w[4])

    def _yield(self, me: int, fr) -> None:
        """Let a sub-core that can go on run; if none can, wait with the whole block for the
        other blocks, or report the cross-core deadlock."""
        live = [i for i in range(len(self.cores)) if i not in self.done]
        if not all(self._stuck(i) for i in live):
            self._pass(me)
            return
        meets = [self.waiting[i] for i in live if self.waiting[i][4] is not None]
        if not meets:
            lines = "; ".join(
                f"{_name(self.cores[i])} waits at line {self.waiting[i][2]} ({self.waiting[i][3]})"
                for i in live
            )
            raise SyncError(
                f"cross-core deadlock: {lines}, and nothing left can set the flags",
                fr.f_code.co_filename,
                fr.f_lineno,
                hint="every CrossCoreWaitFlag needs a matching CrossCoreSetFlag on the other side of "
                "the AI Core",
            )
        (key, need), what = meets[0][4], meets[0][3]
        self.blocks.wait(key, need, what, fr, who=self.block)
        ready = [i for i in live if i != me and not self._stuck(i)]
        if ready and not (me in self.waiting and not self._stuck(me)):
            self._pass_to(me, ready[0])

    # ---- baton ----------------------------------------------------------------------------------
    def _pass(self, me: int) -> None:
        with self.cv:
            n = len(self.cores)
            for step in range(1, n + 1):
                j = (me + step) % n
                if j not in self.done:
                    self.turn = j
                    break
            self.cv.notify_all()
            self._wait_turn(me)

    def _pass_to(self, me: int, j: int) -> None:
        with self.cv:
            self.turn = j
            self.cv.notify_all()
            self._wait_turn(me)

    def _wait_turn(self, me: int) -> None:
        while self.turn != me and self.error is None:
            self.cv.wait()
        if self.error is not None:
            raise _Abort()
        state.core = self.cores[me]

    def _finish(self, me: int) -> None:
        with self.cv:
            self.done.add(me)
            self.waiting.pop(me, None)
            left = [i for i in range(len(self.cores)) if i not in self.done]
            self.turn = left[0] if left else -1
            for i in left:  # prefer one that is not stuck waiting
                if i not in self.waiting:
                    self.turn = i
                    break
            self.cv.notify_all()


def _stop(threads: list[threading.Thread]) -> None:
    """Raise _Abort inside sub-core threads still running user code (an endless loop)."""
    for t in threads:
        if t.is_alive() and t.ident is not None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(t.ident), ctypes.py_object(_Abort))


def _name(core: Core) -> str:
    return "AIC" if core.kind == CoreType.AIC else f"AIV{core.sub_block}"


def run_group(
    run, fn, args: tuple, block: int, core_id: int, wave: int, t0: float, n_active: int
) -> list[Core]:
    """Run one mixed block on its AIC and AIVs; returns the sub-cores (AIC first)."""
    chip = run.chip
    n_aiv = int(chip.raw.get("cores", {}).get("aiv_per_aic", 2))
    cores = []
    for i in range(1 + n_aiv):
        c = Core(run, block, core_id, wave, t0, n_active)
        c.kind = CoreType.AIC if i == 0 else CoreType.AIV
        c.sub_block = 0 if i == 0 else i - 1
        c.sub_block_num = n_aiv
        if i:
            c.block = c.block_index = block * n_aiv + i - 1  # GetBlockIdx() on an AIV: the vector core index
            c.core_id = chip.aic + core_id * n_aiv + i - 1
        cores.append(c)
    g = Group(cores)
    g.blocks, g.block = run.blocks, block
    for c in cores:
        c.group = g

    def body(i: int) -> None:
        try:
            with g.cv:
                g._wait_turn(i)
            fn(*args)
        except _Abort:
            return
        except SubCoreReturn:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the launching thread
            with g.cv:
                if g.error is None:
                    g.error = exc
                g.cv.notify_all()
            return
        g._finish(i)

    threads = [
        threading.Thread(target=body, args=(i,), daemon=True, name=f"asc-tui block {block} sub {i}")
        for i in range(len(cores))
    ]
    saved = state.core

    def abort() -> None:  # the launch stops (npu/coop.py): unwind this block's sub-cores too
        with g.cv:
            g.error = g.error or _Abort()
            g.cv.notify_all()
            turn = g.turn
        # the others wake up to the error; the one with the baton runs user code (an endless
        # loop), unless it waits for other blocks, and then the launch's stop wakes it
        if 0 <= turn < len(threads) and g.block not in run.blocks.parked:
            _stop([threads[turn]])

    if run.blocks is not None:
        run.blocks.aborts.append(abort)
    try:
        for t in threads:
            t.start()
        with g.cv:
            while len(g.done) < len(cores) and g.error is None:
                g.cv.wait()
    except BaseException as exc:  # e.g. the launch's timeout fired in this thread
        with g.cv:
            g.error = g.error or exc
            g.cv.notify_all()
        _stop(threads)
        raise
    finally:
        state.core = saved
    if g.error is not None:
        for t in threads:
            t.join(timeout=1.0)
        raise g.error
    for t in threads:
        t.join()
    return cores
