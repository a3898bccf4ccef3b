"""fp16 ↔ fp32 conversions of whole (strided) arrays: the same bits as numpy's casts, faster.

Why: numpy's float16 casts convert element by element in scalar code (its x86-64 wheels are
built without F16C): 1.3–2 ns an element on the dev box. The emulated cube widens its fp16
operands and its Fixpipe narrows fp32 results to fp16, about a fifth of a 1024³ fp16 matmul's
full emulation. The C loops (npu/_fp16.c, vectorised, without the GIL) take 0.25–0.6 ns.

Where the extension was not built (an install without a C compiler), numpy converts: the
same bits, slower. `BUILT` says which.
"""

from __future__ import annotations

import numpy as np

try:
    from . import _fp16
except ImportError:  # (setup.py builds it as optional)
    _fp16 = None

#: whether the C loops are here
BUILT = _fp16 is not None

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)


def _c_loops(out: np.ndarray, src: np.ndarray, out_t, src_t) -> bool:
    """Whether the C loops take this pair: built, the dtypes, one shape, and no memory shared
    (the loops read and write in one pass; numpy copes with overlap, they do not)."""
    return (
        _fp16 is not None
        and src.dtype == src_t
        and out.dtype == out_t
        and out.shape == src.shape
        and not np.may_share_memory(out, src)
    )


def widen_f16(out: np.ndarray, src: np.ndarray) -> bool:
    """out[...] = src.astype(float32) for float16 `src`, float32 `out` of its shape, in C;
    False (nothing done) where the C loops cannot (`_c_loops`)."""
    if not _c_loops(out, src, F32, F16):
        return False
    _fp16.widen(out, src)
    return True


def cast_into(out: np.ndarray, src: np.ndarray) -> None:
    """out[...] = src cast as numpy casts (`casting="unsafe"`): fp32 ↔ fp16 in C. An fp16
    overflow becomes inf silently on either path (numpy's own cast would also warn)."""
    if widen_f16(out, src):
        return
    if _c_loops(out, src, F16, F32):
        _fp16.narrow(out, src)
        return
    if out.dtype == F16 and src.dtype == F32:
        with np.errstate(over="ignore"):
            np.copyto(out, src, casting="unsafe")
        return
    np.copyto(out, src, casting="unsafe")
