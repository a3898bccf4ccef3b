"""Run history and named baselines in the project store.

Every run of run/profile/bench/tune is appended here (`record_run`), so `bench` can compare a run
with the previous one of the same operator + case + chip and explain a slowdown pipe by pipe and
line by line. Records keep what a comparison needs — per-pipe busy/wait times per core (µs) and
per-source-line busy cycles — not the whole timeline.

Appends are single `BEGIN IMMEDIATE` transactions on the WAL store, so several asc-tui processes
can record at once without losing a row.

Seams, should it grow: the record model (`PipeFigures`, `LineCost`, `RunRecord`,
`record_from_report`) from the store queries, and the named baselines (`save_baseline`,
`load_baseline`, `baselines` over `history_baselines`) into their own module.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...npu.results import KIND_WORK, EmulationResult
from ..store import Store

DDL = """
CREATE TABLE IF NOT EXISTS history_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    kind TEXT NOT NULL,
    operator TEXT NOT NULL,
    path TEXT,
    source_hash TEXT,
    case_name TEXT,
    chip TEXT,
    params TEXT NOT NULL DEFAULT '{}',
    shapes TEXT NOT NULL DEFAULT '{}',
    block_dim INTEGER,
    ok INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    time_us REAL,
    kernel_us REAL,
    flops REAL NOT NULL DEFAULT 0,
    io_bytes INTEGER NOT NULL DEFAULT 0,
    pipes TEXT NOT NULL DEFAULT '{}',
    lines TEXT NOT NULL DEFAULT '[]',
    pid INTEGER
);
CREATE INDEX IF NOT EXISTS history_runs_key ON history_runs (operator, case_name, chip, id);
CREATE TABLE IF NOT EXISTS history_baselines (
    name TEXT NOT NULL,
    operator TEXT NOT NULL,
    case_name TEXT NOT NULL,
    chip TEXT NOT NULL,
    run_id INTEGER NOT NULL,
    ts REAL NOT NULL,
    PRIMARY KEY (name, operator, case_name, chip)
);
"""

KINDS = ("run", "profile", "bench", "tune")
TREND_KINDS = ("run", "profile", "bench")  # tuning trials explore other params: not the trend
MAX_LINES = 200  # per-line costs kept per record (the costliest lines)

_COLUMNS = (
    "id",
    "ts",
    "kind",
    "operator",
    "path",
    "source_hash",
    "case_name",
    "chip",
    "params",
    "shapes",
    "block_dim",
    "ok",
    "passed",
    "time_us",
    "kernel_us",
    "flops",
    "io_bytes",
    "pipes",
    "lines",
    "pid",
)


@dataclass(frozen=True)
class PipeFigures:
    """One pipe's figures per core used: busy and wait in µs, instruction count in total."""

    busy_us: float
    wait_us: float
    instructions: int


@dataclass(frozen=True)
class LineCost:
    """Busy cycles (summed over all blocks) spent by instructions issued from one source line."""

    file: str
    line: int
    cycles: float
    text: str = ""

    @property
    def key(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}"


@dataclass(frozen=True)
class RunRecord:
    """One recorded run. Times in µs; `lines` sorted by cost, costliest first."""

    id: int | None
    ts: float
    kind: str
    operator: str
    path: str | None
    source_hash: str | None
    case: str | None
    chip: str | None
    params: dict = field(default_factory=dict)
    shapes: dict = field(default_factory=dict)
    block_dim: int | None = None
    ok: bool = False
    passed: bool = False
    time_us: float | None = None
    kernel_us: float | None = None
    flops: float = 0.0
    io_bytes: int = 0
    pipes: dict[str, PipeFigures] = field(default_factory=dict)
    lines: tuple[LineCost, ...] = ()
    pid: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ts": self.ts,
            "kind": self.kind,
            "operator": self.operator,
            "path": self.path,
            "source_hash": self.source_hash,
            "case": self.case,
            "chip": self.chip,
            "params": self.params,
            "shapes": self.shapes,
            "block_dim": self.block_dim,
            "ok": self.ok,
            "passed": self.passed,
            "time_us": self.time_us,
            "kernel_us": self.kernel_us,
            "flops": self.flops,
            "io_bytes": self.io_bytes,
            "pipes": {
                k: {"busy_us": v.busy_us, "wait_us": v.wait_us, "instructions": v.instructions}
                for k, v in self.pipes.items()
            },
            "lines": [
                {"file": c.file, "line": c.line, "cycles": c.cycles, "text": c.text} for c in self.lines
            ],
        }


def line_costs(em: EmulationResult, limit: int = MAX_LINES) -> tuple[LineCost, ...]:
    """Busy cycles per source line over all blocks (work records only), costliest first."""
    r = em.records
    totals = np.bincount(r.line, weights=(r.end - r.start) * (r.kind == KIND_WORK), minlength=len(em.lines))[
        : len(em.lines)
    ]
    order = np.argsort(-totals, kind="stable")[:limit]
    texts = _SourceTexts()
    out = []
    for i in order:
        if totals[i] <= 0:
            break
        file, line = em.lines[i]
        out.append(LineCost(file, int(line), float(totals[i]), texts.get(file, int(line))))
    return tuple(out)


class _SourceTexts:
    """Reads each source file once (fresh from disk: a saved file must not show stale text)."""

    def __init__(self):
        self._files: dict[str, list[str]] = {}

    def get(self, file: str, line: int) -> str:
        if file not in self._files:
            try:
                self._files[file] = Path(file).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                self._files[file] = []
        lines = self._files[file]
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def record_from_report(report, kind: str) -> RunRecord:
    """The history record of a `RunReport` (devkit/run/runner.py), not yet stored."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    pipes: dict[str, PipeFigures] = {}
    lines: tuple[LineCost, ...] = ()
    ems = _launches(report)
    for e in ems:  # a sample's launches add up: its time is theirs together
        n = max(e.cores_used, 1)
        for name, st in e.pipe_stats().items():
            old = pipes.get(name, PipeFigures(0.0, 0.0, 0))
            pipes[name] = PipeFigures(
                old.busy_us + st.busy_us / n, old.wait_us + st.wait_us / n, old.instructions + st.instructions
            )
    if len(ems) == 1:
        lines = line_costs(ems[0])
    elif ems:
        lines = _merged_lines([line_costs(e) for e in ems])
    return RunRecord(
        id=None,
        ts=time.time(),
        kind=kind,
        operator=report.operator,
        path=report.path,
        source_hash=report.source_hash,
        case=report.case,
        chip=report.chip,
        params=_jsonable(report.params),
        shapes=dict(report.shapes),
        block_dim=report.block_dim,
        ok=bool(report.ok),
        passed=bool(report.passed),
        time_us=sum(e.time_us for e in ems) if ems else None,
        kernel_us=sum(e.kernel_us for e in ems) if ems else None,
        flops=float(report.flops or 0.0),
        io_bytes=int(report.io_bytes or 0),
        pipes=pipes,
        lines=lines,
        pid=os.getpid(),
    )


def _launches(report) -> list:
    """The emulations a run's figures add up: a sample's every launch, else the one."""
    sample = getattr(report, "sample", None)
    ems = [e for e in (sample.emulations if sample is not None else ()) if e is not None]
    if ems:
        return ems
    return [report.emulation] if report.emulation is not None else []


def _merged_lines(per_launch: list[tuple[LineCost, ...]], limit: int = MAX_LINES) -> tuple[LineCost, ...]:
    """The line costs of several launches, summed per file:line, costliest first."""
    total: dict[tuple[str, int], LineCost] = {}
    for costs in per_launch:
        for c in costs:
            old = total.get((c.file, c.line))
            total[(c.file, c.line)] = c if old is None else replace(old, cycles=old.cycles + c.cycles)
    return tuple(sorted(total.values(), key=lambda c: -c.cycles)[:limit])


def open_history(store: Store | None = None) -> Store:
    store = store if store is not None else Store()
    store.ensure(DDL)
    return store


def append(store: Store, rec: RunRecord) -> int:
    """Store one record (one transaction) and return its id."""
    store.ensure(DDL)
    row = (
        rec.ts,
        rec.kind,
        rec.operator,
        rec.path,
        rec.source_hash,
        rec.case,
        rec.chip,
        json.dumps(rec.params, default=str),
        json.dumps(rec.shapes),
        rec.block_dim,
        int(rec.ok),
        int(rec.passed),
        rec.time_us,
        rec.kernel_us,
        rec.flops,
        rec.io_bytes,
        json.dumps({k: [v.busy_us, v.wait_us, v.instructions] for k, v in rec.pipes.items()}),
        json.dumps([[c.file, c.line, c.cycles, c.text] for c in rec.lines]),
        rec.pid,
    )
    with store.transaction() as c:
        cur = c.execute(
            "INSERT INTO history_runs (ts, kind, operator, path, source_hash, case_name, chip, "
            "params, shapes, block_dim, ok, passed, time_us, kernel_us, flops, io_bytes, pipes, "
            "lines, pid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )
        return int(cur.lastrowid)


def record_run(report, kind: str, store: Store | None = None) -> int | None:
    """Append a run to the project history; never breaks the run that is being recorded.

    Call it from any command that ran an operator (`record_run(report, kind="profile")`).
    `report` is a `RunReport`, or a tuning report (`devkit.tuner.session.TuneReport`): its best
    config is recorded, from a timing-only run (deterministic: the same time the tuner saw).
    Returns the record id, or None when nothing was recorded; then, and when the store had to be
    replaced because it was corrupt, a message goes to stderr (nothing is dropped silently).
    Pass your own `store` to collect `store.notices` yourself instead.
    """
    report = _run_report_of(report)
    if report is None:
        return None
    own = store is None
    try:
        store = open_history(store)
    except (sqlite3.Error, OSError) as exc:
        print(f"asc-tui: run history not recorded: {exc}", file=sys.stderr)
        return None
    try:
        if own:
            for notice in store.notices:
                print(f"asc-tui: {notice}", file=sys.stderr)
        return append(store, record_from_report(report, kind))
    except (sqlite3.Error, OSError) as exc:
        print(f"asc-tui: run history not recorded in {store.path}: {exc}", file=sys.stderr)
        return None
    finally:
        if own:
            store.close()


def _run_report_of(report):
    """A RunReport as is; a tuning report becomes the timing-only run of its best config."""
    if hasattr(report, "emulation"):
        return report
    best = getattr(report, "best", None)
    if best is None or not getattr(best, "ok", False):
        return None  # a tune that found nothing has no run to record
    from ..run.runner import RunRequest, run

    rerun = run(
        RunRequest(
            report.path, case=report.case, chip=report.chip, params=dict(best.params), timing_only=True
        )
    )
    if rerun.emulation is None:
        print(
            f"asc-tui: run history: the best config of {report.operator} did not run again "
            f"({'; '.join(e.message for e in rerun.errors)}); not recorded",
            file=sys.stderr,
        )
        return None
    return rerun


def _row_to_record(row: tuple) -> RunRecord:
    d = dict(zip(_COLUMNS, row))
    pipes = {
        k: PipeFigures(float(v[0]), float(v[1]), int(v[2])) for k, v in json.loads(d["pipes"] or "{}").items()
    }
    lines = tuple(LineCost(f, int(ln), float(cy), tx) for f, ln, cy, tx in json.loads(d["lines"] or "[]"))
    return RunRecord(
        id=d["id"],
        ts=d["ts"],
        kind=d["kind"],
        operator=d["operator"],
        path=d["path"],
        source_hash=d["source_hash"],
        case=d["case_name"],
        chip=d["chip"],
        params=json.loads(d["params"] or "{}"),
        shapes=json.loads(d["shapes"] or "{}"),
        block_dim=d["block_dim"],
        ok=bool(d["ok"]),
        passed=bool(d["passed"]),
        time_us=d["time_us"],
        kernel_us=d["kernel_us"],
        flops=d["flops"] or 0.0,
        io_bytes=d["io_bytes"] or 0,
        pipes=pipes,
        lines=lines,
        pid=d["pid"],
    )


_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM history_runs"


def get(store: Store, run_id: int) -> RunRecord | None:
    store.ensure(DDL)
    row = store.conn.execute(f"{_SELECT} WHERE id = ?", (run_id,)).fetchone()
    return _row_to_record(row) if row else None


def previous_run(
    store: Store,
    operator: str,
    case: str,
    chip: str,
    before_id: int | None = None,
    kinds: tuple[str, ...] = TREND_KINDS,
    params: dict | None = None,
) -> RunRecord | None:
    """`previous` by fields, of any operator kind (`params` None: any parameters)."""
    key = RunKey(operator, None, case, chip, None if params is None else _params_key(params))
    return previous(store, key, before_id, kinds)


#: The kind of an operator whose records name no file: rows recorded before C++ operators
#: existed (and stand-ins) were Python operators, so they still match without a migration.
LEGACY_KIND = ".py"


def operator_kind(path: str | None) -> str:
    """An operator's kind: its file's suffix ('.py', '.asc', '.cpp'), so a C++ operator and
    its Python twin of the same name keep apart histories and baselines."""
    return Path(path).suffix if path else LEGACY_KIND


def operator_label(operator: str, path: str | None) -> str:
    """The operator as a bench row names it: a Python operator by its name, any other kind
    with its suffix ('add_custom' and 'add_custom.asc' are two rows, not one)."""
    kind = operator_kind(path)
    return operator if kind == LEGACY_KIND else f"{operator}{kind}"


@dataclass(frozen=True)
class RunKey:
    """What "the same run" means when asking for the previous one: operator name and kind,
    case, chip and parameters (`params` None: any parameters)."""

    operator: str
    kind: str | None  # `operator_kind`; None: any kind
    case: str | None
    chip: str | None
    params: tuple[tuple[str, str], ...] | None = None

    @classmethod
    def of(cls, report, *, any_params: bool = False) -> RunKey:
        """The key of a run report (or record): its operator, file kind, case, chip, params."""
        params = None if any_params else report.params
        return cls.make(report.operator, report.path, report.case, report.chip, params)

    @classmethod
    def make(cls, operator: str, path: str | None, case: str | None, chip: str | None, params) -> RunKey:
        """The key of a run by its fields (`params` None: any parameters)."""
        kind = operator_kind(path)
        return cls(operator, kind, case, chip, None if params is None else _params_key(params))

    def matches(self, rec: RunRecord) -> bool:
        """`rec` is a run of this key (its operator, case and chip are the query's)."""
        if self.kind is not None and operator_kind(rec.path) != self.kind:
            return False
        return self.params is None or _params_key(rec.params) == self.params


def _params_key(params) -> tuple[tuple[str, str], ...]:
    """Parameters as comparable text: JSON-normalised so a stored 64 equals a session's 64."""
    norm = json.loads(json.dumps(_jsonable(params), default=str))
    return tuple(sorted((k, json.dumps(v, sort_keys=True, default=str)) for k, v in norm.items()))


def previous(
    store: Store, key: RunKey, before_id: int | None = None, kinds: tuple[str, ...] = TREND_KINDS
) -> RunRecord | None:
    """The latest timed run of `key` (before the record `before_id` if given): the one
    definition of "the previous run" the workbench, watch and bench compare against.

    Tuning trials are left out by default: they try other parameters on purpose, and the
    reference for "did my change make it slower" is the last run the author looked at.
    """
    for rec in reversed(runs(store, key.operator, key.case, key.chip, kinds, limit=500)):
        if rec.time_us is None or (before_id is not None and rec.id >= before_id):
            continue
        if key.matches(rec):
            return rec
    return None


def runs(
    store: Store,
    operator: str | None = None,
    case: str | None = None,
    chip: str | None = None,
    kinds: tuple[str, ...] | None = None,
    limit: int | None = 50,
) -> list[RunRecord]:
    """Recorded runs, oldest first (the newest `limit` of them); `kinds` None = every kind."""
    store.ensure(DDL)
    where, args = [], []
    for col, val in (("operator", operator), ("case_name", case), ("chip", chip)):
        if val is not None:
            where.append(f"{col} = ?")
            args.append(val)
    if kinds is not None:
        where.append(f"kind IN ({', '.join('?' * len(kinds))})")
        args.extend(kinds)
    sql = _SELECT + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id DESC"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [_row_to_record(r) for r in reversed(store.conn.execute(sql, args).fetchall())]


def count(store: Store) -> int:
    store.ensure(DDL)
    return int(store.conn.execute("SELECT COUNT(*) FROM history_runs").fetchone()[0])


def save_baseline(store: Store, name: str, rec: RunRecord) -> None:
    """Name a recorded run as a baseline for its operator + case + chip (replacing an older one)."""
    if rec.id is None:
        raise ValueError("only a stored record can become a baseline")
    store.ensure(DDL)
    with store.transaction() as c:
        c.execute(
            "INSERT OR REPLACE INTO history_baselines (name, operator, case_name, chip, "
            "run_id, ts) VALUES (?, ?, ?, ?, ?, ?)",
            (name, rec.operator, rec.case, rec.chip, rec.id, time.time()),
        )


def load_baseline(
    store: Store, name: str, case: str, chip: str, operator: str | None = None
) -> RunRecord | None:
    """The run saved as `name` for case + chip; the given operator's own entry first.

    A baseline saved from another operator (e.g. the official one) under the same name and case
    is found too, so `--save-baseline official` on matmul_official serves `--against official`
    on matmul.
    """
    store.ensure(DDL)
    row = store.conn.execute(
        "SELECT run_id FROM history_baselines WHERE name = ? AND case_name = ? AND chip = ? "
        "ORDER BY (operator = ?) DESC, ts DESC LIMIT 1",
        (name, case, chip, operator or ""),
    ).fetchone()
    return get(store, row[0]) if row else None


def baselines(store: Store, operator: str | None = None) -> list[dict[str, Any]]:
    store.ensure(DDL)
    sql = (
        "SELECT b.name, b.operator, b.case_name, b.chip, r.time_us, r.source_hash, b.ts "
        "FROM history_baselines b JOIN history_runs r ON r.id = b.run_id"
    )
    args: tuple = ()
    if operator is not None:
        sql += " WHERE b.operator = ?"
        args = (operator,)
    rows = store.conn.execute(sql + " ORDER BY b.name, b.operator, b.case_name", args).fetchall()
    keys = ("name", "operator", "case", "chip", "time_us", "source_hash", "ts")
    return [dict(zip(keys, r)) for r in rows]


def _jsonable(params) -> dict:
    out = {}
    for k, v in dict(params or {}).items():
        out[k] = v.item() if isinstance(v, np.generic) else v
    return out
