"""One tune: build the space, ask the strategy, answer from the cache or evaluate, report.

`tune(TuneRequest(...))` is what the CLI, `asc-profile --auto-tune` and the TUI call; progress
goes to listeners as `TuneEvent`s, cancellation through a `CancelToken`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from ...npu.chip import load_chip
from ..store import Store
from ..text import params_text
from .cache import Outcome, TuneCache
from .evaluate import LocalBackend, Task, default_workers
from .families import family
from .plan import plan
from .progress import CancelToken, Listener, Progress
from .space import Pruned, SearchSpace
from .strategies import make_strategy

OBJECTIVES = ("time", "gflops")


@dataclass(frozen=True)
class TuneRequest:
    op: str
    case: str | None = None
    chip: str | None = None
    strategy: str = "exhaustive"
    budget: int | None = None
    workers: int | None = None  # None: one per CPU; 0: evaluate in this process
    objective: str = "time"
    fixed: dict = field(default_factory=dict)  # parameters pinned with --param
    seed: int = 0
    timeout_s: float | None = 60.0
    fresh: bool = False  # forget cached results of this scope first
    backend: str = "local"  # "local" or "ray"
    address: str | None = None  # Ray cluster address (None: start or join a local one)


@dataclass(frozen=True)
class TuneReport:
    """The outcome of a tune; `to_dict()` is the `--json` shape."""

    operator: str
    path: str
    case: str
    chip: str
    strategy: str
    objective: str
    workers: int
    backend: str
    space_size: int
    invalid: tuple[Pruned, ...]
    outcomes: tuple[Outcome, ...]  # in the order they came back
    best: Outcome | None
    cancelled: bool
    seconds: float
    prune_seconds: float
    current: dict  # the operator's current choice (PARAMS defaults)
    order: tuple[str, ...] = ()  # valid config keys in enumeration order (tie-breaks)
    notes: tuple[str, ...] = ()  # what the tuner decided on its own (a timed-out family stopped)

    @cached_property
    def _position(self) -> dict[str, int]:
        return {k: i for i, k in enumerate(self.order)}

    def rank_key(self, o: Outcome) -> tuple:
        """Objective, then less UB, then enumeration order: ties resolve the same way
        whatever order results arrive in (reproducible with any number of workers)."""
        return objective_value(o, self.objective), o.ub_bytes or 0, self._position.get(o.key, 0)

    def ranked(self) -> list[Outcome]:
        """Successful outcomes, best first."""
        return sorted(
            (o for o in self.outcomes if o.ok and objective_value(o, self.objective) is not None),
            key=self.rank_key,
        )

    @property
    def evaluated(self) -> int:
        return sum(1 for o in self.outcomes if not o.cached and not o.skipped)

    @property
    def skipped(self) -> int:
        """Configs not run because a config of their family timed out (families.py)."""
        return sum(1 for o in self.outcomes if o.skipped)

    @property
    def cached(self) -> int:
        return sum(1 for o in self.outcomes if o.cached)

    def current_outcome(self) -> Outcome | None:
        from .space import config_key

        key = config_key(self.current)
        return next((o for o in self.outcomes if o.key == key), None)

    def pareto(self) -> list[Outcome]:
        """Configs no other beats on both simulated time and UB use (the multi-objective view)."""
        ok = sorted((o for o in self.outcomes if o.ok), key=lambda o: (o.time_us, o.ub_bytes or 0))
        front, best_ub = [], None
        for o in ok:
            ub = o.ub_bytes or 0
            if best_ub is None or ub < best_ub:
                front.append(o)
                best_ub = ub
        return front

    def to_dict(self) -> dict[str, Any]:
        results = [o.to_dict() for o in self.outcomes]
        results += [p.to_dict() for p in self.invalid]
        cur = self.current_outcome()
        return {
            "operator": self.operator,
            "path": self.path,
            "case": self.case,
            "chip": self.chip,
            "strategy": self.strategy,
            "objective": self.objective,
            "workers": self.workers,
            "backend": self.backend,
            "space_size": self.space_size,
            "invalid": len(self.invalid),
            "evaluated": self.evaluated,
            "cached": self.cached,
            "skipped": self.skipped,
            "cancelled": self.cancelled,
            "seconds": self.seconds,
            "prune_seconds": self.prune_seconds,
            "best": (
                {
                    "params": self.best.params,
                    "time_us": self.best.time_us,
                    "gflops": self.best.gflops,
                    "ub_bytes": self.best.ub_bytes,
                }
                if self.best
                else None
            ),
            "current": {
                "params": self.current,
                "time_us": cur.time_us if cur is not None and cur.ok else None,
            },
            "pareto": [
                {"params": o.params, "time_us": o.time_us, "ub_bytes": o.ub_bytes} for o in self.pareto()
            ],
            "results": results,
            "notes": list(self.notes),
        }


def objective_value(outcome: Outcome, objective: str) -> float | None:
    """Lower is better: simulated µs, or −GFLOPS."""
    if not outcome.ok:
        return None
    if objective == "gflops":
        return -outcome.gflops if outcome.gflops is not None else None
    return outcome.time_us


def tune(
    req: TuneRequest,
    listeners: list[Listener] | None = None,
    cancel: CancelToken | None = None,
    store: Store | None = None,
) -> TuneReport:
    """Run a tune to completion (or cancellation); user mistakes raise OperatorError."""
    if req.objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {req.objective!r}; choose from {OBJECTIVES}")
    return _TuneRun(req, listeners, cancel or CancelToken(), store).run()


class _TuneRun:
    """One tune's state between the strategy, the cache and the backend: what was asked, what
    answered, the best so far and the families a timeout stopped."""

    def __init__(self, req: TuneRequest, listeners, cancel: CancelToken, store: Store | None) -> None:
        self.t0 = time.perf_counter()
        self.req, self.cancel = req, cancel
        self.chip = load_chip(req.chip)
        self.workers = default_workers() if req.workers is None else req.workers
        self.p = plan(
            req.op,
            req.case,
            req.chip,
            dict(req.fixed),
            isolated=self.workers > 0 or req.backend != "local",
            timeout_s=req.timeout_s,
        )
        self.space = self.p.space
        self.strategy = make_strategy(req.strategy, self.space, req.budget, req.seed, self.p.prior)
        self.cache = TuneCache(store or Store(), self.p.operator, self.p.cache_hash, self.p.case, self.chip)
        if req.fresh:
            self.cache.clear()
        self.known = self.cache.load()
        self.launches = {c.key: c.launch for c in self.space.valid}
        self.same_launch = {
            self.launches[k]: o for k, o in self.known.items() if self.launches.get(k) is not None
        }
        self.backend = _backend(req, self.workers)
        self.progress = Progress(listeners)
        self.progress.start(self.strategy.total, len(self.space.invalid))
        self.outcomes: list[Outcome] = []
        self.best: Outcome | None = None
        self.order = {c.key: i for i, c in enumerate(self.space.valid)}
        self.completed = False  # has any config finished (not timed out, not skipped)?
        self.pending: dict[str, dict] = {}  # submitted and not answered: key -> params
        self.notes: list[str] = []
        self.closed = False

    def rank(self, o: Outcome) -> tuple:
        """The same order as TuneReport.rank_key."""
        return objective_value(o, self.req.objective), o.ub_bytes or 0, self.order.get(o.key, 0)

    def record(self, o: Outcome) -> None:
        value = objective_value(o, self.req.objective)
        self.strategy.tell(o.key, value)
        self.outcomes.append(o)
        self.completed = self.completed or not (o.timed_out or o.skipped)
        if value is not None and (self.best is None or self.rank(o) < self.rank(self.best)):
            self.best = o
        self.progress.result(o, self.best, self.rank(o) if value is not None else None)

    def stop_family(self, o: Outcome) -> None:
        """A config timed out: do not run its family (families.py), and say so."""
        keys, what = family(self.space, o.params, self.completed)
        first = not self.notes
        stopped = {k: self.strategy.configs[k].params for k in self.strategy.skip(keys)}
        if not self.completed and self.pending:  # nothing can finish: stop the running ones too
            self.backend.close()
            self.closed = True
            stopped.update(self.pending)
            self.pending.clear()
        if not stopped and not first:
            return
        limit = f"{self.req.timeout_s:g} s" if self.req.timeout_s is not None else "its limit"
        self.notes.append(
            f"{_fmt(o.params)} timed out after {limit}: stopped {what}, {len(stopped)} more config(s) not run"
        )
        for key, params in stopped.items():
            why = f"not run: {_fmt(o.params)} timed out after {limit} (stopped {what})"
            self.record(Outcome(key, params, None, error=why, transient=True, skipped=True))

    def submit(self) -> None:
        """Fill the backend's free slots with what the strategy asks for (cached answers at once)."""
        backend, p = self.backend, self.p
        while backend.in_flight < backend.slots and not self.cancel.cancelled:
            asked = self.strategy.ask(backend.slots - backend.in_flight)
            if not asked:
                return
            for cfg in asked:
                hit = self.known.get(cfg.key) or self.same_launch.get(cfg.launch)
                if hit is not None:
                    hit = replace(hit, key=cfg.key, params=cfg.params, cached=True)
                    if hit.key not in self.known:
                        self.cache.put(hit)  # an equal launch's result: exact, keep it
                    self.record(hit)
                else:
                    self.pending[cfg.key] = cfg.params
                    backend.submit(
                        Task(
                            p.path,
                            p.source_hash,
                            p.case,
                            self.req.chip,
                            cfg.key,
                            cfg.params,
                            self.req.timeout_s,
                        )
                    )

    def collect(self) -> None:
        """Take what the backend answered, cache it and record it; a timeout stops its family."""
        for o in self.backend.wait(timeout=0.1):
            self.pending.pop(o.key, None)
            if not o.transient:
                self.cache.put(o)
                if self.launches.get(o.key) is not None:
                    self.same_launch[self.launches[o.key]] = o
            self.record(o)
            if o.timed_out:
                self.stop_family(o)
            if self.closed:
                return

    def run(self) -> TuneReport:
        try:
            while not self.cancel.cancelled:
                self.submit()
                if self.closed or self.backend.in_flight == 0:
                    break  # the strategy has nothing more to propose, or every config is stopped
                self.collect()
        except KeyboardInterrupt:
            self.cancel.cancel()
        finally:
            if not self.closed:
                self.backend.cancel()
                self.backend.close()
        self.progress.finish(self.cancel.cancelled)
        return self.report()

    def report(self) -> TuneReport:
        p, space = self.p, self.space
        return TuneReport(
            operator=p.operator,
            path=p.path,
            case=p.case,
            chip=self.chip.name,
            strategy=self.req.strategy,
            objective=self.req.objective,
            workers=self.workers,
            backend=self.req.backend,
            space_size=space.size,
            invalid=space.invalid,
            outcomes=tuple(self.outcomes),
            best=self.best,
            cancelled=self.cancel.cancelled,
            seconds=time.perf_counter() - self.t0,
            prune_seconds=p.seconds,
            current=p.current,
            order=tuple(c.key for c in space.valid),
            notes=tuple(self.notes),
        )


def _fmt(params: dict) -> str:
    return params_text(params)


def _backend(req: TuneRequest, workers: int):
    if req.backend == "ray":
        from .ray_backend import RayBackend

        return RayBackend(req.address, workers)
    if req.backend != "local":
        raise ValueError(f"unknown backend {req.backend!r}; choose local or ray")
    return LocalBackend(workers)


__all__ = ["TuneRequest", "TuneReport", "tune", "SearchSpace"]
