"""GlobalTensor and LocalTensor: typed views over emulated memories (GM buffers and addresses
are the emulator's, `npu/memory/gm.py`; `GM_ADDR` and `GmBuffer` are re-exported here).

In full mode a tensor carries a numpy view (`arr`) of the memory it lives in; in timing-only
mode `arr` is None (a shadow tensor: shape, dtype and place, no data).
"""

from __future__ import annotations

import sys

import numpy as np

from ...npu import state
from ...npu.errors import KernelError, user_frame, user_location
from ...npu.memory.gm import GM_ADDR, GmBuffer
from ...npu.numbers.offload import gm_ready
from ..dtypes import as_dtype, dtype_name, is_int4, nbytes_of, typed_view
from ..enums import POSITION_MEMORY
from ..lineage import gm_written
from ..mmad_numbers import flush_cube


def value_words(v) -> str:
    """What a value is, in the user's words (C++ or Python), never an internal class name."""
    if isinstance(v, bool):
        return "a bool"
    if isinstance(v, (int, np.integer)) or type(v).__name__ == "BlockIndex":
        return "an integer"
    if isinstance(v, (float, np.floating)):
        return "a floating-point number"
    if isinstance(v, np.dtype):
        return f"the type {dtype_name(v)}"
    if type(v).__name__ == "SimpleNamespace":  # a host struct passed by value (cxx/host/structs.py)
        return "a struct value"
    return f"a {type(v).__name__}"


class GlobalTensor:
    """`GlobalTensor<T>`: a window of GM. Bounds are checked on every access."""

    __slots__ = ("dtype", "buffer", "start", "size", "arr", "name", "limit", "base", "base_size")

    def __init__(self, dtype=None):
        self.limit = 0  # elements accessible from `start`: min(size, what the buffer holds)
        self.base = 0  # start and size given to SetGlobalBuffer (views keep them for messages)
        self.base_size = 0
        self.dtype = as_dtype(dtype) if dtype is not None else None
        self.buffer: GmBuffer | None = None
        self.start = 0  # element offset into the buffer (in `dtype` elements)
        self.size = 0
        self.arr = None
        self.name = None

    def SetGlobalBuffer(self, addr: GM_ADDR, size: int | None = None) -> None:
        if addr is None:  # a null pointer (an unused input): legal until the kernel touches it
            addr = GM_ADDR(
                GmBuffer("nullptr", self.dtype or np.uint8, 0, np.zeros(0, self.dtype or np.uint8))
            )
        if not isinstance(addr, GM_ADDR):
            file, line = user_location()
            raise KernelError(
                f"SetGlobalBuffer expects a GM address (a __gm__ pointer, GM_ADDR), got {value_words(addr)}",
                file,
                line,
            )
        buf = addr.buffer
        if self.dtype is None:
            self.dtype = buf.dtype
        # GM_ADDR offsets count elements of the buffer's declared type; convert to ours.
        byte_off = addr.offset * buf.dtype.itemsize
        packed = is_int4(self.dtype)  # elements, two per byte; `arr` holds the bytes
        isz = self.dtype.itemsize
        self.buffer = buf
        self.start = byte_off * 2 if packed else byte_off // isz
        total = buf.count * buf.dtype.itemsize * 2 if packed else buf.count * buf.dtype.itemsize // isz
        self.size = int(size) if size is not None else max(total - self.start, 0)
        self.limit = max(min(self.size, total - self.start), 0)
        self.base, self.base_size = self.start, self.size
        if buf.data is not None:
            if packed:
                self.arr = buf.data.view(np.uint8)
            else:
                self.arr = buf.data.view(self.dtype) if buf.data.dtype != self.dtype else buf.data
        self.name = buf.name

    def __getitem__(self, offset: int) -> GlobalTensor:
        g = GlobalTensor.__new__(GlobalTensor)
        g.dtype = self.dtype
        g.buffer = self.buffer
        g.start = self.start + offset
        g.size = self.size - offset
        g.limit = self.limit - offset
        g.base = self.base
        g.base_size = self.base_size
        g.arr = self.arr
        g.name = self.name
        return g

    def GetSize(self) -> int:
        return self.size

    def GetPhyAddr(self, offset: int = 0) -> GM_ADDR:
        """`GetPhyAddr([offset])`: the `__gm__ T*` of element `offset` (a GM address)."""
        byte = (self.start + int(offset)) * self.dtype.itemsize
        isz = self.buffer.dtype.itemsize
        if byte % isz:
            file, line = user_location()
            raise KernelError(
                f"GetPhyAddr: byte {byte} of '{self.name}' is not on an element of its buffer ({isz} B)",
                file,
                line,
            )
        return GM_ADDR(self.buffer, byte // isz)

    def _check(self, i: int, n: int, what: str) -> None:
        if i < 0 or n < 0 or i + n > self.size or self.start + i + n > _capacity(self):
            file, line = user_location(4)
            msg = (
                f"{what} outside the GlobalTensor '{self.name}': elements [{self.start + i}, "
                f"{self.start + i + n}) of {self.name}, but the tensor covers "
                f"[{self.base}, {self.base + min(self.base_size, _capacity(self) - self.base)})"
            )
            _san_oob(self, i, n, what == "SetValue", msg)
            raise KernelError(msg, file, line, hint="check the offset of the last (tail) tile")

    def GetValue(self, i: int):
        self._check(i, 1, "GetValue")
        core = state.core
        core.scalar(core.chip.scalar_gm_value, "GetValue(GM)", sys._getframe(1))
        if core.san is not None:
            core.san.access(core, self, i, 1, False, sys._getframe(1))
        if self.arr is None:
            return self.dtype.type(1)  # shadow data: 1 keeps divisions finite
        core.run.read_data = True  # (a shared-HBM rerun reads shadows: npu/memory/shared_hbm.py)
        gm_ready(self.buffer)
        return self.arr[self.start + i]

    def SetValue(self, i: int, value) -> None:
        self._check(i, 1, "SetValue")
        core = state.core
        core.scalar(core.chip.scalar_gm_value, "SetValue(GM)", sys._getframe(1))
        if core.san is not None:
            core.san.access(core, self, i, 1, True, sys._getframe(1))
        if self.arr is not None:
            gm_ready(self.buffer)
            gm_written(self.buffer)
            self.arr[self.start + i] = value

    def __repr__(self) -> str:
        return f"GlobalTensor<{dtype_name(self.dtype)}>({self.name}[{self.start}:+{self.size}])"


def _san_oob(t, first: int, count: int, is_write: bool, msg: str) -> None:
    """Let the sanitizer record a bounds violation at the user's line before the guard raises."""
    core = state.core
    if core is not None and core.san is not None:
        core.san.oob(core, t, first, count, is_write, user_frame(), msg)


def _capacity(g: GlobalTensor) -> int:
    buf = g.buffer
    return buf.count * buf.dtype.itemsize // g.dtype.itemsize


class LocalTensor:
    """`LocalTensor<T>` in UB/L1/L0: `count` elements at `offset` bytes of memory `mem`."""

    __slots__ = ("pos", "mem", "dtype", "offset", "count", "arr", "slot", "name")

    def __init__(self, pos, mem=None, dtype=None, offset=None, count=None, arr=None, slot=None):
        if count is None:  # Ascend C's LocalTensor<T>(TPosition pos, uint32_t addr, uint32_t len)
            self._at(pos, mem, dtype, offset)
            return
        self.pos = pos
        self.mem = mem
        self.dtype = dtype
        self.offset = offset
        self.count = count
        self.arr = arr
        self.slot = slot
        self.name = None

    def _at(self, *args) -> None:
        """A tensor at a byte address of the position's memory: `LocalTensor(T, pos, addr, len)`
        (template argument first) or `LocalTensor(pos, addr, len)` (then uint8)."""
        args = [a for a in args if a is not None]
        dtype = as_dtype(args.pop(0)) if len(args) == 4 else as_dtype("uint8")
        pos, addr, n = args[0], int(args[1]), int(args[2])
        core = state.core
        mem = POSITION_MEMORY[pos]
        cap = core.chip.usable.get(mem, 0)
        problem = None
        if addr < 0 or addr + n * dtype.itemsize > cap:
            problem = f"is outside {mem.upper()} ({cap} B)"
        elif addr % 32:
            problem = "does not start on a 32 B boundary"
        if problem:
            file, line = user_location()
            raise KernelError(
                f"LocalTensor at {mem.upper()}+{addr} of {n} elements ({n * dtype.itemsize} B) {problem}",
                file,
                line,
            )
        self.pos, self.mem, self.dtype, self.offset, self.count = pos, mem, dtype, addr, n
        self.arr = (
            typed_view(core.memory(mem)[addr : addr + nbytes_of(dtype, n)], dtype) if core.numeric else None
        )
        self.slot = None
        self.name = None

    def __getitem__(self, off: int) -> LocalTensor:
        off = int(off)
        if off < 0 or off > self.count:
            file, line = user_location()
            msg = f"LocalTensor offset {off} is outside the tensor ({self.count} elements)"
            _san_oob(self, off, 1, False, msg)
            raise KernelError(msg, file, line)
        if is_int4(self.dtype):  # packed: offsets move by whole bytes (element pairs)
            return self._int4_at(off)
        arr = self.arr[off:] if self.arr is not None else None
        t = LocalTensor(
            self.pos,
            self.mem,
            self.dtype,
            self.offset + off * self.dtype.itemsize,
            self.count - off,
            arr,
            self.slot,
        )
        return t

    def _int4_at(self, off: int) -> LocalTensor:
        if off % 2:
            file, line = user_location(3)
            raise KernelError(f"int4b_t tensor offset {off} is odd: it would start inside a byte", file, line)
        arr = self.arr[off // 2 :] if self.arr is not None else None
        return LocalTensor(
            self.pos, self.mem, self.dtype, self.offset + off // 2, self.count - off, arr, self.slot
        )

    def GetSize(self) -> int:
        return self.count

    def GetLength(self) -> int:
        return self.count * self.dtype.itemsize

    def SetSize(self, size: int) -> None:
        """`SetSize(n)`: the tensor now covers n elements from the same address (its memory
        must hold them)."""
        n = int(size)
        core = state.core
        cap = core.chip.usable.get(self.mem, 0)
        if n < 0 or self.offset + n * self.dtype.itemsize > cap:
            file, line = user_location()
            raise KernelError(
                f"SetSize({n}): {n * self.dtype.itemsize} B from {self.mem.upper()}+{self.offset} is "
                f"outside {self.mem.upper()} ({cap} B)",
                file,
                line,
            )
        self.count = n
        if self.arr is not None and self.arr.size < n:
            self.arr = core.memory(self.mem)[self.offset : self.offset + n * self.dtype.itemsize].view(
                self.dtype
            )

    def GetPosition(self):
        return self.pos

    def GetPhyAddr(self) -> int:
        return self.offset

    def _index_error(self, what: str, i: int, is_write: bool):
        """GetValue/SetValue outside the tensor: tell the sanitizer, then stop at the user's line."""
        file, line = user_location()
        msg = f"{what}({i}) outside the LocalTensor ({self.count} elements)"
        _san_oob(self, i, 1, is_write, msg)
        raise KernelError(msg, file, line)

    def GetValue(self, i: int):
        if not 0 <= i < self.count:
            self._index_error("GetValue", i, False)
        core = state.core
        core.scalar(core.chip.scalar_value, "GetValue", sys._getframe(1))
        if core.san is not None:
            core.san.access(core, self, i, 1, False, sys._getframe(1))
        if self.arr is None:
            return self.dtype.type(1)  # shadow data: 1 keeps divisions finite
        core.run.read_data = True  # (a shared-HBM rerun reads shadows: npu/memory/shared_hbm.py)
        if core.lazy is not None:  # L1/L0 regions kept as lineage (lineage.py)
            core.lazy.settle()
        if self.mem == "l0c":  # Mmads into L0C are computed when read (mmad_numbers.py)
            flush_cube(core)
        return self.arr[i]

    def SetValue(self, i: int, value) -> None:
        if not 0 <= i < self.count:
            self._index_error("SetValue", i, True)
        core = state.core
        core.scalar(core.chip.scalar_value, "SetValue", sys._getframe(1))
        if core.san is not None:
            core.san.access(core, self, i, 1, True, sys._getframe(1))
        if self.arr is not None:
            if core.lazy is not None:
                core.lazy.settle()
            self.arr[i] = value

    def ReinterpretCast(self, dtype) -> LocalTensor:
        dt = as_dtype(dtype)
        nbytes = nbytes_of(self.dtype, self.count)
        arr = None
        if self.arr is not None:
            raw = self.arr[:nbytes] if is_int4(self.dtype) else self.arr[: self.count].view(np.uint8)
            arr = typed_view(raw[: nbytes - nbytes % dt.itemsize], dt)
        count = nbytes * 2 if is_int4(dt) else nbytes // dt.itemsize
        return LocalTensor(self.pos, self.mem, dt, self.offset, count, arr, self.slot)

    def numpy(self) -> np.ndarray | None:
        """The tensor's data (a copy), for DumpTensor and tests."""
        core = state.core
        if core is not None and core.lazy is not None:
            core.lazy.settle()
        if core is not None and core.trace is not None:  # data reaches the kernel's Python: a
            core.trace.bad = True  # block replay template's trace cannot stand for other blocks
        if self.arr is None:
            return None
        if core is not None:  # (a shared-HBM rerun reads shadows: npu/memory/shared_hbm.py)
            core.run.read_data = True
        return np.array(self.arr[: self.count])

    def __repr__(self) -> str:
        return (
            f"LocalTensor<{dtype_name(self.dtype)}>({self.pos.name}, {self.count} elems "
            f"@ {self.mem}+{self.offset})"
        )
