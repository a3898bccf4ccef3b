"""The instruction record: what the emulator writes down for every instruction a core issues.

A core's records (`Core.rec`) are plain tuples in the field order of `RECORD`, one per
instruction, appended in program order; `record` is their constructor. The few per-instruction
paths that cannot afford a call (`Core.work`, the vector DataCopy, TQue waits) build the same
tuple inline and say so. Finished blocks become columns (`npu/columns.py`, `RECORD_COLUMNS`).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np


class Kind(IntEnum):
    """What a record's interval on its pipe was."""

    WORK = 0  # the pipe executed the instruction
    WAIT = 1  # the pipe was blocked on an event (`link` names the record that set it)
    SET = 2  # a SetFlag marker: zero length, when the event was set on this pipe


#: The kinds as plain ints, for per-instruction code and numpy masks.
KIND_WORK, KIND_WAIT, KIND_SET = (int(k) for k in Kind)
#: How many kinds there are (`kind * N_PIPES + pipe` keys have N_KINDS * N_PIPES slots).
N_KINDS = len(Kind)

#: One recorded instruction as `Core.rec` holds it:
#: (pipe, start, end, op name, file, line, bytes moved, kind, linked record index or -1).
#: Times in cycles from kernel start; bytes 0 for waits and SetFlag markers.
RECORD = np.dtype(
    [
        ("pipe", "i1"),
        ("start", "f8"),
        ("end", "f8"),
        ("op", "O"),
        ("file", "O"),
        ("line", "i8"),
        ("nbytes", "i8"),
        ("kind", "i1"),
        ("link", "i4"),
    ]
)

#: The per-record columns of a launch's `Records` and of each `BlockTimeline`, with their
#: dtypes (op and line become ids into the launch's tables).
RECORD_COLUMNS = {
    "pipe": np.int8,
    "start": np.float64,
    "end": np.float64,
    "op": np.int32,
    "line": np.int32,
    "nbytes": np.int64,
    "kind": np.int8,
    "link": np.int32,
}


def record(
    pipe: int, start: float, end: float, op: str, fr, nbytes: int = 0, kind: int = KIND_WORK, link: int = -1
) -> tuple:
    """One record of `op` issued from the user's frame `fr`, as `RECORD` lays it out."""
    return (pipe, start, end, op, fr.f_code.co_filename, fr.f_lineno, nbytes, kind, link)
