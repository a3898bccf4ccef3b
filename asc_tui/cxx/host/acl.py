"""The ACL runtime twin: what a sample's host `main()` calls, on the emulated NPU.

Host and device memory are byte buffers (`Buffer`); a pointer is a buffer, a byte offset and an
element type (`Ptr`). A kernel launch (`<<<blocks, 0, stream>>>`, `ACLRT_LAUNCH_KERNEL(k)(…)`)
reaches the emulator through the same path the loader's C++ operators use (`CxxKernel` +
`npu.launch`): device buffers become GM buffers, scalar arguments the launch's fields, template
arguments the translation's values. Every launch's EmulationResult is kept, in order.
`ReadFile`/`WriteFile` stand for the samples' `data_utils.h`. Every mistake (a missing file,
a double free, too many blocks) is a `CxxError` naming the host line (`where`).
"""

from __future__ import annotations

import io
import itertools
import math
import operator
import os
from dataclasses import dataclass, field

import numpy as np

from ...npu.memory import gm as _gm
from ...npu.memory.gm import GM_ADDR, GmBuffer
from ..errors import CxxError

#: ACL's limit on a launch's block count (aclrtLaunchKernel: blockDim ≤ 65535).
MAX_BLOCKS = 65535
_ADDRESS_BASE = 0x12C0_0000_0000  # where device addresses start (an address a kernel may read)
_ADDRESSES = itertools.count()

CONSTANTS = {
    "ACL_SUCCESS": 0,
    "ACL_MEMCPY_HOST_TO_HOST": 0,
    "ACL_MEMCPY_HOST_TO_DEVICE": 1,
    "ACL_MEMCPY_DEVICE_TO_HOST": 2,
    "ACL_MEMCPY_DEVICE_TO_DEVICE": 3,
    "ACL_MEMCPY_DEFAULT": 4,
    "ACL_MEM_MALLOC_HUGE_FIRST": 0,
    "ACL_MEM_MALLOC_HUGE_ONLY": 1,
    "ACL_MEM_MALLOC_NORMAL_ONLY": 2,
    "ACL_MEM_MALLOC_HUGE_FIRST_P2P": 3,
    "ACL_ERROR_NONE": 0,
}
_KINDS = {0: "HOST_TO_HOST", 1: "HOST_TO_DEVICE", 2: "DEVICE_TO_HOST", 3: "DEVICE_TO_DEVICE", 4: "DEFAULT"}


class Buffer:
    """One allocation: host (`aclrtMallocHost`, `malloc`) or device (`aclrtMalloc`)."""

    def __init__(self, name: str, nbytes: int, device: bool, where):
        self.name = name
        self.data = np.zeros(int(nbytes), np.uint8)
        self.device = device
        self.freed = None  # where it was freed
        self.where = where
        self.gm = GmBuffer(name, np.uint8, int(nbytes), self.data) if device else None


@dataclass(frozen=True)
class Ptr:
    """A host-side pointer value: buffer + byte offset, typed by its element (numpy dtype)."""

    buf: Buffer
    off: int = 0
    elem: np.dtype = field(default_factory=lambda: np.dtype(np.uint8))

    def moved(self, n: int) -> Ptr:
        return Ptr(self.buf, self.off + int(n) * self.elem.itemsize, self.elem)

    def cast(self, elem) -> Ptr:
        return Ptr(self.buf, self.off, np.dtype(elem))

    def view(self, count: int | None = None) -> np.ndarray:
        raw = self.buf.data[self.off :]
        n = len(raw) // self.elem.itemsize if count is None else int(count)
        return raw[: n * self.elem.itemsize].view(self.elem)

    def get(self, i: int):
        return self.view()[int(i)].item()

    def set(self, i: int, value) -> None:
        whole = None
        if self.elem.kind in "iu" and isinstance(value, (float, np.floating)):
            whole = int(value) if math.isfinite(value) else 0  # C truncates toward zero
        elif self.elem.kind in "iu" and hasattr(value, "__index__"):  # C: modulo 2^bits
            try:
                whole = operator.index(value)
            except TypeError:  # (numpy's bool has an __index__ that refuses)
                whole = None
        if whole is not None:
            bits = self.elem.itemsize * 8
            value = whole % (1 << bits)
            if self.elem.kind == "i" and value >= 1 << (bits - 1):
                value -= 1 << bits
        self.view()[int(i)] = value


class Stream:
    def __init__(self, n: int):
        self.n = n
        self.destroyed = False


@dataclass
class Launch:
    """One kernel launch of the host program: where, what, and what the emulator made of it."""

    kernel: str
    file: str
    line: int
    blocks: int
    result: object  # EmulationResult


class AclRuntime:
    """The state one run of a host program touches: buffers, streams, launches, its stdout."""

    def __init__(self, chip, numeric=True, timeout_s=None, launcher=None, max_blocks=MAX_BLOCKS):
        self.chip = chip
        self.numeric = numeric
        self.timeout_s = timeout_s
        self.launcher = launcher  # (kernel, gm_args, fields, blocks) -> EmulationResult
        self.max_blocks = max_blocks
        self.launches: list[Launch] = []
        self.out = io.StringIO()
        self.streams = 0
        self.n_alloc = 0
        self.device = None
        self.addresses: dict[int, int] = {}  # id(Buffer) -> its device address
        #: (path, where) -> None, called before WriteFile writes: the sample runner puts aside
        #: a file that gen_data.py wrote (devkit/pristine.SampleFiles)
        self.before_write = None

    def address_of(self, p: Ptr) -> int:
        """The numeric address of a pointer (`(uintptr_t)p`): buffers 4 GiB apart; a device
        buffer is placed so a kernel reading the number back finds it (npu/memory/gm.py)."""
        base = self.addresses.get(id(p.buf))
        if base is None:
            base = self.addresses[id(p.buf)] = _ADDRESS_BASE + (next(_ADDRESSES) << 32)
            if p.buf.device:
                _gm.PLACED[base] = p.buf.gm
        return base + p.off

    def release_addresses(self) -> None:
        """The run is over: its buffers are no longer reachable by address."""
        for base in self.addresses.values():
            _gm.PLACED.pop(base, None)
        self.addresses.clear()

    # -- errors ---------------------------------------------------------------
    @staticmethod
    def fail(where, message: str, hint: str | None = None):
        file, line, col = where
        raise CxxError(message, file, line, col, hint=hint)

    # -- memory ---------------------------------------------------------------
    def alloc(self, where, ref, size, device: bool, label: str):
        self.n_alloc += 1
        name = f"{'dev' if device else 'host'}{self.n_alloc}"
        if ref is not None and hasattr(ref, "name"):
            name = ref.name
        if int(size) < 0:
            self.fail(where, f"{label} of a negative size ({size})")
        buf = Buffer(name, int(size), device, where)
        if ref is None:
            return Ptr(buf)
        ref.set(Ptr(buf))
        return 0

    def check_live(self, where, p, what: str) -> Ptr:
        if not isinstance(p, Ptr):
            self.fail(where, f"{what}: not a pointer from aclrtMalloc/aclrtMallocHost ({_show(p)})")
        if p.buf.freed is not None:
            f, ln, _c = p.buf.freed
            self.fail(where, f"{what}: buffer {p.buf.name!r} was already freed at {os.path.basename(f)}:{ln}")
        return p

    def free(self, where, p, device: bool, label: str):
        if p is None:
            return 0
        p = self.check_live(where, p, label)
        if p.buf.device != device:
            kind = "device" if p.buf.device else "host"
            self.fail(where, f"{label} of a {kind} buffer ({p.buf.name!r})")
        p.buf.freed = where
        base = self.addresses.pop(id(p.buf), None)
        if base is not None:
            _gm.PLACED.pop(base, None)
        return 0

    def memcpy(self, where, dst, dst_max, src, count, kind):
        dst = self.check_live(where, dst, "aclrtMemcpy destination")
        src = self.check_live(where, src, "aclrtMemcpy source")
        count, dst_max = int(count), int(dst_max)
        if count > dst_max:
            self.fail(where, f"aclrtMemcpy of {count} bytes into a destination of {dst_max}")
        want = {1: (False, True), 2: (True, False), 3: (True, True), 0: (False, False)}.get(int(kind))
        if want is not None and (src.buf.device, dst.buf.device) != want:
            self.fail(
                where,
                f"aclrtMemcpy kind ACL_MEMCPY_{_KINDS.get(int(kind))} does not match the buffers "
                f"({'device' if src.buf.device else 'host'} → {'device' if dst.buf.device else 'host'})",
            )
        for p, what in ((src, "source"), (dst, "destination")):
            if p.off + count > len(p.buf.data):
                self.fail(
                    where,
                    f"aclrtMemcpy {what} {p.buf.name!r}: {count} bytes from offset {p.off} overrun its "
                    f"{len(p.buf.data)} bytes",
                )
        dst.buf.data[dst.off : dst.off + count] = src.buf.data[src.off : src.off + count]
        return 0

    def memset(self, where, dst, dst_max, value, count):
        dst = self.check_live(where, dst, "aclrtMemset")
        count = int(count)
        if dst.off + count > len(dst.buf.data) or count > int(dst_max):
            self.fail(where, f"aclrtMemset of {count} bytes overruns {dst.buf.name!r}")
        dst.buf.data[dst.off : dst.off + count] = int(value) & 0xFF
        return 0

    # -- files (data_utils.h) -------------------------------------------------
    def read_file(self, where, path, size, ptr, buf_size):
        ptr = self.check_live(where, ptr, "ReadFile buffer")
        if not os.path.isfile(path):
            self.fail(
                where,
                f"ReadFile: no file {path!r} (in {os.getcwd()})",
                hint="scripts/gen_data.py writes the inputs; check its file names",
            )
        raw = np.fromfile(path, np.uint8)
        want = int(size.get() if hasattr(size, "get") else size)
        if len(raw) > int(buf_size):
            self.fail(where, f"ReadFile: {path} has {len(raw)} bytes, more than the buffer's {int(buf_size)}")
        if 0 < want < len(raw):
            self.fail(
                where,
                f"ReadFile: {path} has {len(raw)} bytes, main() expects {want}",
                hint="gen_data.py and main() disagree on the shape or the dtype",
            )
        if ptr.off + len(raw) > len(ptr.buf.data):
            self.fail(
                where,
                f"ReadFile: {path}'s {len(raw)} bytes from offset {ptr.off} overrun {ptr.buf.name!r} "
                f"({len(ptr.buf.data)} bytes)",
            )
        ptr.buf.data[ptr.off : ptr.off + len(raw)] = raw
        if hasattr(size, "set"):
            size.set(len(raw))
        return True

    def write_file(self, where, path, ptr, size):
        ptr = self.check_live(where, ptr, "WriteFile buffer")
        d = os.path.dirname(path)
        if d and not os.path.isdir(d):
            self.fail(where, f"WriteFile: no directory {d!r} for {path!r}")
        if ptr.off + int(size) > len(ptr.buf.data):
            self.fail(
                where,
                f"WriteFile of {int(size)} bytes from offset {ptr.off} overruns {ptr.buf.name!r} "
                f"({len(ptr.buf.data)} bytes)",
            )
        if self.before_write is not None:
            self.before_write(path, where)
        ptr.buf.data[ptr.off : ptr.off + int(size)].tofile(path)
        return True

    # -- launches -------------------------------------------------------------
    def launch(self, where, kernel: str, blocks, args: list, run):
        blocks = int(blocks)
        if blocks < 1:
            self.fail(where, f"launch of {kernel} with {blocks} blocks (at least 1)")
        if blocks > self.max_blocks:
            self.fail(
                where,
                f"launch of {kernel} with {blocks} blocks: the chip takes at most {self.max_blocks}",
            )
        gm = []
        for a in args:
            if isinstance(a, Ptr):
                self.check_live(where, a, f"{kernel} argument")
                if not a.buf.device:
                    self.fail(
                        where,
                        f"{kernel} gets host buffer {a.buf.name!r}; kernels take device memory (aclrtMalloc)",
                    )
                gm.append(GM_ADDR(a.buf.gm, a.off))
            else:
                gm.append(a)
        result = run(gm, blocks)
        self.launches.append(Launch(kernel, where[0], where[1], blocks, result))
        return 0


def _show(v) -> str:
    return "nullptr" if v is None else type(v).__name__
