"""Translations cached by content: an unchanged kernel (and headers) costs a hash and a load.

Two levels: this process's memory, and a directory of marshalled results
(`$ASC_TUI_CACHE_DIR` or `~/.cache/asc-tui/cxx`) that survives the fresh worker process of
each run. A key covers the translator version, the main file's text, the parameter overrides,
the entry and its template arguments; the headers a translation read are re-hashed on lookup.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from pathlib import Path

from .translate import VERSION, Bound, ParamSpec, Program, translate

_MEM: dict[str, Program] = {}
_MAX_MEM = 64


def cache_dir() -> Path:
    env = os.environ.get("ASC_TUI_CACHE_DIR")
    if env:
        return Path(env) / "cxx"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "asc-tui" / "cxx"


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:32]


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    except OSError:
        return None


def _fresh(prog: Program) -> bool:
    return all(_read(f) == text for f, text in prog.sources.items())


def get_program(path, kernel=None, overrides=None, template_values=None, defines=None) -> Program:
    """`translate(...)`, from the cache when nothing it read has changed."""
    path = str(Path(path))
    text = _read(path)
    key = _digest(
        VERSION,
        sys.version_info[:2],
        path,
        text,
        kernel,
        sorted((overrides or {}).items()),
        sorted((k, str(v)) for k, v in (template_values or {}).items()),
        sorted((k, str(v)) for k, v in (defines or {}).items()),
    )
    prog = _MEM.get(key)
    if prog is not None and _fresh(prog):
        return prog
    prog = _load(key)
    if prog is None or not _fresh(prog):
        prog = translate(path, kernel, overrides, template_values, defines=defines)
        _store(key, prog)
    if len(_MEM) >= _MAX_MEM:
        _MEM.pop(next(iter(_MEM)))
    _MEM[key] = prog
    return prog


def _load(key: str) -> Program | None:
    f = cache_dir() / f"{key}.bin"
    try:
        d = marshal.loads(f.read_bytes())
        return Program(
            path=d["path"],
            entry=d["entry"],
            kernel=d["kernel"],
            params=tuple(ParamSpec(*p) for p in d["params"]),
            core_type=d["core_type"],
            chunks=tuple(tuple(c) for c in d["chunks"]),
            methods=tuple(tuple(m) for m in d["methods"]),
            sources=dict(d["sources"]),
            bound={b[0]: Bound(*b) for b in d["bound"]},
            constants=dict(d["constants"]),
            cube_only=bool(d["cube_only"]),
        )
    except (OSError, ValueError, EOFError, KeyError, TypeError):
        return None


def _store(key: str, prog: Program) -> None:
    d = {
        "path": prog.path,
        "entry": prog.entry,
        "kernel": prog.kernel,
        "params": [(p.name, p.kind, p.conv) for p in prog.params],
        "core_type": prog.core_type,
        "chunks": [tuple(c) for c in prog.chunks],
        "methods": [tuple(m) for m in prog.methods],
        "sources": prog.sources,
        "bound": [(b.name, b.file, b.line, b.col, b.text) for b in prog.bound.values()],
        "constants": {k: v for k, v in prog.constants.items() if isinstance(v, (int, float, str, bool))},
        "cube_only": prog.cube_only,
    }
    try:
        target = cache_dir()
        target.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(marshal.dumps(d))
        os.replace(tmp, target / f"{key}.bin")
    except (OSError, ValueError):
        pass  # a read-only home: the memory level still works


def clear_memory() -> None:
    _MEM.clear()
