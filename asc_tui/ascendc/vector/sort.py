"""Sorting: Sort32 (32 elements per repeat) and MrgSort (merge up to four sorted lists); and
the region-proposal path (ProposalConcat, RpSort16, MrgSort4, ProposalExtract).

Sorted data are 8-byte structures: the value (half or float, in the first bytes) and its
uint32 index in bytes 4..7, so `n` structures take `2 n` floats or `4 n` halves. Order is
descending by value; equal values keep their input order (list order when merging).

- `Sort32(dst, src0, src1, repeatTimes)`: src0 values, src1 uint32 indices; each repeat sorts 32.
- `MrgSort(dst, MrgSortSrcList(src1..src4), MrgSort4Info(elementLengths, ifExhaustedSuspension,
  validBit, repeatTimes))`: repeat r merges the lists that follow those of repeat r - 1; its
  output follows the previous output. `ifExhaustedSuspension` stops a repeat when one list runs
  out; `GetMrgSortResult()` gives how many structures of each list the last MrgSort took.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from ...npu import state
from . import level0 as L

STRUCT = 8  # bytes per (value, index)


def _structs(t, first: int, n: int):
    """(values, indices) of structures [first, first + n) of t."""
    b = t.arr[: t.count].view(np.uint8)
    raw = b[first * STRUCT : (first + n) * STRUCT].reshape(n, STRUCT)
    vals = raw[:, : t.dtype.itemsize].copy().view(t.dtype).reshape(-1)
    idx = raw[:, 4:8].copy().view(np.uint32).reshape(-1)
    return vals, idx


def _store(t, first: int, vals, idx) -> None:
    n = len(vals)
    b = t.arr[: t.count].view(np.uint8)
    out = b[first * STRUCT : (first + n) * STRUCT].reshape(n, STRUCT)
    out[:, : t.dtype.itemsize] = np.asarray(vals, dtype=t.dtype).view(np.uint8).reshape(n, -1)
    out[:, 4:8] = np.asarray(idx, dtype=np.uint32).view(np.uint8).reshape(n, 4)


def _per(t) -> int:
    return STRUCT // t.dtype.itemsize  # elements of t per structure


def _check_structs(op, t, first, n, fr, is_write, reps=1):
    need = (first + n) * _per(t)
    if need > t.count:
        L.oob(op, t, need, fr, is_write, reps)
    return np.arange(first * _per(t), need)


def Sort32(*args) -> None:
    fr = sys._getframe(1)
    dst, src0, src1, reps = L.peel(args)[:4]
    reps = int(reps)
    if not 0 <= reps <= L.MAX_REPEAT:
        L.fail(f"Sort32: level-0 repeatTimes {reps} is outside [0, {L.MAX_REPEAT}]", fr)
    n = reps * 32
    for t, w in ((src0, False), (src1, False)):
        if n > t.count:
            L.oob("Sort32", t, n, fr, w, reps)
    i_dst = _check_structs("Sort32", dst, 0, n, fr, True, reps)
    core = state.core
    if core.numeric:
        L.settle(core)
        v = np.array(src0.arr[:n]).reshape(reps, 32)
        ix = np.array(src1.arr[:n]).view(np.uint32).reshape(reps, 32)
        order = np.argsort(-v.astype(np.float64), axis=1, kind="stable")
        rows = np.arange(reps)[:, None]
        _store(dst, 0, v[rows, order].reshape(-1), ix[rows, order].reshape(-1))
    whole = np.arange(n)
    L.account("Sort32", reps, n * STRUCT, fr, ((src0, whole), (src1, whole)), ((dst, i_dst),))


@dataclass
class MrgSortSrcList:
    src1: object = None
    src2: object = None
    src3: object = None
    src4: object = None


@dataclass
class MrgSort4Info:
    elementLengths: list = field(default_factory=lambda: [0, 0, 0, 0])
    ifExhaustedSuspension: bool = False
    validBit: int = 0b1111
    repeatTimes: int = 1


def _merge(lists, suspend: bool):
    """Merge descending lists of (values, indices); returns values, indices, taken per list."""
    vals, idxs, taken = [], [], [0] * len(lists)
    heads = [0] * len(lists)
    total = sum(len(v) for v, _ in lists)
    for _ in range(total):
        best = -1
        for j, (v, _) in enumerate(lists):
            if heads[j] < len(v) and (best < 0 or v[heads[j]] > lists[best][0][heads[best]]):
                best = j
        if best < 0:
            break
        vals.append(lists[best][0][heads[best]])
        idxs.append(lists[best][1][heads[best]])
        heads[best] += 1
        taken[best] += 1
        if suspend and heads[best] == len(lists[best][0]):
            break
    return vals, idxs, taken


def _merge_lists(op: str, info, fr) -> tuple[list[int], list[int]]:
    """The lengths of the four lists, and which of them validBit selects (2 to 4, from src1 on)."""
    lens = [int(x) for x in info.elementLengths]
    valid = [j for j in range(4) if int(info.validBit) >> j & 1]
    if len(valid) < 2 or valid != list(range(len(valid))):
        L.fail(f"{op}: validBit {int(info.validBit):#06b} must select 2, 3 or 4 lists from src1", fr)
    return lens, valid


def MrgSort(*args) -> None:
    fr = sys._getframe(1)
    dst, srcs, info = L.peel(args)[:3]
    lens, valid = _merge_lists("MrgSort", info, fr)
    reps = int(info.repeatTimes)
    if not 1 <= reps <= L.MAX_REPEAT:
        L.fail(f"MrgSort: repeatTimes {reps} is outside [1, {L.MAX_REPEAT}]", fr)
    tensors = [getattr(srcs, f"src{j + 1}") for j in valid]
    span = sum(lens[j] for j in valid)
    reads = []
    for j, t in zip(valid, tensors):
        first = (reps - 1) * span
        reads.append((t, _check_structs("MrgSort", t, 0, first + lens[j], fr, False, reps)))
    i_dst = _check_structs("MrgSort", dst, 0, reps * span, fr, True, reps)
    core = state.core
    regs = L.registers(core)[3]
    if core.numeric:
        L.settle(core)
        outs_v, outs_i = [], []
        for r in range(reps):
            lists = [_structs(t, r * span, lens[j]) for j, t in zip(valid, tensors)]
            v, i, taken = _merge(lists, bool(info.ifExhaustedSuspension))
            outs_v += v
            outs_i += i
            regs["mrgsort"] = tuple(taken + [0] * (4 - len(taken)))
        _store(dst, 0, outs_v, outs_i)
    L.account("MrgSort", reps * max(1, span // 32), reps * span * STRUCT, fr, reads, ((dst, i_dst),))


def GetMrgSortResult():
    """(count taken from list 1, 2, 3, 4) by the last MrgSort of this core."""
    core = state.core
    core.scalar(core.chip.scalar_value, "GetMrgSortResult", sys._getframe(1))
    return L.registers(core)[3].get("mrgsort", (0, 0, 0, 0))


# ---- region proposals (the older sorting path): 8 elements per proposal, the score is element 4
RP = 8
SCORE = 4


def _rp_check(op, t, first, n, fr, is_write, reps):
    need = (first + n) * RP
    if need > t.count:
        L.oob(op, t, need, fr, is_write, reps)
    return np.arange(first * RP, need)


def _reps(op, reps, fr) -> int:
    reps = int(reps)
    if not 0 <= reps <= L.MAX_REPEAT:
        L.fail(f"{op}: level-0 repeatTimes {reps} is outside [0, {L.MAX_REPEAT}]", fr)
    return reps


def ProposalConcat(*args) -> None:
    """`ProposalConcat(dst, src, repeatTimes, modeNumber)`: 16 elements per repeat go into field
    `modeNumber` of 16 proposals; the other fields are left as they are."""
    _proposal_field("ProposalConcat", args, True, sys._getframe(1))


def ProposalExtract(*args) -> None:
    """`ProposalExtract(dst, src, repeatTimes, modeNumber)`: field `modeNumber` of 16 proposals
    per repeat, packed into dst."""
    _proposal_field("ProposalExtract", args, False, sys._getframe(1))


def _proposal_field(op: str, args, into: bool, fr) -> None:
    """One field of 16 proposals per repeat: written from packed src (`into`), or read into
    packed dst."""
    dst, src, reps, mode = L.peel(args)[:4]
    reps = _reps(op, reps, fr)
    n = reps * 16
    packed, proposals = (src, dst) if into else (dst, src)
    if n > packed.count:
        L.oob(op, packed, n, fr, not into, reps)
    _rp_check(op, proposals, 0, n, fr, into, reps)
    i_field = np.arange(n) * RP + int(mode)
    i_packed = np.arange(n)
    core = state.core
    if core.numeric:
        L.settle(core)
        if into:
            dst.arr[i_field] = src.arr[:n]
        else:
            dst.arr[:n] = src.arr[i_field]
    i_src, i_dst = (i_packed, i_field) if into else (i_field, i_packed)
    L.account(op, reps, n * RP * src.dtype.itemsize, fr, ((src, i_src),), ((dst, i_dst),))


def RpSort16(*args) -> None:
    """`RpSort16(dst, src, repeatTimes)`: each repeat sorts 16 proposals by score, descending."""
    fr = sys._getframe(1)
    dst, src, reps = L.peel(args)[:3]
    reps = _reps("RpSort16", reps, fr)
    n = reps * 16
    i_src = _rp_check("RpSort16", src, 0, n, fr, False, reps)
    i_dst = _rp_check("RpSort16", dst, 0, n, fr, True, reps)
    core = state.core
    if core.numeric:
        L.settle(core)
        rows = np.array(src.arr[: n * RP]).reshape(reps, 16, RP)
        order = np.argsort(-rows[:, :, SCORE].astype(np.float64), axis=1, kind="stable")
        dst.arr[: n * RP] = rows[np.arange(reps)[:, None], order].reshape(-1)
    L.account("RpSort16", reps, n * RP * src.dtype.itemsize, fr, ((src, i_src),), ((dst, i_dst),))


def MrgSort4(*args) -> None:
    """`MrgSort4(dst, MrgSortSrcList, MrgSort4Info)`: merge up to four score-sorted proposal lists
    (elementLengths count proposals), repeat by repeat as MrgSort."""
    fr = sys._getframe(1)
    dst, srcs, info = L.peel(args)[:3]
    lens, valid = _merge_lists("MrgSort4", info, fr)
    reps = _reps("MrgSort4", info.repeatTimes, fr)
    tensors = [getattr(srcs, f"src{j + 1}") for j in valid]
    span = sum(lens[j] for j in valid)
    reads = [
        (t, _rp_check("MrgSort4", t, 0, (reps - 1) * span + lens[j], fr, False, reps))
        for j, t in zip(valid, tensors)
    ]
    i_dst = _rp_check("MrgSort4", dst, 0, reps * span, fr, True, reps)
    core = state.core
    if core.numeric:
        L.settle(core)
        out = []
        for r in range(reps):
            rows = [
                np.array(t.arr[r * span * RP : (r * span + lens[j]) * RP]).reshape(-1, RP)
                for j, t in zip(valid, tensors)
            ]
            base = np.cumsum([0] + [len(x) for x in rows])
            lists = [(x[:, SCORE], np.arange(len(x)) + base[k]) for k, x in enumerate(rows)]
            _, ids, taken = _merge(lists, bool(info.ifExhaustedSuspension))
            out.append(np.concatenate(rows)[np.array(ids, dtype=np.int64)].reshape(-1))
            L.registers(core)[3]["mrgsort"] = tuple(taken + [0] * (4 - len(taken)))
        flat = np.concatenate(out) if out else np.empty(0, dst.dtype)
        dst.arr[: flat.size] = flat
    L.account(
        "MrgSort4",
        reps * max(1, span // 16),
        reps * span * RP * dst.dtype.itemsize,
        fr,
        reads,
        ((dst, i_dst),),
    )
