"""The scratch pool (npu/scratch.py) hands an array out again only when no one can see it."""

import numpy as np

from asc_tui.npu.scratch import Pool


def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    return a.__array_interface__["data"][0] == b.__array_interface__["data"][0]


def test_an_array_still_referred_to_is_not_handed_out_again():
    pool = Pool()
    a = pool.empty(1000, np.float32)
    b = pool.empty(1000, np.float32)
    assert not _same_memory(a, b)


def test_a_view_or_buffer_export_keeps_an_array_in_use():
    pool = Pool()
    a = pool.empty(1000, np.float32)
    view = a[10:20]
    mv = memoryview(a)
    del a
    b = pool.empty(1000, np.float32)
    assert not _same_memory(view, b[10:20])
    del view, b
    c = pool.empty(1000, np.float32)
    assert not np.shares_memory(np.frombuffer(mv, np.float32), c)


def test_a_freed_array_is_reused_and_zeros_are_zeros():
    pool = Pool()
    a = pool.empty(1000, np.float32)
    a[:] = 7
    addr = a.__array_interface__["data"][0]
    del a
    z = pool.zeros(2000, np.int16)  # the same bytes, another type
    assert z.__array_interface__["data"][0] == addr
    assert z.dtype == np.int16 and z.shape == (2000,) and not z.any()


def test_the_pool_keeps_at_most_its_budget_and_no_array_above_its_limit():
    pool = Pool(budget=10_000, max_array=4_000)
    big = pool.empty(5_000, np.uint8)
    assert big.nbytes == 5_000 and not pool.held
    for _ in range(5):
        pool.empty(4_000, np.uint8)  # each freed at once: reused, never more than one kept
    assert sum(a.nbytes for a in pool.held) == 4_000
    kept = [pool.empty(3_000, np.uint8) for _ in range(4)]  # all in use: over budget for now
    del kept
    pool.empty(1_000, np.uint8)
    assert sum(a.nbytes for a in pool.held) <= 10_000
