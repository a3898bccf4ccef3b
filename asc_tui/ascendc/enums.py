"""Ascend C enumerations, with the members spelled as in the C++ headers.

Pipes and buffer positions are the emulator's own (`npu/pipes.py`, `npu/positions.py`); they
are re-exported here under their Ascend C names, with the queue and event pipe pairs built on
them.
"""

from __future__ import annotations

from enum import Enum

from ..npu.pipes import N_PIPES, PIPE_NAMES, Pipe  # noqa: F401 - re-exported
from ..npu.positions import POSITION_MEMORY, TPosition  # noqa: F401 - re-exported

pipe_t = Pipe
PIPE_S, PIPE_V, PIPE_M = Pipe.PIPE_S, Pipe.PIPE_V, Pipe.PIPE_M
PIPE_MTE1, PIPE_MTE2, PIPE_MTE3 = Pipe.PIPE_MTE1, Pipe.PIPE_MTE2, Pipe.PIPE_MTE3
PIPE_FIX, PIPE_ALL = Pipe.PIPE_FIX, Pipe.PIPE_ALL

QuePosition = TPosition

#: (producer pipe, consumer pipe) of a TQue at each position, as in kernel_event.h:
#: EnQue sets producer→consumer, DeQue waits it; FreeTensor sets consumer→producer,
#: and the next AllocTensor of that buffer waits it.
QUEUE_PIPES = {
    TPosition.VECIN: (Pipe.PIPE_MTE2, Pipe.PIPE_V),
    TPosition.VECOUT: (Pipe.PIPE_V, Pipe.PIPE_MTE3),
    TPosition.A1: (Pipe.PIPE_MTE2, Pipe.PIPE_MTE1),
    TPosition.B1: (Pipe.PIPE_MTE2, Pipe.PIPE_MTE1),
    TPosition.C1: (Pipe.PIPE_MTE2, Pipe.PIPE_MTE1),
    TPosition.A2: (Pipe.PIPE_MTE1, Pipe.PIPE_M),
    TPosition.B2: (Pipe.PIPE_MTE1, Pipe.PIPE_M),
    TPosition.C2: (Pipe.PIPE_MTE1, Pipe.PIPE_M),
    TPosition.CO1: (Pipe.PIPE_M, Pipe.PIPE_FIX),
    TPosition.CO2: (Pipe.PIPE_FIX, Pipe.PIPE_V),
}


class HardEvent(Enum):
    """Cross-pipe events: SetFlag on the first pipe, WaitFlag on the second (the dav-2201
    set of kernel_event.h; V_V and FIX_FIX order a pipe after itself)."""

    MTE2_V = (Pipe.PIPE_MTE2, Pipe.PIPE_V)
    V_MTE2 = (Pipe.PIPE_V, Pipe.PIPE_MTE2)
    MTE3_V = (Pipe.PIPE_MTE3, Pipe.PIPE_V)
    V_MTE3 = (Pipe.PIPE_V, Pipe.PIPE_MTE3)
    MTE2_MTE3 = (Pipe.PIPE_MTE2, Pipe.PIPE_MTE3)
    MTE3_MTE2 = (Pipe.PIPE_MTE3, Pipe.PIPE_MTE2)
    S_V = (Pipe.PIPE_S, Pipe.PIPE_V)
    V_S = (Pipe.PIPE_V, Pipe.PIPE_S)
    S_MTE2 = (Pipe.PIPE_S, Pipe.PIPE_MTE2)
    MTE2_S = (Pipe.PIPE_MTE2, Pipe.PIPE_S)
    S_MTE3 = (Pipe.PIPE_S, Pipe.PIPE_MTE3)
    MTE3_S = (Pipe.PIPE_MTE3, Pipe.PIPE_S)
    MTE2_MTE1 = (Pipe.PIPE_MTE2, Pipe.PIPE_MTE1)
    MTE1_MTE2 = (Pipe.PIPE_MTE1, Pipe.PIPE_MTE2)
    MTE1_M = (Pipe.PIPE_MTE1, Pipe.PIPE_M)
    M_MTE1 = (Pipe.PIPE_M, Pipe.PIPE_MTE1)
    M_FIX = (Pipe.PIPE_M, Pipe.PIPE_FIX)
    FIX_M = (Pipe.PIPE_FIX, Pipe.PIPE_M)
    M_V = (Pipe.PIPE_M, Pipe.PIPE_V)
    V_M = (Pipe.PIPE_V, Pipe.PIPE_M)
    FIX_MTE2 = (Pipe.PIPE_FIX, Pipe.PIPE_MTE2)
    MTE2_FIX = (Pipe.PIPE_MTE2, Pipe.PIPE_FIX)
    FIX_S = (Pipe.PIPE_FIX, Pipe.PIPE_S)
    S_FIX = (Pipe.PIPE_S, Pipe.PIPE_FIX)
    M_S = (Pipe.PIPE_M, Pipe.PIPE_S)
    S_M = (Pipe.PIPE_S, Pipe.PIPE_M)
    MTE1_S = (Pipe.PIPE_MTE1, Pipe.PIPE_S)
    MTE2_M = (Pipe.PIPE_MTE2, Pipe.PIPE_M)
    M_MTE2 = (Pipe.PIPE_M, Pipe.PIPE_MTE2)
    MTE1_V = (Pipe.PIPE_MTE1, Pipe.PIPE_V)
    V_MTE1 = (Pipe.PIPE_V, Pipe.PIPE_MTE1)
    MTE3_MTE1 = (Pipe.PIPE_MTE3, Pipe.PIPE_MTE1)
    MTE1_MTE3 = (Pipe.PIPE_MTE1, Pipe.PIPE_MTE3)
    FIX_MTE3 = (Pipe.PIPE_FIX, Pipe.PIPE_MTE3)
    MTE1_FIX = (Pipe.PIPE_MTE1, Pipe.PIPE_FIX)
    FIX_MTE1 = (Pipe.PIPE_FIX, Pipe.PIPE_MTE1)
    V_V = (Pipe.PIPE_V, Pipe.PIPE_V)
    FIX_FIX = (Pipe.PIPE_FIX, Pipe.PIPE_FIX)

    @property
    def src(self) -> Pipe:
        return self.value[0]

    @property
    def dst(self) -> Pipe:
        return self.value[1]


class RoundMode(Enum):
    CAST_NONE = "none"
    CAST_RINT = "rint"
    CAST_FLOOR = "floor"
    CAST_CEIL = "ceil"
    CAST_ROUND = "round"
    CAST_TRUNC = "trunc"
    CAST_ODD = "odd"


class CMPMODE(Enum):
    LT = "lt"
    GT = "gt"
    EQ = "eq"
    LE = "le"
    GE = "ge"
    NE = "ne"


class SELMODE(Enum):
    VSEL_CMPMASK_SPR = 0
    VSEL_TENSOR_SCALAR_MODE = 1
    VSEL_TENSOR_TENSOR_MODE = 2
