"""The tune cache: one row per evaluated config in the project store, written immediately.

Key: (operator source hash, case, chip, engine, params). The source hash ignores the PARAMS
current-choice literals (so `--apply` keeps the cache); `chip` includes a hash of the chip file
and `engine` a hash of the emulator's sources, so an edited operator, chip model or timing model
re-tunes only what it changed. Every row is its own committed transaction (SQLite WAL): a
SIGKILL loses at most the configs that were still being evaluated, never a half-written row.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ... import PACKAGE_DIR
from ...npu.chip import ChipModel
from ..store import Store

DDL = """
CREATE TABLE IF NOT EXISTS tune_cache (
    op_hash   TEXT NOT NULL,
    operator  TEXT NOT NULL,
    case_name TEXT NOT NULL,
    chip      TEXT NOT NULL,
    engine    TEXT NOT NULL,
    params    TEXT NOT NULL,
    status    TEXT NOT NULL,      -- 'ok' or 'error' (a failed evaluation is not re-run)
    time_us   REAL,               -- simulated time incl. launch overhead (µs)
    kernel_us REAL,               -- simulated kernel time (µs)
    gflops    REAL,
    ub_bytes  INTEGER,            -- peak UB use per core (bytes)
    detail    TEXT,               -- error text, or JSON of extra figures
    created   REAL NOT NULL,      -- unix time
    PRIMARY KEY (op_hash, case_name, chip, engine, params)
);
CREATE INDEX IF NOT EXISTS tune_cache_op ON tune_cache (operator, case_name, chip)
"""


@dataclass(frozen=True)
class Outcome:
    """What one evaluation of a config produced (the cache row, the progress event payload)."""

    key: str
    params: dict
    time_us: float | None
    kernel_us: float | None = None
    gflops: float | None = None
    ub_bytes: int | None = None
    error: str | None = None
    cached: bool = False
    transient: bool = False  # the worker died, not the config: never cached, retried next time
    timed_out: bool = False  # hit the timeout (transient: a larger limit may finish it)
    skipped: bool = False  # not run: its family timed out (families.py; transient too)

    @property
    def ok(self) -> bool:
        return self.error is None and self.time_us is not None

    def to_dict(self) -> dict:
        d = {"params": self.params}
        if self.ok:
            d.update(
                time_us=self.time_us, kernel_us=self.kernel_us, gflops=self.gflops, ub_bytes=self.ub_bytes
            )
        else:
            d["error"] = self.error
        d["cached"] = self.cached
        if self.timed_out or self.skipped:
            d["stopped"] = "timeout" if self.timed_out else "skipped"
        return d


@lru_cache(maxsize=1)
def engine_hash() -> str:
    """Hash of the emulator's sources (kernel API + NPU model): timing changes invalidate."""
    h = hashlib.sha256()
    for sub in ("ascendc", "npu"):
        for p in sorted((PACKAGE_DIR / sub).rglob("*.py")):
            h.update(p.relative_to(PACKAGE_DIR).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:12]


def chip_key(chip: ChipModel) -> str:
    try:
        digest = hashlib.sha256(Path(chip.path).read_bytes()).hexdigest()[:8]
    except OSError:
        digest = "nofile"
    return f"{chip.name}:{digest}"


class TuneCache:
    """Read and append results of one (operator version, case, chip) scope."""

    def __init__(self, store: Store, operator: str, op_hash: str, case: str, chip: ChipModel):
        self.store = store
        store.ensure(DDL)
        self.operator = operator
        self.scope = (op_hash, case, chip_key(chip), engine_hash())

    def load(self) -> dict[str, Outcome]:
        rows = self.store.conn.execute(
            "SELECT params, status, time_us, kernel_us, gflops, ub_bytes, detail FROM tune_cache"
            " WHERE op_hash=? AND case_name=? AND chip=? AND engine=?",
            self.scope,
        ).fetchall()
        out = {}
        for params, status, t, k, g, ub, detail in rows:
            out[params] = Outcome(
                params,
                json.loads(params),
                t if status == "ok" else None,
                k,
                g,
                ub,
                detail if status != "ok" else None,
                cached=True,
            )
        return out

    def put(self, outcome: Outcome) -> None:
        """Append one result, committed before returning."""
        status = "ok" if outcome.ok else "error"
        with self.store.transaction() as c:
            c.execute(
                "INSERT OR REPLACE INTO tune_cache (op_hash, case_name, chip, engine, params,"
                " operator, status, time_us, kernel_us, gflops, ub_bytes, detail, created)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    *self.scope,
                    outcome.key,
                    self.operator,
                    status,
                    outcome.time_us,
                    outcome.kernel_us,
                    outcome.gflops,
                    outcome.ub_bytes,
                    outcome.error if not outcome.ok else None,
                    time.time(),
                ),
            )

    def clear(self) -> int:
        """Forget this scope's rows (`tune --fresh`); returns how many were removed."""
        with self.store.transaction() as c:
            cur = c.execute(
                "DELETE FROM tune_cache WHERE op_hash=? AND case_name=? AND chip=? AND engine=?", self.scope
            )
            return cur.rowcount
