"""The kernel sanitizer: msSanitizer's four tools on the emulator, behind one `Run.san` object.

`Sanitizer(tools=("memcheck", ...))` is handed to `run(..., sanitizer=...)`; the kernel API calls
its hooks (`access`, `set_flag`, `wait_flag`, `barrier`, `queue`, `oob`, `end_block`) and each
enabled tool turns what it sees into `Finding`s. Findings are deduplicated by where they happen
(a bug in a loop is one finding with a count). Guard rails that stop the run (capacity, event ids,
queue misuse) arrive as `ErrorInfo`s; `findings_from_errors` maps them onto the same shape.
"""

from __future__ import annotations

from dataclasses import asdict

from ...npu.errors import ErrorInfo
from .findings import TITLES, TOOLS, Finding
from .initcheck import InitCheck
from .memcheck import MemCheck
from .racecheck import RaceCheck
from .synccheck import SyncCheck

__all__ = ["TITLES", "TOOLS", "Finding", "Sanitizer", "findings_from_errors"]


class Sanitizer:
    """Dispatches the kernel API's hooks to the enabled tools and collects their findings."""

    def __init__(self, tools=TOOLS, extra=()):
        """`extra`: more hooks with the tools' interface that report through their own
        attributes, not findings (the precision check's `NonFiniteTrace`)."""
        tools = tuple(tools)
        unknown = [t for t in tools if t not in TOOLS]
        if unknown:
            raise ValueError(
                f"unknown sanitizer tool(s) {', '.join(unknown)}; choose from {', '.join(TOOLS)}"
            )
        self.tools = tools
        self._found: dict[tuple, list] = {}
        self.inputs: dict = {}  # the operator's input GM buffers -> names (`watch_inputs`)
        made = {"memcheck": MemCheck, "racecheck": RaceCheck, "initcheck": InitCheck, "synccheck": SyncCheck}
        self.checkers = [made[t](self) for t in TOOLS if t in tools] + list(extra)
        self._access = [c.access for c in self.checkers if hasattr(c, "access")]

        def _hooks(name):
            return [getattr(c, name) for c in self.checkers if hasattr(c, name)]

        self._set, self._wait, self._barrier = _hooks("set_flag"), _hooks("wait_flag"), _hooks("barrier")
        self._queue, self._oob, self._end = _hooks("queue"), _hooks("oob"), _hooks("end_block")
        self._parking = [c for c in self.checkers if hasattr(c, "park")]
        self._parked: dict[int, list] = {}
        self._sync = _hooks("block_sync")
        # the per-instruction hooks are bound straight to the tools (no dispatch loop)
        self.access = _fan_out(self._access, _no_access)
        self.queue = _fan_out(self._queue, _no_queue)

    def watch_inputs(self, buffers: dict) -> None:
        """The operator's input GM buffers (GmBuffer -> tensor name): memcheck reports a kernel
        write into one, at its line (the golden reads the inputs as they were)."""
        self.inputs = dict(buffers)

    # ---- sink ----------------------------------------------------------------------------------
    def report(self, finding: Finding) -> None:
        key = (
            finding.tool,
            finding.kind,
            finding.file,
            finding.line,
            finding.tensor,
            finding.access,
            finding.other,
        )
        slot = self._found.get(key)
        if slot is None:
            self._found[key] = [finding, 1]
        else:
            slot[1] += 1

    def findings(self) -> list[Finding]:
        out = []
        for f, n in self._found.values():
            out.append(f if n == 1 else Finding(**{**asdict(f), "count": n, "states": f.states}))
        return out

    def has_report_at(self, file: str | None, line: int | None) -> bool:
        return any(f.file == file and f.line == line for f, _ in self._found.values())

    # ---- hooks (called by the kernel API) ------------------------------------------------------
    # access(core, tensor, start, count, is_write, fr, span=False): one tensor read or write of
    #   the instruction just recorded (core.rec[-1]); start/count in elements of the tensor.
    # queue(core, que, tensor, op, fr): TQue life cycle, op = alloc, enque, deque or free (free
    #   is called before its guards, so memcheck sees double and foreign frees).
    # Both are bound per instance in __init__ (they run per instruction); the rest dispatch here.
    def set_flag(self, core, key, fr) -> None:
        for fn in self._set:
            fn(core, key, fr)

    def wait_flag(self, core, key, fr) -> None:
        for fn in self._wait:
            fn(core, key, fr)

    def barrier(self, core, pipe, fr) -> None:
        for fn in self._barrier:
            fn(core, pipe, fr)

    def oob(self, core, tensor, first: int, count: int, is_write: bool, fr, reason: str) -> None:
        """A bounds guard rail is about to stop the run: record it in the report's shape."""
        for fn in self._oob:
            fn(core, tensor, first, count, is_write, fr, reason)

    def end_block(self, core) -> None:
        for fn in self._end:
            fn(core)

    # Blocks that wait for each other (SyncAll) interleave (npu/coop.py): a block that waits has
    # each tool put its per-block state aside, and gets it back when it resumes.
    def park(self, core) -> None:
        self._parked[id(core)] = [c.park() for c in self._parking]

    def resume(self, core) -> None:
        for c, st in zip(self._parking, self._parked.pop(id(core), ())):
            c.resume(st)

    def block_sync(self, core) -> None:
        """Every block of the launch met (SyncAll): what any block did before is ordered before
        what any block does after."""
        for fn in self._sync:
            fn(core)


def _no_access(core, tensor, start, count, is_write, fr, span=False) -> None:
    pass


def _no_queue(core, que, tensor, op, fr) -> None:
    pass


def _fan_out(fns: list, empty):
    """One callable calling every hook in `fns` in order (the fastest form for 0-4 hooks)."""
    if not fns:
        return empty
    if len(fns) == 1:
        return fns[0]
    if len(fns) == 2:
        a, b = fns

        def two(*args, **kw):
            a(*args, **kw)
            b(*args, **kw)

        return two

    def many(*args, **kw):
        for fn in fns:
            fn(*args, **kw)

    return many


# ---- guard-rail errors → findings ----------------------------------------------------------------
_ERROR_RULES = (
    # (error kind, text in message, tool, finding kind)
    ("kernel", "InitBuffer(", "memcheck", "capacity"),
    ("kernel", "event ids per event type", "synccheck", "event-ids"),
    ("sync", "is out of range", "synccheck", "event-ids"),
    ("sync", "in-core deadlock", "synccheck", "deadlock"),
    ("kernel", "double free", "memcheck", "illegal-free"),
    ("kernel", "does not belong", "memcheck", "illegal-free"),
    ("kernel", "buffer(s) are in use", "memcheck", "alloc-exhausted"),
    ("kernel", "DeQue on empty", "synccheck", "queue-misuse"),
    ("kernel", "EnQue on", "synccheck", "queue-misuse"),
    ("kernel", "outside the GlobalTensor", "memcheck", "out-of-bounds"),
    ("kernel", "outside the LocalTensor", "memcheck", "out-of-bounds"),
    ("kernel", "is outside the tensor", "memcheck", "out-of-bounds"),
    ("kernel", "but it holds", "memcheck", "out-of-bounds"),
    ("kernel", "elements but '", "memcheck", "out-of-bounds"),
    ("kernel", "tensor holds", "memcheck", "out-of-bounds"),  # cube path (L1, L0A/B/C)
    ("kernel", "are there", "memcheck", "out-of-bounds"),
    ("kernel", " aligned", "memcheck", "misaligned"),
    ("kernel", "level-0", "memcheck", "illegal-vector-param"),  # mask, repeatTimes, strides
)


def findings_from_errors(
    errors, tools, san: Sanitizer | None = None
) -> tuple[list[Finding], list[ErrorInfo]]:
    """Map guard-rail errors onto findings of the enabled tools; return (findings, the rest).

    An error a tool already reported with more detail (same file and line) is not repeated.
    """
    found, rest = [], []
    for e in errors:
        rule = next((r for r in _ERROR_RULES if r[0] == e.kind and r[1] in e.message), None)
        if rule is None or rule[2] not in tools:
            rest.append(e)
            continue
        if san is not None and san.has_report_at(e.file, e.line):
            continue
        block = -1
        msg = e.message
        if msg.startswith("block ") and ": " in msg:
            head, msg = msg.split(": ", 1)
            try:
                block = int(head.split()[1])
            except (IndexError, ValueError):
                block = -1
        found.append(Finding(rule[2], rule[3], e.file, e.line, msg, block=block))
    return found, rest
