"""Benchmarks: one row per operator × case, cells updated in place (never cleared/redrawn)."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.widgets import DataTable

from ...devkit.bench.regression import DEFAULT_THRESHOLD, slowdown
from ...devkit.present.bench import BENCH_ROW_COLUMNS, bench_row_cells

#: The presenter's columns with the chip third: at 80 columns the rows of one case on two chips
#: must not look the same (the rest scrolls sideways).
_FIRST = ("operator", "case", "chip")
COLUMNS = (*_FIRST, *(c for c in BENCH_ROW_COLUMNS if c not in _FIRST))


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
    threshold: float = DEFAULT_THRESHOLD  # the config's regression threshold

    @property
    def key(self) -> str:
        return f"{self.operator}/{self.case}/{self.chip}"

    def delta(self) -> float | None:
        """Slowdown vs the previous run (positive: slower)."""
        return slowdown(self.current, self.previous)

    def cells(self) -> tuple[str, ...]:
        """In `COLUMNS` order."""
        by_name = dict(zip(BENCH_ROW_COLUMNS, self._cells()))
        return tuple(by_name[c] for c in COLUMNS)

    def _cells(self) -> tuple[str, ...]:
        return bench_row_cells(
            self.operator,
            self.case,
            self.chip,
            self.current,
            self.baseline,
            self.previous,
            self.verdict,
            self.history,
            self.threshold,
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

    def remove_operator(self, operator: str) -> None:
        """Drop every row of `operator` (its file was deleted)."""
        for key, row in list(self.rows_by_key.items()):
            if row.operator == operator:
                del self.rows_by_key[key]
                if key in self.rows:
                    self.remove_row(key)

    def row(self, key: str) -> BenchRow | None:
        return self.rows_by_key.get(key)
