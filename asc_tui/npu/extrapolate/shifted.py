"""The records of a loop's extrapolated periods (npu/extrapolate/periodic.py), kept as one period and a
shift until the block closes.

Why: a 4096³ matmul extrapolates four fifths of its records; as tuples (or a full table with
its op names and files as objects) they would cost more than the loop they replace. Closing
a block interns the period's names and sites once and tiles its columns.
"""

from __future__ import annotations

import numpy as np


class Shifted:
    """m periods of records: `period` (a `records.RECORD` table) again and again, period t
    (1..m) with its times moved by t·Δ and its moving links (`moved`) by t·n_rec."""

    __slots__ = ("period", "m", "delta", "n_rec", "moved")

    def __init__(self, period: np.ndarray, m: int, delta: float, n_rec: int, moved: list):
        self.period = period
        self.m = m
        self.delta = delta
        self.n_rec = n_rec
        self.moved = np.array(moved, dtype=bool)

    def __len__(self) -> int:
        return self.m * len(self.period)

    def _shifts(self) -> tuple[np.ndarray, np.ndarray]:
        """Per record: the time added (t·Δ, as one float product) and the link added."""
        t = np.repeat(np.arange(1, self.m + 1, dtype=np.int64), len(self.period))
        links = self.n_rec * t * np.tile(self.moved, self.m)
        return self.delta * t.astype(np.float64), links.astype(np.int32)

    def rows(self) -> np.ndarray:
        """Every record, as a RECORD table."""
        table = np.tile(self.period, self.m)
        dt, dl = self._shifts()
        table["start"] += dt
        table["end"] += dt
        table["link"] += dl
        return table

    def expand(self, columns: dict) -> dict:
        """Every record as columns, from the period's (`columns.close_columns` layout): the
        same numbers as `rows` gives."""
        dt, dl = self._shifts()
        out = {name: np.tile(col, self.m) for name, col in columns.items()}
        out["start"] += dt
        out["end"] += dt
        out["link"] += dl
        return out
