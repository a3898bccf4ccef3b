"""Helpers for the block-replay tests (tests/test_*replay*.py): an operator with a case of the
test's own, and the checks that a replayed launch equals the step-by-step one."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from asc_tui.operator import Case


def patched(op, **case):
    """`op` with one more case, "h", of the given fields (a shape the bundled cases lack)."""
    return replace(op, cases={**op.cases, "h": Case("h", case)})


def counted_runs(monkeypatch, program) -> list[int]:
    """The blocks whose numbers `program.run` (a compiled trace's class) gives, as they run."""
    blocks: list[int] = []
    run = program.run

    def counting(self, bs):
        blocks.extend(bs)
        return run(self, bs)

    monkeypatch.setattr(program, "run", counting)
    return blocks


def assert_same(fast, slow, out_fast: dict, out_slow: dict) -> None:
    """Two full launches: the same outputs (bits), timeline, traffic, warnings, log, tables."""
    for name in out_slow:
        assert out_fast[name].tobytes() == out_slow[name].tobytes(), name
    assert fast.timeline_key() == slow.timeline_key()
    assert (fast.gm_read, fast.gm_write) == (slow.gm_read, slow.gm_write)
    assert fast.warnings == slow.warnings and fast.log == slow.log
    assert (fast.ops, fast.lines) == (slow.ops, slow.lines)
    for name in ("block", "pipe", "start", "end", "op", "line", "nbytes", "kind", "link", "offsets"):
        assert np.array_equal(getattr(fast.records, name), getattr(slow.records, name)), name
