"""Which cores a kernel runs on: vector cores (AIV), cube cores (AIC), or both together."""

from __future__ import annotations

from enum import StrEnum


class CoreType(StrEnum):
    """A kernel's core type (`@AscendC.kernel(core_type=...)`), and the kind of a sub-core of a
    mixed block. Members equal their strings, so "aiv" and CoreType.AIV are interchangeable."""

    AIV = "aiv"  # vector cores: the default
    AIC = "aic"  # cube cores
    MIX = "mix"  # 1 AIC + its AIVs per block, cooperatively (npu/mix.py)
