"""Chrome trace export: schema, names, per-thread nesting, flow pairs, the event limit."""

from __future__ import annotations

import json

import pytest

from asc_tui.devkit.profile.trace import build_trace, validate_trace, write_trace
from asc_tui.devkit.run.runner import RunRequest, run


@pytest.fixture(scope="module")
def emulation():
    return run(RunRequest("add_custom", params={"buffer_num": 1}, timing_only=True)).emulation


def test_trace_of_a_bundled_operator_is_valid(emulation):
    trace, info = build_trace(emulation)
    assert validate_trace(trace) == []
    assert info.events == info.total == sum(len(b) for b in emulation.blocks)
    assert not info.truncated


def test_one_named_process_per_core_and_one_named_thread_per_pipe(emulation):
    trace, _ = build_trace(emulation)
    ev = trace["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
    assert sorted(procs) == sorted({b.core for b in emulation.blocks})
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    used = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "X"}
    assert used == set(threads)
    assert threads[(0, 4)].startswith("PIPE_MTE2")


def test_complete_events_carry_op_line_code_and_bytes(emulation):
    trace, _ = build_trace(emulation)
    copies = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"] == "DataCopy" and e["tid"] == 4]
    assert copies
    a = copies[0]["args"]
    assert a["file"] == "add_custom.py" and a["bytes"] == 4096
    assert "DataCopy" in a["code"] and isinstance(a["line"], int)
    assert {e["cat"] for e in trace["traceEvents"] if e["ph"] == "X"} >= {"work", "wait"}


def test_every_wait_released_by_a_recorded_instruction_gets_a_flow(emulation):
    trace, info = build_trace(emulation)
    starts = [e for e in trace["traceEvents"] if e["ph"] == "s"]
    ends = [e for e in trace["traceEvents"] if e["ph"] == "f"]
    linked = sum(int(((b.kind == 1) & (b.link >= 0)).sum()) for b in emulation.blocks)
    assert len(starts) == len(ends) == info.flows == linked > 0
    assert {e["id"] for e in starts} == {e["id"] for e in ends}
    assert all(e["bp"] == "e" for e in ends)


def test_trace_limit_keeps_the_earliest_events_and_stays_valid(emulation):
    trace, info = build_trace(emulation, limit=100)
    assert info.truncated and info.events <= 100
    xs = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == info.events
    assert max(e["ts"] for e in xs) < info.cutoff_us
    assert trace["otherData"]["truncated"] is True
    assert validate_trace(trace) == []


def test_written_file_loads_as_json(emulation, tmp_path):
    path = tmp_path / "t.json"
    info = write_trace(emulation, str(path))
    data = json.loads(path.read_text())
    assert info.path == str(path)
    assert validate_trace(data) == []


def test_validator_rejects_overlaps_unnamed_threads_and_dangling_flows():
    meta = [
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "c"}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "v"}},
    ]
    overlap = meta + [
        {"ph": "X", "name": "a", "pid": 0, "tid": 1, "ts": 0, "dur": 2},
        {"ph": "X", "name": "b", "pid": 0, "tid": 1, "ts": 1, "dur": 2},
    ]
    assert any("overlaps" in p for p in validate_trace({"traceEvents": overlap}))
    unnamed = meta + [{"ph": "X", "name": "a", "pid": 0, "tid": 2, "ts": 0, "dur": 1}]
    assert any("thread_name" in p for p in validate_trace({"traceEvents": unnamed}))
    dangling = meta + [
        {"ph": "X", "name": "a", "pid": 0, "tid": 1, "ts": 0, "dur": 1},
        {"ph": "s", "name": "e", "cat": "sync", "id": 1, "pid": 0, "tid": 1, "ts": 0.5},
    ]
    assert any("flow" in p for p in validate_trace({"traceEvents": dangling}))
