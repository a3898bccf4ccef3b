"""`--apply`: write the best parameters back as the operator's current choice.

The current choice lives in the operator file, in the first argument of each `Param(...)` in the
module-level `PARAMS = {...}` dict (`"tile_length": Param(2048, values=[...])` → `Param(8192,
values=[...])`). Only that literal's characters change — found from the AST's node positions —
so comments, layout and everything else stay as the author wrote them. A default given as a
module constant (`Param(TILE, ...)` with `TILE = 2048` at module level) is edited at the
constant's assignment instead.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...npu.errors import BuildError


@dataclass(frozen=True)
class Edit:
    """Replace the source text at (line, col)..(end_line, end_col) (1-based lines, char cols)."""

    name: str
    line: int
    col: int
    end_line: int
    end_col: int
    old: str
    new: str


@dataclass(frozen=True)
class ApplyPlan:
    path: str
    edits: tuple[Edit, ...]
    before: str
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        name = Path(self.path).name
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(True), self.after.splitlines(True), f"a/{name}", f"b/{name}"
            )
        )

    def write(self) -> None:
        Path(self.path).write_text(self.after, encoding="utf-8")


def plan_apply(path: str | Path, params: dict[str, Any]) -> ApplyPlan:
    """Work out the edits that make `params` the file's current choice (no writing)."""
    if Path(path).suffix in (".asc", ".cpp", ".cc", ".cxx"):  # a C++ operator: its literals
        from ...cxx.apply import plan_apply_cxx

        return plan_apply_cxx(path, params, plan_apply)
    path = str(path)
    text = Path(path).read_text(encoding="utf-8")
    tree = ast.parse(text, path)
    params_dict = _find_params_dict(tree, path)
    constants = _module_constants(tree)
    edits = []
    entries = {}
    for k, v in zip(params_dict.keys, params_dict.values):
        if isinstance(k, ast.Constant) and isinstance(k.value, str):
            entries[k.value] = v
    for name, value in params.items():
        node = entries.get(name)
        if node is None:
            raise BuildError(f"PARAMS has no entry {name!r} to apply", path, params_dict.lineno)
        target = _default_node(node)
        if isinstance(target, ast.Name) and target.id in constants:
            target = constants[target.id]
        if not _is_literal(target):
            raise BuildError(
                f"the current choice of {name!r} is not a literal; --apply edits literals only",
                path,
                target.lineno,
                hint=f"write Param(<value>, values=[...]) for {name!r} and re-run",
            )
        if ast.literal_eval(target) == value and type(ast.literal_eval(target)) is type(value):
            continue
        old = ast.get_source_segment(text, target) or ""
        edits.append(
            Edit(
                name,
                target.lineno,
                target.col_offset,
                target.end_lineno,
                target.end_col_offset,
                old,
                _literal(value, old),
            )
        )
    spots: dict[tuple[int, int], Edit] = {}
    for e in edits:
        other = spots.setdefault((e.line, e.col), e)
        if other.new != e.new:
            raise BuildError(
                f"{other.name!r} and {e.name!r} share the constant at line {e.line} "
                "but their best values differ",
                path,
                e.line,
                hint="give each parameter its own literal default",
            )
    edits = list({(e.line, e.col): e for e in edits}.values())
    after = _apply_edits(text, edits)
    return ApplyPlan(path, tuple(edits), text, after)


def choice_free_hash(path: str | Path, fallback: str) -> str:
    """Hash of the operator source with the PARAMS current-choice literals blanked out.

    The tune cache is keyed by it, so `--apply` (which edits only those literals) keeps every
    cached result valid, while any other edit re-tunes. `fallback` when the file has no
    PARAMS dict literal or does not parse.
    """
    import hashlib

    if Path(path).suffix in (".asc", ".cpp", ".cc", ".cxx"):
        from ...cxx.apply import choice_free_hash_cxx

        return choice_free_hash_cxx(path, fallback, choice_free_hash)
    try:
        text = Path(path).read_text(encoding="utf-8")
        tree = ast.parse(text, str(path))
        params_dict = _find_params_dict(tree, str(path))
    except (OSError, SyntaxError, ValueError, BuildError):
        return fallback
    edits = []
    for node in params_dict.values:
        target = _default_node(node)
        if _is_literal(target):
            edits.append(
                Edit("", target.lineno, target.col_offset, target.end_lineno, target.end_col_offset, "", "_")
            )
    return hashlib.sha256(_apply_edits(text, edits).encode("utf-8")).hexdigest()[:16]


def _literal(value: Any, old: str) -> str:
    """Python source for `value`, keeping the author's quote style for strings."""
    text = repr(value)
    if isinstance(value, str) and old.startswith('"') and '"' not in value and "\\" not in text:
        text = '"' + value + '"'
    return text


def _find_params_dict(tree: ast.Module, path: str) -> ast.Dict:
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if any(isinstance(t, ast.Name) and t.id == "PARAMS" for t in targets):
            if isinstance(value, ast.Dict):
                return value
            raise BuildError("PARAMS is not a dict literal; --apply needs PARAMS = {...}", path, node.lineno)
    raise BuildError("the operator declares no PARAMS = {...} to apply to", path, 1)


def _module_constants(tree: ast.Module) -> dict[str, ast.expr]:
    out = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _is_literal(node.value)
        ):
            out[node.targets[0].id] = node.value
    return out


def _default_node(node: ast.expr) -> ast.expr:
    """The expression holding the current choice: Param's first argument, or the plain value."""
    if isinstance(node, ast.Call):
        if node.args:
            return node.args[0]
        for kw in node.keywords:
            if kw.arg == "default":
                return kw.value
    return node


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _apply_edits(text: str, edits: list[Edit]) -> str:
    """AST columns are UTF-8 byte offsets: edit bytes, last edit first."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln.encode("utf-8")))
    data = text.encode("utf-8")
    for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        a = starts[e.line - 1] + e.col
        b = starts[e.end_line - 1] + e.end_col
        data = data[:a] + e.new.encode("utf-8") + data[b:]
    return data.decode("utf-8")
