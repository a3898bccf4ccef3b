"""Run time of the array form of element-wise scalar loops (vectorize.py).

`vfor(lo, hi, accesses, body)` does what the per-element loop would: the same GetValue/SetValue
element range of each LocalTensor, in the same order for the sanitizer, the same scalar-unit
time (`scalar_value` cycles per GetValue/SetValue, one record per call site), the same numbers.
It declines — returning `range(lo, hi)` for the per-element loop — whenever the array form could
differ: a short loop, an index outside a tensor (the per-element loop reports the exact one),
L0C (computed when read), or a written tensor overlapping another at a different place.
"""

from __future__ import annotations

import numpy as np

from ...ascendc.memory.tensors import LocalTensor
from ...npu import state

#: Shorter loops run per element (the array form's setup would not pay off).
MIN_ELEMENTS = 64


class _At:
    """The loop's frame, at the C++ line a GetValue/SetValue of its body is on."""

    __slots__ = ("_fr", "f_lineno")

    def __init__(self, fr, line: int):
        self._fr, self.f_lineno = fr, line

    def __getattr__(self, name):
        return getattr(self._fr, name)  # f_code, f_locals, f_back...


def _overlaps(accesses, lo: int, hi: int) -> bool:
    """Does a written tensor share bytes with another accessed at another offset or dtype?"""
    spans = {}
    for t, _w, _l in accesses:
        isz = t.dtype.itemsize
        spans[id(t)] = (t.mem, t.offset + lo * isz, t.offset + hi * isz, t.offset, t.dtype)
    for t, w, _l in accesses:
        if not w:
            continue
        m, a, b, off, dt = spans[id(t)]
        for m2, a2, b2, off2, dt2 in spans.values():
            if m2 == m and a2 < b and a < b2 and (off2 != off or dt2 != dt):
                return True
    return False


def vfor(lo: int, hi: int, accesses: tuple, body):
    """Run `body(lo, hi)` as arrays and return an empty range, or decline (`range(lo, hi)`)."""
    import sys

    core = state.core
    if core is None or hi - lo < MIN_ELEMENTS:
        return range(lo, hi)
    for t, _w, _l in accesses:
        if type(t) is not LocalTensor or lo < 0 or hi > t.count or t.mem == "l0c":
            return range(lo, hi)
    if _overlaps(accesses, lo, hi):
        return range(lo, hi)
    fr = sys._getframe(1)
    n = hi - lo
    if core.lazy is not None:
        core.lazy.settle()
    san = core.san
    if san is not None:
        for t, w, line in accesses:
            san.access(core, t, lo, n, w, _At(fr, line))
    if all(t.arr is not None for t, _w, _l in accesses):  # shadow data: time only, as SetValue
        with np.errstate(all="ignore"):
            body(lo, hi)
    cycles = core.chip.scalar_value * n
    for _t, w, line in accesses:
        core.scalar(cycles, "SetValue" if w else "GetValue", _At(fr, line))
    return range(0)


def vget(t: LocalTensor, lo: int, hi: int) -> np.ndarray:
    return t.arr[lo:hi]


def vset(t: LocalTensor, lo: int, hi: int, value) -> None:
    t.arr[lo:hi] = value


def vindex(lo: int, hi: int, dtype: str) -> np.ndarray:
    return np.arange(lo, hi, dtype=np.int64).astype(dtype)


def vcast(x, dtype: str) -> np.ndarray:
    """C conversion of an array (or scalar) to `dtype` (float → int truncates, as C)."""
    a = np.asarray(x)
    if a.dtype.kind == "f" and np.dtype(dtype).kind in "iu":
        a = np.trunc(a)
    return a.astype(dtype, copy=False)
