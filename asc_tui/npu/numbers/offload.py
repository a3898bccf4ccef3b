"""Compute the cube's L0C tiles (BLAS) and Fixpipe conversions on a second thread.

Why: full emulation of a matmul is two kinds of work: Python that emulates every instruction
(holds the GIL) and the BLAS matmuls that compute L0C (release it). On a host with two or more
CPUs they overlap, as numpy's own matmul uses every core: the emulator hands the numbers of an
L0C tile to this thread and goes on emulating the next tile (1024³ fp16 full emulation,
benchmarks/bench_cube.py: 62–64 → 40–44 ms).

Results cannot change: the worker runs jobs one at a time in the order they were submitted,
and the emulator waits for them (`drain`) before anything reads or writes what they write — L0C
(`mmad_numbers.flush_cube`), a GM buffer with pending jobs (`gm_ready`, called by every GM access), and
the end of the launch. While it waits, the emulating thread itself runs queued jobs that touch
only their own core's L0C (a "lane", kept in order) and no GM, with BLAS single-threaded as on
the worker: the tail of a launch's tile matmuls then uses both CPUs (1024³ fp16, medians of 9
repeated launches: 37.9–38.7 → 35.8–36.6 ms).
With a single usable CPU, jobs run inline.

During a launch that hands work over, the two threads are pinned to different CPUs (`_spread`).
"""

from __future__ import annotations

import os
import sys
import threading
from collections import deque

from .blas import set_threads

#: GIL switch interval during a launch that hands work over. With cube operands kept as lineage
#: (ascendc/lineage.py) the emulating thread runs almost pure Python and gives the GIL up only
#: when forced; a job waits that long for it after each BLAS or numpy call. At the default 5 ms
#: the numbers thread became the bottleneck: 1024³ fp16 full emulation took 47.5–49.2 ms
#: instead of 39.0–40.4 ms (median of 9 launches each, three alternating rounds).
SWITCH_S = 0.00001


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
        return int(stat[stat.rindex(b")") + 2 :].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def _set_cpus(tid: int, cpus: set[int]) -> bool:
    try:
        os.sched_setaffinity(tid, cpus)
        return True
    except (AttributeError, OSError):
        return False


class Offload:
    """One worker thread running submitted jobs in order; `drain` waits for all of them (and
    runs those that may go early)."""

    def __init__(self, threaded: bool | None = None):
        self.threaded = len(_usable_cpus()) > 1 if threaded is None else threaded
        self.jobs: deque = deque()  # (job, GmBuffer it writes, lane, ready), under `idle`
        self.idle = threading.Condition()
        self.pending = 0
        self.lanes: set = set()  # lanes of the jobs running now
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None
        self.depth = 0  # launches running (one may start another)
        self.blas_threads: int | None = None  # BLAS's thread count before the launches
        self.spread = False  # pin the threads apart at the next job (`_spread`)
        self.pinned: list[tuple[int, set[int]]] = []  # (thread id, CPUs to restore)
        self.switch = sys.getswitchinterval()  # the interpreter's, restored by `finish`

    def begin(self) -> None:
        """At the start of a launch: BLAS on one thread (this thread runs it; restored by
        `finish`, after the last job: BLAS's idle workers spin ~0.1 s after a call of
        theirs); the first job will spread the threads over two CPUs."""
        with self.idle:
            self.depth += 1
            if self.depth == 1:
                self.blas_threads = set_threads(1)
                self.spread = self.threaded
                self.switch = sys.getswitchinterval()
                if self.threaded:
                    sys.setswitchinterval(SWITCH_S)

    def finish(self) -> None:
        """At the end of a launch (after `drain`): BLAS threads and CPUs as they were."""
        with self.idle:
            self.depth -= 1
            if self.depth > 0:
                return  # launches within or beside this one (the L2 pre-pass, HCCL ranks)
            set_threads(self.blas_threads)
            sys.setswitchinterval(self.switch)
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
            self.thread = threading.Thread(target=self._work, name="asc-tui cube numbers", daemon=True)
            self.thread.start()

    def submit(self, job, writes=None, lane=None, ready=None) -> None:
        """Run `job()` after the jobs before it; `writes` is the GmBuffer it writes, if any.

        `lane` (hashable) names the local memory the job touches: jobs of one lane always run
        in order. A job with a lane, no GM write and `ready()` true may be run early by the
        thread waiting in `drain` (it reads nothing an earlier job of another lane writes).
        """
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
            self.jobs.append((job, writes, lane, ready))
            self.idle.notify_all()

    def _work(self) -> None:
        idle = self.idle
        while True:
            with idle:
                # in order, but not a job whose lane the draining thread is running
                while not self.jobs or self.jobs[0][2] in self.lanes:
                    idle.wait()
                job, writes, lane, _ = self.jobs.popleft()
                self.lanes.add(lane)
            self._run(job, writes, lane)
            job = writes = None  # (not kept alive until the next job: see npu/launch/launcher.py)

    def _run(self, job, writes, lane) -> None:
        try:
            if self.error is None:
                job()
        except BaseException as exc:  # handed to the emulating thread by `drain`
            self.error = exc
        finally:
            with self.idle:
                self.lanes.discard(lane)
                if writes is not None:
                    writes.busy -= 1
                self.pending -= 1
                self.idle.notify_all()

    def _steal(self):
        """The last queued job the draining thread may run now, removed from the queue, or
        None: it has a lane that nothing earlier in the queue nor running has, writes no GM,
        and is ready."""
        jobs, first = self.jobs, {}
        for i, (_, _, lane, _) in enumerate(jobs):
            if lane is not None and lane not in first:
                first[lane] = i
        for lane, i in sorted(first.items(), key=lambda item: -item[1]):
            job, writes, _, ready = jobs[i]
            if writes is None and ready is not None and lane not in self.lanes and ready():
                del jobs[i]
                self.lanes.add(lane)
                return job, writes, lane
        return None

    def drain(self) -> None:
        """Wait until every submitted job has run; re-raise the first job's error.

        While it waits, this thread runs queued jobs that may go early (`submit`): at the end
        of a launch the worker's tail of tile matmuls is shared by both CPUs (single-threaded
        BLAS each, so the bits are unchanged).
        """
        if self.pending:
            idle = self.idle
            with idle:
                while self.pending:
                    stolen = self._steal()
                    if stolen is None:
                        idle.wait()
                        continue
                    idle.release()
                    try:
                        self._run(*stolen)
                    finally:
                        idle.acquire()
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
