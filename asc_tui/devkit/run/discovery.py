"""Operator discovery, once for every front end: which files are operators, where names are
looked up, and the cases a file declares (read, never executed).

Import-light (no numpy): the workbench lists operators before the emulator stack loads.
`loader` imports operators; this module only finds them.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ... import BUNDLED_OPERATORS
from ...cxx.files import CXX_SUFFIXES, cxx_kernels, find_samples, kernel_for_spec, spec_for_kernel
from ...npu.errors import BuildError


def is_operator_file(path: Path) -> bool:
    """An operator: a Python module `*.py` (not `_helper.py`, not the spec of a C++ kernel
    beside it), or a C++ kernel `.asc`/`.cpp` with its spec beside it."""
    if path.name.startswith("_"):
        return False
    if path.suffix == ".py":
        return kernel_for_spec(path) is None
    return path.suffix in CXX_SUFFIXES and spec_for_kernel(path).is_file()


def find_operators(directory: str | Path) -> list[Path]:
    """The operators in `directory` (C++ ones in `directory/cpp` too, and the sample directories
    anywhere below it, named by their kernel file), resolved and sorted."""
    d = Path(directory)
    python = [p.resolve() for p in d.glob("*.py") if is_operator_file(p)]
    samples = [s.kernel.resolve() for s in find_samples(d)]  # sample directories: their kernel file
    return sorted(python) + [k.resolve() for k in cxx_kernels(d)] + samples


def operator_dirs(root: str | Path | None = None) -> list[Path]:
    """Where operator names are looked up: the given dir, ./operators, then the bundled ones."""
    dirs = []
    if root is not None:
        dirs.append(Path(root))
    dirs.append(Path.cwd() / "operators")
    dirs.append(BUNDLED_OPERATORS)
    seen, out = set(), []
    for d in dirs:
        r = d.resolve()
        if r not in seen and r.is_dir():
            seen.add(r)
            out.append(r)
    return out


def resolve_operator(ref: str, root: str | Path | None = None) -> Path:
    """A path to an operator file, or a name looked up in `operator_dirs`."""
    p = Path(ref)
    if p.suffix in (".py", *CXX_SUFFIXES) or p.exists():
        if not p.exists():
            raise BuildError(f"operator file not found: {ref}")
        return p.resolve()
    for d in operator_dirs(root):
        cand = d / f"{ref}.py"
        if cand.exists():
            return cand
        for cand in cxx_kernels(d):  # C++ operators: operators/cpp/<name>.asc + <name>.py
            if cand.stem == ref:
                return cand
    known = sorted({q.stem for d in operator_dirs(root) for q in find_operators(d)})
    raise BuildError(f"unknown operator {ref!r}; known: {', '.join(known) or 'none'}")


def list_operators(root: str | Path | None = None, include_bugs: bool = False) -> list[Path]:
    """Operator files under the first existing operators dir (bugs/ only when asked)."""
    dirs = operator_dirs(root)
    if not dirs:
        return []
    base = dirs[0]
    files = sorted(p for p in base.glob("*.py") if is_operator_file(p)) + cxx_kernels(base)
    if include_bugs:
        files += sorted(p for p in (base / "bugs").glob("*.py") if is_operator_file(p))
    return files


def declared_cases(path: Path) -> list[str]:
    """Case names from the `CASES = {...}` literal, read with `ast` (never executes the file);
    a C++ kernel's are in its spec."""
    if path.suffix in CXX_SUFFIXES:
        path = spec_for_kernel(path)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "CASES" for t in node.targets
        ):
            if isinstance(node.value, ast.Dict):
                return [
                    k.value
                    for k in node.value.keys
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)
                ]
    return []
