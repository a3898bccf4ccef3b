"""The fluid solver of npu/memory/hbm.py as it stood before its fast path (commit 12fd32f): the
reference the new `hbm.solve` must equal bit for bit (tests/test_hbm_solve_exact.py).

Kept verbatim: a heap of arrivals, every list rebuilt each event, the water level worked out
afresh (`hbm._rates`, unchanged) at every change."""

from __future__ import annotations

import heapq
from collections import deque

import numpy as np

from asc_tui.npu.memory.hbm import HbmModel, Solved, Transfers
from asc_tui.npu.memory.hbm import _rates as reference_rates  # (unchanged by the fast path)


def reference_solve(model: HbmModel, xf: Transfers) -> Solved:
    """Run the fluid model over every transfer (event by event, exact to rounding).

    A transfer begins at its issue time, or when the one before it on the same core and pipe
    ends (a pipe runs its queue in order): issue times from a pass whose durations were shorter
    never stack a core's transfers on top of each other.
    """
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
    peak = [0.0] * n
    arrivals = [(start[i], i) for i in range(n)]
    heapq.heapify(arrivals)
    lat = model.latency_per_core
    bpc = model.bpc if model.bpc > 0 else float("inf")
    busy: dict[int, int] = {}  # lane -> its transfer in flight
    queued: dict[int, deque] = {}  # lane -> transfers issued while it was busy
    inflight: dict[int, int] = {}  # owner -> transfers in flight
    entries: list[tuple[float, int]] = []  # (fluid-phase entry time, transfer)
    active: list[int] = []  # transfers in their fluid phase
    rem: list[float] = []  # their bytes left
    rate: list[float] = []
    level_t: list[float] = [0.0]
    level_bpc: list[float] = [0.0]
    now = 0.0
    inf = float("inf")

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

    while arrivals or entries or active:
        t_arr = arrivals[0][0] if arrivals else inf
        t_ent = entries[0][0] if entries else inf
        # (float addition is monotonic: now + the least time left is the least end)
        t_done = now + min([left / r for left, r in zip(rem, rate) if r > 0], default=inf)
        t = min(t_arr, t_ent, t_done)
        dt = t - now
        if dt > 0:
            rem = [left - r * dt for left, r in zip(rem, rate)]
        now = t
        changed = False
        starting: list[int] = []
        # completions first: a transfer ending now is no longer in flight for one issued now
        if active:
            keep_a, keep_r, keep_rate = [], [], []
            for j, i in enumerate(active):
                r = rate[j]
                if rem[j] <= 1e-9 * max(nbytes[i], 1.0) or (r > 0 and now + rem[j] / r <= now):
                    finish(i)
                    changed = True
                else:
                    keep_a.append(i)
                    keep_r.append(rem[j])
                    keep_rate.append(r)
            active, rem, rate = keep_a, keep_r, keep_rate
        while arrivals and arrivals[0][0] <= now:
            _, i = heapq.heappop(arrivals)
            k = lane[i]
            if k in busy:
                queued.setdefault(k, deque()).append(i)
            else:
                busy[k] = i
                starting.append(i)
        while True:
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
                heapq.heappush(entries, (e, i))
            starting = []
            while entries and entries[0][0] <= now:
                _, i = heapq.heappop(entries)
                if nbytes[i] <= 0:
                    finish(i)  # may start the next on its lane (the loop goes round)
                    continue
                active.append(i)
                rem.append(nbytes[i])
                rate.append(0.0)
                changed = True
            if not starting:
                break
        if changed:
            rate, total = reference_rates([cap[i] for i in active], [weight[i] for i in active], bpc)
            rate = list(rate)
            for j, i in enumerate(active):
                if rate[j] > peak[i]:
                    peak[i] = rate[j]
            if level_t[-1] == now:
                level_bpc[-1] = total
            else:
                level_t.append(now)
                level_bpc.append(total)
    return Solved(
        np.array(end),
        np.array(entry),
        np.array(level_t),
        np.array(level_bpc),
        np.array(peak),
        np.array(began),
    )
