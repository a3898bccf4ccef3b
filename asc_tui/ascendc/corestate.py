"""Per-core state of the kernel API that the hardware keeps in special registers.

`core.vmask` (a slot of the emulator's Core) holds, created on first use:
[mask mode, mask register, CMPMASK bytes, extras]. The extras dict keeps the last reduce results
(`GetReduceRepeatSumSpr`), the pad value (`SetPadValue`), MrgSort's per-list counts and the
current TPipe (`GetTPipePtr`). `InitSocState` resets it. Its own module so that `pipe.py`,
`datacopy.py` and the level-0 modules share it without importing each other.
"""

from __future__ import annotations

from enum import Enum

import numpy as np


class MaskMode(Enum):
    NORMAL = 0
    COUNTER = 1


def registers(core) -> list:
    """The core's vector special registers: [mask mode, mask, CMPMASK bytes, reduce results]."""
    m = core.vmask
    if m is None:
        m = core.vmask = [MaskMode.NORMAL, (2**64 - 1, 2**64 - 1), np.zeros(16, np.uint8), {}]
    return m
