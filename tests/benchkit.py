"""Helpers for the bench tests: history records made by hand."""

from __future__ import annotations

from asc_tui.devkit.bench.history import RunRecord


def rec(time_us: float | None, rid: int = 1) -> RunRecord:
    """A bench record of `time_us` (None: a run without a time) for the verdict rules."""
    return RunRecord(
        id=rid,
        ts=0.0,
        kind="bench",
        operator="op",
        path=None,
        source_hash="h",
        case="default",
        chip="ascend910b",
        time_us=time_us,
        kernel_us=time_us,
    )
