"""The devkit features the panes show, behind one guarded seam.

Profile, bench, history, tuner and sanitizer are separate devkit modules; the workbench uses
them when they are importable and says what is missing otherwise (never a fake figure). The
fallback for the profile is the emulator's own per-pipe totals, which are exact but carry no
advice.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..devkit.runner import RunReport


def optional(name: str) -> ModuleType | None:
    """Import `asc_tui.devkit.<name>` if it exists and imports cleanly."""
    try:
        return importlib.import_module(f"asc_tui.devkit.{name}")
    except Exception:  # a module mid-edit by its owner must not take the workbench down
        return None


@dataclass(frozen=True)
class ProfileRow:
    key: str
    name: str
    time_us: float
    share: float  # of the breakdown total
    ratio: float  # busy / kernel time


@dataclass(frozen=True)
class ProfileView:
    rows: tuple[ProfileRow, ...]
    bottleneck: str | None
    overlap: float | None
    advice: tuple[str, ...]
    source: str  # which engine produced it
    kernel_us: float
    # imported msprof data of the same case and params beside this run (devkit.measured.lines)
    measured: tuple[str, ...] = ()


def profile_view(report: RunReport) -> ProfileView | None:
    """Breakdown, bottleneck and advice for one run (None without an emulation)."""
    em = report.emulation
    if em is None:
        return None
    prof = optional("profile")
    if prof is not None and hasattr(prof, "profile"):
        try:
            return _from_profile_module(prof, report)
        except Exception:
            pass
    bd = optional("breakdown")
    if bd is not None:
        cols = bd.columns(em)
        totals = bd.pipe_totals(em, cols)
        times = bd.breakdown_times(totals, em.cores_used, em.clock_mhz)
        items = bd.breakdown_items(times, em.kernel_us)
        rows = tuple(
            ProfileRow(i.key, i.name, i.time_us or 0.0, i.share, i.ratio) for i in items if i.time_us
        )
        overlap = totals.overlap
        source = "devkit.breakdown"
    else:
        n = max(em.cores_used, 1)
        stats = em.pipe_stats()
        total = sum(s.busy_us for s in stats.values()) or 1.0
        rows = tuple(
            ProfileRow(k, k, s.busy_us / n, s.busy_us / total, s.ratio)
            for k, s in stats.items()
            if s.busy_us > 0
        )
        overlap = None
        source = "emulator pipe totals"
    work = [r for r in rows if r.key != "sync_wait"]
    bottleneck = max(work, key=lambda r: r.ratio).name if work else None
    return ProfileView(rows, bottleneck, overlap, (), source, em.kernel_us)


def _from_profile_module(prof: ModuleType, report: RunReport) -> ProfileView:
    p = prof.profile(report)
    rows = tuple(
        ProfileRow(i.key, i.name, i.time_us or 0.0, i.share, i.ratio) for i in p.breakdown if i.time_us
    )
    advice = tuple(a.message for a in p.pipeline.advice)
    return ProfileView(
        rows, p.bottleneck_item.name, p.pipeline.overlap, advice, "devkit.profile", p.kernel_us, _measured(p)
    )


def _measured(p) -> tuple[str, ...]:
    """Measured beside emulated, when msprof data of this case and params was imported."""
    m = optional("measured")
    if m is None or p.case is None:
        return ()
    try:
        where = m.lookup(p.operator, p.case, dict(p.params))
        if not where:
            return ()
        from ..devkit.msprof import read_dir

        return tuple(m.lines(m.compare(p, read_dir(where), where)))
    except Exception:  # unreadable or moved data: the profile still shows
        return ()


@dataclass(frozen=True)
class LineHeat:
    cycles: float
    share: float
    pipe: str


def line_heat(report: RunReport) -> dict[tuple[str, int], LineHeat]:
    """Cost per (file, line) of the run: devkit.hotlines when present, else busy cycles."""
    em = report.emulation
    if em is None:
        return {}
    hl, bd = optional("hotlines"), optional("breakdown")
    if hl is not None and bd is not None:
        try:
            lines = hl.hot_lines(em, bd.columns(em), None)
            return {(h.file, h.line): LineHeat(h.cycles, h.share, h.pipe) for h in lines}
        except Exception:
            pass
    import numpy as np

    from ..ascendc.enums import PIPE_NAMES
    from ..npu.results import KIND_WORK

    n = len(em.lines)
    cyc = np.zeros(n)
    by_pipe = np.zeros((n, len(PIPE_NAMES)))
    for b in em.blocks:
        w = b.kind == KIND_WORK
        np.add.at(by_pipe, (b.line[w], b.pipe[w]), (b.end - b.start)[w])
    cyc = by_pipe.sum(axis=1)
    total = float(cyc.sum()) or 1.0
    return {
        em.lines[i]: LineHeat(float(cyc[i]), float(cyc[i] / total), PIPE_NAMES[int(np.argmax(by_pipe[i]))])
        for i in range(n)
        if cyc[i] > 0
    }
