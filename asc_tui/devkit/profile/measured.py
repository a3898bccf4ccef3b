"""Measured beside emulated: a run's profile next to msprof data of the same case and params.

Imported msprof op directories are paired with the operator, case and (resolved) params they
ran (`remember`: `asc-tui profile OP --import DIR`, `asc-tui calibrate`) in the project store.
`compare` lines an emulated Profile up against a measured one — task duration, and per pipe the
mean time per core, its ratio and its wait ratio — with the error of each (emulated / measured −
1); `lines` is the one text view of it that the CLI and the Profile tab both show.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from ..store import STORE_DIRNAME, STORE_FILENAME, Store, default_root
from .msprof import PIPE_ORDER
from .profiler import Profile

DDL = """
CREATE TABLE IF NOT EXISTS measured_runs (
    operator TEXT NOT NULL,
    case_name TEXT NOT NULL,
    params TEXT NOT NULL,
    directory TEXT NOT NULL,
    ts REAL NOT NULL,
    PRIMARY KEY (operator, case_name, params)
);
"""


def params_key(params: dict) -> str:
    """Params as one canonical string (sorted keys, plain values)."""
    return json.dumps({str(k): params[k] for k in sorted(params)}, sort_keys=True, default=str)


def remember(operator: str, case: str, params: dict, directory: str, store: Store | None = None) -> None:
    """Pair a msprof directory with the operator, case and resolved params it measured."""
    store = store or Store()
    store.ensure(DDL)
    with store.transaction() as c:
        c.execute(
            "INSERT OR REPLACE INTO measured_runs VALUES (?, ?, ?, ?, ?)",
            (operator, case, params_key(params), str(Path(directory).resolve()), time.time()),
        )


def lookup(operator: str, case: str | None, params: dict, root: str | Path | None = None) -> str | None:
    """The msprof directory imported for this operator, case and params, if any (never creates
    a store)."""
    base = Path(root) if root is not None else default_root()
    if not (base / STORE_DIRNAME / STORE_FILENAME).exists():
        return None
    store = Store(base)
    store.ensure(DDL)
    row = store.conn.execute(
        "SELECT directory FROM measured_runs WHERE operator = ? AND case_name = ? AND params = ?",
        (operator, case or "", params_key(params)),
    ).fetchone()
    return row[0] if row else None


@dataclass(frozen=True)
class Figure:
    """One figure measured and emulated. `kind`: "us" (µs per core) or "ratio"."""

    name: str
    kind: str
    emulated: float
    measured: float

    @property
    def error(self) -> float | None:
        """Emulated / measured − 1 (None when nothing was measured)."""
        return self.emulated / self.measured - 1 if self.measured else None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "emulated": self.emulated,
            "measured": self.measured,
            "error": self.error,
        }


@dataclass(frozen=True)
class MeasuredComparison:
    operator: str
    case: str | None
    params: dict
    directory: str
    figures: tuple[Figure, ...]

    def to_dict(self) -> dict:
        return {
            "operator": self.operator,
            "case": self.case,
            "params": dict(self.params),
            "directory": self.directory,
            "figures": [f.to_dict() for f in self.figures],
        }


def _mean(p: Profile, attr: str, pipe: str) -> float:
    n = max(len(p.cores), 1)
    return sum(getattr(c, attr).get(pipe, 0.0) for c in p.cores) / n


def compare(emulated: Profile, measured: Profile, directory: str = "") -> MeasuredComparison:
    """Duration and, for every pipe either side used, time per core, ratio and wait ratio."""
    figs = [Figure("duration", "us", emulated.time_us, measured.time_us)]
    used = [
        q
        for q in PIPE_ORDER
        if any(q in c.busy_us for c in emulated.cores) or any(q in c.busy_us for c in measured.cores)
    ]
    for q in used:
        figs.append(Figure(f"{q} time", "us", _mean(emulated, "busy_us", q), _mean(measured, "busy_us", q)))
        figs.append(Figure(f"{q} ratio", "ratio", _mean(emulated, "ratio", q), _mean(measured, "ratio", q)))
    for q in used:
        em, me = _mean(emulated, "wait_ratio", q), _mean(measured, "wait_ratio", q)
        if em or me:
            figs.append(Figure(f"{q} wait ratio", "ratio", em, me))
    return MeasuredComparison(emulated.operator, emulated.case, dict(emulated.params), directory, tuple(figs))


def lines(cmp: MeasuredComparison) -> list[str]:
    """The comparison as text rows (the CLI and the Profile tab print these)."""

    def fmt(f: Figure, v: float) -> str:
        return f"{v:10.3f}" if f.kind == "us" else f"{v:10.1%}"

    out = [
        f"measured vs emulated  ({cmp.directory})",
        f"{'figure':<18} {'measured':>10} {'emulated':>10} {'error':>8}",
    ]
    for f in cmp.figures:
        unit = " µs" if f.kind == "us" else ""
        err = f"{f.error:+8.1%}" if f.error is not None else f"{'—':>8}"
        out.append(f"{f.name + unit:<18} {fmt(f, f.measured)} {fmt(f, f.emulated)} {err}")
    return out


__all__ = ["remember", "lookup", "compare", "lines", "MeasuredComparison", "Figure"]
