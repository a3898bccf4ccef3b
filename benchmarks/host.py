"""The host-speed figure every benchmark prints beside its own: CPU seconds of a fixed
5M-addition Python loop, measured in the same run (this shared machine's speed moves by up to
2x within minutes, so a figure means little without it)."""

from __future__ import annotations

import statistics
import time


def python_loop() -> None:
    """A fixed pure-Python workload (5M additions): the host's interpreter speed right now."""
    s = 0
    for i in range(5_000_000):
        s += i


def host_loop_s(rounds: int = 3) -> float:
    """Median CPU seconds of the 5M-addition loop over `rounds`."""
    times = []
    for _ in range(rounds):
        c = time.process_time()
        python_loop()
        times.append(time.process_time() - c)
    return statistics.median(times)


def timed(fn) -> tuple[float, float, object]:
    """Wall and process CPU seconds of `fn()` (CPU of every thread: BLAS's, the numbers
    thread's), and its result."""
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out
