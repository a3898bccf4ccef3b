"""Helpers for the tests of the wider kernel API (tests/test_api_*.py): run a kernel body on one
core and move arrays between GM and UB the way the Ascend C samples do."""

from __future__ import annotations

import numpy as np

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GlobalTensor, HardEvent, Hardware, LocalMemAllocator
from asc_tui.devkit.debug.sanitizer import Sanitizer
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch, make_gm
from asc_tui.npu.records import KIND_WORK

CHIP = load_chip("ascend910b")


def run(body, *arrays, numeric: bool = True, sanitizer=None, block_dim: int = 1, core_type: str = "aiv"):
    """Launch `body(gm_addrs...)` on `block_dim` cores; arrays are updated in place (full mode)."""
    gms = [
        make_gm(f"a{i}", a.dtype, a.size, a.reshape(-1) if numeric else None) for i, a in enumerate(arrays)
    ]

    @AscendC.kernel(core_type=core_type)
    def k(*args):
        AscendC.InitSocState()
        body(*args[:-1])

    return launch(k, gms, None, block_dim, CHIP, numeric=numeric, sanitizer=sanitizer)


def sanitized(body, *arrays, core_type: str = "aiv"):
    """(the Sanitizer, the error the run stopped with or None)."""
    san = Sanitizer()
    try:
        run(body, *arrays, sanitizer=san, core_type=core_type)
    except Exception as exc:  # noqa: BLE001 - the guard rail under test
        return san, exc
    return san, None


def ub(*specs):
    """Local tensors from a LocalMemAllocator: ub((half, 256), (float32, 64)...)."""
    alloc = LocalMemAllocator(Hardware.UB)
    return [alloc.Alloc(dt, n) for dt, n in specs]


def load(t, gm, n=None):
    g = GlobalTensor(t.dtype)
    g.SetGlobalBuffer(gm)
    AscendC.DataCopy(t, g, t.count if n is None else n)
    AscendC.SetFlag[HardEvent.MTE2_V](AscendC.EVENT_ID0)
    AscendC.WaitFlag[HardEvent.MTE2_V](AscendC.EVENT_ID0)


def store(gm, t, n=None):
    g = GlobalTensor(t.dtype)
    g.SetGlobalBuffer(gm)
    AscendC.SetFlag(HardEvent.V_MTE3, AscendC.EVENT_ID1)
    AscendC.WaitFlag(HardEvent.V_MTE3, AscendC.EVENT_ID1)
    AscendC.DataCopy(g, t, t.count if n is None else n)
    AscendC.PipeBarrier[AscendC.PIPE_ALL]()


def lanes_ref(n_elems: int, isz: int, mask, reps: int, blk: int, rep: int):
    """Independent reference of the level-0 layout: element offsets of each active lane."""
    lanes = 256 // isz
    epb = 32 // isz
    out = []
    for r in range(reps):
        for k in range(lanes):
            on = k < mask if isinstance(mask, int) else (mask[k // 64] >> (k % 64)) & 1
            if on:
                out.append(r * rep * epb + (k // epb) * blk * epb + k % epb)
    return np.array(out, dtype=np.int64)


def vec_ops(em, op: str):
    """(start, end) cycles of the PIPE_V work records named `op` in block 0."""
    r = em.records
    names = em.ops
    return [
        (float(s), float(e))
        for s, e, o, p, k in zip(r.start, r.end, r.op, r.pipe, r.kind)
        if names[o] == op and int(p) == int(AscendC.PIPE_V) and int(k) == KIND_WORK
    ]
