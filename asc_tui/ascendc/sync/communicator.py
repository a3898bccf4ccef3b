"""The communicator of the HCCL collectives (sync/hccl.py): the world all ranks share.

The k-th collective a block commits on one rank is matched with the k-th collective the same
block index commits on every other rank. The communicator checks that they agree (kind, count,
dtype, reduce op, root) and, once every rank committed, moves the data and releases the waiters
at `max(commit times) + transfer cost`.

Timing (cycles on the scalar lane, a wait record): start-up latency plus bytes over the link
bandwidth (nothing for a single rank), with the usual ring factors: AllReduce 2(N-1)/N x bytes,
AllGather and ReduceScatter (N-1)/N x the gathered bytes, Broadcast 1 x bytes. The constants
come from the chip file's `[hccl]` section when present (`latency_us`, `link_gbps`), else the
public HCCS figure below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from ...npu.errors import OperatorError
from ...npu.numbers.offload import gm_ready
from ..dtypes import as_dtype
from ..lineage import gm_written
from ..memory.tensors import GM_ADDR

#: Defaults when the chip file has no [hccl] section: one HCCS link of a 910B module
#: (56 GB/s per direction is the public HCCS figure; latency is a rough, uncertain estimate).
DEFAULT_LINK_GBPS = 56.0
DEFAULT_LATENCY_US = 5.0


class HcclReduceOp(Enum):
    HCCL_REDUCE_SUM = "sum"
    HCCL_REDUCE_PROD = "prod"
    HCCL_REDUCE_MAX = "max"
    HCCL_REDUCE_MIN = "min"


class HcclDataType(Enum):
    HCCL_DATA_TYPE_INT8 = "int8"
    HCCL_DATA_TYPE_INT16 = "int16"
    HCCL_DATA_TYPE_INT32 = "int32"
    HCCL_DATA_TYPE_INT64 = "int64"
    HCCL_DATA_TYPE_UINT8 = "uint8"
    HCCL_DATA_TYPE_FP16 = "float16"
    HCCL_DATA_TYPE_FP32 = "float32"
    HCCL_DATA_TYPE_BFP16 = "bfloat16"


HCCL_REDUCE_SUM = HcclReduceOp.HCCL_REDUCE_SUM
HCCL_REDUCE_PROD = HcclReduceOp.HCCL_REDUCE_PROD
HCCL_REDUCE_MAX = HcclReduceOp.HCCL_REDUCE_MAX
HCCL_REDUCE_MIN = HcclReduceOp.HCCL_REDUCE_MIN
HCCL_DATA_TYPE_FP16 = HcclDataType.HCCL_DATA_TYPE_FP16
HCCL_DATA_TYPE_FP32 = HcclDataType.HCCL_DATA_TYPE_FP32
HCCL_DATA_TYPE_INT32 = HcclDataType.HCCL_DATA_TYPE_INT32
HCCL_DATA_TYPE_INT8 = HcclDataType.HCCL_DATA_TYPE_INT8
HCCL_DATA_TYPE_BFP16 = HcclDataType.HCCL_DATA_TYPE_BFP16

_REDUCE = {
    HcclReduceOp.HCCL_REDUCE_SUM: np.add.reduce,
    HcclReduceOp.HCCL_REDUCE_PROD: np.multiply.reduce,
    HcclReduceOp.HCCL_REDUCE_MAX: np.maximum.reduce,
    HcclReduceOp.HCCL_REDUCE_MIN: np.minimum.reduce,
}


class CollectiveError(OperatorError):
    """Ranks disagree about a collective (order, count, dtype, op, root) or misuse a handle."""

    kind = "collective"


@dataclass
class CollectiveCall:
    """One collective as one rank committed it."""

    kind: str  # AllReduce / AllGather / ReduceScatter / Broadcast
    rank: int
    block: int
    seq: int  # 0-based index among this block's collectives
    count: int
    dtype: str
    op: str | None
    root: int | None
    send: GM_ADDR | None
    recv: GM_ADDR | None
    file: str
    line: int
    committed: bool = False
    t_commit: float = 0.0  # cycles

    def signature(self) -> tuple:
        return (self.kind, self.count, self.dtype, self.op, self.root)

    def describe(self) -> str:
        extra = f", op={self.op}" if self.op else ""
        extra += f", root={self.root}" if self.root is not None else ""
        return f"{self.kind}(count={self.count}, dtype={self.dtype}{extra})"

    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class _Group:
    """The calls of every rank for one (block, seq)."""

    calls: dict = field(default_factory=dict)  # rank -> CollectiveCall
    done: bool = False
    t_done: float = 0.0


class Communicator:
    """The world all ranks share: matches commits, moves data, times completion."""

    def __init__(self, n_ranks: int, chip=None, scheduler=None):
        self.n_ranks = int(n_ranks)
        self.scheduler = scheduler  # deadlock.RankScheduler when ranks run together
        self.groups: dict[tuple[int, int], _Group] = {}
        hc = chip.section("hccl") if chip is not None and hasattr(chip, "section") else {}
        self.latency_us = float(hc.get("latency_us", DEFAULT_LATENCY_US))
        self.link_gbps = float(hc.get("link_gbps", DEFAULT_LINK_GBPS))

    def group(self, block: int, seq: int) -> _Group:
        key = (block, seq)
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = _Group()
        return g

    def commit(self, call: CollectiveCall) -> None:
        g = self.group(call.block, call.seq)
        for other in g.calls.values():
            if other.kind != call.kind:
                raise CollectiveError(
                    f"collectives called in different order: collective #{call.seq + 1} of "
                    f"block {call.block} is {call.kind} on rank {call.rank} but {other.kind} on "
                    f"rank {other.rank} ({other.where()})",
                    call.file,
                    call.line,
                    hint="every rank must call the same collectives in the same order",
                )
            if other.signature() != call.signature():
                raise CollectiveError(
                    f"mismatched {call.kind} #{call.seq + 1}: rank {call.rank} calls "
                    f"{call.describe()} but rank {other.rank} calls {other.describe()} "
                    f"({other.where()})",
                    call.file,
                    call.line,
                    hint="count, data type, reduce op and root must agree on every rank",
                )
            break
        call.committed = True
        g.calls[call.rank] = call

    def complete(self, block: int, seq: int) -> bool:
        g = self.groups.get((block, seq))
        return g is not None and len(g.calls) == self.n_ranks

    def finish(self, block: int, seq: int, clock_mhz: float) -> float:
        """Move the data once (first waiter) and return the completion time (cycles)."""
        g = self.groups[(block, seq)]
        if not g.done:
            calls = [g.calls[r] for r in range(self.n_ranks)]
            _move(calls)
            nbytes = calls[0].count * as_dtype(calls[0].dtype).itemsize
            n = self.n_ranks
            factor = {
                "AllReduce": 2 * (n - 1) / n,
                "AllGather": (n - 1),
                "ReduceScatter": (n - 1),
                "Broadcast": 1.0 if n > 1 else 0.0,
            }[calls[0].kind]
            us = 0.0 if n == 1 else self.latency_us + factor * nbytes / (self.link_gbps * 1e3)
            g.t_done = max(c.t_commit for c in calls) + us * clock_mhz
            g.done = True
        return g.t_done


def _view(addr: GM_ADDR | None, dtype, count: int) -> np.ndarray | None:
    if addr is None or addr.buffer.data is None:
        return None
    buf = addr.buffer
    gm_ready(buf)
    gm_written(buf)  # the collective may write it: nothing may read it lazily
    byte_off = addr.offset * buf.dtype.itemsize
    raw = buf.data.view(np.uint8)
    nb = count * dtype.itemsize
    if byte_off + nb > raw.size:
        return None
    return raw[byte_off : byte_off + nb].view(dtype)


def _move(calls: list[CollectiveCall]) -> None:
    """The collective's data semantics, rank r's buffers at calls[r]."""
    c0 = calls[0]
    dt = as_dtype(c0.dtype)
    n = len(calls)
    cnt = c0.count
    if c0.kind == "AllReduce":
        srcs = [_view(c.send, dt, cnt) for c in calls]
        if any(s is None for s in srcs):
            return
        stack = np.stack([s.astype(np.float32) if dt.kind == "f" else s for s in srcs])
        out = _REDUCE[HcclReduceOp(c0.op)](stack, axis=0).astype(dt)
        for c in calls:
            dst = _view(c.recv, dt, cnt)
            if dst is not None:
                dst[:] = out
    elif c0.kind == "AllGather":
        srcs = [_view(c.send, dt, cnt) for c in calls]
        if any(s is None for s in srcs):
            return
        out = np.concatenate([s.copy() for s in srcs])
        for c in calls:
            dst = _view(c.recv, dt, cnt * n)
            if dst is not None:
                dst[:] = out
    elif c0.kind == "ReduceScatter":
        srcs = [_view(c.send, dt, cnt * n) for c in calls]
        if any(s is None for s in srcs):
            return
        stack = np.stack([s.astype(np.float32) if dt.kind == "f" else s for s in srcs])
        out = _REDUCE[HcclReduceOp(c0.op)](stack, axis=0).astype(dt)
        for r, c in enumerate(calls):
            dst = _view(c.recv, dt, cnt)
            if dst is not None:
                dst[:] = out[r * cnt : (r + 1) * cnt]
    elif c0.kind == "Broadcast":
        src = _view(calls[c0.root].send, dt, cnt)
        if src is None:
            return
        data = src.copy()
        for r, c in enumerate(calls):
            if r != c0.root:
                dst = _view(c.send, dt, cnt)
                if dst is not None:
                    dst[:] = data
