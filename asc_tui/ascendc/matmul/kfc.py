"""The Matmul of a mixed kernel (`__mix__(1, 2)`, `core_type="mix"`) on 910B: the AIVs call the
API, the AIC computes (CANN's "KFC" client/server).

Every sub-core runs the kernel function. On the AIC, REGIST_MATMUL_OBJ becomes the server: it
waits for the AIVs' requests, computes with its own Matmul objects (L1/L0 are the AIC's) and
returns from the kernel once every AIV has called End(). On an AIV the Matmul is a client:
SetTensorA/B/Bias/SetOrgShape/SetTail stay local, and Iterate, GetTensorC, IterateAll and End
each send one request carrying the operands and wait for the reply. Requests and replies are
cross-core flags (their latency and scalar-pipe waits as CrossCoreSetFlag's); a GetTensorC into
a local tensor goes L0C → GM workspace (the AIC's Fixpipe) → UB (the AIV's DataCopy), as on
910B where the AIC cannot write UB. Between an Iterate and its GetTensorC the server serves only
that AIV: the block waits in L0C.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...npu import state
from ...npu.memory.gm import GM_ADDR, GmBuffer
from ...npu.mix import SubCoreReturn
from ...npu.records import KIND_SET, record
from ..copy.datacopy import DataCopy, DataCopyParams
from ..cube.mmad import c0_of
from ..enums import Pipe
from ..memory.tensors import GlobalTensor
from ..sync.crosscore import cross_core_latency

_S, _FIX = int(Pipe.PIPE_S), int(Pipe.PIPE_FIX)


@dataclass
class Request:
    kind: str  # "iterate" | "getc" | "all" | "end"
    obj: int  # the Matmul's place in REGIST_MATMUL_OBJ
    operands: tuple = ()  # (a, b, bias, org shape, tails) as the client set them
    block: tuple = ()  # (m0, n0, mt, nt, sk) of an Iterate
    dst: tuple = ()  # (GlobalTensor, row stride) a result goes to


def in_mix_group() -> bool:
    return state.core.group is not None


def _send(core, key, msg, pipe: int, what: str, fr) -> None:
    t = core.set_time(pipe) - core.ev_lat
    core.rec.append(record(pipe, t, t, what, fr, kind=KIND_SET, link=core.last[pipe]))
    core.ts += core.issue
    core.group.push(key, t + cross_core_latency(core), msg)


def serve(objs: list, fr) -> None:
    """The AIC's part of the kernel: serve the AIVs until each has ended, then return."""
    core = state.core
    g = core.group
    me = g.cores.index(core)
    live = list(range(len(g.cores) - 1))
    locked = None  # the AIV whose block waits in L0C for its GetTensorC
    pending = {}
    while live:
        keys = [("kfc", locked)] if locked is not None else [("kfc", j) for j in live]
        key, t, req = g.take_any(
            me, keys, "the Matmul server waits for the AIVs' requests; each AIV ends with End()", fr
        )
        j = key[1]
        core.wait_until(_S, t, -1, f"Matmul request {req.kind} from AIV{j}", fr)
        mm = objs[req.obj]
        if req.kind == "end":
            live.remove(j)
        else:
            mm.a, mm.b, mm.bias, mm.org, (mm.tail_m, mm.tail_n, mm.tail_k) = req.operands
        if req.kind == "iterate":
            pending[j] = (mm._block(*req.block), req.block)
            locked = j
        elif req.kind == "getc":
            co, (_m0, _n0, mt, nt, _sk) = pending.pop(j)
            locked = None
            mm._write(req.dst[0], co, mt, nt, req.dst[1])
        elif req.kind == "all":
            c, n = req.dst
            for m0, n0, mt, nt, sk in mm._blocks("IterateAll"):
                mm._write(c[m0 * n + n0], mm._block(m0, n0, mt, nt, sk), mt, nt, n)
        _send(core, ("kfc_done", j), None, _FIX, f"Matmul reply to AIV{j}", fr)
    raise SubCoreReturn


class Client:
    """An AIV's Matmul in a mixed kernel: requests to the AIC's server."""

    def __init__(self, mm, index: int):
        self.mm, self.index = mm, index
        t = mm.tiling
        # the GM workspace a block crosses on its way to UB: baseM rows of 32-byte aligned baseN
        self.ld = -(-t.baseN // c0_of(mm.cdt)) * c0_of(mm.cdt)
        n = max(t.baseM, 1) * self.ld
        core = state.core
        buf = GmBuffer(
            f"matmul workspace AIV{core.sub_block}",
            mm.cdt,
            n,
            np.zeros(n, mm.cdt) if core.run.numeric else None,
        )
        self.ws = GlobalTensor(mm.cdt)
        self.ws.SetGlobalBuffer(GM_ADDR(buf), n)

    def request(self, kind: str, fr, block=(), dst=()) -> None:
        mm = self.mm
        core = state.core
        operands = (mm.a, mm.b, mm.bias, mm.org, (mm.tail_m, mm.tail_n, mm.tail_k))
        req = Request(kind, self.index, operands, block, dst)
        _send(core, ("kfc", core.sub_block), req, _S, f"Matmul {kind} request", fr)
        me = core.group.cores.index(core)
        t = core.group.take(me, [("kfc_done", core.sub_block)], f"Matmul {kind} (waits for the AIC)", fr)
        core.wait_until(_S, t, -1, f"Matmul {kind} reply", fr)

    def get_tensor_c(self, c, pending, seq: bool, fr) -> None:
        """The block of the last Iterate into `c`: a GlobalTensor (the AIC's Fixpipe writes it, at
        its place in C or dense at the start when `seq`) or a local tensor (dense at its start,
        through the GM workspace, then the AIV's DataCopy)."""
        m0, n0, mt, nt = pending
        if isinstance(c, GlobalTensor):
            n = self.mm.c_ld
            self.request("getc", fr, dst=(c, nt) if seq else (c[m0 * n + n0], n))
            return
        self.request("getc", fr, dst=(self.ws, self.ld))
        blocks = mt * self.ld * self.mm.cdt.itemsize // 32
        DataCopy(c, self.ws, DataCopyParams(1, blocks, 0, 0))
