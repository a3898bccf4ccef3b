"""initcheck: reads of local memory (UB, L1, L0A/B/C) that nothing wrote earlier in this block.

A byte map per local memory of the running core marks what DMA, vector and cube instructions
have written; a read of any unmarked byte is reported once per line, naming the first unwritten
byte. Strided accesses (`span=True`) mark or check their whole extent, so gaps between strided
blocks count as written — a conservative choice that never reports a correct kernel. GM is not
checked: inputs are initialised by the host and outputs start zeroed.
"""

from __future__ import annotations

import numpy as np

from ...ascendc.memory.tensors import GlobalTensor
from .findings import Finding
from .memcheck import tensor_name


class InitCheck:
    tool = "initcheck"

    def __init__(self, san):
        self.san = san
        self.core = None
        self.maps: dict[str, np.ndarray] = {}

    def park(self):
        st, self.core, self.maps = (self.core, self.maps), None, {}
        return st

    def resume(self, st) -> None:
        self.core, self.maps = st

    def access(self, core, t, start, count, is_write, fr, span=False) -> None:
        if type(t) is GlobalTensor:
            return
        if core is not self.core:
            self.core = core
            self.maps = {}
        m = self.maps.get(t.mem)
        if m is None:
            m = self.maps[t.mem] = np.zeros(core.chip.memory.get(t.mem, 0), dtype=bool)
        isz = t.dtype.itemsize
        lo = t.offset + start * isz
        hi = lo + count * isz
        if is_write:
            m[lo:hi] = True
        elif hi > lo and not m[lo:hi].all():
            first = lo + int(np.argmin(m[lo:hi]))
            unwritten = int(np.count_nonzero(~m[lo:hi]))
            self.san.report(
                Finding(
                    self.tool,
                    "uninitialized",
                    fr.f_code.co_filename,
                    fr.f_lineno,
                    f"{unwritten} of {hi - lo} bytes read were never written in this run (first "
                    f"at {t.mem.upper()}+{first})",
                    block=core.block,
                    tensor=tensor_name(t, fr),
                    memory=t.mem,
                    offset=lo,
                    access="Read",
                    size=hi - lo,
                )
            )

    def end_block(self, core) -> None:
        self.core = None
        self.maps = {}
