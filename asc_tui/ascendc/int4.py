"""int4b_t: packed 4-bit integers (two per byte, element 2i in the low nibble of byte i).

A tensor of int4b_t keeps its packed bytes as its array (`dtypes.typed_view`). The cube path
moves them as bytes (`as_bytes`: Nd2Nz copies and LoadData count whole bytes, fractals are
512 B = 16 × 64 elements); Mmad and Cast unpack them to values (`unpack`, sign-extended) and
Cast packs its results back (`pack`), saturating to [-8, 7] after the round mode.
"""

from __future__ import annotations

import numpy as np

from ..npu import state
from .dtypes import int8, is_int4
from .memory.tensors import GlobalTensor, LocalTensor
from .vector import level0 as L

LO, HI = -8, 7


def unpack(raw: np.ndarray, count: int | None = None) -> np.ndarray:
    """Packed bytes → int8 values (element 2i from the low nibble of byte i)."""
    b = raw.view(np.uint8)
    out = np.empty(b.size * 2, np.int8)
    out[0::2] = b & 0xF
    out[1::2] = b >> 4
    out = np.where(out >= 8, out - 16, out).astype(np.int8)
    return out if count is None else out[:count]


def pack(values: np.ndarray) -> np.ndarray:
    """int values in [-8, 7] (an even count) → packed bytes."""
    v = np.asarray(values).astype(np.int8).view(np.uint8) & 0xF
    return (v[0::2] | (v[1::2] << 4)).astype(np.uint8)


def as_bytes(t):
    """An int4b_t tensor seen as the bytes it occupies (uint8, half the elements): what the
    byte-moving instructions work on. Other tensors are returned as they are."""
    if not is_int4(t.dtype):
        return t
    if type(t) is LocalTensor:
        return LocalTensor(t.pos, t.mem, np.dtype(np.uint8), t.offset, t.count // 2, t.arr, t.slot)
    g = GlobalTensor.__new__(GlobalTensor)
    g.dtype = np.dtype(np.uint8)
    g.buffer, g.arr, g.name = t.buffer, t.arr, t.name
    g.start, g.size, g.limit = t.start // 2, t.size // 2, t.limit // 2
    g.base, g.base_size = t.base // 2, t.base_size // 2
    return g


def move_arrays(core, src, s_bytes: int, dst, d_bytes: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """(source array, destination array, packed) for an instruction that rearranges elements
    from L1 into L0 (LoadDataWithTranspose, Load3Dv2): their bytes settled (lineage), and for
    int4b_t the unpacked values — write the destination back with `pack` when packed."""
    lz = core.lazy
    if lz is not None:
        lz.settle_range(src.mem, src.offset, src.offset + s_bytes)
        lz.settle_range(dst.mem, dst.offset, dst.offset + d_bytes)
    if not is_int4(src.dtype):
        return src.arr, dst.arr, False
    return unpack(src.arr[:s_bytes]), unpack(dst.arr[:d_bytes]), True


def _layout(epb: int, p: L.Plan, blk: int, rep: int) -> np.ndarray:
    """Element index of every active lane of an operand with `epb` elements per 32 B block."""
    k = np.arange(p.lanes)
    stride = p.lanes // epb * blk if p.counter else rep
    off = np.arange(p.repeats)[:, None] * stride * epb + (k // epb) * blk * epb + k % epb
    return off[p.active]


def cast(dst, src, round_mode, count, l0: tuple, fr) -> None:
    """Cast to or from int4b_t: the count form (`l0` empty) or the level-0 form (`l0` =
    (repeatTimes, UnaryRepeatParams), `count` the mask)."""
    from .vector.l0 import cast_values  # (vector_l0 is imported by vector, which imports us)

    core = state.core
    if l0:
        reps, params = (*l0, None)[:2]
        p = L.params_of(L.UnaryRepeatParams, params)
        width = max(2 if is_int4(d) else d.itemsize for d in (dst.dtype, src.dtype))
        pl = L.plan("Cast", count, reps, width, fr)
        isrc = _indices(src, pl, p.srcBlkStride, p.srcRepStride, fr, False)
        idst = _indices(dst, pl, p.dstBlkStride, p.dstRepStride, fr, True)
        n_rep = pl.repeats
    else:
        n = int(count)
        if n > min(dst.count, src.count) or n < 0:
            L.fail(f"Cast of {n} elements: the tensors hold {src.count} and {dst.count}", fr)
        isrc = idst = np.arange(n)
        n_rep = -(-n // (L.REPEAT // 2))
    if core.numeric:
        L.settle(core)
        vals = unpack(src.arr, src.count)[isrc] if is_int4(src.dtype) else src.arr[isrc]
        if is_int4(dst.dtype):
            out = np.clip(cast_values(vals, int8, round_mode), LO, HI)
            full = unpack(dst.arr)  # untouched nibbles are written back as they were
            full[idst] = out
            dst.arr[...] = pack(full)
        else:
            dst.arr[idst] = cast_values(vals.astype(np.float32), dst.dtype, round_mode)
    rs = (as_bytes(src), np.unique(isrc // 2)) if is_int4(src.dtype) else (src, isrc)
    ws = (as_bytes(dst), np.unique(idst // 2)) if is_int4(dst.dtype) else (dst, idst)
    L.account("Cast", n_rep, n_rep * L.REPEAT, fr, (rs,), (ws,))


def _indices(t, pl, blk: int, rep: int, fr, is_write: bool) -> np.ndarray:
    if not is_int4(t.dtype):
        return L.indices("Cast", t, pl, blk, rep, fr, is_write)
    idx = _layout(64, pl, int(blk), int(rep))
    if idx.size and int(idx.max()) >= t.count:
        L.oob("Cast", t, int(idx.max()) + 1, fr, is_write, pl.repeats)
    return idx
