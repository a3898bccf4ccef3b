"""Level-0 forms of the element-wise families (binary, unary, scalar), Duplicate, Cast,
Compare and Select, and the CMPMASK register.

`vector.py` keeps the level-2 (count) forms on its hot paths and hands these calls over when a
mask / repeatTimes / params follow. Semantics and spelling rules: `level0.py`.

Compare writes one bit per lane, repeat after repeat (lanes / 8 bytes per repeat, little-endian
bits). `Compare(src0, src1, cmpMode, mask, params)` (no dst, one repeat) leaves its bits in the
CMPMASK register; `GetCmpMask(dst)` stores the register's 16 bytes, `SetCmpMask(src)` loads them,
and `Select` in `VSEL_CMPMASK_SPR` mode applies the same lane bits to every repeat.
"""

from __future__ import annotations

import sys
from dataclasses import astuple

import numpy as np

from ...npu import state
from ..enums import CMPMODE, SELMODE, RoundMode
from . import level0 as L

CMP = {
    CMPMODE.LT: np.less,
    CMPMODE.GT: np.greater,
    CMPMODE.EQ: np.equal,
    CMPMODE.LE: np.less_equal,
    CMPMODE.GE: np.greater_equal,
    CMPMODE.NE: np.not_equal,
}

ROUND = {
    RoundMode.CAST_RINT: np.rint,
    RoundMode.CAST_ROUND: lambda a: np.sign(a) * np.floor(np.abs(a) + 0.5),
    RoundMode.CAST_FLOOR: np.floor,
    RoundMode.CAST_CEIL: np.ceil,
    RoundMode.CAST_TRUNC: np.trunc,
}


def cast_values(a: np.ndarray, dtype: np.dtype, round_mode: RoundMode) -> np.ndarray:
    """Convert to `dtype`; float → int honours the round mode and saturates."""
    if dtype.kind in "iu" and a.dtype.kind == "f":
        f = ROUND.get(round_mode, np.rint)
        info = np.iinfo(dtype)
        with np.errstate(all="ignore"):
            return np.clip(f(a.astype(np.float64)), info.min, info.max).astype(dtype)
    if (
        dtype.kind == "f"
        and a.dtype.kind == "f"
        and round_mode in ROUND
        and dtype.itemsize < a.dtype.itemsize
    ):
        # narrowing float casts with an explicit mode: round in float64 to the target's grid
        wide = a.astype(np.float64)
        near = wide.astype(dtype)
        back = near.astype(np.float64)
        if round_mode is RoundMode.CAST_FLOOR:
            return np.where(back > wide, np.nextafter(near, dtype.type(-np.inf)), near).astype(dtype)
        if round_mode is RoundMode.CAST_CEIL:
            return np.where(back < wide, np.nextafter(near, dtype.type(np.inf)), near).astype(dtype)
        if round_mode is RoundMode.CAST_TRUNC:
            towards = np.where(wide > 0, -np.inf, np.inf).astype(dtype)
            return np.where(np.abs(back) > np.abs(wide), np.nextafter(near, towards), near).astype(dtype)
        return near
    return a.astype(dtype)


# ---- the level-0 forms of the element-wise families ---------------------------------------------
def binary(op: str, fn, dst, src0, src1, mask, repeat_times, params, fr) -> None:
    p = L.params_of(L.BinaryRepeatParams, params)
    L.check_strides(op, fr, **dict(zip(L.BinaryRepeatParams.__dataclass_fields__, astuple(p))))
    width = max(dst.dtype.itemsize, src0.dtype.itemsize, src1.dtype.itemsize)
    pl = L.plan(op, mask, repeat_times, width, fr)
    i0 = L.indices(op, src0, pl, p.src0BlkStride, p.src0RepStride, fr, False)
    i1 = L.indices(op, src1, pl, p.src1BlkStride, p.src1RepStride, fr, False)
    io = L.indices(op, dst, pl, p.dstBlkStride, p.dstRepStride, fr, True)
    core = state.core
    if core.numeric:
        L.settle(core)
        out = np.empty(io.size, dtype=dst.dtype)
        with np.errstate(all="ignore"):
            fn(src0.arr[i0], src1.arr[i1], out=out)
        dst.arr[io] = out
    L.account(op, pl.repeats, pl.repeats * L.REPEAT, fr, ((src0, i0), (src1, i1)), ((dst, io),))


def unary(op: str, fn, dst, src, mask, repeat_times, params, fr) -> None:
    """`fn(src_values) -> values` in dst's dtype."""
    p = L.params_of(L.UnaryRepeatParams, params)
    L.check_strides(op, fr, **dict(zip(L.UnaryRepeatParams.__dataclass_fields__, astuple(p))))
    width = max(dst.dtype.itemsize, src.dtype.itemsize)
    pl = L.plan(op, mask, repeat_times, width, fr)
    i0 = L.indices(op, src, pl, p.srcBlkStride, p.srcRepStride, fr, False)
    io = L.indices(op, dst, pl, p.dstBlkStride, p.dstRepStride, fr, True)
    core = state.core
    if core.numeric:
        L.settle(core)
        with np.errstate(all="ignore"):
            dst.arr[io] = np.asarray(fn(src.arr[i0])).astype(dst.dtype, copy=False)
    L.account(op, pl.repeats, pl.repeats * L.REPEAT, fr, ((src, i0),), ((dst, io),))


def into(fn):
    """A unary numpy kernel `fn(src, dst)` as a value function for `unary`."""

    def apply(a):
        out = np.empty_like(a)
        fn(a, out)
        return out

    return apply


def scalar_fn(fn, scalar, dtype):
    s = dtype.type(scalar)

    def apply(a):
        out = np.empty(a.shape, dtype=dtype)
        fn(a, s, out=out)
        return out

    return apply


def duplicate(dst, scalar, mask, repeat_times, blk, rep, fr) -> None:
    L.check_strides("Duplicate", fr, dstBlockStride=blk, dstRepeatStride=rep)
    pl = L.plan("Duplicate", mask, repeat_times, dst.dtype.itemsize, fr)
    io = L.indices("Duplicate", dst, pl, blk, rep, fr, True)
    core = state.core
    if core.numeric:
        L.settle(core)
        dst.arr[io] = dst.dtype.type(scalar)
    L.account("Duplicate", pl.repeats, pl.repeats * L.REPEAT, fr, (), ((dst, io),))


def cast(dst, src, round_mode, mask, repeat_times, params, fr) -> None:
    unary("Cast", lambda a: cast_values(a, dst.dtype, round_mode), dst, src, mask, repeat_times, params, fr)


def _write_bits(core, dst, bits: np.ndarray, fr, op: str, reps: int) -> None:
    packed = np.packbits(bits.reshape(-1), bitorder="little")
    nbytes = dst.count * dst.dtype.itemsize
    if packed.size > nbytes:
        L.oob(op, dst, -(-packed.size // dst.dtype.itemsize), fr, True, reps)
    if core.numeric:
        dst.arr[: dst.count].view(np.uint8)[: packed.size] = packed


def compare(dst, src0, src1, mode, mask, repeat_times, params, fr) -> None:
    """`Compare(dst, src0, src1, cmpMode, mask, repeatTimes, params)`: lane bits per repeat."""
    p = L.params_of(L.BinaryRepeatParams, params)
    pl = L.plan("Compare", mask, repeat_times, src0.dtype.itemsize, fr)
    i0 = L.indices("Compare", src0, pl, p.src0BlkStride, p.src0RepStride, fr, False)
    i1 = L.indices("Compare", src1, pl, p.src1BlkStride, p.src1RepStride, fr, False)
    core = state.core
    nbytes = pl.repeats * pl.lanes // 8
    if nbytes > dst.count * dst.dtype.itemsize:
        L.oob("Compare", dst, -(-nbytes // dst.dtype.itemsize), fr, True, pl.repeats)
    if core.numeric:
        L.settle(core)
        bits = np.zeros((pl.repeats, pl.lanes), dtype=bool)
        bits[pl.active] = CMP[mode](src0.arr[i0], src1.arr[i1])
        _write_bits(core, dst, bits, fr, "Compare", pl.repeats)
    nout = -(-nbytes // dst.dtype.itemsize)
    L.account(
        "Compare",
        pl.repeats,
        pl.repeats * L.REPEAT,
        fr,
        ((src0, i0), (src1, i1)),
        ((dst, np.arange(nout)),),
    )


def compare_register(src0, src1, mode, mask, params, fr) -> None:
    """`Compare(src0, src1, cmpMode, mask, params)`: one repeat; bits go to CMPMASK."""
    p = L.params_of(L.BinaryRepeatParams, params)
    pl = L.plan("Compare", mask, 1, src0.dtype.itemsize, fr)
    i0 = L.indices("Compare", src0, pl, p.src0BlkStride, p.src0RepStride, fr, False)
    i1 = L.indices("Compare", src1, pl, p.src1BlkStride, p.src1RepStride, fr, False)
    core = state.core
    regs = L.registers(core)
    if core.numeric:
        L.settle(core)
        bits = np.zeros((1, pl.lanes), dtype=bool)
        bits[pl.active[:1]] = CMP[mode](src0.arr[i0], src1.arr[i1])
        reg = np.zeros(16, np.uint8)
        packed = np.packbits(bits.reshape(-1), bitorder="little")
        reg[: packed.size] = packed
        regs[2] = reg
    L.account("Compare", 1, L.REPEAT, fr, ((src0, i0), (src1, i1)), ())


def GetCmpMask(dst) -> None:
    """Store the CMPMASK register (128 bits) into dst."""
    _cmpmask("GetCmpMask", dst, True, sys._getframe(1))


def SetCmpMask(src) -> None:
    """Load the CMPMASK register (128 bits) from src."""
    _cmpmask("SetCmpMask", src, False, sys._getframe(1))


def _cmpmask(op: str, t, store: bool, fr) -> None:
    """CMPMASK (16 bytes) stored into tensor `t`, or loaded from it."""
    core = state.core
    t = L.peel((t,))[0]
    n = -(-16 // t.dtype.itemsize)
    if n > t.count:
        L.oob(op, t, n, fr, store, 1)
    if core.numeric:
        L.settle(core)
        if store:
            t.arr[: t.count].view(np.uint8)[:16] = L.registers(core)[2]
        else:
            L.registers(core)[2] = np.array(t.arr[: t.count].view(np.uint8)[:16])
    touched = ((t, np.arange(n)),)
    L.account(op, 1, 16, fr, () if store else touched, touched if store else ())


def select_bits(sel, mode, n: int, lanes: int) -> np.ndarray:
    """The selection bit of each of `n` elements: mode 0 repeats one repeat's bits."""
    raw = np.unpackbits(sel.arr[: sel.count].view(np.uint8), bitorder="little")
    if mode is SELMODE.VSEL_CMPMASK_SPR:
        one = raw[:lanes]
        return np.resize(one, n).astype(bool)
    return raw[:n].astype(bool)


def select(dst, sel, src0, src1, mode, mask, repeat_times, params, fr) -> None:
    """`Select(dst, selMask, src0, src1, selMode, mask, repeatTimes, params)`."""
    p = L.params_of(L.BinaryRepeatParams, params)
    scalar_mode = mode is SELMODE.VSEL_TENSOR_SCALAR_MODE
    pl = L.plan("Select", mask, repeat_times, dst.dtype.itemsize, fr)
    i0 = L.indices("Select", src0, pl, p.src0BlkStride, p.src0RepStride, fr, False)
    i1 = None if scalar_mode else L.indices("Select", src1, pl, p.src1BlkStride, p.src1RepStride, fr, False)
    io = L.indices("Select", dst, pl, p.dstBlkStride, p.dstRepStride, fr, True)
    core = state.core
    if core.numeric:
        L.settle(core)
        if mode is SELMODE.VSEL_CMPMASK_SPR and sel is None:
            lane = np.unpackbits(L.registers(core)[2], bitorder="little")[: pl.lanes].astype(bool)
            bits = np.broadcast_to(lane, (pl.repeats, pl.lanes))[pl.active]
        else:
            flat = select_bits(sel, mode, pl.repeats * pl.lanes, pl.lanes)
            bits = flat.reshape(pl.repeats, pl.lanes)[pl.active]
        other = dst.dtype.type(src1) if scalar_mode else src1.arr[i1]
        dst.arr[io] = np.where(bits, src0.arr[i0], other)
    reads = ((src0, i0),) if scalar_mode else ((src0, i0), (src1, i1))
    L.account("Select", pl.repeats, pl.repeats * L.REPEAT, fr, reads, ((dst, io),))


def Compares(*args) -> None:
    """`Compares(dst, src0, scalar, cmpMode, count)`: one bit per element into dst (uint8);
    level-0: `(dst, src0, scalar, cmpMode, mask, repeatTimes, UnaryRepeatParams)`."""
    fr = sys._getframe(1)
    rest = L.peel(args)
    core = state.core
    if len(rest) == 5:
        dst, src0, scalar, mode, count = rest
        n = int(count)
        if n > src0.count or n < 0:
            L.oob("Compares", src0, n, fr, False, 1)
        reps = -(-n * src0.dtype.itemsize // L.REPEAT)
        lanes = L.REPEAT // src0.dtype.itemsize
        i0 = np.arange(n)
        active = np.arange(reps * lanes) < n
        vals_idx = i0
    else:
        dst, src0, scalar, mode, mask, reps, params = (*rest, None)[:7]
        p = L.params_of(L.UnaryRepeatParams, params)
        pl = L.plan("Compares", mask, reps, src0.dtype.itemsize, fr)
        vals_idx = L.indices("Compares", src0, pl, p.srcBlkStride, p.srcRepStride, fr, False)
        reps, lanes, active = pl.repeats, pl.lanes, pl.active.reshape(-1)
    nbytes = reps * lanes // 8
    if nbytes > dst.count * dst.dtype.itemsize:
        L.oob("Compares", dst, -(-nbytes // dst.dtype.itemsize), fr, True, reps)
    if core.numeric:
        L.settle(core)
        bits = np.zeros(reps * lanes, dtype=bool)
        bits[active] = CMP[mode](src0.arr[vals_idx], src0.dtype.type(scalar))
        _write_bits(core, dst, bits, fr, "Compares", reps)
    nout = -(-nbytes // dst.dtype.itemsize)
    L.account("Compares", reps, reps * L.REPEAT, fr, ((src0, vals_idx),), ((dst, np.arange(nout)),))
