"""The project store: one SQLite file under `<project>/.asc-tui/` for history, baselines, caches.

Feature modules own their tables: they call `store.ensure(DDL)` with CREATE ... IF NOT EXISTS.
WAL mode and a busy timeout make several asc-tui processes safe at once. A file that SQLite
cannot read is moved aside (kept, never deleted), a notice is recorded, and a new store starts.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

STORE_DIRNAME = ".asc-tui"
STORE_FILENAME = "store.sqlite3"


def default_root() -> Path:
    return Path(os.environ.get("ASC_TUI_PROJECT", Path.cwd()))


class Store:
    """A thread-safe handle on the project store (one connection per thread)."""

    def __init__(self, root: str | Path | None = None, path: str | Path | None = None):
        base = Path(root) if root is not None else default_root()
        self.path = Path(path) if path is not None else base / STORE_DIRNAME / STORE_FILENAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.notices: list[str] = []
        self._local = threading.local()
        self._ensured: set[str] = set()
        self._open_checked()

    def _open_checked(self) -> None:
        inode = _inode(self.path)
        try:
            conn = self._connect()
            row = conn.execute("PRAGMA quick_check").fetchone()
            if row is None or row[0] != "ok":
                raise sqlite3.DatabaseError(f"quick_check says {row[0] if row else 'nothing'}")
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and _busy(exc):
                raise  # another process holds the lock: the file is fine, never move it
            self._close_thread_conn()
            if inode is not None and _inode(self.path) != inode:
                # another asc-tui process already kept the bad file aside and started anew
                self.notices.append(
                    f"the project store {self.path} was unreadable ({exc}); another asc-tui "
                    "process kept it aside and started a new store"
                )
                self._connect()
                return
            aside = self.path.with_name(
                f"{self.path.stem}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}{self.path.suffix}"
            )
            if self.path.exists():
                os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                side = Path(str(self.path) + suffix)
                if side.exists():
                    os.replace(side, Path(str(aside) + suffix))
            self.notices.append(
                f"the project store {self.path} was unreadable ({exc}); it was kept as "
                f"{aside.name} and a new store was started"
            )
            self._connect()

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 60000")
            _set_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
        return conn

    def _close_thread_conn(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @property
    def conn(self) -> sqlite3.Connection:
        return self._connect()

    def ensure(self, ddl: str) -> None:
        """Create a feature's tables/indexes once per process (idempotent DDL)."""
        if ddl in self._ensured:
            return
        with self.transaction() as c:
            for statement in _statements(ddl):
                c.execute(statement)
        self._ensured.add(ddl)

    def transaction(self):
        return _Tx(self.conn)

    def close(self) -> None:
        self._close_thread_conn()


class _Tx:
    """BEGIN IMMEDIATE … COMMIT: writers queue on the busy timeout instead of failing."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")
        return False


def _set_wal(conn: sqlite3.Connection, patience_s: float = 60.0) -> None:
    """Switch to WAL, retrying while another process holds the lock.

    Why: changing the journal mode needs a lock SQLite does not wait for through the busy
    timeout, so two processes opening a new store at the same moment got "database is locked".
    """
    deadline = time.monotonic() + patience_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _busy(exc: sqlite3.OperationalError) -> bool:
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


def _statements(ddl: str) -> list[str]:
    return [s.strip() for s in ddl.split(";") if s.strip()]
