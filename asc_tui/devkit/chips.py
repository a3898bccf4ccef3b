"""Chip models as the front ends see them: the bundled names, the default, and key figures.

Loading by name or by a user's TOML path is `load_chip` (errors name the file and line); the
front ends take chips from here, never from the emulator package. Import-light (no numpy).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..npu.chip import DEFAULT_CHIP, ChipModel, available_chips, load_chip

__all__ = [
    "ARCH_CHIPS",
    "ChipModel",
    "ChipSummary",
    "chip_name",
    "chip_names",
    "chip_summaries",
    "default_chip_name",
    "load_chip",
]

#: The chip model a sample's `SOC_VERSION` architecture runs on (an arch not here is out of scope).
ARCH_CHIPS = {"dav-2201": DEFAULT_CHIP}


@dataclass(frozen=True)
class ChipSummary:
    """The figures `asc-tui chips` lists (bytes, MHz, GB/s). `ub_bytes` is the UB a vector or
    cube kernel gets (all of it, as the profile's capacity line says); a mix kernel gets
    `ub_reserved` bytes less."""

    name: str
    clock_mhz: float
    aic: int
    aiv: int
    ub_bytes: int
    ub_reserved: int
    l1_bytes: int | None
    hbm_gbps: float
    path: str

    @classmethod
    def of(cls, chip: ChipModel) -> ChipSummary:
        return cls(
            chip.name,
            chip.clock_mhz,
            chip.aic,
            chip.aiv,
            chip.single_unit.usable["ub"],
            chip.single_unit.usable["ub"] - chip.usable["ub"],
            chip.memory.get("l1"),
            chip.hbm_gbps,
            chip.path,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def chip_names() -> list[str]:
    """The bundled chip models, sorted (a user's TOML path is accepted wherever a name is)."""
    return available_chips()


def default_chip_name() -> str:
    """The chip used when neither a flag nor the config names one."""
    return DEFAULT_CHIP


def chip_name(requested: str | None = None, *, arch: str | None = None) -> str:
    """The chip a run uses: the one asked for (flag, config, session), else the one of the
    sample's architecture `arch`, else the default. The one rule every front end and room asks."""
    return requested or ARCH_CHIPS.get(arch or "", None) or default_chip_name()


def chip_summaries() -> list[ChipSummary]:
    return [ChipSummary.of(load_chip(n)) for n in chip_names()]
