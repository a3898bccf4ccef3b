"""Record once, replay many: blocks whose instruction stream is provably the template's.

Why: most kernels run the same instruction stream in every block, only at other GM addresses.
In timing-only mode a block's stream depends on nothing but the kernel's code, its tiling, the
block's start time and HBM share, and the block index `GetBlockIdx()` returns. So a launch
runs the Python kernel once per distinct stream and copies the recorded columns for every
other block that provably has the same stream (vector_add_bias, 8 blocks: 1 kernel run, not 8).

How the proof works: in a template run `GetBlockIdx()` returns a `BlockIndex`, an integer
that remembers it is `a * block + c`. Arithmetic that keeps it affine (+, -, * by an int, //
and % by a divisor of `a`) keeps the taint; every comparison the kernel or the kernel API
makes with it (bounds checks, `min`, `max`, `if`) becomes a linear constraint on the block
index that keeps the comparison's outcome (`Guards`). Every other use — `range(idx, ...)`,
indexing, hashing, formatting, float maths, `int()` — pins the template to its own block,
unless every block the constraints still admit has that same value (a tail band's row count,
once comparisons have set the band apart).
A later block replays the template only if it satisfies every constraint, starts at the same
time on its core and shares HBM with as many cores: then it executes the same Python path,
issues the same instructions with the same costs, and its records are the template's.

In a full (numeric) run the template also traces its numbers, and a replayed block's come
from running that trace with the block's GM offsets (npu/numtrace.py; a cube launch's L0C
tile jobs: npu/cubetrace.py): only for plain vector or cube launches, and only when the trace
provably holds everything the template computed and no number steered its Python; otherwise
its blocks run step by step.

Not used (every block runs step by step): the sanitizer, mixed AIC/AIV kernels, collectives,
launches that use the L2 model (its hits depend on addresses), blocks that log, and chips
whose DMA time depends on what other cores do at the same moment (`Core.dma_is_local`; see
the DMA seam in npu/core.py). Under the shared HBM (npu/hbm.py) a pass gives each core its
transfers' durations (`Core.plan`); a block replays a template only with the same plan.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import numpy as np


class Guards:
    """The block indices for which a template run's comparisons all come out the same.

    An interval [lo, hi] of block indices minus a few excluded ones, or pinned to the
    template's own block when the index was used in a way no constraint can describe.
    """

    __slots__ = ("block", "lo", "hi", "ne", "pinned", "seen", "xs", "mask", "l2", "_later")

    def __init__(self, block: int, block_dim: int):
        self.block = block
        self.lo = 0
        self.hi = block_dim - 1
        self.ne: set[int] = set()
        self.pinned = False
        self.seen: set[tuple] = set()  # constraints already applied (a kernel repeats them)
        self.xs = np.arange(block_dim, dtype=np.int64)  # every block index, for vector values
        self.mask: np.ndarray | None = None  # blocks whose non-affine comparisons agree
        self.l2 = L2Reads()  # what the template read through the L2 model
        self._later: tuple = ()  # (lo, hi, excluded count, mask, candidates) last worked out

    def admits(self, block: int) -> bool:
        return (
            not self.pinned
            and self.lo <= block <= self.hi
            and block not in self.ne
            and (self.mask is None or bool(self.mask[block]))
        )

    def candidates(self) -> np.ndarray:
        """The blocks after this one that may still replay it (int64 array; read-only: kept
        until the constraints change — `ne` only grows, `mask` is replaced, never changed)."""
        last = self._later
        if (
            last
            and last[0] == self.lo
            and last[1] == self.hi
            and last[2] == len(self.ne)
            and last[3] is self.mask
        ):
            return last[4]
        xs = self._candidates()
        xs.flags.writeable = False
        self._later = (self.lo, self.hi, len(self.ne), self.mask, xs)
        return xs

    def _candidates(self) -> np.ndarray:
        xs = self.xs[self.block + 1 :]
        keep = (xs >= self.lo) & (xs <= self.hi)
        if self.mask is not None:
            keep &= self.mask[self.block + 1 :]
        xs = xs[keep]
        if self.ne:
            xs = xs[~np.isin(xs, list(self.ne))]
        return xs

    def agree(self, same: np.ndarray) -> None:
        """Keep only the blocks where `same` (one bool per block) holds."""
        if same.all():  # nothing narrowed: the mask and the candidates worked out from it stand
            return  # (an L2 read of a cube template agrees so on every GM read: 7% of 4096³)
        mask = self.mask
        if mask is None:
            self.mask = same
        elif (mask > same).any():  # (else it only drops blocks already dropped: the same
            self.mask = mask & same  # mask, and candidates, as a matmul's bounds checks give)

    def pin(self) -> None:
        self.pinned = True

    def admitted(self) -> np.ndarray:
        """Per block (bool), whether it may still replay this template (the template's own
        block included). Only ever shrinks, so what holds on it now holds for every block
        that replays."""
        keep = (self.xs >= self.lo) & (self.xs <= self.hi)
        if self.mask is not None:
            keep &= self.mask
        if self.ne:
            keep[[x for x in self.ne if 0 <= x < len(keep)]] = False
        return keep

    def linear(self, a: int, d: int, rel: str, outcome: bool) -> None:
        """`rel(a * (x - block) + d, 0)` was `outcome` at x = block: keep it so for x.

        `a` and `d` are ints, `a != 0`; `rel` is one of < <= > >= == !=.
        """
        key = (a, d, rel, outcome)
        if key in self.seen:
            return
        self.seen.add(key)
        if not outcome:
            rel = _NEGATE[rel]
        c = d - a * self.block  # the difference is a * x + c
        if rel == "==":
            x, r = divmod(-c, a)
            if r:  # cannot be true for any integer x (nor at the template: defensive)
                self.pin()
            else:
                self.lo, self.hi = max(self.lo, x), min(self.hi, x)
            return
        if rel == "!=":
            x, r = divmod(-c, a)
            if not r:
                self.ne.add(x)
            return
        # a*x + c  <  0  <=>  a*x <= -c-1 ;  <= 0 <=> a*x <= -c ;  > 0 <=> -a*x <= c-1 ; ...
        if rel == "<":
            a_, k = a, -c - 1
        elif rel == "<=":
            a_, k = a, -c
        elif rel == ">":
            a_, k = -a, c - 1
        else:  # ">="
            a_, k = -a, c
        if a_ > 0:
            self.hi = min(self.hi, k // a_)
        else:
            self.lo = max(self.lo, -(k // -a_))


_I64 = 1 << 63  # past int64: numpy's block-index values cannot be masked with it

_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_REL = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


class BlockIndex:
    """`GetBlockIdx()` in a template run, and what the kernel computes from it: the value `v`
    this block sees, and what every other block would see on the same path — `a * block +
    const` while the arithmetic stays affine (`a` set), else the values of all blocks as one
    array (`vals`, after // or % by a non-divisor: tile coordinates, say).

    Deliberately not an `int` subclass: C code (range, indexing, slicing) reads an int
    subclass's value without asking, which would let the block index steer the kernel unseen.
    Here every such use goes through `__index__` and pins the template.
    """

    __slots__ = ("v", "a", "g", "vals")

    def __init__(self, v: int, a: int, g: Guards, vals: np.ndarray | None = None):
        self.v = v
        self.a = a
        self.g = g
        self.vals = vals

    def values(self) -> np.ndarray:
        """This value in every block (int64 array indexed by block)."""
        if self.vals is not None:
            return self.vals
        g = self.g
        return self.a * (g.xs - g.block) + self.v

    def _vec(self, vals: np.ndarray) -> BlockIndex | int:
        """A value known per block: plain when it is the same in all of them."""
        v = int(vals[self.g.block])
        if (vals == v).all():
            return v
        return BlockIndex(v, 0, self.g, vals)

    # ---- arithmetic: stays tainted -----------------------------------------------------------
    def __add__(self, o):
        if type(o) is int:
            if self.vals is None:
                return BlockIndex(self.v + o, self.a, self.g)
            return BlockIndex(self.v + o, 0, self.g, self.vals + o)
        if type(o) is BlockIndex:
            if self.vals is None and o.vals is None:
                a = self.a + o.a
                return BlockIndex(self.v + o.v, a, self.g) if a else self.v + o.v
            return self._vec(self.values() + o.values())
        return self._plain() + o

    __radd__ = __add__

    def __sub__(self, o):
        if type(o) is int:
            return self + (-o)
        if type(o) is BlockIndex:
            if self.vals is None and o.vals is None:
                a = self.a - o.a
                return BlockIndex(self.v - o.v, a, self.g) if a else self.v - o.v
            return self._vec(self.values() - o.values())
        return self._plain() - o

    def __rsub__(self, o):
        if type(o) is int:
            if self.vals is None:
                return BlockIndex(o - self.v, -self.a, self.g)
            return BlockIndex(o - self.v, 0, self.g, o - self.vals)
        return o - self._plain()

    def __mul__(self, o):
        if type(o) is int:
            if not o:
                return 0
            if self.vals is None:
                return BlockIndex(self.v * o, self.a * o, self.g)
            return BlockIndex(self.v * o, 0, self.g, self.vals * o)
        if type(o) is BlockIndex:
            return self._vec(self.values() * o.values())
        return self._plain() * o

    __rmul__ = __mul__

    def __neg__(self):
        if self.vals is None:
            return BlockIndex(-self.v, -self.a, self.g)
        return BlockIndex(-self.v, 0, self.g, -self.vals)

    def __pos__(self):
        return self

    def __floordiv__(self, o):
        if type(o) is int and o:
            if self.vals is None and self.a % o == 0:  # (a*x + c) // k = (a/k)*x + c // k
                return BlockIndex(self.v // o, self.a // o, self.g)
            return self._vec(self.values() // o)
        return self._plain() // o

    def __mod__(self, o):
        if type(o) is int and o:
            if self.vals is None and self.a % o == 0:  # (a*x + c) % k = c % k: the same for all
                return self.v % o
            return self._vec(self.values() % o)
        return self._plain() % o

    # ---- comparisons: become constraints on the block index ------------------------------------
    def _cmp(self, o, rel: str):
        if type(o) is int:
            if self.vals is not None:
                outcome = _REL[rel](self.v, o)
                self.g.agree(_REL[rel](self.vals, o) == outcome)
                return outcome
            a, d = self.a, self.v - o
        elif type(o) is BlockIndex:
            if self.vals is not None or o.vals is not None:
                outcome = _REL[rel](self.v, o.v)
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
    Installed as the kernel module's `range` during template runs (npu/launch.py)."""
    if not any(type(x) is BlockIndex for x in args):
        return range(*args)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    g = next(x.g for x in args if type(x) is BlockIndex)
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
    return _extreme(min, np.minimum, args, kw)


def tmax(*args, **kw):
    """`max`, as `tmin` is `min`."""
    return _extreme(max, np.maximum, args, kw)


def _extreme(builtin, ufunc, args: tuple, kw: dict):
    if kw or len(args) < 2 or not all(type(x) in (int, BlockIndex) for x in args):
        return builtin(*args, **kw)
    g = guards_of(*args)
    if g is None or g.pinned:
        return builtin(*args)
    vals = ufunc.reduce([_values(x, g) for x in args])
    v = int(vals[g.block])
    if (vals[g.admitted()] == v).all():
        return v
    return builtin(*args)


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


def guards_of(*args) -> Guards | None:
    """The guards of the first block index among `args` (None when all are plain)."""
    for x in args:
        if type(x) is BlockIndex:
            return x.g
    return None


@dataclass
class Template:
    """A block run step by step whose records later blocks may copy."""

    guards: Guards
    t0: float
    n_active: int
    t_end: float
    issued: float
    columns: dict | None  # name -> array (shared: Records.concat copies); None in the L2 pre-pass
    gm_read: int
    gm_write: int
    warned: dict  # warning key -> how many times the block warned there
    xfers: list = field(default_factory=list)  # its GM transfers as `Core.xfers` (npu/hbm.py)
    plan: list | None = None  # the transfer durations it followed (`Core.plan`, npu/hbm.py)
    program: object = None  # a full run's: its numbers for a replayed block (npu/numtrace.py)


@dataclass
class L2Reads:
    """A template's reads through the L2 model (npu/l2.py), to repeat for a replayed block: the
    regions the counting pre-pass saw (each argument one value per block), and the bytes the
    real pass charged as hits and misses (the same in every admitted block: a guard says so)."""

    regions: list = field(default_factory=list)  # (buffer name, args: tuple of arrays|int)
    hit: int = 0
    miss: int = 0


class Replayer:
    """A launch's templates, and the test of which one (if any) a block may replay."""

    def __init__(self, block_dim: int):
        self.block_dim = block_dim
        self.templates: list[Template] = []
        self.tracing = True  # a full run makes templates until one's trace is refused (numtrace)

    def index(self, block: int) -> tuple[BlockIndex, Guards]:
        g = Guards(block, self.block_dim)
        return BlockIndex(block, 1, g), g

    def find(
        self, block: int, t0: float, n_active: int, plan: list | None = None, timed: bool = True
    ) -> Template | None:
        """A template `block` may replay: one that starts at the same time with as many cores
        sharing HBM and the same transfer durations (`plan`: a shared-HBM pass gives each core
        its own), or, when the launch is not `timed` (the L2 pre-pass counts reads, which do not
        depend on time), any whose guards admit it."""
        for t in self.templates:
            if (not timed or (t.t0 == t0 and t.n_active == n_active and t.plan == plan)) and t.guards.admits(
                block
            ):
                return t
        return None

    def learn(self, template: Template) -> None:
        if not template.guards.pinned:
            self.templates.append(template)
