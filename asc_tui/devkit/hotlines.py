"""Hot lines: the cost of each source line of the operator, per pipe, summing to the pipe totals.

Work records carry their line, so every pipe's busy cycles land on the line that issued them.
The scalar unit's issue cycles are not recorded per instruction (`BlockTimeline.scalar_cycles`);
they are attributed so that each line's scalar cycles sum exactly to the scalar pipe total:

* every work record on a non-scalar pipe costs the chip's `[scalar] issue_cycles` at its line;
* the rest of the block's issue cycles (queue and flag operations: EnQue/DeQue/AllocTensor/
  FreeTensor/SetFlag/WaitFlag/PipeBarrier) is spread evenly over the block's wait and SetFlag
  records, the only trace those operations leave; a block without any gets it spread over its
  work records (or, with only scalar records, over those).
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass

import numpy as np

from ..ascendc.enums import N_PIPES, PIPE_NAMES
from ..npu.results import KIND_SET, EmulationResult
from .breakdown import Columns

S = 0


@dataclass(frozen=True)
class HotLine:
    file: str
    line: int
    code: str
    calls: int  # instruction records at this line (work, waits, SetFlag markers)
    cycles: float  # busy cycles summed over pipes and blocks (incl. attributed scalar issue)
    share: float  # cycles / all lines' cycles
    pipe: str  # the pipe with most of this line's cycles
    by_pipe: dict  # pipe -> cycles
    wait_cycles: float  # cycles pipes were blocked at this line (kind 1 records)
    bytes: int  # bytes moved by this line's instructions

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "code": self.code, "calls": self.calls,
                "cycles": self.cycles, "share": self.share, "pipe": self.pipe,
                "by_pipe": dict(self.by_pipe), "wait_cycles": self.wait_cycles,
                "bytes": self.bytes}


def issue_weights(result: EmulationResult, cols: Columns, issue_cycles: float | None) -> np.ndarray:
    """Scalar issue cycles attributed to each record (sums to each block's scalar_cycles).

    The per-block shares are worked out in plain Python (a handful of blocks) and spread over
    the records with three vector operations: small runs pay per numpy call, not per record.
    """
    n = len(cols)
    if n == 0:
        return np.zeros(0)
    nb = len(result.blocks)
    issued = cols.work & (cols.pipe != S)
    sync = cols.wait | (cols.kind == KIND_SET)
    n_issued = cols.count[:, S + 1:].sum(axis=1).tolist()  # work records off the scalar pipe
    n_sync = np.bincount(cols.block[sync], minlength=nb).tolist()
    n_all = [len(b) for b in result.blocks]
    per_issued, per_sync, per_any = [0.0] * nb, [0.0] * nb, [0.0] * nb
    for i, b in enumerate(result.blocks):
        scalar, ni, ns = b.scalar_cycles, n_issued[i], n_sync[i]
        if issue_cycles is None:  # unknown chip: spread evenly over everything issued
            if ni + ns:
                per_issued[i] = per_sync[i] = scalar / (ni + ns)
            else:  # a block of scalar records only
                per_any[i] = scalar / max(n_all[i], 1)
            continue
        direct = min(ni * issue_cycles, scalar)
        rest = scalar - direct
        per_work = direct / ni if ni else 0.0
        if ns:  # queue/flag operations leave wait and SetFlag records: the rest goes there
            per_issued[i], per_sync[i] = per_work, rest / ns
        elif ni:
            per_issued[i] = per_work + rest / ni
        else:  # only scalar records: they carry the issue cycles
            per_any[i] = scalar / max(n_all[i], 1)
    block = cols.block
    return (np.array(per_issued)[block] * issued + np.array(per_sync)[block] * sync
            + np.array(per_any)[block])


def hot_lines(result: EmulationResult, cols: Columns, issue_cycles: float | None) -> tuple[
        HotLine, ...]:
    """Every source line that issued something, most expensive first."""
    nl = len(result.lines)
    if nl == 0 or len(cols) == 0:
        return ()
    # Unselected records weigh 0 (adding 0.0 leaves a float sum unchanged): no masked copies.
    dur, work, line = cols.dur, cols.work, cols.line
    by = np.bincount(line * N_PIPES + cols.pipe, weights=dur * work,
                     minlength=nl * N_PIPES).reshape(nl, N_PIPES)
    by[:, S] += np.bincount(line, weights=issue_weights(result, cols, issue_cycles), minlength=nl)
    waits = np.bincount(line, weights=dur * cols.wait, minlength=nl)
    calls = np.bincount(line, minlength=nl)
    nbytes = np.bincount(line, weights=cols.nbytes * work, minlength=nl)
    cycles = by.sum(axis=1)
    total = float(cycles.sum())
    order = np.lexsort((np.arange(nl), -cycles)).tolist()
    for file in {f for f, _ in result.lines}:
        linecache.checkcache(file)
    top = np.argmax(by, axis=1).tolist()
    by_l, cyc_l = by.tolist(), cycles.tolist()
    calls_l, waits_l, bytes_l = calls.tolist(), waits.tolist(), nbytes.tolist()
    out = []
    for i in order:
        file, line = result.lines[i]
        row = by_l[i]
        c = cyc_l[i]
        out.append(HotLine(
            file=file, line=int(line), code=linecache.getline(file, int(line)).strip(),
            calls=calls_l[i], cycles=c, share=c / total if total > 0 else 0.0,
            pipe=PIPE_NAMES[top[i]] if c > 0 else PIPE_NAMES[S],
            by_pipe={PIPE_NAMES[p]: v for p, v in enumerate(row) if v > 0},
            wait_cycles=waits_l[i], bytes=int(bytes_l[i])))
    return tuple(out)


def short_path(file: str) -> str:
    return os.path.basename(file)
