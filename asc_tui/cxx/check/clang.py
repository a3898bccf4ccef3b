"""Running libclang on one translation unit: the user's files as they are, the SDK stand-in.

The unit is parsed as CUDA host code (`-x cuda --cuda-host-only`): that is how clang reads
`k<<<blocks, 0, stream>>>(…)` launches; `#pragma clang force_cuda_host_device` makes every
function callable from a kernel (Ascend C has no host/device split at the source level). No
system header is read (`-nostdinc`): every include that is not a file of the project becomes
the stand-in (stubs.py), handed to clang as an unsaved file.
"""

from __future__ import annotations

import atexit
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from . import stubs

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)', re.M)

_STATE: dict = {}


def index():
    """libclang's Index, or None (once, with a one-line notice) when the library cannot load."""
    if "index" not in _STATE:
        try:
            from clang import cindex

            _STATE["index"] = cindex.Index.create()
            _STATE["cindex"] = cindex
            atexit.register(_STATE.clear)  # free the index while cindex is still alive
        except Exception as exc:  # noqa: BLE001 - any failure to load means: no check
            _STATE["index"] = None
            print(f"asc-tui: whole-file C++ check skipped (libclang unavailable: {exc})", file=sys.stderr)
    return _STATE["index"]


@dataclass(frozen=True)
class Note:
    file: str | None
    line: int
    column: int
    text: str


@dataclass(frozen=True)
class Diag:
    """One clang error: where, the message, clang's category, its option and its notes."""

    file: str | None
    line: int
    column: int
    text: str
    category: str
    option: str
    notes: tuple[Note, ...]
    ranges: tuple[tuple[int, int, int, int], ...]  # (line, col, end line, end col) in `file`


ARGS = (
    "-x",
    "cuda",
    "--cuda-host-only",
    "-nocudainc",
    "-nocudalib",
    "-std=c++17",
    "-nostdinc",
    "-nostdinc++",
    "-ferror-limit=0",
    "-fsyntax-only",
)


def _pch(idx):
    """The stand-in, precompiled once per asc-tui version (a file in the cache directory):
    parsing it is most of a check's time. None when it cannot be built or saved."""
    if "pch" in _STATE:
        return _STATE["pch"]
    from ..cache import cache_dir
    from .version import VERSION

    target = cache_dir().parent / "check" / f"sdk-{VERSION}.pch"
    _STATE["pch"] = None
    if not target.is_file():
        try:
            cindex = _STATE["cindex"]
            src = stubs.PRELUDE_PCH
            unsaved = [(stubs.SDK_HEADER, stubs.sdk_header()), (src, stubs.prelude({}))]
            args = [a for a in ARGS if a != "-fsyntax-only"]
            tu = idx.parse(src, [*args, f"-I{stubs.SDK_DIR}"], unsaved_files=unsaved,
                           options=cindex.TranslationUnit.PARSE_INCOMPLETE)  # fmt: skip
            if any(d.severity >= cindex.Diagnostic.Error for d in tu.diagnostics):
                return None
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(f".{os.getpid()}.tmp")
            tu.save(str(tmp))
            os.replace(tmp, target)
        except Exception:  # noqa: BLE001 - no PCH: the stand-in is parsed with each unit
            return None
    _STATE["pch"] = target
    return target


def _pch_refused(tu, cindex, files) -> bool:
    """A fatal error outside the user's files (a stale or foreign precompiled header)."""
    return any(
        d.severity >= cindex.Diagnostic.Fatal
        and (d.location.file is None or d.location.file.name not in files)
        for d in tu.diagnostics
    )


def project_files(path: Path, text: str | None = None) -> tuple[dict[str, str], set[str]]:
    """The unit's own files (main file and the local headers it includes, by any branch) with
    their text, and the include names that are not project files (the stand-in answers them)."""
    files: dict[str, str] = {}
    sdk: set[str] = set()
    todo = [(path, text)]
    while todo:
        p, t = todo.pop()
        key = str(p)
        if key in files:
            continue
        try:
            t = p.read_text(encoding="utf-8", errors="replace") if t is None else t
        except OSError:
            continue
        files[key] = t
        for m in _INCLUDE.finditer(t):
            name = m.group(1) or m.group(2)
            cand = p.parent / name
            if m.group(1) and cand.is_file():
                todo.append((cand, None))
            else:
                sdk.add(name)
    return files, sdk


def run(path: str | Path, defines: dict | None = None, text: str | None = None, names: bool = False):
    """The errors clang reports for the unit (in user files and the stand-in alike), the user
    files it read with their text, and (`names`) the names the user's files declare. Raises
    nothing; an unloadable libclang gives no errors."""
    idx = index()
    path = Path(path)
    files, sdk = project_files(path, text)
    if idx is None:
        return ([], files, set()) if names else ([], files)
    cindex = _STATE["cindex"]
    defines = {k: str(v) for k, v in (defines or {}).items()}
    pch = _pch(idx)
    if pch is not None:  # the stand-in precompiled: only the user's defines are read again
        unsaved = [(stubs.PRELUDE, stubs.user_prelude(defines))]
        unsaved += [(f"{stubs.SDK_DIR}/{n}", "#pragma once\n" + stubs.header_extra(n)) for n in sorted(sdk)]
        pre = ["-include-pch", str(pch), "-include", stubs.PRELUDE]
    else:
        unsaved = [(stubs.SDK_HEADER, stubs.sdk_header()), (stubs.PRELUDE, stubs.prelude(defines))]
        stub = f'#pragma once\n#include "{stubs.SDK_HEADER}"\n'
        unsaved += [(f"{stubs.SDK_DIR}/{n}", stub + stubs.header_extra(n)) for n in sorted(sdk)]
        pre = ["-include", stubs.PRELUDE]
    if text is not None:
        unsaved.append((str(path), text))
    args = [*ARGS, f"-I{stubs.SDK_DIR}", "-I" + str(path.parent), *pre]
    try:
        tu = idx.parse(str(path), args, unsaved_files=unsaved, options=0)
    except cindex.TranslationUnitLoadError:
        tu = None
    if pch is not None and (tu is None or _pch_refused(tu, cindex, files)):
        _STATE["pch"] = None  # a PCH this libclang cannot use: the stand-in as text, from now on
        return run(path, defines, text, names)
    if tu is None:
        return ([], files, set()) if names else ([], files)
    out = []
    for d in tu.diagnostics:
        if d.severity < cindex.Diagnostic.Error:
            continue
        loc = d.location
        notes = tuple(
            Note(
                n.location.file.name if n.location.file else None,
                n.location.line,
                n.location.column,
                n.spelling,
            )
            for n in d.children
        )
        ranges = tuple(
            (r.start.line, r.start.column, r.end.line, r.end.column)
            for r in d.ranges
            if r.start.file is not None and loc.file is not None and r.start.file.name == loc.file.name
        )
        out.append(
            Diag(
                loc.file.name if loc.file else None,
                loc.line,
                loc.column,
                d.spelling,
                d.category_name or "",
                d.option or "",
                notes,
                ranges,
            )
        )
    if not names:
        return out, files
    if not any(d.file in files for d in out):
        return out, files, set()  # nothing to judge: the walk over the declarations is skipped
    return out, files, declared_names(tu, files)


def declared_names(tu, files: dict[str, str]) -> set[str]:
    """Every name a declaration in the user's files introduces (namespaces, classes,
    functions, variables, parameters, fields, enumerators, template parameters, macros)."""
    cindex = _STATE["cindex"]
    out: set[str] = set()
    for top in tu.cursor.get_children():
        f = top.location.file
        if f is None or f.name not in files:
            continue
        for c in top.walk_preorder():
            if c.kind.is_declaration() or c.kind == cindex.CursorKind.MACRO_DEFINITION:
                if c.spelling:
                    out.add(c.spelling)
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", "\n".join(files.values()), re.M):
        out.add(m.group(1))
    return out
