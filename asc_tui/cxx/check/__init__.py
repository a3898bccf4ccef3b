"""Whole-unit C++ checking with libclang: every file of the unit, code that runs or not.

`check_unit(path, defines)` raises the first user error clang finds (a `ClangError`, a
build error at file:line:col with the checked line) or returns; results are cached by the
content of every file the unit reads. clang.py runs libclang against the generated SDK
stand-in (stubs.py); diagnostics.py decides which errors are the user's.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from .diagnostics import ClangError
from .version import VERSION

__all__ = ["ClangError", "check_unit", "check_beside", "errors_of"]

_MEM: dict[str, list] = {}


def _cache_file(key: str) -> Path:
    from ..cache import cache_dir

    return cache_dir().parent / "check" / f"{key}.json"


def _key(path: str, files: dict[str, str], defines: dict) -> str:
    h = hashlib.sha256()
    for part in (VERSION, path, sorted(files.items()), sorted((k, str(v)) for k, v in defines.items())):
        h.update(repr(part).encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:32]


def errors_of(path: str | Path, defines: dict | None = None, text: str | None = None) -> list[dict]:
    """The user's errors in the unit: dicts with message, file, line, column, text (the line).
    Cached by the content of every project file the unit includes."""
    from . import clang

    path = str(Path(path))
    defines = {k: str(v) for k, v in (defines or {}).items()}
    files, _sdk = clang.project_files(Path(path), text)
    key = _key(path, files, defines)
    hit = _MEM.get(key)
    if hit is not None:
        return hit
    f = _cache_file(key)
    try:
        hit = json.loads(f.read_text())
    except (OSError, ValueError):
        hit = None
    if hit is None:
        if clang.index() is None:
            return []
        try:
            hit = _compute(path, defines, text)
        except Exception as exc:  # noqa: BLE001 - a fault of the check never blocks the user's run
            import sys

            print(f"asc-tui: whole-file C++ check skipped for {Path(path).name} ({exc!r})", file=sys.stderr)
            return []
        _store(f, hit)
    _MEM[key] = hit
    return hit


def _compute(path: str, defines: dict, text: str | None) -> list[dict]:
    from . import clang
    from .diagnostics import select

    diags, files, names = clang.run(path, defines, text, names=True)
    out = []
    for s in select(diags, set(files), names, files):
        d = s.diag
        lines = files.get(d.file, "").split("\n")
        line = lines[d.line - 1] if 0 < d.line <= len(lines) else None
        col = d.column
        if line is not None:  # clang counts bytes; the caret counts characters
            col = len(line.encode("utf-8")[: d.column - 1].decode("utf-8", errors="ignore")) + 1
        out.append({"message": s.message, "file": d.file, "line": d.line, "column": col, "text": line})
    return out


def _store(f: Path, value: list) -> None:
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=f.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump(value, fh)
        os.replace(tmp, f)
    except OSError:
        pass


def check_unit(
    path: str | Path, defines: dict | None = None, text: str | None = None, limit: int = 3
) -> None:
    """Raise the unit's first C++ error (the next few named in its hint), or return."""
    errs = errors_of(path, defines, text)
    if not errs:
        return
    first = errs[0]
    more = [f"{e['message']} at {Path(e['file']).name}:{e['line']}:{e['column']}" for e in errs[1:limit]]
    hint = None
    if more:
        rest = len(errs) - limit
        hint = "also: " + "; ".join(more) + (f" (and {rest} more)" if rest > 0 else "")
    raise ClangError(first["message"], first["file"], first["line"], first["column"], first["text"], hint)


class Pending:
    """A check running in a thread beside the translation (libclang releases the GIL)."""

    def __init__(self, path, defines):
        import threading

        self._exc: BaseException | None = None
        self._t = threading.Thread(target=self._run, args=(path, defines), daemon=True, name="asc-tui-check")
        self._t.start()

    def _run(self, path, defines):
        try:
            check_unit(path, defines)
        except BaseException as exc:  # noqa: BLE001 - handed to result()
            self._exc = exc

    def result(self) -> None:
        """Wait; raise the unit's first error, if any."""
        self._t.join()
        if self._exc is not None:
            exc, self._exc = self._exc, None
            raise exc


def check_beside(path, defines: dict | None = None) -> Pending:
    """Start `check_unit` in a thread: `.result()` raises its error when the caller is ready."""
    return Pending(path, defines)
