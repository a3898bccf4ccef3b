"""Widening 1- and 2-byte numbers (fp16, bf16, int8, ...) to a wider type by table lookup.

Why: numpy's fp16→fp32 `astype` converts element by element (~1.5–3.5 ns each on the dev
box); a lookup in a table of every bit pattern costs ~0.8 ns and fuses with a transposed read,
and fp16 → fp32 goes through the C loops of npu/fp16.py where they are built (~0.25 ns).
The emulated cube widens its operands this way (ascendc/mmad_numbers.py), and the precision
check its 80M-element outputs (devkit/precision.py).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..fp16 import widen_f16

_BITS = {1: np.uint8, 2: np.uint16}


@cache
def widen_table(src, wide) -> np.ndarray:
    """Every value of the 1- or 2-byte type `src` as `wide`, indexed by its bit pattern.

    Built with `astype` itself, so every entry — NaN payloads included — is bit-identical to
    converting directly.
    """
    bits = np.arange(1 << (8 * src.itemsize), dtype=_BITS[src.itemsize])
    return bits.view(src).astype(wide)


def widen_into(out: np.ndarray, tile: np.ndarray, wide) -> None:
    """out[...] = tile.astype(wide) for a (transposed) view `tile`, by table where that pays."""
    if widen_f16(out, tile):
        return
    bits = _BITS.get(tile.dtype.itemsize)
    if bits is None or tile.dtype == np.dtype(wide):
        out[...] = tile
        return
    table = widen_table(tile.dtype, np.dtype(wide))
    if out.flags.c_contiguous:
        np.take(table, tile.view(bits), out=out, mode="clip")
    else:  # (take's own `out=` first copies a strided `out` in, then back: ~20% more for B's
        out[...] = table.take(tile.view(bits), mode="clip")  # column slabs of a 1024³ matmul)


def widened(a: np.ndarray, wide) -> np.ndarray:
    """`a.astype(wide)` (a new array), by table where that pays."""
    out = np.empty(a.shape, wide)
    widen_into(out, a, wide)
    return out
