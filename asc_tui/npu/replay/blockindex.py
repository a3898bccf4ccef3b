"""The block index of a template run: `GetBlockIdx()` as a symbolic integer (npu/replay/replay.py).

A `BlockIndex` is the value this block sees and, on the same path, every other block's: affine
`a * block + c`, or one value per block (`s * base + c` over a shared array). Arithmetic that
keeps that form keeps the taint; each comparison becomes a constraint on which blocks take the
same path (`Guards`, in npu/replay/replay.py); any other use pins the template to its own block.
`trange`, `tmin` and `tmax` stand in for the builtins in a template run's kernel module.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .replay import Guards

_I64 = 1 << 63  # past int64: numpy's block-index values cannot be masked with it
_LO, _HI = -_I64, _I64 - 1  # what numpy's int64 holds
_M64 = (1 << 64) - 1
_FAST = True  # False: every vector value is an array and every comparison tests it (tests)
_new = object.__new__

_REL = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def _wrap(x: int) -> int:
    """`x` as numpy's int64 holds it (two's complement: modulo 2**64)."""
    return ((x + _I64) & _M64) - _I64


class _Base:
    """Per-block values (int64, never the same in every block: `_vec` made them) that vector
    block indices are `s * base + c` of, with their least and greatest value once asked for.

    Why this is exact: int64 +, - and * wrap modulo 2**64, so any chain of them by ints numpy
    accepts gives, element for element, the array `apply` makes from the chain's `s` and `c`;
    and where the exact values of `s * base + c` (`span`) all fit int64, numpy's are they.
    """

    __slots__ = ("arr", "lo", "hi", "scaled", "masked")

    def __init__(self, arr: np.ndarray):
        arr.flags.writeable = False  # (a value's own array, and shared: see `apply`)
        self.arr = arr
        self.lo = self.hi = None
        self.scaled = (1, arr)  # the last `s * base` made (a tile's offsets share their `s`)
        self.masked = (None, 0, 0)  # (mask, least, greatest) over the blocks a mask keeps

    def span(self, s: int, c: int) -> tuple[int, int]:
        """The least and greatest of the exact values `s * base + c` over all blocks."""
        lo = self.lo
        if lo is None:
            lo = self.lo = int(self.arr.min())
            self.hi = int(self.arr.max())
        x, y = s * lo + c, s * self.hi + c
        return (x, y) if x <= y else (y, x)

    def span_in(self, mask: np.ndarray, s: int, c: int) -> tuple[int, int] | None:
        """`span` over the blocks `mask` keeps only (None: it keeps none)."""
        m = self.masked
        if m[0] is not mask:  # (a mask is replaced, never changed: `Guards.agree`)
            kept = self.arr[mask]
            m = self.masked = (mask, int(kept.min()), int(kept.max())) if kept.size else (mask, None, None)
        if m[1] is None:
            return None
        x, y = s * m[1] + c, s * m[2] + c
        return (x, y) if x <= y else (y, x)

    def apply(self, s: int, c: int) -> np.ndarray:
        """`s * base + c` in int64, as numpy computes it."""
        if not _LO <= s <= _HI:
            s = _wrap(s)
        if not _LO <= c <= _HI:
            c = _wrap(c)
        k, arr = self.scaled
        if k != s:
            arr = self.arr * s
            arr.flags.writeable = False  # shared by the values of every `s * base + c`
            self.scaled = (s, arr)
        return arr + c if c else arr


def _settled_at(rel: str, span: tuple[int, int], o: int) -> bool:
    """Whether `rel(x, o)` comes out the same for every x in `span`, which numpy's int64
    holds exactly."""
    lo, hi = span
    return _LO <= lo and hi <= _HI and _settled(rel, lo - o, hi - o)


def _settled(rel: str, lo: int, hi: int) -> bool:
    """Whether `rel(d, 0)` comes out the same for every integer d in [lo, hi]."""
    if lo == hi:
        return True
    if rel == "==" or rel == "!=":
        return lo > 0 or hi < 0
    f = _REL[rel]  # < <= > >= are monotonic in d: the ends decide
    return f(lo, 0) == f(hi, 0)


def _exact_span(x: BlockIndex) -> tuple[int, int] | None:
    """`x.span()` when numpy computes `x.values()` exactly and without an error, else None."""
    if x.a and not _LO <= x.a <= _HI:  # `a * (xs - block)` raises
        return None
    lo, hi = x.span()
    return (lo, hi) if _LO <= lo and hi <= _HI else None


def _same_for_all(x: BlockIndex, y: BlockIndex, rel: str) -> bool:
    """Whether `rel(x, y)` comes out the same in every block, shown from spans alone (False
    when it cannot be shown so: the arrays decide)."""
    sx, sy = _exact_span(x), _exact_span(y)
    if sx is None or sy is None:
        return False
    if x.base is not None and x.base is y.base:  # one base: the difference is `ds * base + dc`
        return _settled(rel, *x.base.span(x.s - y.s, x.c - y.c))
    return _settled(rel, sx[0] - sy[1], sx[1] - sy[0])


class BlockIndex:
    """`GetBlockIdx()` in a template run, and what the kernel computes from it: the value `v`
    this block sees, and what every other block would see on the same path — `a * block +
    const` while the arithmetic stays affine (`a` set), else the values of all blocks as one
    array (after // or % by a non-divisor: tile coordinates, say; `a` is then 0).

    Such a vector is kept as `s * base + c` over a shared `_Base` (ints `s`, `c`), its array
    (`vals`) made only when asked for: a kernel offsets tile coordinates by ints over and over
    (`m0 * K + k0`, a tensor's start, size and limit), and a comparison whose outcome the
    bounds of `base` show to be every block's needs no array at all (see `_Base`).

    Deliberately not an `int` subclass: C code (range, indexing, slicing) reads an int
    subclass's value without asking, which would let the block index steer the kernel unseen.
    Here every such use goes through `__index__` and pins the template.
    """

    __slots__ = ("v", "a", "g", "vals", "base", "s", "c", "rsub", "mul")

    def __init__(self, v: int, a: int, g: Guards, vals: np.ndarray | None = None):
        self.v = v
        self.a = a
        self.g = g
        self.vals = vals
        self.base = None if vals is None else _Base(vals)
        self.s = 1
        self.c = 0
        # the last `o - self` and `self * o` (o, result): a tensor view's size and limit, a
        # tile origin times the row length, are asked for again and again (the value is
        # immutable, so the same result may serve)
        self.rsub = self.mul = None

    def values(self) -> np.ndarray:
        """This value in every block (int64 array indexed by block)."""
        if self.a:
            g = self.g
            return self.a * (g.xs - g.block) + self.v
        vals = self.vals
        if vals is None:
            vals = self.vals = self.base.apply(self.s, self.c)
        return vals

    def _vec(self, vals: np.ndarray) -> BlockIndex | int:
        """A value known per block: plain when it is the same in all of them."""
        v = int(vals[self.g.block])
        if (vals == v).all():
            return v
        return BlockIndex(v, 0, self.g, vals)

    def _shifted(self, v: int, s: int, c: int) -> BlockIndex:
        """`s * base + c` over this vector's base, whose value here is `v`."""
        b = _new(BlockIndex)
        b.v, b.a, b.g, b.vals, b.base = v, 0, self.g, None, self.base
        b.s, b.c, b.rsub, b.mul = s, c, None, None
        return b

    def _sum(self, o: BlockIndex, sign: int) -> BlockIndex | int | None:
        """`self + sign * o` for two vectors over one base, or None when the numpy sum (int64,
        wrapping) might differ from the exact one (then the caller adds the arrays)."""
        s, c = self.s + sign * o.s, self.c + sign * o.c
        if not _wrap(s):  # every block: c (as int64 holds it): what `_vec` makes of the array
            return _wrap(c)
        lo, hi = self.base.span(s, c)
        if _LO <= lo and hi <= _HI:  # s != 0 over a base that is never uniform: a vector
            return self._shifted(self.v + sign * o.v, s, c)
        return None

    def _everywhere(self, rel: str, o: int, outcome: bool) -> bool:
        """Whether `rel(self, o)` (a vector against an int numpy holds) comes out `outcome` in
        every block, or in every block the guards' mask keeps — then `agree` would leave the
        mask as it is: a tile loop's second pass, which the blocks with one tile fail, has
        its comparisons settled by the mask that loop set."""
        base, s, c = self.base, self.s, self.c
        if _settled_at(rel, base.span(s, c), o):
            return True
        mask = self.g.mask
        if mask is None:
            return False
        span = base.span_in(mask, s, c)
        if span is None:  # no block left: `mask & same` is the mask
            return True
        return _settled_at(rel, span, o) and _REL[rel](span[0], o) == outcome

    def span(self) -> tuple[int, int]:
        """The least and greatest value over all blocks, in exact (not int64) arithmetic."""
        if self.a:
            g = self.g
            ends = self.a * -g.block + self.v, self.a * (len(g.xs) - 1 - g.block) + self.v
            return min(ends), max(ends)
        return self.base.span(self.s, self.c)

    # ---- arithmetic: stays tainted -----------------------------------------------------------
    def __add__(self, o):
        if type(o) is int:
            if not o:  # (a tensor view from start 0): the same value; nothing to make
                return self
            if self.a:
                return BlockIndex(self.v + o, self.a, self.g)
            if _FAST and _LO <= o <= _HI:  # numpy would take `o`: the array is made when needed
                return self._shifted(self.v + o, self.s, self.c + o)
            return BlockIndex(self.v + o, 0, self.g, self.values() + o)  # numpy's OverflowError
        if type(o) is BlockIndex:
            if self.a and o.a:
                a = self.a + o.a
                return BlockIndex(self.v + o.v, a, self.g) if a else self.v + o.v
            if _FAST and self.base is o.base:
                r = self._sum(o, 1)
                if r is not None:
                    return r
            return self._vec(self.values() + o.values())
        return self._plain() + o

    __radd__ = __add__

    def __sub__(self, o):
        if type(o) is int:
            return self + (-o)
        if type(o) is BlockIndex:
            if self.a and o.a:
                a = self.a - o.a
                return BlockIndex(self.v - o.v, a, self.g) if a else self.v - o.v
            if _FAST and self.base is o.base:
                r = self._sum(o, -1)
                if r is not None:
                    return r
            return self._vec(self.values() - o.values())
        return self._plain() - o

    def __rsub__(self, o):
        if type(o) is int:
            last = self.rsub
            if last is not None and last[0] == o:
                return last[1]
            if self.a:
                r = BlockIndex(o - self.v, -self.a, self.g)
            elif _FAST and _LO <= o <= _HI:
                r = self._shifted(o - self.v, -self.s, o - self.c)
            else:
                return BlockIndex(o - self.v, 0, self.g, o - self.values())
            if _FAST:
                self.rsub = (o, r)
            return r
        return o - self._plain()

    def __mul__(self, o):
        if type(o) is int:
            if not o:
                return 0
            if o == 1:
                return self
            last = self.mul
            if last is not None and last[0] == o:
                return last[1]
            if self.a:
                r = BlockIndex(self.v * o, self.a * o, self.g)
            elif _FAST and _LO <= o <= _HI:
                r = self._shifted(self.v * o, self.s * o, self.c * o)
            else:
                return BlockIndex(self.v * o, 0, self.g, self.values() * o)
            if _FAST:
                self.mul = (o, r)
            return r
        if type(o) is BlockIndex:
            return self._vec(self.values() * o.values())
        return self._plain() * o

    __rmul__ = __mul__

    def __neg__(self):
        if self.a:
            return BlockIndex(-self.v, -self.a, self.g)
        if not _FAST:
            return BlockIndex(-self.v, 0, self.g, -self.values())
        return self._shifted(-self.v, -self.s, -self.c)

    def __pos__(self):
        return self

    def __floordiv__(self, o):
        if type(o) is int and o:
            if self.a and self.a % o == 0:  # (a*x + c) // k = (a/k)*x + c // k
                return BlockIndex(self.v // o, self.a // o, self.g)
            return self._vec(self.values() // o)
        return self._plain() // o

    def __mod__(self, o):
        if type(o) is int and o:
            if self.a and self.a % o == 0:  # (a*x + c) % k = c % k: the same for all
                return self.v % o
            return self._vec(self.values() % o)
        return self._plain() % o

    # ---- comparisons: become constraints on the block index ------------------------------------
    def _cmp(self, o, rel: str):
        if type(o) is int:
            if not self.a:
                outcome = _REL[rel](self.v, o)
                if not (_FAST and _LO <= o <= _HI and self._everywhere(rel, o, outcome)):
                    self.g.agree(_REL[rel](self.values(), o) == outcome)
                return outcome
            a, d = self.a, self.v - o
        elif type(o) is BlockIndex:
            if not (self.a and o.a):
                outcome = _REL[rel](self.v, o.v)
                if not (_FAST and (o is self or _same_for_all(self, o, rel))):  # (x vs x: alike)
                    self.g.agree(_REL[rel](self.values(), o.values()) == outcome)
                return outcome
            a, d = self.a - o.a, self.v - o.v
        else:
            return _REL[rel](self._plain(), o)
        outcome = _REL[rel](d, 0)
        if a:
            self.g.linear(a, d, rel, outcome)
        return outcome

    def __lt__(self, o):
        return self._cmp(o, "<")

    def __le__(self, o):
        return self._cmp(o, "<=")

    def __gt__(self, o):
        return self._cmp(o, ">")

    def __ge__(self, o):
        return self._cmp(o, ">=")

    def __eq__(self, o):
        return self._cmp(o, "==")

    def __ne__(self, o):
        return self._cmp(o, "!=")

    def __bool__(self):
        return self._cmp(0, "!=")

    # ---- everything else: the value leaves the affine world; the template is its own block -----
    def _plain(self) -> int:
        """The value, as an int the kernel may use any way: the template is pinned to its
        own block unless every block it still admits has this value (the row count of a
        tail band, say, which comparisons already set apart from the other bands)."""
        g = self.g
        if not g.pinned and not (self.values()[g.admitted()] == self.v).all():
            g.pin()
        return self.v

    def __hash__(self):
        return hash(self._plain())

    def __index__(self):
        return self._plain()

    __int__ = __index__

    def __float__(self):
        return float(self._plain())

    def __format__(self, spec):
        return format(self._plain(), spec)

    def __repr__(self):
        return repr(self._plain())

    __str__ = __repr__

    def __getattr__(self, name):  # int methods (bit_length, to_bytes, real...)
        return getattr(self._plain(), name)

    def __truediv__(self, o):
        return self._plain() / o

    def __rtruediv__(self, o):
        return o / self._plain()

    def __rfloordiv__(self, o):
        return o // self._plain()

    def __rmod__(self, o):
        return o % self._plain()

    def __divmod__(self, o):
        return divmod(self._plain(), o)

    def __rdivmod__(self, o):
        return divmod(o, self._plain())

    def __pow__(self, o, m=None):
        return pow(self._plain(), o, m)

    def __rpow__(self, o):
        return pow(o, self._plain())

    def __abs__(self):
        return abs(self._plain())

    def __round__(self, n=None):
        return round(self._plain(), n)

    def __trunc__(self):
        return self._plain()

    def __floor__(self):
        return self._plain()

    def __ceil__(self):
        return self._plain()

    def __invert__(self):
        return ~self._plain()

    def __and__(self, o):
        """A mask (C++ code converting to an unsigned type: `x & 0xFFFFFFFF`, a sign test
        `x & 0x80000000`): the value itself, or one int, when it is so in every admitted block."""
        g = self.g
        if type(o) is not int or g.pinned:
            return self._plain() & o
        vals = self.values()[g.admitted()]
        if o >= _I64 and o & (_I64 - 1) == _I64 - 1:  # a 64-bit unsigned mask
            return self if (vals >= 0).all() else self._plain() & o
        if not -_I64 <= o < _I64:
            return self._plain() & o
        if ((vals & o) == vals).all():
            return self
        v = self.v & o
        if ((vals & o) == v).all():
            return v
        return self._plain() & o

    __rand__ = __and__

    def __or__(self, o):
        return self._plain() | o

    def __ror__(self, o):
        return o | self._plain()

    def __xor__(self, o):
        return self._plain() ^ o

    def __rxor__(self, o):
        return o ^ self._plain()

    def __lshift__(self, o):
        return self._plain() << o

    def __rlshift__(self, o):
        return o << self._plain()

    def __rshift__(self, o):
        return self._plain() >> o

    def __rrshift__(self, o):
        return o >> self._plain()


def trange(*args):
    """`range` for code that may loop over a block index (`range(GetBlockIdx(), n, B)`): with
    plain arguments the builtin range; with a block index, the same iterations as a range of
    its value, each a block index too, and a constraint that every admitted block makes as many.
    Installed as the kernel module's `range` during template runs (npu/launch/blocks.py)."""
    if BlockIndex not in map(type, args):
        return range(*args)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    g = guards_of(*args)
    if type(step) is not int or not step:
        g.pin()
        return range(*(int(x) for x in args))
    plain = range(_value(start), _value(stop), step)
    n = len(plain)
    lo, hi = _values(start, g), _values(stop, g)
    counts = np.maximum(-((lo - hi) // step), 0) if step > 0 else np.maximum(-((hi - lo) // -step), 0)
    g.agree(counts == n)
    if type(start) is not BlockIndex:
        return plain
    return _Iterations(start, step, n)


def tmin(*args, **kw):
    """`min` for code that may compare block indices: the builtin's, except that a result every
    admitted block shares is that plain int (`min(N - ni * 512, 512)` is 512 in every column:
    the tie in the last one does not set it apart). Installed with `trange`."""
    if BlockIndex not in map(type, args):  # plain ints (a K loop's tail): the builtin's
        return min(*args, **kw)
    return _extreme(min, np.minimum, args, kw)


def tmax(*args, **kw):
    """`max`, as `tmin` is `min`."""
    if BlockIndex not in map(type, args):
        return max(*args, **kw)
    return _extreme(max, np.maximum, args, kw)


def _extreme(builtin, ufunc, args: tuple, kw: dict):
    if kw or len(args) < 2:
        return builtin(*args, **kw)
    g = None
    for x in args:
        if type(x) is BlockIndex:
            if g is None:
                g = x.g
        elif type(x) is not int:
            return builtin(*args)
    if g is None or g.pinned:
        return builtin(*args)
    if _FAST:
        k = _int_extreme(args, builtin is min)
        if k is not None:
            return k
    vals = ufunc.reduce([_values(x, g) for x in args])
    v = int(vals[g.block])
    if (vals[g.admitted()] == v).all():
        return v
    return builtin(*args)


def _int_extreme(args: tuple, least: bool) -> int | None:
    """The int among `args` that is the least (`least`) or greatest of them in every block,
    shown from spans alone — what the arrays would show — or None."""
    ints = [x for x in args if type(x) is int]
    if not ints:
        return None
    k = min(ints) if least else max(ints)
    if not _LO <= min(ints) or not max(ints) <= _HI:  # `np.full` raises
        return None
    for x in args:
        if type(x) is BlockIndex:
            span = _exact_span(x)
            if span is None or (k > span[0] if least else k < span[1]):
                return None
    return k


class _Iterations:
    """The iterations of a `trange` that starts at a block index."""

    __slots__ = ("start", "step", "n")

    def __init__(self, start: BlockIndex, step: int, n: int):
        self.start, self.step, self.n = start, step, n

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        start, step = self.start, self.step
        for k in range(self.n):
            yield start + k * step


def _value(x) -> int:
    return x.v if type(x) is BlockIndex else int(x)


def _values(x, g: Guards) -> np.ndarray:
    return x.values() if type(x) is BlockIndex else np.full(len(g.xs), int(x), dtype=np.int64)


def steady_offset(x, y) -> int | None:
    """The int that `x.values() - y.values()` is in every block (int64, as numpy subtracts),
    when `x` and `y` are vectors over one base with one scale — a K loop's offsets from one
    tile origin — so that no array need show it; else None."""
    if (
        _FAST
        and type(x) is BlockIndex
        and type(y) is BlockIndex
        and x.base is not None
        and x.base is y.base
        and _wrap(x.s) == _wrap(y.s)
    ):
        return _wrap(x.c - y.c)  # (modulo 2**64 the scales cancel, as in numpy's int64)
    return None


def guards_of(*args) -> Guards | None:
    """The guards of the first block index among `args` (None when all are plain)."""
    for x in args:
        if type(x) is BlockIndex:
            return x.g
    return None
