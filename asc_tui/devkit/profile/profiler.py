"""`profile(report) -> Profile`: breakdown, bottleneck, roofline, pipeline report, hot lines.

A pure function of a finished run (RunReport or EmulationResult): nothing is re-emulated, so the
TUI can call it on every result. `Profile` is also what `msprof.read_dir` builds from a msprof
op output directory (real hardware), with the figures that tool does not measure left as None.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from statistics import fmean

from ...npu.chip import wave_cores
from ...npu.pipes import PIPE_NAMES
from ...npu.results import EmulationResult
from ..emulation import Emulation
from . import advice as rules
from .breakdown import (
    CATEGORIES,
    BreakdownItem,
    Columns,
    CoreProfile,
    PipeTotals,
    breakdown_items,
    breakdown_times,
    columns,
    core_profiles,
    pipe_totals,
    uses_cube,
)
from .hotlines import HotLine, hot_lines
from .roofline import Roofline, element_bytes, fixed_cycles, roofline

MTE2, MTE3 = 4, 5


@dataclass(frozen=True)
class CoreBalance:
    """Per-core load: the slowest core against the mean of the cores used (µs of kernel time)."""

    cores_used: int
    chip_cores: int | None
    waves: int
    last_wave_cores: int
    slowest_core: int
    slowest_us: float
    mean_us: float

    @property
    def ratio(self) -> float:
        return self.slowest_us / self.mean_us if self.mean_us > 0 else 1.0

    def to_dict(self) -> dict:
        return {
            "cores_used": self.cores_used,
            "chip_cores": self.chip_cores,
            "waves": self.waves,
            "last_wave_cores": self.last_wave_cores,
            "slowest_core": self.slowest_core,
            "slowest_us": self.slowest_us,
            "mean_us": self.mean_us,
            "ratio": self.ratio,
        }


@dataclass(frozen=True)
class PipelineReport:
    utilisation: dict  # pipe -> busy / (cores used × kernel time)
    wait_ratios: dict  # pipe -> blocked / (cores used × kernel time)
    overlap: float | None  # compute ∩ movement / min(compute, movement); None if unmeasured
    overlap_kernel: float | None  # compute ∩ movement / (cores used × kernel time)
    core_balance: CoreBalance
    advice: tuple[rules.Advice, ...]
    blocked_us: dict = field(default_factory=dict)  # pipe -> µs per core in wait records

    def to_dict(self) -> dict:
        return {
            "utilisation": dict(self.utilisation),
            "wait_ratios": dict(self.wait_ratios),
            "blocked_us": dict(self.blocked_us),
            "overlap": self.overlap,
            "overlap_kernel": self.overlap_kernel,
            "core_balance": self.core_balance.to_dict(),
            "advice": [a.to_dict() for a in self.advice],
        }


class ProfileSource(enum.StrEnum):
    EMULATOR = "emulator"
    MSPROF = "msprof"  # imported hardware measurements


@dataclass(frozen=True)
class Profile:
    """Where the time of one run went. Times in µs; per-core figures are means over cores used."""

    source: ProfileSource
    operator: str
    case: str | None
    chip: str | None
    params: dict
    shapes: dict
    emulation: Emulation | None  # None: measured on hardware (msprof)
    time_us: float  # task duration (kernel + launch overhead), as msprof reports it
    kernel_us: float
    clock_mhz: float
    block_dim: int
    breakdown: tuple[BreakdownItem, ...]
    bottleneck: str  # key of the largest breakdown row
    roofline: Roofline | None
    pipeline: PipelineReport
    lines: tuple[HotLine, ...]
    cores: tuple[CoreProfile, ...]
    gm_read: float
    gm_write: float
    capacity: dict = field(default_factory=dict)
    core_kind: str = "AIV"

    @property
    def bottleneck_item(self) -> BreakdownItem:
        return next(b for b in self.breakdown if b.key == self.bottleneck)

    @property
    def shape(self) -> str:
        return ", ".join(f"{k}: {v}" for k, v in self.shapes.items())

    def to_dict(self) -> dict:
        b = self.bottleneck_item
        return {
            "source": self.source,
            "operator": self.operator,
            "case": self.case,
            "chip": self.chip,
            "params": dict(self.params),
            "shapes": dict(self.shapes),
            "emulation": self.emulation,
            "time_us": self.time_us,
            "kernel_us": self.kernel_us,
            "clock_mhz": self.clock_mhz,
            "block_dim": self.block_dim,
            "core_kind": self.core_kind,
            "breakdown": [x.to_dict() for x in self.breakdown],
            "breakdown_total_us": sum(x.time_us or 0.0 for x in self.breakdown),
            "bottleneck": b.name,
            "bottleneck_key": b.key,
            "roofline": self.roofline.to_dict() if self.roofline else None,
            "pipeline": self.pipeline.to_dict(),
            "lines": [ln.to_dict() for ln in self.lines],
            "cores": [c.to_dict() for c in self.cores],
            "bytes": {"gm_read": self.gm_read, "gm_write": self.gm_write},
            "capacity": {k: {"used": u, "capacity": c} for k, (u, c) in self.capacity.items()},
        }


def _chip(name: str | None):
    """The chip model by name, for results that do not carry theirs (None if unknown)."""
    if not name:
        return None
    from ...npu.chip import load_chip
    from ...npu.errors import OperatorError

    try:
        return load_chip(name)
    except OperatorError:
        return None


def profile(run, chip=None, cols: Columns | None = None, totals: PipeTotals | None = None) -> Profile:
    """Profile a RunReport (or a bare EmulationResult); `chip` defaults to the run's chip,
    `cols` are the run's `columns` and `totals` its `pipe_totals` if the caller has them."""
    if isinstance(run, EmulationResult):
        em, meta = run, {}
        flops, shapes = 0.0, {}
    else:
        em = run.emulation
        if em is None:
            raise ValueError(f"{run.operator}: the run failed, there is nothing to profile")
        meta = {"operator": run.operator, "case": run.case, "params": dict(run.params)}
        flops, shapes = float(run.flops or 0.0), dict(run.shapes)
    if chip is None:
        chip = em.chip_model if em.chip_model is not None else _chip(em.chip)
    cols = cols if cols is not None else columns(em)
    totals = totals if totals is not None else pipe_totals(em, cols)
    cores = core_profiles(em, cols)
    n = max(em.cores_used, 1)
    denom = n * max(em.kernel_cycles, 1e-9)
    cube = uses_cube(totals.busy)
    times = breakdown_times(totals, em.cores_used, em.clock_mhz)
    items = breakdown_items(times, em.kernel_us)
    chip_cores = (chip.aic if cube else chip.aiv) if chip is not None else None
    balance = _balance(em, cores, chip_cores)
    dma_mean, dma_fixed = _dma_facts(em, cores, chip, chip_cores)
    fixed_us = em.launch_overhead_us
    roof = None
    if chip is not None:
        fixed_us += fixed_cycles(em, chip, cube, cores) / em.clock_mhz
        hbm_read = getattr(em, "hbm_read", em.gm_read)  # re-reads served by L2 are not HBM
        roof = roofline(
            chip,
            flops,
            float(hbm_read + em.gm_write),
            em.time_us,
            use_cube=cube,
            elem_bytes=element_bytes(shapes),
            fixed_us=fixed_us,
        )
    busy, blocked_cycles = totals.busy, totals.blocked
    util = {name: busy[p] / denom for p, name in enumerate(PIPE_NAMES)}
    waits = {name: blocked_cycles[p] / denom for p, name in enumerate(PIPE_NAMES)}
    overlap = totals.overlap
    facts = rules.Facts(
        utilisation=util,
        wait_ratios=waits,
        overlap=overlap,
        cores_used=em.cores_used,
        chip_cores=chip_cores,
        core_kind="AIC" if cube else "AIV",
        waves=balance.waves,
        last_wave_cores=balance.last_wave_cores,
        balance=balance.ratio,
        dma_mean_bytes=dma_mean,
        dma_fixed_share=dma_fixed,
        uses_cube=cube,
        bound=roof.bound if roof else None,
        roof_fraction=roof.fraction if roof else None,
        capacity=dict(em.capacity),
        kernel_us=em.kernel_us,
        launch_overhead_us=em.launch_overhead_us,
    )
    blocked = {name: blocked_cycles[p] / (n * em.clock_mhz) for p, name in enumerate(PIPE_NAMES)}
    pipeline = PipelineReport(
        util, waits, overlap, float(totals.overlap_cycles / denom), balance, rules.advise(facts), blocked
    )
    issue = chip.scalar_issue if chip is not None else None
    return Profile(
        source=ProfileSource.EMULATOR,
        operator=meta.get("operator", "kernel"),
        case=meta.get("case"),
        chip=em.chip,
        params=meta.get("params", {}),
        shapes=shapes,
        emulation=Emulation.of_result(em),
        time_us=em.time_us,
        kernel_us=em.kernel_us,
        clock_mhz=em.clock_mhz,
        block_dim=em.block_dim,
        breakdown=items,
        bottleneck=bottleneck_of(items),
        roofline=roof,
        pipeline=pipeline,
        lines=hot_lines(em, cols, issue),
        cores=cores,
        gm_read=float(em.gm_read),
        gm_write=float(em.gm_write),
        capacity=dict(em.capacity),
        core_kind="AIC" if cube else "AIV",
    )


def bottleneck_of(items) -> str:
    best = max(items, key=lambda x: x.time_us or 0.0)
    return best.key


def _balance(em: EmulationResult, cores: tuple[CoreProfile, ...], chip_cores) -> CoreBalance:
    if not cores:
        return CoreBalance(em.cores_used, chip_cores, 1, 0, 0, 0.0, 0.0)
    per_core: dict[int, float] = {}
    for c in cores:
        per_core[c.core] = per_core.get(c.core, 0.0) + c.time_us
    waves = [c.wave for c in cores]
    last_wave = max(waves)
    slow = max(per_core, key=per_core.get)
    return CoreBalance(
        em.cores_used,
        chip_cores,
        last_wave + 1,
        waves.count(last_wave),
        slow,
        per_core[slow],
        fmean(per_core.values()),
    )


def _dma_facts(em, cores, chip, chip_cores) -> tuple[float | None, float | None]:
    """Mean bytes per GM DMA instruction and the share of DMA busy time that is fixed latency."""
    count = fixed = 0
    nbytes = busy = 0.0
    for c in cores:
        ins, bu = c.instructions, c.busy_us
        n = ins.get("mte2", 0) + ins.get("mte3", 0)
        count += n
        nbytes += c.read_bytes + c.write_bytes
        busy += bu.get("mte2", 0.0) + bu.get("mte3", 0.0)
        if chip is not None:
            fixed += n * chip.dma_latency_for(wave_cores(em.block_dim, c.wave, chip_cores))
    if not count:
        return None, None
    if chip is None or busy <= 0:
        return nbytes / count, None
    return nbytes / count, min(fixed / em.clock_mhz / busy, 1.0)


__all__ = ["Profile", "PipelineReport", "CoreBalance", "profile", "CATEGORIES"]
