"""Recycled host arrays for a launch's large scratch memory (fp32 twins of GM, local memories).

Why: memory fresh from the OS costs a page fault per 4 KB page when first touched (~4 µs in
the VM the benchmarks run in). A full emulation of a 1024³ fp16 matmul took ~2,000 of them a
launch — its two 4 MB fp32 twins of A and B (ascendc/mmad_numbers.wide_grid) and its cores'
L0C — about 8 ms of its ~64 ms of CPU.

An array handed out here is handed out again only once nothing but the pool refers to it: no
array, view or buffer export of it is left (CPython's reference count says so), so no one can
see it reused. `zeros` clears it first, as `np.zeros` would give it.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

#: bytes of arrays the pool keeps for reuse (the rest are freed as usual)...
BUDGET = 128 << 20
#: ...and the largest one it keeps: a launch big enough to need more pays its faults once
#: against far more arithmetic, and a process must not hold a huge launch's memory after it
MAX_ARRAY = 32 << 20


class Pool:
    """Arrays handed out (strongly held), reused by a later request once free."""

    def __init__(self, budget: int = BUDGET, max_array: int = MAX_ARRAY):
        self.budget = budget
        self.max_array = max_array
        self.held: list[np.ndarray] = []  # uint8 arrays, least recently handed out first
        self.lock = threading.Lock()

    def empty(self, count: int, dtype) -> np.ndarray:
        """A 1-D array of `count` elements of `dtype` with undefined contents (`np.empty`)."""
        dt = np.dtype(dtype)
        nbytes = count * dt.itemsize
        if nbytes > self.max_array or nbytes == 0:
            return np.empty(count, dt)
        with self.lock:
            held = self.held
            for i in range(len(held)):
                if held[i].nbytes == nbytes and _refs(held, i) == _FREE:
                    arr = held.pop(i)
                    held.append(arr)
                    return arr.view(dt)
            arr = np.empty(nbytes, np.uint8)
            held.append(arr)
            self._trim()
            return arr.view(dt)

    def zeros(self, count: int, dtype) -> np.ndarray:
        """A 1-D array of `count` zeros of `dtype` (`np.zeros`)."""
        dt = np.dtype(dtype)
        if count * dt.itemsize > self.max_array:
            return np.zeros(count, dt)
        arr = self.empty(count, dt)
        arr.fill(0)
        return arr

    def _trim(self) -> None:
        """Keep at most `budget` bytes: forget the least recently handed out free arrays."""
        held = self.held
        total = sum(a.nbytes for a in held)
        i = 0
        while total > self.budget and i < len(held):
            if _refs(held, i) == _FREE:
                total -= held.pop(i).nbytes
            else:
                i += 1


def _refs(held: list, i: int) -> int:
    return sys.getrefcount(held[i])


#: `_refs` of a held array no one else refers to (measured: it differs between interpreters)
_FREE = _refs([np.empty(1)], 0)

#: the process's pool (one for all launches and threads)
scratch = Pool()
