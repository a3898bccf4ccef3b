"""memcheck: out-of-bounds, misaligned addresses, use after FreeTensor, illegal free, leaks.

Bounds are enforced by the kernel API's guard rails (they stop the run); they call `oob` first so
the report carries tensor, offset, size and direction. Everything else is checked here, per
access: the tensor's buffer must not be free, and a local operand must start on its memory's
alignment (32 B in UB and L1, 512 B in L0A/L0B, 64 B in L0C — from the chip file). At the end of
each block, every queue buffer still allocated or enqueued is a leak. DataCopy lengths that
hardware silently rounds down arrive as run warnings and are reported by `debug.py`. A write
into one of the operator's inputs (`Sanitizer.watch_inputs`) is reported at its line: the golden
reads the inputs as they were, so the precision check fails it too.
"""

from __future__ import annotations

from ...ascendc.memory.queue import FREE, name_in_frame
from ...ascendc.memory.tensors import GlobalTensor
from .findings import Finding


def tensor_name(t, fr) -> str:
    """The user's variable name for a tensor, else its buffer name."""
    name = name_in_frame(t, fr)
    if name:
        return name
    if type(t) is GlobalTensor:
        return f"{t.name}_gm" if t.name else "global tensor"
    return "local tensor"


def memory_of(t) -> str:
    return "gm" if type(t) is GlobalTensor else t.mem


def byte_offset(t, start: int) -> int:
    """Offset of element `start` of `t` from the base of its memory (GM: of its buffer), bytes."""
    if type(t) is GlobalTensor:
        return (t.start + start) * t.dtype.itemsize
    return t.offset + start * t.dtype.itemsize


class MemCheck:
    tool = "memcheck"

    def __init__(self, san):
        self.san = san
        self.queues: dict[int, object] = {}  # id -> TQue seen this block
        self.alloc_at: dict[int, tuple[str, int]] = {}  # id(slot) -> (file, line)
        self.align: dict[str, int] = {}  # memory -> required operand alignment (bytes)

    def park(self):
        st, self.queues, self.alloc_at = (self.queues, self.alloc_at), {}, {}
        return st

    def resume(self, st) -> None:
        self.queues, self.alloc_at = st

    def access(self, core, t, start, count, is_write, fr, span=False) -> None:
        if type(t) is GlobalTensor:
            if is_write and t.buffer in self.san.inputs:
                name = self.san.inputs[t.buffer]
                self._report(
                    core,
                    "input-overwrite",
                    t,
                    start,
                    count,
                    True,
                    fr,
                    f"writes into input {name!r} of the operator; its golden reads {name} as it was "
                    "before the launch",
                )
            return
        slot = t.slot
        if slot is not None and slot.state is FREE:
            self._report(
                core,
                "use-after-free",
                t,
                start,
                count,
                is_write,
                fr,
                "the tensor's queue buffer was released by FreeTensor" + self._alloc_note(slot),
            )
        align = self.align.get(t.mem)
        if align is None:
            align = self.align[t.mem] = core.chip.alignment.get(t.mem, 32)
        if t.offset % align:
            self._report(
                core,
                "misaligned",
                t,
                start,
                count,
                is_write,
                fr,
                f"operand starts at {t.mem.upper()}+{t.offset}, not a multiple of {align} B",
            )

    def oob(self, core, t, first, count, is_write, fr, reason) -> None:
        self._report(core, "out-of-bounds", t, first, count, is_write, fr, reason)

    def queue(self, core, que, t, op, fr) -> None:
        slot = getattr(t, "slot", None)
        if op == "alloc":
            self.queues[id(que)] = que
            if slot is not None:
                self.alloc_at[id(slot)] = (fr.f_code.co_filename, fr.f_lineno)
        elif op == "free":
            if slot is None or getattr(slot, "owner", que) is not que:
                self._report(
                    core,
                    "illegal-free",
                    t,
                    0,
                    0,
                    True,
                    fr,
                    "FreeTensor of a tensor that was not allocated from this queue",
                )
            elif slot.state is FREE:
                self._report(
                    core,
                    "illegal-free",
                    t,
                    0,
                    0,
                    True,
                    fr,
                    "the tensor was already freed (double free)" + self._alloc_note(slot),
                )

    def end_block(self, core) -> None:
        for que in self.queues.values():
            for slot in que.slots:
                if slot.state is FREE:
                    continue
                file, line = self.alloc_at.get(id(slot), (None, slot.alloc_line))
                what = {
                    "allocated": "allocated but never freed",
                    "queued": "enqueued but never dequeued or freed",
                    "dequeued": "dequeued but never freed",
                }.get(slot.state, slot.state)
                self.san.report(
                    Finding(
                        self.tool,
                        "leak",
                        file,
                        line,
                        f"queue buffer {slot.index} ({slot.nbytes} B of {que.mem.upper()}) was "
                        f"{what} when the block ended",
                        block=core.block,
                        memory=que.mem,
                        offset=slot.offset,
                        size=slot.nbytes,
                    )
                )
        self.queues.clear()
        self.alloc_at.clear()

    def _alloc_note(self, slot) -> str:
        where = self.alloc_at.get(id(slot))
        return f" (allocated at line {where[1]})" if where else ""

    def _report(self, core, kind, t, start, count, is_write, fr, reason) -> None:
        isz = t.dtype.itemsize if t.dtype is not None else 1
        self.san.report(
            Finding(
                self.tool,
                kind,
                fr.f_code.co_filename,
                fr.f_lineno,
                reason,
                block=core.block,
                tensor=tensor_name(t, fr),
                memory=memory_of(t),
                offset=byte_offset(t, start),
                access="Write" if is_write else "Read",
                size=max(count, 0) * isz,
            )
        )
