"""`--apply` for C++ operators: the tuned value replaces the C++ literal of the bound constant.

A PARAMS entry bound to a `constexpr`/`const` or `#define` of the kernel (or a local header) has
its current choice in the C++ source; only that literal's characters change. Parameters that
live only in the spec (`block_dim`...) are edited in the spec, as for Python operators.

The spec's `Param(default, ...)` of a bound entry is kept in step (edited to the same value), so
the spec never reads 2048 where the kernel says 8192. Were they out of step anyway (a literal
edited by hand), the C++ literal wins: the loader makes it the parameter's default.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..npu.errors import BuildError
from .translate import Bound, constants_of


@dataclass(frozen=True)
class FileEdit:
    path: str
    before: str
    after: str

    def diff(self) -> str:
        name = Path(self.path).name
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(True), self.after.splitlines(True), f"a/{name}", f"b/{name}"
            )
        )


@dataclass(frozen=True)
class CxxApplyPlan:
    """Same surface as tuner.apply.ApplyPlan; `path`/`after` are the kernel file's."""

    path: str
    files: tuple[FileEdit, ...]

    @property
    def _main(self) -> FileEdit:
        return next(f for f in self.files if f.path == self.path)

    @property
    def before(self) -> str:
        return self._main.before

    @property
    def after(self) -> str:
        return self._main.after

    @property
    def edits(self) -> tuple:
        return tuple(f for f in self.files if f.before != f.after)

    @property
    def changed(self) -> bool:
        return any(f.before != f.after for f in self.files)

    def diff(self) -> str:
        return "".join(f.diff() for f in self.files if f.before != f.after)

    def write(self) -> None:
        for f in self.files:
            if f.before != f.after:
                Path(f.path).write_text(f.after, encoding="utf-8")


def spec_param_names(spec: Path) -> list[str]:
    try:
        tree = ast.parse(spec.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "PARAMS" for t in node.targets
        ):
            if isinstance(node.value, ast.Dict):
                return [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
    return []


def _c_literal(value: Any, old: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    suffix = ""
    stripped = old.rstrip("uUlL")
    if stripped != old and isinstance(value, int):
        suffix = old[len(stripped) :]
    if isinstance(value, float):
        return repr(value) + ("f" if old.rstrip().endswith(("f", "F")) else "")
    return f"{value}{suffix}"


def _replace(text: str, edits: list[tuple[Bound, str]]) -> str:
    lines = text.splitlines(True)
    for b, new in sorted(edits, key=lambda e: (e[0].line, e[0].col), reverse=True):
        ln = lines[b.line - 1]
        end = b.col + len(b.text)
        if ln[b.col : end] != b.text:
            raise BuildError(f"cannot find the literal of {b.name} to edit", b.file, b.line)
        lines[b.line - 1] = ln[: b.col] + new + ln[end:]
    return "".join(lines)


def plan_apply_cxx(
    kernel: str | Path, params: dict[str, Any], plan_spec: Callable[[Path, dict], Any]
) -> CxxApplyPlan:
    """Edits for `params`: bound ones in the C++ literals, and all of them by `plan_spec` (the
    tuner's Python-operator planner) in the spec beside the kernel."""
    kernel = Path(kernel)
    spec = kernel.with_suffix(".py")
    consts = constants_of(kernel)
    names = set(spec_param_names(spec))
    in_cxx = {k: v for k, v in params.items() if k in consts and k in names}
    by_file: dict[str, list] = {}
    for k, v in in_cxx.items():
        b = consts[k]
        new = _c_literal(v, b.text)
        if new != b.text:
            by_file.setdefault(b.file, []).append((b, new))
    files = []
    for f in {str(kernel), *by_file}:
        text = Path(f).read_text(encoding="utf-8")
        files.append(FileEdit(f, text, _replace(text, by_file.get(f, []))))
    if params:  # the bound ones too: the spec's Param defaults stay in step with the literals
        sp = plan_spec(spec, params)
        files.append(FileEdit(str(spec), sp.before, sp.after))
    files.sort(key=lambda f: f.path != str(kernel))
    return CxxApplyPlan(str(kernel), tuple(files))


def choice_free_hash_cxx(kernel: str | Path, fallback: str, spec_hash: Callable[[Path, str], str]) -> str:
    """The kernel's text with the bound literals blanked, plus the spec's choice-free hash
    (`spec_hash`: the tuner's function for Python operators)."""
    kernel = Path(kernel)
    spec = kernel.with_suffix(".py")
    try:
        consts = constants_of(kernel)
        names = set(spec_param_names(spec))
        texts = {}
        for k in names & set(consts):
            b = consts[k]
            texts.setdefault(b.file, []).append((b, "_"))
        h = hashlib.sha256()
        for f in sorted({str(kernel), *texts}):
            h.update(_replace(Path(f).read_text(encoding="utf-8"), texts.get(f, [])).encode())
        h.update(spec_hash(spec, fallback).encode())
        return h.hexdigest()[:16]
    except Exception:
        return fallback


def literal_edits(bounds: dict[str, Bound], values: dict[str, Any]) -> list[FileEdit]:
    """Edits that put `values` into the C++ literals `bounds` locates (a sample's `--apply`)."""
    by_file: dict[str, list[tuple[Bound, str]]] = {}
    for name, v in values.items():
        b = bounds[name]
        if str(v) != b.text.strip():
            by_file.setdefault(b.file, []).append((b, _c_literal(v, b.text)))
    out = []
    for f, edits in by_file.items():
        before = Path(f).read_text(encoding="utf-8")
        out.append(FileEdit(f, before, _replace(before, edits)))
    return out
