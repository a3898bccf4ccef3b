"""Where the NaN came from: the first instruction that wrote a NaN/Inf from finite inputs.

An output full of NaN says something went wrong, not where. This hook rides on the sanitizer's
per-instruction `access` calls (reads of the instruction, then its writes) and watches floating
tensors: the first write holding a non-finite value, while everything read so far was finite, is
the origin — "Exp overflowed to inf at softmax_no_max.py:61, block 0, element 17". Once a
non-finite value has been seen anywhere (written, or read from the inputs) the hook goes quiet:
later NaNs are consequences. Reads are checked after the instruction ran, so an in-place
instruction (dst is src) that creates the first NaN is named by its read.
"""

from __future__ import annotations

import numpy as np

from ...ascendc.memory.tensors import GlobalTensor
from ..precision import NonFiniteOrigin
from ..run.loader import OperatorModule
from ..run.runner import RunRequest, run
from .sanitizer import Sanitizer


class NonFiniteTrace:
    """A sanitizer hook (see `Sanitizer(extra=...)`): records the first `NonFiniteOrigin`."""

    tool = "nonfinite"

    def __init__(self):
        self.origin: NonFiniteOrigin | None = None
        self.done = False

    def access(self, core, t, start, count, is_write, fr, span=False) -> None:
        if self.done or count <= 0 or t.arr is None:
            return
        if t.dtype.kind not in "fV":  # floats (and bfloat16, a void-kind dtype)
            return
        base = t.start if type(t) is GlobalTensor else 0
        region = t.arr[base + start : base + start + count]
        try:
            bad = ~np.isfinite(region)
        except TypeError:
            return
        if not bad.any():
            return
        i = int(np.argmax(bad))
        v = float(region[i])
        value = "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
        op = core.rec[-1][3] if core.rec else "?"
        from_input = not is_write and type(t) is GlobalTensor
        self.origin = NonFiniteOrigin(
            str(op), fr.f_code.co_filename, fr.f_lineno, core.block, start + i, value, None, from_input
        )
        self.done = True


def locate(request: RunRequest, op: OperatorModule | None = None) -> NonFiniteOrigin | None:
    """Run `request` again under the trace alone and name the first NaN/Inf the kernel made
    (None when this run meets none, or stops first). Costs one more run: for reports whose
    outputs hold NaN/Inf the golden does not (`PrecisionReport.made_nonfinite`)."""
    trace = NonFiniteTrace()
    with np.errstate(all="ignore"):  # overflow is what is being looked for
        run(request, op=op, sanitizer=Sanitizer((), extra=(trace,)))
    return trace.origin
