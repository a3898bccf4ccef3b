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
from ..npu.results import KIND_SET, KIND_WAIT, KIND_WORK, EmulationResult
from .breakdown import Columns, bin_sums

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
    """Scalar issue cycles attributed to each record (sums to each block's scalar_cycles)."""
    n = len(cols)
    w = np.zeros(n)
    if n == 0:
        return w
    nb = len(result.blocks)
    scalar = np.array([b.scalar_cycles for b in result.blocks])
    issued = (cols.kind == KIND_WORK) & (cols.pipe != S)
    sync = (cols.kind == KIND_WAIT) | (cols.kind == KIND_SET)
    n_issued = np.bincount(cols.block[issued], minlength=nb)
    n_sync = np.bincount(cols.block[sync], minlength=nb)
    if issue_cycles is None:  # unknown chip: spread evenly over everything issued
        pool = issued | sync
        n_pool = np.bincount(cols.block[pool], minlength=nb)
        pool |= (n_pool == 0)[cols.block]  # a block of scalar records only
        per = scalar / np.maximum(np.bincount(cols.block[pool], minlength=nb), 1)
        w[pool] = per[cols.block[pool]]
        return w
    direct = np.minimum(n_issued * issue_cycles, scalar)
    per_work = np.where(n_issued > 0, direct / np.maximum(n_issued, 1), 0.0)
    w[issued] = per_work[cols.block[issued]]
    rest = scalar - direct
    to_sync = n_sync > 0
    per_sync = np.where(to_sync, rest / np.maximum(n_sync, 1), 0.0)
    w[sync] += per_sync[cols.block[sync]]
    fallback = ~to_sync & (n_issued > 0)
    per_fb = np.where(fallback, rest / np.maximum(n_issued, 1), 0.0)
    w[issued] += per_fb[cols.block[issued]]
    last = ~to_sync & (n_issued == 0)  # only scalar records: they carry the issue cycles
    if last.any():
        n_all = np.bincount(cols.block, minlength=nb)
        per_all = np.where(last, scalar / np.maximum(n_all, 1), 0.0)
        w += per_all[cols.block]
    return w


def hot_lines(result: EmulationResult, cols: Columns, issue_cycles: float | None) -> tuple[
        HotLine, ...]:
    """Every source line that issued something, most expensive first."""
    nl = len(result.lines)
    if nl == 0 or len(cols) == 0:
        return ()
    dur = cols.dur
    work = cols.kind == KIND_WORK
    key = cols.line * N_PIPES + cols.pipe
    by = bin_sums(key[work], dur[work], nl * N_PIPES).reshape(nl, N_PIPES)
    by[:, S] += bin_sums(cols.line, issue_weights(result, cols, issue_cycles), nl)
    wait = cols.kind == KIND_WAIT
    waits = bin_sums(cols.line[wait], dur[wait], nl)
    calls = np.bincount(cols.line, minlength=nl)
    nbytes = bin_sums(cols.line[work], cols.nbytes[work], nl)
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
