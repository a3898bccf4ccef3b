"""Everything the workbench shows of one result, computed once, in one call a worker can make.

Why: a 16384³ matmul result holds 25M records. Its profile (with the overlap figure), per-line
heat and timeline index each take seconds over all of them; computed on the UI loop when the
result arrived, they froze the workbench. `ResultView.prepare()` computes them all, once per
result, so a front end runs it in a thread and shows "computing…" until `ready`.

One rule, one place: the overlap figure is the profile's (`breakdown.pipe_totals`); the timing
split and the timeline's all-blocks figure are handed that value instead of computing it again,
and the source heat is counted from the profile's columns of the records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .profile import LineHeat, ProfileView, line_heat, profile_view
from .timeline import TimelineModel

if TYPE_CHECKING:
    from ..profile.profiler import Profile
    from ..run.runner import RunReport


class ResultView:
    """The profile pane's rows, the source pane's heat and the timeline index of one result."""

    report: RunReport
    profile: Profile | None  # the full profile (the `p` report and the export reuse it)
    pane: ProfileView | None
    heat: dict[tuple[str, int], LineHeat]
    timeline: TimelineModel | None

    def __init__(self, report: RunReport):
        self.report = report
        self.profile = self.pane = self.timeline = None
        self.heat = {}

    @property
    def records(self) -> int:
        """How many records the result has (cheap: what decides whether to use a thread)."""
        em = self.report.emulation
        return len(em.records) if em is not None else 0

    @property
    def ready(self) -> bool:
        return self.timeline is not None and self.timeline.ready

    def prepare(self, width: int | None = None) -> ResultView:
        """Compute every figure (callable from a worker thread); `width` as in
        `TimelineModel.prepare`. Publishes the timeline last: `ready` means all is there."""
        from ..profile.breakdown import columns, pipe_totals
        from ..profile.profiler import profile

        em = self.report.emulation
        if em is None:
            raise ValueError("a run without an emulation has no result view")
        cols = columns(em)  # one pass over the records for the profile and the heat
        totals = pipe_totals(em, cols)  # the overlap figures: the profile's and each block's
        p = profile(self.report, cols=cols, totals=totals)
        self.profile = p
        self.pane = profile_view(self.report, p)
        self.heat = line_heat(self.report, cols)
        self.timeline = TimelineModel(em, overlap=totals.overlap, block_overlaps=totals.block_overlaps)
        self.timeline.prepare(width)
        return self
