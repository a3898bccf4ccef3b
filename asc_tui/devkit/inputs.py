"""Seeded input arrays of a run, remembered between runs of one (warm worker) process.

Why: a hot reload re-runs an operator whose tensors did not change; drawing its inputs again
(~10 ms of random numbers for add_custom) is the largest share of the build stage. The arrays
depend only on the specs (shape, dtype, init), their order and the seed, so the same key gives
the same bits. Callable inits are user code and are never cached; each run gets its own copy
(a kernel may write into an input buffer).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

#: Inputs larger than this (bytes, all tensors of a case) are drawn each time, not kept.
MAX_BYTES = 64 << 20
_KEEP = 4  # cases remembered
_cache: OrderedDict[tuple, dict[str, np.ndarray]] = OrderedDict()


def cache_key(specs: dict, seed: int) -> tuple | None:
    """A key for these specs and seed, or None when they cannot be cached."""
    key = []
    total = 0
    for name, spec in specs.items():
        init = spec.init
        if callable(init):
            return None
        try:
            hash(init)
        except TypeError:
            return None
        total += spec.nbytes
        key.append((name, spec.shape, spec.np_dtype, init, spec.is_output))
    if total > MAX_BYTES:
        return None
    return seed, tuple(key)


def cached_inputs(key: tuple | None) -> dict[str, np.ndarray] | None:
    """Fresh copies of the arrays drawn before under `key` (None when not seen)."""
    if key is None:
        return None
    kept = _cache.get(key)
    if kept is None:
        return None
    _cache.move_to_end(key)
    return {name: arr.copy() for name, arr in kept.items()}


def keep_inputs(key: tuple | None, arrays: dict[str, np.ndarray]) -> None:
    """Remember copies of a run's freshly drawn arrays (before the kernel touches them)."""
    if key is None:
        return
    _cache[key] = {name: arr.copy() for name, arr in arrays.items()}
    _cache.move_to_end(key)
    while len(_cache) > _KEEP:
        _cache.popitem(last=False)
