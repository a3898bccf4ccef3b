"""Tier 3 collectives: an `Hccl` object with AllReduce / AllGather / ReduceScatter / Broadcast.

As in Ascend C, a collective is prepared (returns a handle), committed (`Commit(handle)`, or
`commit=True` when preparing) and waited for (`Wait(handle)`). Ranks run together on the
emulator; the communicator they share (sync/communicator.py) matches their calls, checks that
they agree, moves the data and times each collective.

Without a multi-rank runner (a plain `asc-tui run`) a kernel sees one rank: every collective
completes at once and behaves as the identity (AllReduce copies send to recv, and so on).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ...npu import state
from ...npu.errors import KernelError
from ...npu.pipes import MTE3, S
from ..dtypes import as_dtype, dtype_name
from ..memory.tensors import GM_ADDR, GlobalTensor
from .communicator import (
    HCCL_DATA_TYPE_BFP16,
    HCCL_DATA_TYPE_FP16,
    HCCL_DATA_TYPE_FP32,
    HCCL_DATA_TYPE_INT8,
    HCCL_DATA_TYPE_INT32,
    HCCL_REDUCE_MAX,
    HCCL_REDUCE_MIN,
    HCCL_REDUCE_PROD,
    HCCL_REDUCE_SUM,
    CollectiveCall,
    CollectiveError,
    Communicator,
    HcclDataType,
    HcclReduceOp,
)


@dataclass
class HcclContext:
    """What `GetHcclContext()` hands the kernel: this rank's place in the world."""

    rank: int
    comm: Communicator


def GetHcclContext(index: int = 0) -> HcclContext:
    """`GetHcclContext<0>()`: the current run's context (one rank when run alone)."""
    core = state.core
    ctx = core.run.hccl if core is not None else None
    if ctx is None:
        ctx = HcclContext(0, Communicator(1, core.chip if core is not None else None))
        if core is not None:
            core.run.hccl = ctx
    return ctx


@dataclass
class HcclHandle:
    call: CollectiveCall
    waited: bool = False

    def __index__(self) -> int:
        return self.call.seq


class Hccl:
    """`AscendC::Hccl`: collectives between the ranks of a distributed operator."""

    def __init__(self):
        self.ctx: HcclContext | None = None
        self._seq: dict[int, int] = {}

    def Init(self, context: HcclContext | None = None, *_ignored) -> None:
        self.ctx = context if context is not None else GetHcclContext()

    def _context(self) -> HcclContext:
        if self.ctx is None:
            self.ctx = GetHcclContext()
        return self.ctx

    def GetRankId(self) -> int:
        return self._context().rank

    def GetRankDim(self) -> int:
        return self._context().comm.n_ranks

    def Finalize(self) -> None:
        pass

    # ---- preparing ----------------------------------------------------------------------------
    def AllReduce(
        self,
        sendBuf,
        recvBuf,
        count: int,
        dataType,
        op=HCCL_REDUCE_SUM,
        repeat: int = 1,
        commit: bool = False,
    ) -> HcclHandle:
        return self._prepare("AllReduce", sendBuf, recvBuf, count, dataType, op, None, commit)

    def AllGather(
        self,
        sendBuf,
        recvBuf,
        sendCount: int,
        dataType,
        strideCount: int = 0,
        repeat: int = 1,
        commit: bool = False,
    ) -> HcclHandle:
        return self._prepare("AllGather", sendBuf, recvBuf, sendCount, dataType, None, None, commit)

    def ReduceScatter(
        self,
        sendBuf,
        recvBuf,
        recvCount: int,
        dataType,
        op=HCCL_REDUCE_SUM,
        strideCount: int = 0,
        repeat: int = 1,
        commit: bool = False,
    ) -> HcclHandle:
        return self._prepare("ReduceScatter", sendBuf, recvBuf, recvCount, dataType, op, None, commit)

    def Broadcast(self, buf, count: int, dataType, root: int = 0, commit: bool = False) -> HcclHandle:
        return self._prepare("Broadcast", buf, None, count, dataType, None, int(root), commit)

    def _prepare(self, kind, send, recv, count, dtype, op, root, commit) -> HcclHandle:
        fr = sys._getframe(2)
        core = state.core
        ctx = self._context()
        block = core.block
        seq = self._seq.get(block, 0)
        self._seq[block] = seq + 1
        call = CollectiveCall(
            kind,
            ctx.rank,
            block,
            seq,
            int(count),
            _dtype_of(dtype, fr),
            op.value if isinstance(op, HcclReduceOp) else op,
            root,
            _addr(send, fr),
            _addr(recv, fr),
            fr.f_code.co_filename,
            fr.f_lineno,
        )
        core.ts += core.issue
        handle = HcclHandle(call)
        if commit:
            self._commit(handle, fr)
        return handle

    # ---- running ------------------------------------------------------------------------------
    def Commit(self, handle: HcclHandle) -> None:
        self._commit(handle, sys._getframe(1))

    def _commit(self, handle: HcclHandle, fr) -> None:
        call = handle.call
        if call.committed:
            raise CollectiveError(f"{call.kind} handle committed twice", fr.f_code.co_filename, fr.f_lineno)
        core = state.core
        call.file, call.line = fr.f_code.co_filename, fr.f_lineno
        # the data must be in GM: commit after every pending write-back
        mte3 = core.tp[MTE3]
        call.t_commit = max(core.ts, mte3)
        core.ts += core.issue
        comm = self._context().comm
        comm.commit(call)
        sched = comm.scheduler
        if sched is not None:
            sched.committed(call)

    def Wait(self, handle: HcclHandle) -> None:
        fr = sys._getframe(1)
        call = handle.call
        if not call.committed:
            raise CollectiveError(
                f"Wait on a {call.kind} that was never committed: this rank would hang",
                fr.f_code.co_filename,
                fr.f_lineno,
                hint="call hccl.Commit(handle) (or prepare with commit=True) before Wait",
            )
        comm = self._context().comm
        if not comm.complete(call.block, call.seq):
            if comm.scheduler is None:
                raise KernelError(
                    f"{call.kind} waits for {comm.n_ranks} ranks but runs alone",
                    fr.f_code.co_filename,
                    fr.f_lineno,
                )
            comm.scheduler.block_until_complete(call, fr)
        core = state.core
        t_done = comm.finish(call.block, call.seq, core.chip.clock_mhz)
        core.ts += core.issue
        core.wait_until(S, t_done, -1, f"Hccl.Wait({call.kind})", fr)
        handle.waited = True


def _dtype_of(dtype, fr) -> str:
    if isinstance(dtype, HcclDataType):
        return dtype.value
    try:
        return dtype_name(as_dtype(dtype))
    except (TypeError, ValueError, KeyError):
        raise KernelError(f"unknown HCCL data type {dtype!r}", fr.f_code.co_filename, fr.f_lineno) from None


def _addr(x, fr) -> GM_ADDR | None:
    if x is None or isinstance(x, GM_ADDR):
        return x
    if isinstance(x, GlobalTensor):
        b = x.buffer
        return GM_ADDR(b, x.start * x.dtype.itemsize // b.dtype.itemsize)
    raise KernelError(
        f"collective buffers are GM_ADDR or GlobalTensor, got {type(x).__name__}",
        fr.f_code.co_filename,
        fr.f_lineno,
    )


__all__ = [
    "Hccl",
    "HcclHandle",
    "HcclContext",
    "HcclReduceOp",
    "HcclDataType",
    "GetHcclContext",
    "Communicator",
    "CollectiveCall",
    "CollectiveError",
    "HCCL_REDUCE_SUM",
    "HCCL_REDUCE_PROD",
    "HCCL_REDUCE_MAX",
    "HCCL_REDUCE_MIN",
    "HCCL_DATA_TYPE_FP16",
    "HCCL_DATA_TYPE_FP32",
    "HCCL_DATA_TYPE_INT32",
    "HCCL_DATA_TYPE_INT8",
    "HCCL_DATA_TYPE_BFP16",
]
