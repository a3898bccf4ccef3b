"""synccheck: unpaired or redundant SetFlag/WaitFlag and in-core deadlocks, per block.

- A WaitFlag with no earlier SetFlag of the same (event, id) would hang its pipe forever: an
  in-core deadlock, reported with every pipe's state (what it last ran, and until when).
- A SetFlag of an (event, id) that is already set and not yet waited is redundant: hardware
  flags are one bit, so the second set is lost and a later WaitFlag pairs with the wrong one.
- A SetFlag still pending when the block ends was never waited (unpaired).
Event ids out of range and queue buffers beyond the ids are guard rails (`findings_from_errors`).
"""

from __future__ import annotations

from ...npu.pipes import N_PIPES, PIPE_NAMES
from ...npu.results import KIND_WAIT
from .findings import Finding


def _label(key) -> str:
    event, event_id = key
    return f"{event.name}, {event_id}"


def pipe_states(core, waiting: int | None = None, what: str = "") -> tuple[str, ...]:
    """One line per pipe that did anything: its last instruction, line and finish time."""
    out = []
    for p in range(N_PIPES):
        idx = core.last[p]
        if p == waiting:
            out.append(f"{PIPE_NAMES[p]:<8} blocked: {what}")
            continue
        if idx < 0:
            continue
        rec = core.rec[idx]
        state = "waiting" if rec[7] == KIND_WAIT else "idle"
        out.append(f"{PIPE_NAMES[p]:<8} {state} after {rec[3]} (line {rec[5]}) at cycle {core.tp[p]:,.0f}")
    return tuple(out)


class SyncCheck:
    tool = "synccheck"

    def __init__(self, san):
        self.san = san
        self.core = None
        self.pending: dict = {}

    def park(self):
        st, self.core, self.pending = (self.core, self.pending), None, {}
        return st

    def resume(self, st) -> None:
        self.core, self.pending = st

    def _at(self, core) -> None:
        if core is not self.core:
            self.core = core
            self.pending = {}

    def set_flag(self, core, key, fr) -> None:
        self._at(core)
        q = self.pending.setdefault(key, [])
        if q:
            prev = q[-1]
            self.san.report(
                Finding(
                    self.tool,
                    "redundant-set",
                    fr.f_code.co_filename,
                    fr.f_lineno,
                    f"SetFlag({_label(key)}) while the same flag, set at line {prev[1]}, has not "
                    "been waited yet: flags are one bit, this set is lost",
                    block=core.block,
                    pipe=PIPE_NAMES[int(key[0].value[0])],
                    other=f"SetFlag at line {prev[1]}",
                )
            )
        q.append((fr.f_code.co_filename, fr.f_lineno))

    def wait_flag(self, core, key, fr) -> None:
        self._at(core)
        q = self.pending.get(key)
        if q:
            q.pop(0)
            return
        dst = int(key[0].value[1])
        src = int(key[0].value[0])
        self.san.report(
            Finding(
                self.tool,
                "deadlock",
                fr.f_code.co_filename,
                fr.f_lineno,
                f"WaitFlag({_label(key)}) waits for an event no earlier SetFlag provides: the "
                f"{PIPE_NAMES[dst]} pipe would hang forever waiting for {PIPE_NAMES[src]}",
                block=core.block,
                pipe=PIPE_NAMES[dst],
                states=pipe_states(
                    core, dst, f"WaitFlag({_label(key)}) at line {fr.f_lineno}, no SetFlag pending"
                ),
            )
        )

    def end_block(self, core) -> None:
        if core is self.core:
            for key, q in self.pending.items():
                for file, line in q:
                    self.san.report(
                        Finding(
                            self.tool,
                            "unpaired-set",
                            file,
                            line,
                            f"SetFlag({_label(key)}) is never waited by a WaitFlag before the block ends",
                            block=core.block,
                            pipe=PIPE_NAMES[int(key[0].value[0])],
                        )
                    )
        self.core = None
        self.pending = {}
