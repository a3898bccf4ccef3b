"""The profile pane's rows and the source pane's per-line heat, from `devkit.profile`/`hotlines`.

One computation each, the same one `asc-tui profile` reports: no fallback figures. Both take what
the caller has computed already (`views.result` computes it once for every pane). A run without
an emulation has no view (None, or no heat).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..profile.breakdown import Columns, columns
from ..profile.hotlines import hot_lines
from ..profile.measured import compare, lines, lookup
from ..profile.msprof import MsprofError, read_dir
from ..profile.profiler import profile
from ..profile.timing import Timing, timing

if TYPE_CHECKING:
    from ..profile.profiler import Profile
    from ..run.runner import RunReport


@dataclass(frozen=True)
class ProfileRow:
    key: str
    name: str
    time_us: float  # mean µs per core used
    share: float  # of the breakdown total
    ratio: float  # busy / kernel time


@dataclass(frozen=True)
class ProfileView:
    rows: tuple[ProfileRow, ...]
    bottleneck: str | None  # the bottleneck row's name
    overlap: float | None  # compute ∩ movement share; None if unmeasured
    advice: tuple[str, ...]
    source: str  # which devkit module produced the figures
    kernel_us: float
    timing: Timing | None = None  # task = kernel + launch, overlap: with their definitions
    # imported msprof data of the same case and params beside this run (devkit.measured.lines)
    measured: tuple[str, ...] = ()


def profile_view(report: RunReport, p: Profile | None = None) -> ProfileView | None:
    """Breakdown, bottleneck and advice for one run (None without an emulation); `p` is its
    profile if already computed."""
    if report.emulation is None:
        return None
    p = p if p is not None else profile(report)
    rows = tuple(
        ProfileRow(i.key, i.name, i.time_us or 0.0, i.share, i.ratio) for i in p.breakdown if i.time_us
    )
    advice = tuple(a.message for a in p.pipeline.advice)
    return ProfileView(
        rows,
        p.bottleneck_item.name,
        p.pipeline.overlap,
        advice,
        "devkit.profile",
        p.kernel_us,
        timing(report.emulation, p.pipeline.overlap),  # the profile's overlap, not a second one
        _measured(p),
    )


def _measured(p) -> tuple[str, ...]:
    """Measured beside emulated, when msprof data of this case and params was imported."""
    if p.case is None:
        return ()
    where = lookup(p.operator, p.case, dict(p.params))
    if not where:
        return ()
    try:
        return tuple(lines(compare(p, read_dir(where), where)))
    except (OSError, MsprofError) as exc:  # the imported data moved or broke: say so, keep the rest
        return (f"measured data at {where} unreadable: {exc}",)


@dataclass(frozen=True)
class LineHeat:
    cycles: float  # busy cycles over all blocks and pipes
    share: float  # of all lines' cycles
    pipe: str  # the pipe with most of the line's cycles


def line_heat(report: RunReport, cols: Columns | None = None) -> dict[tuple[str, int], LineHeat]:
    """Cost per (file, line) of the run (`devkit.hotlines`; empty without an emulation); `cols`
    are its columns if already built (the profile's)."""
    em = report.emulation
    if em is None:
        return {}
    cols = cols if cols is not None else columns(em)
    return {(h.file, h.line): LineHeat(h.cycles, h.share, h.pipe) for h in hot_lines(em, cols, None)}
