"""Roofline bound of one run: how close the operator came to the chip's compute or HBM limit.

Peaks come from the chip file, whole chip:

* vector: `aiv` cores × `[vector] repeat_bytes` / element size / `cycles_per_repeat.default`
  elements per cycle (one flop per element per instruction) × clock;
* cube: `aic` cores × 2 × `[cube] fp16_macs_per_cycle` (int8: `int8_macs_per_cycle`) × clock,
  used when the run has work on the cube pipe;
* memory: `[dma] hbm_gbps`.

roof_us = max(flops / peak_flops, bytes / peak_bandwidth); `fraction` = roof_us / task duration.
The bound is the larger of the two terms ("compute" or "memory"), except "latency": the run
reaches less than `LATENCY_FRACTION` of the roof *and* fixed costs (launch overhead plus the
per-instruction start-up of the busiest pipe on the slowest core) are at least
`LATENCY_FIXED_SHARE` of the task duration — neither more bandwidth nor more FLOPs would help,
fewer and larger instructions would.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from ...npu.chip import wave_cores
from ...npu.pipes import FIX, MTE1, MTE2, MTE3, N_PIPES, PIPE_NAMES, M, V

LATENCY_FRACTION = 0.25
LATENCY_FIXED_SHARE = 0.5

_DTYPE_BYTES = {
    "float16": 2,
    "half": 2,
    "bfloat16": 2,
    "float32": 4,
    "float": 4,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
}


class Bound(enum.StrEnum):
    COMPUTE = "compute"
    MEMORY = "memory"
    LATENCY = "latency"


class ComputeUnit(enum.StrEnum):
    VECTOR = "vector"
    CUBE = "cube"


@dataclass(frozen=True)
class Roofline:
    """The one roofline type (profile, bench and msprof imports); units in the field names."""

    bound: Bound
    fraction: float  # roof time / task duration (1.0 = at the chip's limit)
    unit: ComputeUnit  # which compute roof applies
    flops: float
    bytes: float
    intensity: float  # flops per byte
    peak_tflops: float
    peak_gbps: float
    ridge: float  # flops per byte where the two roofs meet
    compute_us: float  # flops / peak
    memory_us: float  # bytes / bandwidth
    fixed_us: float  # launch overhead + start-up costs on the critical pipe
    time_us: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def element_bytes(shapes: dict) -> int:
    """Element size of the operator's first tensor ("float16[262144]" → 2); 2 if unknown."""
    for desc in shapes.values():
        m = re.match(r"([a-z0-9_]+)", str(desc))
        if m and m.group(1) in _DTYPE_BYTES:
            return _DTYPE_BYTES[m.group(1)]
    return 2


def cube_flops_per_cycle(chip, elem_bytes: int = 2) -> float:
    """One AIC's cube peak per cycle: 2 × `[cube] fp16_macs_per_cycle` (int8 inputs:
    `int8_macs_per_cycle`). The one cube peak: profile, bench and tuner use it."""
    cube = chip.section("cube")
    key = "int8_macs_per_cycle" if elem_bytes == 1 else "fp16_macs_per_cycle"
    return 2.0 * float(cube.get(key, cube.get("fp16_macs_per_cycle", 4096)))


def vector_flops_per_cycle(chip, elem_bytes: int = 2) -> float:
    """One AIV's vector peak per cycle: one repeat of `repeat_bytes` per `default` cycles."""
    return chip.repeat_bytes / max(elem_bytes, 1) / chip.vec_cycles_per_repeat("default")


def cube_peak_flops(chip, elem_bytes: int = 2) -> float:
    """Whole-chip cube peak (FLOP/s): `aic` × `cube_flops_per_cycle` × clock."""
    return chip.aic * cube_flops_per_cycle(chip, elem_bytes) * (chip.clock_mhz * 1e6)


def vector_peak_flops(chip, elem_bytes: int = 2) -> float:
    """Whole-chip vector peak (FLOP/s): `aiv` × `vector_flops_per_cycle` × clock."""
    return chip.aiv * vector_flops_per_cycle(chip, elem_bytes) * (chip.clock_mhz * 1e6)


def peaks(chip, use_cube: bool, elem_bytes: int) -> tuple[float, float]:
    """(peak flops per second, peak bytes per second) of the whole chip."""
    flops = cube_peak_flops(chip, elem_bytes) if use_cube else vector_peak_flops(chip, elem_bytes)
    return flops, chip.hbm_gbps * 1e9


def fixed_cycles(result, chip, use_cube: bool, cores) -> float:
    """Start-up cycles of the busiest pipe on the slowest block (DMA latency, vector start-up).

    `cores`: the run's per-block profiles (`breakdown.core_profiles`), which already hold each
    block's per-pipe busy time and instruction count.
    """
    if not cores:
        return 0.0
    startup = [0.0] * N_PIPES
    startup[V] = chip.vec_startup
    startup[M] = float(chip.section("cube").get("startup_cycles", 0.0))
    n_cores = chip.aic if use_cube else chip.aiv
    b = max(cores, key=lambda c: c.cycles)  # the first of the slowest
    dma = chip.dma_latency_for(wave_cores(result.block_dim, b.wave, n_cores))
    startup[MTE1] = startup[MTE2] = startup[MTE3] = startup[FIX] = dma
    busy = [b.busy_us.get(PIPE_NAMES[p], 0.0) for p in range(1, N_PIPES)]
    busiest = busy.index(max(busy)) + 1  # scalar has no start-up model
    return float(b.instructions.get(PIPE_NAMES[busiest], 0) * startup[busiest])


def roofline(
    chip,
    flops: float,
    nbytes: float,
    time_us: float,
    *,
    use_cube: bool,
    elem_bytes: int = 2,
    fixed_us: float = 0.0,
) -> Roofline:
    """The roofline of a run of `flops` moving `nbytes` to/from HBM in `time_us` (task time);
    without `fixed_us` (unknown start-up costs) the bound is never "latency"."""
    peak_flops, peak_bw = peaks(chip, use_cube, elem_bytes)
    compute_us = flops / peak_flops * 1e6 if peak_flops > 0 else 0.0
    memory_us = nbytes / peak_bw * 1e6 if peak_bw > 0 else 0.0
    roof = max(compute_us, memory_us)
    fraction = roof / time_us if time_us > 0 else 0.0
    bound = Bound.COMPUTE if compute_us > memory_us else Bound.MEMORY
    if fraction < LATENCY_FRACTION and time_us > 0 and fixed_us / time_us >= LATENCY_FIXED_SHARE:
        bound = Bound.LATENCY
    return Roofline(
        bound=bound,
        fraction=fraction,
        unit=ComputeUnit.CUBE if use_cube else ComputeUnit.VECTOR,
        flops=flops,
        bytes=nbytes,
        intensity=flops / nbytes if nbytes else 0.0,
        peak_tflops=peak_flops / 1e12,
        peak_gbps=peak_bw / 1e9,
        ridge=peak_flops / peak_bw if peak_bw else 0.0,
        compute_us=compute_us,
        memory_us=memory_us,
        fixed_us=fixed_us,
        time_us=time_us,
    )


__all__ = [
    "Bound",
    "ComputeUnit",
    "Roofline",
    "roofline",
    "peaks",
    "cube_flops_per_cycle",
    "vector_flops_per_cycle",
    "cube_peak_flops",
    "vector_peak_flops",
    "fixed_cycles",
    "element_bytes",
    "PIPE_NAMES",
    "LATENCY_FRACTION",
    "LATENCY_FIXED_SHARE",
]
