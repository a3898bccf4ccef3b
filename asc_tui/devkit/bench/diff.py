"""A run against a saved baseline, category by category and line by line: the benchmark diff.

One computation for both front ends: `asc-bench --against NAME` prints `diff_lines(...)` and
puts `BenchDiff.to_dict()` in its JSON; the workbench's diff screen (`D`, or a Bench row) draws
the same `BenchDiff`. Figures, all in µs:

* time: task duration (kernel + launch overhead), as the bench table shows it;
* categories: busy time per core of each pipe (the breakdown's rows, Sync Wait excepted: the
  history keeps per-pipe figures only), before and after;
* lines: busy time of the instructions issued from one source line, summed over all blocks,
  matched by file and text (an edit that shifts lines does not read as every line changing);
* lanes: per pipe, the busy fraction of each of `LANE_BUCKETS` equal slices of the kernel time
  (mean over the cores used), kept for baselines so their timeline can be drawn later.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...ascendc.enums import PIPE_NAMES
from ...npu.results import KIND_WORK, EmulationResult
from ..profile.breakdown import CATEGORIES
from ..store import Store
from .compare import line_deltas
from .history import RunRecord, load_baseline, open_history

LANE_BUCKETS = 160

LANES_DDL = """
CREATE TABLE IF NOT EXISTS history_lanes (
    run_id INTEGER PRIMARY KEY,
    kernel_us REAL NOT NULL,
    lanes TEXT NOT NULL
);
"""

_NAMES = {key: name for key, name, _ in CATEGORIES}


@dataclass(frozen=True)
class Lanes:
    """A run's timeline at a fixed resolution: pipe -> busy fraction per slice of kernel_us."""

    kernel_us: float
    busy: dict[str, tuple[float, ...]]

    def at(self, pipe: str, t0_us: float, t1_us: float) -> float:
        """Busy fraction of `pipe` over [t0, t1) µs (0 outside the kernel)."""
        row = self.busy.get(pipe)
        if not row or self.kernel_us <= 0 or t1_us <= t0_us:
            return 0.0
        n = len(row)
        a, b = t0_us / self.kernel_us * n, min(t1_us, self.kernel_us) / self.kernel_us * n
        if a >= n or b <= a:
            return 0.0
        total = 0.0
        i = int(a)
        while i < b and i < n:
            lo, hi = max(a, i), min(b, i + 1)
            total += row[i] * (hi - lo)
            i += 1
        return total / ((t1_us - t0_us) / self.kernel_us * n)

    def to_dict(self) -> dict[str, Any]:
        return {"kernel_us": self.kernel_us, "busy": {k: list(v) for k, v in self.busy.items()}}


def lanes_of(em: EmulationResult, buckets: int = LANE_BUCKETS) -> Lanes:
    """Busy fraction per pipe and slice, mean over the cores used (exact interval sums)."""
    r = em.records
    span = max(float(em.kernel_cycles), 1.0)
    edges = np.linspace(0.0, span, buckets + 1)
    n = max(em.cores_used, 1)
    out: dict[str, tuple[float, ...]] = {}
    for p, name in enumerate(PIPE_NAMES):
        on = (r.pipe == p) & (r.kind == KIND_WORK)
        if not on.any():
            continue
        s = np.sort(r.start[on].astype(np.float64))
        e = np.sort(np.maximum(r.end[on], r.start[on]).astype(np.float64))
        sp, ep = np.concatenate(([0.0], np.cumsum(s))), np.concatenate(([0.0], np.cumsum(e)))
        ks, ke = np.searchsorted(s, edges), np.searchsorted(e, edges)
        before = (ks * edges - sp[ks]) - (ke * edges - ep[ke])
        frac = np.clip(np.diff(before) / (span / buckets * n), 0.0, 1.0)
        out[name] = tuple(round(float(x), 4) for x in frac)
    return Lanes(em.kernel_us, out)


def save_lanes(store: Store, run_id: int, em: EmulationResult) -> None:
    store.ensure(LANES_DDL)
    lanes = lanes_of(em)
    with store.transaction() as c:
        c.execute(
            "INSERT OR REPLACE INTO history_lanes (run_id, kernel_us, lanes) VALUES (?, ?, ?)",
            (run_id, lanes.kernel_us, json.dumps({k: list(v) for k, v in lanes.busy.items()})),
        )


def load_lanes(store: Store, run_id: int | None) -> Lanes | None:
    if run_id is None:
        return None
    store.ensure(LANES_DDL)
    row = store.conn.execute(
        "SELECT kernel_us, lanes FROM history_lanes WHERE run_id = ?", (run_id,)
    ).fetchone()
    if row is None:
        return None
    return Lanes(float(row[0]), {k: tuple(v) for k, v in json.loads(row[1]).items()})


@dataclass(frozen=True)
class CategoryDelta:
    key: str
    name: str
    before_us: float  # busy µs per core
    after_us: float

    @property
    def delta_us(self) -> float:
        return self.after_us - self.before_us


@dataclass(frozen=True)
class LineChange:
    file: str
    line: int
    text: str
    before_us: float  # busy µs, all blocks
    after_us: float

    @property
    def delta_us(self) -> float:
        return self.after_us - self.before_us

    @property
    def where(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}"


@dataclass(frozen=True)
class BenchDiff:
    """The current run against the baseline `name` (same operator, case and chip)."""

    name: str
    operator: str
    case: str
    chip: str
    baseline_id: int | None
    baseline_us: float  # task duration (kernel + launch), µs
    current_us: float
    categories: tuple[CategoryDelta, ...]
    lines: tuple[LineChange, ...]  # largest |Δ| first
    baseline_lanes: Lanes | None = None
    current_lanes: Lanes | None = None

    @property
    def delta_us(self) -> float:
        return self.current_us - self.baseline_us

    @property
    def relative(self) -> float | None:
        """Baseline time / own time (the bench table's "vs base")."""
        return self.baseline_us / self.current_us if self.current_us > 0 else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "operator": self.operator,
            "case": self.case,
            "chip": self.chip,
            "baseline_id": self.baseline_id,
            "baseline_us": self.baseline_us,
            "current_us": self.current_us,
            "delta_us": self.delta_us,
            "relative": self.relative,
            "categories": [
                {
                    "key": c.key,
                    "name": c.name,
                    "before_us": c.before_us,
                    "after_us": c.after_us,
                    "delta_us": c.delta_us,
                }
                for c in self.categories
            ],
            "lines": [
                {
                    "file": ln.file,
                    "line": ln.line,
                    "text": ln.text,
                    "before_us": ln.before_us,
                    "after_us": ln.after_us,
                    "delta_us": ln.delta_us,
                }
                for ln in self.lines
            ],
        }


def _clock_mhz(chip: str | None) -> float | None:
    from ...npu.chip import load_chip
    from ...npu.errors import OperatorError

    try:
        return load_chip(chip).clock_mhz
    except (OperatorError, OSError):
        return None


def bench_diff(
    current: RunRecord,
    baseline: RunRecord,
    name: str = "baseline",
    clock_mhz: float | None = None,
    lines: int = 8,
    current_lanes: Lanes | None = None,
    baseline_lanes: Lanes | None = None,
) -> BenchDiff:
    """Category and line deltas of `current` against `baseline` (both timed records)."""
    mhz = clock_mhz or _clock_mhz(current.chip) or 1.0
    cats = []
    for key, label, pipe in CATEGORIES:
        if pipe is None:
            continue
        b = baseline.pipes[key].busy_us if key in baseline.pipes else 0.0
        a = current.pipes[key].busy_us if key in current.pipes else 0.0
        if a or b:
            cats.append(CategoryDelta(key, label, b, a))
    changed = tuple(
        LineChange(d.file, d.line, d.text, d.before_cycles / mhz, d.after_cycles / mhz)
        for d in line_deltas(current, baseline, limit=lines)
    )
    return BenchDiff(
        name,
        current.operator,
        current.case or "",
        current.chip or "",
        baseline.id,
        float(baseline.time_us or 0.0),
        float(current.time_us or 0.0),
        tuple(cats),
        changed,
        baseline_lanes,
        current_lanes,
    )


def against_baseline(
    report, name: str, store: Store | None = None, record: RunRecord | None = None
) -> BenchDiff | None:
    """The diff of a finished run (`RunReport`) against the saved baseline `name` for its
    operator, case and chip; None when there is no such baseline or the run has no time."""
    from .history import record_from_report

    em = report.emulation
    if em is None:
        return None
    store = open_history(store)
    rec = record or record_from_report(report, "run")
    saved = load_baseline(store, name, rec.case, rec.chip, rec.operator)
    if saved is None or saved.time_us is None:
        return None
    return bench_diff(
        rec,
        saved,
        name,
        clock_mhz=em.clock_mhz,
        current_lanes=lanes_of(em),
        baseline_lanes=load_lanes(store, saved.id),
    )


def diff_lines(d: BenchDiff) -> list[str]:
    """The diff as plain text lines (the CLI's section; the TUI draws bars from the same figures)."""
    rel = f", {d.relative:.1%} of baseline speed" if d.relative is not None else ""
    out = [
        f"vs baseline {d.name!r} (run #{d.baseline_id}): {d.baseline_us:.3f} -> {d.current_us:.3f} us "
        f"task ({d.delta_us:+.3f} us{rel})",
        "  busy per core, us        baseline    current      delta",
    ]
    for c in d.categories:
        out.append(f"  {c.name:<22}{c.before_us:11.3f}{c.after_us:11.3f}{c.delta_us:+11.3f}")
    if d.lines:
        out.append("  source lines whose cost changed most (busy us, all blocks):")
    for ln in d.lines:
        out.append(
            f"  {ln.where:<18}{ln.before_us:10.3f} -> {ln.after_us:10.3f} ({ln.delta_us:+.3f})  {ln.text}"
        )
    return out
