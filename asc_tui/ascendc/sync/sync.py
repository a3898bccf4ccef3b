"""SetFlag / WaitFlag / PipeBarrier: explicit ordering between pipes.

C++ `SetFlag<HardEvent::MTE2_V>(id)` and `PipeBarrier<PIPE_ALL>()` are spelled either with the
template argument first (`SetFlag(HardEvent.MTE2_V, id)`, `PipeBarrier(PIPE_ALL)`) or subscripted
(`SetFlag[HardEvent.MTE2_V](id)`, `PipeBarrier[PIPE_ALL]()`).
"""

from __future__ import annotations

import sys

from ...npu import state
from ...npu.errors import KernelError
from ..enums import HardEvent, Pipe


class _FlagOp:
    """Callable as `SetFlag(HardEvent.MTE2_V, id)` or `SetFlag[HardEvent.MTE2_V](id)`."""

    def __init__(self, name: str, is_set: bool):
        self.__name__ = name
        self._is_set = is_set

    def __call__(self, event: HardEvent, event_id: int = 0, _depth: int = 1) -> None:
        core = state.core
        fr = sys._getframe(_depth)
        if not isinstance(event, HardEvent):
            raise KernelError(
                f"{self.__name__} expects a HardEvent, got {event!r}", fr.f_code.co_filename, fr.f_lineno
            )
        core.check_event_id(event, event_id)
        src, dst = event.value
        key = (event, int(event_id))
        label = f"{self.__name__}({event.name}, {int(event_id)})"
        san = core.san
        if self._is_set:
            if san is not None:
                san.set_flag(core, key, fr)
            core.set_flag(key, int(src), label, fr)
        else:
            if san is not None:
                san.wait_flag(core, key, fr)
            core.wait_flag(key, int(dst), label, fr)

    def __getitem__(self, event: HardEvent):
        def bound(event_id: int = 0) -> None:
            self(event, event_id, _depth=2)

        return bound


SetFlag = _FlagOp("SetFlag", True)
WaitFlag = _FlagOp("WaitFlag", False)


class _Barrier:
    """`PipeBarrier(PIPE_V)` or `PipeBarrier[PIPE_V]()` (C++ `PipeBarrier<PIPE_V>()`)."""

    __name__ = "PipeBarrier"

    def __call__(self, pipe: Pipe = Pipe.PIPE_ALL, _depth: int = 1) -> None:
        """Order a pipe after its own earlier work (PIPE_ALL: after every pipe's)."""
        core = state.core
        fr = sys._getframe(_depth)
        p = None if Pipe(pipe) is Pipe.PIPE_ALL else int(pipe)
        core.barrier(p, fr)
        san = core.san
        if san is not None:
            san.barrier(core, p, fr)

    def __getitem__(self, pipe: Pipe):
        def bound() -> None:
            self(pipe, _depth=2)

        return bound


PipeBarrier = _Barrier()
