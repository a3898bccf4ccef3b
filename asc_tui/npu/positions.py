"""Logical buffer positions and the physical memory of the core each one lives in.

Memories are named as the chip file's [memory] keys ("ub", "l1", "l0a", "l0b", "l0c", "bt").
The kernel API (`asc_tui.ascendc`) re-exports `TPosition` (and its alias `QuePosition`).
"""

from __future__ import annotations

from enum import Enum


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
    C2PIPE2GM = "C2PIPE2GM"  # the fixpipe buffer: per-column quantisation words


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
    TPosition.C2PIPE2GM: "fb",
}
