"""Periodic extrapolation: once a loop's scheduler state repeats up to a time shift, the rest of
the loop is the last period's records shifted, and its Python need not run.

Why: the per-pipe queues are a max-plus recurrence. If the state at the start of iteration i
(pipe clocks, the scalar clock, queue buffers' release times, pending events) equals the state
j iterations earlier plus a shift Δ, and the next iterations issue the same instructions with
the same costs as the last j, then by shift-invariance (max and + commute with adding Δ) each
later period is the last one plus Δ: its records are copies shifted by Δ (and their record
links by the records per period), and the state after m periods is the state now plus m·Δ.
matmul_official 4096³: a core's 22 base blocks of 64 K-steps are decided by the first few.

What the caller vouches for (`Periodic(core, queues, keys, lin)`), one entry per iteration:
- `keys[u]`: everything that decides iteration u's instruction stream and costs apart from GM
  addresses (tile sizes, which buffers): extrapolated iterations repeat the last j keys;
- `lin[u]`: the ints the GM addresses are affine in (tile origins): they must advance by the
  same step every period. Each skipped GM read through the L2 model (npu/memory/l2.py) is then at the
  observed read's address plus that step, and must hit L2 as much as the observed one.
The state compared is the core's (clocks, events, last record per pipe, GM traffic) and the
given queues' (buffer states and release times, FIFO). Every time must move by Δ, except one
the loop never touches and the scalar clock when it runs ahead of the pipes (`_shift`). Exact
up to float rounding: the times are the step-by-step ones to ~1e-7 cycles, and the records
are the same ones, in order (tests/test_core_periodic.py). What a block decides depends only
on its own stream, so a block that replays another's records (npu/replay/replay.py) gets the bits it
would compute itself.

Off (every iteration runs step by step): `run.extrapolate` False (the reference the tests
compare against), the sanitizer, mixed or collective kernels, and DMA costs that depend on
when a transfer runs or on other cores (`Core.dma_is_local`, `Core.dma_time_invariant`: a
shared-HBM model sets one of them False). In full (numeric) runs the Python of every iteration
still runs for its numbers; its records and state are then replaced by the extrapolated ones,
so full and timing-only timelines stay identical.
"""

from __future__ import annotations

from itertools import repeat

from ..columns import record_table
from ..memory.l2 import l2_of
from ..pipes import N_PIPES
from ..replay.blockindex import BlockIndex
from .shifted import Shifted

#: longest period (in iterations) looked for (a row of base blocks, say)
MAX_PERIOD = 64
#: periods that pass `_candidate` tried in full at one iteration
MAX_TRIES = 3
#: a time component is "shifted by Δ" when it is within this many cycles of it (float rounding)
TOL = 1e-6


class Periodic:
    """One loop's snapshots, and the extrapolation of its periodic regime (see module doc)."""

    def __init__(self, core, queues: tuple, keys: list, lin: list):
        self.core = core
        self.queues = queues
        self.keys = keys
        self.lin = lin
        self.n = len(keys)
        self.snaps: dict[int, tuple] = {}
        # The loop's GM reads through L2 (see `_reads`); a loop inside another shares its list.
        # The model is made now, not at the first read: what a block decides must not depend
        # on whether an earlier block made it (replay copies decisions across blocks).
        l2 = l2_of(core.run)
        self.owns_tap = l2.tap is None
        if self.owns_tap:
            l2.tap = []
        self.pending = None  # full runs: (iteration, records, state) to install when it is reached

    @staticmethod
    def of(core, queues: tuple, keys: list, lin: list) -> Periodic | None:
        """A Periodic for this loop, or None when extrapolation is off for this core."""
        run = core.run
        if (
            not run.extrapolate
            or run.san is not None
            or run.hccl is not None
            or core.kind is not None
            or not (core.dma_is_local and core.dma_time_invariant)
            or len(keys) < 3
        ):
            return None
        return Periodic(core, queues, keys, lin)

    # ---- the state ------------------------------------------------------------------------------
    def _snapshot(self) -> tuple:
        """(times, record links, discrete state, GM traffic, records so far, L2 reads so far)."""
        core = self.core
        times = [*core.tp, core.ts]
        links = list(core.last)
        disc = []
        for q in self.queues:
            disc.append(q._next)
            for s in q.slots:
                disc.append(s.state)
                times.append(-1.0 if s.release is None else s.release)
                links.append(s.link)
            for tensor, t_set, link in q.fifo:
                disc.append(id(tensor))
                times.append(t_set)
                links.append(link)
        for key, entries in core.events.items():
            disc.append((key, len(entries)))
            for t, link in entries:
                times.append(t)
                links.append(link)
        run = core.run
        disc.append((len(run.log), sum(w[5] for w in run._warnings.values())))
        tap = run.l2.tap
        return (
            times,
            links,
            tuple(disc),
            (core.gm_read, core.gm_write),
            len(core.rec),
            len(tap),
        )

    def _apply(self, times: list, links: list) -> None:
        """Set the core's and the queues' times and links (the order of `_snapshot`)."""
        core = self.core
        core.tp[:] = times[: len(core.tp)]
        core.ts = times[len(core.tp)]
        core.last[:] = links[: len(core.last)]
        it, il = len(core.tp) + 1, len(core.last)
        for q in self.queues:
            for s in q.slots:
                s.release = None if s.release is None else times[it]
                s.link = links[il]
                it += 1
                il += 1
            fifo = list(q.fifo)
            q.fifo.clear()
            for tensor, _, _ in fifo:
                q.fifo.append((tensor, times[it], links[il]))
                it += 1
                il += 1
        for entries in core.events.values():
            for k in range(len(entries)):
                entries[k] = (times[it], links[il])
                it += 1
                il += 1

    # ---- the loop -------------------------------------------------------------------------------
    def at(self, i: int) -> int:
        """Call at the start of iteration i: how many iterations, from i on, were extrapolated
        (their records appended and the state moved past them); 0 to run iteration i."""
        pending = self.pending
        if pending is not None and pending[0] == i:
            self.pending = None
            self._install(*pending[1:])
            return 0
        snap = self.snaps[i] = self._snapshot()
        if pending is not None:
            return 0
        tries = 0
        for j in range(1, min(MAX_PERIOD, i // 2) + 1):
            if not self._candidate(i, j):
                continue
            skip = self._try(i, j, snap)
            if skip:
                return skip
            tries += 1
            if tries == MAX_TRIES:
                break
        return 0

    def _candidate(self, i: int, j: int) -> bool:
        """A cheap first look: the keys around i repeat after j iterations and the tile origins
        move by the same step at both ends of the last two periods."""
        keys, lin = self.keys, self.lin
        return (
            keys[i - 1] == keys[i - 1 - j]
            and keys[i - j] == keys[i - 2 * j]
            and _delta(lin[i - 1], lin[i - 1 - j]) == _delta(lin[i - j], lin[i - 2 * j])
        )

    def _try(self, i: int, j: int, now: tuple) -> int:
        a, b = self.snaps.get(i - 2 * j), self.snaps.get(i - j)
        if a is None or b is None or now[2] != b[2]:
            return 0
        keys, lin = self.keys, self.lin
        if keys[i - j : i] != keys[i - 2 * j : i - j]:  # the reads of the two periods pair up
            return 0
        step = [_delta(lin[u], lin[u - j]) for u in range(i - j, i)]
        if None in step:
            return 0
        shift = _shift(b[0], now[0])
        if shift is None:
            return 0
        delta, moving = shift  # moving: each time's shift per period
        n_rec = now[4] - b[4]
        lmov = [y - x == n_rec for x, y in zip(b[1], now[1])]
        if not all(m or x == y for m, x, y in zip(lmov, b[1], now[1])):
            return 0
        # how many whole periods the keys and tile origins let us skip
        m = 0
        while i + (m + 1) * j <= self.n and all(
            keys[u] == keys[u - j] and _delta(lin[u], lin[u - j]) == step[(u - i) % j]
            for u in range(i + m * j, i + (m + 1) * j)
        ):
            m += 1
        if m == 0:
            return 0
        last = record_table(self.core.rec, self.core.ext, b[4], now[4])
        rmov = _record_links(last["link"].tolist(), b[1], lmov, b[4])
        if rmov is None:
            return 0
        reads = self._reads(a, b, now, m)
        if reads is None:
            return 0
        self._extend(i, j, m, now, delta, moving, lmov, last, rmov, n_rec, reads, b)
        return 0 if self.core.numeric else m * j

    def _reads(self, a: tuple, b: tuple, now: tuple, m: int) -> list | None:
        """The L2 reads of the next m periods: the last period's, at addresses moved by its
        step from the period before, as (buffer, region, step, hit bytes); None when one of
        them would hit L2 otherwise, or there is no step."""
        core = self.core
        l2 = core.run.l2
        tap = l2.tap
        last, prev = tap[b[5] : now[5]], tap[a[5] : b[5]]
        if len(last) != len(prev):
            return None
        steps = []
        for (buf, args, _), (buf0, args0, _) in zip(last, prev):
            step = [_delta(x, y) for x, y in zip(args, args0)]
            if buf is not buf0 or None in step:
                return None
            steps.append(step)
        out = [
            (buf, tuple([x + s * t if s else x for x, s in zip(args, step)]), hit)
            for t in range(1, m + 1)
            for (buf, args, hit), step in zip(last, steps)
        ]
        by_buffer: dict = {}
        for buf, args, _ in out:
            by_buffer.setdefault(buf, []).append(args)
        for buf, regions in by_buffer.items():
            l2.prefetch(buf, regions)
        guards = core.block_index.g if type(core.block_index) is BlockIndex else None
        for buf, moved, hit in out:
            if l2.hit_of(buf, moved) != hit:
                if guards is not None:
                    guards.pin()  # another block may hit where this one missed
                return None
        return [(buf, args, step, hit) for (buf, args, hit), step in zip(last, steps)]

    def _extend(self, i, j, m, now, delta, moving, lmov, last, rmov, n_rec, reads, b) -> None:
        """Append the m extrapolated periods' records, move the state, count their traffic."""
        core = self.core
        table = Shifted(last, m, delta, n_rec, rmov)
        times = [x + d * m if d else x for x, d in zip(now[0], moving)]
        links = [x + n_rec * m if mv else x for x, mv in zip(now[1], lmov)]
        if core.numeric:  # the Python runs on for its numbers; its timeline is replaced after
            self.pending = (i + m * j, now[4], table, times, links)
            return
        l2 = core.run.l2
        for buf, args, step, hit in reads:  # tapped for a loop around this one, if any
            l2.read_moved(buf, args, step, m, hit, tap=not self.owns_tap)
        self._append(table)
        _repeat_noted(core.xfers, b[4], now[4], m)
        self._apply(times, links)
        core.gm_read += (now[3][0] - b[3][0]) * m
        core.gm_write += (now[3][1] - b[3][1]) * m
        self.snaps.clear()  # periods before the jump hold no record tuples to compare

    def _append(self, table: Shifted) -> None:
        """Append extrapolated records: `Core.rec` holds a placeholder per record (its length
        numbers the records, as links need) and `Core.ext` the periods, which `Core.close`
        puts in their place (millions of tuples would cost more than the loop)."""
        core = self.core
        if not len(table):
            return
        core.ext.append((len(core.rec), table))
        core.rec.extend(repeat(None, len(table)))

    def done(self) -> None:
        """After the loop: install what a full run still owes, and stop tapping L2 reads."""
        if self.pending is not None:
            self._install(*self.pending[1:])
            self.pending = None
        if self.owns_tap:
            self.core.run.l2.tap = None
            self.owns_tap = False

    def _install(self, n0: int, table: Shifted, times: list, links: list) -> None:
        """Full runs: the extrapolated records and state replace what the Python just did."""
        core = self.core
        del core.rec[n0:]
        core.ext[:] = [(at, t) for at, t in core.ext if at < n0]
        self._append(table)
        self._apply(times, links)
        self.snaps.clear()


def _repeat_noted(xfers: list, lo: int, hi: int, m: int) -> None:
    """The GM transfers `Core.dma` noted in the last period, records lo..hi (L2 hits, Fixpipe
    writes: the shared HBM, npu/memory/shared_hbm.py, reads every other one back from its record),
    noted again for each of the m extrapolated periods after it."""
    k = len(xfers)
    while k and xfers[k - 1][0] >= lo:
        k -= 1
    last = xfers[k:]
    n_rec = hi - lo
    xfers.extend((x[0] + n_rec * t, *x[1:]) for t in range(1, m + 1) for x in last if x[0] < hi)


def _delta(x, y):
    """x - y when it is the same int in every block (a block index keeps its constraints), per
    item for tuples; None when it is not."""
    if type(x) is tuple:
        d = tuple(_delta(a, b) for a, b in zip(x, y))
        return None if None in d or len(x) != len(y) else d
    if type(x) is int and type(y) is int:
        return x - y
    d = x - y
    return d if type(d) is int else None


def _shift(before: list, after: list) -> tuple[float, list] | None:
    """(Δ, each time's own shift) when every time in `after` is the one in `before` plus the
    period's shift Δ (the largest); None otherwise. Two exceptions, each no later than every
    time that moves by Δ: a time that did not move (a pipe or buffer the loop does not use),
    and the scalar clock (index `N_PIPES`) when it runs ahead of the pipes by less each period:
    it then never wins a max against them again, so it keeps its own rate. Any other time at
    its own rate (a pipe that is not the bottleneck) may catch up with another one later: the
    regime is not periodic yet."""
    if len(before) != len(after):
        return None
    shifts = [y - x for x, y in zip(before, after)]
    delta = max(shifts)
    if delta < 0:
        return None
    tol = TOL + 1e-12 * max(map(abs, after))
    low = min(y for y, d in zip(after, shifts) if delta - d <= tol)
    out = []
    for k, (y, d) in enumerate(zip(after, shifts)):
        if delta - d <= tol:
            out.append(delta)
        elif y > low or not (d == 0 or (k == N_PIPES and d > 0)):
            return None
        else:
            out.append(d)
    return delta, out


def _record_links(last: list, links: list, lmov: list, start: int) -> list | None:
    """Per record link of the last period (from index `start`), whether it moves with the
    periods: a link into the period does; one to an earlier record was read from the state at
    the period's start (`links`), and moves as that entry does (`lmov`). None when a link's
    source is unknown or ambiguous."""
    source: dict = {}
    for x, mv in zip(links, lmov):
        if source.setdefault(x, mv) != mv:
            source[x] = None
    out = []
    for link in last:
        if link >= start:
            out.append(True)
        elif link < 0:
            out.append(False)
        else:
            mv = source.get(link)
            if mv is None:
                return None
            out.append(mv)
    return out
