"""Compute the cube's L0C tiles (BLAS) and Fixpipe conversions on a second thread.

Why: full emulation of a matmul is two kinds of work: Python that emulates every instruction
(holds the GIL) and the BLAS matmuls that compute L0C (release it). On a host with two or more
CPUs they overlap, as numpy's own matmul uses every core: the emulator hands the numbers of an
L0C tile to this thread and goes on emulating the next tile (1024³ fp16 full emulation,
benchmarks/bench_cube.py: 62–64 → 40–44 ms).

Results cannot change: jobs run one at a time in the order they were submitted, and the
emulator waits for them (`drain`) before anything reads or writes what they write — L0C
(`cube.flush_cube`), a GM buffer with pending jobs (`gm_ready`, called by every GM access), and
the end of the launch. With a single usable CPU, jobs run inline.

During a launch that hands work over, the two threads are pinned to different CPUs (`_spread`).
"""

from __future__ import annotations

import os
import queue
import threading

from .blas import set_threads


def _usable_cpus() -> set[int]:
    try:
        return os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def _current_cpu() -> int | None:
    """The CPU the calling thread runs on (Linux), or None."""
    try:
        with open("/proc/thread-self/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2:].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def _set_cpus(tid: int, cpus: set[int]) -> bool:
    try:
        os.sched_setaffinity(tid, cpus)
        return True
    except (AttributeError, OSError):
        return False


class Offload:
    """One worker thread running submitted jobs in order; `drain` waits for all of them."""

    def __init__(self, threaded: bool | None = None):
        self.threaded = len(_usable_cpus()) > 1 if threaded is None else threaded
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.idle = threading.Condition()
        self.pending = 0
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None
        self.depth = 0  # launches running (one may start another)
        self.blas_threads: int | None = None  # BLAS's thread count before the launches
        self.spread = False  # pin the threads apart at the next job (`_spread`)
        self.pinned: list[tuple[int, set[int]]] = []  # (thread id, CPUs to restore)

    def begin(self) -> None:
        """At the start of a launch: BLAS on one thread (this thread runs it; restored by
        `finish`, after the last job: BLAS's idle workers spin ~0.1 s after a call of
        theirs); the first job will spread the threads over two CPUs."""
        with self.idle:
            self.depth += 1
            if self.depth == 1:
                self.blas_threads = set_threads(1)
                self.spread = self.threaded

    def finish(self) -> None:
        """At the end of a launch (after `drain`): BLAS threads and CPUs as they were."""
        with self.idle:
            self.depth -= 1
            if self.depth > 0:
                return  # launches within or beside this one (the L2 pre-pass, HCCL ranks)
            set_threads(self.blas_threads)
            self.spread = False
            pinned, self.pinned = self.pinned, []
        for tid, cpus in pinned:
            _set_cpus(tid, cpus)

    def _spread(self) -> None:
        """Pin the submitting thread to its CPU and the worker to the others, for the launch.

        Why both: a thread woken by the other (a lock or the GIL handed over) is queued on the
        waker's CPU, and a virtual CPU idle for a while looks busy to the guest's scheduler,
        so both threads ended up sharing one CPU (1024³ fp16 after a 0.3 s pause: 62 ms
        instead of 43). Only launches that hand work over are pinned, and only until they end.
        """
        self.spread = False
        cpus, here = _usable_cpus(), _current_cpu()
        if len(cpus) < 2 or here not in cpus:
            return
        me = threading.get_native_id()
        if _set_cpus(me, {here}):
            self.pinned.append((me, cpus))
        if _set_cpus(self.thread.native_id, cpus - {here}):
            self.pinned.append((self.thread.native_id, cpus))

    def _start(self) -> None:
        if self.thread is None or not self.thread.is_alive():
            self.thread = threading.Thread(target=self._work, name="asc-tui cube numbers",
                                           daemon=True)
            self.thread.start()

    def submit(self, job, writes=None) -> None:
        """Run `job()` after the jobs before it; `writes` is the GmBuffer it writes, if any."""
        if not self.threaded:
            job()
            return
        self._start()
        if self.spread:
            self._spread()
        with self.idle:
            self.pending += 1
            if writes is not None:
                writes.busy += 1
        self.jobs.put((job, writes))

    def _work(self) -> None:
        while True:
            job, writes = self.jobs.get()
            try:
                if self.error is None:
                    job()
            except BaseException as exc:  # handed to the emulating thread by `drain`
                self.error = exc
            finally:
                with self.idle:
                    if writes is not None:
                        writes.busy -= 1
                    self.pending -= 1
                    if not self.pending:
                        self.idle.notify_all()

    def drain(self) -> None:
        """Wait until every submitted job has run; re-raise the first job's error."""
        if self.pending:
            with self.idle:
                while self.pending:
                    self.idle.wait()
        err, self.error = self.error, None
        if err is not None:
            raise err


#: the process's numbers thread (one: jobs of nested or concurrent launches stay in order)
numbers = Offload()


if hasattr(os, "register_at_fork"):  # a forked child (the tuner's workers) has no numbers
    # thread and must not inherit the parent's queue and locks: it starts afresh
    os.register_at_fork(after_in_child=numbers.__init__)


def gm_ready(buffer) -> None:
    """Before the emulator reads or writes a GM buffer: wait for pending jobs that write it."""
    if buffer.busy:
        numbers.drain()
