"""The emulator owns its vocabulary: npu imports nothing above it, and nothing in the emulator
or the kernel API imports itself back in a circle (imports inside functions included)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

import asc_tui
from asc_tui import ascendc
from asc_tui.npu import pipes, positions, records
from asc_tui.npu.columns import close_columns

PACKAGE = Path(asc_tui.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["asc_tui", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str) -> set[str]:
    """Every asc_tui module `name` imports, at the top or inside a function."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def _layer(name: str) -> str:
    return name.split(".")[1] if name.count(".") else ""


def test_npu_imports_nothing_from_the_layers_above_it():
    above = {"ascendc", "devkit", "cli", "tui"}
    wrong = sorted(
        f"{m} -> {t}" for m in MODULES if _layer(m) == "npu" for t in _imports(m) if _layer(t) in above
    )
    assert wrong == []


def test_the_kernel_api_imports_no_tool_or_front_end():
    wrong = sorted(
        f"{m} -> {t}"
        for m in MODULES
        if _layer(m) == "ascendc"
        for t in _imports(m)
        if _layer(t) in {"devkit", "cli", "tui"}
    )
    assert wrong == []


def test_no_module_of_the_emulator_or_kernel_api_is_part_of_an_import_cycle():
    graph = {m: _imports(m) for m in MODULES}
    in_cycle = set()
    for start in (m for m in MODULES if _layer(m) in {"npu", "ascendc"}):
        seen, todo = set(), list(graph[start])
        while todo:
            m = todo.pop()
            if m == start:
                in_cycle.add(start)
                break
            if m not in seen:
                seen.add(m)
                todo.extend(graph[m])
    assert sorted(in_cycle) == []


def test_the_kernel_api_re_exports_the_emulators_pipes_and_positions():
    assert ascendc.Pipe is pipes.Pipe
    assert ascendc.PIPE_MTE2 is pipes.Pipe.PIPE_MTE2
    assert ascendc.TPosition is positions.TPosition
    assert ascendc.QuePosition is positions.TPosition


def test_pipe_indices_and_names_agree():
    assert [p.value for p in pipes.Pipe][: pipes.N_PIPES] == list(range(pipes.N_PIPES))
    assert (pipes.S, pipes.V, pipes.M, pipes.MTE1, pipes.MTE2, pipes.MTE3, pipes.FIX) == tuple(
        range(pipes.N_PIPES)
    )
    assert pipes.PIPE_NAMES[pipes.Pipe.PIPE_MTE2] == "mte2"


def test_the_record_constructor_lays_a_record_out_as_its_columns_expect():
    class Frame:
        class f_code:  # noqa: N801 - mimics a frame
            co_filename = "k.py"

        f_lineno = 12

    rec = records.record(pipes.MTE2, 1.0, 5.0, "DataCopy", Frame, nbytes=64)
    assert len(rec) == len(records.RECORD.names)
    wait = records.record(pipes.V, 5.0, 7.0, "DeQue", Frame, kind=records.KIND_WAIT, link=0)
    cols = close_columns([rec, wait], {}, {})
    assert set(cols) == set(records.RECORD_COLUMNS)
    assert cols["kind"].tolist() == [records.Kind.WORK, records.Kind.WAIT]
    assert cols["nbytes"].tolist() == [64, 0]
    assert cols["link"].tolist() == [-1, 0]
    assert np.array_equal(cols["pipe"], [pipes.MTE2, pipes.V])
