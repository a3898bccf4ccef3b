"""fp16 ↔ fp32 conversions of whole (strided) arrays, and fp16 arithmetic through them
(`Binary`): the same bits as numpy's casts and half loops, faster.

Why: numpy's float16 casts convert element by element in scalar code (its x86-64 wheels are
built without F16C): 1.3–2 ns an element on the dev box. The emulated cube widens its fp16
operands and its Fixpipe narrows fp32 results to fp16, about a fifth of a 1024³ fp16 matmul's
full emulation. The C loops (npu/_fp16.c, vectorised, without the GIL) take 0.25–0.6 ns.
numpy's half Add/Sub/Mul/Div convert the same way around one fp32 operation; `Binary` does
that in fp32 with the C loops (vector_add_bias full: 0.43 → 0.27 s).

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


#: elements per step of `Binary`: its three fp32 scratch arrays (768 KB) stay in L2
CHUNK = 1 << 16
#: below this many elements numpy's own half loop is as fast
SMALL = 4096
#: the least fp32 magnitude that rounds to an fp16 inf (65504 + half an ulp)
HALF_INF = 65520.0


class Binary:
    """numpy's `ufunc` (add, subtract, multiply or divide) for fp16 arrays, through fp32 and the C
    loops: the same bits as numpy's half loops, several times faster on large arrays.

    Why the same bits: numpy's half arithmetic is one fp32 operation rounded to fp16, and fp32
    has more than 2 × 11 + 2 significand bits, so that double rounding is the correctly rounded
    result (the one native fp16 arithmetic gives too). Two things are numpy's own and stay
    with it: which NaN's payload a NaN op NaN returns (a step whose operands both hold a NaN),
    and the overflow warning of a result that rounds to inf (a step with an fp16 inf, when
    overflow is not ignored): those steps run numpy's loop. Operands of one shape in any
    strides are taken (a block replay's batches are strided, npu/replay/numops.py); anything else
    (other dtypes, broadcasting, partly overlapping arrays, small ones) is the plain ufunc.
    """

    def __init__(self, ufunc):
        self.ufunc = ufunc
        self.__name__ = ufunc.__name__

    def __call__(self, a, b, out=None):
        if not self._takes(a, b, out):
            return self.ufunc(a, b, out=out)
        ufunc = self.ufunc
        warn_over = np.geterr()["over"] != "ignore"
        size = min(out.size, CHUNK)
        fa, fb, fr = np.empty(size, F32), np.empty(size, F32), np.empty(size, F32)
        for ix in _pieces(out.shape, CHUNK):
            x, y, o = a[ix], b[ix], out[ix]
            m = o.size
            wa, wb, wr = (w[:m].reshape(o.shape) for w in (fa, fb, fr))
            _fp16.widen(wa, x)
            _fp16.widen(wb, y)
            if np.isnan(wa).any() and np.isnan(wb).any():
                ufunc(x, y, out=o)  # (numpy picks the NaN)
                continue
            ufunc(wa, wb, out=wr)  # (invalid / divide-by-zero warnings as the half loop's)
            if warn_over and (
                np.fmax.reduce(wr, axis=None) >= HALF_INF or np.fmin.reduce(wr, axis=None) <= -HALF_INF
            ):
                ufunc(x, y, out=o)  # (an fp16 inf: numpy's overflow warning)
                continue
            _fp16.narrow(o, wr)
        return out

    @staticmethod
    def _takes(a, b, out) -> bool:
        # (cheapest refusals first: most calls are small tiles, which numpy's loop takes)
        if type(out) is not np.ndarray or out.size < SMALL or out.dtype != F16 or _fp16 is None:
            return False
        if type(a) is not np.ndarray or type(b) is not np.ndarray or a.dtype != F16 or b.dtype != F16:
            return False
        if a.shape != out.shape or b.shape != out.shape or not out.flags.writeable:
            return False
        where = out.__array_interface__["data"][0]
        for x in (a, b):  # the same view, or no memory shared: each step reads before it writes
            same = x.__array_interface__["data"][0] == where and x.strides == out.strides
            if not same and np.may_share_memory(x, out):
                return False
        return True


def _pieces(shape: tuple, limit: int):
    """Index tuples cutting an array of `shape` into pieces of at most ~`limit` elements, along
    its leading axes (each piece a strided view with the array's own strides)."""
    if not shape:
        yield ()
        return
    inner = 1
    for s in shape[1:]:
        inner *= s
    if inner <= limit:
        step = max(1, limit // max(inner, 1))
        for i in range(0, shape[0], step):
            yield (slice(i, i + step),)
    else:
        for i in range(shape[0]):
            for rest in _pieces(shape[1:], limit):
                yield (slice(i, i + 1), *rest)
