"""Global memory as the emulator holds it: one `GmBuffer` per kernel argument, and the typed
address (`GM_ADDR`) a kernel receives for it.

The launcher (`npu/launch/`) wraps the operator's inputs and outputs in these; the kernel API
(`asc_tui.ascendc`) re-exports `GM_ADDR` and views the buffers through its GlobalTensor.
"""

from __future__ import annotations

import numpy as np

from ..replay.blockindex import BlockIndex

_OFFSETS = (int, BlockIndex)


class GmBuffer:
    """One kernel argument in global memory (an input or output of the operator)."""

    __slots__ = ("name", "dtype", "count", "data", "busy", "lineage", "version")

    def __init__(self, name: str, dtype: np.dtype, count: int, data: np.ndarray | None):
        self.name = name
        self.dtype = np.dtype(dtype)  # (the kernel API's types are numpy dtypes: ascendc/dtypes.py)
        self.count = int(count)
        self.data = data  # flat numpy array of `dtype`, or None in timing-only mode
        self.busy = 0  # numeric jobs still to write it (npu/numbers/offload.py)
        # local regions were taken from it by lineage; writes so far (ascendc/lineage.py)
        self.lineage = False
        self.version = 0


class GM_ADDR:  # noqa: N801 - Ascend C's spelling
    """A typed GM address: `x + n` moves by n elements of the buffer's declared dtype."""

    __slots__ = ("buffer", "offset")

    def __init__(self, buffer: GmBuffer, offset: int = 0):
        self.buffer = buffer
        self.offset = offset

    def __add__(self, n: int) -> GM_ADDR:
        # a block index (npu/replay/replay.py) stays one: a block's GM offsets are affine in it
        return GM_ADDR(self.buffer, self.offset + (n if type(n) in _OFFSETS else int(n)))

    __radd__ = __add__

    def __repr__(self) -> str:
        return f"GM_ADDR({self.buffer.name}+{self.offset})"


def shadows(gm_args: list) -> list:
    """The launch's arguments with every GM buffer replaced by a shadow (no data: a timing-only
    pass, which never writes the user's arrays); a null pointer argument stays null."""
    return [
        GM_ADDR(GmBuffer(a.buffer.name, a.buffer.dtype, a.buffer.count, None), a.offset)
        if isinstance(a, GM_ADDR)
        else a
        for a in gm_args
    ]


#: GM buffers whose device address a host program took (`(uintptr_t)p`, a pointer in a struct it
#: copied to the device): base address -> buffer, so a kernel reading such an address from memory
#: (ListTensorDesc) gets the buffer back. The host runtime (cxx/host/acl.py) places and removes them.
PLACED: dict[int, GmBuffer] = {}


def gm_at(address: int) -> GM_ADDR | None:
    """The GM address (buffer, element offset) at a device byte address, or None."""
    for base, buf in PLACED.items():
        off = address - base
        if 0 <= off < buf.count * buf.dtype.itemsize:
            return GM_ADDR(buf, off // buf.dtype.itemsize)
    return None
