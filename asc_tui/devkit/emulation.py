"""The two speeds of emulation, one name each in the API, the JSON and the CLI flags.

*full*: numeric + timing (precision is checked). *timing-only*: shadow tensors, no arithmetic;
the same timeline, much faster. Requests carry it as `timing_only: bool` (flag `--timing-only`,
its opposite `--full`); results and JSON say `"emulation": "full" | "timing-only"`.
"""

from __future__ import annotations

import enum


class Emulation(enum.StrEnum):
    FULL = "full"
    TIMING_ONLY = "timing-only"

    @classmethod
    def of(cls, timing_only: bool) -> Emulation:
        return cls.TIMING_ONLY if timing_only else cls.FULL

    @classmethod
    def of_result(cls, em) -> Emulation:
        """The emulation an `EmulationResult` ran with (the emulator says "full" or "timing")."""
        return cls.FULL if em.mode == "full" else cls.TIMING_ONLY

    @property
    def timing_only(self) -> bool:
        return self is Emulation.TIMING_ONLY
