"""Ascend C enumerations, with the members spelled as in the C++ headers."""

from __future__ import annotations

from enum import Enum, IntEnum


class Pipe(IntEnum):
    """Hardware pipes of an AI Core. The integer is the emulator's lane index."""

    PIPE_S = 0
    PIPE_V = 1
    PIPE_M = 2
    PIPE_MTE1 = 3
    PIPE_MTE2 = 4
    PIPE_MTE3 = 5
    PIPE_FIX = 6
    PIPE_ALL = 7


pipe_t = Pipe
PIPE_S, PIPE_V, PIPE_M = Pipe.PIPE_S, Pipe.PIPE_V, Pipe.PIPE_M
PIPE_MTE1, PIPE_MTE2, PIPE_MTE3 = Pipe.PIPE_MTE1, Pipe.PIPE_MTE2, Pipe.PIPE_MTE3
PIPE_FIX, PIPE_ALL = Pipe.PIPE_FIX, Pipe.PIPE_ALL

#: Short lane names used in results, JSON and traces (index = Pipe value).
PIPE_NAMES = ("scalar", "vec", "cube", "mte1", "mte2", "mte3", "fixpipe")
N_PIPES = len(PIPE_NAMES)


class TPosition(Enum):
    """Logical buffer positions; each lives in one physical memory of the core."""

    GM = "GM"
    VECIN = "VECIN"
    VECOUT = "VECOUT"
    VECCALC = "VECCALC"
    A1 = "A1"
    B1 = "B1"
    C1 = "C1"
    A2 = "A2"
    B2 = "B2"
    C2 = "C2"
    CO1 = "CO1"
    CO2 = "CO2"


QuePosition = TPosition

#: Physical memory of each position (names match the chip file's [memory] keys).
POSITION_MEMORY = {
    TPosition.VECIN: "ub",
    TPosition.VECOUT: "ub",
    TPosition.VECCALC: "ub",
    TPosition.CO2: "ub",
    TPosition.A1: "l1",
    TPosition.B1: "l1",
    TPosition.C1: "l1",
    TPosition.A2: "l0a",
    TPosition.B2: "l0b",
    TPosition.C2: "bt",
    TPosition.CO1: "l0c",
}

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
    """Cross-pipe events: SetFlag on the first pipe, WaitFlag on the second."""

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
