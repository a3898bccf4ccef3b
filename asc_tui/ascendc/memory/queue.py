"""TQue and its buffers (`Slot`): local tensors handed from a producer pipe to a consumer with
the events the real framework implies.

Per buffer of a TQue at position P with (producer, consumer) pipes from `QUEUE_PIPES`:
EnQue = SetFlag(producer→consumer), DeQue = WaitFlag on the consumer, FreeTensor =
SetFlag(consumer→producer), and the next AllocTensor of that buffer waits on the producer.
TPipe.InitBuffer gives a queue its buffers (pipe.py). Here too the two helpers the pipe and the
queues share: the name a kernel gave an object (for messages) and a custom pool's state.
"""

from __future__ import annotations

import sys
from collections import deque
from enum import StrEnum

from ...npu import state
from ...npu.errors import KernelError, user_frame
from ...npu.records import KIND_WAIT
from ..dtypes import as_dtype, is_int4, typed_view
from ..enums import QUEUE_PIPES, TPosition
from .tensors import LocalTensor


class SlotState(StrEnum):
    """Where a queue buffer is in its life cycle (compared by identity on the hot paths)."""

    FREE = "free"
    ALLOCATED = "allocated"
    QUEUED = "queued"
    DEQUEUED = "dequeued"


FREE, ALLOCATED, QUEUED, DEQUEUED = SlotState


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


#: The member EXTERN_IMPL_BUFPOOL adds to a user's pool class (cxx/source/preprocess.py expands it).
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

    # The L2 pre-pass (npu/memory/l2.py) runs the kernel only to count its GM reads; its timeline is
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
