"""Guess a cube launch's L2 read counts from earlier launches, so that the kernel
runs once instead of twice (the counting pre-pass of npu/memory/l2.py, then the real pass).

Why: a tuner evaluates hundreds of tilings of one kernel on the same tensors, and the counts
(reads per 512 B GM chunk) depend on few of the tiling's fields (a matmul's tile_m and tile_n,
not tile_k, buffering or block_dim). The real pass run with guessed counts also tallies its own
reads; `launch` keeps its result only when the tally equals the guess — then it is exactly
what the pre-pass would have given — and otherwise runs again with the tallied counts.

Which earlier launch to copy is learnt per kernel and tensors: a field of the tiling (or
block_dim) is taken as irrelevant once two launches that differ in it alone (besides fields
already irrelevant) counted alike, and the guess is the latest launch that agrees with this one
on every other field (none yet: run the pre-pass).

A full launch guesses too, but only from a launch with the very same fields, and cannot run
again (its numbers are written): `check_full` says why that is exact and what happens when its
reads are not the guessed ones (1024³ fp16 full emulation: a 2.8 ms pre-pass saved a launch).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..results import in_log_order, retimed_log
from .gm import GM_ADDR, shadows

_MAX_KERNELS = 4  # kernels × tensors remembered per process
_MAX_ENTRIES = 64  # launches remembered per kernel
_MAX_BYTES = 32 << 20  # distinct counts (and their region lists) kept per kernel, about


class _Book:
    """What one kernel on one set of tensors counted: (fields, counts class) per launch, newest
    last; the distinct counts; the fields found not to change them."""

    def __init__(self):
        self.entries: list[tuple[tuple, int]] = []
        self.classes: list = []  # distinct pre-pass results
        self.irrelevant: set[int] = set()

    def guess(self, fields: tuple, exact: bool = False):
        for seen, c in reversed(self.entries):
            if seen == fields if exact else self._agree(seen, fields):
                return self.classes[c]
        return None

    def _agree(self, a: tuple, b: tuple) -> bool:
        return len(a) == len(b) and all(
            x == y for i, (x, y) in enumerate(zip(a, b)) if i not in self.irrelevant
        )

    def learn(self, fields: tuple, prepass) -> None:
        c = next((i for i, other in enumerate(self.classes) if same_counts(other, prepass)), None)
        if c is None:
            full = len(self.classes) >= _MAX_ENTRIES
            if full or sum(map(_size, self.classes)) + _size(prepass) > _MAX_BYTES:  # start over
                self.entries, self.classes = [], []
            c = len(self.classes)
            self.classes.append(prepass)
        entry = (fields, c)
        if entry in self.entries:  # the same launch again: newest now, nothing new to infer
            self.entries.remove(entry)  # (a repeated launch made the pairs below 64² a time)
            self.entries.append(entry)
            return
        self.entries.append(entry)
        del self.entries[:-_MAX_ENTRIES]
        # A field is irrelevant when two launches differ in it alone (besides irrelevant
        # fields), counting alike. No earlier pair qualified with the fields known so far (the
        # book was closed), so only the new launch's pairs can add one; once one does, pairs
        # seen before may qualify too: scan them all until nothing grows (a tuner's launches
        # rarely add one, and a full scan is 2,000 pairs).
        if self._grow(self.entries[-1:], self.entries[:-1]):
            while self._grow(self.entries, self.entries):
                pass

    def _grow(self, news: list, olds: list) -> bool:
        """Mark the fields in which a launch of `news` and one of `olds` alone differ (besides
        irrelevant fields), counting alike; whether any was added."""
        grown = False
        for a, ca in news:
            for b, cb in olds:
                if ca != cb or len(a) != len(b):
                    continue
                diff = [k for k, (x, y) in enumerate(zip(a, b)) if x != y and k not in self.irrelevant]
                if len(diff) == 1:
                    self.irrelevant.add(diff[0])
                    grown = True
        return grown


_books: dict[tuple, _Book] = {}


def book_key(fn, gm_args, chip, full: bool = False) -> tuple | None:
    """The kernel and its GM tensors (names, types, sizes, offsets); None when a tensor holds
    data (the pre-pass reads shadows: only a launch on shadows runs the same control flow),
    unless the launch is `full`: then the key of the shadows its pre-pass would run on."""
    tensors = []
    for a in gm_args:
        if isinstance(a, GM_ADDR):
            buf = a.buffer
            if buf.data is not None and not full:
                return None
            tensors.append((buf.name, buf.dtype.str, buf.count, a.offset))
        else:
            tensors.append(repr(a))
    code = getattr(fn, "__code__", None)
    return (code if code is not None else id(fn), chip.name, tuple(tensors))


def tiling_fields(tiling, block_dim: int) -> tuple:
    """The launch's parameters field by field (a dataclass tiling), else its whole text."""
    if dataclasses.is_dataclass(tiling) and not isinstance(tiling, type):
        values = tuple(repr(getattr(tiling, f.name)) for f in dataclasses.fields(tiling))
    else:
        values = (repr(tiling),)
    return (block_dim, *values)


def guess(key: tuple | None, fields: tuple, exact: bool = False):
    """Counts learnt for this launch: from a launch that agrees on every field not learnt
    irrelevant, or (`exact`) only from one with these very fields; None if there is none."""
    book = _books.get(key) if key is not None else None
    return book.guess(fields, exact) if book is not None else None


def learn(key: tuple | None, fields: tuple, prepass) -> None:
    if key is None or prepass is None:
        return
    book = _books.get(key)
    if book is None:
        if len(_books) >= _MAX_KERNELS:
            _books.pop(next(iter(_books)))
        book = _books[key] = _Book()
    book.learn(fields, prepass)


def check_full(run, launch_fn, kernel, gm_args, tiling, block_dim: int, chip, timeout_s, guess):
    """After a full launch run on guessed counts: None when they are the pre-pass's, else the
    launch re-timed (timing-only, on shadows) on the counts the pre-pass finds, whose timeline
    replaces the full pass's (`retimed`).

    Why a full launch may guess at all: its pre-pass runs on shadows, so what it counts depends
    on nothing but the kernel, its tensors' shapes, the chip and the tiling — what an earlier
    launch with these very fields counted (a full launch guesses from exact matches only, never
    from fields learnt irrelevant). The full pass tallies its own reads: the very tally the
    guess was counted from, it read as counted; otherwise (control flow on GM data, or the
    kernel behaving otherwise than before on the same fields) the pre-pass runs now, as it
    would have before the pass. Only when it finds other counts than guessed (the kernel read
    state outside what the key and fields hold) is the pass re-timed: that timeline is the one
    a pre-passed full launch gives whenever its control flow does not depend on GM data (as the
    shared-HBM passes assume).
    """
    from .prepass import prepass_counts

    if run.l2 is None or run.l2.read_as(guess):
        return None
    found = prepass_counts(launch_fn, kernel, gm_args, tiling, block_dim, chip, timeout_s)
    if found is None or same_counts(found, guess):  # (None: the kernel cannot run on shadows
        return None  # any more, as it did when the guess was counted; the guess stands)
    learn(
        book_key(getattr(kernel, "fn", kernel), gm_args, chip, full=True),
        tiling_fields(tiling, block_dim),
        found,
    )

    def setup(r) -> None:
        r.l2_counts = found
        r.l2_enabled, r.hbm_shared = run.l2_enabled, run.hbm_shared
        r.replay, r.extrapolate = run.replay, run.extrapolate

    return launch_fn(
        kernel, shadows(gm_args), tiling, block_dim, chip, numeric=False, configure=setup, timeout_s=timeout_s
    )


def retimed(full, timing):
    """The full launch's result `full` with the timeline of `timing` (`check_full`), its log
    at the times of that timeline."""
    return dataclasses.replace(
        full,
        log=in_log_order(retimed_log(full.log, timing.log)),
        kernel_cycles=timing.kernel_cycles,
        blocks=timing.blocks,
        ops=timing.ops,
        lines=timing.lines,
        gm_read=timing.gm_read,
        gm_write=timing.gm_write,
        l2_hit=timing.l2_hit,
        records=timing.records,
    )


def _size(prepass) -> int:
    """Bytes a pre-pass result holds, roughly (its counts, ~100 B a region; twice that with
    the tally it was counted from)."""
    per_region = 100 if prepass.tally is None else 200
    return sum(c.nbytes for c in prepass.counts.values()) + per_region * len(prepass.regions)


def same_counts(a, b) -> bool:
    """Whether two pre-pass results count the same reads of every chunk."""
    if a is None or b is None or a.counts.keys() != b.counts.keys():
        return False
    return all(np.array_equal(a.counts[k], b.counts[k]) for k in a.counts)


def forget() -> None:
    """Drop everything learnt (tests)."""
    _books.clear()
