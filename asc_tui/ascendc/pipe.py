"""TPipe, TQue and TBuf: local memory management with the events the real framework implies.

Per buffer of a TQue at position P with (producer, consumer) pipes from `QUEUE_PIPES`:
EnQue = SetFlag(producer→consumer), DeQue = WaitFlag on the consumer, FreeTensor =
SetFlag(consumer→producer), and the next AllocTensor of that buffer waits on the producer.

Past 400 lines; the seam to split on: memory (TPipe carving buffers, TBuf) | queues (Slot and
TQue with their implied events).
"""

from __future__ import annotations

import sys
from collections import deque
from enum import StrEnum

from ..npu import state
from ..npu.errors import KernelError, user_frame, user_location
from ..npu.records import KIND_WAIT
from .corestate import registers
from .dtypes import as_dtype, dtype_name, is_int4, nbytes_of, typed_view
from .enums import POSITION_MEMORY, QUEUE_PIPES, TPosition
from .tensors import LocalTensor


class SlotState(StrEnum):
    """Where a queue buffer is in its life cycle (compared by identity on the hot paths)."""

    FREE = "free"
    ALLOCATED = "allocated"
    QUEUED = "queued"
    DEQUEUED = "dequeued"


FREE, ALLOCATED, QUEUED, DEQUEUED = SlotState


def _round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def name_in_frame(obj, frame) -> str | None:
    """Best-effort variable name of `obj` in the user's frame (locals or `self.` attributes)."""
    if frame is None:
        return None
    for k, v in frame.f_locals.items():
        if v is obj:
            return k
    me = frame.f_locals.get("self")
    if me is not None and hasattr(me, "__dict__"):
        for k, v in vars(me).items():
            if v is obj:
                return k
    return None


#: The member EXTERN_IMPL_BUFPOOL adds to a user's pool class (cxx/preprocess.py expands it).
EXTERN_FIELD = "ascExtBufPool_"


def pool_of(obj):
    """The pool state behind `obj`: a TBufPool, or a class EXTERN_IMPL_BUFPOOL made a pool
    (its ExternBufPool member, bufpool.py)."""
    return getattr(obj, EXTERN_FIELD, obj)


class Slot:
    """One buffer of a queue: its place in memory and where it is in its life cycle."""

    __slots__ = ("index", "offset", "nbytes", "state", "release", "link", "views", "alloc_line", "owner")

    def __init__(self, index: int, offset: int, nbytes: int):
        self.owner = None
        self.index = index
        self.offset = offset
        self.nbytes = nbytes
        self.state = FREE
        self.release = None  # time the last FreeTensor made it reusable (cycles)
        self.link = -1
        self.views: dict = {}
        self.alloc_line = None


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


class TQue:
    """`TQue<pos, depth>`: a FIFO of local tensors handed from a producer pipe to a consumer."""

    def __init__(self, position: TPosition, depth: int = 1):
        self.position = position
        self.depth = int(depth)
        self.pipes = QUEUE_PIPES.get(position)
        self.slots: list[Slot] = []
        self.fifo: deque = deque()
        self.core = None
        self._next = 0

    def _init(self, core, mem: str, slots: list[Slot]) -> None:
        self.core = core
        self.mem = mem
        self.slots = slots
        for slot in slots:
            slot.owner = self
        self.fifo = deque()
        self._next = 0
        if core.run.l2_record:  # the L2 pre-pass: the queue's tensors, not its timing
            self.AllocTensor, self.EnQue = self._alloc_counting, self._enque_counting
            self.DeQue, self.FreeTensor = self._deque_counting, self._free_counting

    # The L2 pre-pass (npu/l2.py) runs the kernel only to count its GM reads; its timeline is
    # never looked at and its errors are the real pass's to report. These keep what decides
    # which tensors (and so which GM reads) the kernel gets — slots in turn, the FIFO, dtype
    # views — without timing, sanitizer or line bookkeeping (1024³ matmul: 7.3 → 5.1 ms).

    def InitStartBufHandle(self, handle: int, num: int, length: int) -> None:
        """A custom pool (EXTERN_IMPL_BUFPOOL) starts this queue: `num` buffers of `length` B,
        placed one by one by InitBufHandle."""
        self._placing = [None] * int(num)

    def InitBufHandle(self, pool, index: int, handle: int, addr: int, length: int) -> None:
        ext, index = pool_of(pool), int(index)
        placing = getattr(self, "_placing", None)
        if placing is None or not 0 <= index < len(placing):
            ext._fail(f"InitBufHandle of buffer {index} without InitStartBufHandle for that many buffers")
        placing[index] = Slot(index, int(addr), ext.place(int(handle) + index, int(addr), int(length)))
        if all(s is not None for s in placing):
            self._init(ext.pipe.core, ext.mem, placing)
            ext.pipe._queues.append(self)
            self._placing = None

    def _alloc_counting(self, dtype) -> LocalTensor:
        slots = self.slots
        i = self._next
        slot = slots[i] if slots else None
        if slot is None or slot.state is not FREE:
            slot = self._free_slot()
            i = slot.index
        i += 1
        self._next = i if i < len(slots) else 0
        slot.state = ALLOCATED
        t = slot.views.get(dtype)
        if t is None:
            dt = as_dtype(dtype)
            t = slot.views[dtype] = LocalTensor(
                self.position, self.mem, dt, slot.offset, slot.nbytes // dt.itemsize, None, slot
            )
        return t

    def _enque_counting(self, tensor: LocalTensor) -> bool:
        tensor.slot.state = QUEUED
        self.fifo.append((tensor, 0.0, -1))
        return True

    def _deque_counting(self, dtype=None) -> LocalTensor:
        if not self.fifo:
            self._fail("DeQue on empty queue '{name}'")
        tensor = self.fifo.popleft()[0]
        tensor.slot.state = DEQUEUED
        if dtype is not None and dtype is not tensor.dtype and as_dtype(dtype) != tensor.dtype:
            return tensor.ReinterpretCast(dtype)
        return tensor

    def _free_counting(self, tensor: LocalTensor) -> None:
        tensor.slot.state = FREE

    def _fail(self, message: str, hint: str | None = None):
        frame = user_frame(3)
        name = name_in_frame(self, frame) or "queue"
        raise KernelError(message.format(name=name), frame.f_code.co_filename, frame.f_lineno, hint=hint)

    def AllocTensor(self, dtype) -> LocalTensor:
        slots = self.slots
        i = self._next
        slot = slots[i] if slots else None
        if slot is None or slot.state is not FREE:
            slot = self._free_slot()
            i = slot.index
        i += 1
        self._next = i if i < len(slots) else 0
        core = state.core
        fr = sys._getframe(1)
        slot.state = ALLOCATED
        slot.alloc_line = fr.f_lineno
        release = slot.release
        if release is not None:
            ts = core.ts = core.ts + core.issue
            tp = core.tp
            p = self.pipes[0]
            t = tp[p]
            ready = t if t > ts else ts
            if release > ready:  # core.wait_until inlined (hot): a wait record, as records.record
                file, link = fr.f_code.co_filename, slot.link
                core.rec.append((p, ready, release, "AllocTensor", file, fr.f_lineno, 0, KIND_WAIT, link))
                tp[p] = release
            else:
                tp[p] = ready
        t = slot.views.get(dtype)
        if t is None:
            dt = as_dtype(dtype)
            arr = None
            if core.numeric:
                m = core.memory(self.mem)
                arr = typed_view(m[slot.offset : slot.offset + slot.nbytes], dt)
            count = slot.nbytes * 2 if is_int4(dt) else slot.nbytes // dt.itemsize
            t = LocalTensor(self.position, self.mem, dt, slot.offset, count, arr, slot)
            slot.views[dtype] = t
        san = core.san
        if san is not None:
            san.queue(core, self, t, "alloc", fr)
        return t

    def _free_slot(self) -> Slot:
        """Slow path of AllocTensor: the next buffer in turn is busy; find one or fail."""
        slots = self.slots
        if not slots:
            self._fail("AllocTensor on '{name}' before pipe.InitBuffer gave it any buffer")
        for k in range(len(slots)):
            slot = slots[(self._next + k) % len(slots)]
            if slot.state is FREE:
                return slot
        lines = ", ".join(str(s.alloc_line) for s in slots)
        self._fail(
            f"AllocTensor on '{{name}}': all {len(slots)} buffer(s) are in use (allocated "
            f"at line(s) {lines}) and none was freed",
            "FreeTensor each tensor after its last use, or InitBuffer more buffers",
        )

    def EnQue(self, tensor: LocalTensor) -> bool:
        slot = tensor.slot
        if slot is None or slot.owner is not self:
            self._fail("EnQue on '{name}' of a tensor that was not allocated from it")
        if slot.state is not ALLOCATED:
            self._fail(f"EnQue on '{{name}}' of a tensor that is {slot.state}, not allocated")
        fifo = self.fifo
        if len(fifo) >= self.depth:
            self._fail(
                f"EnQue on '{{name}}': the queue already holds {len(fifo)} tensor(s) "
                f"and its depth is {self.depth}"
            )
        core = state.core
        prod = self.pipes[0] if self.pipes else 0
        slot.state = QUEUED
        t = core.tp[prod]
        ts = core.ts
        fifo.append((tensor, (t if t > ts else ts) + core.ev_lat, core.last[prod]))
        core.ts = ts + core.issue
        san = core.san
        if san is not None:
            san.queue(core, self, tensor, "enque", sys._getframe(1))
        return True

    def DeQue(self, dtype=None) -> LocalTensor:
        if not self.fifo:
            self._fail(
                "DeQue on empty queue '{name}': nothing was EnQue'd (or it was already DeQue'd)",
                "each DeQue needs an earlier EnQue on the same queue",
            )
        tensor, t_set, link = self.fifo.popleft()
        tensor.slot.state = DEQUEUED
        core = state.core
        ts = core.ts = core.ts + core.issue
        pipes = self.pipes
        if pipes:
            tp = core.tp
            p = pipes[1]
            t = tp[p]
            ready = t if t > ts else ts
            if t_set > ready:  # core.wait_until inlined (hot): a wait record, as records.record
                fr = sys._getframe(1)
                file = fr.f_code.co_filename
                core.rec.append((p, ready, t_set, "DeQue", file, fr.f_lineno, 0, KIND_WAIT, link))
                tp[p] = t_set
            else:
                tp[p] = ready
        san = core.san
        if san is not None:
            san.queue(core, self, tensor, "deque", sys._getframe(1))
        if dtype is not None and dtype is not tensor.dtype and as_dtype(dtype) != tensor.dtype:
            return tensor.ReinterpretCast(dtype)
        return tensor

    def FreeTensor(self, tensor: LocalTensor) -> None:
        core = state.core
        san = core.san
        if san is not None:  # before the guards: memcheck reports double/illegal frees
            san.queue(core, self, tensor, "free", sys._getframe(1))
        slot = tensor.slot
        if slot is None or slot.owner is not self:
            self._fail("FreeTensor on '{name}' of a tensor that does not belong to it")
        if slot.state is FREE:
            self._fail("FreeTensor on '{name}': the tensor was already freed (double free)")
        cons = self.pipes[1] if self.pipes else 0
        t = core.tp[cons]
        ts = core.ts
        slot.release = (t if t > ts else ts) + core.ev_lat
        slot.link = core.last[cons]
        slot.state = FREE
        core.ts = ts + core.issue

    def VacantInQue(self) -> bool:
        return len(self.fifo) < self.depth

    def HasTensorInQue(self) -> bool:
        return bool(self.fifo)

    def GetTensorCountInQue(self) -> int:
        return len(self.fifo)

    def __repr__(self) -> str:
        return f"TQue({self.position.name}, depth={self.depth}, buffers={len(self.slots)})"


class TQueBind(TQue):
    """`TQueBind<src, dst, depth>`: a queue whose producer and consumer come from two positions."""

    def __init__(self, src: TPosition, dst: TPosition, depth: int = 1):
        super().__init__(src, depth)
        a, b = QUEUE_PIPES.get(src), QUEUE_PIPES.get(dst)
        if a and b:
            self.pipes = (a[0], b[1])


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
