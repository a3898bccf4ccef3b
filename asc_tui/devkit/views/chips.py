"""The chip models a user can pick, and the one used when none is named (front ends ask here,
not the emulator)."""

from __future__ import annotations

from ...npu.chip import DEFAULT_CHIP, available_chips


def chip_names() -> list[str]:
    """Every chip model shipped with the emulator, by name, sorted."""
    return available_chips()


def default_chip() -> str:
    return DEFAULT_CHIP
