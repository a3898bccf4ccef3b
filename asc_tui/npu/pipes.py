"""The pipes of an AI Core: the emulator's lanes, by index and by name.

Every instruction record names its pipe by index (`Pipe` value); results, JSON and traces name
it by `PIPE_NAMES[index]`. The kernel API (`asc_tui.ascendc`) re-exports `Pipe` and its members
under their Ascend C spellings.
"""

from __future__ import annotations

from enum import IntEnum


class Pipe(IntEnum):
    """Hardware pipes of an AI Core. The integer is the emulator's lane index."""

    PIPE_S = 0
    PIPE_V = 1
    PIPE_M = 2
    PIPE_MTE1 = 3
    PIPE_MTE2 = 4
    PIPE_MTE3 = 5
    PIPE_FIX = 6
    PIPE_ALL = 7  # not a lane: "every pipe" (PipeBarrier)


#: Short lane names used in results, JSON and traces (index = Pipe value).
PIPE_NAMES = ("scalar", "vec", "cube", "mte1", "mte2", "mte3", "fixpipe")
#: Lanes per core timeline (PIPE_S .. PIPE_FIX).
N_PIPES = len(PIPE_NAMES)

#: The lanes as plain ints, for per-instruction code (an int constant is a cheaper index than
#: an IntEnum member).
S, V, M, MTE1, MTE2, MTE3, FIX = (int(p) for p in tuple(Pipe)[:N_PIPES])
