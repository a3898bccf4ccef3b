"""Benchmarks: one row per operator × case, cells updated in place (never cleared/redrawn).

Narrow (an 80-column terminal) the row is two lines high and the columns come in pairs, so the
verdict and "vs base" stay in sight without scrolling sideways (`STACKED`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.widgets import DataTable

from ...devkit.bench.regression import DEFAULT_THRESHOLD, slowdown
from ...devkit.present.bench import BENCH_ROW_COLUMNS, bench_row_cells

#: The presenter's columns with the chip third: at 80 columns the rows of one case on two chips
#: must not look the same (the rest scrolls sideways).
_FIRST = ("operator", "case", "chip")
COLUMNS = (*_FIRST, *(c for c in BENCH_ROW_COLUMNS if c not in _FIRST))
#: The narrow layout: each column two of `COLUMNS` one above the other (its key: the first).
STACKED = (
    ("operator", "case"),
    ("current µs", "Δ prev"),
    ("verdict", "vs base"),
    ("baseline µs", "previous µs"),
    ("history",),
)
_STACKED_LABELS = {"case": "case · chip"}


def short_chip(chip: str) -> str:
    """`ascend910b` → `910b`: the narrow layout's first column has the operator's width."""
    return chip[len("ascend") :] if chip.startswith("ascend") and len(chip) > len("ascend") else chip


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

    def stacked_cells(self) -> tuple[str, ...]:
        """In `STACKED` order: two lines a cell (the case with its chip, shortened)."""
        by_name = dict(zip(BENCH_ROW_COLUMNS, self._cells()))
        by_name["case"] = f"{self.case} · {short_chip(self.chip)}"
        return tuple("\n".join(by_name[c] for c in pair) for pair in STACKED)

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
        self.stacked = False  # the narrow layout (`STACKED`)

    def on_mount(self) -> None:
        if not self.columns:  # (the app may have set the layout first)
            self._add_columns()

    def _add_columns(self) -> None:
        if self.stacked:
            for pair in STACKED:
                self.add_column("\n".join(_STACKED_LABELS.get(c, c) for c in pair), key=pair[0])
        else:
            for c in COLUMNS:
                self.add_column(c, key=c)
        self.header_height = 2 if self.stacked else 1

    def _columns_and_cells(self, row: BenchRow) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if self.stacked:
            return tuple(pair[0] for pair in STACKED), row.stacked_cells()
        return COLUMNS, row.cells()

    def set_stacked(self, stacked: bool) -> None:
        """Switch layouts (a resize across the narrow width): the rows again, the cursor kept."""
        if stacked == self.stacked:
            return
        cursor = self.cursor_row
        self.stacked = stacked
        self.clear(columns=True)
        self._add_columns()
        for row in self.rows_by_key.values():
            self._add(row)
        if self.row_count:
            self.move_cursor(row=min(cursor, self.row_count - 1))

    def _add(self, row: BenchRow) -> None:
        _, cells = self._columns_and_cells(row)
        self.add_row(*cells, key=row.key, height=2 if self.stacked else 1)

    def upsert(self, row: BenchRow) -> None:
        """Add the row or update only the cells that changed."""
        if row.key not in self.rows_by_key or row.key not in self.rows:
            self.rows_by_key[row.key] = row
            self._add(row)
            return
        self.rows_by_key[row.key] = row
        for col, value in zip(*self._columns_and_cells(row)):
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
