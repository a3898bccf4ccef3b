"""Fit a chip model's timing constants to a user's own msprof runs (`asc-tui calibrate`).

The runs (`runs.py`: each msprof op directory with the operator, case and params it ran) are
re-emulated under trial chip models. The fit adjusts the constants the emulator's durations hang
on — DMA fixed cost and its growth per other copying core, per-core read/write path bandwidth,
HBM bandwidth, vector start-up and cycles per repeat, launch overhead — by least squares
(Levenberg–Marquardt on relative errors, finite-difference Jacobian, numpy only) on every run's
task duration and per-core mean MTE2, MTE3 and vector time. A constant the runs do not constrain
(its column of the Jacobian is zero, e.g. the HBM when no run saturates it) keeps its value and
is reported as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ...npu.chip import ChipModel, parse_chip
from ..text import case_text
from .runs import FIT_PIPES, CalibrationError, Runs, RunSpec

#: Starting HBM bandwidths tried, as multiples of the start chip's: a bandwidth that never binds
#: has no gradient, and a larger per-core DMA latency growth can mimic its contention (a local
#: minimum), so the fit starts from a few HBM figures and keeps the best.
HBM_STARTS = (1.0, 0.75, 0.5)


@dataclass(frozen=True)
class Knob:
    """One fitted constant: where it lives in the chip TOML and in `ChipModel`."""

    section: str
    key: str
    attr: str
    unit: str

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"

    def get(self, chip: ChipModel) -> float:
        if self.attr == "vec_cpr":
            return chip.vec_cpr["default"]
        return float(getattr(chip, self.attr))

    def set(self, chip: ChipModel, value: float) -> ChipModel:
        if self.attr == "vec_cpr":
            return replace(chip, vec_cpr={**chip.vec_cpr, "default": value})
        return replace(chip, **{self.attr: value})


KNOBS = (
    Knob("dma", "latency_cycles", "dma_latency", "cycles"),
    Knob("dma", "latency_per_active_core", "dma_latency_per_active_core", "cycles"),
    Knob("dma", "gm_read_bytes_per_cycle", "gm_read_bpc", "B/cycle"),
    Knob("dma", "gm_write_bytes_per_cycle", "gm_write_bpc", "B/cycle"),
    Knob("dma", "hbm_gbps", "hbm_gbps", "GB/s"),
    Knob("vector", "startup_cycles", "vec_startup", "cycles"),
    Knob("vector.cycles_per_repeat", "default", "vec_cpr", "cycles"),
    Knob("launch", "overhead_us", "launch_overhead_us", "µs"),
)


@dataclass(frozen=True)
class Fitted:
    """One fitted constant: its value before and after, and whether the runs constrained it."""

    name: str
    unit: str
    before: float
    after: float
    constrained: bool

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "unit": self.unit,
            "before": self.before,
            "after": self.after,
            "change": self.after / self.before - 1 if self.before else None,
            "constrained": self.constrained,
        }


@dataclass(frozen=True)
class RunError:
    """One run's figures measured, emulated before and after the fit, and left out of it."""

    label: str
    measured: dict
    before: dict
    after: dict
    left_out: dict | None

    def error(self, which: str) -> dict:
        got = getattr(self, which)
        if got is None:
            return {}
        return {k: got[k] / v - 1 for k, v in self.measured.items() if v > 0 and k in got}

    def to_dict(self) -> dict:
        return {
            "run": self.label,
            "measured": self.measured,
            "before": self.before,
            "after": self.after,
            "left_out": self.left_out,
            "error_before": self.error("before"),
            "error_after": self.error("after"),
            "error_left_out": self.error("left_out") if self.left_out else None,
        }


@dataclass(frozen=True)
class Calibration:
    chip_from: str
    runs: tuple[RunSpec, ...]
    constants: tuple[Fitted, ...]
    errors: tuple[RunError, ...]
    rms_before: float
    rms_after: float
    iterations: int
    chip: ChipModel = field(repr=False, compare=False)

    def to_dict(self) -> dict:
        return {
            "chip_from": self.chip_from,
            "runs": [r.to_dict() for r in self.runs],
            "constants": [c.to_dict() for c in self.constants],
            "errors": [e.to_dict() for e in self.errors],
            "rms_error_before": self.rms_before,
            "rms_error_after": self.rms_after,
            "iterations": self.iterations,
        }


def _fit(runs: Runs, chip: ChipModel, knobs, idx: list[int], max_iter: int):
    """Levenberg–Marquardt over the knobs' values scaled by their start; returns (chip, free
    knob mask, iterations)."""
    x0 = np.array([k.get(chip) for k in knobs])
    scale = np.where(np.abs(x0) > 0, np.abs(x0), 1.0)

    def model(x):
        c = chip
        for k, v in zip(knobs, x * scale):
            c = k.set(c, float(max(v, 1e-6)))
        return c

    def res(x):
        return runs.residuals(runs.emulate(model(x), idx), idx)

    x = x0 / scale
    r = res(x)
    lam = 1e-3
    free = np.ones(len(knobs), dtype=bool)
    it = 0
    while it < max_iter:
        it += 1
        h = 1e-2  # a wide difference: durations move in small steps (cycle counts, in-flight counts)
        J = np.empty((len(r), len(knobs)))
        for j in range(len(knobs)):
            xp = x.copy()
            xp[j] += h
            J[:, j] = (res(xp) - r) / h
        free = np.linalg.norm(J, axis=0) > 1e-6
        if not free.any():
            break
        Jf = J[:, free]
        A = Jf.T @ Jf
        g = Jf.T @ r
        improved = False
        for _ in range(8):
            step = np.linalg.solve(A + lam * np.diag(np.diag(A) + 1e-12), -g)
            xn = x.copy()
            xn[free] += step
            xn = np.maximum(xn, 1e-6)
            rn = res(xn)
            if rn @ rn < r @ r:
                improved = True
                small = np.max(np.abs(xn - x)) < 1e-7 or (r @ r - rn @ rn) < 1e-14 * max(r @ r, 1e-30)
                x, r = xn, rn
                lam = max(lam / 3, 1e-9)
                break
            lam *= 4
        if not improved or small or r @ r < 1e-20:
            break
    return model(x), free, it, float(r @ r)


def _best_fit(runs: Runs, chip: ChipModel, knobs, idx: list[int], max_iter: int):
    """`_fit` from each of the `HBM_STARTS` (when the HBM is a knob); the lowest residual wins."""
    hbm = next((k for k in knobs if k.attr == "hbm_gbps"), None)
    starts = [chip] if hbm is None else [hbm.set(chip, hbm.get(chip) * f) for f in HBM_STARTS]
    best = None
    for start in starts:
        out = _fit(runs, start, knobs, idx, max_iter)
        if best is None or out[3] < best[3] * (1 - 1e-9):
            best = out
        if best[3] < 1e-16:
            break
    return best[:3]


def calibrate(
    specs: list[RunSpec],
    chip: ChipModel,
    knobs: tuple[Knob, ...] = KNOBS,
    max_iter: int = 12,
    leave_one_out: bool = True,
    root=None,
) -> Calibration:
    """Fit `knobs` of `chip` to the runs; errors before/after per run, and left-one-out."""
    if not specs:
        raise CalibrationError("calibrate needs at least one msprof run")
    runs = Runs(specs, root)
    every = list(range(len(specs)))
    before = runs.emulate(chip)
    fitted, free, iters = _best_fit(runs, chip, knobs, every, max_iter)
    after = runs.emulate(fitted)
    left: list[dict | None] = [None] * len(specs)
    if leave_one_out and len(specs) > 1:
        for i in every:
            others = [j for j in every if j != i]
            alt, *_ = _fit(runs, fitted, knobs, others, max(max_iter // 2, 2))
            left[i] = runs.emulate(alt, [i])[i]
    errors = tuple(
        RunError(s.label, runs.measured[i], before[i], after[i], left[i]) for i, s in enumerate(specs)
    )
    rb, ra = runs.residuals(before, every), runs.residuals(after, every)
    consts = tuple(Fitted(k.name, k.unit, k.get(chip), k.get(fitted), bool(f)) for k, f in zip(knobs, free))
    return Calibration(
        chip.name,
        tuple(specs),
        consts,
        errors,
        float(np.sqrt(np.mean(rb**2))) if rb.size else 0.0,
        float(np.sqrt(np.mean(ra**2))) if ra.size else 0.0,
        iters,
        fitted,
    )


def write_chip(cal: Calibration, source_text: str, name: str, path: str | Path) -> Path:
    """The start chip's TOML with the fitted values in place, each line saying it was fitted,
    and a header naming the runs and the residuals."""
    text = source_text
    for c in cal.constants:
        if not c.constrained:
            continue
        section, key = c.name.rsplit(".", 1)
        text = _set_value(text, section, key, c.after, f"fitted by asc-tui calibrate (was {c.before:.6g})")
    text = _set_value(text, "chip", "name", name, None)
    lines = [
        f"# {name}: fitted by `asc-tui calibrate` from {cal.chip_from} to {len(cal.runs)} msprof run(s).",
        "# Runs (msprof op directory: operator [case] params):",
    ]
    lines += [f"#   {r.directory}: {r.op} [{case_text(r.case)}] {r.params}" for r in cal.runs]
    lines.append("# Fitted constants (before → after):")
    for c in cal.constants:
        tag = "" if c.constrained else "  (not constrained by these runs: kept)"
        lines.append(f"#   {c.name:<36} {c.before:>10.5g} → {c.after:<10.5g} {c.unit}{tag}")
    lines.append(
        f"# RMS relative error of durations and mte2/mte3/vec times: {cal.rms_before:.2%} before, "
        f"{cal.rms_after:.2%} after."
    )
    lines.append("# Per run, error after the fit (duration / mte2 / mte3 / vec), and left out of the fit:")
    for e in cal.errors:
        after, loo = e.error("after"), e.error("left_out")
        lines.append(
            f"#   {e.label}: "
            + " / ".join(f"{after.get(k, 0.0):+.2%}" for k in ("duration", *FIT_PIPES))
            + (f"; left out: duration {loo.get('duration', 0.0):+.2%}" if loo else "")
        )
    out = Path(path)
    out.write_text("\n".join(lines) + "\n\n" + text, encoding="utf-8")
    parse_chip(out.read_text(encoding="utf-8"), str(out))  # it must load
    return out


def _set_value(text: str, section: str, key: str, value, note: str | None) -> str:
    """Replace `key = ...` inside `[section]` (keeping the line's comment unless `note`)."""
    lines = text.split("\n")
    current = None
    header = re.compile(r"^\s*\[([^\]]+)\]")
    for i, line in enumerate(lines):
        m = header.match(line)
        if m:
            current = m.group(1).strip()
            continue
        if current != section:
            continue
        m = re.match(rf"^(\s*){re.escape(key)}\s*=\s*([^#]*?)(\s*#.*)?$", line)
        if m:
            v = f'"{value}"' if isinstance(value, str) else f"{value:.6g}"
            comment = f"  # {note}" if note else (m.group(3) or "")
            lines[i] = f"{m.group(1)}{key} = {v}{comment}"
            return "\n".join(lines)
    # not present: add it right after the section header (or a new section at the end)
    v = f'"{value}"' if isinstance(value, str) else f"{value:.6g}"
    entry = f"{key} = {v}" + (f"  # {note}" if note else "")
    for i, line in enumerate(lines):
        m = header.match(line)
        if m and m.group(1).strip() == section:
            lines.insert(i + 1, entry)
            return "\n".join(lines)
    return "\n".join(lines + [f"[{section}]", entry])


__all__ = ["calibrate", "write_chip", "Calibration", "KNOBS"]
