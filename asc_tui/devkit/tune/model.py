"""Models that rank configs without emulating them: an analytical roofline and a surrogate.

The roofline estimate (µs) of a config uses what the static pass already knows:
- bytes moved: the operator's optional `traffic(case, params)` hook (GM bytes including
  re-reads, e.g. a matmul's A re-read per N tile), else the sum of its tensors;
- FLOPs: the operator's `flops(case)`;
- cores in use and waves (block_dim vs the chip's AIV/AIC count), HBM shared by active cores;
- DMA count: bytes per block / the size of the first DMA the dry run saw, each DMA paying the
  chip's fixed latency; re-reads beyond the tensors' own bytes go at L2 bandwidth;
- overlap of copies and compute: the share of the kernel's queues with two or more buffers
  (seen by the dry run): memory and compute add up when single-buffered, overlap when not.
It is deliberately simple: it ranks, it does not predict. The surrogate corrects it as results
come in: a ridge regression of log(time) on log(estimate) and log2 of each parameter (with a
square term, so an interior optimum can be found), refitted after every result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...npu.chip import ChipModel
from ..profile.roofline import cube_flops_per_cycle, vector_flops_per_cycle
from ..run.loader import OperatorModule
from .space import Config, SearchSpace


@dataclass(frozen=True)
class RooflineInputs:
    """Per-tune facts the estimate needs (bytes, FLOPs, core count of the kernel's type)."""

    io_bytes: int
    flops: float
    n_cores: int
    is_cube: bool


def roofline_inputs(op: OperatorModule, case_name: str | None, chip: ChipModel) -> RooflineInputs:
    case = op.case(case_name)
    specs = op.tensors(case)
    core_type = getattr(op.kernel, "core_type", "aiv")
    is_cube = core_type in ("aic", "mix", "cube")
    return RooflineInputs(
        sum(s.nbytes for s in specs.specs.values()),
        op.flops(case),
        chip.aic if is_cube else chip.aiv,
        is_cube,
    )


def estimate_kernel_us(
    op: OperatorModule, case_name: str | None, chip: ChipModel, cfg: Config, base: RooflineInputs
) -> float:
    """Analytical kernel time of one config (µs): waves × max(memory, compute) per block."""
    traffic_fn = getattr(op.module, "traffic", None)
    traffic = float(base.io_bytes)
    if traffic_fn is not None:
        try:
            traffic = float(traffic_fn(op.case(case_name), op.resolve_params(cfg.params)))
        except Exception:  # a broken hook only weakens the model; the tune still runs
            traffic = float(base.io_bytes)
    bd = max(cfg.block_dim, 1)
    active = min(bd, base.n_cores)
    waves = math.ceil(bd / base.n_cores)
    per_block = traffic / bd
    bw = min(chip.gm_read_bpc, chip.hbm_bpc / active)
    lat = chip.dma_latency_for(active)
    chunk = cfg.first_dma_bytes or per_block
    n_dma = math.ceil(per_block / max(chunk, 1))
    distinct = min(float(base.io_bytes), traffic) / bd  # first reads: HBM
    reread = per_block - distinct  # re-reads: L2 when the chip has one
    l2_bw = chip.l2_bpc if chip.memory.get("l2", 0) > 0 else bw
    mem_cycles = n_dma * lat + distinct / bw + reread / max(l2_bw, 1e-9)
    per_block_flops = base.flops / bd
    if base.is_cube:
        compute = per_block_flops / cube_flops_per_cycle(chip)
    else:
        compute = per_block_flops / vector_flops_per_cycle(chip)
        compute += n_dma * chip.vec_startup
    overlap = cfg.multi_buffered if cfg.multi_buffered is not None else 0.5
    cycles = max(mem_cycles, compute) + (1.0 - overlap) * min(mem_cycles, compute)
    return waves * cycles / chip.clock_mhz


def estimate_us(
    op: OperatorModule, case_name: str | None, chip: ChipModel, cfg: Config, base: RooflineInputs
) -> float:
    """Analytical task time of one config (µs): launch overhead + the kernel estimate."""
    return chip.launch_overhead_us + estimate_kernel_us(op, case_name, chip, cfg, base)


class Surrogate:
    """Ridge regression on log(time); features from the space's value indices and the prior."""

    def __init__(self, space: SearchSpace, prior: dict[str, float], ridge: float = 0.3):
        self.space = space
        self.prior = prior
        self.ridge = ridge
        self._x: dict[str, np.ndarray] = {c.key: self._features(c) for c in space.valid}
        self._obs: dict[str, float] = {}
        self._coef: np.ndarray | None = None

    def _features(self, cfg: Config) -> np.ndarray:
        f = [1.0, math.log(max(self.prior.get(cfg.key, 1.0), 1e-9))]
        for name in self.space.names:
            vals = self.space.values[name]
            if len(vals) < 2:
                continue
            v = cfg.params[name]
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
                x = math.log2(v)
            else:
                x = float(vals.index(v))
            f += [x, x * x]
        return np.asarray(f)

    def observe(self, key: str, time_us: float | None) -> None:
        if time_us is not None and time_us > 0 and key in self._x:
            self._obs[key] = math.log(time_us)
            self._coef = None

    def predict(self, key: str) -> float:
        """Predicted log(time) (the prior alone until two results are in)."""
        if key in self._obs:
            return self._obs[key]
        if len(self._obs) < 2:
            return math.log(max(self.prior.get(key, 1.0), 1e-9))
        if self._coef is None:
            keys = list(self._obs)
            x = np.stack([self._x[k] for k in keys])
            y = np.array([self._obs[k] for k in keys])
            mu, sd = x.mean(0), x.std(0)
            sd[sd == 0] = 1.0
            mu[0], sd[0] = 0.0, 1.0
            xs = (x - mu) / sd
            reg = self.ridge * np.eye(x.shape[1])
            reg[0, 0] = 0.0
            self._coef = (np.linalg.solve(xs.T @ xs + reg, xs.T @ y), mu, sd)
        coef, mu, sd = self._coef
        return float(((self._x[key] - mu) / sd) @ coef)
