"""HBM shared moment by moment: every GM transfer in flight shares the chip's bandwidth.

The model (npu-model.md, README "The emulated NPU"). A transfer i (one MTE2 read, MTE3 write or
Fixpipe GM write) issued at cycle s_i on core o_i moves b_i HBM bytes and runs in two phases:

1. a fixed phase of f_i + l · k_i cycles: f_i is its own start-up (`dma.latency_cycles`, plus
   the L2-hit part of a cube read, or the Fixpipe latency), k_i the number of *other* cores
   with a transfer in flight at s_i and l = `dma.latency_per_active_core` (request queueing,
   fitted to the msopprof samples). No HBM bandwidth is used.
2. a fluid phase: the transfers in it share the HBM's B bytes/cycle by max-min fairness
   (processor sharing with caps): each runs at r_i(t) = min(c_i, λ(t)), where c_i is its own
   path's cap (MTE2 GM→UB/L1 `gm_read_bytes_per_cycle`, MTE3 UB→GM `gm_write_bytes_per_cycle`,
   the Fixpipe's GM write) and the water level λ(t) solves Σ_i min(c_i, λ) = B, or λ = ∞ when
   Σ_i c_i ≤ B. It ends when ∫ r_i dt = b_i.

So Σ_i r_i(t) ≤ B and r_i(t) ≤ c_i at every moment; a core copying while the others compute
gets its whole path, not 1/N of the chip. Reads and writes draw on the same B.

How it plugs in (`Core.dma`, the single seam where a DMA's duration is decided): a launch first
runs with every transfer uncontended (f_i + b_i / c_i) and records (s_i, f_i, b_i, c_i, o_i).
`durations` then solves the fluid model for those issue times. When a duration changed, the
launch re-runs timing-only with the solved durations as its plan (`Run.hbm_plan`), which moves
the issue times, and repeats until the durations are a fixed point (`settle`), or until fewer
than 1% of them still flip (a tie in the in-flight count k_i moves a fixed phase by l cycles;
with many cores a few transfers can alternate between two counts for ever). A kernel's control
flow does not depend on emulated time, so every pass issues the same transfers; a pass that
issues others (control flow on GM data, which shadows read as 1) is dropped.
A core's transfers on one pipe run one after another: in the solution a transfer begins at its
issue or when the one before it on that pipe ends, whichever is later.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

import numpy as np

#: Relative change of every duration under which the fixed point counts as reached.
TOLERANCE = 1e-9
#: Passes after the first before `settle` stops (the last pass's durations are kept).
MAX_PASSES = 12
#: After this many passes, a pass stands when fewer than FLIPPING of its transfers would change.
SETTLE_AFTER = 2
FLIPPING = 1e-2


@dataclass(frozen=True)
class HbmModel:
    """The chip's HBM: B bytes/cycle shared by every transfer, and the queueing latency."""

    bpc: float  # whole-chip HBM bandwidth, bytes per cycle
    latency_per_core: float  # extra fixed cycles per other core with a transfer in flight

    @classmethod
    def of(cls, chip) -> HbmModel:
        return cls(chip.hbm_bpc, chip.dma_latency_per_active_core)


@dataclass(frozen=True)
class Transfers:
    """Every GM transfer of a launch as columns (issue cycle, fixed cycles, HBM bytes, path cap
    in bytes/cycle, owning physical core)."""

    start: np.ndarray
    fixed: np.ndarray
    nbytes: np.ndarray
    cap: np.ndarray
    owner: np.ndarray
    # the pipe each transfer runs on: a core's transfers on one pipe run one after another
    # (None: each transfer on a pipe of its own)
    pipe: np.ndarray | None = None
    # how many identical cores each transfer stands for (npu/memory/lockstep.py groups blocks that ran
    # the same records from the same cycle; None: one each)
    weight: np.ndarray | None = None

    @classmethod
    def of(cls, per_core: list[tuple[int, list[tuple]]]) -> Transfers:
        """From each core's (owner, [(start, fixed, nbytes, cap, pipe), ...]) in core order."""
        rows = [(*x, o) for o, xs in per_core for x in xs]
        return cls.rows(np.array(rows, dtype=np.float64).reshape(-1, 6))

    @classmethod
    def rows(cls, a: np.ndarray, weight: np.ndarray | None = None) -> Transfers:
        """From an (n, 6) array of (start, fixed, nbytes, cap, pipe, owner) rows."""
        owner, pipe = a[:, 5].astype(np.int64), a[:, 4].astype(np.int64)
        return cls(a[:, 0], a[:, 1], a[:, 2], a[:, 3], owner, pipe, weight)

    def __len__(self) -> int:
        return len(self.start)

    def uncontended(self) -> np.ndarray:
        """Each transfer's duration alone on the chip: f_i + b_i / c_i (cycles)."""
        return self.fixed + np.divide(
            self.nbytes, self.cap, out=np.zeros_like(self.nbytes), where=self.nbytes > 0
        )


@dataclass(frozen=True)
class Solved:
    """The fluid model's answer for given issue times: when each transfer ends, when it entered
    its fluid phase, and the chip's HBM throughput as a step function (bytes/cycle from
    `level_t[j]` to `level_t[j+1]`)."""

    end: np.ndarray
    entry: np.ndarray
    level_t: np.ndarray
    level_bpc: np.ndarray
    peak_rate: np.ndarray  # the highest rate each transfer ever ran at (bytes/cycle)
    began: np.ndarray  # when each started: its issue, or when the one before it on its pipe ended

    def durations(self) -> np.ndarray:
        return self.end - self.began


def _rates(caps: list[float], weights: list[float], bpc: float) -> tuple[list[float], float]:
    """Max-min fair rates for these caps under a total of `bpc` (water filling), each transfer
    standing for `weights` identical ones, and the sum of all rates."""
    total = sum(c * w for c, w in zip(caps, weights))
    if total <= bpc:
        return caps, total
    order = sorted(range(len(caps)), key=caps.__getitem__)
    rates = [0.0] * len(caps)
    left, n = bpc, sum(weights)
    for j, i in enumerate(order):
        share = left / n
        c = caps[i]
        if c <= share:
            rates[i] = c
            left -= c * weights[i]
            n -= weights[i]
        else:
            for k in order[j:]:
                rates[k] = share
            break
    return rates, bpc


def solve(model: HbmModel, xf: Transfers) -> Solved:
    """Run the fluid model over every transfer (event by event, exact to rounding).

    A transfer begins at its issue time, or when the one before it on the same core and pipe
    ends (a pipe runs its queue in order): issue times from a pass whose durations were shorter
    never stack a core's transfers on top of each other.

    Every float is worked out as the plain event loop would (tests/hbmref.py, the reference it
    equals bit for bit); only bookkeeping is cheaper: arrivals are one sorted pass, an event
    with nothing in its fluid phase skips the rate arithmetic, and the water level is looked up
    by the transfers' (cap, weight) kinds once the same set in the same order was solved.
    """
    end, entry, began, level_t, level_bpc, rated, rates_seen = _events(model, xf, True)
    return Solved(
        np.array(end),
        np.array(entry),
        np.array(level_t),
        np.array(level_bpc),
        _peaks(len(xf), rated, rates_seen),
        np.array(began),
    )


def _events(model: HbmModel, xf: Transfers, steps: bool) -> tuple:
    """`solve`'s event loop: each transfer's end, fluid-phase entry and beginning, and with
    `steps` the throughput's steps and every (transfer, rate) given (`durations` needs neither:
    lists of floats).

    One function on purpose: it is the solver's hot loop (a third of the CPU time of a 40-block
    timing-only vector_add_bias run), and its state lives in locals; moving only the admission
    of arrivals into a function of its own made it 4-11% slower on that launch's transfers."""
    n = len(xf)
    start, fixed = xf.start.tolist(), xf.fixed.tolist()
    nbytes, cap, owner = xf.nbytes.tolist(), xf.cap.tolist(), xf.owner.tolist()
    weight = xf.weight.tolist() if xf.weight is not None else [1.0] * n
    cores_in_flight = 0.0  # cores with a transfer in flight (a group of identical ones: its weight)
    owner_weight: dict[int, float] = {}
    lane = (xf.owner * 16 + xf.pipe).tolist() if xf.pipe is not None else list(range(n))
    end = [0.0] * n
    entry = [0.0] * n
    began = [0.0] * n
    # (transfer, rate) each time the rates changed: each transfer's peak, worked out at the end
    rated: list[int] = []
    rates_seen: list[float] = []
    # bytes left under which a transfer counts as done (rounding)
    tol = [1e-9 * max(b, 1.0) for b in nbytes]
    # arrivals in (issue, index) order: a stable sort by issue time
    order = sorted(range(n), key=start.__getitem__)
    arrival = [start[i] for i in order]
    arrival.append(float("inf"))  # (after the last: no more arrivals)
    kind = _kinds(cap, weight)
    levels: dict[tuple, tuple[list[float], float]] = {}  # kinds in flight -> (rates, total)
    lat = model.latency_per_core
    bpc = model.bpc if model.bpc > 0 else float("inf")
    busy: dict[int, int] = {}  # lane -> its transfer in flight
    queued: dict[int, deque] = {}  # lane -> transfers issued while it was busy
    inflight: dict[int, int] = {}  # owner -> transfers in flight
    entries: list[tuple[float, int]] = []  # (fluid-phase entry time, transfer)
    active: list[int] = []  # transfers in their fluid phase
    rem: list[float] = []  # their bytes left
    rate: list[float] = []  # their rates (a list of `levels`: never changed in place)
    kinds: list = []  # their kinds
    tols: list[float] = []  # their `tol`
    push, pop = heapq.heappush, heapq.heappop
    level_t: list[float] = [0.0]
    level_bpc: list[float] = [0.0]
    now = 0.0
    inf = float("inf")
    p = 0  # arrivals so far
    starting: list[int] = []

    def finish(i: int) -> None:
        nonlocal cores_in_flight
        end[i] = now
        o = owner[i]
        inflight[o] -= 1
        if not inflight[o]:
            del inflight[o]
            cores_in_flight -= owner_weight.pop(o)
        k = lane[i]
        q = queued.get(k)
        if q:
            nxt = q.popleft()
            busy[k] = nxt
            starting.append(nxt)
        else:
            del busy[k]

    while p < n or entries or active:
        t_arr = arrival[p]
        t_ent = entries[0][0] if entries else inf
        changed = False
        if active:
            # (float addition is monotonic: now + the least time left is the least end)
            if len(rem) == 1:
                left, r = rem[0], rate[0]
                t = min(t_arr, t_ent, now + (left / r if r > 0 else inf))
                if t - now > 0:
                    left -= r * (t - now)
                    rem = [left]
                now = t
                # completions first: a transfer ending now is no longer in flight for one issued now
                if left <= tols[0] or (r > 0 and now + left / r <= now):
                    finish(active[0])
                    active, rem, rate, kinds, tols = [], [], [], [], []
                    changed = True
            else:
                t = min(
                    t_arr, t_ent, now + min([left / r for left, r in zip(rem, rate) if r > 0], default=inf)
                )
                dt = t - now
                if dt > 0:
                    rem = [left - r * dt for left, r in zip(rem, rate)]
                now = t
                done = [
                    left <= tl or (r > 0 and now + left / r <= now) for left, r, tl in zip(rem, rate, tols)
                ]
                if True in done:
                    active, rem, rate, kinds, tols = _finished(active, rem, rate, kinds, tols, done, finish)
                    changed = True
        else:
            now = min(t_arr, t_ent)
        while arrival[p] <= now and p < n:
            i = order[p]
            p += 1
            k = lane[i]
            if k in busy:
                queued.setdefault(k, deque()).append(i)
            else:
                busy[k] = i
                starting.append(i)
        while starting or (entries and entries[0][0] <= now):
            # all transfers beginning now count as in flight before any counts the others
            for i in starting:
                o = owner[i]
                if o in inflight:
                    inflight[o] += 1
                else:
                    inflight[o] = 1
                    owner_weight[o] = weight[i]
                    cores_in_flight += weight[i]
            others = cores_in_flight - 1
            for i in starting:
                began[i] = now
                e = now + fixed[i] + lat * others
                entry[i] = e
                push(entries, (e, i))
            starting.clear()
            while entries and entries[0][0] <= now:
                _, i = pop(entries)
                if nbytes[i] <= 0:
                    finish(i)  # may start the next on its lane (the loop goes round)
                    continue
                active.append(i)
                rem.append(nbytes[i])
                kinds.append(kind[i])
                tols.append(tol[i])
                changed = True  # (its rate comes with the others' below)
        if changed:
            key = tuple(kinds)
            known = levels.get(key)
            if known is None:
                known = levels[key] = _rates([cap[i] for i in active], [weight[i] for i in active], bpc)
            rate = known[0]
            if not steps:
                continue
            rated += active
            rates_seen += rate
            if level_t[-1] == now:
                level_bpc[-1] = known[1]
            else:
                level_t.append(now)
                level_bpc.append(known[1])
    return end, entry, began, level_t, level_bpc, rated, rates_seen


def _kinds(cap: list[float], weight: list[float]) -> list:
    """Each transfer's (cap, weight) kind: the water level depends on nothing else of the
    transfers in flight. Transfers share a kind only when both are positive numbers (equal
    then means the same bits); any other is a kind of its own."""
    kinds: dict[tuple[float, float], int] = {}
    return [
        kinds.setdefault((c, w), len(kinds)) if c > 0 and w > 0 else -1 - i
        for i, (c, w) in enumerate(zip(cap, weight))
    ]


def _finished(active: list, rem: list, rate: list, kinds: list, tols: list, done: list, finish) -> tuple:
    """The transfers still in their fluid phase (with their bytes left, rates, kinds and
    tolerances), `finish`ing the `done` ones in order."""
    keep = ([], [], [], [], [])
    for row in zip(active, rem, rate, kinds, tols, done):
        if row[5]:
            finish(row[0])
        else:
            for column, x in zip(keep, row):
                column.append(x)
    return keep


def _peaks(n: int, rated: list[int], rates: list[float]) -> np.ndarray:
    """The highest rate each of `n` transfers ran at, from every (transfer, rate) it was given
    (0 if never positive: only a positive rate raises a peak from 0, and the maximum of
    positive numbers is exact in any order)."""
    peak = np.zeros(n)
    r = np.array(rates, dtype=np.float64)
    up = r > 0
    np.maximum.at(peak, np.array(rated, dtype=np.int64)[up], r[up])
    return peak


def durations(model: HbmModel, xf: Transfers) -> np.ndarray:
    """Each transfer's duration (cycles) under the shared HBM, for the given issue times."""
    if not len(xf):
        return np.zeros(0)
    end, _, began, *_ = _events(model, xf, False)
    return np.array(end) - np.array(began)  # (what `solve(model, xf).durations()` gives)


def _close(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`np.isclose(x, y, rtol=TOLERANCE, atol=1e-6)` of two float64 arrays: its very formula,
    without its checks and conversions (which cost 3x the arithmetic on a launch's ~100)."""
    with np.errstate(invalid="ignore"):
        return (np.abs(x - y) <= 1e-6 + TOLERANCE * np.abs(y)) & np.isfinite(y) | (x == y)


def settle(model: HbmModel, xf: Transfers, rerun, used: np.ndarray | None = None, close_enough=None):
    """Find the launch's fixed point: `rerun(plan)` emulates again with `plan` (a durations
    array, transfer order as `xf`) and returns (its result, its Transfers), or None when the
    kernel issued different transfers (then the last consistent result stands).
    `close_enough(solved, used)` may accept a pass whose durations are near the solution.

    Returns (result or None if the first pass already holds, passes run, converged).
    """
    used = xf.uncontended() if used is None else used
    result = None
    for k in range(MAX_PASSES + 1):
        want = durations(model, xf)
        moved = ~_close(want, used)
        if not moved.any():
            return result, k, True
        if close_enough is not None and close_enough(want, used):
            return result, k, False
        if k >= SETTLE_AFTER and result is not None and moved.mean() < FLIPPING:
            # a few transfers flip between two in-flight counts at a tie (their fixed phase
            # jumps by `latency_per_core`): the rest is settled, keep the last pass
            return result, k, False
        if k == MAX_PASSES:
            break
        out = rerun(want)
        if out is None:
            return result, k, False
        nxt = out[1]
        if len(nxt) != len(xf) or not np.array_equal(nxt.nbytes, xf.nbytes):
            return result, k + 1, False  # other transfers (control flow on data): keep the last
        result = out[0]
        xf, used = nxt, want
    return result, MAX_PASSES, False
