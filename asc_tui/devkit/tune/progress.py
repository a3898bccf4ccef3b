"""The tune's progress stream: small immutable events a TUI or a CLI line subscribes to.

Events arrive on the tuning thread, in order: one "start" (space known), one "result" per
config (evaluated or answered from the cache), then "done" or "cancelled". Subscribers must be
quick (a TUI posts a message and returns). Cancel with a `CancelToken` from any thread: the
tuner stops submitting, drops queued configs and returns; every result already reported is in
the cache.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .cache import Outcome


@dataclass(frozen=True)
class TuneEvent:
    """kind: "start" | "result" | "done" | "cancelled". Times in seconds, `best` is the best
    outcome so far (by the tune's objective)."""

    kind: str
    total: int  # configs the strategy will consider (valid space or budget)
    evaluated: int  # emulated in this tune
    cached: int  # answered from the cache
    invalid: int  # pruned statically
    elapsed_s: float
    eta_s: float | None
    best: Outcome | None = None
    result: Outcome | None = None
    #: the result's place in the tune's order (`TuneReport.rank_key`: objective, then less UB,
    #: then enumeration order); a best-so-far table sorted by it agrees with `best` on ties
    rank: tuple | None = None

    @property
    def done(self) -> int:
        return self.evaluated + self.cached

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


class CancelToken:
    """Thread-safe cancellation flag (a key in the TUI, SIGINT on the command line)."""

    def __init__(self):
        self._event = threading.Event()
        self._callbacks: list[Callable[[], None]] = []

    def cancel(self) -> None:
        self._event.set()
        for fn in list(self._callbacks):
            fn()

    def when_cancelled(self, fn: Callable[[], None]) -> None:
        """Also call `fn` on cancel (at once if already cancelled): stopping the run in flight,
        not only the next one. `fn` may run in a signal handler: it must only set a flag."""
        self._callbacks.append(fn)
        if self.cancelled:
            fn()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


Listener = Callable[[TuneEvent], None]


class Progress:
    """Counts, ETA and fan-out to subscribers."""

    def __init__(self, listeners: list[Listener] | None = None):
        self.listeners: list[Listener] = list(listeners or [])
        self.total = self.evaluated = self.cached = self.invalid = 0
        self.best: Outcome | None = None
        self._t0 = time.perf_counter()
        self._eval_time = 0.0  # wall seconds spent while evaluations were running

    def subscribe(self, listener: Listener) -> None:
        self.listeners.append(listener)

    def start(self, total: int, invalid: int) -> None:
        self._t0 = time.perf_counter()
        self.total, self.invalid = total, invalid
        self._emit("start")

    def result(self, outcome: Outcome, best: Outcome | None, rank: tuple | None = None) -> None:
        if outcome.cached:
            self.cached += 1
        else:
            self.evaluated += 1
        self.best = best
        self._emit("result", outcome, rank)

    def finish(self, cancelled: bool) -> None:
        self._emit("cancelled" if cancelled else "done")

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self._t0

    def eta_s(self) -> float | None:
        """Remaining configs × observed seconds per evaluated config (None before the first)."""
        if not self.evaluated:
            return None
        remaining = max(self.total - self.evaluated - self.cached, 0)
        return remaining * self.elapsed_s / self.evaluated

    def _emit(self, kind: str, outcome: Outcome | None = None, rank: tuple | None = None) -> None:
        ev = TuneEvent(
            kind,
            self.total,
            self.evaluated,
            self.cached,
            self.invalid,
            self.elapsed_s,
            0.0 if kind in ("done", "cancelled") else self.eta_s(),
            self.best,
            outcome,
            rank,
        )
        for listener in self.listeners:
            listener(ev)
