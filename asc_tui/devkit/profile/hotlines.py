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

from ...npu.pipes import N_PIPES, PIPE_NAMES, S
from ...npu.results import KIND_WAIT, KIND_WORK, EmulationResult
from .breakdown import Columns


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
        return {
            "file": self.file,
            "line": self.line,
            "code": self.code,
            "calls": self.calls,
            "cycles": self.cycles,
            "share": self.share,
            "pipe": self.pipe,
            "by_pipe": dict(self.by_pipe),
            "wait_cycles": self.wait_cycles,
            "bytes": self.bytes,
        }


# A record's class for the issue attribution, by kind * N_PIPES + pipe: 0 = work issued to a
# pipe other than scalar, 1 = a wait or SetFlag record, 2 = scalar work.
_ISSUED, _SYNC, _SCALAR = 0, 1, 2
_ISSUE_CLASS = np.full(3 * N_PIPES, _SYNC, dtype=np.int64)
_ISSUE_CLASS[KIND_WORK * N_PIPES : (KIND_WORK + 1) * N_PIPES] = _ISSUED
_ISSUE_CLASS[KIND_WORK * N_PIPES + S] = _SCALAR


def issue_weights(result: EmulationResult, cols: Columns, issue_cycles: float | None) -> np.ndarray:
    """Scalar issue cycles attributed to each record (sums to each block's scalar_cycles).

    The per-block, per-class shares are worked out in plain Python (a handful of blocks) and
    spread over the records with one table lookup: small runs pay per numpy call, not per
    record.
    """
    if len(cols) == 0:
        return np.zeros(0)
    per_kind = cols.counts.sum(axis=2).tolist()  # [blocks, kind]: records
    on_scalar = cols.counts[:, KIND_WORK, S].tolist()
    share = []  # per block: cycles per issued, per sync and per scalar record
    for b, (n_work, n_wait, n_set), n_scalar in zip(result.blocks, per_kind, on_scalar):
        ni, ns = n_work - n_scalar, n_wait + n_set
        scalar = b.scalar_cycles
        if not ni + ns:  # a block of scalar records only: they carry the issue cycles
            share += (0.0, 0.0, scalar / max(len(b), 1))
        elif issue_cycles is None:  # unknown chip: spread evenly over everything issued
            share += (scalar / (ni + ns), scalar / (ni + ns), 0.0)
        else:
            direct = min(ni * issue_cycles, scalar)
            per_work, rest = (direct / ni if ni else 0.0), scalar - direct
            # queue/flag operations leave wait and SetFlag records: the rest goes there
            share += (per_work, rest / ns, 0.0) if ns else (per_work + rest / ni, 0.0, 0.0)
    return np.array(share)[cols.block * 3 + _ISSUE_CLASS[cols.slot]]


def hot_lines(result: EmulationResult, cols: Columns, issue_cycles: float | None) -> tuple[HotLine, ...]:
    """Every source line that issued something, most expensive first."""
    nl = len(result.lines)
    if nl == 0 or len(cols) == 0:
        return ()
    # One bincount per figure over (line, kind, pipe) keys; the rest is a few numbers per line,
    # done in plain Python (small runs pay per numpy call, not per line).
    sums = (
        np.bincount(cols.line * (3 * N_PIPES) + cols.slot, weights=cols.dur, minlength=nl * 3 * N_PIPES)
        .reshape(nl, 3, N_PIPES)
        .tolist()
    )
    issue = np.bincount(cols.line, weights=issue_weights(result, cols, issue_cycles), minlength=nl).tolist()
    calls = np.bincount(cols.line, minlength=nl).tolist()
    nbytes = np.bincount(cols.line, weights=cols.nbytes, minlength=nl).tolist()  # 0 off work
    by = [kinds[KIND_WORK] for kinds in sums]
    for row, extra in zip(by, issue):
        row[S] += extra
    cycles = [sum(row) for row in by]
    total = sum(cycles)
    for file in {f for f, _ in result.lines}:
        linecache.checkcache(file)
    out = []
    for i in sorted(range(nl), key=cycles.__getitem__, reverse=True):  # stable: ties by line id
        file, line = result.lines[i]
        row, c = by[i], cycles[i]
        out.append(
            HotLine(  # positional: a frozen dataclass's keyword init costs ~50% more
                file,
                line,
                linecache.getline(file, line).strip(),
                calls[i],
                c,
                c / total if total > 0 else 0.0,
                PIPE_NAMES[row.index(max(row)) if c > 0 else S],
                {PIPE_NAMES[p]: v for p, v in enumerate(row) if v > 0},
                sum(sums[i][KIND_WAIT]),
                int(nbytes[i]),
            )
        )
    return tuple(out)


def short_path(file: str) -> str:
    return os.path.basename(file)
