"""A launch's instruction records as one set of columns, concatenated once every block is done.

Why: the report, the profile and the trace all read every block's records; with one set of
columns they have nothing to concatenate. Each block is converted to compact columns as soon as
it finishes (its record tuples are the bulky part), and each `BlockTimeline` of the result is a
view into the launch's columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .pipes import S
from .records import RECORD, RECORD_COLUMNS
from .results import BlockTimeline, Records


@dataclass(frozen=True)
class ClosedBlock:
    """A finished block: where and when it ran, and its record columns (op and line are ids
    into the launch's shared tables)."""

    block: int
    core: int
    wave: int
    t_start: float
    t_end: float
    issued: float  # cycles the block's scalar clock advanced (issue, scalar work and its waits)
    columns: dict  # name -> array, as RECORD_COLUMNS


def close_columns(rec: list, ops: dict, lines: dict, tables: list = ()) -> dict:
    """One block's record tuples as columns, its op names and (file, line) sites interned into
    the launch-wide `ops` and `lines` tables (name or site -> id). `tables`: (index,
    `shifted.Shifted`) of records extrapolated in table form, whose places `rec` holds with None."""
    if not rec:
        return {name: np.zeros(0, dtype) for name, dtype in RECORD_COLUMNS.items()}
    parts = []
    done = 0
    for at, part in tables:
        if at > done:
            parts.append(_columns_of_tuples(rec[done:at], ops, lines))
        parts.append(part.expand(_columns_of(part.period, ops, lines)))
        done = at + len(part)
    if done < len(rec):
        parts.append(_columns_of_tuples(rec[done:] if done else rec, ops, lines))
    if len(parts) == 1:
        return parts[0]
    return {name: np.concatenate([p[name] for p in parts]) for name in RECORD_COLUMNS}


def _columns_of(table: np.ndarray, ops: dict, lines: dict) -> dict:
    """A RECORD table as columns (`close_columns`), one C-level pass per column."""
    return {
        "pipe": table["pipe"].copy(),
        "start": table["start"].copy(),
        "end": table["end"].copy(),
        "op": _intern(table["op"].tolist(), ops),
        "line": _sites(table["file"].tolist(), table["line"].tolist(), lines),
        "nbytes": table["nbytes"].copy(),
        "kind": table["kind"].copy(),
        "link": table["link"].copy(),
    }


def _columns_of_tuples(rec: list, ops: dict, lines: dict) -> dict:
    """Record tuples as columns: what `_columns_of` gives for their RECORD table, without
    building it (a column at a time from the transposed tuples: ~25% less of a block's close,
    which took ~110 µs for a 1024³ matmul block's 258 records)."""
    n = len(rec)
    pipe, start, end, op, file, line, nbytes, kind, link = zip(*rec)
    return {
        "pipe": np.fromiter(pipe, np.int8, n),
        "start": np.fromiter(start, np.float64, n),
        "end": np.fromiter(end, np.float64, n),
        "op": _intern(op, ops),
        "line": _sites(file, line, lines),
        "nbytes": np.fromiter(nbytes, np.int64, n),
        "kind": np.fromiter(kind, np.int8, n),
        "link": np.fromiter(link, np.int32, n),
    }


def _sites(files_col, line_col, lines: dict) -> np.ndarray:
    """Ids of the (file, line) sites of a column of files and one of lines (ints), extending
    `lines`: new sites in (file, line) order. In plain Python: a block has a few dozen sites
    (a 1024³ matmul's template block: ~40 µs in a launch, ~100 with numpy's `unique`)."""
    keys = list(zip(files_col, line_col))
    ids = {k: lines.setdefault((k[0], int(k[1])), len(lines)) for k in sorted(set(keys))}
    return np.fromiter(map(ids.__getitem__, keys), np.int32, len(keys))


def record_table(rec: list, tables: list, lo: int, hi: int) -> np.ndarray:
    """Records lo..hi of a core as one `RECORD` table: tuples from `rec`, and where `rec` holds
    None, rows of `tables` ((index, `shifted.Shifted`) of records extrapolated in table form)."""
    if not tables:
        return np.fromiter(rec[lo:hi] if lo or hi < len(rec) else rec, dtype=RECORD, count=hi - lo)
    table = np.empty(hi - lo, dtype=RECORD)
    done = lo
    for at, part in tables:
        a, b = max(at, lo), min(at + len(part), hi)
        if a >= b:
            continue
        if a > done:
            table[done - lo : a - lo] = np.fromiter(rec[done:a], dtype=RECORD, count=a - done)
        table[a - lo : b - lo] = part.rows()[a - at : b - at]
        done = b
    if done < hi:
        table[done - lo :] = np.fromiter(rec[done:hi], dtype=RECORD, count=hi - done)
    return table


def timelines(closed: list[ClosedBlock]) -> tuple[Records, tuple[BlockTimeline, ...]]:
    """All blocks' columns concatenated, and each block's timeline as a view into them.

    The blocks' own columns are freed as they are joined (`Records.concat`).
    """
    records = Records.concat([c.columns for c in closed])
    nb = len(closed)
    # The scalar clock moved by issue costs, recorded scalar work and recorded scalar waits:
    # what is left after the recorded scalar intervals is issue cycles.
    on_scalar = np.bincount(
        records.block, weights=(records.end - records.start) * (records.pipe == S), minlength=nb
    ).tolist()
    return records, records.timelines(
        (c.block, c.core, c.wave, c.t_start, c.t_end, max(c.issued - on_scalar[i], 0.0))
        for i, c in enumerate(closed)
    )


def _intern(values, table: dict) -> np.ndarray:
    """Ids for a column of values, extending `table` (value -> id) as needed: new values in
    sorted order, not a set's (whose order follows the process's string hashes)."""
    mapping = {v: table.setdefault(v, len(table)) for v in sorted(set(values))}
    return np.fromiter(map(mapping.__getitem__, values), np.int32, len(values))
