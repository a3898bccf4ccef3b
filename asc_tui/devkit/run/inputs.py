"""Seeded input arrays of a run, remembered between runs of one (warm worker) process.

Why: a hot reload re-runs an operator whose tensors did not change; drawing its inputs again
(~10 ms of random numbers for add_custom) is the largest share of the build stage. The arrays
depend only on the specs (shape, dtype, init), their order and the seed, so the same key gives
the same bits. Callable inits are user code and are never cached; each run gets its own copy
(a kernel may write into an input buffer).

Big cases too (vector_add_bias `full`: 80M half elements per input, ~2 s of normal draws of a
5 s run): the cache holds up to an eighth of the process's address-space cap (the worker's
`worker_memory_mb`), inputs only — outputs start as zeros, which cost nothing to make.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

#: Without an address-space cap, the bytes of inputs kept (all cases together).
UNCAPPED_BYTES = 512 << 20
_KEEP = 4  # cases remembered
_cache: OrderedDict[tuple, dict[str, np.ndarray]] = OrderedDict()


def budget() -> int:
    """Bytes of inputs the cache may hold: an eighth of the address-space cap, if any."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        capped = soft not in (-1, resource.RLIM_INFINITY)
    except (ImportError, ValueError, OSError):
        capped = False
    return soft // 8 if capped else UNCAPPED_BYTES


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
        if not spec.is_output:
            total += spec.nbytes
        key.append((name, spec.shape, spec.np_dtype, init, spec.is_output))
    if total > budget():
        return None
    return seed, tuple(key)


def cached_inputs(key: tuple | None) -> dict[str, np.ndarray] | None:
    """Fresh copies of the inputs drawn before under `key` (None when not seen)."""
    if key is None:
        return None
    kept = _cache.get(key)
    if kept is None:
        return None
    _cache.move_to_end(key)
    return {name: arr.copy() for name, arr in kept.items()}


def untouched(key: tuple | None) -> dict[str, np.ndarray] | None:
    """The kept arrays themselves, read only: what the inputs were before any kernel ran
    (devkit/pristine.py compares a run's inputs with them instead of copying them again)."""
    return None if key is None else _cache.get(key)


def keep_inputs(key: tuple | None, arrays: dict[str, np.ndarray]) -> None:
    """Remember copies of a run's freshly drawn inputs (before the kernel touches them);
    the least recently used cases go beyond `_KEEP` cases or `budget()` bytes."""
    if key is None:
        return
    kept = {name: arr.copy() for name, arr in arrays.items()}
    for arr in kept.values():
        arr.flags.writeable = False  # (a slip that writes the cache would change later goldens)
    _cache[key] = kept
    _cache.move_to_end(key)
    limit = budget()
    while len(_cache) > _KEEP or (len(_cache) > 1 and _held() > limit):
        _cache.popitem(last=False)


def _held() -> int:
    return sum(arr.nbytes for kept in _cache.values() for arr in kept.values())
