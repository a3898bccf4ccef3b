"""Benchmarks: one row per operator × case, cells updated in place (never cleared/redrawn)."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.widgets import DataTable

SPARK = "▁▂▃▄▅▆▇█"
#: Most telling first, so 80 columns show current, change and verdict without scrolling.
COLUMNS = (
    "operator",
    "case",
    "current µs",
    "Δ prev",
    "verdict",
    "vs base",
    "baseline µs",
    "previous µs",
    "history",
    "chip",
)


def sparkline(values: list[float], width: int = 12) -> str:
    vals = [v for v in values if v is not None][-width:]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    if hi - lo <= 1e-12:
        return SPARK[3] * len(vals)
    return "".join(SPARK[int((v - lo) / (hi - lo) * 7)] for v in vals)


@dataclass
class BenchRow:
    operator: str
    case: str
    chip: str
    current: float | None = None
    baseline: float | None = None
    previous: float | None = None
    verdict: str = ""
    history: list[float] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.operator}/{self.case}/{self.chip}"

    def delta(self) -> float | None:
        if self.current is None or not self.previous:
            return None
        return self.current / self.previous - 1.0

    def relative(self) -> float | None:
        """Baseline time / own time: ≥ 95% ships (Ascend practice)."""
        if self.current is None or not self.baseline:
            return None
        return self.baseline / self.current

    def cells(self) -> tuple[str, ...]:
        d, rel = self.delta(), self.relative()
        return (
            self.operator,
            self.case,
            f"{self.current:,.3f}" if self.current is not None else "-",
            (f"{'+' if d > 0 else ''}{d:.1%}" + (" !" if d > 0.01 else "")) if d is not None else "-",
            self.verdict or "-",
            f"{rel:.1%}" if rel is not None else "-",
            f"{self.baseline:,.3f}" if self.baseline else "-",
            f"{self.previous:,.3f}" if self.previous else "-",
            sparkline(self.history),
            self.chip,
        )


class BenchTable(DataTable):
    DEFAULT_CSS = "BenchTable { height: 1fr; }"

    def __init__(self, **kwargs):
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self.rows_by_key: dict[str, BenchRow] = {}

    def on_mount(self) -> None:
        for c in COLUMNS:
            self.add_column(c, key=c)

    def upsert(self, row: BenchRow) -> None:
        """Add the row or update only the cells that changed."""
        cells = row.cells()
        if row.key not in self.rows_by_key or row.key not in self.rows:
            self.rows_by_key[row.key] = row
            self.add_row(*cells, key=row.key)
            return
        self.rows_by_key[row.key] = row
        for col, value in zip(COLUMNS, cells):
            if self.get_cell(row.key, col) != value:
                self.update_cell(row.key, col, value, update_width=True)

    def row(self, key: str) -> BenchRow | None:
        return self.rows_by_key.get(key)
