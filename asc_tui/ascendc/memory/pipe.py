"""TPipe and TBuf: local memory management, TPipe carving buffers out of the core's memories.

The queues it gives buffers to, with the events the real framework implies: queue.py.
"""

from __future__ import annotations

from ...npu import state
from ...npu.errors import KernelError, user_frame, user_location
from ..corestate import registers
from ..dtypes import as_dtype, dtype_name, nbytes_of, typed_view
from ..enums import POSITION_MEMORY, QUEUE_PIPES, TPosition
from .queue import Slot, TQue, name_in_frame, pool_of
from .tensors import LocalTensor


def _round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


class TPipe:
    """Owns the core's local memories; InitBuffer carves buffers out of them."""

    def __init__(self):
        self.core = state.core
        if self.core is None:
            raise RuntimeError("TPipe() must be created inside a kernel launched by asc-tui")
        self._queues: list = []
        self._event_ids: dict = {}
        registers(self.core)[3]["tpipe"] = self  # GetTPipePtr()

    def FetchEventID(self, event) -> int:
        """`FetchEventID(HardEvent)` / `AllocEventID<evt>()`: the lowest id of `event` not yet
        taken; running out is an error, as the hardware has `events.ids_per_type` of them."""
        taken = self._event_ids.setdefault(event, set())
        for i in range(self.core.chip.event_ids):
            if i not in taken:
                taken.add(i)
                return i
        file, line = user_location()
        raise KernelError(
            f"FetchEventID({getattr(event, 'name', event)}): all {self.core.chip.event_ids} event ids "
            "per event type are taken",
            file,
            line,
            hint="ReleaseEventID the ids you no longer use",
        )

    AllocEventID = FetchEventID

    def ReleaseEventID(self, event, event_id: int) -> None:
        self._event_ids.setdefault(event, set()).discard(int(event_id))

    def InitBuffer(self, que, num_or_len: int, length: int | None = None) -> None:
        core = self.core
        if isinstance(que, TBuf):
            nbuf, length = 1, int(num_or_len if length is None else length)
        else:
            if length is None:
                file, line = user_location()
                raise KernelError(
                    "InitBuffer(que, num, len) needs the number of buffers and their length in bytes",
                    file,
                    line,
                )
            nbuf, length = int(num_or_len), int(length)
        mem = POSITION_MEMORY[que.position]
        chip = core.chip
        align = max(chip.alignment.get(mem, 32), 32)
        per = _round_up(max(length, 0), align)
        used = core.allocated.get(mem, 0)
        cap = chip.usable.get(mem, 0)
        frame = user_frame()
        if nbuf < 1 or length <= 0:
            raise KernelError(
                f"InitBuffer with {nbuf} buffer(s) of {length} B: both must be positive",
                frame.f_code.co_filename,
                frame.f_lineno,
            )
        if used + nbuf * per > cap:
            name = name_in_frame(que, frame) or "the queue"
            raise KernelError(
                f"InitBuffer({name}, {nbuf}, {length}) needs {nbuf} x {per} B = {nbuf * per} B "
                f"of {mem.upper()} ({que.position.name}); {used} B are already taken and "
                f"{chip.name} has {cap} B ({cap - used} B left)",
                frame.f_code.co_filename,
                frame.f_lineno,
                hint="use smaller tiles or fewer buffers (BUFFER_NUM)",
            )
        if isinstance(que, TQue):
            pipes = QUEUE_PIPES.get(que.position)
            if pipes is not None:
                same = sum(len(q.slots) for q in self._queues if q.pipes == pipes) + nbuf
                if same > chip.event_ids:
                    raise KernelError(
                        f"{same} queue buffers now sync {pipes[0].name}→{pipes[1].name}, but "
                        f"{chip.name} has {chip.event_ids} event ids per event type",
                        frame.f_code.co_filename,
                        frame.f_lineno,
                        hint="fewer buffers per position (each TQue buffer holds an event id)",
                    )
            que._init(core, mem, [Slot(i, used + i * per, per) for i in range(nbuf)])
            self._queues.append(que)
        else:
            que._init(core, mem, used, per)
        core.allocated[mem] = used + nbuf * per
        peak = core.run.peak
        if peak.get(mem, 0) < used + nbuf * per:
            peak[mem] = used + nbuf * per

    def InitBufPool(self, pool, length: int, shared=None) -> None:
        """Reserve `length` bytes for a TBufPool (or share another pool's); `bufpool.py`."""
        pool_of(pool)._reserve(self, int(length), None if shared is None else pool_of(shared))

    def Destroy(self) -> None:
        for mem in list(self.core.allocated):
            self.core.allocated[mem] = 0
        self._queues.clear()

    def Reset(self) -> None:
        self.Destroy()


class TBuf:
    """`TBuf<pos>`: scratch memory without queue semantics (cannot be enqueued)."""

    def __init__(self, position: TPosition = TPosition.VECCALC):
        self.position = position
        self.core = None
        self.nbytes = 0

    def _init(self, core, mem: str, offset: int, nbytes: int) -> None:
        self.core = core
        self.mem = mem
        self.offset = offset
        self.nbytes = nbytes
        self._views: dict = {}

    def InitStartBufHandle(self, handle: int, num: int, length: int) -> None:
        """A custom pool (EXTERN_IMPL_BUFPOOL) starts this buffer; InitBufHandle places it."""

    def InitBufHandle(self, pool, index: int, handle: int, addr: int, length: int) -> None:
        ext = pool_of(pool)
        self._init(ext.pipe.core, ext.mem, int(addr), ext.place(int(handle), int(addr), int(length)))

    def Get(self, dtype, count: int | None = None) -> LocalTensor:
        if self.core is None:
            file, line = user_location()
            raise KernelError("TBuf.Get before pipe.InitBuffer gave it memory", file, line)
        dt = as_dtype(dtype)
        cap = self.nbytes // dt.itemsize
        n = cap if count is None else int(count)
        if n > cap:
            file, line = user_location()
            raise KernelError(
                f"TBuf.Get({dtype_name(dt)}, {n}) asks for {n * dt.itemsize} B but "
                f"the buffer has {self.nbytes} B",
                file,
                line,
            )
        key = (dt, n)
        t = self._views.get(key)
        if t is None:
            arr = None
            core = state.core
            if core.numeric:
                arr = typed_view(core.memory(self.mem)[self.offset : self.offset + nbytes_of(dt, n)], dt)
            t = self._views[key] = LocalTensor(self.position, self.mem, dt, self.offset, n, arr)
        return t

    def GetWithOffset(self, count: int, offset_bytes: int, dtype="uint8") -> LocalTensor:
        """A `count`-element tensor starting `offset_bytes` into the buffer."""
        dt = as_dtype(dtype)
        t = self.Get(dt)[offset_bytes // dt.itemsize]
        t.count = min(t.count, int(count))
        return t
