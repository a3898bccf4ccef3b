"""A sanitizer finding: the one shape every check reports in (msSanitizer's report fields).

Its own module so that the checks (memcheck, racecheck, initcheck, synccheck) and the
dispatcher in `sanitizer` both import it without importing each other.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")

TITLES = {
    "out-of-bounds": "Out-of-bounds access detected",
    "misaligned": "Misaligned access detected",
    "misaligned-length": "Misaligned DataCopy length detected",
    "illegal-vector-param": "Illegal vector mask, repeat or stride detected",
    "use-after-free": "Use-after-free detected",
    "illegal-free": "Illegal free detected",
    "leak": "Memory leak detected",
    "input-overwrite": "Write into an input detected",
    "capacity": "Buffer capacity overflow detected",
    "alloc-exhausted": "Buffer exhaustion detected",
    "race-raw": "Read-after-write race detected",
    "race-war": "Write-after-read race detected",
    "race-waw": "Write-after-write race detected",
    "uninitialized": "Uninitialized read detected",
    "unpaired-set": "Unpaired SetFlag detected",
    "unpaired-wait": "Unpaired WaitFlag detected",
    "redundant-set": "Redundant SetFlag detected",
    "event-ids": "Event IDs exhausted",
    "deadlock": "In-core deadlock detected",
    "queue-misuse": "Queue misuse detected",
}


@dataclass(frozen=True)
class Finding:
    """One sanitizer report, in the shape msSanitizer users read (offsets and sizes in bytes)."""

    tool: str
    kind: str
    file: str | None
    line: int | None
    reason: str
    block: int = -1
    tensor: str | None = None
    memory: str | None = None
    offset: int | None = None
    access: str | None = None  # Read / Write
    size: int | None = None
    pipe: str | None = None
    other: str | None = None  # the other side of a race / the earlier call (file:line)
    states: tuple[str, ...] = ()  # per-pipe state for deadlocks
    count: int = 1

    @property
    def title(self) -> str:
        return TITLES.get(self.kind, self.kind)

    def format(self) -> str:
        parts = [
            f"File: {os.path.basename(self.file) if self.file else '?'}",
            f"Line: {self.line if self.line is not None else '?'}",
        ]
        if self.block >= 0:
            parts.append(f"Block: {self.block}")
        if self.tensor:
            parts.append(f"Tensor: {self.tensor}" + (f" ({self.memory.upper()})" if self.memory else ""))
        if self.offset is not None:
            parts.append(f"Offset: {self.offset}")
        if self.access:
            parts.append(f"Access: {self.access}")
        if self.size is not None:
            parts.append(f"Size: {self.size} bytes")
        if self.pipe:
            parts.append(f"Pipe: {self.pipe}")
        if self.other:
            parts.append(f"Other: {self.other}")
        parts.append(f"Reason: {self.reason}")
        text = f"{self.title}: " + ", ".join(parts)
        if self.count > 1:
            text += f" (x{self.count})"
        for s in self.states:
            text += f"\n    {s}"
        return text

    def to_dict(self) -> dict:
        d = asdict(self)
        d["title"] = self.title
        d["states"] = list(self.states)
        return d
