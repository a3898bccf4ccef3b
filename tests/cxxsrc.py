"""Helpers for the C++ front-end tests: translate a snippet and call one of its functions."""

from __future__ import annotations

import textwrap
from pathlib import Path

from asc_tui.cxx.translate import translate


def write(tmp_path: Path, src: str, name: str = "k.asc", **headers: str) -> Path:
    for hname, htext in headers.items():
        (tmp_path / hname.replace("__", ".")).write_text(textwrap.dedent(htext))
    p = tmp_path / name
    p.write_text(textwrap.dedent(src))
    return p


def call(tmp_path: Path, src: str, fn: str = "f", *args, **headers):
    """Translate `src` with `fn` as the entry and call it (plain scalar code needs no NPU)."""
    prog = translate(write(tmp_path, src, **headers), kernel=fn)
    return prog.load()[prog.entry](*args)


def program(tmp_path: Path, src: str, fn: str | None = None, **kw):
    return translate(write(tmp_path, src), kernel=fn, **kw)
