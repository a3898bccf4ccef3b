"""Search strategies behind one small ask/tell interface (as in Kernel Tuner).

`ask(n)` proposes up to n configs not proposed before (fewer when it needs results first, none
when it is finished); `tell(key, value)` reports a config's objective (lower is better; None if
the evaluation failed). The tuner keeps `workers` configs in flight, answers cached configs
without emulating them, and stops at the strategy's `total` (the budget).
"""

from __future__ import annotations

import math
import random

from .model import Surrogate
from .space import Config, SearchSpace

STRATEGIES: dict[str, type[Strategy]] = {}


def register(cls):
    STRATEGIES[cls.name] = cls
    return cls


class Strategy:
    """Base: bookkeeping of what was proposed and what came back."""

    name = "base"
    default_budget: int | None = None  # None: the whole valid space
    default_share: int | None = None  # else: the default budget is 1/share of the space, at least 10

    def __init__(
        self,
        space: SearchSpace,
        budget: int | None = None,
        seed: int = 0,
        prior: dict[str, float] | None = None,
    ):
        self.space = space
        self.configs = space.by_key()
        n = len(space.valid)
        if budget is None:
            budget = self.default_budget if self.default_share is None else max(10, n // self.default_share)
        self.total = min(n, budget) if budget is not None else n
        self.rng = random.Random(seed)
        self.prior = prior or {}
        self.asked: list[str] = []
        self.values: dict[str, float | None] = {}
        self._index = {
            c.key: tuple(space.values[nm].index(c.params[nm]) for nm in space.names) for c in space.valid
        }
        self._by_index = {v: k for k, v in self._index.items()}

    @property
    def remaining(self) -> int:
        return self.total - len(self.asked)

    def ask(self, n: int) -> list[Config]:
        n = min(n, self.remaining)
        keys = self._propose(n) if n > 0 else []
        keys = [k for k in dict.fromkeys(keys) if k not in self.values and k not in self.asked]
        keys = keys[:n]
        self.asked.extend(keys)
        return [self.configs[k] for k in keys]

    def tell(self, key: str, value: float | None) -> None:
        self.values[key] = value

    def skip(self, keys) -> list[str]:
        """Never propose `keys` (a timed-out family): the ones not asked yet, now counted as
        asked (they use the budget like an evaluation would). Returns them."""
        seen = set(self.asked)
        out = [k for k in dict.fromkeys(keys) if k not in seen and k not in self.values and k in self.configs]
        self.asked.extend(out)
        return out

    def _propose(self, n: int) -> list[str]:
        raise NotImplementedError

    # helpers -----------------------------------------------------------------------------
    def unasked(self) -> list[str]:
        seen = set(self.asked)
        return [c.key for c in self.space.valid if c.key not in seen]

    def best_key(self) -> str | None:
        ok = [(v, k) for k, v in self.values.items() if v is not None]
        return min(ok)[1] if ok else None

    def neighbours(self, key: str, radius: int = 1) -> list[str]:
        """Valid configs one step (±radius in one parameter's value list) from `key`."""
        idx = self._index[key]
        out = []
        for d in range(len(idx)):
            for step in range(-radius, radius + 1):
                if step == 0:
                    continue
                cand = idx[:d] + (idx[d] + step,) + idx[d + 1 :]
                k = self._by_index.get(cand)
                if k is not None:
                    out.append(k)
        return out

    def distance(self, a: str, b: str) -> int:
        return sum(abs(x - y) for x, y in zip(self._index[a], self._index[b]))


@register
class Exhaustive(Strategy):
    """Every valid config, the most promising first (by the analytical estimate when there is
    one), so the best-so-far a user watches is near the optimum early and a cancelled
    exhaustive tune still leaves a good answer."""

    name = "exhaustive"

    def __init__(self, space, budget=None, seed=0, prior=None):
        super().__init__(space, budget, seed, prior)
        self._order = sorted(
            (c.key for c in space.valid), key=lambda k: self.prior.get(k, 0.0)
        )  # stable: ties keep order

    def _propose(self, n):
        seen = set(self.asked)
        return [k for k in self._order if k not in seen][:n]


@register
class RandomSample(Strategy):
    """A seeded random sample of the valid space (default budget: a quarter, at least 10)."""

    name = "random"
    default_share = 4

    def __init__(self, space, budget=None, seed=0, prior=None):
        super().__init__(space, budget, seed, prior)
        self._order = [c.key for c in space.valid]
        self.rng.shuffle(self._order)

    def _propose(self, n):
        seen = set(self.asked)
        return [k for k in self._order if k not in seen][:n]


@register
class Quick(Strategy):
    """Model-guided: the best analytical estimates first, then the surrogate's picks.

    Half the budget goes to the configs the roofline ranks best (ties broken by the spread of
    their values, so double buffering is tried both ways); the rest, one at a time, to the
    config the refitted surrogate predicts fastest within two steps of the best result so far.
    """

    name = "quick"
    default_budget = 10

    def __init__(self, space, budget=None, seed=0, prior=None):
        super().__init__(space, budget, seed, prior)
        self.surrogate = Surrogate(space, self.prior)
        self._ranked = sorted(self.configs, key=lambda k: (self.prior.get(k, math.inf), k))
        self._seed_n = max(1, min(self.total, (self.total + 1) // 2))

    def tell(self, key, value):
        super().tell(key, value)
        self.surrogate.observe(key, value)

    def _diverse_seeds(self, want: int, seen: set) -> list[str]:
        """The best-estimated configs; among near-ties (within 2%), the one farthest from those
        already picked, so parameters the model cannot see (buffer counts) get varied."""
        picked = list(self.asked)
        out: list[str] = []
        rest = [k for k in self._ranked if k not in seen]
        while rest and len(out) < want:
            top = self.prior.get(rest[0], math.inf)
            ties = [k for k in rest if self.prior.get(k, math.inf) <= top * 1.02]
            if picked:
                k = max(ties, key=lambda k: min(self.distance(k, p) for p in picked))
            else:
                k = ties[0]
            out.append(k)
            picked.append(k)
            rest.remove(k)
        return out

    def _propose(self, n):
        seen = set(self.asked)
        if len(self.asked) < self._seed_n:
            want = min(n, self._seed_n - len(self.asked))
            return self._diverse_seeds(want, seen)
        if len(self.values) < len(self.asked):
            return []  # wait: the next pick depends on the results in flight
        best = self.best_key()
        pool = [k for k in self.configs if k not in seen]
        if best is not None:
            near = [k for k in pool if self.distance(k, best) <= 2]
            pool = near or pool
        pool.sort(key=lambda k: (self.surrogate.predict(k), k))
        return pool[:1]


@register
class Anneal(Strategy):
    """Simulated annealing over one-step neighbourhoods (default budget: a third of the space)."""

    name = "anneal"
    default_share = 3

    def __init__(self, space, budget=None, seed=0, prior=None, t0: float = 0.3):
        super().__init__(space, budget, seed, prior)
        self.t0 = t0
        self.current: str | None = None
        self.current_value: float | None = None

    def tell(self, key, value):
        super().tell(key, value)
        if value is None:
            return
        if self.current_value is None:
            self.current, self.current_value = key, value
            return
        temp = self.t0 * max(self.remaining, 1) / max(self.total, 1)
        delta = (value - self.current_value) / abs(self.current_value or 1.0)
        if delta < 0 or self.rng.random() < math.exp(-delta / max(temp, 1e-6)):
            self.current, self.current_value = key, value

    def _propose(self, n):
        seen = set(self.asked)
        if self.current is None:
            start = self.unasked()
            return [self.rng.choice(start)] if start else []
        cands = [k for r in (1, 2, 3) for k in self.neighbours(self.current, r) if k not in seen]
        cands = list(dict.fromkeys(cands))
        self.rng.shuffle(cands)
        if not cands:
            rest = self.unasked()
            self.rng.shuffle(rest)
            cands = rest
        return cands[:n]


@register
class Genetic(Strategy):
    """A small genetic algorithm: tournament selection, uniform crossover, one-step mutation."""

    name = "genetic"
    default_share = 3

    def __init__(self, space, budget=None, seed=0, prior=None, population: int = 8):
        super().__init__(space, budget, seed, prior)
        self.population = max(2, min(population, len(space.valid)))

    def _propose(self, n):
        if len(self.values) < len(self.asked) and len(self.asked) % self.population == 0:
            return []  # wait for the generation to be scored
        scored = [(v, k) for k, v in self.values.items() if v is not None]
        seen = set(self.asked)
        if len(scored) < 2:
            rest = self.unasked()
            self.rng.shuffle(rest)
            return rest[:n]
        scored.sort()
        parents = [k for _, k in scored[: self.population]]
        out: list[str] = []
        tries = 0
        while len(out) < n and tries < 50 * n:
            tries += 1
            a, b = self._tournament(parents), self._tournament(parents)
            child = tuple(x if self.rng.random() < 0.5 else y for x, y in zip(self._index[a], self._index[b]))
            if self.rng.random() < 0.5:
                d = self.rng.randrange(len(child))
                child = child[:d] + (child[d] + self.rng.choice((-1, 1)),) + child[d + 1 :]
            k = self._by_index.get(child)
            if k is not None and k not in seen and k not in out:
                out.append(k)
        if len(out) < n:
            rest = [k for k in self.unasked() if k not in out]
            self.rng.shuffle(rest)
            out += rest[: n - len(out)]
        return out

    def _tournament(self, parents: list[str]) -> str:
        a, b = self.rng.choice(parents), self.rng.choice(parents)
        va, vb = self.values[a], self.values[b]
        return a if (va if va is not None else math.inf) <= (vb if vb is not None else math.inf) else b


def make_strategy(
    name: str,
    space: SearchSpace,
    budget: int | None = None,
    seed: int = 0,
    prior: dict[str, float] | None = None,
) -> Strategy:
    try:
        cls = STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}") from None
    return cls(space, budget, seed, prior)
