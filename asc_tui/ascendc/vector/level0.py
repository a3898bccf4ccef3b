"""The level-0 vector API: mask (a count or 64-bit words), repeatTimes and repeat strides.

One vector instruction runs `repeatTimes` repeats of 256 B = 8 blocks of 32 B. Lane k of a
repeat (k < 256 / the widest operand's element size) sits in block k // (32 / sizeof(T)) of that
operand; block b of repeat r starts `r * repStride + b * blkStride` blocks after the operand's
start. Strides are in 32 B blocks, as in Ascend C's `UnaryRepeatParams` / `BinaryRepeatParams`.

Masks (Ascend C `SetMaskNorm` / `SetMaskCount`), kept per core in `core.vmask`:
- normal mode (the default): `mask` is a lane count (1..128 for 16-bit types, 1..64 for 32-bit)
  or a list of uint64 words `[low, high]` (bit i = lane i; 32-bit types use only the low word);
  every repeat uses the same lanes.
- counter mode: the mask is the number of elements in total (`SetVectorMask(0, n)` or the
  call's `mask`); repeatTimes is ignored and the hardware runs ceil(n / lanes) repeats whose
  blocks follow on at the block stride (repeat strides are not used: the copy_ub2ub sample's
  golden takes 18 blocks 8 blocks apart in one counter-mode call).
`MASK_PLACEHOLDER` (the `isSetMask = false` form) uses what `SetVectorMask` left in the register.

Illegal masks, repeat counts and strides stop the run like the hardware's exception would
(a `KernelError` the sanitizer reports as `illegal-vector-param`); a repeat that reaches past its
tensor is an out-of-bounds finding (memcheck), reported with the exact extent.

Template spelling for translated C++ (shared with `sync.py` and `misc.py`): `F<X, Y>(args)`
becomes `F(X, Y, args)` — template arguments as leading call arguments. The vector calls peel
any leading non-tensor arguments (types such as `half`, `ReduceType.SUM`, `isSetMask` bools), so
both `ReduceRepeat(ReduceType.SUM, half, dst, ...)` and, where the template argument only
selects a type C++ deduces, `Duplicate(dst, ...)` work. Events and barriers also accept the
subscript form `SetFlag[HardEvent.MTE2_V](id)`, `PipeBarrier[PIPE_ALL]()`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...npu import state
from ...npu.errors import KernelError
from ...npu.pipes import V
from ..corestate import (  # noqa: F401 - re-exported # noqa: F401 - re-exported for the level-0 modules
    MaskMode,
    registers,
)
from ..memory.tensors import LocalTensor

BLOCK = 32
REPEAT = 256
MAX_REPEAT = 255
MAX_STRIDE = 65535
MAX_REP_STRIDE = 255


class _Placeholder:
    """`MASK_PLACEHOLDER`: use the mask `SetVectorMask` set (the `isSetMask = false` form)."""

    def __repr__(self) -> str:
        return "MASK_PLACEHOLDER"


MASK_PLACEHOLDER = _Placeholder()


@dataclass
class UnaryRepeatParams:
    dstBlkStride: int = 1
    srcBlkStride: int = 1
    dstRepStride: int = 8
    srcRepStride: int = 8


@dataclass
class BinaryRepeatParams:
    dstBlkStride: int = 1
    src0BlkStride: int = 1
    src1BlkStride: int = 1
    dstRepStride: int = 8
    src0RepStride: int = 8
    src1RepStride: int = 8


@dataclass
class GatherRepeatParams:
    dstBlkStride: int = 1
    dstRepStride: int = 8


def params_of(cls, p):
    """A repeat-params struct from the struct or a brace-init tuple/list (`{1, 1, 8, 8}`)."""
    if isinstance(p, cls):
        return p
    if p is None:
        return cls()
    return cls(*p)


def fail(message: str, fr, hint: str | None = None):
    raise KernelError(message, fr.f_code.co_filename, fr.f_lineno, hint=hint)


def peel(args: tuple) -> tuple:
    """Drop leading template arguments (`F<T, false>(dst, ...)` passed as `F(T, False, dst, ...)`)."""
    i = 0
    while i < len(args) and type(args[i]) is not LocalTensor:
        i += 1
    return args[i:]


def template_args(args: tuple) -> tuple[tuple, tuple]:
    """(leading template arguments, the rest) of a call."""
    i = 0
    while i < len(args) and type(args[i]) is not LocalTensor:
        i += 1
    return args[:i], args[i:]


# ---- the mask register -------------------------------------------------------------------------
def SetMaskCount() -> None:
    """Switch the vector mask to counter mode (the mask counts elements, not lanes)."""
    registers(state.core)[0] = MaskMode.COUNTER


def SetMaskNorm() -> None:
    """Back to normal mode (the mask selects lanes of every repeat)."""
    registers(state.core)[0] = MaskMode.NORMAL


def ResetMask() -> None:
    """All lanes on (the register's reset value)."""
    registers(state.core)[1] = (2**64 - 1, 2**64 - 1)


def SetVectorMask(*args) -> None:
    """`SetVectorMask<T, mode>(len)` or `SetVectorMask<T, mode>(maskHigh, maskLow)`.

    Leading template arguments (a dtype, a `MaskMode`) may be passed first. In counter mode the
    element count is `len` (or `maskLow`); in normal mode `len` turns on lanes 0..len-1.
    """
    core = state.core
    mode = None
    vals = []
    for a in args:
        if isinstance(a, MaskMode):
            mode = a
        elif isinstance(a, (int, np.integer)) and not isinstance(a, bool):
            vals.append(int(a))
    m = registers(core)
    if mode is None:
        mode = m[0]
    if len(vals) == 1:
        n = vals[0]
        if mode is MaskMode.COUNTER:
            m[1] = ("count", n)
        else:
            bits = (1 << n) - 1 if n < 128 else (1 << 128) - 1
            m[1] = (bits & (2**64 - 1), bits >> 64)
    elif len(vals) == 2:
        high, low = vals
        m[1] = ("count", low) if mode is MaskMode.COUNTER else (low, high)
    else:
        fail("SetVectorMask expects (len) or (maskHigh, maskLow)", sys._getframe(1))


def GetVecLen() -> int:
    """Bytes one vector repeat covers."""
    return REPEAT


# ---- lanes and element indices -----------------------------------------------------------------
@lru_cache(maxsize=4096)
def _lane_bits(kind: str, value, lanes: int) -> np.ndarray:
    if kind == "count":
        out = np.zeros(lanes, dtype=bool)
        out[: min(value, lanes)] = True
        return out
    low, high = value
    bits = np.zeros(lanes, dtype=bool)
    for k in range(lanes):
        word = low if k < 64 else high
        bits[k] = (word >> (k % 64)) & 1
    bits.setflags(write=False)
    return bits


@dataclass(frozen=True)
class Plan:
    """What one level-0 call does: repeats and, per repeat, which lanes are on."""

    repeats: int
    lanes: int
    active: np.ndarray  # (repeats, lanes) bool
    counter: bool = False  # counter mode: the blocks run on, repeat strides are not used

    def rep_stride(self, isz: int, blk: int, rep: int) -> int:
        """The repeat stride (blocks) of an operand: in counter mode its blocks continue from
        one implicit repeat to the next at the block stride (the copy sample's golden)."""
        if not self.counter:
            return int(rep)
        return self.lanes * isz // BLOCK * int(blk)


def plan(op: str, mask, repeat_times, width: int, fr) -> Plan:
    """Resolve mask and repeatTimes against the core's mask register; check the hardware rules.

    `width`: element size (bytes) that fixes the lanes per repeat (the widest operand).
    """
    core = state.core
    lanes = REPEAT // width
    m = registers(core)
    if m[0] is MaskMode.COUNTER:
        if mask is MASK_PLACEHOLDER:
            reg = m[1]
            if not (isinstance(reg, tuple) and reg and reg[0] == "count"):
                fail(f"{op}: counter mode, but SetVectorMask(0, count) set no element count", fr)
            n = reg[1]
        else:
            n = int(mask[0] if isinstance(mask, (list, tuple)) else mask)
        if n < 0:
            fail(f"{op}: level-0 mask: negative element count {n} in counter mode", fr)
        reps = -(-n // lanes)
        flat = np.arange(reps * lanes) < n
        return Plan(reps, lanes, flat.reshape(reps, lanes), True)
    reps = int(repeat_times)
    if not 0 <= reps <= MAX_REPEAT:
        fail(
            f"{op}: level-0 repeatTimes {reps} is outside [0, {MAX_REPEAT}]",
            fr,
            hint="split the work into several calls of at most 255 repeats",
        )
    if mask is MASK_PLACEHOLDER:
        reg = m[1]
        if reg and reg[0] == "count":
            fail(f"{op}: normal mode, but the mask register holds a counter-mode count", fr)
        bits = _lane_bits("bits", reg, lanes)
    elif isinstance(mask, (list, tuple, np.ndarray)):
        words = [int(w) for w in mask]
        if len(words) != 2 and not (len(words) == 1 and lanes <= 64):
            fail(f"{op}: level-0 mask: a bit mask is uint64_t[2], got {len(words)} words", fr)
        low, high = words[0], words[1] if len(words) > 1 else 0
        if not (0 <= low < 2**64 and 0 <= high < 2**64):
            fail(f"{op}: level-0 mask: words must be uint64 values", fr)
        if lanes <= 64 and high:
            fail(
                f"{op}: level-0 mask: for {width * 8}-bit types only the low word counts "
                f"(mask[1] must be 0, got {high:#x})",
                fr,
            )
        if lanes > 128:
            fail(f"{op}: level-0 bit masks of 8-bit types are not emulated", fr)
        if low == 0 and high == 0:
            fail(f"{op}: level-0 mask: a bit mask must turn on at least one lane (both words are 0)", fr)
        if lanes <= 32 and low >= 2**32:
            fail(f"{op}: level-0 mask: for 64-bit types only the low 32 bits count (got {low:#x})", fr)
        bits = _lane_bits("bits", (low, high), lanes)
        m[1] = (low, high)
    else:
        n = int(mask)
        if not 1 <= n <= lanes:
            fail(
                f"{op}: level-0 mask: count {n} is outside [1, {lanes}] for {width * 8}-bit types "
                f"(one repeat is 256 B = {lanes} elements)",
                fr,
            )
        bits = _lane_bits("count", n, lanes)
        bits_val = (1 << n) - 1
        m[1] = (bits_val & (2**64 - 1), bits_val >> 64)
    return Plan(reps, lanes, np.broadcast_to(bits, (reps, lanes)))


@lru_cache(maxsize=4096)
def _layout(isz: int, reps: int, lanes: int, blk: int, rep: int) -> np.ndarray:
    """Element offset of every (repeat, lane) of an operand with element size `isz`."""
    epb = BLOCK // isz
    k = np.arange(lanes)
    off = (np.arange(reps)[:, None] * rep * epb) + (k // epb) * blk * epb + (k % epb)
    off.setflags(write=False)
    return off


def check_strides(op: str, fr, **strides) -> None:
    """Repeat strides are uint8 in the params structs ([0, 255] blocks); block strides up to
    uint16 (UnaryRepeatParams); the C++ compiler would silently wrap larger values."""
    for name, v in strides.items():
        top = MAX_REP_STRIDE if "Rep" in name else MAX_STRIDE
        if not 0 <= int(v) <= top:
            fail(f"{op}: level-0 stride {name}={v} is outside [0, {top}] blocks", fr)


def indices(op: str, t: LocalTensor, p: Plan, blk: int, rep: int, fr, is_write: bool):
    """Element indices of `t` the active lanes touch (repeat-major), bounds-checked."""
    isz = t.dtype.itemsize
    off = _layout(isz, p.repeats, p.lanes, int(blk), p.rep_stride(isz, blk, rep))
    idx = off[p.active]
    if idx.size and int(idx.max()) >= t.count:
        oob(op, t, int(idx.max()) + 1, fr, is_write, p.repeats)
    return idx


def oob(op: str, t: LocalTensor, need: int, fr, is_write: bool, reps: int) -> None:
    from ..memory.queue import name_in_frame

    name = name_in_frame(t, fr) or "tensor"
    msg = (
        f"{op} on {reps} repeat(s) {'writes' if is_write else 'reads'} up to element {need - 1} of "
        f"'{name}' but it holds {t.count} ({t.count * t.dtype.itemsize} B)"
    )
    core = state.core
    if core.san is not None:
        core.san.oob(core, t, 0, need, is_write, fr, msg)
    fail(msg, fr, hint="check repeatTimes and the repeat strides against the tensor's size")


def runs(idx: np.ndarray) -> list[tuple[int, int]]:
    """Contiguous (start, count) runs of sorted unique element indices."""
    if idx.size == 0:
        return []
    u = np.unique(idx)
    cut = np.flatnonzero(np.diff(u) != 1) + 1
    starts = np.concatenate(([0], cut))
    ends = np.concatenate((cut, [u.size]))
    return [(int(u[s]), int(e - s)) for s, e in zip(starts, ends)]


def account(op: str, reps: int, nbytes: int, fr, reads, writes) -> None:
    """Record one PIPE_V instruction of `reps` repeats; the sanitizer sees each touched run."""
    core = state.core
    chip = core.chip
    starts = 1 + (reps - 1) // chip.max_repeat if reps else 1
    cycles = chip.vec_startup * starts + reps * chip.vec_cycles_per_repeat(op)
    core.work(V, cycles, op, nbytes, fr)
    san = core.san
    if san is not None:
        for t, idx in reads:
            for s, n in runs(idx):
                san.access(core, t, s, n, False, fr)
        for t, idx in writes:
            for s, n in runs(idx):
                san.access(core, t, s, n, True, fr)


def settle(core) -> None:
    if core.lazy is not None:  # cube regions kept as lineage (lineage.py)
        core.lazy.settle()
