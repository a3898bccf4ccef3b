"""Fixpipe's pre-quantisation and pre-ReLU numbers: what happens to each L0C value on its way out.

A quantisation word is a uint64 (scalar: `deqScalar` / `SetFixpipePreQuantFlag`; per column: a
uint64 tensor in L1 or the fixpipe buffer) laid out as the hardware reads it:

- bits 31:13 — the scale M1, a float32 cut to 10 mantissa bits;
- bits 35:32 — a right shift n, applied first when bit 36 (mode control) is set;
- bits 45:37 — a 9-bit signed offset added after scaling (the zero point of 8-bit outputs);
- bit 46 — the sign of an 8-bit output: saturate to int8 when set, to uint8 when clear (the
  bytes are stored as they are, whatever the destination tensor's type).

Scaling runs in fp32 and rounds to nearest even; every step saturates to its range. Normal ReLU
zeroes the values whose L0C value is negative, before the offset. A Python float given as the
scalar is the scale itself (no offset, no shift): the twin's convenience for hand-written kernels.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from ..dtypes import as_dtype, float32, half, int8, int32, uint8


class QuantMode_t(Enum):  # noqa: N801 - Ascend C's spelling
    """Fixpipe's conversion of the L0C result on its way out (V…: per-column tensor words)."""

    NoQuant = "none"
    F322F16 = "f32_f16"
    F322BF16 = "f32_bf16"
    DEQF16 = "deq_f16"  # int32 × scale → half
    VDEQF16 = "vdeq_f16"
    QF322B8_PRE = "qf32_b8"  # fp32 × scale → int8 / uint8
    VQF322B8_PRE = "vqf32_b8"
    REQ8 = "req8"  # int32 × scale → int8 / uint8
    VREQ8 = "vreq8"
    QS322BF16_PRE = "qs32_bf16"  # int32 × scale → bf16
    VQS322BF16_PRE = "vqs32_bf16"


#: bfloat16 by name: dtypes.py makes it on first use (`quant_types` gives the dtype)
BF16 = "bfloat16"
#: mode → (L0C dtype, output dtypes); read it through `quant_types`
QUANT_TYPES = {
    QuantMode_t.F322F16: (float32, (half,)),
    QuantMode_t.F322BF16: (float32, (BF16,)),
    QuantMode_t.DEQF16: (int32, (half,)),
    QuantMode_t.VDEQF16: (int32, (half,)),
    QuantMode_t.QF322B8_PRE: (float32, (int8, uint8)),
    QuantMode_t.VQF322B8_PRE: (float32, (int8, uint8)),
    QuantMode_t.REQ8: (int32, (int8, uint8)),
    QuantMode_t.VREQ8: (int32, (int8, uint8)),
    QuantMode_t.QS322BF16_PRE: (int32, (BF16,)),
    QuantMode_t.VQS322BF16_PRE: (int32, (BF16,)),
}


def quant_types(q: QuantMode_t) -> tuple[np.dtype, tuple[np.dtype, ...]]:
    """(L0C dtype, output dtypes) of mode `q`, every one a dtype."""
    acc, outs = QUANT_TYPES[q]
    return acc, tuple(as_dtype(o) for o in outs)


VECTOR_MODES = frozenset(
    (QuantMode_t.VDEQF16, QuantMode_t.VQF322B8_PRE, QuantMode_t.VREQ8, QuantMode_t.VQS322BF16_PRE)
)
_SCALED = frozenset(QUANT_TYPES) - {QuantMode_t.F322F16, QuantMode_t.F322BF16}
_TO_8BIT = frozenset((QuantMode_t.QF322B8_PRE, QuantMode_t.VQF322B8_PRE, QuantMode_t.REQ8, QuantMode_t.VREQ8))


def is_plain(q: QuantMode_t, words) -> bool:
    """True when the conversion is a cast (and maybe a float scale): no per-element bit work."""
    return q not in _SCALED or (q is QuantMode_t.DEQF16 and isinstance(words, float))


def decode(words) -> tuple:
    """(scale fp32, offset, shift, shift enabled, signed output) of quantisation words (arrays)."""
    w = np.asarray(words, np.uint64)
    scale = ((w & np.uint64(0xFFFFE000)).astype(np.uint32)).view(np.float32)
    shift = ((w >> np.uint64(32)) & np.uint64(0xF)).astype(np.int64)
    shift_on = ((w >> np.uint64(36)) & np.uint64(1)).astype(bool)
    off = ((w >> np.uint64(37)) & np.uint64(0x1FF)).astype(np.int64)
    off = np.where(off >= 256, off - 512, off)
    signed = ((w >> np.uint64(46)) & np.uint64(1)).astype(bool)
    return scale, off, shift, shift_on, signed


def _sat_round(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return np.clip(np.rint(x), lo, hi)


def _to_half(x: np.ndarray) -> np.ndarray:
    fmax = float(np.finfo(np.float16).max)
    return np.clip(x, -fmax, fmax).astype(np.float16)


def apply(x: np.ndarray, q: QuantMode_t, words, relu: bool, out_dtype) -> np.ndarray:
    """The converted m × n block: `x` is the L0C values (fp32 or int32) in ND order, `words` a
    scalar word, a float scale, or one word per column."""
    out_dtype = np.dtype(out_dtype)
    if q not in _SCALED:
        y = np.maximum(x, 0) if relu else x
        return y.astype(out_dtype)
    if isinstance(words, float):
        scale, off, shift, shift_on, signed = np.float32(words), 0, 0, False, out_dtype == int8
    else:
        scale, off, shift, shift_on, signed = decode(words)
    v = x
    if np.any(shift_on):
        if x.dtype == np.int32:
            shifted = x.astype(np.int64) >> shift
        else:
            shifted = x.astype(np.float32) / np.exp2(shift).astype(np.float32)
        if q is QuantMode_t.DEQF16 or q is QuantMode_t.VDEQF16:
            shifted = _to_half(shifted).astype(np.float32)
        else:
            shifted = _sat_round(shifted, -32768, 32767)
        v = np.where(shift_on, shifted, x)
    y = v.astype(np.float32) * scale
    if relu:
        y = np.where(x >= 0, y, np.float32(0))
    if q in _TO_8BIT:  # the word's sign bit picks the saturation; the bytes land as they are
        z = _sat_round(y, -256, 255) + off
        z = np.clip(z, np.where(signed, -128, 0), np.where(signed, 127, 255))
        return (z.astype(np.int64) & 0xFF).astype(np.uint8).view(out_dtype)
    if out_dtype == half:
        return _to_half(_to_half(y).astype(np.float32) + off)
    return (y + off).astype(out_dtype)
