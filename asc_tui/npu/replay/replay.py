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
from running that trace with the block's GM offsets (npu/replay/numtrace.py; a cube launch's L0C
tile jobs: npu/replay/cubetrace.py): only for plain vector or cube launches, and only when the trace
provably holds everything the template computed and no number steered its Python; otherwise
its blocks run step by step.

Not used (every block runs step by step): the sanitizer, mixed AIC/AIV kernels, collectives,
launches that use the L2 model (its hits depend on addresses), blocks that log, and chips
whose DMA time depends on what other cores do at the same moment (`Core.dma_is_local`; see
the DMA seam in npu/core.py). Under the shared HBM (npu/memory/hbm.py) a pass gives each core its
transfers' durations (`Core.plan`); a block replays a template only with the same plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .blockindex import BlockIndex

_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


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
        lo, hi = max(self.lo, self.block + 1), self.hi + 1  # `xs` is 0, 1, ...: a slice
        xs = self.xs[lo:hi] if lo < hi else self.xs[:0]
        if self.mask is not None:
            xs = xs[self.mask[lo:hi] if lo < hi else self.mask[:0]]
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
    xfers: list = field(default_factory=list)  # its GM transfers as `Core.xfers` (npu/memory/hbm.py)
    plan: list | None = None  # the transfer durations it followed (`Core.plan`, npu/memory/hbm.py)
    program: object = None  # a full run's: its numbers for a replayed block (npu/replay/numtrace.py)


@dataclass
class L2Reads:
    """A template's reads through the L2 model (npu/memory/l2.py), to repeat for a replayed block: the
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
