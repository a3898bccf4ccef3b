"""Advice from documented rules: each rule reads a few measured facts and fires past a threshold.

The thresholds are module constants so the docs, the tests and the output quote the same
numbers. A rule whose facts are missing (e.g. overlap in an imported msprof directory) is
skipped, never guessed.

| rule                | fires when                                                          |
|---------------------|---------------------------------------------------------------------|
| serial_copy_compute | overlap < OVERLAP_MIN and the copy-in pipe (MTE2/MTE1) is blocked    |
|                     | ≥ PRODUCER_WAIT_MIN of the time (waiting for the only buffer)        |
| small_dma           | DMA instructions average < SMALL_DMA_BYTES and their fixed latency   |
|                     | is ≥ DMA_FIXED_SHARE of the DMA pipes' busy time                     |
| idle_cores          | fewer than IDLE_CORES_MAX_USE of the chip's cores are used           |
| tail_imbalance      | the slowest core takes ≥ BALANCE_MAX × the mean, or the last wave    |
|                     | fills < TAIL_WAVE_MIN of the cores                                   |
| low_cube            | the run uses the cube and its utilisation is < CUBE_UTIL_MIN         |
| memory_bound        | the roofline bound is memory and the run reaches ≥ ROOF_NEAR of it   |
| capacity_headroom   | a local memory is < HEADROOM_LOW used while DMA or buffering rules   |
|                     | fired (room for bigger tiles / more buffers), or ≥ CAPACITY_FULL     |
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ..text import size_text

OVERLAP_MIN = 0.5
PRODUCER_WAIT_MIN = 0.05
SMALL_DMA_BYTES = 16 * 1024
DMA_FIXED_SHARE = 0.3
IDLE_CORES_MAX_USE = 0.5
BALANCE_MAX = 1.15
TAIL_WAVE_MIN = 0.5
CUBE_UTIL_MIN = 0.7
ROOF_NEAR = 0.7
HEADROOM_LOW = 0.25
CAPACITY_FULL = 0.95

THRESHOLDS = {k: v for k, v in globals().items() if k.isupper() and isinstance(v, (int, float))}


class Severity(enum.StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    INFO = "info"


@dataclass(frozen=True)
class Advice:
    rule: str
    severity: Severity
    message: str
    threshold: str
    evidence: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "threshold": self.threshold,
            "evidence": dict(self.evidence),
        }


@dataclass(frozen=True)
class Facts:
    """What the rules look at; None = not measured."""

    utilisation: dict
    wait_ratios: dict
    overlap: float | None
    cores_used: int
    chip_cores: int | None
    core_kind: str  # "AIV" or "AIC"
    waves: int
    last_wave_cores: int
    balance: float | None
    dma_mean_bytes: float | None
    dma_fixed_share: float | None
    uses_cube: bool
    bound: str | None
    roof_fraction: float | None
    capacity: dict  # memory -> (peak bytes, capacity bytes)
    kernel_us: float
    launch_overhead_us: float


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def advise(f: Facts) -> tuple[Advice, ...]:
    """Every rule that fires on the facts, in a fixed order; the capacity notes come last, as they
    depend on whether a tiling rule fired."""
    out = [a for rule in _RULES if (a := rule(f)) is not None]
    tiling_rules = {a.rule for a in out} & {"serial_copy_compute", "small_dma"}
    out += _capacity_headroom(f, tiling_rules)
    return tuple(out)


def _serial_copy_compute(f: Facts) -> Advice | None:
    """Copy and compute do not overlap while the producer waits for buffers: double buffering."""
    producer = max(f.wait_ratios.get("mte2", 0.0), f.wait_ratios.get("mte1", 0.0))
    producer_pipe = "MTE2" if f.wait_ratios.get("mte2", 0.0) >= f.wait_ratios.get("mte1", 0.0) else "MTE1"
    consumer = "cube" if f.uses_cube else "vector"
    if f.overlap is not None and f.overlap < OVERLAP_MIN and producer >= PRODUCER_WAIT_MIN:
        return Advice(
            "serial_copy_compute",
            Severity.HIGH,
            f"copy and compute run one after the other (overlap {_pct(f.overlap)}): "
            f"{producer_pipe} waits {_pct(producer)} of the time for the {consumer} unit to free "
            f"its buffer, and the {consumer} unit waits {_pct(f.wait_ratios.get(_vc(f), 0.0))} "
            "for data — use BUFFER_NUM=2 (double buffering) so the next tile loads while this "
            "one computes",
            f"overlap < {_pct(OVERLAP_MIN)} and {producer_pipe} blocked ≥ {_pct(PRODUCER_WAIT_MIN)}",
            {"overlap": f.overlap, "producer_wait_ratio": producer},
        )
    return None


def _small_dma(f: Facts) -> Advice | None:
    """Small DMA instructions dominated by their fixed latency: bigger tiles."""
    if (
        f.dma_mean_bytes is not None
        and f.dma_fixed_share is not None
        and f.dma_mean_bytes < SMALL_DMA_BYTES
        and f.dma_fixed_share >= DMA_FIXED_SHARE
    ):
        return Advice(
            "small_dma",
            Severity.MEDIUM,
            f"DMA instructions move {size_text(f.dma_mean_bytes)} on average and "
            f"{_pct(f.dma_fixed_share)} of the DMA time is per-instruction latency — use "
            "bigger tiles (fewer, larger DataCopy calls)",
            f"mean DMA < {size_text(SMALL_DMA_BYTES)} and fixed latency ≥ "
            f"{_pct(DMA_FIXED_SHARE)} of DMA time",
            {"mean_bytes": f.dma_mean_bytes, "fixed_share": f.dma_fixed_share},
        )
    return None


def _idle_cores(f: Facts) -> Advice | None:
    """Too few of the chip's cores are used: a larger block_dim."""
    if f.chip_cores and f.cores_used < IDLE_CORES_MAX_USE * f.chip_cores:
        return Advice(
            "idle_cores",
            Severity.MEDIUM,
            f"only {f.cores_used} of {f.chip_cores} {f.core_kind} cores are busy — raise "
            f"block_dim (e.g. {f.chip_cores}) and split the data across them",
            f"cores used < {_pct(IDLE_CORES_MAX_USE)} of the chip's",
            {"cores_used": f.cores_used, "chip_cores": f.chip_cores},
        )
    return None


def _tail_imbalance(f: Facts) -> Advice | None:
    """A short last wave or one slow core: an even split of the work."""
    tail = f.waves > 1 and f.chip_cores and f.last_wave_cores < TAIL_WAVE_MIN * f.chip_cores
    if tail or (f.balance is not None and f.balance >= BALANCE_MAX):
        why = (
            f"the last of {f.waves} waves runs on {f.last_wave_cores} of {f.chip_cores} cores"
            if tail
            else f"the slowest core takes {f.balance:.2f}× the mean"
        )
        return Advice(
            "tail_imbalance",
            Severity.MEDIUM,
            f"{why} — make block_dim a multiple of the core count and split the work evenly "
            "(give the remainder to several blocks, not one)",
            f"slowest/mean ≥ {BALANCE_MAX} or last wave < {_pct(TAIL_WAVE_MIN)} of the cores",
            {"balance": f.balance, "waves": f.waves, "last_wave_cores": f.last_wave_cores},
        )
    return None


def _low_cube(f: Facts) -> Advice | None:
    """The matrix unit idles in a cube kernel: a better tiling."""
    cube = f.utilisation.get("cube", 0.0)
    if f.uses_cube and cube < CUBE_UTIL_MIN:
        return Advice(
            "low_cube",
            Severity.HIGH,
            f"the matrix unit is busy only {_pct(cube)} of the time — fix the tiling "
            "(larger tile_m/tile_n/tile_k, keep L0A/L0B fed by MTE1 while the cube runs)",
            f"cube utilisation < {_pct(CUBE_UTIL_MIN)}",
            {"cube_utilisation": cube},
        )
    return None


def _memory_bound(f: Facts) -> Advice | None:
    """At the HBM roof: only moving fewer bytes helps."""
    if f.bound == "memory" and f.roof_fraction is not None and f.roof_fraction >= ROOF_NEAR:
        return Advice(
            "memory_bound",
            Severity.INFO,
            f"the run reaches {_pct(f.roof_fraction)} of the HBM roof — nothing is left but "
            "moving fewer bytes (fuse with neighbours, lower precision, avoid re-reads)",
            f"memory bound and ≥ {_pct(ROOF_NEAR)} of the roof",
            {"roof_fraction": f.roof_fraction},
        )
    return None


#: The rules `advise` applies, in the order their advice is listed.
_RULES = (_serial_copy_compute, _small_dma, _idle_cores, _tail_imbalance, _low_cube, _memory_bound)


def _capacity_headroom(f: Facts, tiling_rules: set[str]) -> list[Advice]:
    """Per on-chip memory: room for bigger tiles (when a tiling rule fired), or no room left."""
    out: list[Advice] = []
    for mem, (used, cap) in sorted(f.capacity.items()):
        if not cap or not used:
            continue
        share = used / cap
        if share < HEADROOM_LOW and tiling_rules:
            out.append(
                Advice(
                    "capacity_headroom",
                    Severity.INFO,
                    f"{mem.upper()} is only {_pct(share)} used ({size_text(used)} of {size_text(cap)}): "
                    "there is room for bigger tiles or more buffers",
                    f"{mem.upper()} use < {_pct(HEADROOM_LOW)}",
                    {"memory": mem, "used": used, "capacity": cap},
                )
            )
        elif share >= CAPACITY_FULL:
            out.append(
                Advice(
                    "capacity_headroom",
                    Severity.INFO,
                    f"{mem.upper()} is {_pct(share)} full ({size_text(used)} of {size_text(cap)}): "
                    "no room for bigger tiles or double buffering without freeing space",
                    f"{mem.upper()} use ≥ {_pct(CAPACITY_FULL)}",
                    {"memory": mem, "used": used, "capacity": cap},
                )
            )
    return out


def _vc(f: Facts) -> str:
    return "cube" if f.uses_cube else "vec"
