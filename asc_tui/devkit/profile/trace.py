"""Chrome trace-event JSON of a run (opens in Perfetto and chrome://tracing).

Layout: one process per core (pid = core id), one thread per pipe (tid = pipe index), both named
by metadata events. Every record becomes a complete event ("X") named by its op, category
"work", "wait" (the pipe was blocked on an event) or "set" (a zero-length SetFlag marker), with
args {file, line, code, bytes, block}. Each wait that was released by a recorded instruction
gets a flow ("s" on the releasing instruction → "f" on the wait, bound to the enclosing slice).

Timestamps are integral nanoseconds written as µs, so events that touch in cycles touch in the
file and no two events of a thread overlap. Large runs: at most `limit` events are written —
the earliest ones, cut at a single instant for every thread so the part shown is complete — and
`otherData` says where the cut is.
"""

from __future__ import annotations

import bisect
import json
import linecache
import os
from dataclasses import dataclass

import numpy as np

from ...npu.pipes import PIPE_NAMES
from ...npu.results import KIND_SET, KIND_WAIT, KIND_WORK, EmulationResult
from .breakdown import columns

DEFAULT_LIMIT = 200_000
_CAT = {KIND_WORK: "work", KIND_WAIT: "wait", KIND_SET: "set"}
_PIPE_LABEL = (
    "PIPE_S scalar",
    "PIPE_V vector",
    "PIPE_M cube",
    "PIPE_MTE1 L1→L0",
    "PIPE_MTE2 GM→local",
    "PIPE_MTE3 local→GM",
    "PIPE_FIX fixpipe",
)


@dataclass(frozen=True)
class TraceInfo:
    path: str | None
    events: int  # complete events written
    total: int  # records in the run
    flows: int
    truncated: bool
    cutoff_us: float | None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def build_trace(
    result: EmulationResult, limit: int | None = DEFAULT_LIMIT, core_kind: str = "AIV"
) -> tuple[dict, TraceInfo]:
    """The trace as a JSON-ready dict, and what was written."""
    cols = columns(result)
    n = len(cols)
    ns = 1000.0 / result.clock_mhz
    t0 = np.rint(cols.start * ns).astype(np.int64)
    t1 = np.rint(cols.end * ns).astype(np.int64)
    keep = np.ones(n, dtype=bool)
    cutoff = None
    if limit is not None and n > limit:
        cutoff = int(np.sort(t0, kind="stable")[max(limit, 0)])
        keep = t0 < cutoff
    core = (
        np.array([b.core for b in result.blocks], dtype=np.int64)[cols.block] if n else np.zeros(0, np.int64)
    )
    events = _metadata_events(core, cols, keep, core_kind)
    events += _slice_events(result, cols, core, keep, t0, t1)
    flow_events, flows = _flow_events(cols, core, keep, t0, t1)
    events += flow_events
    info = TraceInfo(
        None, int(keep.sum()), n, flows, cutoff is not None, cutoff / 1000 if cutoff is not None else None
    )
    other = {
        "tool": "asc-tui",
        "chip": result.chip,
        "clock_mhz": result.clock_mhz,
        "block_dim": result.block_dim,
        "events_total": n,
        "events_written": info.events,
        "truncated": info.truncated,
        "cutoff_us": info.cutoff_us,
    }
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}, info


def _metadata_events(core, cols, keep, core_kind: str) -> list[dict]:
    """Name and order the processes (one per core) and threads (one per pipe) that hold kept events."""
    events: list[dict] = []
    for c in sorted(set(core[keep].tolist())):
        events.append(
            {
                "ph": "M",
                "name": "process_name",
                "pid": c,
                "tid": 0,
                "args": {"name": f"core {c} ({core_kind})"},
            }
        )
        events.append(
            {"ph": "M", "name": "process_sort_index", "pid": c, "tid": 0, "args": {"sort_index": c}}
        )
    for c, p in sorted(set(zip(core[keep].tolist(), cols.pipe[keep].tolist()))):
        events.append(
            {"ph": "M", "name": "thread_name", "pid": c, "tid": p, "args": {"name": _PIPE_LABEL[p]}}
        )
        events.append({"ph": "M", "name": "thread_sort_index", "pid": c, "tid": p, "args": {"sort_index": p}})
    return events


def _slice_events(result: EmulationResult, cols, core, keep, t0, t1) -> list[dict]:
    """One complete event per kept record, in (core, pipe, start) order, with its source line."""
    events: list[dict] = []
    code = [linecache.getline(f, ln).strip() for f, ln in result.lines]
    base = [os.path.basename(f) for f, _ in result.lines]
    idx = np.nonzero(keep)[0]
    order = idx[np.lexsort((t0[idx], cols.pipe[idx], core[idx]))]
    ops = result.ops
    blocks = [b.block for b in result.blocks]
    # Python lists in event order: indexing numpy scalars per record costs more than the rest.
    names = [ops[o] for o in cols.op[order].tolist()]
    starts, ends = t0[order].tolist(), t1[order].tolist()
    for name, kind, c, p, ts, te, li, nb, blk in zip(
        names,
        cols.kind[order].tolist(),
        core[order].tolist(),
        cols.pipe[order].tolist(),
        starts,
        ends,
        cols.line[order].tolist(),
        cols.nbytes[order].tolist(),
        cols.block[order].tolist(),
    ):
        events.append(
            {
                "ph": "X",
                "name": name,
                "cat": _CAT.get(kind, "work"),
                "pid": c,
                "tid": p,
                "ts": ts / 1000,
                "dur": (te - ts) / 1000,
                "args": {
                    "file": base[li],
                    "line": int(result.lines[li][1]),
                    "code": code[li],
                    "bytes": nb,
                    "block": blocks[blk],
                },
            }
        )
    return events


def _flow_events(cols, core, keep, t0, t1) -> tuple[list[dict], int]:
    """A flow from each releasing instruction to the wait it released (both kept), and how many."""
    events: list[dict] = []
    flows = 0
    waits = np.nonzero(keep & (cols.kind == KIND_WAIT) & (cols.link >= 0))[0]
    for w in waits.tolist():
        src = int(cols.link[w])
        if not keep[src]:
            continue
        flows += 1
        for ph, i in (("s", src), ("f", w)):
            mid = (int(t0[i]) + int(t1[i])) // 2
            ev = {
                "ph": ph,
                "name": "event",
                "cat": "sync",
                "id": flows,
                "pid": int(core[i]),
                "tid": int(cols.pipe[i]),
                "ts": mid / 1000,
            }
            if ph == "f":
                ev["bp"] = "e"
            events.append(ev)
    return events, flows


def write_trace(
    result: EmulationResult, path: str, limit: int | None = DEFAULT_LIMIT, core_kind: str = "AIV"
) -> TraceInfo:
    trace, info = build_trace(result, limit, core_kind)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(trace, fh, separators=(",", ":"), ensure_ascii=False)
    os.replace(tmp, path)
    return TraceInfo(str(path), info.events, info.total, info.flows, info.truncated, info.cutoff_us)


def validate_trace(trace: dict) -> list[str]:
    """Problems with a trace dict: schema, per-thread nesting (no partial overlap), flow pairs."""
    problems: list[str] = []
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        return ["no traceEvents list"]
    named_p, named_t = set(), set()
    slices: dict[tuple, list] = {}
    flows: dict = {}
    for k, e in enumerate(events):
        ph = e.get("ph")
        if ph == "M":
            if e.get("name") == "process_name":
                named_p.add(e.get("pid"))
            if e.get("name") == "thread_name":
                named_t.add((e.get("pid"), e.get("tid")))
            continue
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            problems.append(f"event {k}: pid/tid must be integers")
            continue
        if not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0:
            problems.append(f"event {k}: bad ts")
            continue
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0 or not e.get("name"):
                problems.append(f"event {k}: complete event needs a name and dur >= 0")
                continue
            a, b = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
            slices.setdefault((e["pid"], e["tid"]), []).append((a, b, k))
        elif ph in ("s", "f"):
            flows.setdefault((e.get("cat"), e.get("name"), e.get("id")), []).append(e)
        else:
            problems.append(f"event {k}: unexpected phase {ph!r}")
    for key, sl in slices.items():
        if key[0] not in named_p:
            problems.append(f"process {key[0]} has no process_name")
        if key not in named_t:
            problems.append(f"thread {key} has no thread_name")
        sl.sort()
        end = -1
        for a, b, k in sl:
            if a < end:
                problems.append(f"event {k} overlaps the previous event of thread {key}")
            end = max(end, b)
    for key, evs in flows.items():
        phs = sorted(e["ph"] for e in evs)
        if phs != ["f", "s"]:
            problems.append(f"flow {key} has phases {phs}, want one 's' and one 'f'")
            continue
        for e in evs:
            th = slices.get((e["pid"], e["tid"]), [])
            t = round(e["ts"] * 1000)
            j = bisect.bisect_right(th, (t, float("inf"), 0)) - 1
            if j < 0 or not th[j][0] <= t <= th[j][1]:
                problems.append(f"flow {key} {e['ph']} at {e['ts']} µs is inside no slice")
    return problems


__all__ = ["build_trace", "write_trace", "validate_trace", "TraceInfo", "DEFAULT_LIMIT", "PIPE_NAMES"]
